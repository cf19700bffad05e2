#!/usr/bin/env python3
"""A kafka-conformance adapter for a Python Kafka client library: the protocol side.

This file speaks the adapter protocol (docs/adapter-protocol.md of kafka-conformance) and writes
the canonical decode JSON (docs/canonical-json.md). You should not need to edit it: call your
library in ``library.py`` (the hook) and declare its capabilities there; ``decoded.py`` holds
the structures the hook fills.

Build: nothing to build (``python3 -m py_compile *.py`` checks the syntax).
Run:   python3 adapter.py capabilities
       python3 adapter.py decode --as memory|file  < input.bin
       python3 adapter.py serve                      (persistent mode, framed stdin/stdout)
Check: kafka-conformance check --cmd "python3 /abs/path/adapter.py"

Python 3.11 or later, standard library only.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import traceback
from types import ModuleType
from typing import Any, BinaryIO

from decoded import Batch, Decoded, Record

#: the contract id of the document this adapter prints
FORMAT = "kafka-conformance/decode/1"
#: ``decode --as`` values, and the mode byte of a ``serve`` request (0 memory, 1 file)
MODES = ("memory", "file")
#: the 4-byte big-endian length that frames ``serve`` requests and responses
FRAME = struct.Struct(">I")

USAGE = """usage: adapter.py capabilities
       adapter.py decode --as memory|file  < input
       adapter.py serve
"""


# --------------------------------------------------------------------------- the canonical JSON

#: batch keys in document order; the magic-2-only ones are written only when magic >= 2
_COMMON_KEYS = (
    "position",
    "sizeInBytes",
    "magic",
    "crc",
    "attributes",
    "compression",
    "timestampType",
    "lastOffset",
    "maxTimestamp",
)


def _b64(data: bytes | None) -> str | None:
    """Bytes as standard base64 with padding; ``None`` stays null, b"" is ""."""
    return None if data is None else base64.b64encode(data).decode("ascii")


def _without(doc: dict[str, Any], omits: frozenset[str]) -> dict[str, Any]:
    """``doc`` without the keys the library does not expose (OMITS)."""
    return {k: v for k, v in doc.items() if k not in omits}


def record_document(record: Record, omits: frozenset[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        # 64-bit integers are decimal strings
        "offset": str(record.offset),
        "timestamp": str(record.timestamp),
        "key": _b64(record.key),
        "value": _b64(record.value),
        "headers": [{"key": h.key, "value": _b64(h.value)} for h in record.headers],
    }
    if record.control is not None:  # only in control batches
        control: dict[str, Any] = {"typeId": record.control.type_id, "type": record.control.type}
        if record.control.coordinator_epoch is not None:
            control["coordinatorEpoch"] = record.control.coordinator_epoch
        # "control.X" in OMITS leaves out field X of the control object
        doc["control"] = {k: v for k, v in control.items() if f"control.{k}" not in omits}
    return _without(doc, omits)


def batch_document(batch: Batch, omits: frozenset[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "position": batch.position,
        "sizeInBytes": batch.size_in_bytes,
        "magic": batch.magic,
        "crc": batch.crc & 0xFFFFFFFF,  # unsigned
        "attributes": batch.attributes,
        "compression": batch.compression,
        "timestampType": batch.timestamp_type,
        "lastOffset": str(batch.last_offset),
        "maxTimestamp": str(batch.max_timestamp),
    }
    if batch.magic >= 2:
        delete_horizon = batch.delete_horizon_ms
        doc |= {
            "baseOffset": str(batch.base_offset),
            "lastOffsetDelta": batch.last_offset_delta,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "baseTimestamp": str(batch.base_timestamp),
            "deleteHorizonMs": None if delete_horizon is None else str(delete_horizon),
            "isTransactional": batch.is_transactional,
            "isControl": batch.is_control,
            "producerId": str(batch.producer_id),
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
            "lastSequence": batch.last_sequence,
            "recordsCount": batch.records_count,
        }
    doc["records"] = [record_document(r, omits) for r in batch.records]
    return _without(doc, omits)


def decode_document(
    data: bytes, mode: str, decoded: Decoded, omits: frozenset[str]
) -> dict[str, Any]:
    """The canonical document of ``decoded``, the hook's answer for ``data``."""
    error: dict[str, Any] | None = None
    tail: dict[str, int] | None = None
    if decoded.error is not None:
        outcome = "error"
        error = {
            "kafka_exception": decoded.error.kafka_exception,
            "message": decoded.error.message,
            "batch_index": decoded.error.batch_index,
            "position": decoded.error.position,
        }
    else:
        last = decoded.batches[-1] if decoded.batches else None
        start = 0 if last is None else last.position
        end = 0 if last is None else last.position + last.size_in_bytes
        # bytes after the last complete batch were left unread; a last batch of a negative
        # size (a length field of 0x80000000 or more, as the library gave it) ends nowhere:
        # no tail is made of it, and the kit shows the size the library reported
        if start <= end < len(data):
            outcome = "partial"
            tail = {"position": end, "bytes": len(data) - end}
        else:
            outcome = "ok"
    return {
        "format": FORMAT,
        "mode": mode,
        "outcome": outcome,
        "error": error,
        "tail": tail,
        "batches": [batch_document(b, omits) for b in decoded.batches],
    }


