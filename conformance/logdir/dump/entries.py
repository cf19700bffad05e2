"""DumpLogSegments for ``.index``, ``.timeindex``, ``.txnindex`` and producer ``.snapshot`` files
(``dumpIndex``, ``dumpTimeIndex``, ``dumpTxnIndex``, ``dumpProducerIdSnapshot``).

==========  =====================  =====================================================
file        entry                  printed
==========  =====================  =====================================================
.index      ``OFFSET_ENTRY`` (8)   ``offset: O position: P``
.timeindex  ``TIME_ENTRY`` (12)    ``timestamp: T offset: O``
.txnindex   34 bytes               ``version: .. producerId: .. firstOffset: ..``
.snapshot   46 bytes + header      ``producerId: .. producerEpoch: ..``
==========  =====================  =====================================================
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TypeVar

from conformance.errors import CorruptSnapshotError
from conformance.logdir import snapshot
from conformance.logdir.dump.files import FileBatch, FileRecords, open_index, start_offset
from conformance.logdir.dump.javaemu import (
    INT_MAX,
    JFile,
    Uncaught,
    optional_long,
    read_file,
    scala_option,
)
from conformance.logdir.dump.session import DumpSession
from conformance.logdir.index import OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset
from conformance.logdir.txnindex import TransactionIndex
from conformance.primitives.java import java_parse_int, wrap32, wrap64
from conformance.wire.legacy import LegacyMessage
from conformance.wire.record import Record

#: an index entry (``.index`` or ``.timeindex``)
_E = TypeVar("_E", OffsetPosition, TimestampOffset)


class _FirstRecord(Exception):
    """Ends a record visit at its first record (``iterator().next()``)."""


class EntryDumper(DumpSession):
    """The index-like file kinds."""

    # -- .txnindex ----------------------------------------------------------------------------
    def dump_txn_index(self, file: JFile) -> None:
        name = file.name
        start = java_parse_int(name[: name.find(".")])
        if not os.path.exists(file.path):
            return  # TransactionIndex opens no channel: no entries
        data = read_file(file.path, file.path, "rw")
        txns = list(TransactionIndex(data, start, file.absolute))
        for t in txns:
            self.con.println(
                f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
                f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}"
            )

    # -- .snapshot ----------------------------------------------------------------------------
    def dump_producer_snapshot(self, file: JFile) -> None:
        fmt = self.fmt
        data = read_file(file.path, file.path, "all")
        try:
            entries = snapshot.read_snapshot(data, fmt.snapshot_schema)
        except CorruptSnapshotError as e:
            self.eprintln(str(e.message))
            return
        show = optional_long if fmt.optional_style == "java" else scala_option
        for e in entries:
            txn_first = e.current_txn_first_offset
            fields = {
                "producerId": e.producer_id,
                "producerEpoch": e.producer_epoch,
                "coordinatorEpoch": e.coordinator_epoch,
                "currentTxnFirstOffset": show(txn_first if txn_first >= 0 else None),
                "lastTimestamp": e.timestamp,
                "firstSequence": (
                    e.first_sequence
                    if fmt.snapshot_first_sequence == "wrapping"
                    else wrap32(e.last_sequence - e.offset_delta)
                ),
                "firstOffset": e.last_offset - e.offset_delta,
                "lastSequence": e.last_sequence,
                "lastOffset": e.last_offset,
                "offsetDelta": e.offset_delta,
                "timestamp": e.timestamp,
            }
            self.con.print(fmt.snapshot_head.format_map(fields))
            if e.has_batch_metadata or fmt.snapshot_batch_when == "always":
                self.con.print(fmt.snapshot_batch.format_map(fields))
            self.con.println()

    def _sanity_check(self, index: OffsetIndex | TimeIndex) -> None:
        """``sanityCheck()`` of the release: its checks (``index_last_equal_fails``,
        ``misaligned_index_sanity``), its exception and messages (``index_exception``,
        ``index_sanity_texts``), in Kafka's order."""
        fmt = self.fmt
        texts = fmt.index_sanity_texts
        fields = {"path": index.path, "base": index.base_offset, "length": index.length}

        def fail(kind: str, **more: int) -> Uncaught:
            return Uncaught(fmt.index_exception, texts[kind].format(**fields, **more))

        if isinstance(index, OffsetIndex):
            if index.entries != 0:
                last = index.last_offset()
                if last < index.base_offset or (
                    last == index.base_offset and fmt.index_last_equal_fails
                ):
                    raise fail("offset-last", last=last)
            aligned = index.length % index.entry_size == 0
            if not aligned and fmt.misaligned_index_sanity == "throws":
                raise fail("offset-size")
            return
        if index.entries != 0:
            last_entry = index.last_entry()
            first = index.entry(0).timestamp
            if last_entry.timestamp < first:
                raise fail("time-timestamp", last=last_entry.timestamp, first=first)
            if last_entry.offset < index.base_offset:
                raise fail("time-offset", last=last_entry.offset)
        if index.length % index.entry_size != 0:
            raise fail("time-size")

    def _entries(self, entries: Iterable[_E], base_offset: int) -> Iterator[tuple[_E, int, bool]]:
        """The entries of an index, each with its offset and whether it repeats the base
        offset after the first entry (the preallocated zero tail). DumpLogSegments stops at
        the first repeat: before looking at it (2.3+, ``index_zero_stop`` "first": it is not
        given) or once it is checked (the caller returns on ``repeat``)."""
        stop_first = self.fmt.index_zero_stop == "first"
        for i, entry in enumerate(entries):
            offset = wrap64(entry.offset)
            repeat = i > 0 and offset == base_offset
            if repeat and stop_first:
                return
            yield entry, offset, repeat

    def _first_record_offset(self, batch: FileBatch) -> int:
        """``batch.iterator().next().offset``: the records after the first are not read."""
        offsets: list[int] = []

        def take(offset: int, _r: Record | None, _m: LegacyMessage | None) -> None:
            offsets.append(offset)
            raise _FirstRecord

        try:
            self.visit_records(batch, take)
        except _FirstRecord:
            return offsets[0]
        raise Uncaught("java.util.NoSuchElementException", None)

    def dump_index(self, file: JFile) -> None:
        start, prefix = start_offset(file)
        log_file = file.sibling(prefix + ".log")
        records = FileRecords.open(log_file, self.fmt)
        try:
            index = open_index(OffsetIndex, file, start)
            if index.entries == 0 and self.fmt.empty_index_line is not None:
                self.con.println(self.fmt.empty_index_line.format(file=file))
                return
            if self.sanity_only:
                self._sanity_check(index)
                self.con.println(f"{file} passed sanity check.")
                return
            for entry, offset, repeat in self._entries(index, index.base_offset):
                part = records.slice(entry.position, self.max_message_size)
                first = next(part.batches(), None)
                if first is None:
                    raise Uncaught("java.util.NoSuchElementException", None)
                if self.fmt.index_compares == "batch-last":
                    last = first.last_offset
                else:  # the first record's offset (Kafka before 2.3, KAFKA-7487)
                    last = self._first_record_offset(first)
                if last != offset:
                    self.add_pair(
                        self.index_mismatches,
                        file.absolute,
                        (offset, last),
                        self.fmt.index_mismatch_pairs,
                    )
                if repeat:
                    return
                if not self.verify_only:
                    self.con.println(f"offset: {offset} position: {entry.position}")
        finally:
            records.close()

    # -- .timeindex ---------------------------------------------------------------------------
    def dump_time_index(self, file: JFile) -> None:
        start, prefix = start_offset(file)
        log_file = file.sibling(prefix + ".log")
        records = FileRecords.open(log_file, self.fmt)
        try:
            index = open_index(OffsetIndex, file.sibling(prefix + ".index"), start)
            time_index = open_index(TimeIndex, file, start)
            if self.sanity_only:
                self._sanity_check(time_index)
                self.con.println(f"{file} passed sanity check.")
                return
            prev = -1
            key = file.absolute
            for entry, offset, repeat in self._entries(time_index, time_index.base_offset):
                position = index.lookup(offset).position
                found = None
                batches = records.slice(position, INT_MAX).batches()
                if self.fmt.ts_index_batches == "eagerly":  # 4.3: a list of them all first
                    batches = iter(list(batches))
                for batch in batches:
                    if batch.last_offset >= offset:
                        found = batch
                        break
                if found is None:
                    self.append(self.ts_not_found, key, (offset, -1))
                elif found.last_offset != offset:
                    self.append(self.ts_not_found, key, (offset, found.last_offset))
                else:
                    seen = [-1]  # the largest timestamp so far

                    def fold(
                        _o: int,
                        record: Record | None,
                        message: LegacyMessage | None,
                        seen: list[int] = seen,
                    ) -> None:
                        ts = record.timestamp if record is not None else message.timestamp  # type: ignore[union-attr]
                        if ts > seen[0]:
                            seen[0] = ts

                    self.visit_records(found, fold)
                    max_ts = seen[0]
                    if max_ts != entry.timestamp:
                        self.append(self.ts_mismatches, key, (entry.timestamp, max_ts))
                    if prev >= entry.timestamp:
                        self.append(self.ts_out_of_order, key, (entry.timestamp, prev))
                    if repeat:
                        return  # before 2.3: only after an entry found in the log
                if not self.verify_only:
                    self.con.println(f"timestamp: {entry.timestamp} offset: {offset}")
                prev = entry.timestamp
        finally:
            records.close()
