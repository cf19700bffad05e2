// The hook of this kafka-conformance producer adapter: the ONE file you edit.
//
// Declare what your Kafka client library's producer and batch builder do (the variables
// below), then send a plan in produce and build a batch in encode. main.go does the rest (the
// protocol, reading the plan, the produce-result document); see its top comment for how to
// build, run and check the adapter. check-producer starts a real Kafka broker, creates the
// plan's topic, runs `adapter produce --bootstrap HOST:PORT --plan FILE`, records what crossed
// the wire and judges it with the broker's verdict and Kafka's consumer
// (docs/producer-check.md). The rules (docs/adapter-protocol.md, "Producer side"):
//
//   - Use the library's real producer with the plan's settings and the library's own defaults
//     for everything else: what users run is what is judged.
//   - Send every record in plan order; wait until each is acknowledged or failed (flush); end
//     the transaction if the plan has one; close the producer.
//   - Report per record what the library reported (partition, offset, error text). A record
//     the library refused before sending keeps Partition/Offset nil and its Error set.
//   - Leave out of a capability object what the library cannot do (set the field to false or
//     leave out the codec): those scenarios are then `unsupported`, not failures.
//   - Either side may be absent: set Produce = nil (no producer) or Encode = nil (no batch
//     builder exposed), and leave its function as it is.
package main

import "errors"

// ------------------------------------------------------------------------- capabilities

// Name is the implementation's name in reports (e.g. "my-library-producer").
const Name = "my-producer"

// Version is the library's version, shown in reports.
const Version = ""

// Produce is the producer side (produce), or nil if the library has no producer. Its fields:
//
//	Codecs       the compression types it can send, of none, gzip, snappy, lz4, zstd
//	Idempotence  whether it has the idempotent producer (enable.idempotence)
//	Transactions whether it has transactions (transactional.id, commit, abort)
//	Headers      whether records can carry headers
//	Magics       the message formats it writes; must hold 2
//	Partitioner  the name of its default partitioner for records without a partition, from
//	             `kafka-conformance partition --list` (e.g. "java", "librdkafka:consistent_random"),
//	             or a composition of its parts when no name fits (e.g. "murmur2|unsigned|mod")
//	Defaults     its real defaults: idempotence, acks (-1, 0 or 1), linger.ms, batch.size
//	             (NoSetting for a linger or batch size the library does not have: "none")
//	Batching     how records of a plan group (Plan.Groups) go in one batch: "call" (a batch
//	             call), "linger" (sent back to back, a linger gathers them), "none" (cannot:
//	             those scenarios are unsupported); "" = "linger"
//	Notes        free text for the report
var Produce = &ProduceCapabilities{
	Codecs:       []string{"none", "gzip", "snappy", "lz4", "zstd"},
	Idempotence:  true,
	Transactions: true,
	Headers:      true,
	Magics:       []int{2},
	Partitioner:  "java",
	Defaults:     ProducerDefaults{Idempotence: true, Acks: -1, LingerMs: 5, BatchSize: 16384},
	Notes:        "",
}

// Encode is the encoder side (encode: the library's batch builder on its own), or nil. The
// same fields as Produce but Partitioner and Defaults.
var Encode = &EncodeCapabilities{
	Codecs:       []string{"none", "gzip", "snappy", "lz4", "zstd"},
	Idempotence:  true,
	Transactions: true,
	Headers:      true,
	Magics:       []int{2},
	Notes:        "",
}

// ------------------------------------------------------------------------------ produce

