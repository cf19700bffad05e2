"""The scenarios of ``check-producer``: what a producer or encoder is asked to write.

A :class:`Scenario` is one plan (docs/adapter-protocol.md, "Producer side"): records in send
order, producer settings, for ``encode`` the batch settings, and what the run needs from the
implementation (codec, idempotence, transactions, headers) and from the kit (a proxy fault,
the partition count). :func:`write_plan` writes its JSON document; the judgement
(``producer_check.judge``) reads the same :class:`PlanRecord` objects back, so the plan an
adapter gets and the one it is judged against are one object.

Every record's bytes are derived from the scenario name and its index, so every run and every
implementation sends the same bytes (timestamps that are "now"-relative are fixed at import:
the broker checks them against its clock only in 4.x, whose default window is one hour).
"""

from __future__ import annotations

import base64
import fnmatch
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.codecs import CODECS
from conformance.jsondoc import JsonDocument

__all__ = [
    "DISCONNECT",
    "ENCODE",
    "FORMAT",
    "PRODUCE",
    "PlanRecord",
    "Scenario",
    "scenarios",
    "write_plan",
]

FORMAT = "kafka-conformance/produce-plan/1"
PRODUCE = "produce"
ENCODE = "encode"
#: the proxy fault: the first Produce request's response is dropped and the connection closed
DISCONNECT = "disconnect-after-produce"
#: a timestamp inside every broker's window at any time this module is imported: now - 1 min
BASE_TS = (time.time_ns() // 1_000_000 // 1000) * 1000 - 60_000


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


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


@dataclass(frozen=True)
class Scenario(JsonDocument):
    """One plan, and what running it needs."""

    name: str
    side: str  # PRODUCE or ENCODE
    description: str
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
    #: records with a negative timestamp other than -1: Java's ProducerRecord refuses them
    #: (IllegalArgumentException "Invalid timestamp: -5. Timestamp should always be
    #: non-negative or null."); a client that sends them instead is judged by what it sent
    refused: frozenset[int] = frozenset()

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
        }

    def to_dict(self) -> dict[str, Any]:
        return write_plan(self, "")


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
    }
    if s.side == ENCODE:
        doc["batch"] = dict(s.batch)
    return doc


# ------------------------------------------------------------------------------ the scenarios


def _mixed(n: int, name: str) -> tuple[PlanRecord, ...]:
    """``n`` records with keys, values, a few headers and increasing explicit timestamps."""
    return tuple(
        PlanRecord(
            f"{name}-key-{i}".encode(),
            (f"{name}-value-{i}-" * (1 + i % 4)).encode(),
            ((("trace", f"t{i}".encode()), ("bin", bytes([i, 0, 255]))) if i % 2 else ()),
            BASE_TS + i,
        )
        for i in range(n)
    )


_ENCODE_BATCH = {
    "magic": 2,
    "base_offset": 0,
    "producer_id": -1,
    "producer_epoch": -1,
    "base_sequence": -1,
    "transactional": False,
    "partition_leader_epoch": -1,
}


