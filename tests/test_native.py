"""The native extension (``native/``, docs/native.md) against the pure reference.

The corpora comparison lives in tests/test_fast_path.py (every corpus input through both fast
paths and the reference); here: how the extension is chosen, its API on its own (rows, lazy
sequence, declines, CRC-32C), and a Hypothesis property over the public strategies. Every
expectation is the reference reader's output or the pure CRC, never the extension's own.
"""

from __future__ import annotations

import copy
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings

from conformance import codecs, decode, strategies
from conformance.primitives import native
from conformance.primitives.crc import crc32c_pure
from conformance.wire import batch
from conformance.wire._record_fast import record_maker
from conformance.wire.builder import BatchBuilder
from conformance.wire.layout import RECORDS_OFFSET
from conformance.wire.legacy import LegacyBatch, write_legacy_message, write_legacy_wrapper
from conformance.wire.record import Raw, Record, RecordList, read_region, write_record_v2

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ext() -> ModuleType:
    try:
        import kafka_conformance_native as module
    except ImportError:
        if os.environ.get("KAFKA_CONFORMANCE_NATIVE") == "require":
            pytest.fail("the native extension is required here but not installed")
        pytest.skip("the native extension is not installed (scripts/build-native)")
    return module


def _implementation(env: dict[str, str]) -> str:
    code = "from conformance.primitives import native; print(native.implementation())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return out.stdout.strip()


def test_required_native_is_in_use() -> None:
    """CI (tox sets KAFKA_CONFORMANCE_NATIVE=require) must test the native path, not skip it."""
    if os.environ.get("KAFKA_CONFORMANCE_NATIVE") != "require":
        pytest.skip("native not required in this environment")
    assert native.NATIVE is not None, native.implementation()
    assert native.implementation().startswith("native (kafka_conformance_native ")


def test_pure_is_forced_by_the_environment(ext: ModuleType) -> None:
    assert _implementation({"KAFKA_CONFORMANCE_PURE": "1"}) == (
        "pure (KAFKA_CONFORMANCE_PURE is set)"
    )
    assert _implementation({"KAFKA_CONFORMANCE_PURE": "0"}).startswith("native (")


def test_switched_off_says_so(ext: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "NATIVE", None)
    assert native.implementation().startswith("pure")


# --- the rows -------------------------------------------------------------------------------

HEADERS = [("trace", b"t-1"), ("h", None), ("\u00e9t\u00e9", b""), ("trace", b"t-2")]


def _batch(n: int = 40, **options: object) -> bytes:
    b = BatchBuilder(magic=2, base_offset=1000, **options)  # type: ignore[arg-type]
    for i in range(n):
        key = None if i % 7 == 3 else f"k{i}".encode()
        value = None if i % 5 == 4 else bytes([i % 251]) * (i * 13 % 300)
        b.append(1_700_000_000_000 + i * 977, key, value, HEADERS[: i % 5])
    return b.build()


def _reference_rows(region: bytes, count: int, base_offset: int, base_ts: int) -> list[tuple]:  # type: ignore[type-arg]
    records: list[Record] = []
    read_region(region, count, base_offset, base_ts, None, records)
    return [
        (
            r.offset,
            r.timestamp,
            r.key,
            r.value,
            r.headers,
            r.attributes,
            r.offset_delta,
            r.timestamp_delta,
            r.magic,
            r.crc,
            r.size,
        )
        for r in records
    ]


def _args(raw: bytes) -> tuple[int, int, int]:
    header = batch.RecordBatchV2(raw, 0)
    return header.records_count, header.base_offset, header.base_timestamp


