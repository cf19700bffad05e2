"""kafka-conformance adapter for aiokafka (PyPI `aiokafka`, pinned in requirements.txt).

Two implementations from one directory: `aiokafka` (the Cython extension classes of
aiokafka/record/_crecords, the default of the wheel) and `aiokafka-pure` (environment
AIOKAFKA_NO_EXTENSIONS=1: the pure-Python classes). Which one is in use is checked at start-up
(every subcommand fails with exit 3 if it is not the one the environment asks for) and reported
in capabilities' `version` and `notes`.

API under test: `aiokafka.record.memory_records.MemoryRecords(bytes)`, iterated as aiokafka's
consumer does in aiokafka/consumer/fetcher.py (`PartitionRecords._unpack_records`,
`check_crcs=True` by default): `while has_next(): batch = next_batch()`, then
`batch.validate_crc()` (a mismatch is the consumer's `CorruptRecordException`), then
`for record in batch`. Legacy inner messages get no CRC check (the consumer does none). The
consumer skips control batches; here their records are iterated and parsed with the library's
`aiokafka.record.control_record.ControlRecord.parse(key)` (what the consumer does with the
first one under read_committed) so that they can be compared with Kafka's verdict.

Declared (all but the omits are adapter_protocol's defaults): magics 0-2, all five codecs
(LZ4 on magic 0 is refused by the library: listed as unsupported in divergences.toml),
checks_crc, eager error semantics (a compressed batch is decompressed whole before its first
record), no FileRecords semantics, family error classes, and omits for what neither
implementation exposes, by magic: the batch size, partition leader epoch, delete horizon, last
sequence and record count of any batch, every legacy batch field except its offset
(`next_offset`), and the control record's coordinatorEpoch (its type id is reported under
Kafka's name). Batch positions are counted by the
adapter (the protocol's exception): MemoryRecords splits at 12 + the length field, and so does
the count here.

Safety: each input has a 10 s watchdog (a library stuck in a Python loop exits 124, which the
runner reports as a crash). No memory cap: cramjam (Rust) aborts the process when an allocation
fails instead of raising, so a cap would turn the library's verdicts into crashes.

Usage: adapter.py capabilities | decode --as memory|file | serve   (docs/adapter-protocol.md)

This file holds what is aiokafka's: the implementation check, the walk over the batches, the
batch documents and the mapping of its exceptions to Kafka's. The protocol plumbing (argument
dispatch, the serve loop, the watchdog, the document skeleton, records, base64) is
adapters/python-common/adapter_protocol.py, shared with adapters/kafka-python.
"""

import os
import struct
import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

# the protocol plumbing shared with adapters/kafka-python (stdlib only; see its docstring)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import adapter_protocol as protocol
import aiokafka.errors as aerr
from adapter_protocol import COMPRESSION, CORRUPT, IAE, INVALID, OOM
from aiokafka.record.control_record import ControlRecord
from aiokafka.record.default_records import DefaultRecordBatch
from aiokafka.record.legacy_records import LegacyRecordBatch
from aiokafka.record.memory_records import MemoryRecords

PURE = bool(os.environ.get("AIOKAFKA_NO_EXTENSIONS"))
NAME = "aiokafka-pure" if PURE else "aiokafka"
VERSION = _dist_version("aiokafka")
# by magic (docs/adapter-protocol.md): what neither implementation exposes of any batch, and
# every legacy header field but the offset; no control record exposes its coordinatorEpoch
LEGACY_OMITS = ["magic", "crc", "attributes", "compression", "timestampType", "maxTimestamp"]
OMITS = {
    "*": [
        "sizeInBytes",
        "partitionLeaderEpoch",
        "deleteHorizonMs",
        "lastSequence",
        "recordsCount",
        "control.coordinatorEpoch",
    ],
    "0": LEGACY_OMITS,
    "1": LEGACY_OMITS,
}

CODEC_PY = os.path.join("aiokafka", "codec.py")
DECOMPRESS = ("_maybe_uncompress", "_decompress")


def _implementation():
    """The classes in use, checked against what the environment asks for."""
    classes = [MemoryRecords, DefaultRecordBatch, LegacyRecordBatch]
    names = [f"{c.__module__}.{c.__qualname__}" for c in classes]
    is_c = [c.__module__.startswith("aiokafka.record._crecords.") for c in classes]
    want_c = not PURE
    if not all(x == want_c for x in is_c):
        sys.stderr.write(
            "aiokafka adapter: {} implementation requested but in use: {}\n".format(
                "C extension" if want_c else "pure-Python", ", ".join(names)
            )
        )
        sys.exit(3)
    return names


IMPL = _implementation()


