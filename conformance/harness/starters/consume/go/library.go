// The hook of this kafka-conformance consumer adapter: the ONE file you edit.
//
// Declare what your Kafka client library's consumer does (the constants below) and run it in
// consume. main.go does the rest (the protocol, the consume document); see its top comment
// for how to build, run and check the adapter. The kit starts a fake broker on 127.0.0.1 that
// serves one partition, then runs `adapter consume --bootstrap 127.0.0.1:PORT ...`; what your
// consumer delivers is compared with what Kafka's own KafkaConsumer delivers from the same
// partition. The rules (docs/adapter-protocol.md, "The consumer side"):
//
//   - Run the library's real consumer with the library's own defaults (its CRC setting, its
//     fetch sizes): what users run is what is judged.
//   - Assign the one partition, or subscribe to the topic: the fake broker is also the group
//     coordinator and serves a group of one (the member that joins leads it and assigns
//     itself the partition; commits are accepted, not stored), so a consumer that always
//     joins a group works too (options.Group: the group id, when given).
//   - Report only what the library delivered. A record field the library does not expose is
//     left at any value and its key listed in Omits (never filled with a guess).
//   - Stop when the position reaches the end of the partition (the high watermark; the last
//     stable offset for read_committed), when the library reports an error (return it in
//     Consumed.Error), or at options.TimeoutMs (Error{Class: "timeout"}).
//   - A library that crashes or hangs gives no verdict: return a Go error (or let a panic
//     escape; main.go exits non-zero), never dress a crash as a clean Consumed.Error.
package main

import "errors"

// ------------------------------------------------------------------------- capabilities

// Name is the implementation's name in reports (e.g. "my-library-consumer").
const Name = "my-consumer"

// Version is the library's version, shown in reports.
const Version = ""

// Magics are the message formats (magics) the consumer reads; a scenario whose partition
// holds a batch of another magic is `unsupported`.
var Magics = []int{0, 1, 2}

// Codecs are the compression codecs the consumer reads, of none, gzip, snappy, lz4, zstd; a
// scenario whose partition holds a batch of another codec is `unsupported`.
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// ChecksCRC says whether the consumer verifies checksums with the library's defaults
// (librdkafka's check.crcs=false: false); if false, a scenario whose only fault is a checksum
// error is `unsupported`.
const ChecksCRC = true

// ErrorSemantics is what the consumer delivers from a batch in which an error happens:
//
//	"streaming": the records before the error, as Kafka's consumer does;
//	"eager": from a compressed batch, possibly fewer of them, down to none;
//	"atomic": from any batch, possibly fewer of them, down to none.
const ErrorSemantics = "streaming"

// ErrorClasses is how Error.Class is compared with Kafka's consumer's exception class:
// "none" (any error will do: the default, libraries name their errors differently),
// "family", "class", "exact" (docs/adapter-protocol.md); anything but "none" means
// Error.Class holds Kafka's class names.
const ErrorClasses = "none"

// Omits are the record keys the library does not expose, of offset, timestamp,
// timestampType, key, value, headers (e.g. []string{"timestampType"} for sarama's
// ConsumerMessage, which has no timestamp type); they are not compared. A
// map[string][]string{"0": ..., "1": ..., "2": ...} says it per magic of the record's batch.
var Omits any = []string{}

// Notes is free text for the report (e.g. "check.crcs is off by default in this library").
const Notes = ""

// ------------------------------------------------------------------------------ consume

// consume reads options.Partition of options.Topic from options.Bootstrap with your library's
// consumer, from options.Start to the end offset, and returns what it delivered. An error
// the library reported is part of the result (Consumed.Error: a verdict); return a non-nil
// Go error (or panic) only if the adapter itself failed: no verdict, the reason on stderr.
func consume(options Options) (*Consumed, error) {
	return nil, errors.New("library.go: consume() is not implemented: run your library's consumer there")
	// An example, with confluent-kafka-go (github.com/confluentinc/confluent-kafka-go/v2/kafka;
	// imports: errors, strconv, time); librdkafka does not check CRCs by default, so it would
	// declare ChecksCRC = false:
	//
	// c, err := kafka.NewConsumer(&kafka.ConfigMap{
	// 	"bootstrap.servers":    options.Bootstrap,
	// 	"group.id":             "kafka-conformance", // required, not joined by Assign
	// 	"isolation.level":      options.Isolation,
	// 	"enable.auto.commit":   false,
	// 	"enable.partition.eof": true, // a PartitionEOF event at the end offset
	// })
	// if err != nil {
	// 	return nil, err
	// }
	// defer c.Close()
	// start := kafka.OffsetBeginning
	// if options.Start != "earliest" {
	// 	n, err := strconv.ParseInt(options.Start, 10, 64)
	// 	if err != nil {
	// 		return nil, err
	// 	}
	// 	start = kafka.Offset(n)
	// }
	// tp := kafka.TopicPartition{Topic: &options.Topic, Partition: options.Partition, Offset: start}
	// if err := c.Assign([]kafka.TopicPartition{tp}); err != nil {
	// 	return nil, err
	// }
	// out := &Consumed{}
	// deadline := time.Now().Add(time.Duration(options.TimeoutMs) * time.Millisecond)
	// for time.Now().Before(deadline) {
	// 	switch e := c.Poll(200).(type) {
	// 	case *kafka.Message:
	// 		r := Record{
	// 			Offset:        int64(e.TopicPartition.Offset),
	// 			Timestamp:     e.Timestamp.UnixMilli(),
	// 			TimestampType: "NoTimestampType",
	// 			Key:           e.Key,
	// 			Value:         e.Value,
	// 		}
	// 		switch e.TimestampType {
	// 		case kafka.TimestampCreateTime:
	// 			r.TimestampType = "CreateTime"
	// 		case kafka.TimestampLogAppendTime:
	// 			r.TimestampType = "LogAppendTime"
	// 		default:
	// 			r.Timestamp = -1
	// 		}
	// 		for _, h := range e.Headers {
	// 			r.Headers = append(r.Headers, Header{h.Key, h.Value})
	// 		}
	// 		out.Records = append(out.Records, r)
	// 	case kafka.PartitionEOF:
	// 		return out, nil // the end offset: the high watermark, or the LSO (read_committed)
	// 	case kafka.Error:
	// 		message := e.Error()
	// 		out.Error = &Error{e.Code().String(), &message}
	// 		return out, nil
	// 	}
	// }
	// out.Error = &Error{Class: "timeout"}
	// return out, nil
}
