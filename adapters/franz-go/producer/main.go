// Producer adapter of the Kafka conformance kit (docs/adapter-protocol.md, "Producer side")
// for franz-go (github.com/twmb/franz-go, pinned in ../go.mod).
//
// `produce` drives a kgo.Client: kgo.Produce with a per-record promise for every plan record,
// Flush, EndTransaction(TryCommit|TryAbort) inside BeginTransaction when the plan has a
// transaction, Close. The plan's settings map to kgo options (ProducerBatchCompression,
// DisableIdempotentWrite, RequiredAcks, ProducerLinger, ProducerBatchMaxBytes,
// BrokerMaxWriteBytes, TransactionalID); settings.timeout_ms bounds the context of Produce,
// Flush and EndTransaction (not RecordDeliveryTimeout: kgo measures that from Record.Timestamp,
// see capabilities). Everything else keeps kgo's defaults, the partitioner included: a record
// with an explicit partition goes through a thin wrapper around the default partitioner that
// returns Record.Partition for it only.
//
// `encode` builds one kmsg.RecordBatch of kmsg.Record values and AppendTo's it: kgo's own batch
// builder (recBatch.appendTo in sink.go) is unexported, so the fields are computed the way a
// user of kmsg computes them (lengths, deltas, CRC-32C) and the records are compressed with
// kgo.DefaultCompressor, the compressor kgo's producer uses.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	ac "kafkaconformance.local/adaptercommon"
)

const module = "github.com/twmb/franz-go"

var codecs = map[string]struct {
	opt kgo.CompressionCodec
	typ kgo.CompressionCodecType
}{
	"none":   {kgo.NoCompression(), kgo.CodecNone},
	"gzip":   {kgo.GzipCompression(), kgo.CodecGzip},
	"snappy": {kgo.SnappyCompression(), kgo.CodecSnappy},
	"lz4":    {kgo.Lz4Compression(), kgo.CodecLz4},
	"zstd":   {kgo.ZstdCompression(), kgo.CodecZstd},
}

func capabilities() ac.Obj {
	codecList := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	// kgo's defaults (config.go defaultCfg): idempotent writes on, acks AllISRAcks, linger
	// 10 ms, ProducerBatchMaxBytes 1000012 (kgo has no batch.size: this is its only batch
	// size bound), compression [snappy, none], UniformBytesPartitioner(64 KiB, adaptive,
	// keys, KafkaHasher(murmur2)) = Java's murmur2 for keyed records.
	defaults := ac.Obj{"idempotence": true, "acks": -1, "linger_ms": 10, "batch_size": 1000012}
	return ac.Obj{
		"name":    "franz-go",
		"version": ac.LibraryVersion(module),
		"produce": ac.Obj{
			"codecs": codecList, "idempotence": true, "transactions": true, "headers": true,
			"magics": []int{2}, "partitioner": "java", "defaults": defaults,
			// a plan group: its records Produced back to back, gathered by ProducerLinger
			"batching": "linger",
			"notes": "kgo.Client: Produce + Flush (+ BeginTransaction/EndTransaction). " +
				"batch_size -> ProducerBatchMaxBytes (kgo's batch cap; a record larger than it " +
				"fails with MESSAGE_TOO_LARGE where Java would send it alone), " +
				"max_request_size -> BrokerMaxWriteBytes (at least the batch cap, as kgo " +
				"requires), linger_ms -> ProducerLinger. timeout_ms bounds the Produce/Flush/" +
				"EndTransaction context; RecordDeliveryTimeout is left unset (its unlimited " +
				"default) because kgo measures it from Record.Timestamp, so a record with an " +
				"explicit timestamp older than the timeout fails at once without being sent. " +
				"codec none is set explicitly (kgo's default codec is snappy). A record with " +
				"an explicit partition goes to Record.Partition through a wrapper of the " +
				"default UniformBytesPartitioner; every other record is partitioned by the " +
				"default itself. kgo refuses idempotence with acks != all at NewClient " +
				"(reported as the plan's error). kgo only keeps a compressed batch when it " +
				"is smaller than the uncompressed one.",
		},
		"encode": ac.Obj{
			"codecs": codecList, "idempotence": true, "transactions": true, "headers": true,
			"magics": []int{2}, "partitioner": "java", "defaults": defaults,
			"notes": "kgo's batch builder (recBatch.appendTo) is unexported: the batch is a " +
				"kmsg.RecordBatch of kmsg.Record values with Length, deltas, LastOffsetDelta, " +
				"MaxTimestamp and CRC-32C computed as a kmsg user does, records compressed " +
				"with kgo.DefaultCompressor (always applied, where kgo's producer would fall " +
				"back to none when compression does not shrink the records). A null timestamp " +
				"is the current time (what kgo.Produce stamps).",
		},
	}
}

