"""verify-dir checks of ``.index`` and ``.timeindex`` against the ``.log`` walk.

Mirrors ``OffsetIndex`` / ``TimeIndex`` (``org.apache.kafka.storage.internals.log``):

===========  ==============  =============================================================
file         entry           fields
===========  ==============  =============================================================
.index       ``OFFSET_ENTRY``  relativeOffset int32 | position int32 (8 bytes)
.timeindex   ``TIME_ENTRY``    timestamp int64 | relativeOffset int32 (12 bytes)
===========  ==============  =============================================================

What both indexes share is checked once (:class:`_IndexCheck`): the preallocated zero tail,
Kafka's ``sanityCheck`` (with and without that tail) and the order of the entries; each
subclass checks its entries against the batches of the walk. Finding positions are entry
positions (``n * entry size``). docs/format.md §6.3-6.4.
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


class _IndexCheck:
    """An index file mapped and checked on its own; its entries, in order, on ``cursor``."""

    #: finding codes start with it
    code: str
    index_type: type[OffsetIndex] | type[TimeIndex]
    entry_size: int
    #: what the two fields of an entry are called in findings
    fields: tuple[str, str]

    def __init__(self, path: str, base: int, sink: Sink) -> None:
        self.path = path
        self.sink = sink
        self.buf = map_file(path)
        self.index = self.index_type(self.buf, base, absolute(path))
        size = self.entry_size
        n = self.index.entries
        #: entries before the zero tail
        self.count = (last_nonzero(self.buf, n * size) + size) // size
        self._zero_tail_and_sanity(n)
        self.cursor = Peek(self._entries())

    def _zero_tail_and_sanity(self, n: int) -> None:
        index, size = self.index, self.entry_size
        full = _sanity(index)
        # Kafka's check fails only because of the zero tail: it passes on the entries before it
        tail_only = (
            full is not None
            and self.count < n
            and index.length % size == 0
            and self._passes_before_the_tail()
        )
        if self.count < n:
            self.sink.add(
                f"{self.code}-zero-tail",
                self.path,
                self.count * size,
                f"{n - self.count} zero-filled entries from byte {self.count * size} "
                f"(file length {index.length}: preallocated, not trimmed)"
                + ("; Kafka's sanityCheck fails on them" if tail_only else ""),
            )
        if full is not None and not tail_only:
            position = n * size if index.length % size else max(0, self.count - 1) * size
            self.sink.add(
                f"{self.code}-sanity-check",
                self.path,
                position,
                full.message or "",
                full.kafka_exception,
            )

    def _passes_before_the_tail(self) -> bool:
        """Kafka's ``sanityCheck`` on the entries before the zero tail (a view, no copy: an
        index may be as large as ``segment.index.bytes``)."""
        view = memoryview(self.buf)[: self.count * self.entry_size] if self.count else b""
        try:
            index = self.index_type(view, self.index.base_offset, self.index.path)  # type: ignore[arg-type]
            return _sanity(index) is None
        finally:
            if isinstance(view, memoryview):
                view.release()

    def _pair(self, n: int) -> tuple[int, int]:
        raise NotImplementedError

    def _follows(self, previous: tuple[int, int], current: tuple[int, int]) -> bool:
        raise NotImplementedError

    def _entries(self) -> Iterator[tuple[int, int, int]]:
        """``(n, first field, second field)`` of the entries in order; an entry that does not
        follow the last one in order is a finding and skipped."""
        a_name, b_name = self.fields
        previous: tuple[int, int] | None = None
        for n in range(self.count):
            a, b = current = self._pair(n)
            if previous is not None and not self._follows(previous, current):
                self.sink.add(
                    f"{self.code}-not-monotonic",
                    self.path,
                    n * self.entry_size,
                    f"entry {n} ({a_name} {a}, {b_name} {b}) does not follow "
                    f"({a_name} {previous[0]}, {b_name} {previous[1]})",
                )
                continue
            previous = current
            yield n, a, b

    def close(self) -> None:
        self.cursor = Peek(iter(()))
        close_map(self.buf)


def _sanity(index: OffsetIndex | TimeIndex) -> CorruptIndexError | None:
    try:
        index.sanity_check()
    except CorruptIndexError as e:
        return e
    return None


# ---------------------------------------------------------------------------- .index checks


class OffsetIndexCheck(_IndexCheck):
    code = "index"
    index_type = OffsetIndex
    entry_size = OFFSET_ENTRY.size  # 8
    fields = ("offset", "position")

    def __init__(self, path: str, base: int, log_size: int, sink: Sink) -> None:
        self.log_size = log_size
        super().__init__(path, base, sink)
        # an entry whose offset is above its batch's last offset: (entry, offset, position,
        # that batch's last offset), resolved by the batches that follow
        self.pending: tuple[int, int, int, int] | None = None

    def _pair(self, n: int) -> tuple[int, int]:
        entry = self.index.entry(n)  # the one .index entry reader (conformance.logdir.index)
        return entry.offset, entry.position  # type: ignore[union-attr]

    def _follows(self, previous: tuple[int, int], current: tuple[int, int]) -> bool:
        return current[0] > previous[0] and current[1] > previous[1]

    def _outside(self, n: int, offset: int, pos: int) -> None:
        self.sink.add(
            "index-position-outside",
            self.path,
            n * self.entry_size,
            f"entry {n} (offset {offset}) points at position {pos}, outside the "
            f".log ({self.log_size} bytes)",
        )

    def _mismatch(self, n: int, offset: int, last: int, pos: int) -> None:
        self.sink.add(
            "index-offset-mismatch",
            self.path,
            n * self.entry_size,
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
                        n * self.entry_size,
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
                    n * self.entry_size,
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
                    n * self.entry_size,
                    f"entry {n} (offset {offset}) points at position {pos}, after "
                    f"the last complete batch (ends at {end.valid_end})",
                )


# ------------------------------------------------------------------------ .timeindex checks


class TimeIndexCheck(_IndexCheck):
    code = "timeindex"
    index_type = TimeIndex
    entry_size = TIME_ENTRY.size  # 12
    fields = ("timestamp", "offset")

    def __init__(self, path: str, base: int, sink: Sink) -> None:
        super().__init__(path, base, sink)
        self.running_max = -1  # TimestampOffset.UNKNOWN
        self.running_max_offset: int | None = None

    def _pair(self, n: int) -> tuple[int, int]:
        entry = self.index.entry(n)  # the one .timeindex entry reader (conformance.logdir.index)
        return entry.timestamp, entry.offset  # type: ignore[union-attr]

    def _follows(self, previous: tuple[int, int], current: tuple[int, int]) -> bool:
        return current[0] > previous[0] and current[1] >= previous[1]

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
                n * self.entry_size,
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
                n * self.entry_size,
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
                n * self.entry_size,
                f"entry {n} (timestamp {ts}) names offset {offset}, after the segment's last batch",
            )
