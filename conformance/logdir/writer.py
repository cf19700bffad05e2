"""Write partition directories exactly as a Kafka 3.9 broker's ``UnifiedLog``/``LogSegment`` do.

Per appended batch (one batch per append, as a leader appends producer batches):

* roll first when ``segment size > segment.bytes - batch size`` (``LogSegment.shouldRoll``);
  the new segment's base offset is the batch's base offset; the old segment gets its final
  time-index entry and its indexes are trimmed (``onBecomeInactiveSegment``); a producer
  snapshot ``<new base>.snapshot`` is taken;
* append the bytes to ``<base>.log``; when ``bytesSinceLastIndexEntry > index.interval.bytes``
  (checked BEFORE counting this batch) add ``(batch last offset, batch position)`` to
  ``.index`` and ``maybeAppend(maxTimestampSoFar, its offset)`` to ``.timeindex``;
* an ABORT marker of producer P appends ``AbortedTxn(P, first offset of P's transaction,
  marker offset, last stable offset)`` to the active segment's ``.txnindex``.

``close()`` is a clean shutdown: the active segment gets its final time-index entry, indexes
are trimmed, a producer snapshot at the log end offset is written. With ``clean=False`` the
active segment's index files stay preallocated (zero-filled), as after a crash.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.logdir import checkpoint, snapshot, txnindex
from conformance.logdir.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    write_offset_entry,
    write_time_entry,
)
from conformance.primitives.java import wrap32
from conformance.stream.decoder import StreamDecoder
from conformance.wire.batch import RecordBatchV2
from conformance.wire.control import read_control_key
from conformance.wire.layout import MAGIC_OFFSET, MAGIC_VALUE_V2
from conformance.wire.legacy import LegacyBatch
from conformance.wire.record import Record


def filename_prefix(offset: int) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: at least 20 digits, zero-padded."""
    return f"{offset:020d}"


@dataclass
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024  # log.segment.bytes
    index_interval_bytes: int = 4096  # index.interval.bytes
    segment_index_bytes: int = 10 * 1024 * 1024  # segment.index.bytes (preallocation)


@dataclass
class _Segment:
    base_offset: int
    size: int = 0
    bytes_since_last_index_entry: int = 0
    offset_entries: list[bytes] = field(default_factory=list)
    time_entries: list[bytes] = field(default_factory=list)
    last_time: tuple[int, int] | None = None  # last time-index entry (timestamp, offset)
    max_ts: int = -1
    max_ts_offset: int = -1
    txn_entries: list[bytes] = field(default_factory=list)

    def maybe_append_time(self, timestamp: int, offset: int) -> None:
        """``TimeIndex.maybeAppend``: only a strictly larger timestamp gets an entry."""
        last_ts = -1 if self.last_time is None else self.last_time[0]
        if timestamp > last_ts:
            self.time_entries.append(write_time_entry(self.base_offset, timestamp, offset))
            self.last_time = (timestamp, offset)


@dataclass
class _Producer:
    epoch: int = -1
    last_seq: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int = -1
    order: int = 0


