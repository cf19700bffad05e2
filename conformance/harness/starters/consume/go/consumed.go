// The structures the hook (library.go) fills: what the library's consumer delivered.
//
// Plain data; main.go writes them as the consume document (docs/adapter-protocol.md of
// kafka-conformance, "The consumer side").
package main

// TimestampTypes are the timestamp types Kafka reports (ConsumerRecord.timestampType()).
var TimestampTypes = []string{"CreateTime", "LogAppendTime", "NoTimestampType"}

// Options is what the kit asked for: `consume --bootstrap ... --topic ... --partition ...`.
type Options struct {
	Bootstrap string // "127.0.0.1:PORT": the kit's fake broker
	Topic     string
	Partition int32
	// Start is "earliest", or an offset to start from (the kit passes "earliest").
	Start string
	// Isolation is "read_uncommitted" or "read_committed" (the consumer's isolation.level).
	Isolation string
	// TimeoutMs is the budget: stop there and report Error{Class: "timeout"}.
	TimeoutMs int
	// Group is the group id to use when the consumer subscribes (joins a group) instead of
	// assigning the partition; the kit's check never passes it (nil: use any id). Either way
	// works: the fake broker is also the group coordinator and serves a group of one.
	Group *string
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte // nil: a null value; []byte{}: an empty value
}

// Record is one delivered record, as the library's consumer handed it out.
type Record struct {
	Offset        int64
	Timestamp     int64  // -1 when the record has none, as Kafka reports it
	TimestampType string // one of TimestampTypes
	Key           []byte // nil: a null key; a non-nil empty slice ([]byte{}): an empty key
	Value         []byte // nil: a null value; []byte{}: an empty value
	Headers       []Header
}

// Error is the error that stopped the consumer: Class is the library's error name (or Kafka's
// class name, e.g. "org.apache.kafka.common.KafkaException", when the capabilities declare
// ErrorClasses other than "none"); Message its text (nil: none).
type Error struct {
	Class   string
	Message *string
}

// Consumed is every record delivered, in delivery order, and the error that stopped the
// consumer (nil: it reached the end of the partition).
type Consumed struct {
	Records []Record
	Error   *Error
}
