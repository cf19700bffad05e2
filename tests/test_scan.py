"""``stream.scan`` / ``stream.resync``: a verdict for every byte of a damaged segment, the same
whichever batch-aligned ranges it is cut into.

Expectations come from construction (where the kit's writer put each batch) and from the
decoder itself on the same bytes (``decode(..., mode="file")`` from the damaged position is
what Kafka's file reader does there, held to Kafka by the oracle tests)."""

from __future__ import annotations

import os
import random
import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.codecs import CODEC_IDS, DEFAULT_DECOMPRESSED_LIMIT
from conformance.logdir.writer import assign_offsets
from conformance.replay.inputs import InputFile
from conformance.replay.plan import plan_file
from conformance.stream.decoder import decode
from conformance.stream.resync import find_next_batch, is_batch_start
from conformance.stream.scan import scan
from conformance.wire.builder import BatchBuilder, write_batch
from conformance.wire.control import write_control_key, write_end_txn_marker_value
from conformance.wire.layout import TimestampType

CODECS = tuple(CODEC_IDS)  # every codec


def _segment(n: int = 30, seed: int = 7) -> tuple[bytes, list[int], list[bytes]]:
    rng = random.Random(seed)
    batches = []
    for i in range(n):
        records = [
            (
                1_700_000_000_000 + i * 100 + j,
                b"key-%d" % j,
                bytes(rng.getrandbits(8) for _ in range(20)) + b"value" * rng.randint(0, 40),
            )
            for j in range(rng.randint(1, 12))
        ]
        batches.append(write_batch(records, compression=CODECS[i % len(CODECS)]))
    batches = assign_offsets(batches)
    legacy = [
        BatchBuilder(magic=m, compression=c, base_offset=o)
        for m, c, o in ((0, "none", 10_000), (1, "gzip", 10_001), (1, "none", 10_005))
    ]
    for j, b in enumerate(legacy):
        for k in range(1 if j != 1 else 4):
            b.append(1_700_000_100_000 + k, None, b"legacy-%d" % k)
    batches += [b.build() for b in legacy]
    positions = []
    p = 0
    for b in batches:
        positions.append(p)
        p += len(b)
    return b"".join(batches), positions, batches


DATA, POS, BATCHES = _segment()


def _regions(data: bytes, **kw: object) -> list[tuple]:
    return [
        (
            r.position,
            r.size,
            r.verdict,
            r.base_offset,
            r.last_offset,
            r.record_count,
            r.kafka_exception,
            r.message,
        )
        for r in scan(data, **kw)
    ]  # type: ignore[arg-type]


def _kafka_error(data: bytes, p: int) -> tuple[str | None, str | None]:
    result = decode(data[p:], mode="file")
    assert result.outcome == "error"
    return result.error.kafka_exception, result.error.message


def test_intact_segment_one_ok_region_per_batch() -> None:
    regions = list(scan(DATA))
    assert [r.position for r in regions] == POS
    assert [r.size for r in regions] == [len(b) for b in BATCHES]
    assert {r.verdict for r in regions} == {"ok"}
    whole = decode(DATA, mode="file")
    assert whole.outcome == "ok"
    assert [r.record_count for r in regions] == [len(b.records) for b in whole.batches]
    assert [r.last_offset for r in regions] == [b.header.last_offset for b in whole.batches]
    assert [r.magic for r in regions][-3:] == [0, 1, 1]
    assert regions[-2].base_offset == whole.batches[-2].records[0].offset  # legacy wrapper


def _damaged(kind: str, k: int) -> bytearray:
    d = bytearray(DATA)
    p = POS[k]
    if kind == "bitflip":
        d[p + 30] ^= 0x10
    elif kind == "size-small":
        d[p + 8 : p + 12] = struct.pack(">i", 5)
    elif kind == "size-large":
        d[p + 8 : p + 12] = struct.pack(">i", len(BATCHES[k]) + len(BATCHES[k + 1]) + 7 - 12)
    elif kind == "size-past-end":
        d[p + 8 : p + 12] = struct.pack(">i", 1 << 30)
    elif kind == "zero-fill":
        d[p + 40 : POS[k + 2] + 20] = bytes(POS[k + 2] + 20 - p - 40)
    return d


