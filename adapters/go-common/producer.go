// The producer side of the protocol (docs/adapter-protocol.md, "Producer side: `produce` and
// `encode`") as the Go producer adapters share it: the plan (kafka-conformance/produce-plan/1),
// the result document (kafka-conformance/produce-result/1) with a watchdog that bounds a
// `produce` run, and the command dispatch (RunProducer).

package adaptercommon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// The formats of the plan an adapter reads and of the result document it prints.
const (
	PlanFormat   = "kafka-conformance/produce-plan/1"
	ResultFormat = "kafka-conformance/produce-result/1"
)

// Plan is a produce plan. Key, Value and header values are decoded from base64; JSON null is a
// nil slice, "" an empty non-nil one.
type Plan struct {
	Format     string       `json:"format"`
	Scenario   string       `json:"scenario"`
	Topic      string       `json:"topic"`
	Partitions int          `json:"partitions"`
	Settings   PlanSettings `json:"settings"`
	Records    []PlanRecord `json:"records"`
	Batch      *PlanBatch   `json:"batch"`
}

// PlanSettings are the producer settings of a plan.
type PlanSettings struct {
	Codec          string           `json:"codec"`
	Idempotence    bool             `json:"idempotence"`
	Acks           int              `json:"acks"`
	LingerMs       int64            `json:"linger_ms"`
	BatchSize      int64            `json:"batch_size"`
	MaxRequestSize int64            `json:"max_request_size"`
	Transaction    *PlanTransaction `json:"transaction"`
	TimeoutMs      int64            `json:"timeout_ms"`
}

// PlanTransaction is a plan's transaction: its transactional id and how it ends ("commit" or
// "abort").
type PlanTransaction struct {
	ID  string `json:"id"`
	End string `json:"end"`
}

// PlanHeader is a record header; Value nil is a null header value.
type PlanHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// PlanRecord is one record of a plan; a nil Timestamp or Partition lets the library choose.
type PlanRecord struct {
	Key       []byte       `json:"key"`
	Value     []byte       `json:"value"`
	Headers   []PlanHeader `json:"headers"`
	Timestamp *int64       `json:"timestamp"`
	Partition *int32       `json:"partition"`
}

// PlanBatch is the batch header an `encode` plan asks for.
type PlanBatch struct {
	Magic                int8  `json:"magic"`
	BaseOffset           int64 `json:"base_offset"`
	ProducerID           int64 `json:"producer_id"`
	ProducerEpoch        int16 `json:"producer_epoch"`
	BaseSequence         int32 `json:"base_sequence"`
	Transactional        bool  `json:"transactional"`
	PartitionLeaderEpoch int32 `json:"partition_leader_epoch"`
}

// Timeout is settings.timeout_ms as a duration (30 s when the plan gives none).
func (p *Plan) Timeout() time.Duration {
	if p.Settings.TimeoutMs <= 0 {
		return 30 * time.Second
	}
	return time.Duration(p.Settings.TimeoutMs) * time.Millisecond
}

// ReadPlan reads and checks the plan file at path.
func ReadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	if p.Format != PlanFormat {
		return nil, fmt.Errorf("plan %s: format %q, expected %q", path, p.Format, PlanFormat)
	}
	return &p, nil
}

// RecordResult is one record's entry of the result document.
type RecordResult struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	Error     *string `json:"error"`
}

// Recorder collects the outcome of a `produce` run, safely from the library's callbacks; its
// Document is printed once, by the run or by the watchdog, whichever comes first.
type Recorder struct {
	mu      sync.Mutex
	records []RecordResult
	set     []bool
	err     *string
	printed bool
}

// NewRecorder is the recorder of a plan of n records, none reported yet.
func NewRecorder(n int) *Recorder {
	return &Recorder{records: make([]RecordResult, n), set: make([]bool, n)}
}

// Ack records that record i was acknowledged at partition and offset.
func (r *Recorder) Ack(i int, partition int32, offset int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 || i >= len(r.records) || r.set[i] {
		fmt.Fprintf(os.Stderr, "adapter: a second or unknown result for record %d ignored\n", i)
		return
	}
	r.records[i] = RecordResult{Partition: &partition, Offset: &offset}
	r.set[i] = true
}

// Fail records that record i failed with message (partition and offset nil: none reported).
func (r *Recorder) Fail(i int, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 || i >= len(r.records) || r.set[i] {
		fmt.Fprintf(os.Stderr, "adapter: a second or unknown result for record %d ignored: %s\n",
			i, message)
		return
	}
	r.records[i] = RecordResult{Error: &message}
	r.set[i] = true
}

