"""The scenarios of ``check-producer``: what a producer or encoder is asked to write.

A :class:`Scenario` is one plan (docs/adapter-protocol.md, "Producer side"): records in send
order, producer settings, for ``encode`` the batch settings, and what the run needs from the
implementation (codec, idempotence, transactions, headers) and from the kit (a proxy fault,
the partition count). :func:`write_plan` writes its JSON document; the judgement
(``producer_check.judge``) reads the same :class:`PlanRecord` objects back, so the plan an
adapter gets and the one it is judged against are one object.

A scenario's description is not written, it is generated: each scenario lists its
:class:`Promise` objects (a text and a test of it on the plan: records and settings), the
description is their texts, and a scenario whose plan breaks one of them cannot be made
(``ValueError``). Nor can one whose records the judgement could confuse: on a topic of several
partitions every record has a key or a partition, and no two records of a scenario have the
same key, value and headers (the judgement tells read-back records apart by content).

Every record's bytes are derived from the scenario name and its index, so every run and every
implementation sends the same bytes (timestamps that are "now"-relative are fixed at import:
the broker checks them against its clock only in 4.x, whose default window is one hour ahead
and unbounded behind, so a timestamp of 0 is accepted by every broker line the kit runs).
"""

from __future__ import annotations

import base64
import fnmatch
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.codecs import CODECS
from conformance.jsondoc import JsonDocument
from conformance.partitioners import PARTITIONERS
from conformance.wire.layout import RECORD_BATCH_OVERHEAD
from conformance.wire.record import write_record_v2

__all__ = [
    "DISCONNECT",
    "ENCODE",
    "FORMAT",
    "PRODUCE",
    "PlanRecord",
    "Promise",
    "Scenario",
    "broken_promises",
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
        if problems:
            raise ValueError(f"scenario {self.name}: " + "; ".join(problems))

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
    }
    if s.side == ENCODE:
        doc["batch"] = dict(s.batch)
    return doc


# ------------------------------------------------------------------------------- the promises

RecordTest = Callable[[PlanRecord], bool]


def _some(text: str, test: RecordTest) -> Promise:
    """Some record passes ``test``."""
    return Promise(text, lambda s: any(test(r) for r in s.records))


def _every(text: str, test: RecordTest) -> Promise:
    """The plan has records, and every one passes ``test``."""
    return Promise(text, lambda s: bool(s.records) and all(test(r) for r in s.records))


def _adjacent(text: str, test: Callable[[PlanRecord, PlanRecord], bool]) -> Promise:
    """Two records in a row pass ``test`` (in either order)."""
    return Promise(
        text,
        lambda s: any(
            test(a, b) or test(b, a) for a, b in zip(s.records, s.records[1:], strict=False)
        ),
    )


def _count(
    n: int, what: str = "", test: RecordTest | None = None, *, batch: bool = False
) -> Promise:
    """Exactly ``n`` records (``batch``: written as one batch, an encode plan), each passing
    ``test``; the text says the number."""
    words = ("one record" if n == 1 else f"{n:,} records") + (f" {what}" if what else "")
    if batch:
        words = f"one batch of {words}"
    return Promise(
        words,
        lambda s: (
            len(s.records) == n
            and (s.side == ENCODE) == batch
            and (test is None or all(test(r) for r in s.records))
        ),
    )


def _codec(name: str) -> Promise:
    return Promise(f"codec {name}", lambda s: s.codec == name)


def _partitions(n: int) -> Promise:
    return Promise("one partition" if n == 1 else f"{n} partitions", lambda s: s.partitions == n)


_BATCH_WORDS = {
    "transactional": "transactional",
    "producer_id": "producer id",
    "producer_epoch": "epoch",
    "base_sequence": "base sequence",
}


def _batch(**fields: Any) -> Promise:
    """The encode plan's batch settings ``fields`` (words from :data:`_BATCH_WORDS`)."""
    words = [_BATCH_WORDS[k] if v is True else f"{_BATCH_WORDS[k]} {v}" for k, v in fields.items()]
    return Promise(", ".join(words), lambda s: all(s.batch.get(k) == v for k, v in fields.items()))


def _transaction(end: str) -> Promise:
    """Every record inside one transaction, ended with ``end`` ("commit" or "abort")."""
    done = {"commit": "committed", "abort": "aborted"}[end]
    return Promise(f"in one transaction, {done}", lambda s: s.transaction == end)


