// The hook of this kafka-conformance adapter: the ONE file you edit.
//
// Declare what your Kafka client library does (the constants below) and call it in decode.
// main.go does the rest (the protocol, the canonical JSON); see its top comment for how to
// build, run and check the adapter. The rules (docs/adapter-protocol.md, "Rules for adapters"):
//
//   - Report only what the library decoded. Never parse the bytes yourself to fill a field the
//     library does not expose: leave it at any value, and list its key in Omits.
//     The ONE exception: you may read a batch's length field (bytes 8..11 of the batch,
//     big-endian int32; size = 12 + length) to compute Position / BatchIndex: batchPosition
//     (in main.go) does it.
//   - Declare the library's real defaults (no CRC checking by default: ChecksCRC = false)
//     rather than configuring it to look conformant.
//   - Map the library's errors to the Kafka exception class they correspond to (Error), and
//     put the library's own error text in Error.Message.
package main

import "errors"

// ------------------------------------------------------------------------- capabilities

// Name is the implementation's name in reports (e.g. "my-library-adapter").
const Name = "my-adapter"

// Version is the library's version, shown in reports.
const Version = ""

// Magics are the message formats (magics) the library decodes; a case with another magic is
// `unsupported`.
var Magics = []int{0, 1, 2}

// Codecs are the compression codecs the library decodes, of none, gzip, snappy, lz4, zstd; a
// case needing another is `unsupported`.
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// ChecksCRC says whether the library verifies checksums (by default); if false, a case whose
// verdict is a checksum error is `unsupported`.
const ChecksCRC = true

// ErrorSemantics is what the library delivers from a batch in which an error happens:
//
//	"streaming": the records before the error, as Kafka's consumer does;
//	"eager": from a compressed batch, possibly fewer of them, down to none;
//	"atomic": from any batch (compressed or not), possibly fewer of them, down to none.
//
// Records it does deliver must still match Kafka's.
const ErrorSemantics = "streaming"

// FileSemantics says whether `--as file` input (a whole .log segment) is decoded with Kafka's
// FileRecords rules; if false, a file case is run only where Kafka's memory-mode verdict is
// the same.
const FileSemantics = true

// ErrorClasses is how precisely your Error.KafkaException is compared with Kafka's:
//
//	"exact" (class and message), "class" (class only), "family" (corrupt / compression /
//	resource, docs/adapter-protocol.md), "none" (any error will do).
//
// A library that only reports a bare EOF: use CorruptRecord and "none".
const ErrorClasses = "class"

// ListsFailingBatch is false if the library returns an error without the header of the batch
// that failed (then that batch may be missing from Decoded.Batches).
const ListsFailingBatch = true

// Omits are the batch or record keys (canonical JSON names, e.g. "crc", "deleteHorizonMs",
// "headers") the library does not expose: they are left out of the document and not
// compared; a dotted entry such as "control.coordinatorEpoch" leaves out one field of a
// record's `control` object.
var Omits = []string{}

// Notes is free text for the report (e.g. "CRC checking is off by default in this library").
const Notes = ""

// ------------------------------------------------------------------------------- decode

// Kafka exception classes to map the library's errors to (Error.KafkaException):
const (
	CorruptRecord   = "org.apache.kafka.common.errors.CorruptRecordException" // bad CRC, bad sizes
	InvalidRecord   = "org.apache.kafka.common.InvalidRecordException"        // invalid record contents
	IllegalArgument = "java.lang.IllegalArgumentException"                    // e.g. an unknown compression id
	CodecFailure    = "org.apache.kafka.common.KafkaException"                // a compressed stream failed to inflate
	BufferUnderflow = "java.nio.BufferUnderflowException"                     // a field read past the end of the data
)

// decode decodes data with your library and returns what it decoded.
//
// mode is "memory" (data is a fetch response's `records` field, MemoryRecords rules) or
// "file" (a whole .log segment, FileRecords rules).
//
// Fill Decoded.Batches in input order, including the batch during which an error happened
// (if the library lists it), and set Decoded.Error if the library returned an error: that is
// a verdict. Return a non-nil error (or panic) only if the adapter itself failed: it is
// reported as a crash of the adapter, not as a verdict.
func decode(data []byte, mode string) (*Decoded, error) {
	return nil, errors.New("decode is not implemented yet: call your library in library.go")
	// An example, with a made-up library `kafkalib`:
	//
	// decoded := &Decoded{}
	// index := 0 // the batch being split or decoded: the error's BatchIndex
	// fail := func(err error) *Decoded {
	// 	message := err.Error()
	// 	decoded.Error = &Error{CorruptRecord, &message, index, batchPosition(data, index)}
	// 	return decoded
	// }
	// reader := kafkalib.NewBatchReader(data)
	// for reader.Next() {
	// 	b := reader.Batch()
	// 	batch := &Batch{
	// 		Position:             batchPosition(data, index),
	// 		SizeInBytes:          b.Size,
	// 		Magic:                b.Magic,
	// 		CRC:                  b.CRC,
	// 		Attributes:           b.Attributes,
	// 		Compression:          b.CompressionName, // none, gzip, snappy, lz4, zstd
	// 		TimestampType:        b.TimestampType,   // CreateTime, LogAppendTime
	// 		LastOffset:           b.LastOffset,
	// 		MaxTimestamp:         b.MaxTimestamp,
	// 		BaseOffset:           b.BaseOffset, // this and the following: magic 2 only
	// 		LastOffsetDelta:      b.LastOffsetDelta,
	// 		PartitionLeaderEpoch: b.PartitionLeaderEpoch,
	// 		BaseTimestamp:        b.FirstTimestamp,
	// 		DeleteHorizonMs:      b.DeleteHorizon, // nil if the batch has none
	// 		IsTransactional:      b.IsTransactional,
	// 		IsControl:            b.IsControl,
	// 		ProducerID:           b.ProducerID,
	// 		ProducerEpoch:        b.ProducerEpoch,
	// 		BaseSequence:         b.BaseSequence,
	// 		LastSequence:         b.LastSequence,
	// 		RecordsCount:         b.RecordCount,
	// 	}
	// 	decoded.Batches = append(decoded.Batches, batch) // before its records: an error may come in them
	// 	records := b.Records()
	// 	for records.Next() {
	// 		r := records.Record()
	// 		record := Record{
	// 			Offset:    r.Offset,
	// 			Timestamp: r.Timestamp,
	// 			Key:       r.Key, // nil for a null key, []byte{} for an empty one
	// 			Value:     r.Value,
	// 		}
	// 		for _, h := range r.Headers {
	// 			record.Headers = append(record.Headers, Header{h.Key, h.Value})
	// 		}
	// 		if b.IsControl {
	// 			record.Control = &Control{r.ControlTypeID, r.ControlType, r.CoordinatorEpoch}
	// 		}
	// 		batch.Records = append(batch.Records, record)
	// 	}
	// 	if err := records.Err(); err != nil {
	// 		return fail(err), nil
	// 	}
	// 	index++
	// }
	// if err := reader.Err(); err != nil {
	// 	return fail(err), nil
	// }
	// return decoded, nil
}
