"""Lookups against a brute-force scan of writer-made directories (index entries only speed
the broker's search up; the answer must equal a full scan's)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conformance.logdir.lookup import lookup_offset, lookup_timestamp, segments
from conformance.logdir.writer import LogConfig, write_batches
from conformance.stream.decoder import decode
from conformance.wire.builder import BatchBuilder


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(3)
    batches, offset, ts = [], 0, 1_700_000_000_000
    for _ in range(120):
        b = BatchBuilder(base_offset=offset, compression=rng.choice(["none", "gzip", "lz4"]))
        for _ in range(rng.randint(1, 30)):
            ts += rng.randint(-5, 40)  # timestamps not monotonic, as producers send them
            b.append(ts, b"k", rng.randbytes(rng.randint(10, 400)))
        raw = b.build()
        batches.append(raw)
        offset = decode(raw).batches[0].last_offset + 1
    cfg = LogConfig(segment_bytes=40_000, index_interval_bytes=3000)
    return write_batches(tmp_path_factory.mktemp("lookup"), batches, config=cfg)


def _all(partition: Path) -> list[tuple[str, object]]:
    out = []
    for seg in segments(partition):
        for b in decode(seg.log.read_bytes(), mode="file").batches:
            out.append((seg.log.name, b))
    return out


def test_several_segments(partition: Path) -> None:
    assert len(segments(partition)) >= 4


def test_every_offset(partition: Path) -> None:
    entries = _all(partition)
    last = entries[-1][1].last_offset
    for target in range(0, last + 1):
        name, batch = next((n, b) for n, b in entries if b.last_offset >= target)
        got = lookup_offset(partition, target)
        assert got is not None and got.batch is not None
        assert (got.segment, got.position) == (name, batch.position), target
    past = lookup_offset(partition, last + 1)
    assert past is not None and past.batch is None


def test_timestamps(partition: Path) -> None:
    entries = _all(partition)
    records = [(n, r) for n, b in entries for r in b.records]
    stamps = sorted({r.timestamp for _, r in records})
    for target in stamps[:: max(1, len(stamps) // 200)] + [stamps[-1] + 1]:
        got = lookup_timestamp(partition, target)
        # brute force: the first segment whose max timestamp >= target, then its first record
        # with timestamp >= target
        seg_names = [s.log.name for s in segments(partition)]
        want = None
        for name in seg_names:
            seg_recs = [r for n, r in records if n == name]
            if max(r.timestamp for r in seg_recs) >= target:
                want = next(r for r in seg_recs if r.timestamp >= target)
                break
        if want is None:
            assert got is None
        else:
            assert got is not None and (got.record_offset, got.record_timestamp) == (
                want.offset,
                want.timestamp,
            ), target
