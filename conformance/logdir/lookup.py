"""Offset and timestamp lookups in a partition directory, with the broker's algorithms.

* by offset (``LogSegment.translateOffset``): the segment with the largest base offset <= the
  target; the ``.index`` entry with the largest offset <= target (else position 0); then a scan
  of batches from that position to the first whose last offset >= target
  (``FileRecords.searchForOffsetWithSize``);
* by timestamp (``UnifiedLog.fetchOffsetByTimestamp`` / ``LogSegment.findOffsetByTimestamp``):
  the first segment whose largest timestamp >= target; the ``.timeindex`` entry with the
  largest timestamp <= target; its offset through ``.index`` to a position; then the first
  record with timestamp >= target (``FileRecords.searchForTimestamp``);
* the special timestamps of ``ListOffsets`` (``fetchOffsetByTimestamp``):
  :data:`LATEST_TIMESTAMP` (-1) answers the log end offset, the offset after the last batch of
  the last segment (``LogSegment.readNextOffset``, as loaded after a clean shutdown);
  :data:`EARLIEST_TIMESTAMP` (-2) the log start offset, the first segment's base offset or the
  partition's ``log-start-offset-checkpoint`` entry (in the log directory above it) when that
  is higher (``LogLoader``); both with timestamp -1 (``RecordBatch.NO_TIMESTAMP``), as Kafka.

Only the files a broker would read are read, and only from the found position on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import DecodeError
from conformance.fileio import FileSource, read_bytes
from conformance.jsondoc import JsonDocument
from conformance.logdir import checkpoint
from conformance.logdir.index import OffsetIndex, TimeIndex, base_offset_from_name
from conformance.stream.splitter import Batch, Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.record import Record, RecordList

#: ``ListOffsetsRequest.LATEST_TIMESTAMP``: the log end offset
LATEST_TIMESTAMP = -1
#: ``ListOffsetsRequest.EARLIEST_TIMESTAMP``: the log start offset
EARLIEST_TIMESTAMP = -2
#: ``RecordBatch.NO_TIMESTAMP``, the timestamp Kafka answers with for -1 and -2
NO_TIMESTAMP = -1


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
class LookupResult(JsonDocument):
    segment: str
    index_entry: tuple[int, int]  # (offset or timestamp, position or offset) that was used
    position: int | None
    batch: Batch | None
    record_offset: int | None = None
    record_timestamp: int | None = None

    def to_dict(self) -> dict[str, object]:
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
            "recordTimestamp": None
            if self.record_timestamp is None
            else str(self.record_timestamp),
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


def _checkpointed_log_start(partition_dir: Path) -> int | None:
    """This partition's entry in ``<log dir>/log-start-offset-checkpoint``, if readable."""
    name = partition_dir.resolve().name
    topic, _, number = name.rpartition("-")
    if not topic or not number.isdigit():
        return None
    path = partition_dir.resolve().parent / "log-start-offset-checkpoint"
    try:
        entries = checkpoint.read_offset_checkpoint(read_bytes(path), str(path))
    except (OSError, DecodeError):
        return None  # absent: the first segment's base offset decides
    for e in entries:
        if e.topic == topic and e.partition == int(number):
            return e.offset
    return None


def log_start_offset(partition_dir: str | os.PathLike[str]) -> int | None:
    """The log start offset as ``LogLoader`` sets it (no remote storage):
    ``max(log-start-offset-checkpoint entry, first segment's base offset)``; ``None`` without
    segments."""
    segs = segments(partition_dir)
    if not segs:
        return None
    checkpointed = _checkpointed_log_start(Path(partition_dir))
    return max(
        segs[0].base_offset, checkpointed if checkpointed is not None else segs[0].base_offset
    )


