// A kafka-conformance adapter for a Go Kafka client library: the protocol side.
//
// This file speaks the adapter protocol (docs/adapter-protocol.md of kafka-conformance) and
// writes the canonical decode JSON (docs/canonical-json.md). You should not need to edit it:
// call your library in library.go (the hook) and declare its capabilities there.
//
// Build: go build -o adapter .     (Go 1.21 or later, standard library only)
// Run:   ./adapter capabilities
//
//	./adapter decode --as memory|file  < input.bin
//	./adapter serve                     (persistent mode, framed stdin/stdout)
//
// Check: kafka-conformance check --cmd "/abs/path/adapter"
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode/utf8"
)

// format is the contract id of the document this adapter prints.
const format = "kafka-conformance/decode/1"

// modes are the `decode --as` values, indexed by the mode byte of a `serve` request.
var modes = [...]string{"memory", "file"}

const usage = `usage: adapter capabilities
       adapter decode --as memory|file  < input
       adapter serve
`

// ------------------------------------------------------------------- what the hook fills

// Decoded is what the library decoded from one input.
type Decoded struct {
	// Batches in input order, including the one during which an error happened (if the
	// library lists it).
	Batches []*Batch
	// Error is the library's error, mapped to Kafka's exception; nil if it decoded everything.
	Error *Error
}

// Batch is one record batch (magic 2) or one top-level message (magic 0 and 1).
type Batch struct {
	Position      int    // byte position of the batch in the input (see batchPosition)
	SizeInBytes   int    // 12 + the batch's length field
	Magic         int    // 0, 1 or 2
	CRC           uint32 // the stored checksum
	Attributes    int    // as stored (signed)
	Compression   string // none, gzip, snappy, lz4, zstd, or unknown-5/-6/-7
	TimestampType string // CreateTime, LogAppendTime (magic >= 1), NoTimestampType (magic 0)
	LastOffset    int64
	MaxTimestamp  int64

	// Magic 2 only (not written for magic 0 and 1):
	BaseOffset           int64
	LastOffsetDelta      int
	PartitionLeaderEpoch int
	BaseTimestamp        int64
	DeleteHorizonMs      *int64 // nil: the batch has no delete horizon
	IsTransactional      bool
	IsControl            bool
	ProducerID           int64
	ProducerEpoch        int
	BaseSequence         int
	LastSequence         int
	RecordsCount         int // the stored records count

	Records []Record
}

// Record is one record of a batch.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte // nil: a null key; a non-nil empty slice ([]byte{}): an empty key
	Value     []byte // nil: a null value; []byte{}: an empty value
	Headers   []Header
	Control   *Control // non-nil only for the records of a control batch
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte // nil: a null value; []byte{}: an empty value
}

// Control is the parsed key (and, for ABORT/COMMIT, value) of a control record.
type Control struct {
	TypeID           int
	Type             string // ABORT, COMMIT, ...
	CoordinatorEpoch *int   // ABORT/COMMIT only; nil otherwise
}

// Error is the error with which decoding stopped (a verdict, not a crash of the adapter).
type Error struct {
	KafkaException string  // the Kafka (or JDK) exception class it corresponds to
	Message        *string // the library's own error text; nil for none
	BatchIndex     int     // index of the batch being split or decoded
	Position       int     // byte position where that batch starts (see batchPosition)
}

// batchPosition returns the byte position of entry index in data, found by walking the
// entries' length fields from 0 (size = 12 + the big-endian int32 at position + 8). The walk
// stops at the end of the data (or at an entry whose length field is cut short or negative),
// so the result is at most len(data).
//
// This is the one read of the input an adapter may do itself: `position` and `batch_index`
// are counts, not decoding.
func batchPosition(data []byte, index int) int {
	position := 0
	for i := 0; i < index && position+12 <= len(data); i++ {
		length := int32(binary.BigEndian.Uint32(data[position+8 : position+12]))
		if length < 0 || int64(length) > int64(len(data)-position-12) {
			break // not a batch, or one past the end (no int overflow where int is 32-bit)
		}
		position += 12 + int(length)
	}
	return min(position, len(data))
}

// --------------------------------------------------------------------- the canonical JSON

// member is one key of a JSON object with its value, already written as JSON text.
type member struct {
	key, value string
}

// object is a JSON object whose keys keep their order (docs/canonical-json.md).
type object []member

// without returns the object minus the keys in omits.
func (o object) without(omits map[string]bool) object {
	kept := o[:0:0]
	for _, m := range o {
		if !omits[m.key] {
			kept = append(kept, m)
		}
	}
	return kept
}

func (o object) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(m.key))
		b.WriteByte(':')
		b.WriteString(m.value)
	}
	b.WriteByte('}')
	return b.String()
}

// jsonArray writes already-written JSON values as an array.
func jsonArray(values []string) string {
	return "[" + strings.Join(values, ",") + "]"
}

