"""What a partition leader returns for one partition of a Fetch: the bytes of its segments as
``LocalLog.read`` / ``LogSegment.read`` slice them, the offsets of the response partition and,
for ``read_committed``, the aborted transactions of its transaction indexes (Kafka 3.x).

=====================================  ===================================================
step                                   Kafka
=====================================  ===================================================
offset past the log end, or before     ``OffsetOutOfRangeException``: OFFSET_OUT_OF_RANGE,
the first segment                      no records, high watermark, last stable and log
                                       start offsets -1 (``createLogReadResult``)
offset = the bound (high watermark,    no records (and an empty aborted list when
or last stable offset for              ``read_committed``)
read_committed)
the segment holding the offset         ``floorSegment``; when no batch of it ends at or
                                       after the offset, the next segment
the first batch ending at or after     ``translateOffset``: from the ``.index`` entry at or
the offset                             below it (a negative position: from 0, as
                                       ``max(position, 0)``), batch headers only (no CRC
                                       check)
bytes returned                         ``slice(batch position, min(max position - batch
                                       position, max bytes))``: whole batches, a trailing
                                       one cut where the size ends (as ``FileRecords``
                                       slices); with ``min_one_message`` at least the
                                       first batch whole (KIP-74, Fetch v3+: the first
                                       partition of a response)
max bytes below 0 (an offset below    ``LogSegment.read``'s IllegalArgumentException:
the bound)                             UNKNOWN_SERVER_ERROR, offsets -1, no records
first batch larger than max bytes,     no records (Fetch v3+ ``checkFetchDataInfo``; v0-v2
``min_one_message`` off                return the cut batch: ``hard_max_bytes_limit``)
aborted transactions                   the ``.txnindex`` entries with ``lastOffset >=
                                       offset`` and ``firstOffset <`` the upper bound (the
                                       first ``.index`` entry at or after the end of the
                                       bytes returned, else the next segment's base offset,
                                       else the log end offset), segment after segment until
                                       an entry's last stable offset reaches the bound
=====================================  ===================================================

A batch header that does not read (a size below the minimum) is Kafka's
``CorruptRecordException``: the partition's error is CORRUPT_MESSAGE.

**What a log says of its transactions** (:func:`transactions`, the leader's producer state
and ``.txnindex`` rebuilt from the batches): a transactional data batch opens its producer's
transaction at its base offset; a COMMIT or ABORT marker closes it; an ABORT adds the index
entry ``(producer id, first offset, marker offset, last stable offset)``, the last stable
offset being the oldest transaction still open then, else the offset after the marker. The
log's last stable offset is the first offset of the oldest open transaction (else the high
watermark).

**ListOffsets** (:meth:`FetchLog.list_offset`, ``Partition.fetchOffsetForTimestamp``; the
fetchable bound is the high watermark, or the last stable offset for ``read_committed``):

=======================  ==================================================================
timestamp                answer (timestamp, offset)
=======================  ==================================================================
-1 (latest)              (-1, the bound)
-2 (earliest)            (-1, the log start offset)
t >= 0                   the first record in offset order, control records included, with a
                         timestamp >= t (batches whose max timestamp is below t skipped, as
                         ``FileRecords.searchForTimestamp``; from the segment's start: the
                         time index has no entry before 4096 bytes); (-1, -1) when there is
                         none or its offset is not below the bound
=======================  ==================================================================
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from conformance.broker.codes import CODES
from conformance.errors import CorruptRecordError
from conformance.stream.splitter import Batch, Splitter, file_frame
from conformance.wire.batch import RecordBatchV2
from conformance.wire.control import ABORT, read_control_key
from conformance.wire.layout import LAST_OFFSET_DELTA_OFFSET, MAGIC_VALUE_V2
from conformance.wire.record import Record

__all__ = [
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "CORRUPT_MESSAGE",
    "UNKNOWN_SERVER_ERROR",
    "NONE",
    "OFFSET_OUT_OF_RANGE",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "AbortedTxn",
    "FetchLog",
    "FetchRead",
    "Segment",
    "TxnEntry",
    "transactions",
]

NONE = CODES["NONE"]
OFFSET_OUT_OF_RANGE = CODES["OFFSET_OUT_OF_RANGE"]
CORRUPT_MESSAGE = CODES["CORRUPT_MESSAGE"]
UNKNOWN_SERVER_ERROR = CODES["UNKNOWN_SERVER_ERROR"]
#: a Fetch request's ``IsolationLevel``
READ_UNCOMMITTED = 0
READ_COMMITTED = 1
#: ListOffsets' special timestamps
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2


@dataclass(frozen=True)
class TxnEntry:
    """An aborted transaction as a ``.txnindex`` entry holds it."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def transactions(data: bytes) -> tuple[list[TxnEntry], int | None]:
    """The aborted transactions of the log ``data`` (one segment's bytes) and the first
    offset of its oldest open transaction (None: none is open)."""
    ongoing: dict[int, int] = {}
    aborted: list[TxnEntry] = []
    for b in Splitter(data, "memory"):
        if not isinstance(b, RecordBatchV2) or not b.is_transactional or b.producer_id < 0:
            continue
        pid = b.producer_id
        if not b.is_control:
            ongoing.setdefault(pid, b.base_offset)
            continue
        kinds = [read_control_key(r.key) for r in b]
        first = ongoing.pop(pid, None)
        if first is not None and kinds[:1] == [ABORT]:
            lso = min(ongoing.values(), default=b.last_offset + 1)
            aborted.append(TxnEntry(pid, first, b.last_offset, lso))
    return aborted, min(ongoing.values(), default=None)


