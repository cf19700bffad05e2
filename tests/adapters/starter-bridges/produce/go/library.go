// Test bridge for the Go producer starter (tests/test_starter_sides.py): a replacement of the
// starter's hook (library.go) that writes the plan the starter read back as lines to Kafka's
// own producer and batch builder ($STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT produce|encode,
// line format in tests/adapters/starter_bridge.py) and fills the starter's structures from the
// answer, so that the starter's protocol code (the plan it reads, the document it writes) is
// what is tested.
package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

const Name = "go-produce-starter-bridge"
const Version = ""

var Produce = &ProduceCapabilities{
	Codecs:       []string{"none", "gzip", "snappy", "lz4", "zstd"},
	Idempotence:  true,
	Transactions: true,
	Headers:      true,
	Magics:       []int{2},
	Partitioner:  "java",
	Defaults:     ProducerDefaults{Idempotence: true, Acks: -1, LingerMs: 5, BatchSize: 16384},
}

var Encode = &EncodeCapabilities{
	Codecs:       []string{"none", "gzip", "snappy", "lz4", "zstd"},
	Idempotence:  true,
	Transactions: true,
	Headers:      true,
	Magics:       []int{2},
}

// hexBytes writes bytes as hex: nil is "-", empty is "~".
func hexBytes(data []byte) string {
	switch {
	case data == nil:
		return "-"
	case len(data) == 0:
		return "~"
	}
	return hex.EncodeToString(data)
}

func hexText(text string) string { return hexBytes([]byte(text)) }

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// lines writes the plan as the bridge's P/S/R/B lines.
func lines(plan *Plan) string {
	var b strings.Builder
	s := plan.Settings
	fmt.Fprintf(&b, "P %s %s %d\n", hexText(plan.Scenario), hexText(plan.Topic), plan.Partitions)
	id, end := "-", "-"
	if t := s.Transaction; t != nil {
		id, end = hexText(t.ID), t.End
	}
	fmt.Fprintf(&b, "S %s %s %d %d %d %d %d %s %s\n", s.Codec, flag(s.Idempotence), s.Acks,
		s.LingerMs, s.BatchSize, s.MaxRequestSize, s.TimeoutMs, id, end)
	for _, r := range plan.Records {
		timestamp, partition := "-", "-"
		if r.Timestamp != nil {
			timestamp = strconv.FormatInt(*r.Timestamp, 10)
		}
		if r.Partition != nil {
			partition = strconv.Itoa(int(*r.Partition))
		}
		fmt.Fprintf(&b, "R %s %s %s %s %d", hexBytes(r.Key), hexBytes(r.Value), timestamp,
			partition, len(r.Headers))
		for _, h := range r.Headers {
			fmt.Fprintf(&b, " %s %s", hexText(h.Key), hexBytes(h.Value))
		}
		b.WriteByte('\n')
	}
	if t := plan.Batch; t != nil {
		fmt.Fprintf(&b, "B %d %d %d %d %d %s %d\n", t.Magic, t.BaseOffset, t.ProducerID,
			t.ProducerEpoch, t.BaseSequence, flag(t.Transactional), t.PartitionLeaderEpoch)
	}
	return b.String()
}

// bridge runs the bridge script with the plan's lines on stdin and returns its lines, split
// into fields; a failing script is an error (no verdict).
func bridge(plan *Plan, args ...string) ([][]string, error) {
	cmd := exec.Command(os.Getenv("STARTER_BRIDGE_PYTHON"),
		append([]string{os.Getenv("STARTER_BRIDGE_SCRIPT")}, args...)...)
	cmd.Stdin = strings.NewReader(lines(plan))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("Kafka's producer (%s): %w", args[0], err)
	}
	var result [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if line != "" {
			result = append(result, strings.Split(line, " "))
		}
	}
	return result, nil
}

// fromHex decodes hex: "-" is nil, "~" is empty; panics on a malformed field (a panic is
// reported as a crash of the adapter, which is what a broken bridge should be).
func fromHex(field string) []byte {
	switch field {
	case "-":
		return nil
	case "~":
		return []byte{}
	}
	data, err := hex.DecodeString(field)
	if err != nil {
		panic(err)
	}
	return data
}

func textOf(field string) *string {
	data := fromHex(field)
	if data == nil {
		return nil
	}
	text := string(data)
	return &text
}

func number(field string, bits int) *int64 {
	if field == "-" {
		return nil
	}
	n, err := strconv.ParseInt(field, 10, bits)
	if err != nil {
		panic(err)
	}
	return &n
}

func produce(bootstrap string, plan *Plan) (*Produced, error) {
	result, err := bridge(plan, "produce", bootstrap)
	if err != nil {
		return nil, err
	}
	out := &Produced{}
	for _, f := range result {
		switch f[0] {
		case "D":
			d := Delivery{Offset: number(f[2], 64), Error: textOf(f[3])}
			if p := number(f[1], 32); p != nil {
				partition := int32(*p)
				d.Partition = &partition
			}
			out.Records = append(out.Records, d)
		case "F":
			out.Error = textOf(f[1])
		default:
			return nil, fmt.Errorf("Kafka's producer: unexpected line %q", strings.Join(f, " "))
		}
	}
	return out, nil
}

func encode(plan *Plan) ([]byte, error) {
	result, err := bridge(plan, "encode")
	if err != nil {
		return nil, err
	}
	if len(result) != 1 || len(result[0]) != 2 || result[0][0] != "X" {
		return nil, fmt.Errorf("Kafka's batch builder: unexpected answer %q", result)
	}
	return hex.DecodeString(result[0][1])
}