def test_rows_equal_the_reference_reader(ext: ModuleType) -> None:
    raw = _batch()
    count, base_offset, base_ts = _args(raw)
    expected = _reference_rows(raw[RECORDS_OFFSET:], count, base_offset, base_ts)
    rows = ext.read_records_v2(raw, RECORDS_OFFSET, count, base_offset, base_ts, None, count)
    assert rows is not None
    assert len(rows) == count == len(expected)
    assert list(rows) == expected
    assert rows[0] == expected[0] and rows[-1] == expected[-1] and rows[17] == expected[17]
    assert rows[3:30:4] == expected[3:30:4]
    assert rows[::-1] == expected[::-1]
    with pytest.raises(IndexError):
        rows[count]
    with pytest.raises(IndexError):
        rows[-count - 1]
    # copied or pickled, the lazy rows become the plain list the Python loop makes
    assert copy.deepcopy(rows) == expected
    assert pickle.loads(pickle.dumps(rows)) == expected


def test_log_append_time_and_keep(ext: ModuleType) -> None:
    raw = _batch(25)
    count, base_offset, base_ts = _args(raw)
    rows = ext.read_records_v2(raw, RECORDS_OFFSET, count, base_offset, base_ts, 42, 10)
    assert rows is not None and len(rows) == 10
    assert {r[1] for r in rows} == {42}
    expected = _reference_rows(raw[RECORDS_OFFSET:], count, base_offset, base_ts)
    assert [r[:1] + r[2:] for r in rows] == [r[:1] + r[2:] for r in expected[:10]]
    assert len(ext.read_records_v2(raw, RECORDS_OFFSET, count, base_offset, base_ts, None, 0)) == 0


def _region(*records: bytes) -> bytes:
    return b"".join(records)


@pytest.mark.parametrize(
    "region,count",
    [
        # a header key that is not UTF-8: Java's replacement rules belong to the reference
        (_region(write_record_v2(0, 0, b"k", b"v", [(Raw(b"\xed\xa0\x80"), b"x")])), 1),
        # an offset-delta varint Java finds too long (a fifth byte with its high bit set)
        (_region(write_record_v2(b"\x80\x80\x80\x80\x80\x00", 0, b"k", b"v")), 1),
        # the region holds more (or fewer) records than the count says
        (_region(write_record_v2(0), write_record_v2(1)), 1),
        (_region(write_record_v2(0)), 2),
        # a record whose fields end before its length
        (_region(write_record_v2(0, trailing=b"\x00")), 1),
        # a negative header count
        (_region(write_record_v2(0, header_count=-1)), 1),
    ],
    ids=["utf8", "varint5", "more", "fewer", "trailing", "header-count"],
)
def test_declines_what_it_is_not_sure_about(ext: ModuleType, region: bytes, count: int) -> None:
    assert ext.read_records_v2(region, 0, count, 0, 0, None, count) is None


def test_declines_offsets_that_could_wrap(ext: ModuleType) -> None:
    region = write_record_v2(0)
    assert ext.read_records_v2(region, 0, 1, 0, 0, None, 1) is not None
    assert ext.read_records_v2(region, 0, 1, 2**62, 0, None, 1) is None
    assert ext.read_records_v2(region, 0, 1, 0, -(2**62), None, 1) is None
    assert ext.read_records_v2(region, 5, 1, 0, 0, None, 1) is None  # start past the end


def test_five_byte_varints_wrap_as_java_ints(ext: ModuleType) -> None:
    """The fifth byte of a varint gives its low 4 bits only (Java's int), as the reference."""
    for raw in (b"\x80\x80\x80\x80\x00", b"\xff\xff\xff\xff\x7f", b"\xfe\xff\xff\xff\x0f"):
        region = write_record_v2(raw, 0, b"k", b"v")
        expected = _reference_rows(region, 1, 0, 0)
        rows = ext.read_records_v2(region, 0, 1, 0, 0, None, 1)
        assert rows is not None and list(rows) == expected


def test_huge_count_over_a_short_region_is_declined_at_once(ext: ModuleType) -> None:
    assert ext.read_records_v2(write_record_v2(0), 0, 2**31 - 1, 0, 0, None, 2**31 - 1) is None


