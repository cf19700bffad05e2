"""verify-dir: transaction state along a partition's batches, and the ``.txnindex`` check.

Mirrors ``TransactionIndex`` (entries of ``txnindex.ENTRY_SIZE`` = 34 bytes:
``version int16 | producerId int64 | firstOffset int64 | lastOffset int64 |
lastStableOffset int64``) and how ``ProducerStateManager`` completes transactions.
docs/format.md §6.6.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.errors import CorruptIndexError, KafkaError
from conformance.logdir.txnindex import ENTRY_SIZE as TXN_ENTRY_SIZE
from conformance.logdir.txnindex import TransactionIndex
from conformance.logdir.verify.findings import Sink
from conformance.logdir.verify.logwalk import (
    BatchInfo,
    Peek,
    WalkEnd,
    absolute,
    close_map,
    map_file,
)
from conformance.wire.control import ABORT, COMMIT

# ---------------------------------------------------------------- transactions, .txnindex

_UNKNOWN = object()


@dataclass
class TxnState:
    """Ongoing transactions of a partition while its batches are walked in offset order."""

    complete: bool  # state of every producer is known (history from offset 0 or a snapshot)
    cleaned_upto: int | None  # cleaner-offset-checkpoint: transactions at or below may be cleaned
    open: dict[int, Any] = field(default_factory=dict)  # pid -> first offset | _UNKNOWN
    known: set[int] = field(default_factory=set)
    unknown: set[int] = field(default_factory=set)

    def forget(self) -> None:
        """Batches were skipped: from now on only producers seen again are known."""
        self.complete = False
        self.known.clear()
        self.open = {pid: _UNKNOWN for pid in self.open}

    def is_known(self, pid: int) -> bool:
        return pid not in self.unknown and (self.complete or pid in self.known)

    def on_batch(self, b: BatchInfo) -> tuple[str, Any, Any] | None:
        """Update the state; for an ABORT/COMMIT marker return what .txnindex must hold at its
        offset: ("required", firstOffset|None, lastStableOffset|None), ("none",) or
        ("optional",). None for other batches."""
        pid = b.producer_id
        if pid < 0 or b.last_offset is None:
            return None
        if not b.is_control:
            if b.is_transactional and pid not in self.open:
                known = self.is_known(pid)
                self.open[pid] = (
                    b.first_offset if known and b.first_offset is not None else _UNKNOWN
                )
                self.known.add(pid)
                self.unknown.discard(pid)
            return None
        if b.failed or b.control_type is None:
            self.open.pop(pid, None)
            self.unknown.add(pid)
            return ("optional", None, None)
        if b.control_type not in (ABORT, COMMIT):
            return None
        cleaned = self.cleaned_upto is not None and b.last_offset <= self.cleaned_upto
        had = pid in self.open
        first = self.open.pop(pid, None)
        known = self.is_known(pid)
        self.known.add(pid)
        self.unknown.discard(pid)
        if b.control_type == COMMIT:
            return ("none",)
        if had:
            lso: Any = None
            if (
                self.complete
                and not cleaned
                and not self.unknown
                and all(v is not _UNKNOWN for v in self.open.values())
            ):
                lso = min(self.open.values(), default=b.last_offset + 1)
            if first is _UNKNOWN or cleaned:
                return ("required", None, lso)
            return ("required", first, lso)
        if known and not cleaned:
            return ("none",)
        return ("optional", None, None)


class TxnIndexCheck:
    def __init__(self, path: str | None, log_path: str, base: int, sink: Sink) -> None:
        self.path = path
        self.log_path = log_path
        self.sink = sink
        self.base = base
        self.buf: Any = b""
        self.enabled = True
        self.cursor = Peek(iter(()))
        if path is None:
            return
        self.buf = map_file(path)
        self.index = TransactionIndex(self.buf, base, absolute(path))
        length = len(self.buf)
        if length % TXN_ENTRY_SIZE:
            sink.add(
                "txnindex-partial-entry",
                path,
                length - length % TXN_ENTRY_SIZE,
                f"{length % TXN_ENTRY_SIZE} trailing bytes do not form an entry "
                f"({TXN_ENTRY_SIZE} bytes); Kafka ignores them",
            )
        # Kafka's own checks first: a bad version makes the index unreadable
        last_position = -TXN_ENTRY_SIZE
        try:
            for txn in self.index:
                last_position = txn.position
        except KafkaError as e:
            sink.add(
                "txnindex-bad-version",
                path,
                last_position + TXN_ENTRY_SIZE,
                e.message or "",
                e.kafka_exception,
            )
            self.enabled = False
            return
        try:
            self.index.sanity_check()
        except CorruptIndexError as e:
            bad = next(t for t in self.index if t.last_offset < base)
            sink.add(
                "txnindex-sanity-check", path, bad.position, e.message or "", e.kafka_exception
            )
        self.cursor = Peek(t for t in self.index if t.last_offset >= base)

    def _extra(self, txn: Any, why: str) -> None:
        assert self.path is not None
        self.sink.add("txnindex-extra", self.path, txn.position, f"{txn}: {why}")

    def on_batch(self, b: BatchInfo, expect: tuple[str, Any, Any] | None) -> None:
        if not self.enabled or b.last_offset is None:
            return
        cursor = self.cursor
        while cursor.head is not None and cursor.head.last_offset < b.last_offset:
            self._extra(cursor.pop(), "no batch ends at its lastOffset")
        entry = None
        if cursor.head is not None and cursor.head.last_offset == b.last_offset:
            entry = cursor.pop()
        if expect is None:
            if entry is not None and not b.failed:
                self._extra(entry, f"the batch ending at {b.last_offset} is not an ABORT marker")
            return
        kind = expect[0]
        if entry is None:
            if kind == "required":
                where = self.path or "(no .txnindex file)"
                self.sink.add(
                    "txnindex-missing",
                    self.log_path,
                    b.position,
                    f"ABORT marker of producer {b.producer_id} at offset "
                    f"{b.last_offset} ends a transaction; {where} has no entry for it",
                )
            return
        if kind == "none":
            self._extra(entry, f"the marker at {b.last_offset} does not end an aborted transaction")
            return
        problems = []
        if entry.producer_id != b.producer_id:
            problems.append(f"producerId {entry.producer_id}, marker's {b.producer_id}")
        if kind == "required":
            first, lso = expect[1], expect[2]
            if first is not None and entry.first_offset != first:
                problems.append(f"firstOffset {entry.first_offset}, transaction started at {first}")
            elif first is None and entry.first_offset > b.last_offset:
                problems.append(f"firstOffset {entry.first_offset} > lastOffset {b.last_offset}")
            if lso is not None and entry.last_stable_offset != lso:
                problems.append(f"lastStableOffset {entry.last_stable_offset}, expected {lso}")
        if problems:
            assert self.path is not None
            self.sink.add(
                "txnindex-mismatch", self.path, entry.position, f"{entry}: " + "; ".join(problems)
            )

    def finish(self, end: WalkEnd) -> None:
        if not self.enabled or end.stopped_at is not None:
            return
        for txn in self.cursor.rest():
            self._extra(txn, "after the segment's last batch")

    def close(self) -> None:
        self.cursor = Peek(iter(()))
        close_map(self.buf)
