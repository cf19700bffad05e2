// The plan the kit hands a producer adapter, and what the hook returns.
//
// readPlan turns the plan document (contract kafka-conformance/produce-plan/1,
// docs/adapter-protocol.md of kafka-conformance, "Producer side") into the structures below;
// main.go writes Produced as the produce-result document. sample-plan.json is a plan to try
// the adapter on by hand.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// PlanFormat is the contract id of the plan document.
const PlanFormat = "kafka-conformance/produce-plan/1"

// Header is one record header.
type Header struct {
	Key   string
	Value []byte // nil: a null value; []byte{}: an empty value
}

// PlanRecord is one record to send, in plan order.
type PlanRecord struct {
	Key       []byte // nil: a null key; []byte{}: an empty key
	Value     []byte // nil: a null value; []byte{}: an empty value
	Headers   []Header
	Timestamp *int64 // milliseconds; nil: let the library choose (its clock)
	Partition *int32 // nil: the library's partitioner chooses
}

// Transaction says to send every record inside one transaction, then end it.
type Transaction struct {
	ID  string // the transactional.id
	End string // "commit" or "abort": how the transaction ends after every record is sent
}

// Settings are the producer's settings for the plan.
type Settings struct {
	Codec          string // compression type: none, gzip, snappy, lz4, zstd
	Idempotence    bool   // enable.idempotence
	Acks           int    // -1 (all), 0 or 1
	LingerMs       int
	BatchSize      int          // bytes
	MaxRequestSize int          // bytes
	Transaction    *Transaction // nil: no transaction
	TimeoutMs      int          // the budget for the whole plan (delivery and request timeouts, flush)
}

// BatchFields are the header fields of the one batch to build (encode only).
type BatchFields struct {
	Magic                int
	BaseOffset           int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	Transactional        bool
	PartitionLeaderEpoch int32
}

// Plan is the whole plan.
type Plan struct {
	Scenario   string
	Topic      string // created by the kit before the adapter runs
	Partitions int
	Settings   Settings
	Records    []PlanRecord
	Batch      *BatchFields // encode plans only (nil otherwise)
	// Groups: runs of Records to send as one batch each (the library's batch call, or back to
	// back for its linger to gather); empty when the plan has none
	Groups []Group
}

// Group is a run of plan records, Records[First : First+Count], to send as one batch.
type Group struct {
	First, Count int
}

// Delivery is what the library reported for one plan record: the partition and offset it was
// written at (nil: not reported), and its error text (nil: acknowledged).
type Delivery struct {
	Partition *int32
	Offset    *int64
	Error     *string
}

// Produced is one Delivery per plan record, in plan order, and a failure outside any record
// (the producer could not start, the transaction could not commit), else nil.
type Produced struct {
	Records []Delivery
	Error   *string
}

// ---------------------------------------------------------------------- reading the plan

// planReader keeps the first problem met while reading the plan, so that each read below
// stays one line; the problem names the value's path (e.g. records[2].headers[0].value).
type planReader struct{ err error }

func (r *planReader) fail(path, problem string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s", path, fmt.Sprintf(problem, args...))
	}
}

// jsonObject is one object of the plan document (nil members if it is not one: the reader
// then holds the problem, and every read gives a zero value).
type jsonObject struct {
	r       *planReader
	path    string // "" for the document, else the object's path and a dot
	members map[string]any
}

func (r *planReader) object(v any, path string) jsonObject {
	members, ok := v.(map[string]any)
	if !ok {
		r.fail(path, "not an object: %v", v)
		return jsonObject{r: r}
	}
	if path != "" {
		path += "."
	}
	return jsonObject{r, path, members}
}

// get is the member key; missing is a problem, null is nil.
func (o jsonObject) get(key string) any {
	v, ok := o.members[key]
	if !ok {
		o.r.fail(o.path+key, "missing")
	}
	return v
}

func (o jsonObject) text(key string) string {
	s, ok := o.get(key).(string)
	if !ok {
		o.r.fail(o.path+key, "not a string: %v", o.members[key])
	}
	return s
}

func (o jsonObject) boolean(key string) bool {
	b, ok := o.get(key).(bool)
	if !ok {
		o.r.fail(o.path+key, "not true or false: %v", o.members[key])
	}
	return b
}

