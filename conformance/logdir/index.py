"""Offset index (``.index``) and time index (``.timeindex``), docs/format.md §6.3-6.4.

===========  =====  ==========================================================
file         entry  fields
===========  =====  ==========================================================
.index       8 B    relativeOffset int32 | position int32   (offset of a batch's
                    LAST record -> byte position of that batch in .log)
.timeindex   12 B   timestamp int64 | relativeOffset int32  (largest timestamp so far
                    -> offset of the batch that carried it)
===========  =====  ==========================================================

Entries = floor(file length / entry size): a preallocated zero tail counts as entries (Kafka
reads it so). ``sanity_check()`` is Kafka's, word for word; ``lookup()`` is Kafka's largest
lower bound (with the index's base-offset default when nothing is lower).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import CorruptIndexError, IllegalArgumentError
from conformance.fileio import map_readonly
from conformance.primitives.java import java_parse_int, wrap64

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    offset: int
    position: int


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    timestamp: int
    offset: int


def base_offset_from_name(path: str | os.PathLike[str]) -> int:
    """``Long.parseLong`` of the file name up to the first ``.`` (``UnifiedLog.offsetFromFile``)."""
    return java_parse_int(Path(path).name.split(".")[0], 64)


class _Index:
    entry_size = OFFSET_ENTRY.size
    _struct = OFFSET_ENTRY

    def __init__(self, data: bytes, base_offset: int, path: str = "<index>") -> None:
        self.data = data
        self.base_offset = base_offset
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str], base_offset: int | None = None):  # type: ignore[no-untyped-def]
        """Map an index file read-only (it can be up to ``segment.index.bytes``, 2 GiB)."""
        p = Path(path)
        base = base_offset_from_name(p) if base_offset is None else base_offset
        return cls(map_readonly(p), base, str(p.absolute()))  # type: ignore[arg-type]

    @property
    def length(self) -> int:
        return len(self.data)

    @property
    def entries(self) -> int:
        return len(self.data) // self.entry_size


class OffsetIndex(_Index):
    """``OffsetIndex`` (read side)."""

    def entry(self, n: int) -> OffsetPosition:
        if n >= self.entries:
            raise IllegalArgumentError(
                f"Attempt to fetch the {n}th entry from index {self.path}, "
                f"which has size {self.entries}"
            )
        rel, pos = OFFSET_ENTRY.unpack_from(self.data, n * self.entry_size)
        return OffsetPosition(wrap64(self.base_offset + rel), pos)

    def __iter__(self) -> Iterator[OffsetPosition]:
        for n in range(self.entries):
            yield self.entry(n)

    def last_offset(self) -> int:
        return self.entry(self.entries - 1).offset if self.entries else self.base_offset

    def sanity_check(self, check_alignment: bool = True) -> None:
        """``OffsetIndex.sanityCheck`` (``check_alignment=False``: Kafka 4.3.x, which does not
        refuse a size that is not a multiple of 8)."""
        if self.entries != 0 and self.last_offset() < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.path} has non-zero size but the last "
                f"offset is {self.last_offset()} "
                f"which is less than the base offset {self.base_offset}"
            )
        if check_alignment and self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Index file {self.path} is corrupt, found {self.length} bytes which is neither "
                "positive nor a multiple of 8"
            )

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target, else ``(baseOffset, 0)``."""
        slot = _largest_lower_bound(
            self.entries, lambda i: self.entry(i).offset, target_offset, self.entry_size
        )
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)


class TimeIndex(_Index):
    """``TimeIndex`` (read side)."""

    entry_size = TIME_ENTRY.size
    _struct = TIME_ENTRY

    def entry(self, n: int) -> TimestampOffset:
        if n >= self.entries:
            raise IllegalArgumentError(
                f"Attempt to fetch the {n}th entry from time index {self.path} "
                f"which has size {self.entries}"
            )
        ts, rel = TIME_ENTRY.unpack_from(self.data, n * self.entry_size)
        return TimestampOffset(ts, wrap64(self.base_offset + rel))

    def __iter__(self) -> Iterator[TimestampOffset]:
        for n in range(self.entries):
            yield self.entry(n)

    def last_entry(self) -> TimestampOffset:
        if self.entries == 0:
            return TimestampOffset(-1, self.base_offset)
        return self.entry(self.entries - 1)

    def sanity_check(self) -> None:
        """``TimeIndex.sanityCheck``."""
        if self.entries != 0:
            last = self.last_entry()
            first_ts = self.entry(0).timestamp
            if last.timestamp < first_ts:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.path}) has non-zero size "
                    f"but the last timestamp is {last.timestamp} which is less than the first "
                    f"timestamp {first_ts}"
                )
            if last.offset < self.base_offset:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.path}) has non-zero size "
                    f"but the last offset is {last.offset} which is less than the first offset "
                    f"{self.base_offset}"
                )
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Time index file {self.path} is corrupt, found {self.length} bytes which is "
                "neither positive nor a multiple of 12"
            )

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target, else ``(-1, baseOffset)``."""
        slot = _largest_lower_bound(
            self.entries, lambda i: self.entry(i).timestamp, target_timestamp, self.entry_size
        )
        if slot < 0:
            return TimestampOffset(-1, self.base_offset)
        return self.entry(slot)


def _largest_lower_bound(n: int, key, target: int, entry_size: int = 8) -> int:  # type: ignore[no-untyped-def]
    """``AbstractIndex.indexSlotRangeFor(..., LARGEST_LOWER_BOUND)``, step for step.

    Kafka first searches the "warm" last ``8192 / entrySize`` entries, checks entry 0, and
    its binary search returns at the first exact match: on indexes with repeated keys (which
    Kafka's writers never produce, but damaged files can hold) this picks Kafka's slot, not
    simply the last equal one.
    """
    if n == 0:
        return -1
    first_hot = max(0, n - 1 - 8192 // entry_size)
    if key(first_hot) < target:
        return _binary_search(key, target, first_hot, n - 1)
    if key(0) > target:
        return -1
    return _binary_search(key, target, 0, first_hot)


def _binary_search(key, target: int, lo: int, hi: int) -> int:  # type: ignore[no-untyped-def]
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = key(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            return mid
    return lo


def write_offset_entry(base_offset: int, offset: int, position: int) -> bytes:
    return OFFSET_ENTRY.pack(offset - base_offset, position)


def write_time_entry(base_offset: int, timestamp: int, offset: int) -> bytes:
    return TIME_ENTRY.pack(timestamp, offset - base_offset)