class PartitionWriter:
    """Appends batches to ``<dir>/<topic>-<partition>/`` like the partition leader does."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        topic: str = "topic",
        partition: int = 0,
        config: LogConfig | None = None,
        *,
        topic_id: str = "AAAAAAAAAAAAAAAAAAAAAQ",
    ) -> None:
        self.root = Path(directory)
        self.topic = topic
        self.partition = partition
        self.dir = self.root / f"{topic}-{partition}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = config or LogConfig()
        self.topic_id = topic_id
        self.segments: list[_Segment] = [_Segment(0)]
        self.next_offset = 0
        self.producers: dict[int, _Producer] = {}
        self.epochs: list[checkpoint.EpochEntry] = []
        self.epochs_flushed = False  # LeaderEpochFileCache writes its file only when changed
        self.last_snap_offset = 0  # ProducerStateManager.lastSnapOffset
        self._log = open(self._path(0, ".log"), "wb")  # noqa: SIM115 - closed in close()

    def _path(self, base: int, suffix: str) -> Path:
        return self.dir / (filename_prefix(base) + suffix)

    @property
    def active(self) -> _Segment:
        return self.segments[-1]

    # ------------------------------------------------------------------------------- append
    def append(self, batch: bytes) -> None:
        """Append one batch as stored on disk (offsets already assigned)."""
        # a v2 batch's producer state needs its first record only; a legacy wrapper's
        # timestamp needs them all
        v2 = len(batch) > MAGIC_OFFSET and batch[MAGIC_OFFSET] >= MAGIC_VALUE_V2
        decoder = StreamDecoder(batch, mode="file", keep=1 if v2 else None)
        batches = list(decoder)
        if decoder.error is not None or len(batches) != 1 or decoder.tail is not None:
            raise ValueError(f"not one valid batch: {decoder.error or decoder.tail}")
        decoded = batches[0]
        header = decoded.header
        last_offset = header.last_offset
        # UnifiedLog.maybeRoll: the batch's first offset for v2; unknown for v0/v1, where Kafka
        # rolls at lastOffset - Integer.MAX_VALUE; LocalLog.roll then takes max(that, LEO)
        first_offset = (
            header.base_offset if isinstance(header, RecordBatchV2) else last_offset - 0x7FFFFFFF
        )
        max_ts = (
            header.max_timestamp
            if isinstance(header, RecordBatchV2)
            else max((r.timestamp for r in decoded.records), default=-1)
        )
        if isinstance(header, LegacyBatch) and header.magic == 1:
            max_ts = header.max_timestamp
        seg = self.active
        if self._should_roll(seg, len(batch), last_offset):
            self._roll(max(first_offset, self.next_offset))
            seg = self.active
        position = seg.size
        self._log.write(batch)
        seg.size += len(batch)
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last_offset
        if seg.bytes_since_last_index_entry > self.config.index_interval_bytes:
            seg.offset_entries.append(write_offset_entry(seg.base_offset, last_offset, position))
            seg.maybe_append_time(seg.max_ts, seg.max_ts_offset)
            seg.bytes_since_last_index_entry = 0
        seg.bytes_since_last_index_entry += len(batch)
        self.next_offset = last_offset + 1
        if isinstance(header, RecordBatchV2):
            self._update_producer_state(header, decoded.records)
            epoch = header.partition_leader_epoch  # LeaderEpochFileCache.assign
            if epoch >= 0 and (not self.epochs or epoch > self.epochs[-1].epoch):
                self.epochs.append(checkpoint.EpochEntry(epoch, header.base_offset))
                self.epochs_flushed = True
        elif self.epochs:  # a v0/v1 append clears a non-empty epoch cache (clearAndFlush)
            self.epochs.clear()
            self.epochs_flushed = True

    def _should_roll(self, seg: _Segment, batch_size: int, last_offset: int) -> bool:
        """``LogSegment.shouldRoll`` (time-based rolling aside): size, full indexes, offsets
        that no longer fit a relative int32."""
        max_offset_entries = self.config.segment_index_bytes // OFFSET_ENTRY.size
        max_time_entries = self.config.segment_index_bytes // TIME_ENTRY.size
        return (
            seg.size > self.config.segment_bytes - batch_size
            or len(seg.offset_entries) >= max_offset_entries
            or len(seg.time_entries) >= max_time_entries - 1  # TimeIndex.isFull keeps a slot
            or not 0 <= last_offset - seg.base_offset <= 0x7FFFFFFF
        )

    def _update_producer_state(self, header: RecordBatchV2, records: Sequence[Record]) -> None:
        """``ProducerAppendInfo.append`` + ``ProducerStateEntry`` updates, for one batch."""
        pid = header.producer_id
        if pid < 0:
            return
        p = self.producers.get(pid)
        if p is None:
            p = self.producers[pid] = _Producer(order=len(self.producers))
        if header.is_control:
            if not records:  # a cleaned-out empty control batch changes nothing
                return
            marker = records[0]
            self._maybe_new_epoch(p, header.producer_epoch)
            if p.txn_first_offset >= 0 and read_control_key(marker.key) == 0:  # ABORT
                others = [
                    q.txn_first_offset
                    for k, q in self.producers.items()
                    if k != pid and q.txn_first_offset >= 0
                ]
                lso = min(others) if others else header.base_offset + 1
                self.active.txn_entries.append(
                    txnindex.write_aborted_txn(
                        txnindex.AbortedTxn(0, pid, p.txn_first_offset, header.base_offset, lso)
                    )
                )
            control = marker.control or {}
            p.coordinator_epoch = int(control.get("coordinatorEpoch", -1))  # type: ignore[call-overload]
            p.txn_first_offset = -1
            p.timestamp = marker.timestamp  # update(epoch, coordinatorEpoch, record.timestamp())
            return
        self._maybe_new_epoch(p, header.producer_epoch)  # addBatch
        p.last_seq = header.last_sequence
        p.last_offset = header.last_offset
        p.offset_delta = header.last_offset_delta
        p.timestamp = header.max_timestamp
        if header.is_transactional and p.txn_first_offset < 0:
            p.txn_first_offset = header.base_offset

    @staticmethod
    def _maybe_new_epoch(p: _Producer, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch drops the retained batch metadata."""
        if p.epoch != epoch:
            p.epoch = epoch
            p.last_seq, p.last_offset, p.offset_delta = -1, -1, 0

    # --------------------------------------------------------------------------- roll/close
    def _finish_segment(self, seg: _Segment, trim: bool = True) -> None:
        """``onBecomeInactiveSegment`` / ``close``: final time entry, trimmed index files.

        ``trim=False`` leaves the files as a crash would: preallocated, no final entry."""
        if trim and seg.max_ts >= 0:
            seg.maybe_append_time(seg.max_ts, seg.max_ts_offset)
        idx = b"".join(seg.offset_entries)
        tidx = b"".join(seg.time_entries)
        if not trim:
            size = self.config.segment_index_bytes
            idx = idx + bytes(size // OFFSET_ENTRY.size * OFFSET_ENTRY.size - len(idx))
            tidx = tidx + bytes(size // TIME_ENTRY.size * TIME_ENTRY.size - len(tidx))
        self._path(seg.base_offset, ".index").write_bytes(idx)
        self._path(seg.base_offset, ".timeindex").write_bytes(tidx)
        if seg.txn_entries:
            self._path(seg.base_offset, ".txnindex").write_bytes(b"".join(seg.txn_entries))

    def _roll(self, new_base: int) -> None:
        self._log.close()
        if self.active.size == 0 and self.active.base_offset == new_base:
            # LocalLog.roll (KAFKA-6388): an empty active segment at that offset is recreated
            self.segments[-1] = _Segment(new_base)
        else:
            self._finish_segment(self.active)
            self.segments.append(_Segment(new_base))
        self._log = open(self._path(new_base, ".log"), "wb")  # noqa: SIM115
        self._write_snapshot(new_base)

    def _write_snapshot(self, offset: int) -> None:
        """``ProducerStateManager.takeSnapshot``: only past the last snapshot's offset."""
        if offset <= self.last_snap_offset:
            return
        self.last_snap_offset = offset
        entries = [
            snapshot.ProducerStateEntry(
                pid,
                p.epoch,
                p.last_seq,
                p.last_offset,
                p.offset_delta,
                p.timestamp,
                p.coordinator_epoch,
                p.txn_first_offset,
            )
            for pid, p in _java_hashmap_order(self.producers)
        ]
        self._path(offset, ".snapshot").write_bytes(snapshot.write_snapshot(entries))

    def close(self, *, clean: bool = True) -> Path:
        """Shut down; returns the partition directory."""
        self._finish_segment(self.active, trim=clean)
        self._log.close()
        if clean:
            self._write_snapshot(self.next_offset)
        self.dir.joinpath(checkpoint.LEADER_EPOCH_CHECKPOINT).write_bytes(
            checkpoint.write_leader_epoch_checkpoint(self.epochs) if self.epochs_flushed else b""
        )
        self.dir.joinpath(checkpoint.PARTITION_METADATA).write_bytes(
            checkpoint.write_partition_metadata(self.topic_id)
        )
        return self.dir


def _java_hashmap_order(producers: dict[int, _Producer]) -> list[tuple[int, _Producer]]:
    """Iteration order of a ``java.util.HashMap<Long, ...>`` (what the snapshot writer walks)."""
    capacity = 16
    while len(producers) > capacity * 0.75:
        capacity *= 2

    def bucket(pid: int) -> int:
        h = wrap32((pid & 0xFFFFFFFF) ^ ((pid >> 32) & 0xFFFFFFFF))
        h ^= (h & 0xFFFFFFFF) >> 16
        return h & (capacity - 1)

    return sorted(producers.items(), key=lambda kv: (bucket(kv[0]), kv[1].order))


def write_batches(
    directory: str | os.PathLike[str],
    batches: list[bytes],
    *,
    topic: str = "topic",
    partition: int = 0,
    config: LogConfig | None = None,
    clean: bool = True,
) -> Path:
    """Write ``batches`` (offsets assigned) as one partition directory; returns its path."""
    w = PartitionWriter(directory, topic, partition, config)
    for b in batches:
        w.append(b)
    return w.close(clean=clean)


def assign_offsets(batches: list[bytes], start: int = 0) -> list[bytes]:
    """What the leader does to producer batches: consecutive base offsets (outside the CRC)."""
    out = []
    offset = start
    for raw in batches:
        decoder = StreamDecoder(raw, keep=0)
        decoded = list(decoder)
        if decoder.error is not None or len(decoded) != 1:
            raise ValueError("assign_offsets takes single valid batches")
        h = decoded[0].header
        if isinstance(h, RecordBatchV2):
            b = bytearray(raw)
            struct.pack_into(">q", b, 0, offset)
            out.append(bytes(b))
            offset += h.last_offset_delta + 1
        else:
            raise ValueError("assign_offsets supports v2 batches only")
    return out
