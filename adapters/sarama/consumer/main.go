// Consumer adapter of the Kafka conformance kit (docs/adapter-protocol.md, "The consumer
// side") for sarama (github.com/IBM/sarama, pinned in ../go.mod). Public API only: like
// producer/, it is built against the pinned, unmodified module (no shim).
//
// `consume` runs sarama's real consumer: sarama.NewConfig() (Version stays sarama's default
// V2_8_0_0, which allows Consumer.IsolationLevel) with a ClientID, Consumer.Return.Errors =
// true, Consumer.Offsets.AutoCommit.Enable = false and Consumer.IsolationLevel; NewClient,
// NewConsumerFromClient, ConsumePartition(topic, partition, OffsetOldest or the offset), then
// Messages() and Errors() until the position reaches the end offset, the first ConsumerError
// (its class: the Go type of the error, with the code for a sarama.KError), or the deadline
// (`timeout`). The end offset is client.GetOffset(topic, partition, OffsetNewest) (the high
// watermark) for read_uncommitted; GetOffset sends no isolation level, so for read_committed
// the same OffsetRequest is sent to the leader with IsolationLevel = ReadCommitted (the last
// stable offset) through Broker.GetAvailableOffsets.
//
// sarama exposes no position: partitionConsumer.offset is unexported, and a fetch that only
// moves it past control records (transaction markers) or aborted batches delivers nothing.
// The position is therefore the offset after the last delivered message; when it is below
// the end offset and the consumer has delivered nothing (no message, no error) for idleMs
// (more than Consumer.Retry.Backoff 2 s + Consumer.MaxWaitTime 0.5 s, so that one retry or
// one empty long poll does not end the run), the run ends as consumed to the end.
//
// sarama's ConsumerMessage has no timestamp type: records carry no `timestampType`, and the
// capabilities declare it in omits (it is not compared). sarama already puts the batch's max
// timestamp in Timestamp for LogAppendTime batches; a message without one (the zero
// time.Time: magic 0, or a stored -1) is reported with timestamp -1, as Kafka reports it.
package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	ac "kafkaconformance.local/adaptercommon"
)

const (
	module = "github.com/IBM/sarama"
	idleMs = 3000
)

type obj = ac.Obj

func capabilities() obj {
	return obj{
		"name":    "sarama",
		"version": ac.LibraryVersion(module),
		"notes": "sarama.NewConfig() defaults (Version V2_8_0_0, Fetch.Default 1 MiB doubled on " +
			"a partial batch, Fetch.Max unlimited, Retry.Backoff 2 s, CRCs checked by the " +
			"packet decoder) with Consumer.Return.Errors, no auto commit, " +
			"Consumer.IsolationLevel; NewConsumerFromClient + ConsumePartition (no group). " +
			"sarama exposes no position: the run also ends when nothing is delivered for " +
			"3 s with the last delivered offset below the end offset (trailing transaction " +
			"markers or aborted batches). ConsumerMessage has no timestamp type (omitted); " +
			"a missing timestamp (the zero time.Time) is reported as -1.",
		// ConsumerMessage carries Timestamp and BlockTimestamp only
		"omits": []string{"timestampType"},
	}
}

// errClass is "sarama.KError(<code>)" for a Kafka error code, else the Go type of the
// innermost error.
func errClass(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		return fmt.Sprintf("sarama.KError(%d)", int16(ke))
	}
	return ac.InnermostType(err)
}

func record(m *sarama.ConsumerMessage) obj {
	headers := make([]obj, 0, len(m.Headers))
	for _, h := range m.Headers {
		if h == nil {
			continue
		}
		headers = append(headers, obj{"key": string(h.Key), "value": ac.B64(h.Value)})
	}
	ts := ac.Millis(m.Timestamp)
	if m.Timestamp.IsZero() {
		ts = "-1"
	}
	return obj{"offset": strconv.FormatInt(m.Offset, 10), "timestamp": ts,
		"key": ac.B64(m.Key), "value": ac.B64(m.Value), "headers": headers}
}

