// Producer adapter of the Kafka conformance kit (docs/adapter-protocol.md, "Producer side")
// for sarama (github.com/IBM/sarama, pinned in ../go.mod). It uses the library unmodified (no
// shim: the producer is public API) and has the `produce` side only: sarama's batch builder
// (produceSet / RecordBatch.encode) is unexported.
//
// `produce` drives a sarama.AsyncProducer from sarama.NewConfig() (Return.Successes on, every
// plan record's index in ProducerMessage.Metadata), BeginTxn / CommitTxn / AbortTxn when the plan
// has a transaction, Close. Config.Version stays sarama's default (V2_8_0_0: Produce v9, which a
// Kafka 4.x broker still serves). The plan's settings map to Producer.Compression,
// Producer.Idempotent (+ Net.MaxOpenRequests = 1, which sarama requires for it),
// Producer.RequiredAcks, Producer.Flush.Frequency (linger_ms) and Flush.Bytes (batch_size),
// Producer.MaxMessageBytes (max_request_size), Producer.Transaction.ID; settings.timeout_ms
// caps Net.DialTimeout/ReadTimeout/WriteTimeout (when below their 30 s default) and the wait
// for results. Partitioner: sarama's default NewHashPartitioner unless the plan gives explicit
// partitions (NewManualPartitioner when every record has one, else a wrapper that returns
// ProducerMessage.Partition for those records and delegates the others to NewHashPartitioner).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/IBM/sarama"

	ac "kafkaconformance.local/adaptercommon"
)

const module = "github.com/IBM/sarama"

var codecs = map[string]sarama.CompressionCodec{
	"none":   sarama.CompressionNone,
	"gzip":   sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy,
	"lz4":    sarama.CompressionLZ4,
	"zstd":   sarama.CompressionZSTD,
}

func capabilities() ac.Obj {
	// sarama.NewConfig(): Producer.Idempotent false, RequiredAcks WaitForLocal (1),
	// Flush.Frequency 0 and Flush.Bytes 0 (no linger, no byte trigger: a batch is sent as soon
	// as the partition's previous request allows; its size is capped by MaxMessageBytes
	// 1048576), Partitioner NewHashPartitioner (FNV-1a), Version V2_8_0_0.
	defaults := ac.Obj{"idempotence": false, "acks": 1, "linger_ms": 0, "batch_size": 0}
	return ac.Obj{
		"name":    "sarama",
		"version": ac.LibraryVersion(module),
		"produce": ac.Obj{
			"codecs": []string{"none", "gzip", "snappy", "lz4", "zstd"}, "idempotence": true,
			"transactions": true, "headers": true, "magics": []int{2},
			"partitioner": "sarama:NewHashPartitioner", "defaults": defaults,
			// a plan group: its records sent back to back, gathered by Flush.Frequency
			"batching": "linger",
			"notes": "sarama.AsyncProducer (Return.Successes) with Config.Version left at " +
				"sarama's default V2_8_0_0 (Produce v9). defaults.batch_size 0 is " +
				"Producer.Flush.Bytes (no byte trigger; batches are capped by " +
				"Producer.MaxMessageBytes 1048576). batch_size -> Flush.Bytes (a flush " +
				"trigger, not a cap), linger_ms -> Flush.Frequency, max_request_size -> " +
				"Producer.MaxMessageBytes, idempotence -> Producer.Idempotent with " +
				"Net.MaxOpenRequests=1 (sarama refuses idempotence otherwise, and with acks " +
				"!= all: reported as the plan's error). timeout_ms caps the Net timeouts " +
				"and the wait for results; sarama has no delivery timeout (Retry.Max 3 is " +
				"kept). Explicit partitions: NewManualPartitioner (or a wrapper of " +
				"NewHashPartitioner when only some records have one).",
		},
	}
}

// mixedPartitioner returns msg.Partition for the records with an explicit partition and asks
// the default partitioner for the others.
type mixedPartitioner struct {
	inner sarama.Partitioner
}

func isExplicit(msg *sarama.ProducerMessage) bool {
	m, ok := msg.Metadata.(meta)
	return ok && m.explicit
}

func (p *mixedPartitioner) Partition(msg *sarama.ProducerMessage, n int32) (int32, error) {
	if isExplicit(msg) {
		return msg.Partition, nil
	}
	return p.inner.Partition(msg, n)
}

func (p *mixedPartitioner) RequiresConsistency() bool { return true }

func (p *mixedPartitioner) MessageRequiresConsistency(msg *sarama.ProducerMessage) bool {
	if isExplicit(msg) {
		return true
	}
	if d, ok := p.inner.(sarama.DynamicConsistencyPartitioner); ok {
		return d.MessageRequiresConsistency(msg)
	}
	return p.inner.RequiresConsistency()
}

// meta is what every ProducerMessage carries in Metadata: its plan index.
type meta struct {
	index    int
	explicit bool
}

