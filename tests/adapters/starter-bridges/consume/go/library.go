// Test bridge for the Go consumer starter (tests/test_starter_sides.py): a replacement of the
// starter's hook (library.go) whose consume runs Kafka's own consumer as a subprocess,
// $STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT consume <the options>, and parses its R/E
// lines (format in tests/adapters/starter_bridge.py) into the starter's structures, so that
// the starter's protocol code (main.go) is what is tested.
package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

const Name = "go-consume-starter-bridge"
const Version = ""

var Magics = []int{0, 1, 2}
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

const ChecksCRC = true
const ErrorSemantics = "streaming"
const ErrorClasses = "class"

var Omits any = []string{}

const Notes = ""

// fields reads the space-separated fields of one line, panicking on a malformed one (a
// panic is reported as a crash of the adapter, which is what a broken bridge should be).
type fields []string

func (f fields) int64(i int) int64 {
	n, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// bytes decodes hex bytes: "-" is nil (null), "~" is empty.
func (f fields) bytes(i int) []byte {
	switch f[i] {
	case "-":
		return nil
	case "~":
		return []byte{}
	}
	data, err := hex.DecodeString(f[i])
	if err != nil {
		panic(err)
	}
	return data
}

// text decodes a hex UTF-8 string: "-" is nil (null).
func (f fields) text(i int) *string {
	data := f.bytes(i)
	if data == nil {
		return nil
	}
	s := string(data)
	return &s
}

func consume(options Options) (*Consumed, error) {
	cmd := exec.Command(os.Getenv("STARTER_BRIDGE_PYTHON"), os.Getenv("STARTER_BRIDGE_SCRIPT"),
		"consume", "--bootstrap", options.Bootstrap, "--topic", options.Topic,
		"--partition", strconv.Itoa(int(options.Partition)), "--from", options.Start,
		"--isolation", options.Isolation, "--timeout-ms", strconv.Itoa(options.TimeoutMs))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("Kafka's consumer: %w", err)
	}
	consumed := &Consumed{}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := fields(strings.Split(line, " "))
		switch f[0] {
		case "":
			continue
		case "R":
			record := Record{Offset: f.int64(1), Timestamp: f.int64(2), TimestampType: f[3],
				Key: f.bytes(4), Value: f.bytes(5)}
			for i := 0; i < int(f.int64(6)); i++ {
				record.Headers = append(record.Headers, Header{*f.text(7 + 2*i), f.bytes(8 + 2*i)})
			}
			consumed.Records = append(consumed.Records, record)
		case "E":
			consumed.Error = &Error{*f.text(1), f.text(2)}
		default:
			return nil, fmt.Errorf("Kafka's consumer: unexpected line %q", line)
		}
	}
	return consumed, nil
}