def _next_offset(seg: Segment) -> tuple[tuple[int, int], int]:
    """``LogSegment.readNextOffset``: from the batch holding the offset index's last offset,
    the offset after the last batch; the base offset when there is none. Also the index
    entry used."""
    index = seg.offset_index()
    target = index.last_offset()
    entry = index.lookup(target)
    next_offset = None
    for batch in seg.batches_from(entry.position):
        if next_offset is None and batch.last_offset < target:
            continue
        next_offset = batch.last_offset + 1
    return (entry.offset, entry.position), seg.base_offset if next_offset is None else next_offset


def log_end_offset(partition_dir: str | os.PathLike[str]) -> int | None:
    """The log end offset: the next offset of the last segment (``None`` without segments)."""
    segs = segments(partition_dir)
    return _next_offset(segs[-1])[1] if segs else None


def _special_timestamp(partition_dir: str | os.PathLike[str], target: int) -> LookupResult | None:
    segs = segments(partition_dir)
    if not segs:
        return None
    if target == LATEST_TIMESTAMP:
        entry, offset = _next_offset(segs[-1])
        return LookupResult(segs[-1].log.name, entry, None, None, offset, NO_TIMESTAMP)
    start = log_start_offset(partition_dir)
    assert start is not None
    found = lookup_offset(partition_dir, start)
    if found is None:  # the checkpoint is below every segment: cannot happen after max()
        return LookupResult(
            segs[0].log.name, (segs[0].base_offset, 0), None, None, start, NO_TIMESTAMP
        )
    found.record_offset, found.record_timestamp = start, NO_TIMESTAMP
    return found


def lookup_timestamp(
    partition_dir: str | os.PathLike[str], target: int, starting_offset: int = 0
) -> LookupResult | None:
    """The first record at or after ``target`` (ms); for :data:`LATEST_TIMESTAMP` (-1) the
    log end offset, for :data:`EARLIEST_TIMESTAMP` (-2) the log start offset, as ``recordOffset``
    with timestamp -1 (``starting_offset`` does not apply to them). Other negative targets:
    ``ValueError`` (this kit does not implement -3 ``MAX_TIMESTAMP`` and the tiered-storage
    ones)."""
    if target in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP):
        return _special_timestamp(partition_dir, target)
    if target < 0:
        raise ValueError(f"timestamp {target}: only -1 (latest) and -2 (earliest) may be negative")
    for seg in segments(partition_dir):
        if _largest_timestamp(seg) < target:
            continue
        ts_entry = seg.time_index().lookup(target)
        pos_entry = seg.offset_index().lookup(max(ts_entry.offset, starting_offset))
        for batch in seg.batches_from(pos_entry.position):
            if batch.max_timestamp >= target:
                found = _first_record_at(batch, target, starting_offset)
                if found is not None:
                    return LookupResult(
                        seg.log.name,
                        (ts_entry.timestamp, ts_entry.offset),
                        batch.position,
                        batch,
                        found.offset,
                        found.timestamp,
                    )
        return LookupResult(seg.log.name, (ts_entry.timestamp, ts_entry.offset), None, None)
    return None


class _Found(Exception):
    """Internal: the record searched for, raised out of the batch's reader to stop it."""

    def __init__(self, record: Record) -> None:
        self.record = record


def _first_record_at(batch: Any, target: int, starting_offset: int) -> Record | None:
    """``FileRecords.searchForTimestamp`` within one batch: its first record (as ``for (Record r
    : batch)`` hands them out) with timestamp >= ``target`` and offset >= ``starting_offset``.
    Nothing is kept: the search stops at the match."""
    if isinstance(batch, RecordBatchV2):

        def check(r: Record) -> None:
            if r.timestamp >= target and r.offset >= starting_offset:
                raise _Found(r)

        try:
            batch.read_records_eagerly(RecordList(keep=0, visit=check))
        except _Found as f:
            return f.record
        return None
    for off, msg in batch.read_messages():
        if msg.timestamp >= target and off >= starting_offset:
            return Record(off, msg.timestamp, None, None)
    return None