// FailRest fails every record without a result yet with message.
func (r *Recorder) FailRest(message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.records {
		if !r.set[i] {
			m := message
			r.records[i] = RecordResult{Error: &m}
			r.set[i] = true
		}
	}
}

// SetError records a failure outside any record (the first one is kept; later ones go to
// stderr).
func (r *Recorder) SetError(message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		fmt.Fprintln(os.Stderr, "adapter: a further error:", message)
		return
	}
	r.err = &message
}

// Pending is the number of records without a result yet.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.set {
		if !s {
			n++
		}
	}
	return n
}

// print writes the result document once (records still without a result get unfinished as
// their error) and reports whether this call wrote it.
func (r *Recorder) print(unfinished string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.printed {
		return false
	}
	r.printed = true
	recs := make([]RecordResult, len(r.records))
	for i, rr := range r.records {
		if !r.set[i] {
			m := unfinished
			rr = RecordResult{Error: &m}
		}
		recs[i] = rr
	}
	doc := map[string]any{"format": ResultFormat, "records": recs, "error": r.err}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintln(os.Stderr, "adapter: encoding:", err)
		os.Exit(1)
	}
	os.Stdout.Write(buf.Bytes())
	return true
}

// WatchdogGrace is how long after settings.timeout_ms a `produce` run is cut short: the
// document is printed with what the library reported so far and the process exits 0.
const WatchdogGrace = 10 * time.Second

// ProduceFunc sends plan with the library to bootstrap, reporting into rec; it returns when the
// library is done (closed) or gave up.
type ProduceFunc func(bootstrap string, plan *Plan, rec *Recorder)

// EncodeFunc is the batch the library builds from plan, or why it refuses the plan.
type EncodeFunc func(plan *Plan) ([]byte, error)

// ErrUsage is returned by ParseProducerArgs for a command line it does not know.
var ErrUsage = errors.New("usage: producer capabilities | produce --bootstrap HOST:PORT --plan FILE | encode --plan FILE")

// RunProducer is a producer adapter's main: `capabilities` prints capabilities(), `produce
// --bootstrap H:P --plan F` runs produce under a watchdog (settings.timeout_ms +
// WatchdogGrace) and prints the result document, `encode --plan F` writes encode's bytes to
// stdout (exit 1 with the reason on stderr when the library refuses). encode may be nil (no
// `encode` side). A usage error or an unreadable plan exits 2.
func RunProducer(capabilities func() Obj, produce ProduceFunc, encode EncodeFunc) {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "capabilities" {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(capabilities()); err != nil {
			fmt.Fprintln(os.Stderr, "adapter: encoding:", err)
			os.Exit(1)
		}
		os.Stdout.Write(buf.Bytes())
		return
	}
	if len(args) == 0 || (args[0] != "produce" && args[0] != "encode") ||
		(args[0] == "encode" && encode == nil) {
		fmt.Fprintln(os.Stderr, ErrUsage)
		os.Exit(2)
	}
	flags := map[string]string{}
	for i := 1; i < len(args); i += 2 {
		if i+1 >= len(args) || (args[i] != "--bootstrap" && args[i] != "--plan") {
			fmt.Fprintln(os.Stderr, ErrUsage)
			os.Exit(2)
		}
		flags[args[i]] = args[i+1]
	}
	if flags["--plan"] == "" || (args[0] == "produce" && flags["--bootstrap"] == "") {
		fmt.Fprintln(os.Stderr, ErrUsage)
		os.Exit(2)
	}
	plan, err := ReadPlan(flags["--plan"])
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		os.Exit(2)
	}
	if args[0] == "encode" {
		out, err := encode(plan)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adapter: encode refused:", err)
			os.Exit(1)
		}
		os.Stdout.Write(out)
		return
	}
	rec := NewRecorder(len(plan.Records))
	limit := plan.Timeout() + WatchdogGrace
	timer := time.AfterFunc(limit, func() {
		msg := fmt.Sprintf("adapter: no result from the library within timeout_ms + %s",
			WatchdogGrace)
		fmt.Fprintln(os.Stderr, msg, "(watchdog: printing what was reported and exiting)")
		if rec.print(msg) {
			os.Exit(0)
		}
	})
	func() {
		defer func() {
			if p := recover(); p != nil {
				rec.SetError(fmt.Sprintf("adapter: the library panicked: %v", p))
			}
		}()
		produce(flags["--bootstrap"], plan, rec)
	}()
	timer.Stop()
	rec.print("adapter: the library reported no result for this record")
}
