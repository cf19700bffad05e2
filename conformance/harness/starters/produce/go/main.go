// A kafka-conformance producer adapter for a Go Kafka client library: the protocol side.
//
// This file speaks the adapter protocol's producer side (docs/adapter-protocol.md of
// kafka-conformance, "Producer side"): it reads the plan, calls the hook and writes the
// produce-result document, or the encoded batch. You should not need to edit it: call your
// library in library.go (the hook) and declare its capabilities there; plan.go holds the
// structures and reads the plan.
//
// Build: go build -o adapter .     (Go 1.21 or later, standard library only)
// Run:   ./adapter capabilities
//
//	./adapter produce --bootstrap 127.0.0.1:9092 --plan sample-plan.json
//	./adapter encode --plan sample-plan.json > batch.bin
//
// Check: kafka-conformance check-producer --cmd "/abs/path/adapter"
//
// Exit codes: 0 with the document (produce; also when records failed: that is a verdict) or
// the batch's bytes (encode) on stdout; 2 for a usage error or a plan that cannot be read; 3
// when the hook failed (an error it returned, or a panic: a crash of the library is no
// verdict; encode: the library refused the plan). A panic in a goroutine the library started
// cannot be recovered here: Go itself then exits 2 with the stack on stderr, and prints
// nothing on stdout.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// resultFormat is the contract id of the document `produce` prints.
const resultFormat = "kafka-conformance/produce-result/1"

const usage = `usage: adapter capabilities
       adapter produce --bootstrap HOST:PORT --plan FILE
       adapter encode --plan FILE
`

// ------------------------------------------------------------------------ capabilities

// ProduceCapabilities is the `produce` object of the capabilities: what the library's
// producer does (docs/adapter-protocol.md, "Producer side"; library.go says what each means).
type ProduceCapabilities struct {
	Codecs       []string         `json:"codecs"`
	Idempotence  bool             `json:"idempotence"`
	Transactions bool             `json:"transactions"`
	Headers      bool             `json:"headers"`
	Magics       []int            `json:"magics"`
	Partitioner  string           `json:"partitioner"`
	Defaults     ProducerDefaults `json:"defaults"`
	// Batching: how a plan group becomes one batch ("call", "linger", "none"); "" leaves it
	// out (the kit then assumes "linger")
	Batching string `json:"batching,omitempty"`
	Notes    string `json:"notes"`
}

// NoSetting as ProducerDefaults.LingerMs or BatchSize: the library has no such setting (the
// capabilities say "none").
const NoSetting = -1

// ProducerDefaults are the producer's real defaults.
type ProducerDefaults struct {
	Idempotence bool `json:"idempotence"`
	Acks        int  `json:"acks"`
	LingerMs    int  `json:"linger_ms"`
	BatchSize   int  `json:"batch_size"`
}

// MarshalJSON writes the defaults, NoSetting as "none".
func (d ProducerDefaults) MarshalJSON() ([]byte, error) {
	setting := func(v int) any {
		if v == NoSetting {
			return "none"
		}
		return v
	}
	return json.Marshal(struct {
		Idempotence bool `json:"idempotence"`
		Acks        int  `json:"acks"`
		LingerMs    any  `json:"linger_ms"`
		BatchSize   any  `json:"batch_size"`
	}{d.Idempotence, d.Acks, setting(d.LingerMs), setting(d.BatchSize)})
}

// EncodeCapabilities is the `encode` object of the capabilities: what the library's batch
// builder does.
type EncodeCapabilities struct {
	Codecs       []string `json:"codecs"`
	Idempotence  bool     `json:"idempotence"`
	Transactions bool     `json:"transactions"`
	Headers      bool     `json:"headers"`
	Magics       []int    `json:"magics"`
	Notes        string   `json:"notes"`
}

// capabilitiesDocument writes the producer side's capabilities: a `produce` and an `encode`
// object, either left out when the hook sets it to nil (that side is not offered).
func capabilitiesDocument() ([]byte, error) {
	return writeJSON(struct {
		Name    string               `json:"name"`
		Version string               `json:"version"`
		Produce *ProduceCapabilities `json:"produce,omitempty"`
		Encode  *EncodeCapabilities  `json:"encode,omitempty"`
	}{Name, Version, Produce, Encode})
}

// ---------------------------------------------------------------------------- documents

type deliveryDocument struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	Error     *string `json:"error"`
}

type resultDocument struct {
	Format  string             `json:"format"`
	Records []deliveryDocument `json:"records"`
	Error   *string            `json:"error"`
}

// writeJSON writes doc as one line of JSON (UTF-8, no HTML escaping).
func writeJSON(doc any) ([]byte, error) {
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// producedDocument writes the produce-result document: one entry per plan record.
func producedDocument(out *Produced, plan *Plan) ([]byte, error) {
	if len(out.Records) != len(plan.Records) {
		return nil, fmt.Errorf("the hook reported %d records for a plan of %d",
			len(out.Records), len(plan.Records))
	}
	doc := resultDocument{Format: resultFormat, Records: []deliveryDocument{}, Error: out.Error}
	for _, d := range out.Records {
		doc.Records = append(doc.Records, deliveryDocument{d.Partition, d.Offset, d.Error})
	}
	return writeJSON(doc)
}

// ------------------------------------------------------------------------------ protocol

// readArguments reads `--flag value` pairs: exactly the flags needed (an error is a usage
// error).
func readArguments(args []string, needed ...string) (map[string]string, error) {
	values := map[string]string{}
	for i := 0; i < len(args); i += 2 {
		if !slices.Contains(needed, args[i]) || i+1 >= len(args) {
			return nil, fmt.Errorf("unknown option or missing value: %s", args[i])
		}
		values[args[i]] = args[i+1]
	}
	var missing []string
	for _, flag := range needed {
		if _, ok := values[flag]; !ok {
			missing = append(missing, flag)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return values, nil
}

func readPlanFile(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		var plan *Plan
		if plan, err = readPlan(data); err == nil {
			return plan, nil
		}
	}
	return nil, fmt.Errorf("%s: cannot read the plan: %w", path, err)
}

// withHook runs call (the hook and the writing of its answer). A failure of the hook (an
// error it returns, or a panic) is returned as an error: it is a crash of the adapter, not a
// verdict.
func withHook(call func() ([]byte, error)) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			// the stack first: the kit keeps only the end of stderr
			err = fmt.Errorf("%s\nthe hook panicked: %v", debug.Stack(), p)
		}
	}()
	return call()
}

func run(args []string) int {
	command := ""
	if len(args) > 0 {
		command = args[0]
	}
	var needed []string
	switch command {
	case "capabilities":
	case "produce":
		needed = []string{"--bootstrap", "--plan"}
	case "encode":
		needed = []string{"--plan"}
	default:
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	values, err := readArguments(args[1:], needed...)
	var plan *Plan
	if path, ok := values["--plan"]; ok && err == nil {
		plan, err = readPlanFile(path)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "adapter: %v\n%s", err, usage)
		return 2
	}
	out, err := withHook(func() ([]byte, error) {
		switch command {
		case "capabilities":
			return capabilitiesDocument()
		case "produce":
			produced, err := produce(values["--bootstrap"], plan)
			if err == nil && produced == nil {
				err = errors.New("produce returned neither a result nor an error")
			}
			if err != nil {
				return nil, err
			}
			return producedDocument(produced, plan)
		default:
			batch, err := encode(plan)
			if err == nil && batch == nil {
				err = errors.New("encode returned neither a batch nor an error")
			}
			return batch, err
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		return 3
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, "adapter: writing stdout:", err)
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Args[1:]))
}