@pytest.mark.parametrize(
    "kind, resume_at",
    [
        ("bitflip", 1),
        ("size-small", 1),
        ("size-large", 1),
        ("size-past-end", 1),
        ("zero-fill", 3),
    ],
)
def test_damage_is_one_corrupt_region_and_the_rest_is_intact(kind: str, resume_at: int) -> None:
    k = 10
    data = bytes(_damaged(kind, k))
    regions = _regions(data)
    intact = _regions(DATA)
    bad = [r for r in regions if r[2] != "ok"]
    assert len(bad) == 1
    position, size, verdict, *_, exception, message = bad[0]
    assert (position, verdict) == (POS[k], "corrupt")
    assert size == POS[k + resume_at] - POS[k]
    # every other region is the intact file's
    assert [r for r in regions if r[2] == "ok"] == intact[:k] + intact[k + resume_at :]
    if kind == "size-past-end":  # Kafka's reader stops silently: no exception
        assert decode(data[POS[k] :], mode="file").outcome == "partial"
        assert exception is None and "stops here silently" in message
    else:
        assert (exception, message) == _kafka_error(data, POS[k])
    assert sum(r[1] for r in regions) == len(data)


def test_tails() -> None:
    torn = DATA[: POS[20] + 33]
    regions = _regions(torn)
    assert regions[-1][:3] == (POS[20], 33, "partial")
    assert decode(torn[POS[20] :], mode="file").outcome == "partial"
    zeros = DATA + bytes(5000)
    assert _regions(zeros)[-1][:3] == (len(DATA), 5000, "zero-tail")
    assert _regions(b"") == []
    assert _regions(b"\x00" * 10) == [
        (0, 10, "zero-tail", None, None, 0, None, "10 zero bytes to the end")
    ]


def test_resync_finds_nothing_in_noise_and_skips_zeros_fast() -> None:
    noise = random.Random(3).randbytes(1 << 20)
    assert find_next_batch(noise, -1) is None
    hole = bytes(64 << 20) + BATCHES[0]
    started = time.perf_counter()
    assert find_next_batch(hole, 0) == 64 << 20
    assert time.perf_counter() - started < 30  # a hole is skipped in C, not byte by byte
    assert is_batch_start(DATA, POS[3]) and not is_batch_start(DATA, POS[3] + 1)