// integer reads a number that is an integer of the given bit size.
func (o jsonObject) integer(key string, bits int) int64 {
	number, ok := o.get(key).(json.Number)
	n, err := strconv.ParseInt(string(number), 10, bits)
	if !ok || err != nil {
		o.r.fail(o.path+key, "not a %d-bit integer: %v", bits, o.members[key])
	}
	return n
}

// nullableInteger is integer, or nil for null.
func (o jsonObject) nullableInteger(key string, bits int) *int64 {
	if o.get(key) == nil {
		return nil
	}
	n := o.integer(key, bits)
	return &n
}

// data reads standard base64 with padding, or null (nil).
func (o jsonObject) data(key string) []byte {
	if o.get(key) == nil {
		return nil
	}
	decoded, err := base64.StdEncoding.Strict().DecodeString(o.text(key))
	if err != nil {
		o.r.fail(o.path+key, "not base64: %v", err)
	}
	return decoded
}

// objects reads an array of objects.
func (o jsonObject) objects(key string) []jsonObject {
	array, ok := o.get(key).([]any)
	if !ok {
		o.r.fail(o.path+key, "not an array: %v", o.members[key])
	}
	objects := make([]jsonObject, len(array))
	for i, v := range array {
		objects[i] = o.r.object(v, fmt.Sprintf("%s%s[%d]", o.path, key, i))
	}
	return objects
}

// optional is the member key as an object, or ok false if it is missing or null.
func (o jsonObject) optional(key string) (object jsonObject, ok bool) {
	v := o.members[key]
	if v == nil {
		return jsonObject{}, false
	}
	return o.r.object(v, o.path+key), true
}

// readPlan reads the plan document (an error if it is not one).
func readPlan(document []byte) (*Plan, error) {
	decoder := json.NewDecoder(bytes.NewReader(document))
	decoder.UseNumber() // 64-bit integers stay exact
	var root any
	if err := decoder.Decode(&root); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	if _, ok := root.(map[string]any); !ok {
		return nil, fmt.Errorf("not a plan: not a JSON object")
	}
	r := &planReader{}
	doc := r.object(root, "")
	if doc.members["format"] != PlanFormat {
		return nil, fmt.Errorf("not a plan: format %v, expected %s", doc.members["format"], PlanFormat)
	}
	s := r.object(doc.get("settings"), "settings")
	plan := &Plan{
		Scenario:   doc.text("scenario"),
		Topic:      doc.text("topic"),
		Partitions: int(doc.integer("partitions", 32)),
		Settings: Settings{
			Codec:          s.text("codec"),
			Idempotence:    s.boolean("idempotence"),
			Acks:           int(s.integer("acks", 32)),
			LingerMs:       int(s.integer("linger_ms", 32)),
			BatchSize:      int(s.integer("batch_size", 32)),
			MaxRequestSize: int(s.integer("max_request_size", 32)),
			TimeoutMs:      int(s.integer("timeout_ms", 32)),
		},
	}
	if t, ok := s.optional("transaction"); ok {
		plan.Settings.Transaction = &Transaction{ID: t.text("id"), End: t.text("end")}
	}
	for _, o := range doc.objects("records") {
		record := PlanRecord{Key: o.data("key"), Value: o.data("value"), Headers: []Header{}}
		record.Timestamp = o.nullableInteger("timestamp", 64)
		if p := o.nullableInteger("partition", 32); p != nil {
			partition := int32(*p)
			record.Partition = &partition
		}
		for _, h := range o.objects("headers") {
			record.Headers = append(record.Headers, Header{h.text("key"), h.data("value")})
		}
		plan.Records = append(plan.Records, record)
	}
	if _, ok := doc.members["groups"]; ok {
		for _, g := range doc.objects("groups") {
			plan.Groups = append(plan.Groups, Group{int(g.integer("first", 32)), int(g.integer("count", 32))})
		}
	}
	if b, ok := doc.optional("batch"); ok {
		plan.Batch = &BatchFields{
			Magic:                int(b.integer("magic", 8)),
			BaseOffset:           b.integer("base_offset", 64),
			ProducerID:           b.integer("producer_id", 64),
			ProducerEpoch:        int16(b.integer("producer_epoch", 16)),
			BaseSequence:         int32(b.integer("base_sequence", 32)),
			Transactional:        b.boolean("transactional"),
			PartitionLeaderEpoch: int32(b.integer("partition_leader_epoch", 32)),
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return plan, nil
}