func toMessage(topic string, i int, pr ac.PlanRecord) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Metadata: meta{index: i, explicit: pr.Partition != nil}}
	if pr.Key != nil { // a nil Encoder is a null key (and picks a random partition)
		m.Key = sarama.ByteEncoder(pr.Key)
	}
	if pr.Value != nil {
		m.Value = sarama.ByteEncoder(pr.Value)
	}
	for _, h := range pr.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	if pr.Timestamp != nil { // nil: the zero time, which sarama replaces by time.Now()
		m.Timestamp = time.UnixMilli(*pr.Timestamp)
	}
	if pr.Partition != nil {
		m.Partition = *pr.Partition
	}
	return m
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
	timeout := plan.Timeout()
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = codec
	cfg.Producer.RequiredAcks = sarama.RequiredAcks(s.Acks)
	cfg.Producer.Flush.Frequency = time.Duration(s.LingerMs) * time.Millisecond
	cfg.Producer.Flush.Bytes = int(s.BatchSize)
	cfg.Producer.MaxMessageBytes = int(s.MaxRequestSize)
	if s.Idempotence {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	if s.Transaction != nil {
		cfg.Producer.Transaction.ID = s.Transaction.ID
	}
	cfg.Net.DialTimeout = min(cfg.Net.DialTimeout, timeout)
	cfg.Net.ReadTimeout = min(cfg.Net.ReadTimeout, timeout)
	cfg.Net.WriteTimeout = min(cfg.Net.WriteTimeout, timeout)

	msgs := make([]*sarama.ProducerMessage, len(plan.Records))
	explicit := 0
	for i, pr := range plan.Records {
		msgs[i] = toMessage(plan.Topic, i, pr)
		if pr.Partition != nil {
			explicit++
		}
	}
	switch {
	case explicit == len(msgs) && explicit > 0:
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
	case explicit > 0:
		def := cfg.Producer.Partitioner
		cfg.Producer.Partitioner = func(topic string) sarama.Partitioner {
			return &mixedPartitioner{def(topic)}
		}
	}

	p, err := sarama.NewAsyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		notSent(fmt.Errorf("sarama.NewAsyncProducer: %w", err))
		return
	}
	closed := false
	defer func() {
		if !closed {
			closeProducer(p, rec)
		}
	}()
	if s.Transaction != nil {
		if err := p.BeginTxn(); err != nil {
			notSent(fmt.Errorf("BeginTxn: %w", err))
			return
		}
	}

	// collect every result (the channels stay open until Close)
	done := make(chan struct{})
	go func() {
		got := 0
		for got < len(msgs) {
			select {
			case m, ok := <-p.Successes():
				if !ok {
					return // closed (after a timeout)
				}
				rec.Ack(m.Metadata.(meta).index, m.Partition, m.Offset)
			case e, ok := <-p.Errors():
				if !ok {
					return
				}
				if md, ok := e.Msg.Metadata.(meta); ok {
					rec.Fail(md.index, e.Err.Error())
				} else {
					fmt.Fprintln(os.Stderr, "adapter: an error without a message:", e.Err)
					continue
				}
			}
			got++
		}
		close(done)
	}()
	deadline := time.NewTimer(timeout + 5*time.Second)
	defer deadline.Stop()
	sent := 0
send:
	for _, m := range msgs {
		select {
		case p.Input() <- m:
			sent++
		case <-deadline.C:
			break send
		}
	}
	if sent < len(msgs) {
		rec.SetError(fmt.Sprintf("sarama did not take record %d of %d into its Input within timeout_ms + 5 s", sent, len(msgs)))
	} else {
		select {
		case <-done:
		case <-deadline.C:
			rec.SetError("sarama reported no result for some records within timeout_ms + 5 s")
		}
	}

	if s.Transaction != nil {
		var err error
		what := "CommitTxn"
		if s.Transaction.End == "abort" {
			what = "AbortTxn"
			err = p.AbortTxn()
		} else {
			err = p.CommitTxn()
		}
		if err != nil {
			rec.SetError(fmt.Sprintf("%s: %v", what, err))
		}
	}
	closed = true
	closeProducer(p, rec)
}

// closeProducer closes p; errors it still returns belong to records (reported through Errors
// already, or failed here when they had no result yet).
func closeProducer(p sarama.AsyncProducer, rec *ac.Recorder) {
	if err := p.Close(); err != nil {
		if errs, ok := err.(sarama.ProducerErrors); ok {
			for _, e := range errs {
				if md, ok := e.Msg.Metadata.(meta); ok {
					rec.Fail(md.index, e.Err.Error())
				}
			}
			return
		}
		fmt.Fprintln(os.Stderr, "adapter: Close:", err)
	}
}

func main() {
	ac.RunProducer(capabilities, produce, nil)
}
