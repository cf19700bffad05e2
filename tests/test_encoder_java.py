"""Our encoder against Kafka's own ``MemoryRecordsBuilder`` (kafka-clients, via the Java oracle).

* codec ``none``: ``BatchBuilder`` bytes are byte-identical to the bytes Kafka's builder writes
  for the same inputs (compressed bytes are not compared: Java's compressors are not pinned);
* every codec (gzip, snappy, lz4; zstd for magic 2): the bytes Kafka's builder writes decode
  with ``conformance.decode`` to exactly the input records, with the timestamps Kafka reports
  (LogAppendTime batches report the log-append time, magic 0 reports -1), and our canonical
  JSON equals the oracle's decode of the same bytes;
* inputs Kafka's builder refuses are refused by ``BatchBuilder`` with ``EncodeError`` carrying
  Kafka's message.

One JVM (``OracleServer``) does every encode (one request) and every decode.
Every case must agree with Kafka; there are no known differences.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance import decode
from conformance.errors import EncodeError
from conformance.strategies import CODECS_BY_MAGIC
from conformance.stream.compare import diff
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

pytestmark = pytest.mark.oracle

SEED = 20240917
CASES_PER_MAGIC = 100
LONG_MAX = (1 << 63) - 1
LONG_MIN = -(1 << 63)
INT_MAX = (1 << 31) - 1
INT_MIN = -(1 << 31)
CODECS = {magic: tuple(names) for magic, names in CODECS_BY_MAGIC.items()}

Rec = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]

_BUILDER_DEFAULTS: dict[str, Any] = {
    "timestamp_type": "CreateTime",
    "base_offset": 0,
    "log_append_time": -1,
    "producer_id": -1,
    "producer_epoch": -1,
    "base_sequence": -1,
    "is_transactional": False,
    "is_control": False,
    "partition_leader_epoch": -1,
    "delete_horizon_ms": -1,
}


@dataclass(frozen=True)
class Case:
    id: str
    magic: int
    codec: str
    opts: dict[str, Any]  # BatchBuilder keyword arguments (all of _BUILDER_DEFAULTS)
    records: tuple[Rec, ...] = ()
    marker: tuple[bool, int, int] | None = None  # (commit, coordinator epoch, timestamp)
    marks: tuple[Any, ...] = field(default=())

    def java_spec(self) -> dict[str, Any]:
        o = self.opts
        spec: dict[str, Any] = {
            "magic": self.magic,
            "compression": self.codec,
            "timestampType": o["timestamp_type"],
            "baseOffset": str(o["base_offset"]),
            "logAppendTime": str(o["log_append_time"]),
            "producerId": str(o["producer_id"]),
            "producerEpoch": o["producer_epoch"],
            "baseSequence": o["base_sequence"],
            "isTransactional": o["is_transactional"],
            "isControl": o["is_control"],
            "partitionLeaderEpoch": o["partition_leader_epoch"],
            "deleteHorizonMs": str(o["delete_horizon_ms"]),
            "records": [
                {
                    "offset": str(off),
                    "timestamp": str(ts),
                    "key": key,
                    "value": value,
                    "headers": [{"key": k, "value": v} for k, v in headers],
                }
                for off, ts, key, value, headers in self.records
            ],
        }
        if self.marker is not None:
            commit, epoch, ts = self.marker
            spec["endTxnMarker"] = {
                "commit": commit,
                "coordinatorEpoch": epoch,
                "timestamp": str(ts),
            }
        return spec

    def python_build(self) -> bytes:
        o = self.opts
        if self.marker is not None:
            commit, epoch, ts = self.marker
            return end_txn_marker_batch(
                offset=o["base_offset"],
                producer_id=o["producer_id"],
                producer_epoch=o["producer_epoch"],
                commit=commit,
                coordinator_epoch=epoch,
                timestamp=ts,
                partition_leader_epoch=o["partition_leader_epoch"],
            )
        b = BatchBuilder(magic=self.magic, compression=self.codec, **o)
        for off, ts, key, value, headers in self.records:
            b.append(ts, key, value, headers, offset=off)
        return b.build()

    def expected_records(self) -> list[Rec]:
        """The records as Kafka's consumer reports them."""
        o = self.opts
        if self.marker is not None:
            commit, epoch, ts = self.marker
            key = struct.pack(">hh", 0, 1 if commit else 0)
            return [(o["base_offset"], ts, key, struct.pack(">hi", 0, epoch), ())]
        out: list[Rec] = []
        for off, ts, key, value, headers in self.records:
            if self.magic == 0:
                ts = -1
            elif o["timestamp_type"] == "LogAppendTime":
                ts = o["log_append_time"]
            out.append((off, ts, key, value, tuple(headers)))
        return out