// jsonString writes s as a JSON string: quotes, backslashes and control characters escaped,
// other characters as raw UTF-8 (invalid UTF-8 becomes U+FFFD, as Kafka decodes it).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsonInt(n int) string { return strconv.Itoa(n) }

// jsonInt64 writes a 64-bit value as a decimal string, as the contract requires.
func jsonInt64(n int64) string { return `"` + strconv.FormatInt(n, 10) + `"` }

func jsonBool(v bool) string { return strconv.FormatBool(v) }

// jsonBytes writes bytes as standard base64 with padding; nil is null, empty is "".
func jsonBytes(data []byte) string {
	if data == nil {
		return "null"
	}
	return `"` + base64.StdEncoding.EncodeToString(data) + `"`
}

func jsonStrings(values []string) string {
	written := make([]string, len(values))
	for i, v := range values {
		written[i] = jsonString(v)
	}
	return jsonArray(written)
}

func jsonInts(values []int) string {
	written := make([]string, len(values))
	for i, v := range values {
		written[i] = jsonInt(v)
	}
	return jsonArray(written)
}

// recordDocument writes a record; keys in omits (and "control.X" entries) are left out.
func recordDocument(r *Record, omits map[string]bool) object {
	headers := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		headers[i] = object{{"key", jsonString(h.Key)}, {"value", jsonBytes(h.Value)}}.String()
	}
	doc := object{
		{"offset", jsonInt64(r.Offset)},
		{"timestamp", jsonInt64(r.Timestamp)},
		{"key", jsonBytes(r.Key)},
		{"value", jsonBytes(r.Value)},
		{"headers", jsonArray(headers)},
	}
	if c := r.Control; c != nil {
		control := object{{"typeId", jsonInt(c.TypeID)}, {"type", jsonString(c.Type)}}
		if c.CoordinatorEpoch != nil {
			control = append(control, member{"coordinatorEpoch", jsonInt(*c.CoordinatorEpoch)})
		}
		controlOmits := map[string]bool{}
		for key := range omits {
			if field, ok := strings.CutPrefix(key, "control."); ok {
				controlOmits[field] = true
			}
		}
		doc = append(doc, member{"control", control.without(controlOmits).String()})
	}
	return doc.without(omits)
}

// batchDocument writes a batch, with the magic-2-only keys only when magic >= 2.
func batchDocument(b *Batch, omits map[string]bool) object {
	doc := object{
		{"position", jsonInt(b.Position)},
		{"sizeInBytes", jsonInt(b.SizeInBytes)},
		{"magic", jsonInt(b.Magic)},
		{"crc", strconv.FormatUint(uint64(b.CRC), 10)},
		{"attributes", jsonInt(b.Attributes)},
		{"compression", jsonString(b.Compression)},
		{"timestampType", jsonString(b.TimestampType)},
		{"lastOffset", jsonInt64(b.LastOffset)},
		{"maxTimestamp", jsonInt64(b.MaxTimestamp)},
	}
	if b.Magic >= 2 {
		deleteHorizon := "null"
		if b.DeleteHorizonMs != nil {
			deleteHorizon = jsonInt64(*b.DeleteHorizonMs)
		}
		doc = append(doc,
			member{"baseOffset", jsonInt64(b.BaseOffset)},
			member{"lastOffsetDelta", jsonInt(b.LastOffsetDelta)},
			member{"partitionLeaderEpoch", jsonInt(b.PartitionLeaderEpoch)},
			member{"baseTimestamp", jsonInt64(b.BaseTimestamp)},
			member{"deleteHorizonMs", deleteHorizon},
			member{"isTransactional", jsonBool(b.IsTransactional)},
			member{"isControl", jsonBool(b.IsControl)},
			member{"producerId", jsonInt64(b.ProducerID)},
			member{"producerEpoch", jsonInt(b.ProducerEpoch)},
			member{"baseSequence", jsonInt(b.BaseSequence)},
			member{"lastSequence", jsonInt(b.LastSequence)},
			member{"recordsCount", jsonInt(b.RecordsCount)},
		)
	}
	records := make([]string, len(b.Records))
	for i := range b.Records {
		records[i] = recordDocument(&b.Records[i], omits).String()
	}
	doc = append(doc, member{"records", jsonArray(records)})
	return doc.without(omits)
}

