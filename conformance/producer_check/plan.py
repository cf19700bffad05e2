"""The plan of ``check-producer``: what one scenario asks a producer or encoder to write.

A :class:`Scenario` is one plan (docs/adapter-protocol.md, "Producer side"): records in send
order, the groups of them to be sent as one batch each, producer settings, for ``encode`` the
batch settings, and what the run needs from the implementation (codec, idempotence,
transactions, headers, a batch call or linger) and from the kit (a proxy fault, the partition
count). :func:`write_plan` writes its JSON document; the judgement (``producer_check.judge``)
reads the same :class:`PlanRecord` objects back, so the plan an adapter gets and the one it is
judged against are one object. The scenarios themselves are ``producer_check.scenarios``.

A scenario whose plan breaks one of its :class:`Promise` objects cannot be made
(``ValueError``), nor one whose records the judgement could confuse: on a topic of several
partitions every record has a key or a partition, and no two records of a scenario have the
same key, value and headers (the judgement tells read-back records apart by content); nor one
whose groups are not runs of records of one partition.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.jsondoc import JsonDocument

__all__ = [
    "BASE_TS",
    "BATCHING",
    "BATCH_CALL",
    "BATCH_LINGER",
    "BATCH_NONE",
    "DISCONNECT",
    "ENCODE",
    "FORMAT",
    "NO_SETTING",
    "PRODUCE",
    "PlanRecord",
    "Promise",
    "Scenario",
    "broken_promises",
    "write_plan",
]

FORMAT = "kafka-conformance/produce-plan/1"
PRODUCE = "produce"
ENCODE = "encode"
#: the proxy fault: the first Produce request's response is dropped and the connection closed
DISCONNECT = "disconnect-after-produce"
#: a timestamp inside every broker's window at any time this module is imported: now - 1 min
BASE_TS = (time.time_ns() // 1_000_000 // 1000) * 1000 - 60_000
#: how a producer adapter puts the records of a plan group in one batch (capabilities'
#: ``produce.batching``): the library's batch call (send_batch, one send of many messages),
#: a linger that gathers records sent back to back, or not at all (a group is unsupported)
BATCH_CALL, BATCH_LINGER, BATCH_NONE = "call", "linger", "none"
BATCHING = (BATCH_CALL, BATCH_LINGER, BATCH_NONE)
#: what the capabilities' ``defaults`` say of ``linger_ms`` or ``batch_size`` for a library
#: that has no such setting
NO_SETTING = "none"


@dataclass(frozen=True)
class PlanRecord(JsonDocument):
    """One record of a plan: bytes or None, headers as (key, value) pairs."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp: int | None = None
    partition: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": _b64(self.key),
            "value": _b64(self.value),
            "headers": [{"key": k, "value": _b64(v)} for k, v in self.headers],
            "timestamp": self.timestamp,
            "partition": self.partition,
        }

    @property
    def content(self) -> tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]:
        """What the judgement identifies a read-back record by: key, value, headers."""
        return self.key, self.value, self.headers


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


