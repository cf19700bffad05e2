// Adapter of the Kafka conformance kit (docs/adapter-protocol.md) for IBM/sarama
// (github.com/IBM/sarama, pinned in go.mod).
//
// sarama's record decoders are unexported, so shim/sarama_shim.go.in is compiled into package
// sarama at build time (into a copy of the module, see adapter.toml). Its ConformanceDecode runs the
// records loop of FetchResponseBlock.decode (Records.decode -> MessageSet / RecordBatch decode,
// CRCs always checked, partial trailing batches ignored, batches without records left out of
// RecordsSet) and converts each entry with the consumer's own parseRecords / parseMessages
// (absolute offsets and timestamps, as ConsumerMessage). This program maps that to the
// canonical document: batch headers from RecordBatch / MessageBlock fields, positions and
// sizes from the decoder's offsets. sarama does not expose the stored CRC, the raw attributes,
// deleteHorizonMs, lastSequence or parsed control records (typeId): declared in `omits`.
// A panic inside sarama is recovered (in the shim) and reported as an error.
// `file` inputs are decoded like `memory` ones (sarama has no FileRecords rules). The protocol
// plumbing (dispatch, canonical JSON, Java-style header keys) is ../go-common's adaptercommon.
package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	ac "kafkaconformance.local/adaptercommon"
)

var omits = []string{"crc", "attributes", "deleteHorizonMs", "lastSequence", "control"}

type obj = ac.Obj

func decode(in []byte, mode string) obj {
	res := sarama.ConformanceDecode(in)
	doc := ac.NewDoc(mode)
	batches := []obj{}
	for _, e := range res.Entries {
		if !e.Dropped {
			batches = append(batches, batch(e))
		}
	}
	doc["batches"] = batches
	switch {
	case res.Err != nil:
		ac.SetError(doc, exceptionOf(res.Err), res.Err, res.ErrIndex, res.ErrPos)
	case res.End < len(in):
		ac.SetTail(doc, res.End, len(in))
	}
	return doc
}

func exceptionOf(err error) string {
	var pde sarama.PacketDecodingError
	if errors.As(err, &pde) && !strings.HasPrefix(pde.Info, "invalid compression") {
		return ac.CorruptRecord
	}
	if strings.HasPrefix(err.Error(), "panic:") {
		return ac.CorruptRecord
	}
	return ac.KafkaException // errors of the codec libraries
}

// batch is the batch object of an entry. Timestamps go through ac.Millis: sarama's
// Timestamp.decode makes a negative timestamp (-1) time.Time{}, which ac.Millis writes "-1".
func batch(e sarama.ConformanceEntry) obj {
	o := obj{"position": e.Position, "sizeInBytes": e.Size}
	if b := e.Batch; b != nil {
		tt := "CreateTime"
		if b.LogAppendTime {
			tt = "LogAppendTime"
		}
		o["magic"], o["timestampType"] = int(b.Version), tt
		o["compression"] = ac.CodecNames[b.Codec&7]
		o["lastOffset"] = strconv.FormatInt(b.LastOffset(), 10)
		o["maxTimestamp"] = ac.Millis(b.MaxTimestamp)
		o["baseOffset"] = strconv.FormatInt(b.FirstOffset, 10)
		o["lastOffsetDelta"] = int(b.LastOffsetDelta)
		o["partitionLeaderEpoch"] = int(b.PartitionLeaderEpoch)
		o["baseTimestamp"] = ac.Millis(b.FirstTimestamp)
		o["isTransactional"], o["isControl"] = b.IsTransactional, b.Control
		o["producerId"] = strconv.FormatInt(b.ProducerID, 10)
		o["producerEpoch"], o["baseSequence"] = int(b.ProducerEpoch), int(b.FirstSequence)
		o["recordsCount"] = e.RecordsCount
	} else {
		m := e.Block.Msg
		o["magic"], o["compression"] = int(m.Version), ac.CodecNames[m.Codec&7]
		o["timestampType"], o["maxTimestamp"] = "NoTimestampType", "-1"
		if m.Version >= 1 {
			o["timestampType"], o["maxTimestamp"] = "CreateTime", ac.Millis(m.Timestamp)
			if m.LogAppendTime {
				o["timestampType"] = "LogAppendTime"
			}
		}
		o["lastOffset"] = strconv.FormatInt(e.Block.Offset, 10)
	}
	recs := []obj{}
	for _, m := range e.Messages {
		headers := []obj{}
		for _, h := range m.Headers {
			headers = append(headers, ac.Header(h.Key, h.Value))
		}
		recs = append(recs, ac.Record(m.Offset, ac.Millis(m.Timestamp), m.Key, m.Value, headers))
	}
	o["records"] = recs
	return o
}

func capabilities() obj {
	caps := ac.Capabilities("sarama", "github.com/IBM/sarama", omits,
		"FetchResponseBlock.decode's records loop (internal API, via a shim compiled "+
			"into package sarama). A decode error fails the whole FetchResponse in sarama: the "+
			"consumer then gets none of the partition's records, not even those of earlier "+
			"batches (reported here as decoded). Batches without records are left out of "+
			"RecordsSet; a batch whose records run out of bytes is taken for a partial "+
			"trailing batch. Compressed batches are decompressed whole; CRCs are always checked.")
	// RecordBatch.decode decodes every record of a batch before returning any, compressed or
	// not, and an entry that fails while being decoded is not exposed at all
	caps["error_semantics"] = "atomic"
	caps["lists_failing_batch"] = false
	return caps
}

func main() { ac.Run(capabilities, decode) }