// endOffset is the high watermark (read_uncommitted: client.GetOffset) or the last stable
// offset (read_committed: an OffsetRequest with the isolation level, to the leader).
func endOffset(client sarama.Client, cfg *sarama.Config, a ac.ConsumeArgs) (int64, error) {
	p := int32(a.Partition)
	if cfg.Consumer.IsolationLevel != sarama.ReadCommitted {
		return client.GetOffset(a.Topic, p, sarama.OffsetNewest)
	}
	leader, err := client.Leader(a.Topic, p)
	if err != nil {
		return 0, err
	}
	req := sarama.NewOffsetRequest(cfg.Version)
	req.IsolationLevel = sarama.ReadCommitted
	req.AddBlock(a.Topic, p, sarama.OffsetNewest, 1)
	resp, err := leader.GetAvailableOffsets(req)
	if err != nil {
		return 0, err
	}
	block := resp.GetBlock(a.Topic, p)
	if block == nil {
		return 0, sarama.ErrIncompleteResponse
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return 0, block.Err
	}
	if len(block.Offsets) == 1 { // as client.getOffset reads it
		return block.Offsets[0], nil
	}
	return block.Offset, nil
}

// bounded runs fn, but gives up waiting after d (the process exits after printing anyway).
func bounded(d time.Duration, fn func()) {
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func consume(a ac.ConsumeArgs) obj {
	deadline := time.Now().Add(time.Duration(a.TimeoutMs) * time.Millisecond)
	records := []obj{}

	start := sarama.OffsetOldest
	if a.From != "earliest" {
		n, err := strconv.ParseInt(a.From, 10, 64)
		if err != nil {
			return ac.ConsumeDocument(records, obj{"class": "usage", "message": err.Error()})
		}
		start = n
	}
	cfg := sarama.NewConfig()
	cfg.ClientID = "kafka-conformance-sarama"
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	if a.Isolation == "read_committed" {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	} else {
		cfg.Consumer.IsolationLevel = sarama.ReadUncommitted
	}

	type setup struct {
		client   sarama.Client
		consumer sarama.Consumer
		pc       sarama.PartitionConsumer
		end      int64
		first    int64
		err      error
	}
	// NewClient / GetOffset / ConsumePartition retry on their own: run them against the deadline
	ready := make(chan setup, 1)
	go func() {
		var s setup
		defer func() { ready <- s }()
		if s.client, s.err = sarama.NewClient([]string{a.Bootstrap}, cfg); s.err != nil {
			return
		}
		if s.end, s.err = endOffset(s.client, cfg, a); s.err != nil {
			return
		}
		if start == sarama.OffsetOldest {
			if s.first, s.err = s.client.GetOffset(a.Topic, int32(a.Partition), sarama.OffsetOldest); s.err != nil {
				return
			}
		}
		if s.consumer, s.err = sarama.NewConsumerFromClient(s.client); s.err != nil {
			return
		}
		s.pc, s.err = s.consumer.ConsumePartition(a.Topic, int32(a.Partition), start)
	}()
	var s setup
	select {
	case s = <-ready:
	case <-time.After(time.Until(deadline)):
		return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
	}
	defer bounded(5*time.Second, func() {
		if s.pc != nil {
			s.pc.AsyncClose()
		}
		if s.consumer != nil {
			s.consumer.Close()
		}
		if s.client != nil {
			s.client.Close()
		}
	})
	if s.err != nil {
		return ac.ConsumeDocument(records, ac.ConsumeError(errClass(s.err), s.err))
	}

	// the position before the first delivery: the offset asked for, or the log start offset
	position := start
	if start == sarama.OffsetOldest {
		position = s.first
	}
	end := s.end
	over := time.NewTimer(time.Until(deadline))
	defer over.Stop()
	idle := time.NewTimer(idleMs * time.Millisecond)
	defer idle.Stop()
	for position < end {
		select {
		case m, ok := <-s.pc.Messages():
			if !ok {
				return ac.ConsumeDocument(records, obj{"class": "closed", "message": "Messages() closed"})
			}
			records = append(records, record(m))
			position = m.Offset + 1
			if !idle.Stop() {
				<-idle.C
			}
			idle.Reset(idleMs * time.Millisecond)
		case ce, ok := <-s.pc.Errors():
			if !ok {
				return ac.ConsumeDocument(records, obj{"class": "closed", "message": "Errors() closed"})
			}
			return ac.ConsumeDocument(records, ac.ConsumeError(errClass(ce.Err), ce.Err))
		case <-idle.C:
			// nothing delivered for idleMs: sarama's hidden position is taken to be at the end
			return ac.ConsumeDocument(records, nil)
		case <-over.C:
			return ac.ConsumeDocument(records, ac.TimeoutError(a.TimeoutMs))
		}
	}
	return ac.ConsumeDocument(records, nil)
}

func main() {
	ac.RunConsumer(capabilities, consume)
}
