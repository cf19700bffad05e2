"""kafka-conformance adapter for kafka-python (PyPI `kafka-python`, pinned in requirements.txt).

API under test: `kafka.record.MemoryRecords(bytes)`, iterated as kafka-python's consumer does in
`kafka/consumer/fetcher.py` (`Fetcher.PartitionRecords._unpack_records`, `check_crcs=True` by
default): `next_batch()` until it returns None (a short trailing fragment is left unread), then
`batch.validate_crc()` (a mismatch is the consumer's `CorruptRecordError`), then
`for record in batch` with `record.validate_crc()` per record (legacy inner messages; always
True for v2). The consumer skips control batches without iterating them; here they are
iterated too (the library's `DefaultRecordBatch` yields `ControlRecord`s, whose constructor
parses the key) so that their records can be compared with Kafka's verdict.

Declared (see `capabilities()`; all but the omits are adapter_protocol's defaults): magics
0-2, all five codecs, checks_crc (the consumer default), eager error semantics (a compressed
batch is decompressed whole by `_maybe_uncompress` before its first record), no FileRecords
semantics (`--as file` is decoded as memory), family error classes, and omits for what the
library's public API does not expose, by magic: the legacy batch's crc, attributes and
timestamp (no public property on `LegacyRecordBatch`), for every magic `deleteHorizonMs` and the
control record's `coordinatorEpoch` (`ControlRecord` exposes only version and type, whose
type id is reported under Kafka's name).

Safety: each input has a 10 s watchdog (a library stuck in a Python loop exits 124, which the
runner reports as a crash). No memory cap: cramjam (Rust) aborts the process when an allocation
fails instead of raising, so a cap would turn the library's verdicts into crashes.

Usage: adapter.py capabilities | decode --as memory|file | serve   (docs/adapter-protocol.md)

This file holds what is kafka-python's: the walk over the batches, the batch documents and the
mapping of its exceptions to Kafka's. The protocol plumbing (argument dispatch, the serve loop,
the watchdog, the document skeleton, records, base64) is adapters/python-common/
adapter_protocol.py, shared with adapters/aiokafka.
"""

import os
import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

# the protocol plumbing shared with adapters/aiokafka (stdlib only; see its docstring)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import adapter_protocol as protocol
import kafka.errors as kerr
from adapter_protocol import COMPRESSION, CORRUPT, IAE, INVALID, OOM
from kafka.record import MemoryRecords
from kafka.record.default_records import ControlRecord

VERSION = _dist_version("kafka-python")
# by magic (docs/adapter-protocol.md): v2 batches expose every field but the delete horizon;
# legacy batches have no public crc, attributes or timestamp; no control record exposes its
# coordinatorEpoch
LEGACY_OMITS = ["crc", "attributes", "maxTimestamp"]
OMITS = {
    "*": ["deleteHorizonMs", "control.coordinatorEpoch"],
    "0": LEGACY_OMITS,
    "1": LEGACY_OMITS,
}
CODEC_PY = os.path.join("kafka", "codec.py")
DECOMPRESS = ("_maybe_uncompress", "_decompress")  # DefaultRecordBatch / LegacyRecordBatch


def capabilities():
    return protocol.capabilities(
        "kafka-python",
        VERSION,
        OMITS,
        "kafka.record.MemoryRecords iterated like Fetcher.PartitionRecords._unpack_records "
        "(check_crcs=True: batch validate_crc, then record validate_crc); compressed batches "
        "are decompressed whole before the first record; control batches (skipped by the "
        "consumer) are iterated through the library's ControlRecord; --as file is decoded "
        "with MemoryRecords; legacy batch crc/attributes/timestamp and the control record's "
        "coordinatorEpoch are not exposed",
    )


def _kafka_class(exc, batch):
    """Kafka's exception class (error family) for a kafka-python / codec exception: a codec
    stream failure (raised under kafka/codec.py or the batch's decompress method) is Kafka's
    KafkaException, the rest corrupt."""
    if isinstance(exc, MemoryError):
        return OOM
    if isinstance(exc, kerr.UnsupportedCodecError):
        ctype = None if batch is None else batch.compression_type
        if ctype == 4:  # only raised for legacy batches
            return INVALID  # Kafka: "Invalid wrapper compressionType found in legacy ..."
        if ctype in (5, 6, 7):
            return IAE  # Kafka: IllegalArgumentException "Unknown compression type id: N"
        return COMPRESSION
    if isinstance(exc, kerr.CorruptRecordError):
        return CORRUPT
    for code in protocol.traceback_codes(exc):
        if code.co_filename.endswith(CODEC_PY) or code.co_name in DECOMPRESS:
            return COMPRESSION
    return CORRUPT  # struct.error, ValueError, IndexError, AssertionError, TypeError, ...


def _batch_doc(batch, position):
    magic = batch.magic
    if magic >= 2:
        doc = {
            "position": position,
            "sizeInBytes": batch.size_in_bytes,
            "magic": magic,
            "crc": batch.crc,
            "attributes": batch.attributes,
            "compression": protocol.codec_name(batch.compression_type),
            "timestampType": "LogAppendTime" if batch.timestamp_type else "CreateTime",
            "lastOffset": str(batch.last_offset),
            "maxTimestamp": str(batch.max_timestamp),
            "baseOffset": str(batch.base_offset),
            "lastOffsetDelta": batch.last_offset_delta,
            "partitionLeaderEpoch": batch.leader_epoch,
            "baseTimestamp": str(batch.first_timestamp),
            "isTransactional": batch.is_transactional,
            "isControl": batch.is_control_batch,
            "producerId": str(batch.producer_id),
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
            "lastSequence": batch.last_sequence,
            "recordsCount": batch.records_count,
        }
    else:
        ts_type = batch.timestamp_type
        doc = {
            "position": position,
            "sizeInBytes": batch.size_in_bytes,
            "magic": magic,
            "compression": protocol.codec_name(batch.compression_type),
            "timestampType": {None: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[
                ts_type
            ],
            "lastOffset": str(batch.base_offset),
        }
    doc["records"] = []
    return doc


def _walk(data, batches, cursor):
    """The batches of `data` as the consumer reads them (see the module docstring)."""
    records = MemoryRecords(data)
    while True:
        cursor.batch = None
        batch = cursor.batch = records.next_batch()
        if batch is None:
            break
        legacy = batch.magic < 2
        if legacy:  # Kafka lists a legacy batch before its (record-level) CRC check
            bdoc = _batch_doc(batch, cursor.position)
            batches.append(bdoc)
        if not batch.validate_crc():  # check_crcs=True, as in _unpack_records
            raise kerr.CorruptRecordError(
                f"Record batch for partition at offset {batch.base_offset} failed crc check"
            )
        if not legacy:
            bdoc = _batch_doc(batch, cursor.position)
            batches.append(bdoc)
        it = iter(batch)  # v2: _maybe_uncompress (whole batch); legacy: a generator
        for rec in it:
            if not rec.validate_crc():
                raise kerr.CorruptRecordError(
                    f"Record for partition at offset {rec.offset} failed crc check"
                )
            rdoc = protocol.record_doc(rec)
            if isinstance(rec, ControlRecord):  # the library parsed the key (version, type)
                rdoc["control"] = protocol.control_doc(rec.type)
            bdoc["records"].append(rdoc)
        cursor.advance(batch.size_in_bytes)


def decode(data, mode):
    return protocol.decode(data, mode, _walk, _kafka_class)


if __name__ == "__main__":
    sys.exit(protocol.main(sys.argv[1:], capabilities, decode))
