"""The scenarios of ``check-producer``: what a producer or encoder is asked to write.

Each is a :class:`~conformance.producer_check.plan.Scenario` (the plan model, its document and
its checks live in ``producer_check.plan``; the names are re-exported here). A scenario's
description is not written, it is generated: each scenario lists its :class:`Promise` objects
(a text and a test of it on the plan: records and settings), the description is their texts,
and a scenario whose plan breaks one of them cannot be made (``ValueError``).

Every record's bytes are derived from the scenario name and its index, so every run and every
implementation sends the same bytes (timestamps that are "now"-relative are fixed at import:
the broker checks them against its clock only in 4.x, whose default window is one hour ahead
and unbounded behind, so a timestamp of 0 is accepted by every broker line the kit runs).

The ``batch-*`` scenarios ask for all their records in one batch (a plan group, which the
adapter maps to its library's batch call or a linger that gathers them): timestamps whose
deltas from the first overflow 32 bits both ways, many records, many and large headers, null
and empty keys and values mixed; the judgement reads them in the batches as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.codecs import CODECS
from conformance.partitioners import PARTITIONERS
from conformance.producer_check.plan import (
    BASE_TS,
    DISCONNECT,
    ENCODE,
    FORMAT,
    PRODUCE,
    PlanRecord,
    Promise,
    Scenario,
    broken_promises,
    write_plan,
)
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


def _batch_size(*records: PlanRecord) -> int:
    """The size of the one uncompressed batch of ``records`` (Kafka's builder's)."""
    first = records[0].timestamp or 0
    return RECORD_BATCH_OVERHEAD + sum(
        len(write_record_v2(i, (r.timestamp or 0) - first, r.key, r.value, list(r.headers)))
        for i, r in enumerate(records)
    )


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


# --------------------------------------------------------------- one batch: the plan's groups

#: a timestamp delta a 32-bit field cannot hold: above Integer.MAX_VALUE, below MIN_VALUE
INT32_OVER, INT32_UNDER = 1 << 31, -(1 << 31) - 1
#: the producer settings of a one-batch scenario: a batch.size and request size that hold the
#: whole group, a linger long enough to gather records sent back to back
GROUP_SETTINGS: dict[str, Any] = {
    "linger_ms": 1000,
    "batch_size": DEFAULT_MAX_MESSAGE_BYTES - 12,
    "max_request_size": 2 * DEFAULT_MAX_MESSAGE_BYTES,
}
ONE_GROUP = Promise(
    "sent as one batch",
    lambda s: (
        s.side == PRODUCE
        and s.groups == ((0, len(s.records)),)
        and s.batch_size >= _batch_size(*s.records)
        and s.linger_ms >= 1000
    ),
)


def _deltas(s: Scenario) -> list[int]:
    """Each explicit timestamp less the first record's."""
    first = s.records[0].timestamp if s.records else None
    return [] if first is None else [t - first for t in _explicit(s)]


WIDE_TIMESTAMPS = Promise(
    "timestamps more than 2^31 ms apart (deltas from the first over and under 32 bits)",
    lambda s: (
        max(_deltas(s), default=0) >= INT32_OVER and min(_deltas(s), default=0) <= INT32_UNDER
    ),
)
NULLS_MIXED = Promise(
    "null and empty keys and values mixed",
    lambda s: (
        {None, b""} <= {r.key for r in s.records}
        and {None, b""} <= {r.value for r in s.records}
        and _alternating([r.key is None for r in s.records])
    ),
)
MANY_HEADERS = _some("a record with 300 headers", lambda r: len(r.headers) == 300)
EMPTY_HEADER = _some(
    "an empty header value and key", lambda r: b"" in _values(r) and "" in [k for k, _ in r.headers]
)
LARGE_HEADER = _some(
    "a 64 KiB header value", lambda r: any(len(v or b"") == 65536 for v in _values(r))
)


def _grouped(name: str, promises: tuple[Promise, ...], records: tuple[PlanRecord, ...]) -> Scenario:
    return Scenario(
        name,
        PRODUCE,
        (*promises, ONE_GROUP),
        records,
        groups=((0, len(records)),),
        **GROUP_SETTINGS,
    )


def _batch_scenarios() -> list[Scenario]:
    """The scenarios whose records are one plan group (one batch)."""
    first = BASE_TS - (1 << 32)  # the base; BASE_TS itself is 2^32 after it (a 32-bit delta 0)
    stamps = (first, BASE_TS, first + INT32_UNDER, first + INT32_OVER, first + 7, BASE_TS - 1)
    nulls = ((None, b"v0"), (b"", None), (None, b""), (b"k3", b""), (None, b"v4"), (b"", b""))
    return [
        _grouped(
            "batch-timestamps-wide",
            (
                _count(6, "with explicit timestamps", lambda r: r.timestamp is not None),
                WIDE_TIMESTAMPS,
            ),
            tuple(
                PlanRecord(f"k{i}".encode(), f"v{i}".encode(), (), t) for i, t in enumerate(stamps)
            ),
        ),
        _grouped(
            "batch-many-records",
            (_count(2000, KEYS_AND_VALUES, _has_values), EXPLICIT_TIMESTAMPS),
            tuple(
                PlanRecord(f"k{i}".encode(), i.to_bytes(2, "big"), (), BASE_TS + i % 97)
                for i in range(2000)
            ),
        ),
        _grouped(
            "batch-headers",
            (MANY_HEADERS, LARGE_HEADER, EMPTY_HEADER),
            (
                PlanRecord(
                    b"k0", b"many", tuple((f"h{j}", f"{j}".encode()) for j in range(300)), BASE_TS
                ),
                PlanRecord(
                    b"k1", b"large", (("big", bytes(j % 253 for j in range(65536))),), BASE_TS + 1
                ),
                PlanRecord(b"k2", b"none", (), BASE_TS + 2),
                PlanRecord(
                    b"k3", b"shapes", (("e", b""), ("", b"k"), ("big", b"x" * 65536)), BASE_TS + 3
                ),
            ),
        ),
        _grouped(
            "batch-nulls-mixed",
            (NULLS_MIXED, EXPLICIT_TIMESTAMPS),
            tuple(PlanRecord(k, v, (), BASE_TS + i) for i, (k, v) in enumerate(nulls)),
        ),
    ]


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
    batched = _batch_scenarios()
    out += batched
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
    wide, _, batch_headers, _ = batched
    encode += [
        Scenario(
            f"encode-{s.name}",
            ENCODE,
            (_same_records(s.name, s.records), *promises),
            s.records,
            batch=_ENCODE_BATCH,
        )
        for s, promises in (
            (wide, (WIDE_TIMESTAMPS,)),
            (batch_headers, (MANY_HEADERS, LARGE_HEADER)),
        )
    ]
    return out + encode
