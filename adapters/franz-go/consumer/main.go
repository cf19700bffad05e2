// Consumer adapter of the Kafka conformance kit (docs/adapter-protocol.md, "The consumer
// side") for franz-go (github.com/twmb/franz-go, pinned in ../go.mod).
//
// `consume` runs kgo's real consumer: kgo.NewClient with SeedBrokers, ConsumePartitions (one
// partition, no group: nothing is committed), FetchIsolationLevel and a ClientID, everything
// else at kgo's defaults (fetch sizes, CRC validation on, retries) except KeepControlRecords,
// see below. Before polling, the end offset is asked for with a raw kmsg.ListOffsetsRequest
// (timestamp -1, the consumer's isolation level: the high watermark, or the last stable
// offset for read_committed) through Client.Request: kadm is a separate module that is not in
// the pinned go.sum. Then PollFetches until the position reaches the end offset, the first
// error fetches.Errors() reports (its class: the kerr code name, or the Go type of the
// error), or the deadline (`timeout`).
//
// kgo has no position API for a directly consumed partition: the consumer's cursor is
// internal, and a fetch that only advanced it past control records (a transaction marker) or
// aborted batches is not handed to PollFetches. So the client keeps control records
// (KeepControlRecords, which changes nothing else in ProcessFetchPartition's maybeKeepRecord:
// they are simply not dropped) and the adapter uses them for the position only; they are not
// part of the document, as kgo's default drops them. The position is the offset after the
// last record or control record delivered; before the first, the --from offset or the log
// start offset (ListOffsets -2, where AtStart() begins).
package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	ac "kafkaconformance.local/adaptercommon"
)

const module = "github.com/twmb/franz-go"

type obj = ac.Obj

func capabilities() obj {
	return obj{
		"name":    "franz-go",
		"version": ac.LibraryVersion(module),
		"notes": "kgo.Client defaults (CRC validation on, FetchMaxBytes 50 MiB, " +
			"FetchMaxPartitionBytes 1 MiB, retryable fetch errors retried internally), " +
			"ConsumePartitions (no group), FetchIsolationLevel; KeepControlRecords is set " +
			"only to observe the position past transaction markers (kgo has no position " +
			"API): control records are left out of the document, as kgo drops them by " +
			"default. End offset: a raw ListOffsets(-1) request (kadm is not in the pinned " +
			"module set).",
	}
}

// errClass is the kerr code name ("kerr.CORRUPT_MESSAGE") of a broker error code, else the Go
// type of the error (unwrapped as far as it goes).
func errClass(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return "kerr." + ke.Message
	}
	return ac.InnermostType(err)
}

func tsType(r *kgo.Record) string {
	switch r.Attrs.TimestampType() {
	case 0:
		return "CreateTime"
	case 1:
		return "LogAppendTime"
	}
	return "NoTimestampType" // -1: magic 0, no timestamp
}

func record(r *kgo.Record) obj {
	headers := make([]obj, 0, len(r.Headers))
	for _, h := range r.Headers {
		headers = append(headers, obj{"key": h.Key, "value": ac.B64(h.Value)})
	}
	ts := ac.Millis(r.Timestamp)
	typ := tsType(r)
	if typ == "NoTimestampType" {
		ts = "-1"
	}
	return obj{"offset": strconv.FormatInt(r.Offset, 10), "timestamp": ts,
		"timestampType": typ, "key": ac.B64(r.Key), "value": ac.B64(r.Value),
		"headers": headers}
}

// listOffset asks the partition's leader for the offset at timestamp (-1: the latest offset
// under the isolation level, the end offset; -2: the log start offset).
func listOffset(ctx context.Context, cl *kgo.Client, a ac.ConsumeArgs, level int8, timestamp int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = level
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = a.Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = int32(a.Partition)
	p.Timestamp = timestamp
	p.CurrentLeaderEpoch = -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic == a.Topic && rp.Partition == int32(a.Partition) {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return 0, err
				}
				if len(rp.OldStyleOffsets) > 0 { // v0 answers with a list, not Offset
					return rp.OldStyleOffsets[0], nil
				}
				return rp.Offset, nil
			}
		}
	}
	return 0, errors.New("ListOffsets response without the partition")
}

func consume(a ac.ConsumeArgs) obj {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(a.TimeoutMs)*time.Millisecond)
	defer cancel()
	records := []obj{}

	start := kgo.NewOffset().AtStart()
	if a.From != "earliest" {
		n, err := strconv.ParseInt(a.From, 10, 64)
		if err != nil {
			return ac.ConsumeDocument(records, obj{"class": "usage", "message": err.Error()})
		}
		start = kgo.NewOffset().At(n)
	}
	level, klevel := kgo.ReadUncommitted(), int8(0)
	if a.Isolation == "read_committed" {
		level, klevel = kgo.ReadCommitted(), 1
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(a.Bootstrap),
		kgo.ClientID("kafka-conformance-franz-go"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{a.Topic: {int32(a.Partition): start}}),
		kgo.FetchIsolationLevel(level),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return ac.ConsumeDocument(records, ac.ConsumeError(errClass(err), err))
	}
	defer closeBounded(cl)

	end, err := listOffset(ctx, cl, a, klevel, -1)
	if err != nil {
		if ctx.Err() != nil {
			return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
		}
		return ac.ConsumeDocument(records, ac.ConsumeError(errClass(err), err))
	}
	// the position before the first delivery: the offset asked for, or the log start offset
	// (where kgo's AtStart() begins)
	var position int64
	if a.From != "earliest" {
		position, _ = strconv.ParseInt(a.From, 10, 64)
	} else if position, err = listOffset(ctx, cl, a, klevel, -2); err != nil {
		if ctx.Err() != nil {
			return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
		}
		return ac.ConsumeDocument(records, ac.ConsumeError(errClass(err), err))
	}
	for position < end {
		if ctx.Err() != nil {
			return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
		}
		fetches := cl.PollFetches(ctx)
		// records delivered before an error in the same poll are delivered first
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Topic != a.Topic || r.Partition != int32(a.Partition) {
				return
			}
			position = r.Offset + 1
			if !r.Attrs.IsControl() {
				records = append(records, record(r))
			}
		})
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
			}
			return ac.ConsumeDocument(records, ac.ConsumeError(errClass(fe.Err), fe.Err))
		}
	}
	return ac.ConsumeDocument(records, nil)
}

// closeBounded closes the client, but gives up after 5 s: main then returns and the process
// exits with whatever kgo goroutines are left.
func closeBounded(cl *kgo.Client) {
	done := make(chan struct{})
	go func() { cl.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

func main() {
	ac.RunConsumer(capabilities, consume)
}