def _plan(data: bytes, tmp_path: os.PathLike[str], split: int, with_index: bool) -> list:
    path = os.path.join(tmp_path, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(data)
    index = None
    if with_index:  # every batch start (also the damaged ones): the planner must check them
        index = os.path.join(tmp_path, "00000000000000000000.index")
        with open(index, "wb") as f:
            for p in POS:
                if p < len(data):
                    f.write(struct.pack(">ii", 0, p))
    f_ = InputFile(path, "segment", len(data), str(tmp_path), str(tmp_path), 0, index)
    return plan_file(f_, split)


@settings(max_examples=40, deadline=None)
@given(
    kinds=st.lists(
        st.sampled_from(["bitflip", "size-small", "size-large", "size-past-end", "zero-fill"]),
        min_size=0,
        max_size=3,
    ),
    split=st.integers(min_value=200, max_value=6000),
    with_index=st.booleans(),
    torn=st.booleans(),
)
def test_ranges_tile_the_file_like_one_walk(
    tmp_path_factory: pytest.TempPathFactory,
    kinds: list[str],
    split: int,
    with_index: bool,
    torn: bool,
) -> None:
    data = bytearray(DATA)
    for n, kind in enumerate(kinds):
        k = 3 + 8 * n
        part = _damaged(kind, k)
        lo, hi = POS[k], POS[k + 3]
        data[lo:hi] = part[lo:hi]
    if torn:
        data = data[: POS[-4] + 20]
    blob = bytes(data)
    whole = _regions(blob)
    ranges = _plan(blob, tmp_path_factory.mktemp("plan"), split, with_index)
    assert ranges[0].start == 0 and ranges[-1].end == len(blob)
    pieces = []
    for r in ranges:
        assert r.start in [w[0] for w in whole]  # every cut is a position the walk passes
        pieces += _regions(blob, start=r.start, end=r.end)
    assert pieces == whole
    assert sum(w[1] for w in whole) == len(blob)


# ------------------------------------------------------- the plain lane (native scan_plain)
def _plain_segment() -> bytes:
    """Plain batches only (what the lane takes): v2 without a codec, with and without
    headers and log-append time, and top-level v0/v1 messages, one of them with a null key."""
    rng = random.Random(5)
    batches = []
    for i in range(12):
        lat = i % 4 == 3
        b = BatchBuilder(
            magic=2,
            timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME,
            log_append_time=1_700_000_200_000 if lat else -1,
        )
        for j in range(rng.randint(1, 6)):
            b.append(1_700_000_000_000 + j, b"k%d" % j, b"v" * rng.randint(0, 30), [("h", b"x")])
        batches.append(b.build())
    batches = assign_offsets(batches)
    for n, m in enumerate((0, 1, 1, 0)):
        b = BatchBuilder(magic=m, base_offset=1000 + n)
        b.append(1_700_000_100_000, None if m else b"key", b"legacy")
        batches.append(b.build())
    return b"".join(batches)


PLAIN = _plain_segment()


def _both(data: bytes, **kw: object) -> tuple[list, list]:  # type: ignore[type-arg]
    """The regions with the plain lane and without it (the reference walk alone)."""
    with_lane = list(scan(data, **kw))  # type: ignore[arg-type]
    without = list(scan(data, plain_lane=False, **kw))  # type: ignore[arg-type]
    return with_lane, without


def test_the_plain_lane_takes_plain_batches() -> None:
    """Uncompressed ones only, unless given the decompressed limit (``scan`` gives it)."""
    from conformance.primitives import native

    if native.NATIVE is None:
        pytest.skip("the plain lane is the native extension's")
    rows, used, done, need = native.NATIVE.scan_plain(PLAIN, 0, len(PLAIN))
    assert len(rows) == 16 and used == len(PLAIN) and done and not need
    # from a later batch; a window cut inside a batch asks for that batch's size
    rows, used, done, need = native.NATIVE.scan_plain(PLAIN[:-10], rows[3][0], len(PLAIN))
    assert len(rows) == 12 and not done and need == len(PLAIN) - used  # the whole last batch
    assert native.NATIVE.scan_plain(PLAIN[: used + 16], used, len(PLAIN))[3] == 17  # a header
    with_lane, without = _both(PLAIN)
    assert with_lane == without and len(without) == 16
    assert {r.magic for r in without} == {0, 1, 2} and all(r.verdict == "ok" for r in without)


def test_the_plain_lane_takes_lz4_wrappers_of_either_header_checksum() -> None:
    """A magic-0 lz4 wrapper as Kafka's pre-0.10 writer made it (the header checksum over the
    magic bytes too, KAFKA-3160), which Kafka reads without checking it: the lane takes it,
    as it takes a magic-1 one, and the regions are the reference walk's."""
    from conformance.codecs import LZ4, read_whole
    from conformance.primitives import native
    from conformance.wire.legacy import LegacyBatch, write_legacy_message, write_legacy_wrapper

    if native.NATIVE is None:
        pytest.skip("the plain lane is the native extension's")
    wrappers = []
    for magic in (0, 1):
        inner = [write_legacy_message(magic, i, 1_600_000_000_000, b"k", b"v") for i in (0, 1)]
        wrappers.append(write_legacy_wrapper(magic, 3 + 4 * magic, 1_600_000_000_000, inner, LZ4))
    broken = LegacyBatch(wrappers[0]).message.value
    assert read_whole(LZ4, broken, DEFAULT_DECOMPRESSED_LIMIT) is None  # magic-2 rules refuse it
    data = b"".join(wrappers)
    rows, used, done, _ = native.NATIVE.scan_plain(data, 0, len(data), DEFAULT_DECOMPRESSED_LIMIT)
    assert [(r[2], r[5]) for r in rows] == [(0, 2), (1, 2)] and used == len(data) and done
    with_lane, without = _both(data)
    assert with_lane == without and [r.record_count for r in without] == [2, 2]


# control keys and values by the kit's writers (wire.control), with faults: short or null,
# negative versions, unknown types, trailing bytes
_CONTROL_KEYS = st.one_of(
    st.none(),
    st.binary(max_size=3),
    st.builds(
        lambda t, v, extra: write_control_key(t, v) + extra,
        st.sampled_from([0, 1, 2, 3, 6, 7, -1]),
        st.sampled_from([0, 1, -1]),
        st.sampled_from([b"", b"\x01"]),
    ),
)
_CONTROL_VALUES = st.one_of(
    st.none(),
    st.binary(max_size=5),
    st.builds(
        lambda epoch, v, extra: write_end_txn_marker_value(epoch, v) + extra,
        st.integers(-(1 << 31), (1 << 31) - 1),
        st.sampled_from([0, 2, -1]),
        st.sampled_from([b"", b"\x00\x07"]),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    records=st.lists(st.tuples(_CONTROL_KEYS, _CONTROL_VALUES), min_size=1, max_size=3),
    codec=st.sampled_from([CODEC_IDS[c] for c in CODECS]),
)
def test_the_plain_lane_takes_the_control_batches_the_reference_parses(
    records: list[tuple[bytes | None, bytes | None]], codec: int
) -> None:
    """A control batch is the lane's when the reference parses every one of its records as
    a control record (``wire.control.attach_control``), else the reference walk's; either
    way, every region is the reference walk's."""
    from conformance.corpus.crafted._build import control_batch, simple_batch, v2_record
    from conformance.errors import DecodeError
    from conformance.primitives import native
    from conformance.wire.control import attach_control
    from conformance.wire.layout import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK
    from conformance.wire.record import Record

    if native.NATIVE is None:
        pytest.skip("the plain lane is the native extension's")
    control = control_batch(
        [v2_record(k, v, offset_delta=i) for i, (k, v) in enumerate(records)],
        attributes=TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK | codec,
    )
    parsed = True
    for i, (key, value) in enumerate(records):  # the reference's parse of each record
        try:
            attach_control(Record(10 + i, 0, key, value, ()))
        except DecodeError:
            parsed = False
    rows, _, _, _ = native.NATIVE.scan_plain(control, 0, len(control), DEFAULT_DECOMPRESSED_LIMIT)
    assert len(rows) == (1 if parsed else 0)
    if parsed:
        assert rows[0][5] == len(records)
    data = simple_batch(2) + control + simple_batch(2, base_offset=20)
    with_lane, without = _both(data)
    assert with_lane == without
    assert [r.verdict for r in without][1] == ("ok" if parsed else "corrupt")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # the fixture is only used through monkeypatch.context(), undone after each example
@given(
    flips=st.lists(
        st.tuples(st.integers(0, len(PLAIN) - 1), st.integers(1, 255)), min_size=1, max_size=3
    ),
    cut=st.integers(0, 40),
    mixed=st.booleans(),
    ranged=st.integers(0, 3),
    sliced=st.booleans(),
    chunk=st.sampled_from([40, 300, 256 * 1024, -300]),  # < 0: also a cap of 100 bytes
)
def test_the_plain_lane_gives_the_reference_walks_regions(
    monkeypatch: pytest.MonkeyPatch,
    flips: list[tuple[int, int]],
    cut: int,
    mixed: bool,
    ranged: int,
    sliced: bool,
    chunk: int,
) -> None:
    """Damage anywhere in plain batches (bytes flipped, the file cut short), alone or mixed
    with compressed ones: every region, verdict, count and message is the reference walk's."""
    data = bytearray(PLAIN + DATA if mixed else PLAIN)
    for at, x in flips:
        data[at] ^= x
    blob = bytes(data[: len(data) - cut])
    kw: dict[str, object] = {}
    if ranged:  # a range that starts on the walk's path
        starts = [r.position for r in scan(blob)]
        kw = {"start": starts[min(ranged, len(starts) - 1)], "end": len(blob) - 50 * ranged}
    source = _Sliced(blob) if sliced else blob  # a source without a window of its own
    import conformance.stream.scan as scan_module

    with monkeypatch.context() as m:
        m.setattr(scan_module, "PLAIN_CHUNK", abs(chunk))  # small: batches across chunk ends
        if chunk < 0:  # larger batches are left to the reference walk
            m.setattr(scan_module, "PLAIN_MAX_BATCH", 100)
        with_lane, without = _both(source, **kw)  # type: ignore[arg-type]
    assert with_lane == without


class _Sliced:
    """A source that only slices (like a remote file): the lane reads it in chunks."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, item: slice) -> bytes:
        return self.data[item]


def test_the_plain_lane_on_every_corpus_segment_and_a_synthetic_corpus(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Every .log file of corpora/ (segments captured from real brokers, crafted ones) and a
    synthetic corpus with planted damage (``synth``): the same regions with and without the
    plain lane, which takes part of them."""
    from pathlib import Path

    from conformance.corpus.synth import synthesize
    from conformance.fileio import FileSource
    from conformance.primitives import native

    root = Path(__file__).resolve().parent.parent
    synth = tmp_path_factory.mktemp("synth") / "corpus"
    synthesize(synth, 2_000_000, corrupt=6, seed=3)
    files = sorted((root / "corpora").rglob("*.log")) + sorted(synth.rglob("*.log"))
    assert len(files) > 300
    taken = {"plain": 0, "compressed": 0}
    for f in files:
        with FileSource(f) as source:
            with_lane, without = _both(source)  # type: ignore[arg-type]
        assert with_lane == without, f
        if native.NATIVE is not None:
            data = f.read_bytes()
            taken["plain"] += len(native.NATIVE.scan_plain(data, 0, len(data))[0])
            rows = native.NATIVE.scan_plain(data, 0, len(data), DEFAULT_DECOMPRESSED_LIMIT)[0]
            taken["compressed"] += sum(1 for row in rows if row[6])  # its codec
    # the lane took part (from each file's start), compressed batches too
    assert native.NATIVE is None or taken["plain"] > 500 and taken["compressed"] > 200, taken
