// A kafka-conformance consumer adapter for a Go Kafka client library: the protocol side.
//
// This file speaks the adapter protocol's consumer side (docs/adapter-protocol.md of
// kafka-conformance, "The consumer side") and writes the consume document. You should not
// need to edit it: run your library's consumer in library.go (the hook) and declare its
// capabilities there; consumed.go holds the structures the hook fills.
//
// Build: go build -o adapter .     (Go 1.21 or later, standard library only)
// Run:   ./adapter capabilities
//
//	./adapter consume --bootstrap 127.0.0.1:9092 --topic T --partition 0 \
//	    --from earliest --isolation read_uncommitted --timeout-ms 10000
//
// Check: kafka-conformance check --side consume --cmd "/abs/path/adapter"
//
// Exit codes: 0 with one document on stdout (also when the consumer reported an error: that
// is a verdict); 2 for a usage error; 3 when the hook failed (an error it returned, or a panic:
// a crash of the library is no verdict). A panic in a goroutine the library started cannot be
// recovered here: Go itself then exits 2 with the stack on stderr, and prints no document.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// format is the contract id of the document this adapter prints.
const format = "kafka-conformance/consume/1"

const usage = `usage: adapter capabilities
       adapter consume --bootstrap HOST:PORT --topic T --partition N --from earliest|OFFSET
                       --isolation read_uncommitted|read_committed --timeout-ms N [--group G]
`

// requiredFlags are the consume options every command line must have (--group is optional).
var requiredFlags = []string{"--bootstrap", "--topic", "--partition", "--from", "--isolation", "--timeout-ms"}

var isolations = []string{"read_uncommitted", "read_committed"}

// readOptions reads the consume command line (the arguments after "consume") as Options;
// an error is a usage error.
func readOptions(args []string) (Options, error) {
	var o Options
	seen := map[string]bool{}
	for i := 0; i < len(args); i += 2 {
		flag := args[i]
		if i+1 >= len(args) {
			return o, fmt.Errorf("unknown option or missing value: %s", flag)
		}
		value := args[i+1]
		var err error
		switch flag {
		case "--bootstrap":
			o.Bootstrap = value
		case "--topic":
			o.Topic = value
		case "--partition":
			var n int64
			n, err = strconv.ParseInt(value, 10, 32)
			o.Partition = int32(n)
		case "--from":
			o.Start = value
		case "--isolation":
			o.Isolation = value
		case "--timeout-ms":
			o.TimeoutMs, err = strconv.Atoi(value)
		case "--group":
			o.Group = &value
		default:
			return o, fmt.Errorf("unknown option or missing value: %s", flag)
		}
		if err != nil {
			return o, fmt.Errorf("%s: not a number: %q", flag, value)
		}
		seen[flag] = true
	}
	var missing []string
	for _, flag := range requiredFlags {
		if !seen[flag] {
			missing = append(missing, flag)
		}
	}
	if len(missing) > 0 {
		return o, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if !slices.Contains(isolations, o.Isolation) {
		return o, fmt.Errorf("--isolation: one of %s", strings.Join(isolations, ", "))
	}
	return o, nil
}

// ------------------------------------------------------------------------ the documents

type headerDocument struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type recordDocument struct {
	Offset        string           `json:"offset"`    // decimal strings, as the contract
	Timestamp     string           `json:"timestamp"` // requires for 64-bit values
	TimestampType string           `json:"timestampType"`
	Key           *string          `json:"key"`
	Value         *string          `json:"value"`
	Headers       []headerDocument `json:"headers"`
}

type errorDocument struct {
	Class   string  `json:"class"`
	Message *string `json:"message"`
}

type consumeDocument struct {
	Format  string           `json:"format"`
	Records []recordDocument `json:"records"`
	Error   *errorDocument   `json:"error"`
}

// base64Bytes writes bytes as standard base64 with padding; nil stays null, []byte{} is "".
func base64Bytes(data []byte) *string {
	if data == nil {
		return nil
	}
	text := base64.StdEncoding.EncodeToString(data)
	return &text
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

// consumedDocument writes the consume document (contract format) of what the hook returned.
func consumedDocument(out *Consumed) ([]byte, error) {
	doc := consumeDocument{Format: format, Records: []recordDocument{}}
	for _, r := range out.Records {
		if !slices.Contains(TimestampTypes, r.TimestampType) {
			return nil, fmt.Errorf("record at offset %d: TimestampType %q: one of %s",
				r.Offset, r.TimestampType, strings.Join(TimestampTypes, ", "))
		}
		headers := []headerDocument{}
		for _, h := range r.Headers {
			headers = append(headers, headerDocument{h.Key, base64Bytes(h.Value)})
		}
		doc.Records = append(doc.Records, recordDocument{
			Offset:        strconv.FormatInt(r.Offset, 10),
			Timestamp:     strconv.FormatInt(r.Timestamp, 10),
			TimestampType: r.TimestampType,
			Key:           base64Bytes(r.Key),
			Value:         base64Bytes(r.Value),
			Headers:       headers,
		})
	}
	if out.Error != nil {
		doc.Error = &errorDocument{out.Error.Class, out.Error.Message}
	}
	return writeJSON(doc)
}

// capabilitiesDocument writes the consumer side's capabilities (docs/adapter-protocol.md,
// "Capabilities") from the hook's constants.
func capabilitiesDocument() ([]byte, error) {
	return writeJSON(struct {
		Name           string   `json:"name"`
		Version        string   `json:"version"`
		Magics         []int    `json:"magics"`
		Codecs         []string `json:"codecs"`
		ChecksCRC      bool     `json:"checks_crc"`
		ErrorSemantics string   `json:"error_semantics"`
		ErrorClasses   string   `json:"error_classes"`
		Omits          any      `json:"omits"`
		Notes          string   `json:"notes"`
	}{Name, Version, Magics, Codecs, ChecksCRC, ErrorSemantics, ErrorClasses, Omits, Notes})
}

// ------------------------------------------------------------------------------ protocol

// consumeWithHook calls the hook and writes its document. A failure of the hook (an error it
// returns, or a panic) is returned as an error: it is a crash of the adapter, not a verdict.
func consumeWithHook(options Options) (doc []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			// the stack first: the kit keeps only the end of stderr
			err = fmt.Errorf("%s\nconsume panicked: %v", debug.Stack(), p)
		}
	}()
	consumed, err := consume(options)
	if err != nil {
		return nil, err
	}
	if consumed == nil {
		return nil, errors.New("consume returned neither a result nor an error")
	}
	return consumedDocument(consumed)
}

func run(args []string) int {
	command := ""
	if len(args) > 0 {
		command = args[0]
	}
	var doc []byte
	var err error
	switch {
	case command == "capabilities" && len(args) == 1:
		doc, err = capabilitiesDocument()
	case command == "consume":
		var options Options
		if options, err = readOptions(args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "adapter: %v\n%s", err, usage)
			return 2
		}
		doc, err = consumeWithHook(options)
	default:
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		return 3
	}
	if _, err := os.Stdout.Write(doc); err != nil {
		fmt.Fprintln(os.Stderr, "adapter: writing stdout:", err)
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Args[1:]))
}