def _same_records(names: str, records: tuple[PlanRecord, ...]) -> Promise:
    """An encode plan of the records of other scenarios (``names``), in their order."""
    return Promise(
        f"one batch of the records of {names}",
        lambda s: s.side == ENCODE and s.records == records,
    )


def _has_values(r: PlanRecord) -> bool:
    return r.key is not None and r.value is not None


def _values(r: PlanRecord) -> list[bytes | None]:
    return [v for _, v in r.headers]


def _binary(v: bytes | None) -> bool:
    if v is None:
        return False
    try:
        v.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _stamps(s: Scenario) -> list[int | None]:
    return [r.timestamp for r in s.records]


def _explicit(s: Scenario) -> list[int]:
    return [t for t in _stamps(s) if t is not None]


def _valid(t: int | None) -> bool:
    """An explicit timestamp every client sends and Java accepts (0 included)."""
    return t is not None and t >= 0


def _alternating(flags: list[bool]) -> bool:
    return len(flags) > 2 and all(a != b for a, b in zip(flags, flags[1:], strict=False))


def _java_partition(r: PlanRecord, partitions: int) -> int | None:
    return PARTITIONERS["java"].partition(r.key, partitions) if r.key is not None else None


def _batch_size(r: PlanRecord) -> int:
    """The size of the one uncompressed batch of ``r`` (Kafka's builder's)."""
    return RECORD_BATCH_OVERHEAD + len(write_record_v2(0, 0, r.key, r.value, list(r.headers)))


KEYS_AND_VALUES = "with keys and values"
HEADERS_EVERY_OTHER = Promise(
    "headers on every other one",
    lambda s: _alternating([bool(r.headers) for r in s.records]),
)
EXPLICIT_TIMESTAMPS = _every("explicit timestamps", lambda r: r.timestamp is not None)
OUT_OF_ORDER = Promise(
    "out of order (the first is not the smallest)",
    lambda s: len(_explicit(s)) > 1 and _stamps(s)[0] not in (None, min(_explicit(s))),
)
EQUAL_TIMESTAMPS = Promise("two equal", lambda s: len(set(_explicit(s))) < len(_explicit(s)))
TIMESTAMP_ZERO = _some("a timestamp 0", lambda r: r.timestamp == 0)
NULL_NEXT_TO_EMPTY_KEY = _adjacent(
    "a null key next to an empty key", lambda a, b: a.key is None and b.key == b""
)
EMPTY_AND_NULL_HEADER = _some(
    "an empty and a null header value in one record",
    lambda r: b"" in _values(r) and None in _values(r),
)
IDEMPOTENT = Promise("the idempotent producer, acks=all", lambda s: s.idempotence and s.acks == -1)


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