def test_crc32c_equals_the_pure_one(ext: ModuleType) -> None:
    rng = random.Random(7)
    for size in (0, 1, 7, 64, 1000, 70_000):
        data = rng.randbytes(size)
        for start in {0, min(size, 3), size // 2, size}:
            assert ext.crc32c(data, start) == crc32c_pure(data[start:])
    with pytest.raises(ValueError, match="past the end"):
        ext.crc32c(b"abc", 4)


def test_record_list_keeps_and_counts_like_the_reference(
    ext: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _batch(30)
    results = {}
    for path in ("native", "reference"):
        monkeypatch.setattr(batch, "FAST_PATH", path == "native")
        monkeypatch.setattr(native, "NATIVE", ext)
        kept = RecordList(keep=12)
        batch.RecordBatchV2(raw, 0).read_records(kept)
        visited: list[Record] = []
        seen = RecordList(keep=0, visit=visited.append)
        batch.RecordBatchV2(raw, 0).read_records(seen)
        results[path] = (list(kept), kept.total, kept.dropped, visited, seen.total)
    assert results["native"] == results["reference"]
    assert results["native"][1] == 30 and len(results["native"][0]) == 12


# --- a property over the public strategies ----------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.record_streams())
def test_native_pure_and_reference_agree_on_any_stream(cases: list) -> None:  # type: ignore[type-arg]
    try:
        import kafka_conformance_native as ext
    except ImportError:
        pytest.skip("the native extension is not installed")
    data = b"".join(c.data for c in cases)
    saved = (native.NATIVE, batch.FAST_PATH)
    verdicts = []
    try:
        for module, fast in ((ext, True), (None, True), (None, False)):
            native.NATIVE, batch.FAST_PATH = module, fast
            verdicts.append(decode(data).to_dict())
    finally:
        native.NATIVE, batch.FAST_PATH = saved
    assert verdicts[0] == verdicts[2]
    assert verdicts[1] == verdicts[2]


def test_records_made_natively_equal_the_references_in_every_slot(
    ext: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.wire._record_fast import RECORD_SLOTS

    assert set(RECORD_SLOTS) == set(Record.__slots__)
    raw = _batch(33)
    made = {}
    for fast in (True, False):
        monkeypatch.setattr(batch, "FAST_PATH", fast)
        monkeypatch.setattr(native, "NATIVE", ext)
        for sink in (RecordList(), []):
            batch.RecordBatchV2(raw, 0).read_records(sink)
            made[fast, type(sink).__name__] = [
                {name: getattr(r, name) for name in Record.__slots__} for r in sink
            ]
    reference = made[False, "RecordList"]
    assert len(reference) == 33 and reference == made[False, "list"]
    assert made[True, "RecordList"] == reference
    assert made[True, "list"] == reference


def test_a_record_maker_needs_slots(ext: ModuleType) -> None:
    class NoSlots:
        pass

    with pytest.raises((ValueError, KeyError)):
        ext.RecordMaker(NoSlots, ["offset"] * 12)
    with pytest.raises(ValueError, match="11 fields and control"):
        ext.RecordMaker(Record, ["offset"])


def test_a_record_maker_finds_each_slot_wherever_it_lives(ext: ModuleType) -> None:
    """The maker stores into the slots it found by probing, not into an assumed layout: a
    class with its slots in another order, ``__dict__`` and ``__weakref__`` among them, gets
    each field in its own slot."""
    import weakref

    from conformance.wire.record import ROW_FIELDS

    class Shuffled:
        __slots__ = ("__weakref__", *reversed(ROW_FIELDS), "__dict__", "control")

    raw = _batch()
    count, base_offset, base_ts = _args(raw)
    maker = ext.RecordMaker(Shuffled, [*ROW_FIELDS, "control"])
    rows = ext.read_records_v2(raw, RECORDS_OFFSET, count, base_offset, base_ts, None, 9, maker)
    made = rows.records()
    assert type(made) is list and len(made) == 9
    expected = _reference_rows(raw[RECORDS_OFFSET:], count, base_offset, base_ts)[:9]
    for record, row in zip(made, expected, strict=True):
        assert type(record) is Shuffled
        assert tuple(getattr(record, name) for name in ROW_FIELDS) == row
        assert record.control is None and record.__dict__ == {}
        assert weakref.ref(record)() is record
    with pytest.raises(ValueError, match="was not found"):
        ext.RecordMaker(Shuffled, [*ROW_FIELDS[:-1], "offset", "control"])  # one slot twice


# --- legacy (v0/v1) wrappers -------------------------------------------------------------------


def _inner(magic: int, n: int = 6, **fault: object) -> list[bytes]:
    entries = []
    for i in range(n):
        knobs = fault if i == n // 2 else {}
        key = None if i == 1 else b"k%d" % i
        value = None if i == 2 else b"value %d " % i * (i + 1)
        entries.append(write_legacy_message(magic, i, 1_600_000_000_000 + i, key, value, **knobs))  # type: ignore[arg-type]
    return entries


def _decode_both(stream: bytes, ext: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for fast in (True, False):
        monkeypatch.setattr(native, "NATIVE", ext)
        monkeypatch.setattr(batch, "FAST_PATH", fast)
        out.append(decode(stream).to_dict())
    return out


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [1, 2, 3])
@pytest.mark.parametrize("log_append_time", [False, True])
def test_legacy_wrappers_equal_the_reference(
    ext: ModuleType, monkeypatch: pytest.MonkeyPatch, magic: int, codec: int, log_append_time: bool
) -> None:
    attributes = 0x08 if log_append_time and magic == 1 else 0
    wrapper = write_legacy_wrapper(magic, 40, 1_700_000_000_000, _inner(magic), codec, attributes)
    native_doc, reference = _decode_both(wrapper, ext, monkeypatch)
    assert native_doc == reference and reference["outcome"] == "ok"
    assert len(reference["batches"][0]["records"]) == 6
    data = codecs.read_stream(codec, LegacyBatch(wrapper).message.value, magic).data
    lat = 1_700_000_000_000 if attributes else None
    taken = ext.read_legacy_records(data, 0, magic, 40, lat, 3, record_maker(ext))
    assert taken is not None and taken[0] == 6 and len(taken[1]) == 3


@pytest.mark.parametrize(
    "fault",
    [{"crc": 1}, {"trailing": b"\x00"}, {"value_length": 10_000}, {"truncate": 9}],
    ids=["inner-crc", "trailing", "value-length", "short"],
)
def test_legacy_declines_what_it_is_not_sure_about(
    ext: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    fault: dict,  # type: ignore[type-arg]
) -> None:
    entries = _inner(1, **fault)
    data = b"".join(entries)
    assert ext.read_legacy_records(data, 0, 1, 40, None, 99, record_maker(ext)) is None
    # an inner message that is itself compressed, and a payload ending inside an entry
    compressed = write_legacy_message(1, 0, 0, None, b"x", 1)
    assert ext.read_legacy_records(compressed, 0, 1, 0, None, 9, record_maker(ext)) is None
    whole = b"".join(_inner(1))
    assert ext.read_legacy_records(whole[:-3], 0, 1, 0, None, 9, record_maker(ext)) is None
    # the verdict on the whole wrapper stays the reference's
    wrapper = write_legacy_wrapper(1, 40, 1_700_000_000_000, entries, 1)
    native_doc, reference = _decode_both(wrapper, ext, monkeypatch)
    assert native_doc == reference


@pytest.mark.parametrize("keep", [0, 2, 6, None])
def test_legacy_keep_counts_like_the_reference(
    ext: ModuleType, monkeypatch: pytest.MonkeyPatch, keep: int | None
) -> None:
    from conformance import StreamDecoder

    wrapper = write_legacy_wrapper(1, 40, 1_700_000_000_000, _inner(1), 1)
    seen = []
    for fast in (True, False):
        monkeypatch.setattr(native, "NATIVE", ext)
        monkeypatch.setattr(batch, "FAST_PATH", fast)
        batches = list(StreamDecoder(wrapper + _batch(9), keep=keep))
        seen.append([(list(b.records), b.records.total) for b in batches])
    assert seen[0] == seen[1]
    assert [total for _, total in seen[1]] == [6, 9]
