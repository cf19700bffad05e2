"""The verdict and its canonical JSON (docs/canonical-json.md): the contract shared with the
Java oracle and with third-party adapters.

:class:`DecodeResult` is what :func:`conformance.decode` returns: the batches with the records
Kafka hands out, the error Kafka raises (if any), the partial tail, and the strict-profile
:class:`Finding` list. ``to_dict()`` gives the canonical document and ``to_json()`` its text
(``conformance.jsondoc``); 64-bit integers are decimal strings, bytes are base64.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal, get_args, overload

from conformance.codecs import codec_name
from conformance.errors import DecodeError
from conformance.jsondoc import JsonDocument, json_text
from conformance.stream.splitter import MODES, Batch, Mode
from conformance.wire.batch import RecordBatchV2
from conformance.wire.record import Record, RecordList

Profile = Literal["kafka", "strict", "broker"]
#: every profile (``conformance.decode(profile=...)``, ``--profile``): the one list
PROFILES: tuple[Profile, ...] = get_args(Profile)
#: the profiles of the consumer's verdict alone (``StreamDecoder``); ``broker`` adds the
#: broker's answer (``conformance.broker``)
CONSUMER_PROFILES: tuple[Profile, ...] = ("kafka", "strict")
Outcome = Literal["ok", "partial", "error"]


@dataclass(slots=True)
class Finding(JsonDocument):
    """An anomaly Kafka silently accepts (profile ``strict``)."""

    code: str
    message: str
    batch_index: int
    position: int

    def to_dict(self) -> dict[str, Any]:
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
class Tail(JsonDocument):
    position: int
    bytes: int

    def to_dict(self) -> dict[str, int]:
        return {"position": self.position, "bytes": self.bytes}


@dataclass(slots=True)
class DecodeResult(JsonDocument):
    outcome: Outcome
    mode: Mode
    batches: list[DecodedBatch]
    error: DecodeError | None = None
    tail: Tail | None = None
    findings: list[Finding] | None = None
    #: profile ``broker``: the broker's answer to the same bytes in a Produce request
    #: (``conformance.broker.ProduceVerdict``), else None
    broker: JsonDocument | None = None

    @property
    def records(self) -> AllRecords:
        """All records of all batches, in order (a view: records are made as they are read)."""
        return AllRecords(self.batches)

    @property
    def ok(self) -> bool:
        return self.outcome != "error"

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON document (docs/canonical-json.md)."""
        return result_to_dict(self)


#: the ``format`` member of every canonical decode document
FORMAT = "kafka-conformance/decode/1"


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def record_to_dict(r: Record) -> dict[str, Any]:
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


def batch_to_dict(b: DecodedBatch) -> dict[str, Any]:
    out = _batch_head_json(b)
    out["records"] = [record_to_dict(r) for r in b.records]
    return out


def write_batch_json(b: DecodedBatch, write: Callable[[str], object]) -> None:
    """``json_text(batch_to_dict(b))``, written a record at a time: memory does not grow with
    the records (no list of record documents is built)."""
    head = json_text(_batch_head_json(b))
    write(head[:-1] + ',"records":[')
    sep = ""
    for r in b.records:
        write(sep + json_text(record_to_dict(r)))
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


def result_head(
    mode: str, outcome: str, error: DecodeError | None, tail: Tail | None
) -> dict[str, Any]:
    """The members of a canonical document before ``batches`` (one definition for the whole
    document and for the streamed one, ``fileio.write_decode_json``)."""
    return {
        "format": FORMAT,
        "mode": mode,
        "outcome": outcome,
        "error": None if error is None else error.to_dict(),
        "tail": None if tail is None else tail.to_dict(),
    }


def result_to_dict(result: DecodeResult) -> dict[str, Any]:
    out = result_head(result.mode, result.outcome, result.error, result.tail)
    out["batches"] = [batch_to_dict(b) for b in result.batches]
    if result.findings is not None:
        out["findings"] = [f.to_dict() for f in result.findings]
    if result.broker is not None:
        out["broker"] = result.broker.to_dict()
    return out


__all__ = [
    "CONSUMER_PROFILES",
    "FORMAT",
    "MODES",
    "PROFILES",
    "DecodeResult",
    "DecodedBatch",
    "Finding",
    "Mode",
    "Outcome",
    "Profile",
    "Tail",
    "batch_to_dict",
    "record_to_dict",
    "result_head",
    "result_to_dict",
    "write_batch_json",
]