def _mixed_promises(n: int, *, batch: bool = False) -> tuple[Promise, ...]:
    """What :func:`_mixed` records promise."""
    return (
        _count(n, KEYS_AND_VALUES, _has_values, batch=batch),
        HEADERS_EVERY_OTHER,
        EXPLICIT_TIMESTAMPS,
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


def _nulls() -> Scenario:
    return Scenario(
        "nulls-key-value",
        PRODUCE,
        (
            _some("a null key", lambda r: r.key is None and r.value is not None),
            _some("a null value", lambda r: r.key is not None and r.value is None),
            _some("both null", lambda r: r.key is None and r.value is None),
            _some("an empty key and value", lambda r: r.key == b"" and r.value == b""),
            NULL_NEXT_TO_EMPTY_KEY,
        ),
        (
            PlanRecord(None, b"value-of-null-key", (), BASE_TS),
            PlanRecord(b"key-of-null-value", None, (), BASE_TS + 1),
            PlanRecord(None, None, (), BASE_TS + 2),
            PlanRecord(b"", b"", (), BASE_TS + 3),
            # a null key right after the empty one, in a record every client sends (some
            # refuse record 2, whose key and value are both null)
            PlanRecord(None, b"null-key-after-empty-key", (), BASE_TS + 4),
        ),
    )


def _headers() -> Scenario:
    return Scenario(
        "headers-shapes",
        PRODUCE,
        (
            Promise(
                "headers: none, one and 40",
                lambda s: {0, 1, 40} <= {len(r.headers) for r in s.records},
            ),
            Promise(
                "binary, empty and null values",
                lambda s: (
                    any(_binary(v) for r in s.records for v in _values(r))
                    and any(b"" in _values(r) for r in s.records)
                    and any(None in _values(r) for r in s.records)
                ),
            ),
            EMPTY_AND_NULL_HEADER,
            _some(
                "empty and non-ASCII keys",
                lambda r: (
                    "" in [k for k, _ in r.headers] and not all(k.isascii() for k, _ in r.headers)
                ),
            ),
            _some("a repeated key", lambda r: len({k for k, _ in r.headers}) < len(r.headers)),
        ),
        (
            PlanRecord(b"k0", b"no headers", (), BASE_TS),
            PlanRecord(b"k1", b"one", (("h", b"v"),), BASE_TS + 1),
            PlanRecord(
                b"k2", b"forty", tuple((f"h{j}", bytes([j]) * j) for j in range(40)), BASE_TS
            ),
            PlanRecord(b"k3", b"binary", (("bin", bytes(range(256))),), BASE_TS + 3),
            PlanRecord(b"k4", b"empty value", (("empty", b""),), BASE_TS + 4),
            PlanRecord(b"k5", b"null value", (("empty", b""), ("null", None)), BASE_TS + 5),
            PlanRecord(
                b"k6", b"keys", (("", b"empty key"), ("h\u00e9\u4e16", b"utf-8")), BASE_TS + 6
            ),
            PlanRecord(b"k7", b"repeated", (("dup", b"1"), ("dup", b"2")), BASE_TS + 7),
        ),
    )


def _timestamps_explicit() -> Scenario:
    return Scenario(
        "timestamps-explicit",
        PRODUCE,
        (
            _count(6, "with explicit timestamps", lambda r: r.timestamp is not None),
            OUT_OF_ORDER,
            EQUAL_TIMESTAMPS,
            TIMESTAMP_ZERO,
        ),
        tuple(
            PlanRecord(f"k{i}".encode(), f"v{i}".encode(), (), t)
            for i, t in enumerate(
                (BASE_TS + 5000, BASE_TS, BASE_TS + 9000, BASE_TS + 9000, BASE_TS - 3000, 0)
            )
        ),
    )


def scenarios() -> list[Scenario]:
    """Every scenario, produce first, in report order."""
    out: list[Scenario] = [
        Scenario(
            f"codec-{codec.name}",
            PRODUCE,
            (_codec(codec.name), *_mixed_promises(20), _partitions(1)),
            _mixed(20, f"codec-{codec.name}"),
            codec=codec.name,
        )
        for codec in CODECS.values()
    ]
    nulls, headers, explicit = _nulls(), _headers(), _timestamps_explicit()
    out += [
        nulls,
        headers,
        Scenario(
            "size-near-max",
            PRODUCE,
            (
                _count(
                    1,
                    f"whose batch is just under max.message.bytes ({DEFAULT_MAX_MESSAGE_BYTES})",
                    lambda r: 0 <= DEFAULT_MAX_MESSAGE_BYTES - _batch_size(r) < 200,
                ),
                Promise(
                    "max.request.size and batch.size above it",
                    lambda s: min(s.max_request_size, s.batch_size) > DEFAULT_MAX_MESSAGE_BYTES,
                ),
            ),
            # 1048588 - 61 (batch header) - 30 (record framing of this key/value) = 1048497
            (PlanRecord(b"big", bytes(i % 251 for i in range(1_048_480)), (), BASE_TS),),
            max_request_size=2 * DEFAULT_MAX_MESSAGE_BYTES,
            batch_size=2 * DEFAULT_MAX_MESSAGE_BYTES,
        ),
        Scenario(
            "volume-10k",
            PRODUCE,
            (
                _count(
                    10_000,
                    "without key, with 2-byte values",
                    lambda r: r.key is None and r.value is not None and len(r.value) == 2,
                ),
                Promise("linger 20 ms", lambda s: s.linger_ms == 20),
            ),
            tuple(
                PlanRecord(None, i.to_bytes(2, "big"), (), BASE_TS + i // 100)
                for i in range(10_000)
            ),
            linger_ms=20,
            timeout_ms=60_000,
        ),
        explicit,
        Scenario(
            "timestamps-absent",
            PRODUCE,
            (
                _count(
                    5, "without timestamps (the producer's clock)", lambda r: r.timestamp is None
                ),
            ),
            tuple(PlanRecord(f"k{i}".encode(), f"v{i}".encode()) for i in range(5)),
        ),
        Scenario(
            "timestamps-mixed",
            PRODUCE,
            (
                Promise(
                    "set and unset timestamps alternating",
                    lambda s: _alternating([t is None for t in _stamps(s)]),
                ),
                Promise(
                    "the set ones in the past",
                    lambda s: bool(_explicit(s)) and max(_explicit(s)) <= BASE_TS,
                ),
            ),
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
            (
                Promise(
                    "a timestamp -5 between two valid ones",
                    lambda s: any(
                        b.timestamp == -5 and _valid(a.timestamp) and _valid(c.timestamp)
                        for a, b, c in zip(s.records, s.records[1:], s.records[2:], strict=False)
                    ),
                ),
                Promise(
                    "which Java's ProducerRecord refuses",
                    lambda s: (
                        bool(s.refused)
                        and s.refused
                        == {i for i, t in enumerate(_stamps(s)) if t is not None and t < -1}
                    ),
                ),
            ),
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
            (IDEMPOTENT, *_mixed_promises(10)),
            _mixed(10, "idempotent"),
            idempotence=True,
        ),
        Scenario(
            "idempotent-retry",
            PRODUCE,
            (
                IDEMPOTENT,
                *_mixed_promises(10),
                Promise(
                    "the proxy drops the answer to the first Produce request and closes the "
                    "connection",
                    lambda s: s.fault == DISCONNECT,
                ),
            ),
            _mixed(10, "idempotent-retry"),
            idempotence=True,
            fault=DISCONNECT,
        ),
        *(
            Scenario(
                f"txn-{end}",
                PRODUCE,
                (*_mixed_promises(6), _transaction(end)),
                _mixed(6, f"txn-{end}"),
                transaction=end,
            )
            for end in ("commit", "abort")
        ),
        Scenario(
            "keyed-partitions",
            PRODUCE,
            (
                Promise(
                    "200 records with distinct keys",
                    lambda s: len(s.records) == 200 == len({r.key for r in s.records} - {None}),
                ),
                _partitions(6),
                _every("the partition left to the partitioner", lambda r: r.partition is None),
            ),
            tuple(
                PlanRecord(f"user-{i * 7919 % 1000}".encode(), f"v{i}".encode(), (), BASE_TS + i)
                for i in range(200)
            ),
            partitions=6,
        ),
        Scenario(
            "explicit-partition",
            PRODUCE,
            (
                _count(9, "with an explicit partition", lambda r: r.partition is not None),
                _partitions(3),
                Promise(
                    "most keys hash to another partition",
                    lambda s: (
                        2
                        * sum(
                            r.partition is not None
                            and _java_partition(r, s.partitions) not in (None, r.partition)
                            for r in s.records
                        )
                        > len(s.records)
                    ),
                ),
            ),
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
            (_codec(codec.name), *_mixed_promises(20, batch=True)),
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
            (
                _same_records(
                    "headers-shapes and nulls-key-value", headers.records + nulls.records
                ),
                NULL_NEXT_TO_EMPTY_KEY,
                EMPTY_AND_NULL_HEADER,
            ),
            headers.records + nulls.records,
            batch=_ENCODE_BATCH,
        ),
        Scenario(
            "encode-timestamps",
            ENCODE,
            (
                _same_records("timestamps-explicit", explicit.records),
                OUT_OF_ORDER,
                TIMESTAMP_ZERO,
            ),
            explicit.records,
            batch=_ENCODE_BATCH,
        ),
        Scenario(
            "encode-idempotent",
            ENCODE,
            (
                _codec("lz4"),
                *_mixed_promises(8, batch=True),
                _batch(producer_id=4242, producer_epoch=3, base_sequence=0),
            ),
            _mixed(8, "encode-idem"),
            codec="lz4",
            batch={**_ENCODE_BATCH, "producer_id": 4242, "producer_epoch": 3, "base_sequence": 0},
        ),
        Scenario(
            "encode-transactional",
            ENCODE,
            (
                _codec("zstd"),
                *_mixed_promises(5, batch=True),
                _batch(transactional=True, producer_id=4243, producer_epoch=0, base_sequence=0),
            ),
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
