// The canonical decode document (docs/canonical-json.md) as the Go adapters build it: the
// skeleton and its outcomes, records and headers, and the JSON forms of bytes, timestamps and
// codecs; plus the capabilities every Go adapter declares.

package adaptercommon

import (
	"encoding/base64"
	"strconv"
	"time"
)

// The Kafka exception classes the Go adapters report (`error.kafka_exception`).
const (
	CorruptRecord  = "org.apache.kafka.common.errors.CorruptRecordException"
	KafkaException = "org.apache.kafka.common.KafkaException" // codec (decompression) errors
)

// CodecNames maps a compression codec id (attributes & 7) to its canonical name.
var CodecNames = []string{"none", "gzip", "snappy", "lz4", "zstd", "unknown-5", "unknown-6", "unknown-7"}

// NewDoc is the document of a decode in mode, with outcome "ok" and no error and no tail; the
// adapter adds "batches" and, if need be, calls SetError or SetTail.
func NewDoc(mode string) Obj {
	return Obj{"format": "kafka-conformance/decode/1", "mode": mode, "outcome": "ok",
		"error": nil, "tail": nil}
}

// SetError makes doc's outcome "error": err, of class exception, raised by the batch at
// batchIndex that starts at position.
func SetError(doc Obj, exception string, err error, batchIndex, position int) {
	doc["outcome"] = "error"
	doc["error"] = Obj{"kafka_exception": exception, "message": err.Error(),
		"batch_index": batchIndex, "position": position}
}

// SetTail makes doc's outcome "partial": the input's bytes from end on (of size in all) were
// left undecoded.
func SetTail(doc Obj, end, size int) {
	doc["outcome"] = "partial"
	doc["tail"] = Obj{"position": end, "bytes": size - end}
}

// Record is a record object (without "control"): offset, timestamp (see Millis), key, value
// and headers (see Header).
func Record(offset int64, timestamp string, key, value []byte, headers []Obj) Obj {
	return Obj{"offset": strconv.FormatInt(offset, 10), "timestamp": timestamp,
		"key": B64(key), "value": B64(value), "headers": headers}
}

// Header is a header object: the key decoded as Kafka does (JavaUTF8), the value in base64.
func Header(key, value []byte) Obj {
	return Obj{"key": JavaUTF8(key), "value": B64(value)}
}

// B64 is b in standard base64, or JSON null for a nil slice (a null key or value).
func B64(b []byte) any {
	if b == nil {
		return nil
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Millis is t as epoch milliseconds in decimal; the zero time.Time, which franz-go and sarama
// use for "no timestamp" (magic 0, or a stored -1), is "-1".
func Millis(t time.Time) string {
	if t.IsZero() {
		return "-1"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

// Capabilities is the `capabilities` answer of a Go adapter for name, whose library is the
// module path module: magics 0-2, every codec, CRCs checked, eager errors, no FileRecords rules
// (`file` decodes like `memory`), no error classes, a persistent server (`serve`). omits and notes
// are the adapter's own.
func Capabilities(name, module string, omits []string, notes string) Obj {
	return Obj{
		"name": name, "version": LibraryVersion(module), "magics": []int{0, 1, 2},
		"codecs": []string{"none", "gzip", "snappy", "lz4", "zstd"}, "checks_crc": true,
		"error_semantics": "eager", "file_semantics": false, "error_classes": "none",
		"omits": omits, "persistent": true, "notes": notes,
	}
}
