"""The plan the kit hands a producer adapter, and what the hook returns.

``read_plan`` turns the plan document (contract ``kafka-conformance/produce-plan/1``,
docs/adapter-protocol.md of kafka-conformance, "Producer side") into the structures below;
adapter.py writes :class:`Produced` as the produce-result document. ``sample-plan.json`` is a
plan to try the adapter on by hand. Python 3.11 or later, standard library only.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

PLAN_FORMAT = "kafka-conformance/produce-plan/1"


@dataclass
class Header:
    key: str
    value: bytes | None


@dataclass
class PlanRecord:
    """One record to send, in plan order."""

    key: bytes | None
    value: bytes | None
    headers: list[Header]
    timestamp: int | None  # milliseconds; None: let the library choose (its clock)
    partition: int | None  # None: the library's partitioner chooses


@dataclass
class Transaction:
    id: str  # the transactional.id
    end: str  # "commit" or "abort": how the transaction ends after every record is sent


@dataclass
class Settings:
    codec: str  # compression type: none, gzip, snappy, lz4, zstd
    idempotence: bool  # enable.idempotence
    acks: int  # -1 (all), 0 or 1
    linger_ms: int
    batch_size: int  # bytes
    max_request_size: int  # bytes
    transaction: Transaction | None
    timeout_ms: int  # the budget for the whole plan (delivery and request timeouts, flush)


@dataclass
class BatchFields:
    """``encode`` only: the header fields of the one batch to build."""

    magic: int
    base_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    partition_leader_epoch: int


@dataclass
class Plan:
    scenario: str
    topic: str  # created by the kit before the adapter runs
    partitions: int
    settings: Settings
    records: list[PlanRecord]
    batch: BatchFields | None  # encode plans only
    #: runs of plan indices to send as one batch each (the library's batch call, or back to
    #: back for its linger to gather them); empty when the plan has none
    groups: list[range] = field(default_factory=list)


@dataclass
class Delivery:
    """What the library reported for one plan record: the partition and offset it was written
    at (None: not reported), and its error text (None: acknowledged)."""

    partition: int | None = None
    offset: int | None = None
    error: str | None = None


@dataclass
class Produced:
    """One :class:`Delivery` per plan record, in plan order, and a failure outside any record
    (the producer could not start, the transaction could not commit), else None."""

    records: list[Delivery] = field(default_factory=list)
    error: str | None = None


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)


def read_plan(doc: dict[str, Any]) -> Plan:
    """The plan document as a :class:`Plan` (ValueError/KeyError/TypeError if it is not one)."""
    if doc.get("format") != PLAN_FORMAT:
        raise ValueError(f"not a plan: format {doc.get('format')!r}, expected {PLAN_FORMAT}")
    s = doc["settings"]
    txn = s.get("transaction")
    settings = Settings(
        codec=s["codec"],
        idempotence=bool(s["idempotence"]),
        acks=int(s["acks"]),
        linger_ms=int(s["linger_ms"]),
        batch_size=int(s["batch_size"]),
        max_request_size=int(s["max_request_size"]),
        transaction=None if txn is None else Transaction(str(txn["id"]), str(txn["end"])),
        timeout_ms=int(s["timeout_ms"]),
    )
    records = [
        PlanRecord(
            key=_bytes(r["key"]),
            value=_bytes(r["value"]),
            headers=[Header(h["key"], _bytes(h["value"])) for h in r["headers"]],
            timestamp=r["timestamp"],
            partition=r["partition"],
        )
        for r in doc["records"]
    ]
    b = doc.get("batch")
    batch = None
    if b is not None:
        batch = BatchFields(
            magic=int(b["magic"]),
            base_offset=int(b["base_offset"]),
            producer_id=int(b["producer_id"]),
            producer_epoch=int(b["producer_epoch"]),
            base_sequence=int(b["base_sequence"]),
            transactional=bool(b["transactional"]),
            partition_leader_epoch=int(b["partition_leader_epoch"]),
        )
    groups = [
        range(int(g["first"]), int(g["first"]) + int(g["count"])) for g in doc.get("groups") or []
    ]
    return Plan(
        doc["scenario"], doc["topic"], int(doc["partitions"]), settings, records, batch, groups
    )