def _opts(**kw: Any) -> dict[str, Any]:
    unknown = kw.keys() - _BUILDER_DEFAULTS.keys()
    assert not unknown, unknown
    return {**_BUILDER_DEFAULTS, **kw}


# ------------------------------------------------------------------------------------------
# the deterministic random generator

_HEADER_KEYS = ("h", "", "trace-id", "é", "日本語", "ключ", "emoji-😀", "a\x00b", "x" * 40)


def _blob(rng: random.Random) -> bytes | None:
    r = rng.random()
    if r < 0.15:
        return None
    if r < 0.25:
        return b""
    if r < 0.35:
        return b"ab" * rng.randint(100, 2000)  # compressible
    if r < 0.40:
        return rng.randbytes(rng.randint(1000, 6000))
    return rng.randbytes(rng.randint(1, 40))


def _timestamp(rng: random.Random, magic: int, first_ts: int | None) -> int:
    r = rng.random()
    if r < 0.15:
        return -1
    if r < 0.25:
        return 0
    if r < 0.35:
        ts = rng.choice((1 << 31, 1 << 40, 1 << 62, LONG_MAX - 1, LONG_MAX))
        return ts  # with a first timestamp of -1, Long.MAX_VALUE overflows the delta (wraps)
    return 1_700_000_000_000 + rng.randrange(-(10**9), 10**9)


def _random_case(rng: random.Random, magic: int, index: int) -> list[Case]:
    kw: dict[str, Any] = {
        "base_offset": rng.choice((0, rng.randrange(1 << 40), LONG_MAX - (1 << 32)))
    }
    if magic > 0 and rng.random() < 0.3:
        kw["timestamp_type"] = "LogAppendTime"
        kw["log_append_time"] = rng.choice(
            (-1, 0, 1_700_000_000_000, LONG_MAX, rng.randrange(1 << 50))
        )
    elif rng.random() < 0.3:
        # ignored for CreateTime (also for magic 0): any value, even an invalid one
        kw["log_append_time"] = rng.choice((0, -5, LONG_MIN, rng.randrange(1 << 50)))
    if rng.random() < 0.5:
        kw["partition_leader_epoch"] = rng.choice((0, INT_MAX, INT_MIN, rng.randrange(1 << 20)))
    if magic == 2:
        r = rng.random()
        if r < 0.5:
            kw.update(
                producer_id=rng.choice((0, LONG_MAX, rng.randrange(1 << 40))),
                producer_epoch=rng.choice((0, 32767, rng.randrange(100))),
                base_sequence=rng.choice((0, INT_MAX, rng.randrange(1 << 30))),
                is_transactional=rng.random() < 0.5,
            )
        elif r < 0.6:
            # no producer id: Kafka does not check epoch / sequence then
            kw.update(producer_epoch=rng.randrange(-5, 100), base_sequence=rng.randrange(-5, 1000))
        r = rng.random()
        if r < 0.2:
            kw["delete_horizon_ms"] = rng.choice((0, 1_700_000_000_000, rng.randrange(1 << 45)))
        elif r < 0.25:
            kw["delete_horizon_ms"] = rng.choice((-2, LONG_MIN))  # negative: no delete horizon

        if rng.random() < 0.1:  # an end-transaction marker batch (always uncompressed)
            marker_kw = {
                "base_offset": kw["base_offset"],
                "partition_leader_epoch": kw.get("partition_leader_epoch", -1),
                "producer_id": rng.choice((0, rng.randrange(1 << 40))),
                "producer_epoch": rng.randrange(0, 32768),
            }
            marker = (
                rng.random() < 0.5,
                rng.choice((0, -1, INT_MAX, rng.randrange(1000))),
                rng.choice((-1, 0, 1_700_000_000_000, LONG_MAX)),
            )
            return [Case(f"v2-{index:03d}-marker", 2, "none", _opts(**marker_kw), marker=marker)]

    records: list[Rec] = []
    offset = kw["base_offset"]
    r = rng.random()
    if r < 0.1:
        offset += rng.randint(1, 1000)  # first offset above the base offset
    elif r < 0.13 and offset > 10:
        offset -= rng.randint(1, 10)  # ... or below it (negative delta: Kafka does not check)
    first_ts: int | None = None
    for _ in range(rng.choice((1, 1, 2, 3, rng.randint(1, 30), rng.randint(1, 120)))):
        ts = _timestamp(rng, magic, first_ts)
        if first_ts is None:
            first_ts = ts
        headers: tuple[tuple[str, bytes | None], ...] = ()
        if magic == 2 and rng.random() < 0.5:
            headers = tuple(
                (
                    rng.choice(_HEADER_KEYS),
                    rng.choice((None, b"", rng.randbytes(rng.randint(1, 20)))),
                )
                for _ in range(rng.randint(1, 4))
            )
        records.append((offset, ts, _blob(rng), _blob(rng), headers))
        offset += 1 if rng.random() < 0.8 else rng.randint(2, 1 << rng.randint(2, 20))
    opts = _opts(**kw)
    return [
        Case(f"v{magic}-{index:03d}-{codec}", magic, codec, opts, tuple(records))
        for codec in CODECS[magic]
    ]