// ---------------------------------------------------------------------------- produce

// explicitPartitioner wraps the default partitioner: a record listed in explicit goes to its
// Record.Partition, every other record is partitioned by the wrapped partitioner.
type explicitPartitioner struct {
	inner    kgo.Partitioner
	explicit map[*kgo.Record]bool // filled before the first Produce, read-only after
}

type explicitTopicPartitioner struct {
	inner    kgo.TopicPartitioner
	explicit map[*kgo.Record]bool
}

// explicitOnNewBatch is explicitTopicPartitioner for a wrapped partitioner with OnNewBatch.
type explicitOnNewBatch struct {
	explicitTopicPartitioner
	onNewBatch kgo.TopicPartitionerOnNewBatch
}

func (e *explicitOnNewBatch) OnNewBatch() { e.onNewBatch.OnNewBatch() }

func (p *explicitPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	t := explicitTopicPartitioner{inner: p.inner.ForTopic(topic), explicit: p.explicit}
	if nb, ok := t.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		return &explicitOnNewBatch{t, nb}
	}
	return &t
}

func (t *explicitTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return t.explicit[r] || t.inner.RequiresConsistency(r)
}

func (t *explicitTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if t.explicit[r] {
		return int(r.Partition)
	}
	return t.inner.Partition(r, n)
}

func (t *explicitTopicPartitioner) PartitionByBackup(r *kgo.Record, n int, it kgo.TopicBackupIter) int {
	if t.explicit[r] {
		return int(r.Partition)
	}
	if b, ok := t.inner.(kgo.TopicBackupPartitioner); ok {
		return b.PartitionByBackup(r, n, it)
	}
	return t.inner.Partition(r, n)
}

func toRecord(pr ac.PlanRecord) *kgo.Record {
	r := &kgo.Record{Key: pr.Key, Value: pr.Value}
	for _, h := range pr.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	if pr.Timestamp != nil { // nil: the zero time, which kgo.Produce replaces by time.Now()
		r.Timestamp = time.UnixMilli(*pr.Timestamp)
	}
	if pr.Partition != nil {
		r.Partition = *pr.Partition
	}
	return r
}

func produce(bootstrap string, plan *ac.Plan, rec *ac.Recorder) {
	s := plan.Settings
	notSent := func(err error) {
		rec.SetError(err.Error())
		rec.FailRest("not sent: " + err.Error())
	}
	codec, ok := codecs[s.Codec]
	if !ok {
		notSent(fmt.Errorf("unknown codec %q", s.Codec))
		return
	}
	var acks kgo.Acks
	switch s.Acks {
	case -1:
		acks = kgo.AllISRAcks()
	case 1:
		acks = kgo.LeaderAck()
	case 0:
		acks = kgo.NoAck()
	default:
		notSent(fmt.Errorf("acks %d: kgo has AllISRAcks, LeaderAck and NoAck only", s.Acks))
		return
	}
	timeout := plan.Timeout()
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.DefaultProduceTopic(plan.Topic),
		kgo.ProducerBatchCompression(codec.opt),
		kgo.RequiredAcks(acks),
		kgo.ProducerLinger(time.Duration(s.LingerMs) * time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(s.BatchSize)),
		kgo.BrokerMaxWriteBytes(int32(max(s.MaxRequestSize, s.BatchSize))),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, nil)),
	}
	if !s.Idempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if s.Transaction != nil {
		opts = append(opts, kgo.TransactionalID(s.Transaction.ID))
	}

	records := make([]*kgo.Record, len(plan.Records))
	explicit := map[*kgo.Record]bool{}
	for i, pr := range plan.Records {
		records[i] = toRecord(pr)
		if pr.Partition != nil {
			explicit[records[i]] = true
		}
	}
	if len(explicit) > 0 {
		// kgo's default partitioner (config.go defaultCfg), wrapped for explicit partitions
		def := kgo.UniformBytesPartitioner(64<<10, true, true, nil)
		opts = append(opts, kgo.RecordPartitioner(&explicitPartitioner{def, explicit}))
	}

	cl, err := kgo.NewClient(opts...)
	if err != nil {
		notSent(fmt.Errorf("kgo.NewClient: %w", err))
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()

	if s.Transaction != nil {
		if err := cl.BeginTransaction(); err != nil {
			notSent(fmt.Errorf("BeginTransaction: %w", err))
			return
		}
	}
	var wg sync.WaitGroup
	for i, r := range records {
		wg.Add(1)
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				rec.Fail(i, err.Error())
			} else {
				rec.Ack(i, r.Partition, r.Offset)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "adapter: Flush:", err)
	}
	wg.Wait()
	if s.Transaction != nil {
		commit := kgo.TryCommit
		if s.Transaction.End == "abort" {
			commit = kgo.TryAbort
		} else if s.Transaction.End != "commit" {
			fmt.Fprintf(os.Stderr, "adapter: transaction end %q, aborting\n", s.Transaction.End)
			commit = kgo.TryAbort
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			rec.SetError(fmt.Sprintf("EndTransaction(%v): %v", commit, err))
		}
	}
}

