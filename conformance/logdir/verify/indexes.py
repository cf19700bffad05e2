"""verify-dir checks of ``.index`` and ``.timeindex`` against the ``.log`` walk.

Mirrors ``OffsetIndex`` / ``TimeIndex`` (``org.apache.kafka.storage.internals.log``):

===========  ==============  =============================================================
file         entry           fields
===========  ==============  =============================================================
.index       ``OFFSET_ENTRY``  relativeOffset int32 | position int32 (8 bytes)
.timeindex   ``TIME_ENTRY``    timestamp int64 | relativeOffset int32 (12 bytes)
===========  ==============  =============================================================

Finding positions are entry positions (``n * entry size``). docs/format.md §6.3-6.4.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.errors import CorruptIndexError
from conformance.logdir.index import OFFSET_ENTRY, TIME_ENTRY, OffsetIndex, TimeIndex
from conformance.logdir.verify.findings import Sink
from conformance.logdir.verify.logwalk import (
    BatchInfo,
    Peek,
    WalkEnd,
    absolute,
    close_map,
    last_nonzero,
    map_file,
)

_OFFSET_ENTRY_SIZE = OFFSET_ENTRY.size  # 8
_TIME_ENTRY_SIZE = TIME_ENTRY.size  # 12

# ------------------------------------------------------------------------- .index checks


class OffsetIndexCheck:
    def __init__(self, path: str, base: int, log_size: int, sink: Sink) -> None:
        self.path = path
        self.sink = sink
        self.log_size = log_size
        self.buf = map_file(path)
        index = OffsetIndex(self.buf, base, absolute(path))
        self.index = index
        n = index.entries
        self.count = (
            last_nonzero(self.buf, n * _OFFSET_ENTRY_SIZE) + _OFFSET_ENTRY_SIZE
        ) // _OFFSET_ENTRY_SIZE  # entries before the zero tail
        if self.count < n:
            sink.add(
                "index-zero-tail",
                path,
                self.count * _OFFSET_ENTRY_SIZE,
                f"{n - self.count} zero-filled entries from byte {self.count * _OFFSET_ENTRY_SIZE} "
                f"(file length {index.length}: preallocated, not trimmed)",
            )
        self._sanity()
        self.cursor = Peek(self._entries())
        # an entry whose offset is above its batch's last offset: (entry, offset, position,
        # that batch's last offset), resolved by the batches that follow
        self.pending: tuple[int, int, int, int] | None = None

    def _sanity(self) -> None:
        index = self.index
        try:
            index.sanity_check()
            return
        except CorruptIndexError as e:
            full = e
        if index.length % _OFFSET_ENTRY_SIZE == 0 and self.count < index.entries:
            view = memoryview(self.buf)[: self.count * _OFFSET_ENTRY_SIZE] if self.count else b""
            try:
                OffsetIndex(view, index.base_offset, index.path).sanity_check()
                return  # only the zero tail makes it fail
            except CorruptIndexError:
                pass
            finally:
                if isinstance(view, memoryview):
                    view.release()
        position = (
            index.entries * _OFFSET_ENTRY_SIZE
            if index.length % _OFFSET_ENTRY_SIZE
            else max(0, self.count - 1) * _OFFSET_ENTRY_SIZE
        )
        self.sink.add(
            "index-sanity-check", self.path, position, full.message or "", full.kafka_exception
        )

    def _entries(self) -> Iterator[tuple[int, int, int]]:
        previous: tuple[int, int] | None = None
        for n in range(self.count):
            entry = self.index.entry(n)  # the one .index entry parser (conformance.logdir.index)
            offset, pos = entry.offset, entry.position
            if previous is not None and (offset <= previous[0] or pos <= previous[1]):
                self.sink.add(
                    "index-not-monotonic",
                    self.path,
                    n * _OFFSET_ENTRY_SIZE,
                    f"entry {n} (offset {offset}, position {pos}) does not follow "
                    f"(offset {previous[0]}, position {previous[1]})",
                )
                continue
            previous = (offset, pos)
            yield n, offset, pos

    def _outside(self, n: int, offset: int, pos: int) -> None:
        self.sink.add(
            "index-position-outside",
            self.path,
            n * _OFFSET_ENTRY_SIZE,
            f"entry {n} (offset {offset}) points at position {pos}, outside the "
            f".log ({self.log_size} bytes)",
        )

    def _mismatch(self, n: int, offset: int, last: int, pos: int) -> None:
        self.sink.add(
            "index-offset-mismatch",
            self.path,
            n * _OFFSET_ENTRY_SIZE,
            f"entry {n} names offset {offset}, but the batch at position {pos} "
            f"ends at offset {last}",
        )

    def on_batch(self, b: BatchInfo) -> None:
        if self.pending is not None and b.last_offset is not None:
            n, offset, pos, last = self.pending
            if b.last_offset >= offset:
                if b.last_offset == offset:
                    self.sink.add(
                        "index-entry-multi-batch",
                        self.path,
                        n * _OFFSET_ENTRY_SIZE,
                        f"entry {n} pairs offset {offset} (last offset of the batch "
                        f"at {b.position}) with the position {pos} of an earlier batch",
                    )
                else:
                    self._mismatch(n, offset, last, pos)
                self.pending = None
        cursor = self.cursor
        while cursor.head is not None and cursor.head[2] < b.position:
            n, offset, pos = cursor.pop()
            if pos < 0:
                self._outside(n, offset, pos)
            else:
                self.sink.add(
                    "index-not-batch-boundary",
                    self.path,
                    n * _OFFSET_ENTRY_SIZE,
                    f"entry {n} (offset {offset}) points at position {pos}, inside a batch",
                )
        if cursor.head is not None and cursor.head[2] == b.position:
            n, offset, pos = cursor.pop()
            if b.last_offset is None or offset == b.last_offset:
                return
            if offset > b.last_offset and not b.failed and self.pending is None:
                self.pending = (n, offset, pos, b.last_offset)
            else:
                self._mismatch(n, offset, b.last_offset, pos)

    def finish(self, end: WalkEnd) -> None:
        if self.pending is not None and end.stopped_at is None:
            n, offset, pos, last = self.pending
            self._mismatch(n, offset, last, pos)
        for n, offset, pos in self.cursor.rest():
            if pos < 0 or pos >= self.log_size:
                self._outside(n, offset, pos)
            elif end.stopped_at is not None and pos >= end.stopped_at:
                continue  # past an unframeable entry: cannot tell
            else:
                self.sink.add(
                    "index-not-batch-boundary",
                    self.path,
                    n * _OFFSET_ENTRY_SIZE,
                    f"entry {n} (offset {offset}) points at position {pos}, after "
                    f"the last complete batch (ends at {end.valid_end})",
                )

    def close(self) -> None:
        self.cursor = Peek(iter(()))
        close_map(self.buf)


# --------------------------------------------------------------------- .timeindex checks


class TimeIndexCheck:
    def __init__(self, path: str, base: int, sink: Sink) -> None:
        self.path = path
        self.sink = sink
        self.buf = map_file(path)
        index = TimeIndex(self.buf, base, absolute(path))
        self.index = index
        n = index.entries
        self.count = (
            last_nonzero(self.buf, n * _TIME_ENTRY_SIZE) + _TIME_ENTRY_SIZE
        ) // _TIME_ENTRY_SIZE
        self._sanity(n)
        self.cursor = Peek(self._entries())
        self.running_max = -1  # TimestampOffset.UNKNOWN
        self.running_max_offset: int | None = None

    def _sanity(self, n: int) -> None:
        index = self.index
        full: CorruptIndexError | None = None
        try:
            index.sanity_check()
        except CorruptIndexError as e:
            full = e
        if self.count < n:
            self.sink.add(
                "timeindex-zero-tail",
                self.path,
                self.count * _TIME_ENTRY_SIZE,
                f"{n - self.count} zero-filled entries from byte {self.count * _TIME_ENTRY_SIZE} "
                f"(file length {index.length}: preallocated, not trimmed)"
                + ("; Kafka's sanityCheck fails on them" if full is not None else ""),
            )
        if full is None:
            return
        if index.length % _TIME_ENTRY_SIZE == 0 and self.count < n:
            view = memoryview(self.buf)[: self.count * _TIME_ENTRY_SIZE] if self.count else b""
            try:
                TimeIndex(view, index.base_offset, index.path).sanity_check()
                return
            except CorruptIndexError:
                pass
            finally:
                if isinstance(view, memoryview):
                    view.release()
        position = (
            n * _TIME_ENTRY_SIZE
            if index.length % _TIME_ENTRY_SIZE
            else max(0, self.count - 1) * _TIME_ENTRY_SIZE
        )
        self.sink.add(
            "timeindex-sanity-check", self.path, position, full.message or "", full.kafka_exception
        )

    def _entries(self) -> Iterator[tuple[int, int, int]]:
        previous: tuple[int, int] | None = None
        for n in range(self.count):
            entry = self.index.entry(
                n
            )  # the one .timeindex entry parser (conformance.logdir.index)
            ts, offset = entry.timestamp, entry.offset
            if previous is not None and (ts <= previous[0] or offset < previous[1]):
                self.sink.add(
                    "timeindex-not-monotonic",
                    self.path,
                    n * _TIME_ENTRY_SIZE,
                    f"entry {n} (timestamp {ts}, offset {offset}) does not follow "
                    f"(timestamp {previous[0]}, offset {previous[1]})",
                )
                continue
            previous = (ts, offset)
            yield n, ts, offset

    def on_batch(self, b: BatchInfo) -> None:
        if b.last_offset is None:
            return
        changed = b.max_timestamp is not None and b.max_timestamp > self.running_max
        if changed:
            assert b.max_timestamp is not None
            self.running_max, self.running_max_offset = b.max_timestamp, b.last_offset
        cursor = self.cursor
        while cursor.head is not None and cursor.head[2] < b.last_offset:
            n, ts, offset = cursor.pop()
            self.sink.add(
                "timeindex-offset-mismatch",
                self.path,
                n * _TIME_ENTRY_SIZE,
                f"entry {n} (timestamp {ts}) names offset {offset}, which is not the "
                "last offset of a batch",
            )
        if cursor.head is not None and cursor.head[2] == b.last_offset:
            n, ts, offset = cursor.pop()
            if b.failed or (changed and ts == self.running_max):
                return
            where = (
                f"first reached at offset {self.running_max_offset}"
                if self.running_max_offset is not None
                else "no timestamp yet"
            )
            self.sink.add(
                "timeindex-timestamp-mismatch",
                self.path,
                n * _TIME_ENTRY_SIZE,
                f"entry {n} (timestamp {ts}, offset {offset}): the segment's max "
                f"timestamp up to that batch is {self.running_max} ({where})",
            )

    def finish(self, end: WalkEnd) -> None:
        if end.stopped_at is not None:
            return
        for n, ts, offset in self.cursor.rest():
            self.sink.add(
                "timeindex-offset-mismatch",
                self.path,
                n * _TIME_ENTRY_SIZE,
                f"entry {n} (timestamp {ts}) names offset {offset}, after the segment's last batch",
            )

    def close(self) -> None:
        self.cursor = Peek(iter(()))
        close_map(self.buf)
