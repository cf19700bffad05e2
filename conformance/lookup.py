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

import argparse
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .batch import RecordBatchV2
from .errors import DecodeError
from .index import OffsetIndex, TimeIndex, base_offset_from_name
from .splitter import Batch, FileSource, Splitter


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
                from .record import Record

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


def _print(result: LookupResult | None, as_json: bool) -> int:
    if as_json:
        print(json.dumps(None if result is None else result.to_json()))
    elif result is None:
        print("not found: no segment can hold that target")
    else:
        print(f"segment: {result.segment}")
        print(f"index entry used: {result.index_entry[0]} -> {result.index_entry[1]}")
        if result.batch is None:
            print("batch: none (the target is past the end of the segment)")
        else:
            b = result.batch
            first = f"baseOffset {b.base_offset} " if isinstance(b, RecordBatchV2) else ""
            print(
                f"batch: position {b.position} size {b.size_in_bytes} magic {b.magic} "
                f"{first}lastOffset {b.last_offset} maxTimestamp {b.max_timestamp}"
            )
        if result.record_offset is not None:
            print(f"record: offset {result.record_offset} timestamp {result.record_timestamp}")
    return 0 if result is not None and result.batch is not None else 1


def _cmd(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        print(f"kafka-conformance lookup: not a directory: {args.dir}", file=sys.stderr)
        return 2
    try:
        if args.offset is not None:
            result = lookup_offset(args.dir, args.offset)
        else:
            result = lookup_timestamp(args.dir, args.timestamp, args.starting_offset)
    except DecodeError as e:
        print(f"kafka-conformance lookup: {e}", file=sys.stderr)
        return 1
    return _print(result, args.json)


def register_cli(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "lookup",
        help="find the batch holding an offset, or the first record at/after a timestamp",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 found, 1 not found or unreadable, 2 usage error\n\n"
        "examples:\n"
        "  kafka-conformance lookup /var/lib/kafka/data/orders-0 --offset 123456\n"
        "  kafka-conformance lookup orders-0 --timestamp 1700000000000 --json\n",
    )
    p.add_argument("dir", metavar="DIR", help="a partition directory (<topic>-<partition>)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=int, help="target offset")
    g.add_argument("--timestamp", type=int, help="target timestamp (ms)")
    p.add_argument("--starting-offset", type=int, default=0, help="ignore records below (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd)
