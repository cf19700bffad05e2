"""Encode/decode identity for every magic x codec x feature (hypothesis)."""

from __future__ import annotations

from hypothesis import given

from conformance import decode
from conformance import strategies as kst
from conformance.wire.builder import BatchBuilder, empty_batch, end_txn_marker_batch

CASES = [(m, c) for m, cs in kst.CODECS_BY_MAGIC.items() for c in cs]


def expected_timestamp(case: kst.BatchCase, ts: int) -> int:
    if case.magic == 0:
        return -1
    if case.options.get("timestamp_type") == "LogAppendTime":
        return int(case.options["log_append_time"])  # type: ignore[arg-type]
    return ts


def _check(case: kst.BatchCase) -> None:
    result = decode(case.data)
    assert result.outcome == "ok", result.error
    legacy_set = case.magic < 2 and case.compression == "none"
    # an uncompressed v0/v1 message set is one "batch" per message
    assert len(result.batches) == (len(case.records) if legacy_set else 1)
    batch = result.batches[-1]
    assert batch.magic == case.magic
    assert batch.compression_id == ["none", "gzip", "snappy", "lz4", "zstd"].index(case.compression)
    recs = result.records
    assert [r.offset for r in recs] == case.offsets
    assert batch.last_offset == case.offsets[-1]
    for got, want in zip(recs, case.records, strict=True):
        assert got.key == want.key
        assert got.value == want.value
        assert got.timestamp == expected_timestamp(case, want.timestamp)
        assert list(got.headers) == [(k, v) for k, v in want.headers]
    if case.magic == 2:
        o = case.options
        assert batch.producer_id == o.get("producer_id", -1)
        assert batch.producer_epoch == o.get("producer_epoch", -1)
        assert batch.base_sequence == o.get("base_sequence", -1)
        assert batch.is_transactional == o.get("is_transactional", False)
        assert batch.partition_leader_epoch == o.get("partition_leader_epoch", -1)
        assert batch.delete_horizon_ms == o.get("delete_horizon_ms")
        assert batch.records_count == len(case.records)
    strict = decode(case.data, profile="strict")
    assert strict.findings == [] or all(
        f.code in ("base-timestamp-mismatch",) for f in strict.findings
    ), strict.findings


def _make(magic: int, codec: str):  # type: ignore[no-untyped-def]
    @given(kst.batches(magic=magic, compression=codec))
    def test(case: kst.BatchCase) -> None:
        _check(case)

    test.__name__ = f"test_roundtrip_v{magic}_{codec}"
    return test


for _m, _c in CASES:
    globals()[f"test_roundtrip_v{_m}_{_c}"] = _make(_m, _c)


@given(kst.record_streams())
def test_streams_of_mixed_batches(cases: list[kst.BatchCase]) -> None:
    data = b"".join(c.data for c in cases)
    result = decode(data)
    assert result.outcome == "ok"
    assert [r.value for r in result.records] == [r.value for c in cases for r in c.records]
    assert sum(b.size_in_bytes for b in result.batches) == len(data)


def test_control_marker_roundtrip() -> None:
    data = end_txn_marker_batch(
        offset=42, producer_id=7, producer_epoch=3, commit=False, coordinator_epoch=9, timestamp=5
    )
    (batch,) = decode(data).batches
    assert batch.is_control and batch.is_transactional
    assert batch.records[0].control == {"typeId": 0, "type": "ABORT", "coordinatorEpoch": 9}


def test_empty_builder_writes_nothing() -> None:
    assert BatchBuilder(base_offset=10).build() == b""  # MemoryRecords.EMPTY


def test_cleaner_style_empty_batch() -> None:
    data = empty_batch(
        base_offset=100,
        last_offset=109,
        producer_id=4,
        producer_epoch=1,
        base_sequence=7,
        timestamp=1700000000000,
    )
    (b,) = decode(data).batches
    assert b.records == [] and b.records_count == 0
    assert (b.base_offset, b.last_offset, b.next_offset) == (100, 109, 110)  # C35
    assert b.base_timestamp == -1 and b.max_timestamp == 1700000000000