def scenarios() -> list[Scenario]:
    """Every scenario, produce first, in report order."""
    out: list[Scenario] = []
    for codec in CODECS.values():
        out.append(
            Scenario(
                f"codec-{codec.name}",
                PRODUCE,
                f"{codec.name}: 20 records with keys, values, headers and explicit timestamps, "
                "one partition",
                _mixed(20, f"codec-{codec.name}"),
                codec=codec.name,
            )
        )
    out += [
        Scenario(
            "nulls-key-value",
            PRODUCE,
            "null key, null value, both null, empty key and value",
            (
                PlanRecord(None, b"value-of-null-key", (), BASE_TS),
                PlanRecord(b"key-of-null-value", None, (), BASE_TS + 1),
                PlanRecord(None, None, (), BASE_TS + 2),
                PlanRecord(b"", b"", (), BASE_TS + 3),
            ),
        ),
        Scenario(
            "headers-shapes",
            PRODUCE,
            "headers: none, one, 40, binary values, empty value, null value, empty and "
            "non-ASCII keys, a repeated key",
            (
                PlanRecord(b"k0", b"no headers", (), BASE_TS),
                PlanRecord(b"k1", b"one", (("h", b"v"),), BASE_TS + 1),
                PlanRecord(
                    b"k2", b"forty", tuple((f"h{j}", bytes([j]) * j) for j in range(40)), BASE_TS
                ),
                PlanRecord(b"k3", b"binary", (("bin", bytes(range(256))),), BASE_TS + 3),
                PlanRecord(b"k4", b"empty value", (("empty", b""),), BASE_TS + 4),
                PlanRecord(b"k5", b"null value", (("null", None),), BASE_TS + 5),
                PlanRecord(
                    b"k6", b"keys", (("", b"empty key"), ("h\u00e9\u4e16", b"utf-8")), BASE_TS + 6
                ),
                PlanRecord(b"k7", b"repeated", (("dup", b"1"), ("dup", b"2")), BASE_TS + 7),
            ),
        ),
        Scenario(
            "size-near-max",
            PRODUCE,
            "one record whose batch is just under the topic's max.message.bytes (1048588)",
            # 1048588 - 61 (batch header) - 30 (record framing of this key/value) = 1048497
            (PlanRecord(b"big", bytes(i % 251 for i in range(1_048_480)), (), BASE_TS),),
            max_request_size=2 * DEFAULT_MAX_MESSAGE_BYTES,
            batch_size=2 * DEFAULT_MAX_MESSAGE_BYTES,
        ),
        Scenario(
            "volume-10k",
            PRODUCE,
            "10,000 tiny records (1-byte values, no key) with linger 20 ms",
            tuple(
                PlanRecord(None, bytes([i % 256]), (), BASE_TS + i // 100) for i in range(10_000)
            ),
            linger_ms=20,
            timeout_ms=60_000,
        ),
        Scenario(
            "timestamps-explicit",
            PRODUCE,
            "explicit timestamps out of order (the batch's first is not its smallest), "
            "equal ones, 0",
            tuple(
                PlanRecord(f"k{i}".encode(), f"v{i}".encode(), (), t)
                for i, t in enumerate(
                    (BASE_TS + 5000, BASE_TS, BASE_TS + 9000, BASE_TS + 9000, BASE_TS - 3000)
                )
            ),
        ),
        Scenario(
            "timestamps-absent",
            PRODUCE,
            "no timestamps: the producer stamps each record with its clock",
            tuple(PlanRecord(f"k{i}".encode(), f"v{i}".encode()) for i in range(5)),
        ),
        Scenario(
            "timestamps-mixed",
            PRODUCE,
            "set and unset timestamps mixed in one batch (set ones in the past)",
            tuple(
                PlanRecord(
                    f"k{i}".encode(), f"v{i}".encode(), (), BASE_TS - 1000 * i if i % 2 else None
                )
                for i in range(6)
            ),
        ),
        Scenario(
            "timestamps-negative",
            PRODUCE,
            "a record with timestamp -5 between two valid ones: Java's ProducerRecord refuses "
            "it; a client that sends it anyway stores a negative CreateTime",
            (
                PlanRecord(b"k0", b"before", (), BASE_TS),
                PlanRecord(b"k1", b"negative", (), -5),
                PlanRecord(b"k2", b"after", (), BASE_TS + 2),
            ),
            refused=frozenset({1}),
        ),
        Scenario(
            "idempotent",
            PRODUCE,
            "the idempotent producer: producer id, epoch and sequences from 0, acks=all",
            _mixed(10, "idempotent"),
            idempotence=True,
        ),
        Scenario(
            "idempotent-retry",
            PRODUCE,
            "idempotent producer, the proxy drops the broker's answer to the first Produce "
            "request and closes the connection: the retry must not duplicate",
            _mixed(10, "idempotent-retry"),
            idempotence=True,
            fault=DISCONNECT,
        ),
        Scenario(
            "txn-commit",
            PRODUCE,
            "a transaction of 6 records, committed",
            _mixed(6, "txn-commit"),
            transaction="commit",
        ),
        Scenario(
            "txn-abort",
            PRODUCE,
            "a transaction of 6 records, aborted",
            _mixed(6, "txn-abort"),
            transaction="abort",
        ),
        Scenario(
            "keyed-partitions",
            PRODUCE,
            "200 keyed records on 6 partitions: the partition of each key (Java's default "
            "partitioner, or the client's declared one)",
            tuple(
                PlanRecord(f"user-{i * 7919 % 1000}".encode(), f"v{i}".encode(), (), BASE_TS + i)
                for i in range(200)
            ),
            partitions=6,
        ),
        Scenario(
            "explicit-partition",
            PRODUCE,
            "records with an explicit partition (and keys that hash elsewhere)",
            tuple(
                PlanRecord(f"key-{i}".encode(), f"v{i}".encode(), (), BASE_TS + i, i % 3)
                for i in range(9)
            ),
            partitions=3,
        ),
    ]
    encode = [
        Scenario(
            f"encode-codec-{codec.name}",
            ENCODE,
            f"one batch of 20 records compressed with {codec.name}",
            _mixed(20, f"encode-{codec.name}"),
            codec=codec.name,
            batch=_ENCODE_BATCH,
        )
        for codec in CODECS.values()
    ]
    encode += [
        Scenario(
            "encode-nulls-headers",
            ENCODE,
            "null and empty keys and values; headers with binary, empty and null values",
            next(s for s in out if s.name == "headers-shapes").records
            + next(s for s in out if s.name == "nulls-key-value").records,
            batch=_ENCODE_BATCH,
        ),
        Scenario(
            "encode-timestamps",
            ENCODE,
            "out-of-order timestamps: baseTimestamp is the first record's, maxTimestamp the "
            "largest",
            next(s for s in out if s.name == "timestamps-explicit").records,
            batch=_ENCODE_BATCH,
        ),
        Scenario(
            "encode-idempotent",
            ENCODE,
            "producer id 4242, epoch 3, base sequence 0, lz4",
            _mixed(8, "encode-idem"),
            codec="lz4",
            batch={**_ENCODE_BATCH, "producer_id": 4242, "producer_epoch": 3, "base_sequence": 0},
        ),
        Scenario(
            "encode-transactional",
            ENCODE,
            "a transactional batch (producer id 4243, epoch 0, sequence 0), zstd",
            _mixed(5, "encode-txn"),
            codec="zstd",
            batch={
                **_ENCODE_BATCH,
                "producer_id": 4243,
                "producer_epoch": 0,
                "base_sequence": 0,
                "transactional": True,
            },
        ),
    ]
    return out + encode


def select(all_scenarios: Sequence[Scenario], globs: Sequence[str] | None) -> list[Scenario]:
    """The scenarios whose name matches any of ``globs`` (all when None or empty)."""
    if not globs:
        return list(all_scenarios)
    return [s for s in all_scenarios if any(fnmatch.fnmatchcase(s.name, g) for g in globs)]
