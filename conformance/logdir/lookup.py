"""Offset and timestamp lookups in a partition directory, with the broker's algorithms.

* by offset (``LogSegment.translateOffset``): the segment with the largest base offset <= the
  target; the ``.index`` entry with the largest offset <= target (else position 0); then a scan
  of batches from that position to the first whose last offset >= target
  (``FileRecords.searchForOffsetWithSize``);
* by timestamp (``UnifiedLog.fetchOffsetByTimestamp`` / ``LogSegment.findOffsetByTimestamp``):
  the first segment whose largest timestamp >= target; the ``.timeindex`` entry with the
  largest timestamp <= target; its offset through ``.index`` to a position; then the first
  record with timestamp >= target (``FileRecords.searchForTimestamp``).

Only the files a broker would read are read, and only from the found position on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.wire.batch import RecordBatchV2
from conformance.logdir.index import OffsetIndex, TimeIndex, base_offset_from_name
from conformance.fileio import FileSource
from conformance.stream.splitter import Batch, Splitter


@dataclass(frozen=True, slots=True)
class Segment:
    base_offset: int
    log: Path

    def path(self, suffix: str) -> Path:
        return self.log.with_suffix(suffix)

    def offset_index(self) -> OffsetIndex:
        p = self.path(".index")
        if p.exists():
            return OffsetIndex.open(p, self.base_offset)
        return OffsetIndex(b"", self.base_offset, str(p))

    def time_index(self) -> TimeIndex:
        p = self.path(".timeindex")
        if p.exists():
            return TimeIndex.open(p, self.base_offset)
        return TimeIndex(b"", self.base_offset, str(p))

    def batches_from(self, position: int) -> Iterator[Batch]:
        """Batch headers from ``position`` on (file semantics), lazily."""
        source = FileSource(self.log, start=position)
        splitter = Splitter(source, "file", str(self.log))
        try:
            for batch in splitter:
                batch.position += position
                yield batch
        finally:
            source.close()


def segments(partition_dir: str | os.PathLike[str]) -> list[Segment]:
    """The segments of a partition directory, by base offset (``.log`` files only)."""
    out = []
    for p in Path(partition_dir).iterdir():
        if p.suffix == ".log" and p.name.count(".") == 1:
            out.append(Segment(base_offset_from_name(p), p))
    return sorted(out, key=lambda s: s.base_offset)


@dataclass
class LookupResult:
    segment: str
    index_entry: tuple[int, int]  # (offset or timestamp, position or offset) that was used
    position: int | None
    batch: Batch | None
    record_offset: int | None = None
    record_timestamp: int | None = None

    def to_json(self) -> dict[str, object]:
        b = self.batch
        return {
            "segment": self.segment,
            "indexEntry": list(self.index_entry),
            "position": self.position,
            "batch": None
            if b is None
            else {
                "position": b.position,
                "sizeInBytes": b.size_in_bytes,
                "magic": b.magic,
                "baseOffset": str(b.base_offset) if isinstance(b, RecordBatchV2) else None,
                "lastOffset": str(b.last_offset),
                "maxTimestamp": str(b.max_timestamp),
            },
            "recordOffset": None if self.record_offset is None else str(self.record_offset),
            "recordTimestamp": None if self.record_timestamp is None else str(self.record_timestamp),
        }


def lookup_offset(partition_dir: str | os.PathLike[str], target: int) -> LookupResult | None:
    segs = [s for s in segments(partition_dir) if s.base_offset <= target]
    if not segs:
        return None
    seg = segs[-1]
    entry = seg.offset_index().lookup(target)
    for batch in seg.batches_from(entry.position):
        if batch.last_offset >= target:
            return LookupResult(seg.log.name, (entry.offset, entry.position), batch.position, batch)
    return LookupResult(seg.log.name, (entry.offset, entry.position), None, None)


def _largest_timestamp(seg: Segment) -> int:
    """``LogSegment.largestTimestamp``: the time index's last entry, else the file mtime."""
    last = seg.time_index().last_entry().timestamp
    return last if last >= 0 else int(seg.log.stat().st_mtime * 1000)


def lookup_timestamp(
    partition_dir: str | os.PathLike[str], target: int, starting_offset: int = 0
) -> LookupResult | None:
    for seg in segments(partition_dir):
        if _largest_timestamp(seg) < target:
            continue
        ts_entry = seg.time_index().lookup(target)
        pos_entry = seg.offset_index().lookup(max(ts_entry.offset, starting_offset))
        for batch in seg.batches_from(pos_entry.position):
            if batch.max_timestamp >= target:
                from conformance.wire.record import Record

                records: list[Record] = []
                if isinstance(batch, RecordBatchV2):
                    batch.iterator_records(records)
                else:
                    records = [
                        Record(off, msg.timestamp, None, None)
                        for off, msg in batch.iter_messages()
                    ]
                for r in records:
                    if r.timestamp >= target and r.offset >= starting_offset:
                        return LookupResult(
                            seg.log.name, (ts_entry.timestamp, ts_entry.offset), batch.position,
                            batch, r.offset, r.timestamp,
                        )
        return LookupResult(seg.log.name, (ts_entry.timestamp, ts_entry.offset), None, None)
    return None