class AbortedTxn(Protocol):
    """One ``.txnindex`` entry, as ``logdir.txnindex`` reads it (the fields a fetch needs)."""

    @property
    def producer_id(self) -> int: ...
    @property
    def first_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def last_stable_offset(self) -> int: ...


@dataclass(frozen=True)
class Segment:
    """One segment: its base offset, the ``.log`` bytes, the ``.index`` entries (absolute
    offset, position) and the ``.txnindex`` entries."""

    base_offset: int
    data: bytes
    index: Sequence[tuple[int, int]] = ()
    aborted: Sequence[AbortedTxn] = ()


@dataclass
class FetchRead:
    """One partition's part of a Fetch response."""

    error: int
    records: bytes
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted: list[AbortedTxn] | None = None  # None: read_uncommitted (the field is null)
    first_entry_incomplete: bool = False


@dataclass
class _Batch:
    position: int
    size: int
    last_offset: int


@dataclass
class FetchLog:
    """A partition's log on its leader. ``high_watermark`` / ``last_stable_offset`` default to
    the log end offset (every record replicated, no open transaction); ``log_start_offset``
    to the first segment's base offset."""

    segments: Sequence[Segment]
    high_watermark: int | None = None
    last_stable_offset: int | None = None
    log_start_offset: int | None = None
    _batches: dict[tuple[int, int], tuple[list[_Batch], CorruptRecordError | None]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if not self.segments:
            raise ValueError("a log has at least one segment")
        self.segments = sorted(self.segments, key=lambda s: s.base_offset)
        if self.log_start_offset is None:
            self.log_start_offset = self.segments[0].base_offset
        if self.high_watermark is None:
            self.high_watermark = self.log_end_offset
        if self.last_stable_offset is None:
            self.last_stable_offset = self.high_watermark

    # -- the segments' batch headers ----------------------------------------------------------
    def batches(
        self, segment: Segment, start: int = 0
    ) -> tuple[list[_Batch], CorruptRecordError | None]:
        """The batches of ``segment`` from position ``start`` as ``FileLogInputStream`` sees
        them (headers only; a short tail ends the list), and the ``CorruptRecordError`` of a
        header after them whose size is below the minimum (Kafka raises it when its iteration
        gets there)."""
        key = (id(segment), start)
        if key not in self._batches:
            out: list[_Batch] = []
            pos, data = start, segment.data
            error: CorruptRecordError | None = None
            while True:
                try:
                    framed = file_frame(data, pos)
                except CorruptRecordError as e:
                    error = e
                    break
                if framed is None:
                    break
                size, magic = framed
                out.append(_Batch(pos, size, _last_offset(data, pos, magic)))
                pos += size
            self._batches[key] = (out, error)
        return self._batches[key]

    @property
    def log_end_offset(self) -> int:
        """The offset after the last batch before the end or the first damaged header (the
        last segment's base offset when it has none)."""
        for segment in reversed(self.segments):
            found, _ = self.batches(segment)
            if found:
                return found[-1].last_offset + 1
            if segment is self.segments[-1]:
                return segment.base_offset
        return self.segments[-1].base_offset  # pragma: no cover

    # -- Fetch --------------------------------------------------------------------------------
    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        min_one_message: bool,
        isolation: int = READ_UNCOMMITTED,
        hard_max_bytes_limit: bool = False,
    ) -> FetchRead:
        """The partition of a Fetch response for ``offset`` and ``max_bytes``."""
        hw, lso, start = self.high_watermark, self.last_stable_offset, self.log_start_offset
        assert hw is not None and lso is not None and start is not None
        committed = isolation == READ_COMMITTED
        bound = lso if committed else hw

        def answer(
            error: int,
            records: bytes = b"",
            aborted: list[AbortedTxn] | None = None,
            incomplete: bool = False,
        ) -> FetchRead:
            return FetchRead(error, records, hw, lso, start, aborted, incomplete)

        leo = self.log_end_offset
        first = self._floor(offset)
        if offset > leo or first is None or offset < start:
            # ReplicaManager's createLogReadResult(e): no offsets at all
            return FetchRead(OFFSET_OUT_OF_RANGE, b"", -1, -1, -1)
        if offset >= bound:
            return answer(NONE, aborted=[] if committed else None)
        if max_bytes < 0:  # LogSegment.read: "Invalid max size" (ReplicaManager: offsets -1)
            return FetchRead(UNKNOWN_SERVER_ERROR, b"", -1, -1, -1)
        try:
            for i in range(first, len(self.segments)):
                segment = self.segments[i]
                found = self._translate(segment, offset)
                if found is None:
                    continue
                batch = found
                max_position = self._max_position(segment, bound)
                adjusted = max(max_bytes, batch.size) if min_one_message else max_bytes
                if adjusted == 0:
                    records = b""
                else:
                    fetch_size = min(max_position - batch.position, adjusted)
                    records = segment.data[batch.position : batch.position + max(0, fetch_size)]
                incomplete = adjusted < batch.size
                if incomplete and not hard_max_bytes_limit:
                    records = b""
                aborted = (
                    self._aborted(i, offset, batch.position, len(records)) if committed else None
                )
                return answer(NONE, records, aborted, incomplete)
        except CorruptRecordError:
            return answer(CORRUPT_MESSAGE)
        return answer(NONE, aborted=[] if committed else None)

    def list_offset(self, timestamp: int, isolation: int | None) -> tuple[int, int]:
        """(timestamp, offset) ListOffsets answers for ``timestamp`` (``isolation`` None:
        ListOffsets v0/v1, whose bound is the high watermark as well)."""
        hw, lso, start = self.high_watermark, self.last_stable_offset, self.log_start_offset
        assert hw is not None and lso is not None and start is not None
        bound = lso if isolation == READ_COMMITTED else hw
        if timestamp == LATEST_TIMESTAMP:
            return -1, bound
        if timestamp == EARLIEST_TIMESTAMP:
            return -1, start
        for segment in self.segments:
            for b in Splitter(segment.data, "memory"):
                if b.max_timestamp < timestamp:
                    continue
                for r in _records(b):
                    if r.timestamp >= timestamp:
                        return (r.timestamp, r.offset) if r.offset < bound else (-1, -1)
        return -1, -1

    def _floor(self, offset: int) -> int | None:
        bases = [s.base_offset for s in self.segments]
        i = bisect.bisect_right(bases, offset) - 1
        return i if i >= 0 else None

    def _translate(self, segment: Segment, offset: int) -> _Batch | None:
        """``translateOffset``: the first batch whose last offset is >= ``offset``, searched
        from the ``.index`` entry at or below it (``max(position, 0)``: a corrupt negative
        position searches from the start)."""
        start = 0
        for entry_offset, position in segment.index:
            if entry_offset > offset:
                break
            start = max(position, 0)
        found, error = self.batches(segment, start)
        for batch in found:
            if batch.last_offset >= offset:
                return batch
        if error is not None:
            raise error
        return None

    def _max_position(self, segment: Segment, bound: int) -> int:
        """Where reading must stop in ``segment``: the position of ``bound`` when it falls in
        this segment, else the segment's size."""
        end = len(segment.data)
        for batch in self.batches(segment)[0]:
            if batch.last_offset >= bound:
                return batch.position
        return end

    def _aborted(self, i: int, offset: int, position: int, fetch_size: int) -> list[AbortedTxn]:
        segment = self.segments[i]
        upper = next(
            (o for o, p in segment.index if p >= position + fetch_size),
            self.segments[i + 1].base_offset if i + 1 < len(self.segments) else self.log_end_offset,
        )
        out: list[AbortedTxn] = []
        for s in self.segments[i:]:
            for txn in s.aborted:
                if txn.last_offset >= offset and txn.first_offset < upper:
                    out.append(txn)
                if txn.last_stable_offset >= upper:
                    return out
        return out


def _records(b: Batch) -> list[Record]:
    """A batch's records (v2, control records too) or its messages, each with its offset and
    timestamp."""
    if isinstance(b, RecordBatchV2):
        return list(b)
    return [Record(off, msg.timestamp, None, None) for off, msg in b.read_messages()]


def _last_offset(data: bytes, pos: int, magic: int) -> int:
    """A batch's last offset from its header (v2: base offset + last offset delta; v0/v1:
    the entry's offset)."""
    base = int.from_bytes(data[pos : pos + 8], "big", signed=True)
    if magic < MAGIC_VALUE_V2:
        return base
    at = pos + LAST_OFFSET_DELTA_OFFSET
    raw = data[at : at + 4]
    if len(raw) < 4:  # a v2 header cut short: Kafka reads past it and fails later
        return base
    return base + int.from_bytes(raw, "big", signed=True)
