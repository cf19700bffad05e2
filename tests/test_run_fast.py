"""The decoder's native lane (``conformance/stream/_run_fast.py``, ``native/src/run.rs``):
runs of whole batches decided in one call, held to the reference.

``tests/test_fast_path.py`` compares every corpus stream decoded natively (lane included) with
the reference; here: that the lane really takes batches from those corpora and stops at
others, that every header slot it fills equals the reference's, that ``keep`` and the record
limit come out the same, that a stream longer than one run is walked whole, that a codec's
fast path raising stops the run without a word of its own, and that its objects are the
reference's classes, untracked by the garbage collector and still usable.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_codec_whole import PAYLOAD_STRATEGIES, mutation
from test_codec_whole import _mutate as mutate
from test_fast_path import CASES

from conformance import codecs
from conformance.errors import Allocations
from conformance.fileio import FileSource
from conformance.primitives import native
from conformance.stream import _run_fast
from conformance.stream.decoder import StreamDecoder, decode
from conformance.stream.result import DecodedBatch
from conformance.stream.scan import scan
from conformance.wire import batch as batch_module
from conformance.wire.batch import RecordBatchV2, write_batch_v2
from conformance.wire.builder import BatchBuilder
from conformance.wire.legacy import LegacyBatch, write_legacy_message, write_legacy_wrapper
from conformance.wire.record import Record, RecordList, write_record_v2

pytestmark = pytest.mark.skipif(
    native.NATIVE is None, reason="the native extension is not in use (scripts/build-native)"
)


def _stream(batches: int, records: int, codec: str = "none", **kw: Any) -> bytes:
    parts = []
    for i in range(batches):
        b = BatchBuilder(compression=codec, base_offset=i * records, **kw)
        for j in range(records):
            b.append(1_700_000_000_000 + j, b"k%d" % j, b"v" * (j % 7), [("h", b"x")])
        parts.append(b.build())
    return b"".join(parts)


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_module, "FAST_PATH", False)


def _header(b: DecodedBatch) -> tuple[Any, ...]:
    """Every slot of the header (a v0/v1 entry's message: every slot of it too)."""
    h = b.header
    if isinstance(h, LegacyBatch):
        message = tuple(getattr(h.message, s) for s in _run_fast.MESSAGE_SLOTS)
        return (type(h.message), message, *(getattr(h, s) for s in _run_fast.LEGACY_SLOTS[:-1]))
    return tuple(getattr(h, s, None) for s in _run_fast.HEADER_SLOTS)


def _walk(data: bytes, mode: str = "memory", **kw: Any) -> tuple[Any, ...]:
    sd = StreamDecoder(data, mode=mode, **kw)  # type: ignore[arg-type]
    batches = [
        (type(b.header), _header(b), b.records.total, list(b.records), b.records.dropped)
        for b in sd
    ]
    return sd.outcome, sd.error and sd.error.to_dict(), sd.tail, sd.batch_count, batches


def test_the_lane_takes_batches_of_the_corpora_and_stops_at_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    taken = {"batches": 0, "v0/v1 messages": 0, "v0/v1 wrappers": 0, "empty runs": 0}
    real = _run_fast.run

    def counting(*args: Any) -> Any:
        batches, stop = real(*args)
        taken["batches"] += len(batches)
        for b in batches:
            if isinstance(b.header, LegacyBatch):
                wrapper = b.header.compression_id != 0
                taken["v0/v1 wrappers" if wrapper else "v0/v1 messages"] += 1
        taken["empty runs"] += not batches
        return batches, stop

    monkeypatch.setattr(_run_fast, "run", counting)
    for _, data, mode in CASES[:: max(1, len(CASES) // 600)]:
        decode(data, mode=mode)  # type: ignore[arg-type]
    assert taken["batches"] > 100 and taken["empty runs"] > 100, taken
    assert taken["v0/v1 messages"] > 20 and taken["v0/v1 wrappers"] > 20, taken


def test_every_header_slot_and_record_equals_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over every corpus stream (the canonical JSON leaves some header slots out)."""
    walks = [(cid, data, mode, _walk(data, mode)) for cid, data, mode in CASES]
    _reference(monkeypatch)
    for cid, data, mode, got in walks:
        assert got == _walk(data, mode), cid


@pytest.mark.parametrize("codec", sorted(c.name for c in codecs.CODECS.values()))
@pytest.mark.parametrize("keep", [None, 0, 1, 3])
def test_keep_and_the_limit_come_out_as_the_reference_s(
    codec: str, keep: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _stream(6, 4, codec) + _stream(2, 9, codec, timestamp_type="LogAppendTime")
    walks = {
        "keep": _walk(data, keep=keep),
        "limit": _walk(data, max_records=5),  # the 9-record batches raise RecordLimitError
    }
    assert walks["limit"][0] == "error"
    _reference(monkeypatch)
    assert walks == {"keep": _walk(data, keep=keep), "limit": _walk(data, max_records=5)}


def test_a_stream_longer_than_a_run_is_walked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_run_fast, "RUN_BYTES", 4096)
    data = _stream(300, 3) + b"\x00" * 5  # and a partial tail
    calls = []
    real = _run_fast.run
    monkeypatch.setattr(_run_fast, "run", lambda *a: calls.append(a[1]) or real(*a))
    got = _walk(data)
    assert got[0] == "partial" and got[3] == 300 and len(calls) > 5
    _reference(monkeypatch)
    assert got == _walk(data)


def test_a_codec_fast_path_that_raises_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _stream(3, 2, "none") + _stream(1, 2, "gzip") + _stream(2, 2, "none")
    calls = {"n": 0}
    real = codecs.read_whole

    def failing(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise MemoryError("only the lane's call fails")
        return real(*args)

    monkeypatch.setattr(codecs, "read_whole", failing)
    with Allocations():  # the watch: the lane calls the Python fast paths
        got = _walk(data)
    assert calls["n"] == 2  # the lane's call, then the reference's own
    assert got[0] == "ok" and got[3] == 6
    _reference(monkeypatch)
    assert got == _walk(data)


def test_its_objects_are_the_reference_classes_untracked_and_usable() -> None:
    batches = decode(_stream(2, 3)).batches + decode(_stream(1, 0)).batches
    for b in batches:
        assert type(b) is DecodedBatch and type(b.header) is RecordBatchV2
        assert type(b.records) is RecordList
        assert not gc.is_tracked(b) and not gc.is_tracked(b.header)
        assert not gc.is_tracked(b.records)
    first = batches[0]
    assert first.base_offset == 0 and first.last_offset == 2 and first.header.is_valid()
    assert [r.offset for r in first] == [0, 1, 2] and first.records[1].key == b"k1"
    extra = Record(3, 0, None, b"x", ())
    first.records.append(extra)  # the lazy rows become a list of the record list's own
    assert list(first.records)[-1] is extra and first.records.total == 4
    gc.collect()
    assert [r.offset for r in batches[0]] == [0, 1, 2, 3]


# ------------------------------------------------------- payloads read natively (whole.rs)

_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _region(draw: st.DrawFn) -> tuple[int, bytes]:
    n = draw(st.integers(1, 40))
    values = draw(st.sampled_from([b"", b"v", b"kafka " * 30]))
    return n, b"".join(write_record_v2(i, i, b"k%d" % i, values * (i % 3)) for i in range(n))


@st.composite
def compressed_batches(draw: st.DrawFn, codec: int) -> bytes:
    """A v2 batch of ``codec`` whose payload is a framing of a records region made by the
    real writers (Java's, or with a fault knob), then possibly cut or flipped."""
    n, region = _region(draw)
    payload = draw(PAYLOAD_STRATEGIES[codec](st.just(region)))
    payload = mutate(payload, *draw(st.one_of(st.just((0, None)), mutation)))
    return write_batch_v2(attributes=codec, count=n, payload=payload)


COMPRESSED = sorted(c for c in codecs.CODECS if c != codecs.NONE)


@pytest.mark.parametrize("codec", COMPRESSED, ids=codecs.codec_name)
@_SETTINGS
@given(data=st.data(), limit=st.sampled_from([1 << 20, 1 << 20, 64, 0]))
def test_payloads_read_natively_are_the_reference_s(
    codec: int, data: st.DataObject, limit: int
) -> None:
    """The extension's codec readers (``native/src/whole.rs``) against the reference, and
    against the lane with the Python fast paths (an ``Allocations`` watch on)."""
    stream = _stream(1, 2) + data.draw(compressed_batches(codec)) + _stream(1, 1)
    native_walk = _walk(stream, decompressed_limit=limit)
    with Allocations():
        python_walk = _walk(stream, decompressed_limit=limit)
    with _no_fast_path():
        assert native_walk == _walk(stream, decompressed_limit=limit) == python_walk


@st.composite
def legacy_entries(draw: st.DrawFn, codec: int) -> bytes:
    """A v0/v1 entry made by the real writers: a message, or a ``codec`` wrapper of inner
    messages (some with a fault knob: a wrong CRC, a compressed inner message, a lying key
    length, trailing bytes), its payload framed by a strategy of ``test_codec_whole`` and
    possibly cut or flipped; wrapper offsets 0, past, or below the last inner offset."""
    magic = draw(st.sampled_from([0, 1]))
    lat = draw(st.sampled_from([0, 0x08])) if magic == 1 else 0
    n = draw(st.integers(1, 6))
    fault = draw(st.sampled_from([None, None, None, "crc", "inner-codec", "key", "trailing"]))
    at = draw(st.integers(0, n - 1))
    inner = [
        write_legacy_message(
            magic,
            i,
            1_700_000_000_000 + i,
            b"k%d" % i,
            b"kafka " * (i % 4),
            **(
                {}
                if fault is None or i != at
                else {
                    "crc": {"crc": 7},
                    "inner-codec": {"attributes": codec},
                    "key": {"key_length": 1 << 20},
                    "trailing": {"trailing": b"x"},
                }[fault]
            ),
        )
        for i in range(n)
    ]
    offset = draw(st.sampled_from([0, n - 1, 1000, max(0, n - 3)]))
    if draw(st.booleans()):  # one message, no codec
        return inner[0]
    payload = draw(PAYLOAD_STRATEGIES[codec](st.just(b"".join(inner))))
    payload = mutate(payload, *draw(st.one_of(st.just((0, None)), mutation)))
    return write_legacy_wrapper(magic, offset, 1_800_000_000_000, [], codec, lat, payload=payload)


LEGACY_CODECS = [c.id for c in codecs.legacy_codecs() if c.id != codecs.NONE]


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=codecs.codec_name)
@_SETTINGS
@given(data=st.data(), limit=st.sampled_from([1 << 20, 1 << 20, 64]))
def test_legacy_entries_read_natively_are_the_reference_s(
    codec: int, data: st.DataObject, limit: int
) -> None:
    """v0/v1 messages and wrappers: the lane against the reference and against the lane
    with the Python fast paths; the replay's walk with its lane against the walk without."""
    entries = [data.draw(legacy_entries(codec)) for _ in range(data.draw(st.integers(1, 3)))]
    stream = _stream(1, 2) + b"".join(entries) + _stream(1, 1)
    native_walk = _walk(stream, "file", keep=1, decompressed_limit=limit)
    with Allocations():
        python_walk = _walk(stream, "file", keep=1, decompressed_limit=limit)
    with _no_fast_path():
        reference = _walk(stream, "file", keep=1, decompressed_limit=limit)
    assert native_walk == reference == python_walk
    with_lane = list(scan(stream, decompressed_limit=limit))
    assert with_lane == list(scan(stream, decompressed_limit=limit, plain_lane=False))


def test_legacy_wrappers_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane takes intact wrappers of every legacy codec, v0 and v1, LogAppendTime too,
    without a Python codec call; the replay's lane takes them as regions."""
    calls = []
    real = codecs.read_whole
    monkeypatch.setattr(codecs, "read_whole", lambda *a: calls.append(a) or real(*a))
    entries = []
    for codec in LEGACY_CODECS:
        for magic, attributes, offset in [(0, 0, 9), (1, 0, 0), (1, 0x08, 40)]:
            inner = [write_legacy_message(magic, i, 5 + i, b"k", b"v" * i) for i in range(3)]
            entries.append(write_legacy_wrapper(magic, offset, 77, inner, codec, attributes))
    data = b"".join(entries)
    taken: list[DecodedBatch] = []
    real_run = _run_fast.run

    def counting(*args: Any) -> Any:
        batches, stop = real_run(*args)
        taken.extend(batches)
        return batches, stop

    monkeypatch.setattr(_run_fast, "run", counting)
    got = _walk(data, "file")
    # every one, the v0 lz4 wrapper too: Kafka's magic-0 writer puts a wrong header checksum in
    # its frame, which Kafka does not check under magic 0 (whole.rs reads it so; the Python
    # fast path, magic-2 rules, declines it, and the reference's stream model reads it)
    assert got[0] == "ok" and calls == []
    assert [b.header.raw for b in taken] == entries
    assert [r.timestamp for r in taken[2].records] == [77] * 3  # the v1 wrapper's LogAppendTime
    assert [r.offset for r in taken[2].records] == [38, 39, 40]  # relative inner offsets
    with _no_fast_path():
        assert _walk(data, "file") == got
    rows = native.NATIVE.scan_plain(data, 0, len(data), codecs.DEFAULT_DECOMPRESSED_LIMIT)[0]
    assert len(rows) == len(entries)
    assert {row[6] for row in rows} == set(LEGACY_CODECS)
    assert [(row[3], row[4], row[5]) for row in rows[:3]] == [(0, 9, 3), (0, 0, 3), (38, 40, 3)]


@pytest.mark.parametrize("codec", COMPRESSED, ids=codecs.codec_name)
def test_java_s_framing_is_read_natively(codec: int, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = codecs.read_whole
    monkeypatch.setattr(codecs, "read_whole", lambda *a: calls.append(a) or real(*a))
    data = _stream(50, 7, codecs.codec_name(codec))
    got = _walk(data)
    assert got[0] == "ok" and got[3] == 50 and calls == []  # no Python codec call
    with Allocations():  # the watch: payloads through the Python paths, which record them
        assert _walk(data) == got and len(calls) == 50


class _no_fast_path:
    def __enter__(self) -> None:
        self.saved = batch_module.FAST_PATH
        batch_module.FAST_PATH = False

    def __exit__(self, *exc: object) -> None:
        batch_module.FAST_PATH = self.saved


@pytest.mark.parametrize("read_ahead", [64, 1000, 1 << 18])
def test_a_file_is_read_through_its_windows(
    tmp_path: Any, read_ahead: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify-dir's reads (``FileSource``, file mode, ``keep=1``): batches straddling the
    read-ahead windows, a mix of codecs and a v1 message set, the same walk as the
    reference's, from a file start past 0 too."""
    legacy = BatchBuilder(magic=1, base_offset=99)
    legacy.append(1_700_000_000_000, b"k", b"v")
    data = (
        _stream(5, 3)
        + _stream(3, 40, "lz4")
        + legacy.build()
        + _stream(4, 9, "zstd")
        + _stream(2, 2)
        + b"\x00" * 7
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    monkeypatch.setattr(FileSource, "read_ahead", read_ahead)
    offset = len(_stream(1, 3))

    def walks() -> list[tuple[Any, ...]]:
        return [_walk(FileSource(path, start=start), "file", keep=1) for start in (0, offset)]

    taken = []
    real = _run_fast.run
    monkeypatch.setattr(_run_fast, "run", lambda *a: (r := real(*a)) and taken.extend(r[0]) or r)
    got = walks()
    assert got[0][0] == "partial" and got[0][3] == 15
    assert len(taken) == 15 + 14  # all, the v1 message set too (from the offset: one fewer)
    _reference(monkeypatch)
    assert got == walks()