def write_json(doc: dict[str, Any]) -> bytes:
    """One line of JSON, ASCII only (non-ASCII as \\u escapes, control characters escaped)."""
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")


# ------------------------------------------------------------------------------------- commands


def read_hook() -> ModuleType:
    """The hook module (library.py next to this file), imported on first use: a hook that
    fails to import is reported like any other failure of the hook."""
    import library

    return library


def capabilities_document(hook: ModuleType) -> dict[str, Any]:
    return {
        "name": hook.NAME,
        "version": hook.VERSION,
        "magics": list(hook.MAGICS),
        "codecs": list(hook.CODECS),
        "checks_crc": hook.CHECKS_CRC,
        "error_semantics": hook.ERROR_SEMANTICS,
        "file_semantics": hook.FILE_SEMANTICS,
        "error_classes": hook.ERROR_CLASSES,
        "omits": list(hook.OMITS),
        "lists_failing_batch": hook.LISTS_FAILING_BATCH,
        "persistent": True,  # `serve` below
        "notes": hook.NOTES,
    }


def decode_with_hook(hook: ModuleType, data: bytes, mode: str) -> bytes:
    """The JSON document for ``data``. A hook failure propagates: it is not a verdict."""
    decoded = hook.decode(data, mode)
    if not isinstance(decoded, Decoded):
        raise TypeError(f"library.decode returned {type(decoded).__name__}, not Decoded")
    return write_json(decode_document(data, mode, decoded, frozenset(hook.OMITS)))


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``stream`` (fewer only at EOF)."""
    chunks: list[bytes] = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def serve(hook: ModuleType, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Persistent mode: requests (1 byte mode + 4-byte big-endian length + input) until EOF,
    each answered with a 4-byte big-endian length + the UTF-8 JSON document, then a flush."""
    while True:
        head = _read_exactly(stdin, 1 + FRAME.size)
        if not head:
            return 0  # EOF between requests: done
        if len(head) < 1 + FRAME.size or head[0] >= len(MODES):
            print(f"serve: bad request header {head.hex()}", file=sys.stderr)
            return 2
        (length,) = FRAME.unpack_from(head, 1)
        data = _read_exactly(stdin, length)
        if len(data) < length:
            print(f"serve: input cut short ({len(data)} of {length} bytes)", file=sys.stderr)
            return 2
        answer = decode_with_hook(hook, data, MODES[head[0]])
        stdout.write(FRAME.pack(len(answer)) + answer)
        stdout.flush()


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    try:
        if command == "capabilities" and len(argv) == 1:
            sys.stdout.buffer.write(write_json(capabilities_document(read_hook())) + b"\n")
            return 0
        if command == "decode" and len(argv) == 3 and argv[1] == "--as" and argv[2] in MODES:
            data = sys.stdin.buffer.read()
            sys.stdout.buffer.write(decode_with_hook(read_hook(), data, argv[2]) + b"\n")
            return 0
        if command == "serve" and len(argv) == 1:
            return serve(read_hook(), sys.stdin.buffer, sys.stdout.buffer)
    except Exception:
        # a failure of the hook (or of this file) is an `error` of the adapter, not a verdict
        traceback.print_exc()
        return 1
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