// produce sends every record of plan to bootstrap with your library's producer and returns
// what it reported: one Delivery per plan record, in plan order. Failures the library
// reported are part of the result (a verdict); return a non-nil Go error (or panic) only if
// the adapter itself failed: no verdict, the reason on stderr.
func produce(bootstrap string, plan *Plan) (*Produced, error) {
	return nil, errors.New("library.go: produce() is not implemented: send the plan with your library's producer")
	// An example, with confluent-kafka-go (github.com/confluentinc/confluent-kafka-go/v2/kafka;
	// imports: context, errors, time); its partitioner would be declared as
	// "librdkafka:consistent_random":
	//
	// s := plan.Settings
	// config := &kafka.ConfigMap{
	// 	"bootstrap.servers":  bootstrap,
	// 	"compression.type":   s.Codec,
	// 	"enable.idempotence": s.Idempotence,
	// 	"acks":               s.Acks,
	// 	"linger.ms":          s.LingerMs,
	// 	"batch.size":         s.BatchSize,
	// 	"message.max.bytes":  s.MaxRequestSize,
	// 	"message.timeout.ms": s.TimeoutMs,
	// }
	// if s.Transaction != nil {
	// 	config.SetKey("transactional.id", s.Transaction.ID)
	// }
	// p, err := kafka.NewProducer(config)
	// if err != nil {
	// 	return nil, err
	// }
	// defer p.Close()
	// ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.TimeoutMs)*time.Millisecond)
	// defer cancel()
	// if s.Transaction != nil {
	// 	if err := p.InitTransactions(ctx); err != nil {
	// 		return nil, err
	// 	}
	// 	if err := p.BeginTransaction(); err != nil {
	// 		return nil, err
	// 	}
	// }
	// out := &Produced{Records: make([]Delivery, len(plan.Records))}
	// reports := make(chan kafka.Event, len(plan.Records))
	// pending := 0
	// for i, r := range plan.Records {
	// 	m := &kafka.Message{
	// 		TopicPartition: kafka.TopicPartition{Topic: &plan.Topic, Partition: kafka.PartitionAny},
	// 		Key:            r.Key,
	// 		Value:          r.Value,
	// 		Opaque:         i, // the plan index, handed back with the delivery report
	// 	}
	// 	if r.Partition != nil {
	// 		m.TopicPartition.Partition = *r.Partition
	// 	}
	// 	if r.Timestamp != nil {
	// 		m.Timestamp = time.UnixMilli(*r.Timestamp)
	// 	}
	// 	for _, h := range r.Headers {
	// 		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	// 	}
	// 	if err := p.Produce(m, reports); err != nil { // refused before sending
	// 		text := err.Error()
	// 		out.Records[i].Error = &text
	// 		continue
	// 	}
	// 	pending++
	// }
	// p.Flush(s.TimeoutMs)
	// for ; pending > 0; pending-- {
	// 	select {
	// 	case e := <-reports:
	// 		m := e.(*kafka.Message)
	// 		d := &out.Records[m.Opaque.(int)]
	// 		if err := m.TopicPartition.Error; err != nil {
	// 			text := err.Error()
	// 			d.Error = &text
	// 			continue
	// 		}
	// 		partition, offset := m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
	// 		d.Partition, d.Offset = &partition, &offset
	// 	case <-ctx.Done():
	// 		return nil, errors.New("delivery reports still missing after the plan's timeout")
	// 	}
	// }
	// if s.Transaction != nil {
	// 	end := p.CommitTransaction
	// 	if s.Transaction.End == "abort" {
	// 		end = p.AbortTransaction
	// 	}
	// 	if err := end(ctx); err != nil {
	// 		text := err.Error()
	// 		out.Error = &text
	// 	}
	// }
	// return out, nil
}

// ------------------------------------------------------------------------------- encode

// encode returns the bytes of the ONE record batch your library's batch builder makes from
// the plan's records, with plan.Settings.Codec and the header fields of plan.Batch (base
// offset, producer id and epoch, base sequence, transactional, partition leader epoch).
//
// Replace the return with the builder call; if the library refuses the plan, return an error
// (the adapter exits non-zero with the reason on stderr). A library that does not expose its
// batch builder on its own sets Encode = nil above.
func encode(plan *Plan) ([]byte, error) {
	return nil, errors.New("library.go: encode() is not implemented: build the batch with your library's builder")
}