def capabilities():
    kind = "pure Python (AIOKAFKA_NO_EXTENSIONS=1)" if PURE else "C extension (Cython _crecords)"
    return protocol.capabilities(
        NAME,
        "{} ({})".format(VERSION, "pure Python" if PURE else "C extension"),
        OMITS,
        "implementation: {}: {}. MemoryRecords iterated like "
        "PartitionRecords._unpack_records (check_crcs=True: batch validate_crc only, no "
        "per-record CRC of legacy inner messages); compressed batches are decompressed "
        "whole before the first record; LZ4 on magic 0 is refused (UnsupportedCodecError); "
        "control records parsed with ControlRecord.parse; --as file is decoded with "
        "MemoryRecords; legacy batches expose only next_offset".format(kind, ", ".join(IMPL)),
        # the C LegacyRecordBatch reads its message while splitting: a malformed legacy
        # message fails before its batch exists
        lists_failing_batch=PURE,
    )


def _kafka_class(exc, batch):
    """Kafka's exception class (error family) for an aiokafka / codec exception: a codec stream
    failure (raised under aiokafka/codec.py, cramjam or a batch's decompress method) is Kafka's
    KafkaException, the rest corrupt."""
    if isinstance(exc, MemoryError):
        return OOM
    if isinstance(exc, aerr.UnsupportedCodecError):
        # "Unknown compression codec 0x0N" (N = 4 only for legacy batches), "LZ4 is not
        # supported for broker version 0.8/0.9", "Libraries for X compression codec not found"
        if "Unknown compression codec" in str(exc):
            if str(exc).endswith("0x04"):
                return INVALID  # Kafka: "Invalid wrapper compressionType found in legacy ..."
            return IAE  # Kafka: IllegalArgumentException "Unknown compression type id: N"
        return COMPRESSION
    if isinstance(exc, aerr.CorruptRecordException):
        return CORRUPT
    if (type(exc).__module__ or "").startswith("cramjam"):
        return COMPRESSION
    for code in protocol.traceback_codes(exc):
        if code.co_filename.endswith(CODEC_PY) or any(d in code.co_name for d in DECOMPRESS):
            return COMPRESSION
    return CORRUPT  # struct.error, ValueError, IndexError, AssertionError, SystemError, ...


def _last_offset(batch):
    """next_offset - 1 as the library's own arithmetic gives it: the C extension's next_offset
    is an int64 (at offset 2^63-1 it wraps to -2^63, as Java's long does), so its predecessor
    wraps back; the pure classes' Python ints never go below the range."""
    last = batch.next_offset - 1
    return last + (1 << 64) if last < -(1 << 63) else last


def _batch_doc(batch, position):
    if isinstance(batch, DefaultRecordBatch):
        ctype = batch.compression_type
        return {
            "position": position,
            "magic": batch.magic,
            "crc": batch.crc,
            "attributes": batch.attributes,
            "compression": protocol.codec_name(ctype),
            "timestampType": "LogAppendTime" if batch.timestamp_type else "CreateTime",
            "lastOffset": str(_last_offset(batch)),
            "maxTimestamp": str(batch.max_timestamp),
            "baseOffset": str(batch.base_offset),
            "lastOffsetDelta": batch.last_offset_delta,
            "baseTimestamp": str(batch.first_timestamp),
            "isTransactional": batch.is_transactional,
            "isControl": batch.is_control_batch,
            "producerId": str(batch.producer_id),
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
            "records": [],
        }
    return {"position": position, "lastOffset": str(_last_offset(batch)), "records": []}


def _walk(data, batches, cursor):
    """The batches of `data` as the consumer reads them (see the module docstring)."""
    records = MemoryRecords(bytes(data))
    while records.has_next():
        cursor.batch = None
        batch = cursor.batch = records.next_batch()
        if batch is None:
            break
        legacy = not isinstance(batch, DefaultRecordBatch)
        if legacy:  # Kafka lists a legacy batch before its (record-level) CRC check
            bdoc = _batch_doc(batch, cursor.position)
            batches.append(bdoc)
        if not batch.validate_crc():  # check_crcs=True, as in _unpack_records
            raise aerr.CorruptRecordException("Invalid CRC")
        if not legacy:
            bdoc = _batch_doc(batch, cursor.position)
            batches.append(bdoc)
        control = batch.is_control_batch
        for rec in batch:
            rdoc = protocol.record_doc(rec)
            if control:  # the consumer's parse of the key (version, type)
                rdoc["control"] = protocol.control_doc(ControlRecord.parse(rec.key).type_)
            bdoc["records"].append(rdoc)
        # the adapter's own count (MemoryRecords split the batch at 12 + its length field)
        cursor.advance(12 + struct.unpack_from(">i", data, cursor.position + 8)[0])


def decode(data, mode):
    return protocol.decode(data, mode, _walk, _kafka_class)


if __name__ == "__main__":
    sys.exit(protocol.main(sys.argv[1:], capabilities, decode))
