"""Cutting files into batch-aligned byte ranges, one replay task each (docs/replay.md).

A range ``[start, end)`` of a file is replayed by one task (``stream.scan`` from ``start``,
regions starting before ``end``). Each cut is a position the whole-file walk passes, so the
ranges' regions tile the file exactly as one walk would:

============================  ======================================================================
source of cut candidates      how
============================  ======================================================================
the segment's ``.index``      entries map offsets to batch positions: per cut, a binary search for
                              the first entry at or after ``k * split_bytes`` (no other read)
a header walk                 (no index, or no usable entry in the window) 17 bytes per batch with
                              ``pread``, from the previous cut; past damaged bytes with
                              ``resync.find_next_batch``
============================  ======================================================================

Every candidate must pass ``resync.is_batch_start`` (an intact batch starts there, its
checksum verified), so a stale index entry or a corrupted batch is never a cut; the next
candidate is tried instead. Planning never reads a file whole.

A :class:`Range` crosses into a Spark task as JSON text (:func:`write_ranges`, read back by
:func:`read_ranges` on the executor).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from conformance.errors import DecodeError
from conformance.fileio import map_readonly
from conformance.jsondoc import JsonDocument, json_text
from conformance.logdir.index import OFFSET_ENTRY
from conformance.replay.inputs import InputFile, open_source
from conformance.replay.storage import DEFAULT_IO_TIMEOUT
from conformance.stream.resync import DEFAULT_MAX_BATCH_BYTES, find_next_batch, is_batch_start
from conformance.stream.splitter import Source, file_frame

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "MIN_SPLIT_BYTES",
    "PLAN_THREADS",
    "Range",
    "plan",
    "plan_file",
    "read_ranges",
    "write_ranges",
]

#: bytes per range unless told otherwise (``--split-bytes``)
DEFAULT_SPLIT_BYTES = 64 << 20
#: the smallest ``--split-bytes``: every task writes a Parquet part and reports per range, so
#: ``--split-bytes 1`` made 20,000 parts of a 1.4 MB segment; at 64 KiB a range is still
#: well under one read-ahead of most segments' batches
MIN_SPLIT_BYTES = 64 << 10
#: files cut at once by :func:`plan`
PLAN_THREADS = 16
#: candidates checked per cut before giving up on that cut (the next one will try again)
_MAX_TRIES = 64


@dataclass(frozen=True, slots=True)
class Range(JsonDocument):
    """One task's work: the bytes ``[start, end)`` of ``file``."""

    range_id: int
    file: InputFile
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start

    def to_dict(self) -> dict[str, Any]:
        return {
            "range_id": self.range_id,
            "file": self.file.to_dict(),
            "start": self.start,
            "end": self.end,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Range:
        return cls(doc["range_id"], InputFile.from_dict(doc["file"]), doc["start"], doc["end"])


def write_ranges(ranges: Sequence[Range]) -> str:
    """A task's ranges as JSON text (a list of :meth:`Range.to_dict`): how a task description
    crosses into a Spark task."""
    return json_text([r.to_dict() for r in ranges])


def read_ranges(text: str) -> list[Range]:
    """The ranges of :func:`write_ranges` text."""
    return [Range.from_dict(doc) for doc in json.loads(text)]


def _index_positions(index_path: str, size: int) -> Callable[[int], int | None]:
    """``first(t)``: the first index entry position >= t (entries are in position order in
    an intact index; a damaged one only costs candidates that fail the check)."""
    data = map_readonly(index_path)
    entries = len(data) // OFFSET_ENTRY.size

    def position(i: int) -> int:
        entry: tuple[int, int] = OFFSET_ENTRY.unpack_from(data, i * OFFSET_ENTRY.size)
        return entry[1]

    # a preallocated index ends in zero entries: only the non-zero prefix counts
    lo, hi = 0, entries
    while lo < hi:  # entries with position 0 after the first are the zero tail
        mid = (lo + hi) // 2
        if mid > 0 and position(mid) == 0:
            hi = mid
        else:
            lo = mid + 1
    entries = lo

    def first(t: int) -> int | None:
        a, b = 0, entries
        while a < b:
            mid = (a + b) // 2
            if position(mid) < t:
                a = mid + 1
            else:
                b = mid
        for i in range(a, min(entries, a + _MAX_TRIES)):
            p = position(i)
            if t <= p < size:
                return p
        return None

    return first


class _HeaderWalk:
    """Batch starts of a source from a known one on, reading 17 bytes per batch."""

    def __init__(self, source: Source, max_batch_bytes: int) -> None:
        self.source = source
        self.max_batch_bytes = max_batch_bytes

    def first_at_or_after(self, pos: int, target: int) -> int | None:
        """From the batch start ``pos``, the first walked position >= ``target``."""
        source = self.source
        while pos < target:
            try:
                frame = file_frame(source, pos)
            except DecodeError:
                frame = None
            nxt = pos + frame[0] if frame is not None else None
            if nxt is None or nxt >= len(source):
                found = find_next_batch(source, pos, max_batch_bytes=self.max_batch_bytes)
                if found is None:
                    return None
                nxt = found
            pos = nxt
        return pos


def plan_file(
    f: InputFile,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    *,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    first_id: int = 0,
    io_timeout: float = DEFAULT_IO_TIMEOUT,
) -> list[Range]:
    """The ranges of one file (one range when it is not larger than ``split_bytes``, or when
    it cannot be read now: its task then reports it ``unreadable``). An offset index that
    cannot be read is not used (the header walk cuts the file)."""
    if f.size <= split_bytes:
        return [Range(first_id, f, 0, f.size)]
    try:
        source = open_source(f.path, f.size, io_timeout)
    except OSError:
        return [Range(first_id, f, 0, f.size)]
    try:
        size = len(source)
        # a local index is mapped; a remote file is cut by the header walk alone
        index_first = None
        if f.index and "://" not in f.path:
            try:
                index_first = _index_positions(f.index, size)
            except OSError:
                index_first = None
        walk = _HeaderWalk(source, max_batch_bytes)
        cuts = [0]
        target = split_bytes
        while target < size:
            cut = None
            if index_first is not None:
                candidate = index_first(target)
                tries = 0
                while (
                    candidate is not None
                    and tries < _MAX_TRIES
                    and not is_batch_start(source, candidate, max_batch_bytes=max_batch_bytes)
                ):
                    candidate = index_first(candidate + 1)
                    tries += 1
                if (
                    candidate is not None
                    and tries < _MAX_TRIES
                    and candidate < target + split_bytes
                ):
                    cut = candidate
            if cut is None:
                pos = walk.first_at_or_after(cuts[-1], target)
                while (
                    pos is not None
                    and pos < size
                    and not is_batch_start(source, pos, max_batch_bytes=max_batch_bytes)
                ):
                    pos = walk.first_at_or_after(pos, pos + 1)
                cut = pos if pos is not None and pos < size else None
            if cut is None:
                break
            if cut > cuts[-1]:
                cuts.append(cut)
            target = max(target + split_bytes, cut + 1)
    except OSError:  # the file shrank or failed while it was cut: its tasks report it
        pass
    finally:
        source.close()
    bounds = cuts + [size]
    return [Range(first_id + i, f, bounds[i], bounds[i + 1]) for i in range(len(cuts))]


def plan(
    files: list[InputFile],
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    *,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    progress: Callable[[int, int], None] | None = None,
    io_timeout: float = DEFAULT_IO_TIMEOUT,
    threads: int = PLAN_THREADS,
) -> list[Range]:
    """Ranges of every file, numbered from 0 in file order. The files larger than
    ``split_bytes`` (the only ones that cost reads: an index or a header walk, over the
    network for an object store) are cut by ``threads`` threads at once; reads release the
    GIL, so a listing of many large remote segments waits for its slowest reads in parallel,
    not one after the other."""
    done = 0

    def cut(f: InputFile) -> list[Range]:
        return plan_file(f, split_bytes, max_batch_bytes=max_batch_bytes, io_timeout=io_timeout)

    large = [i for i, f in enumerate(files) if f.size > split_bytes]
    cuts: dict[int, list[Range]] = {}
    if large:
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(large)))) as pool:
            cuts = dict(zip(large, pool.map(lambda i: cut(files[i]), large)))
    ranges: list[Range] = []
    for i, f in enumerate(files):
        for r in cuts[i] if i in cuts else cut(f):
            ranges.append(replace(r, range_id=len(ranges)))
        done += 1
        if progress is not None:
            progress(done, len(files))
    return ranges