// ---------------------------------------------------------------------------- encode

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// withLength is r with its Length field set: the size of what follows the length varint.
func withLength(r kmsg.Record) kmsg.Record {
	r.Length = 0
	r.Length = int32(len(r.AppendTo(nil)) - 1) // a zero varint is one byte
	return r
}

func encode(plan *ac.Plan) ([]byte, error) {
	b := plan.Batch
	if b == nil {
		return nil, errors.New("the plan has no batch")
	}
	if b.Magic != 2 {
		return nil, fmt.Errorf("magic %d: kmsg.RecordBatch is magic 2", b.Magic)
	}
	if len(plan.Records) == 0 {
		return nil, errors.New("no records: a batch needs at least one")
	}
	codec, ok := codecs[plan.Settings.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", plan.Settings.Codec)
	}
	now := time.Now().UnixMilli()
	stamps := make([]int64, len(plan.Records))
	for i, pr := range plan.Records {
		stamps[i] = now
		if pr.Timestamp != nil {
			stamps[i] = *pr.Timestamp
		}
	}
	first, maxTs := stamps[0], stamps[0]
	var raw []byte
	for i, pr := range plan.Records {
		maxTs = max(maxTs, stamps[i])
		delta := stamps[i] - first
		r := kmsg.Record{
			TimestampDelta: int32(delta), TimestampDelta64: delta, OffsetDelta: int32(i),
			Key: pr.Key, Value: pr.Value,
		}
		for _, h := range pr.Headers {
			r.Headers = append(r.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		r = withLength(r)
		raw = r.AppendTo(raw)
	}
	attrs := int16(0)
	if codec.typ != kgo.CodecNone {
		comp, err := kgo.DefaultCompressor(codec.opt)
		if err != nil {
			return nil, fmt.Errorf("kgo.DefaultCompressor: %w", err)
		}
		var buf bytes.Buffer
		out, used := comp.Compress(&buf, raw)
		if out == nil || used != codec.typ {
			return nil, fmt.Errorf("kgo compressor returned codec %d for %s", used, plan.Settings.Codec)
		}
		raw = append([]byte(nil), out...)
		attrs |= int16(used)
	}
	if b.Transactional {
		attrs |= 0x10
	}
	batch := kmsg.RecordBatch{
		FirstOffset:          b.BaseOffset,
		Length:               int32(4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4 + len(raw)),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(len(plan.Records) - 1),
		FirstTimestamp:       first,
		MaxTimestamp:         maxTs,
		ProducerID:           b.ProducerID,
		ProducerEpoch:        b.ProducerEpoch,
		FirstSequence:        b.BaseSequence,
		NumRecords:           int32(len(plan.Records)),
		Records:              raw,
	}
	out := batch.AppendTo(nil)
	// the CRC covers everything from the attributes on (offset 21 of the batch)
	batch.CRC = int32(crc32.Checksum(out[21:], crc32c))
	return batch.AppendTo(nil), nil
}

func main() {
	ac.RunProducer(capabilities, produce, encode)
}