// decodeDocument writes the whole document for data as the hook decoded it.
func decodeDocument(data []byte, mode string, decoded *Decoded) string {
	omits := map[string]bool{}
	for _, key := range Omits {
		omits[key] = true
	}
	outcome, errorDoc, tail := "ok", "null", "null"
	if e := decoded.Error; e != nil {
		message := "null"
		if e.Message != nil {
			message = jsonString(*e.Message)
		}
		outcome = "error"
		errorDoc = object{
			{"kafka_exception", jsonString(e.KafkaException)},
			{"message", message},
			{"batch_index", jsonInt(e.BatchIndex)},
			{"position", jsonInt(e.Position)},
		}.String()
	} else {
		// partial: bytes after the end of the last batch were left unread. A last batch of
		// a negative size (a length field of 0x80000000 or more, as the library gave it)
		// ends nowhere: no tail is made of it, and the kit shows the size it reported.
		start, end := int64(0), int64(0)
		if n := len(decoded.Batches); n > 0 {
			start = int64(decoded.Batches[n-1].Position)
			end = start + int64(decoded.Batches[n-1].SizeInBytes)
		}
		if start <= end && end < int64(len(data)) {
			outcome = "partial"
			tail = object{{"position", jsonInt(int(end))}, {"bytes", jsonInt(len(data) - int(end))}}.String()
		}
	}
	batches := make([]string, len(decoded.Batches))
	for i, b := range decoded.Batches {
		if b == nil {
			b = &Batch{}
		}
		batches[i] = batchDocument(b, omits).String()
	}
	return object{
		{"format", jsonString(format)},
		{"mode", jsonString(mode)},
		{"outcome", jsonString(outcome)},
		{"error", errorDoc},
		{"tail", tail},
		{"batches", jsonArray(batches)},
	}.String()
}

// capabilitiesDocument writes the hook's capability constants (docs/adapter-protocol.md).
func capabilitiesDocument() string {
	return object{
		{"name", jsonString(Name)},
		{"version", jsonString(Version)},
		{"magics", jsonInts(Magics)},
		{"codecs", jsonStrings(Codecs)},
		{"checks_crc", jsonBool(ChecksCRC)},
		{"error_semantics", jsonString(ErrorSemantics)},
		{"file_semantics", jsonBool(FileSemantics)},
		{"error_classes", jsonString(ErrorClasses)},
		{"omits", jsonStrings(Omits)},
		{"lists_failing_batch", jsonBool(ListsFailingBatch)},
		{"persistent", "true"},
		{"notes", jsonString(Notes)},
	}.String()
}

// ------------------------------------------------------------------------------ protocol

// decodeWithHook calls the hook and writes its document. A failure of the hook (an error it
// returns, or a panic) is returned as an error: it is a crash of the adapter, not a verdict.
func decodeWithHook(data []byte, mode string) (doc string, err error) {
	defer func() {
		if p := recover(); p != nil {
			// the stack first: the kit keeps only the end of stderr
			err = fmt.Errorf("%s\ndecode panicked: %v", debug.Stack(), p)
		}
	}()
	decoded, err := decode(data, mode)
	if err != nil {
		return "", err
	}
	if decoded == nil {
		return "", errors.New("decode returned neither a result nor an error")
	}
	return decodeDocument(data, mode, decoded), nil
}

// serve answers framed requests until EOF: 1 byte mode (0 memory, 1 file) + 4-byte
// big-endian length + the input; each answer is a 4-byte big-endian length + the document.
func serve(in io.Reader, out io.Writer) error {
	reader := bufio.NewReader(in)
	writer := bufio.NewWriter(out)
	var header [5]byte
	for {
		if _, err := io.ReadFull(reader, header[:1]); err == io.EOF {
			return nil // the runner closed stdin: done
		} else if err != nil {
			return err
		}
		if _, err := io.ReadFull(reader, header[1:]); err != nil {
			return fmt.Errorf("reading a request's length: %w", err)
		}
		if int(header[0]) >= len(modes) {
			return fmt.Errorf("unknown mode byte %d in a request", header[0])
		}
		data := make([]byte, binary.BigEndian.Uint32(header[1:]))
		if _, err := io.ReadFull(reader, data); err != nil {
			return fmt.Errorf("reading a request's %d bytes: %w", len(data), err)
		}
		doc, err := decodeWithHook(data, modes[header[0]])
		if err != nil {
			return err
		}
		var length [4]byte
		binary.BigEndian.PutUint32(length[:], uint32(len(doc)))
		writer.Write(length[:])
		writer.WriteString(doc)
		if err := writer.Flush(); err != nil {
			return err
		}
	}
}

func run(args []string) int {
	switch {
	case len(args) == 1 && args[0] == "capabilities":
		fmt.Println(capabilitiesDocument())
		return 0
	case len(args) == 3 && args[0] == "decode" && args[1] == "--as" &&
		(args[2] == modes[0] || args[2] == modes[1]):
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adapter: reading stdin:", err)
			return 1
		}
		doc, err := decodeWithHook(data, args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "adapter:", err)
			return 1
		}
		fmt.Println(doc)
		return 0
	case len(args) == 1 && args[0] == "serve":
		if err := serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "adapter:", err)
			return 1
		}
		return 0
	default:
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}
