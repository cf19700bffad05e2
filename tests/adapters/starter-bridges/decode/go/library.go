// Test bridge for the Go starter (tests/test_init_adapter.py): a full replacement of the
// starter's hook (library.go) whose decode runs the kit's reference decoder as a subprocess,
// $STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT mode, and parses its B/R/C/E lines (format in
// tests/adapters/starter_bridge.py) into the starter's structures, so that the starter's
// protocol code (main.go) is what is tested.
package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

const Name = "go-starter-bridge"
const Version = ""

var Magics = []int{0, 1, 2}
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

const ChecksCRC = true
const ErrorSemantics = "streaming"
const FileSemantics = true
const ErrorClasses = "class"
const ListsFailingBatch = true

var Omits = []string{}

const Notes = ""

// fields reads the space-separated fields of one line, panicking on a malformed one (a
// panic is reported as a crash of the adapter, which is what a broken bridge should be).
type fields []string

func (f fields) int(i int) int {
	n, err := strconv.Atoi(f[i])
	if err != nil {
		panic(err)
	}
	return n
}

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

func decode(data []byte, mode string) (*Decoded, error) {
	cmd := exec.Command(os.Getenv("STARTER_BRIDGE_PYTHON"), os.Getenv("STARTER_BRIDGE_SCRIPT"), mode)
	cmd.Stdin = bytes.NewReader(data)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reference decoder: %w", err)
	}
	decoded := &Decoded{}
	var batch *Batch
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := fields(strings.Fields(line))
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "B":
			batch = &Batch{
				Position: f.int(1), SizeInBytes: f.int(2), Magic: f.int(3),
				CRC: uint32(f.int64(4)), Attributes: f.int(5), Compression: f[6],
				TimestampType: f[7], LastOffset: f.int64(8), MaxTimestamp: f.int64(9),
			}
			if batch.Magic >= 2 {
				batch.BaseOffset = f.int64(10)
				batch.LastOffsetDelta = f.int(11)
				batch.PartitionLeaderEpoch = f.int(12)
				batch.BaseTimestamp = f.int64(13)
				if f[14] != "-" {
					horizon := f.int64(14)
					batch.DeleteHorizonMs = &horizon
				}
				batch.IsTransactional = f[15] == "1"
				batch.IsControl = f[16] == "1"
				batch.ProducerID = f.int64(17)
				batch.ProducerEpoch = f.int(18)
				batch.BaseSequence = f.int(19)
				batch.LastSequence = f.int(20)
				batch.RecordsCount = f.int(21)
			}
			decoded.Batches = append(decoded.Batches, batch)
		case "R":
			record := Record{Offset: f.int64(1), Timestamp: f.int64(2), Key: f.bytes(3), Value: f.bytes(4)}
			for i := 0; i < f.int(5); i++ {
				record.Headers = append(record.Headers, Header{*f.text(6 + 2*i), f.bytes(7 + 2*i)})
			}
			batch.Records = append(batch.Records, record)
		case "C":
			control := &Control{TypeID: f.int(1), Type: *f.text(2)}
			if f[3] != "-" {
				epoch := f.int(3)
				control.CoordinatorEpoch = &epoch
			}
			batch.Records[len(batch.Records)-1].Control = control
		case "E":
			decoded.Error = &Error{*f.text(1), f.text(2), f.int(3), f.int(4)}
		default:
			return nil, fmt.Errorf("reference decoder: unexpected line %q", line)
		}
	}
	return decoded, nil
}