@dataclass(frozen=True)
class Promise:
    """One thing a scenario's description says: its words, and the test that its plan (the
    records and settings of the :class:`Scenario`) has it."""

    text: str
    holds: Callable[[Scenario], bool] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Scenario(JsonDocument):
    """One plan, what running it needs, and what it promises (its description)."""

    name: str
    side: str  # PRODUCE or ENCODE
    #: what the plan has, in description order; every one holds (checked when made)
    promises: tuple[Promise, ...]
    records: tuple[PlanRecord, ...]
    partitions: int = 1
    codec: str = "none"
    idempotence: bool = False
    acks: int = -1
    linger_ms: int = 5
    batch_size: int = 16384
    max_request_size: int = 1048576
    #: None, or "commit" / "abort": every record inside one transaction
    transaction: str | None = None
    timeout_ms: int = 30_000
    #: the proxy fault (None or DISCONNECT)
    fault: str | None = None
    #: encode: the batch settings
    batch: dict[str, Any] = field(default_factory=dict)
    #: produce: runs of plan records, (first index, count), each to be sent as one batch
    groups: tuple[tuple[int, int], ...] = ()
    #: records with a negative timestamp other than -1: Java's ProducerRecord refuses them
    #: (IllegalArgumentException "Invalid timestamp: -5. Timestamp should always be
    #: non-negative or null."); a client that sends them instead is judged by what it sent
    refused: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        problems = [f"promises {p.text!r}, which its plan breaks" for p in broken_promises(self)]
        if not self.promises:
            problems.append("promises nothing (its description would be empty)")
        if self.partitions > 1:
            problems += [
                f"record {i} has neither key nor partition on {self.partitions} partitions"
                for i, r in enumerate(self.records)
                if r.key is None and r.partition is None
            ]
        first: dict[Any, int] = {}
        for i, r in enumerate(self.records):
            j = first.setdefault(r.content, i)
            if j != i:
                problems.append(f"records {j} and {i} have the same key, value and headers")
                break
        problems += self._group_problems()
        if problems:
            raise ValueError(f"scenario {self.name}: " + "; ".join(problems))

    def _group_problems(self) -> list[str]:
        """What makes :attr:`groups` no plan: a group of fewer than two records, past the
        records or overlapping the one before, on several partitions, or in an encode plan
        (which is one batch already)."""
        if self.groups and self.side != PRODUCE:
            return [f"groups in a {self.side} plan (its records are one batch)"]
        out, after = [], 0
        for first, count in self.groups:
            if count < 2 or first < after or first + count > len(self.records):
                out.append(f"group ({first}, {count}) is not a run of 2+ records after {after}")
            named = {r.partition for r in self.records[first : first + count]}
            if self.partitions > 1 and (len(named) != 1 or None in named):
                out.append(f"group ({first}, {count}) does not name one partition")
            after = first + count
        return out

    def grouped(self) -> list[range]:
        """The plan indices of each group."""
        return [range(first, first + count) for first, count in self.groups]

    @property
    def description(self) -> str:
        """The texts of the promises: nothing the plan does not have."""
        return ", ".join(p.text for p in self.promises)

    @property
    def group(self) -> str:
        return self.name.split("-", 1)[0]

    def needs(self) -> dict[str, Any]:
        """What the implementation must declare for this scenario to run."""
        transactional = self.transaction is not None or bool(self.batch.get("transactional"))
        return {
            "codec": self.codec,
            "idempotence": self.idempotence
            or transactional
            or self.batch.get("producer_id", -1) >= 0,
            "transactions": transactional,
            "headers": any(r.headers for r in self.records),
            "batching": bool(self.groups),
        }

    def to_dict(self) -> dict[str, Any]:
        return write_plan(self, "")


def broken_promises(s: Scenario) -> list[Promise]:
    """The promises of ``s`` its plan does not keep (none for every scenario that exists)."""
    return [p for p in s.promises if not p.holds(s)]


def write_plan(s: Scenario, topic: str, transactional_id: str | None = None) -> dict[str, Any]:
    """The plan document the adapter reads (``format`` :data:`FORMAT`)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "scenario": s.name,
        "topic": topic,
        "partitions": s.partitions,
        "settings": {
            "codec": s.codec,
            "idempotence": s.idempotence or s.transaction is not None,
            "acks": s.acks,
            "linger_ms": s.linger_ms,
            "batch_size": s.batch_size,
            "max_request_size": s.max_request_size,
            "transaction": (
                None
                if s.transaction is None
                else {"id": transactional_id or f"kc-{s.name}", "end": s.transaction}
            ),
            "timeout_ms": s.timeout_ms,
        },
        "records": [r.to_dict() for r in s.records],
        "groups": [{"first": first, "count": count} for first, count in s.groups],
    }
    if s.side == ENCODE:
        doc["batch"] = dict(s.batch)
    return doc
