"""The verdict and its canonical JSON (docs/canonical-json.md): the contract shared with the
Java oracle and with third-party adapters.

:class:`DecodeResult` is what :func:`conformance.decode` returns: the batches with the records
Kafka hands out, the error Kafka raises (if any), the partial tail, and the strict-profile
:class:`Finding` list. ``to_json()`` gives the canonical document; 64-bit integers are decimal
strings, bytes are base64.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal, overload

from conformance.codecs import codec_name
from conformance.errors import DecodeError
from conformance.stream.splitter import Batch
from conformance.wire.batch import RecordBatchV2
from conformance.wire.record import Record, RecordList

Mode = Literal["memory", "file"]
Profile = Literal["kafka", "strict"]
Outcome = Literal["ok", "partial", "error"]


@dataclass(slots=True)
class Finding:
    """An anomaly Kafka silently accepts (profile ``strict``)."""

    code: str
    message: str
    batch_index: int
    position: int

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "batch_index": self.batch_index,
            "position": self.position,
        }


@dataclass(slots=True)
class DecodedBatch:
    """A batch header and the records Kafka handed out for it."""

    header: Batch
    records: RecordList = field(default_factory=RecordList)

    def __getattr__(self, name: str) -> Any:
        if name == "header" or name.startswith("__"):  # unset slot (e.g. while unpickling)
            raise AttributeError(name)
        return getattr(self.header, name)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


class AllRecords(Sequence[Record]):
    """The records of several batches as one read-only sequence, without copying them out."""

    __slots__ = ("_batches",)

    def __init__(self, batches: Sequence[DecodedBatch]) -> None:
        self._batches = batches

    def __len__(self) -> int:
        return sum(len(b.records) for b in self._batches)

    def __iter__(self) -> Iterator[Record]:
        return chain.from_iterable(b.records for b in self._batches)

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        if index >= 0:
            for b in self._batches:
                if index < len(b.records):
                    return b.records[index]
                index -= len(b.records)
        raise IndexError("record index out of range")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AllRecords({list(self)!r})"


@dataclass(slots=True)
class Tail:
    position: int
    bytes: int

    def to_json(self) -> dict[str, int]:
        return {"position": self.position, "bytes": self.bytes}


@dataclass(slots=True)
class DecodeResult:
    outcome: Outcome
    mode: Mode
    batches: list[DecodedBatch]
    error: DecodeError | None = None
    tail: Tail | None = None
    findings: list[Finding] | None = None

    @property
    def records(self) -> AllRecords:
        """All records of all batches, in order (a view: records are made as they are read)."""
        return AllRecords(self.batches)

    @property
    def ok(self) -> bool:
        return self.outcome != "error"

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON document (docs/canonical-json.md)."""
        return result_to_json(self)


FORMAT = "kafka-conformance/decode/1"


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def record_to_json(r: Record) -> dict[str, Any]:
    out: dict[str, Any] = {
        "offset": str(r.offset),
        "timestamp": str(r.timestamp),
        "key": _b64(r.key),
        "value": _b64(r.value),
        "headers": [{"key": k, "value": _b64(v)} for k, v in r.headers],
    }
    if r.control is not None:
        out["control"] = r.control
    return out


def batch_to_json(b: DecodedBatch) -> dict[str, Any]:
    out = _batch_head_json(b)
    out["records"] = [record_to_json(r) for r in b.records]
    return out


def write_batch_json(b: DecodedBatch, write: Callable[[str], object]) -> None:
    """``dumps(batch_to_json(b))``, written a record at a time: memory does not grow with the
    records (no list of record documents is built)."""
    head = dumps(_batch_head_json(b))
    write(head[:-1] + ',"records":[')
    sep = ""
    for r in b.records:
        write(sep + dumps(record_to_json(r)))
        sep = ","
    write("]}")


def _batch_head_json(b: DecodedBatch) -> dict[str, Any]:
    h = b.header
    out: dict[str, Any] = {
        "position": h.position,
        "sizeInBytes": h.size_in_bytes,
        "magic": h.magic,
        "crc": h.crc,
        "attributes": h.attributes_raw if isinstance(h, RecordBatchV2) else h.attributes,
        "compression": codec_name(h.compression_id),
        "timestampType": str(h.timestamp_type),
        "lastOffset": str(h.last_offset),
        "maxTimestamp": str(h.max_timestamp),
    }
    if isinstance(h, RecordBatchV2):
        dh = h.delete_horizon_ms
        out.update(
            {
                "baseOffset": str(h.base_offset),
                "lastOffsetDelta": h.last_offset_delta,
                "partitionLeaderEpoch": h.partition_leader_epoch,
                "baseTimestamp": str(h.base_timestamp),
                "deleteHorizonMs": None if dh is None else str(dh),
                "isTransactional": h.is_transactional,
                "isControl": h.is_control,
                "producerId": str(h.producer_id),
                "producerEpoch": h.producer_epoch,
                "baseSequence": h.base_sequence,
                "lastSequence": h.last_sequence,
                "recordsCount": h.records_count,
            }
        )
    return out


def result_to_json(result: DecodeResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": FORMAT,
        "mode": result.mode,
        "outcome": result.outcome,
        "error": None if result.error is None else _error_json(result),
        "tail": None if result.tail is None else result.tail.to_json(),
        "batches": [batch_to_json(b) for b in result.batches],
    }
    if result.findings is not None:
        out["findings"] = [f.to_json() for f in result.findings]
    return out


def _error_json(result: DecodeResult) -> dict[str, Any]:
    e = result.error
    assert e is not None
    return e.to_json()


def dumps(doc: dict[str, Any]) -> str:
    """One line, ASCII-safe, key order preserved."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True)


__all__ = [
    "FORMAT",
    "DecodeResult",
    "DecodedBatch",
    "Finding",
    "Mode",
    "Outcome",
    "Profile",
    "Tail",
    "batch_to_json",
    "dumps",
    "record_to_json",
    "result_to_json",
    "write_batch_json",
]