def _generated_cases() -> Iterator[Case]:
    rng = random.Random(SEED)
    for magic in (0, 1, 2):
        for i in range(CASES_PER_MAGIC):
            yield from _random_case(rng, magic, i)


#: edge cases the generator avoids or rarely hits
EXTRA_CASES = [
    Case(
        "v2-ts-delta-overflow",
        2,
        "none",
        _opts(),
        ((0, -1, None, None, ()), (1, LONG_MAX, None, None, ())),
    ),
    Case(
        "v2-max-offset-delta",
        2,
        "none",
        _opts(base_offset=5),
        ((5, 1, b"k", b"v", ()), (5 + INT_MAX, 2, None, b"w", ())),
    ),
    Case(
        "v1-lat-compressed-wrapper",
        1,
        "gzip",
        _opts(timestamp_type="LogAppendTime", log_append_time=77, base_offset=3),
        ((3, 5, b"k", b"v", ()), (9, -1, None, None, ())),
    ),
    Case(
        "v2-empty-headers-and-values",
        2,
        "none",
        _opts(),
        ((0, 0, b"", b"", (("", b""), ("", None))),),
    ),
    Case("v2-all-null", 2, "none", _opts(), ((0, -1, None, None, ()),)),
]

EMPTY_CASES = [
    Case("v0-empty", 0, "none", _opts()),
    Case("v1-empty-gzip", 1, "gzip", _opts()),
    Case("v2-empty", 2, "none", _opts()),
    Case("v2-empty-zstd", 2, "zstd", _opts()),
]

CASES = [*_generated_cases(), *EXTRA_CASES]

# ------------------------------------------------------------------------------------------
# inputs Kafka's builder refuses

_IAE = "java.lang.IllegalArgumentException"


def _refusal(
    id: str,
    magic: int,
    codec: str = "none",
    records: tuple[Rec, ...] = ((0, 1, b"k", b"v", ()),),
    known: str | None = None,
    marker: tuple[bool, int, int] | None = None,
    **kw: Any,
) -> Case:
    """``known``: Kafka's exact message for the refusal, which BatchBuilder must give too."""
    marks: tuple[Any, ...] = ()
    if known is not None:
        KNOWN_MESSAGES[id] = f"{_IAE}: {known}"
        # Kafka's exact message for this refusal (BatchBuilder must give the same)
    return Case(id, magic, codec, _opts(**kw), records, marker=marker, marks=marks)


KNOWN_MESSAGES: dict[str, str] = {}


