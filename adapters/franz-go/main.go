// Adapter of the Kafka conformance kit (docs/adapter-protocol.md) for franz-go
// (github.com/twmb/franz-go, pinned in go.mod).
//
// It decodes the input with franz-go's public fetch-processing API:
//
//	kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true,
//	    Offset: math.MinInt64}, &kmsg.FetchResponseTopicPartition{RecordBatches: input},
//	    kgo.DefaultDecompressor(), hook)
//
// with the library defaults otherwise: CRC validation on, read-uncommitted. The function
// returns a flat []*kgo.Record plus one partition error; it exposes no batch header. The batch
// boundaries come from the library's own per-batch hook (FetchBatchMetrics: NumRecords and
// CompressionType for every batch it processed), so each batch object carries only
// `compression` and `records`; every other batch key is declared in `omits`. `position` and
// `batch_index` are counts (the protocol's exception): the sizes of the batches the library
// processed, added up. Records are attributed to batches in order by the hook's NumRecords; when
// the library's offset filter drops records (repeated or decreasing offsets) the counts differ and
// the adapter says so on stderr. Control records are parsed with kmsg.ControlRecordKey and
// kmsg.EndTxnMarker. A Go panic inside the library is recovered and reported as an error.
// `file` inputs are decoded like `memory` ones (franz-go has no FileRecords rules). The protocol
// plumbing (dispatch, canonical JSON, Java-style header keys) is ../go-common's adaptercommon.
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	ac "kafkaconformance.local/adaptercommon"
)

var omits = []string{
	"sizeInBytes", "magic", "crc", "attributes", "timestampType", "lastOffset",
	"maxTimestamp", "baseOffset", "lastOffsetDelta", "partitionLeaderEpoch", "baseTimestamp",
	"deleteHorizonMs", "isTransactional", "isControl", "producerId", "producerEpoch",
	"baseSequence", "lastSequence", "recordsCount",
}

var controlTypes = []string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER",
	"SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}

type obj = ac.Obj

// run is one call of the library: the partition it returns and the metrics of every batch it
// processed (in order), or the panic it raised.
type run struct {
	fp      kgo.FetchPartition
	batches []kgo.FetchBatchMetrics
	panic   any
}

func process(in []byte) (r run) {
	defer func() {
		if p := recover(); p != nil {
			r.panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	opts := kgo.ProcessFetchPartitionOpts{KeepControlRecords: true, Offset: math.MinInt64}
	rp := &kmsg.FetchResponseTopicPartition{RecordBatches: in, HighWatermark: -1,
		LastStableOffset: -1, LogStartOffset: -1}
	r.fp, _ = kgo.ProcessFetchPartition(opts, rp, kgo.DefaultDecompressor(),
		func(m kgo.FetchBatchMetrics) { r.batches = append(r.batches, m) })
	return r
}

// sizes returns the start position of each of the first n batches and the position after
// them (a count: the batches' length fields, which the library has validated).
func sizes(in []byte, n int) ([]int, int) {
	pos := make([]int, n)
	p := 0
	for i := range n {
		pos[i] = p
		p += 12 + int(int32(binary.BigEndian.Uint32(in[p+8:])))
	}
	return pos, p
}

func decode(in []byte, mode string) obj {
	r := process(in)
	pos, end := sizes(in, len(r.batches))
	doc := ac.NewDoc(mode)
	batches := []obj{}
	var errIndex int
	var failure error
	records := r.fp.Records
	switch {
	case r.panic != nil: // the records of the batches processed before are lost with the call
		failure, errIndex = fmt.Errorf("panic: %v", r.panic), len(r.batches)
	case r.fp.Err != nil:
		failure, errIndex = r.fp.Err, len(r.batches)
		// The error belongs to the last processed batch if the library raises it again on
		// the bytes of the processed batches alone; otherwise it came from splitting or
		// validating (length, CRC, magic) the next one, which is then not listed.
		if n := len(r.batches); n > 0 && process(in[:end]).fp.Err != nil {
			errIndex = n - 1
		}
	}
	total := 0
	for _, m := range r.batches {
		total += m.NumRecords
	}
	if total != len(records) {
		fmt.Fprintf(os.Stderr, "adapter: the hook counted %d records, the library returned %d\n",
			total, len(records))
	}
	for i, m := range r.batches {
		if r.panic != nil {
			break
		}
		n := min(m.NumRecords, len(records))
		if i == len(r.batches)-1 {
			n = len(records)
		}
		recs := []obj{}
		for _, rec := range records[:n] {
			o, err := record(rec)
			if err != nil { // a control record kmsg cannot parse ends the decoding here
				failure, errIndex = err, i
				break
			}
			recs = append(recs, o)
		}
		records = records[n:]
		batches = append(batches, obj{"position": pos[i],
			"compression": ac.CodecNames[m.CompressionType&7], "records": recs})
		if failure != nil && errIndex == i {
			break
		}
	}
	doc["batches"] = batches
	switch {
	case failure != nil:
		p := end
		if errIndex < len(pos) {
			p = pos[errIndex]
		}
		ac.SetError(doc, exceptionOf(failure), failure, errIndex, p)
	case end < len(in):
		ac.SetTail(doc, end, len(in))
	}
	return doc
}

func exceptionOf(err error) string {
	if strings.HasPrefix(err.Error(), "unable to decompress") {
		return ac.KafkaException
	}
	return ac.CorruptRecord
}

func record(r *kgo.Record) (obj, error) {
	headers := []obj{}
	for _, h := range r.Headers {
		headers = append(headers, ac.Header([]byte(h.Key), h.Value))
	}
	// magic 0: the library sets no timestamp (time.Time{}), which ac.Millis makes "-1"
	o := ac.Record(r.Offset, ac.Millis(r.Timestamp), r.Key, r.Value, headers)
	if r.Attrs.IsControl() {
		var key kmsg.ControlRecordKey
		if err := key.ReadFrom(r.Key); err != nil {
			return nil, fmt.Errorf("control record key: %w", err)
		}
		c := obj{"typeId": int(key.Type), "type": "UNKNOWN"}
		if t := int(key.Type); t >= 0 && t < len(controlTypes) {
			c["type"] = controlTypes[t]
		}
		if key.Type == 0 || key.Type == 1 {
			var marker kmsg.EndTxnMarker
			if err := marker.ReadFrom(r.Value); err != nil {
				return nil, fmt.Errorf("end transaction marker: %w", err)
			}
			c["coordinatorEpoch"] = int(marker.CoordinatorEpoch)
		}
		o["control"] = c
	}
	return o, nil
}

func capabilities() obj {
	caps := ac.Capabilities("franz-go", "github.com/twmb/franz-go", omits,
		"kgo.ProcessFetchPartition exposes records, not batch headers: batches are "+
			"known only through the per-batch hook (record count, codec). Compressed batches "+
			"are decompressed whole before any record is read. Record-level corruption ends "+
			"the batch silently (readRawRecordsDirect), and a decompression error after "+
			"records were delivered is dropped (treated as a truncated fetch).")
	// a legacy message rejected in validation never reaches the batch hook: not listed
	caps["lists_failing_batch"] = false
	return caps
}

func main() { ac.Run(capabilities, decode) }
