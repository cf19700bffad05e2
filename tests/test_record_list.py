"""``RecordList`` (a batch's records, stored as rows) and ``AllRecords`` (the result's view).

The records a user reads must be the same whichever way they are stored: the fast path hands
out rows that become ``Record`` objects on read, the reference reader hands out ``Record``
objects. Every expectation here is the reference reader's output (``FAST_PATH`` off) or the
generator's input, never the structure under test.
"""

from __future__ import annotations

import gc

import pytest

from conformance import Record, decode
from conformance.wire import batch as batch_module
from conformance.wire.builder import BatchBuilder
from conformance.wire.record import RecordList

BASE_TS = 1_700_000_000_000


def _stream(batches: int, per_batch: int, compression: str = "none") -> tuple[bytes, list[tuple]]:  # type: ignore[type-arg]
    parts, expected = [], []
    for b in range(batches):
        builder = BatchBuilder(magic=2, compression=compression, base_offset=b * per_batch)
        for i in range(per_batch):
            n = b * per_batch + i
            key = None if n % 7 == 0 else f"k{n}".encode()
            headers = [("h", f"{n}".encode())] if n % 3 else []
            builder.append(BASE_TS + n, key, f"value-{n}".encode(), headers)
            expected.append((n, BASE_TS + n, key, f"value-{n}".encode(), tuple(headers)))
        parts.append(builder.build())
    return b"".join(parts), expected


def _fields(r: Record) -> tuple:  # type: ignore[type-arg]
    return (r.offset, r.timestamp, r.key, r.value, r.headers)


def _decode_both(data: bytes, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(batch_module, "FAST_PATH", False)
    reference = decode(data)
    monkeypatch.setattr(batch_module, "FAST_PATH", True)
    fast = decode(data)
    assert reference.outcome == fast.outcome == "ok"
    return reference, fast


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_rows_read_as_the_reference_records(
    compression: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, expected = _stream(3, 40, compression)
    reference, fast = _decode_both(data, monkeypatch)
    for rb, fb in zip(reference.batches, fast.batches, strict=True):
        assert fb.records._rows and not rb.records._rows  # the two storages are really exercised
        ref = list(rb.records)
        assert len(fb.records) == len(ref) == 40
        assert [vars_of(r) for r in fb.records] == [vars_of(r) for r in ref]
        assert vars_of(fb.records[0]) == vars_of(ref[0])
        assert vars_of(fb.records[-1]) == vars_of(ref[-1])
        assert [vars_of(r) for r in fb.records[5:9]] == [vars_of(r) for r in ref[5:9]]
        assert fb.records == ref and fb.records == rb.records and fb.records == tuple(ref)
        assert fb.records != ref[:-1]
        assert repr(fb.records).startswith("RecordList([Record(offset=")
        with pytest.raises(IndexError):
            fb.records[40]
    assert [_fields(r) for r in fast.records] == expected


def vars_of(r: Record) -> tuple:  # type: ignore[type-arg]
    return tuple(getattr(r, s) for s in Record.__slots__)


def test_append_after_rows_keeps_order(monkeypatch: pytest.MonkeyPatch) -> None:
    data, expected = _stream(1, 5)
    batch = decode(data).batches[0]
    assert batch.records._rows
    extra = Record(99, BASE_TS, b"x", b"y")
    batch.records.append(extra)
    assert [_fields(r) for r in batch.records] == expected + [_fields(extra)]
    more = RecordList([extra])
    more.extend_rows([(100, BASE_TS, None, b"z", (), 0, 0, 0, 2, None, 7)])
    assert [r.offset for r in more] == [99, 100] and more[1].size == 7


def test_all_records_view_spans_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    data, expected = _stream(4, 25)
    reference, fast = _decode_both(data, monkeypatch)
    flat = [r for b in reference.batches for r in b.records]
    view = fast.records
    assert len(view) == 100
    for i in (0, 24, 25, 26, 49, 50, 99, -1, -25, -26, -100):
        assert _fields(view[i]) == _fields(flat[i]) == expected[i]
    for bad in (100, -101):
        with pytest.raises(IndexError):
            view[bad]
    assert [_fields(r) for r in view[20:30]] == expected[20:30]
    assert view == flat and view == reference.records
    assert view != flat[1:]


def test_decoded_rows_are_not_tracked_by_the_garbage_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The point of storing rows: a decode's records add no GC-tracked objects per record.

    With a ``Record`` object per record (the reference reader's storage) the same decode adds
    one tracked object per record, which every full collection then traverses. CPython stops
    tracking a tuple during a collection once its items are untracked, one nesting level per
    collection (row > headers > header), hence three collections.
    """
    data, _ = _stream(10, 500)

    def collect() -> None:
        for _ in range(3):
            gc.collect()

    def tracked_growth() -> int:
        collect()
        before = len(gc.get_objects())
        result = decode(data)
        collect()
        growth = len(gc.get_objects()) - before
        assert len(result.records) == 5000
        return growth

    monkeypatch.setattr(batch_module, "FAST_PATH", True)
    assert tracked_growth() < 20 * 10  # a few objects per batch, none per record
    monkeypatch.setattr(batch_module, "FAST_PATH", False)
    assert tracked_growth() >= 5000


def test_a_result_survives_pickling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results cross process boundaries (replay workers): rows and records both pickle."""
    import pickle

    data, expected = _stream(3, 10, "gzip")
    reference, fast = _decode_both(data, monkeypatch)
    for result in (reference, fast):
        back = pickle.loads(pickle.dumps(result))
        assert back.outcome == "ok" and back.to_dict() == reference.to_dict()
        assert [_fields(r) for r in back.records] == expected
        assert back.batches[1].base_offset == 10