REFUSALS = [
    _refusal("v0-headers", 0, records=((0, 1, b"k", b"v", (("h", b"x"),)),)),
    _refusal("v1-headers-null-value", 1, "gzip", records=((0, 1, None, None, (("h", None),)),)),
    _refusal("v0-zstd", 0, "zstd"),
    _refusal("v1-zstd", 1, "zstd"),
    _refusal(
        "v0-transactional",
        0,
        is_transactional=True,
        producer_id=1,
        producer_epoch=0,
        base_sequence=0,
    ),
    _refusal("v1-transactional", 1, "lz4", is_transactional=True),
    _refusal("v1-control", 1, is_control=True),
    _refusal("v0-delete-horizon", 0, delete_horizon_ms=5),
    _refusal("v1-delete-horizon-zero", 1, delete_horizon_ms=0),
    _refusal("v0-negative-timestamp", 0, records=((0, -2, None, b"v", ()),)),
    _refusal(
        "v1-negative-timestamp",
        1,
        "snappy",
        records=((0, 5, None, b"v", ()), (1, -3, None, b"v", ())),
    ),
    _refusal("v2-negative-timestamp", 2, records=((0, LONG_MIN, None, b"v", ()),)),
    _refusal(
        "v2-negative-timestamp-zstd",
        2,
        "zstd",
        records=((7, 5, b"a", b"b", ()), (8, -100, b"a", b"b", ())),
        base_offset=7,
    ),
    _refusal("v0-same-offset", 0, records=((3, 1, None, b"a", ()), (3, 2, None, b"b", ()))),
    _refusal(
        "v1-decreasing-offset", 1, "gzip", records=((10, 1, None, b"a", ()), (9, 2, None, b"b", ()))
    ),
    _refusal("v2-same-offset", 2, records=((0, 1, None, b"a", ()), (0, 2, None, b"b", ()))),
    _refusal(
        "v2-decreasing-offset-lz4",
        2,
        "lz4",
        records=((LONG_MAX, 1, None, b"a", ()), (0, 2, None, b"b", ())),
        base_offset=LONG_MAX,
    ),
    _refusal(
        "v2-offset-delta-too-large",
        2,
        records=((0, 1, None, b"a", ()), (INT_MAX + 1, 2, None, b"b", ())),
    ),
    _refusal(
        "v1-offset-delta-too-large",
        1,
        records=((10, 1, None, b"a", ()), (11 + INT_MAX, 2, None, b"b", ())),
        base_offset=10,
    ),
    _refusal("v2-null-header-key", 2, records=((0, 1, None, b"a", ((None, b"x"),)),)),  # type: ignore[arg-type]
    # --- Kafka's build-time producer-state and timestamp checks ---
    _refusal(
        "v0-producer-id",
        0,
        producer_id=5,
        producer_epoch=0,
        base_sequence=0,
        known="Idempotent messages are not supported for magic 0",
    ),
    _refusal(
        "v1-producer-id",
        1,
        "gzip",
        producer_id=5,
        producer_epoch=0,
        base_sequence=0,
        known="Idempotent messages are not supported for magic 1",
    ),
    _refusal(
        "v2-transactional-no-producer-id",
        2,
        is_transactional=True,
        known="Cannot write transactional messages without a valid producer ID",
    ),
    _refusal(
        "v2-producer-id-no-epoch",
        2,
        producer_id=5,
        base_sequence=0,
        known="Invalid negative producer epoch",
    ),
    _refusal(
        "v2-producer-id-no-sequence",
        2,
        "snappy",
        producer_id=5,
        producer_epoch=1,
        known="Invalid negative sequence number used",
    ),
    _refusal(
        "v2-data-record-in-control-batch",
        2,
        is_control=True,
        known="Control records can only be appended to control batches",
    ),
    _refusal(
        "v1-log-append-time-negative",
        1,
        timestamp_type="LogAppendTime",
        log_append_time=-5,
        known="Invalid message timestamp -5",
    ),
    _refusal(
        "v0-log-append-time-negative",
        0,
        "lz4",
        timestamp_type="LogAppendTime",
        log_append_time=-5,
        known="Invalid message timestamp -5",
    ),
    _refusal(
        "v2-marker-no-producer-id",
        2,
        records=(),
        marker=(True, 0, 5),
        known="End transaction marker requires a valid producerId",
    ),
    _refusal(
        "v2-marker-no-epoch",
        2,
        records=(),
        marker=(False, 0, 5),
        producer_id=3,
        known="Invalid negative producer epoch",
    ),
    _refusal(
        "v2-marker-negative-timestamp",
        2,
        records=(),
        marker=(True, 0, -7),
        producer_id=3,
        producer_epoch=0,
    ),
]

# ------------------------------------------------------------------------------------------
# one JVM for everything


@dataclass
class JavaResults:
    encoded: dict[str, bytes | str]
    decoded: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def java() -> Iterator[JavaResults]:
    from conformance.jvm.oracle import OracleServer

    everything = [*CASES, *EMPTY_CASES, *REFUSALS]
    assert len({c.id for c in everything}) == len(everything), "duplicate case ids"
    with OracleServer() as server:
        results = server.write_batches([c.java_spec() for c in everything])
        encoded = {c.id: r for c, r in zip(everything, results, strict=True)}
        to_decode = {c.id for c in CASES}
        decoded = {
            c.id: server.decode(r)
            for c, r in zip(everything, results, strict=True)
            if isinstance(r, bytes) and c.id in to_decode
        }
    yield JavaResults(encoded, decoded)


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.id, marks=c.marks) for c in cases]


def _java_bytes(java: JavaResults, case: Case) -> bytes:
    out = java.encoded[case.id]
    assert isinstance(out, bytes), f"Kafka's builder refused a valid case: {out}"
    return out


# ------------------------------------------------------------------------------------------
# tests


def test_generator_coverage() -> None:
    by = {(m, c): 0 for m in (0, 1, 2) for c in CODECS[m]}
    for case in CASES:
        by[(case.magic, case.codec)] += 1
    assert all(n >= 80 for n in by.values()), by
    generated = [c for c in CASES if c.marks == ()]
    assert any(c.marker for c in generated)
    assert any(c.opts["delete_horizon_ms"] >= 0 for c in generated)
    assert any(c.opts["is_transactional"] for c in generated)
    assert any(c.opts["timestamp_type"] == "LogAppendTime" for c in generated if c.magic == 1)
    assert any(h[0] and not h[0].isascii() for c in generated for r in c.records for h in r[4])
    assert any(h[1] is None for c in generated for r in c.records for h in r[4])
    assert any(r[1] == LONG_MAX for c in generated for r in c.records)
    assert any(r[1] == -1 for c in generated if c.magic == 2 for r in c.records)


_NONE = [c for c in [*CASES, *EMPTY_CASES] if c.codec == "none"]


@pytest.mark.parametrize("case", _params(_NONE))
def test_uncompressed_bytes_identical(java: JavaResults, case: Case) -> None:
    expected = _java_bytes(java, case)
    actual = case.python_build()
    assert actual.hex() == expected.hex()


@pytest.mark.parametrize("case", _params([c for c in EMPTY_CASES if c.codec != "none"]))
def test_empty_compressed_builder(java: JavaResults, case: Case) -> None:
    # compressed bytes are not compared, but "no bytes at all" is
    assert _java_bytes(java, case) == b""
    assert case.python_build() == b""


def _decode_params() -> list[Any]:
    return [pytest.param(c, id=c.id) for c in CASES]


@pytest.mark.parametrize("case", _decode_params())
def test_java_bytes_decode(java: JavaResults, case: Case) -> None:
    data = _java_bytes(java, case)
    result = decode(data)
    assert result.outcome == "ok", result.error
    got = [
        (r.offset, r.timestamp, r.key, r.value, tuple(tuple(h) for h in r.headers))
        for r in result.records
    ]
    assert got == case.expected_records()
    doc = result.to_dict()
    assert diff(java.decoded[case.id], doc) == []

    batches = doc["batches"]
    legacy_uncompressed = case.magic < 2 and case.codec == "none"
    assert len(batches) == (len(case.records) if legacy_uncompressed else 1)
    for b in batches:
        assert b["magic"] == case.magic
        assert b["compression"] == case.codec
        if case.magic > 0 and case.marker is None:
            assert b["timestampType"] == case.opts["timestamp_type"]
    if case.magic == 2:
        b, o = batches[0], case.opts
        dh = o["delete_horizon_ms"]
        assert (
            b["baseOffset"],
            b["producerId"],
            b["producerEpoch"],
            b["baseSequence"],
            b["partitionLeaderEpoch"],
            b["isTransactional"],
            b["isControl"],
            b["deleteHorizonMs"],
        ) == (
            str(o["base_offset"]),
            str(o["producer_id"]),
            o["producer_epoch"],
            o["base_sequence"],
            o["partition_leader_epoch"],
            o["is_transactional"] or case.marker is not None,
            o["is_control"] or case.marker is not None,
            str(dh) if dh >= 0 else None,
        )


@pytest.mark.parametrize("case", _params(REFUSALS))
def test_refusals_match_kafka(java: JavaResults, case: Case) -> None:
    java_error = java.encoded[case.id]
    assert isinstance(java_error, str), "Kafka's builder accepted this case"
    assert java_error.startswith(_IAE + ": "), java_error
    if case.id in KNOWN_MESSAGES:
        assert java_error == KNOWN_MESSAGES[case.id]
    with pytest.raises(EncodeError) as info:
        case.python_build()
    ours = f"{info.value.kafka_exception}: {info.value}"
    assert ours == java_error


def test_oracle_encode_one_shot() -> None:
    """``write_batches`` without a server runs the one-shot ``encode`` sub-command."""
    from conformance.jvm.oracle import write_batches

    ok = EXTRA_CASES[1]
    out = write_batches([ok.java_spec(), REFUSALS[0].java_spec(), EMPTY_CASES[0].java_spec()])
    assert out == [ok.python_build(), f"{_IAE}: Magic v0 does not support record headers", b""]
    with pytest.raises(ValueError, match="unknown member"):
        write_batches([{"magic": 2, "bogus": 1}])
