"""verify-dir: one segment (``<base>.log`` with its indexes) within its partition's state:
offset continuity across segments, transactions seeded from ``<base>.snapshot``, offset gaps
allowed up to the ``cleaner-offset-checkpoint`` (mirrors ``UnifiedLog`` / ``LogLoader``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import DecodeError
from conformance.fileio import FileSource
from conformance.host.progress import Status
from conformance.logdir import checkpoint, snapshot
from conformance.logdir.index import base_offset_from_name
from conformance.logdir.verify.findings import Sink
from conformance.logdir.verify.indexes import OffsetIndexCheck, TimeIndexCheck
from conformance.logdir.verify.logwalk import BatchInfo, WalkEnd, walk_log
from conformance.logdir.verify.transactions import TxnIndexCheck, TxnState

PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")

# ----------------------------------------------------------------------- partition state


@dataclass
class PartitionState:
    sink: Sink
    limit: int
    progress: Status | None
    cleaned_upto: int | None = None
    txn: TxnState | None = None
    previous_last: int | None = None
    previous_where: str = ""
    segments: int = 0
    batches: int = 0
    log_bytes: int = 0


def cleaned_upto(partition_dir: Path) -> int | None:
    """The root ``cleaner-offset-checkpoint`` entry of ``partition_dir``, if readable."""
    m = PARTITION_DIR.match(partition_dir.name)
    ckpt = partition_dir.parent / "cleaner-offset-checkpoint"
    if m is None or not ckpt.is_file():
        return None
    try:
        entries = checkpoint.read_offset_checkpoint(ckpt.read_bytes(), str(ckpt))
    except (DecodeError, OSError):
        return None
    for e in entries:
        if e.topic == m.group(1) and e.partition == int(m.group(2)):
            return e.offset
    return None


def _seed_txn_state(log_path: Path, cleaned_upto: int | None) -> TxnState:
    base = base_offset_from_name(log_path)
    if base == 0:
        return TxnState(True, cleaned_upto)
    snap = log_path.with_name(f"{log_path.name.split('.')[0]}.snapshot")
    try:
        entries = snapshot.read_snapshot_file(snap)
    except (DecodeError, OSError):
        return TxnState(False, cleaned_upto)
    state = TxnState(True, cleaned_upto)
    for e in entries:
        if e.current_txn_first_offset >= 0:
            state.open[e.producer_id] = e.current_txn_first_offset
    return state


def verify_segment_into(log_path: Path, part: PartitionState) -> None:
    sink = part.sink
    path = str(log_path)
    base = base_offset_from_name(log_path)
    prefix = log_path.name.split(".")[0]
    if part.txn is None:
        part.txn = _seed_txn_state(log_path, part.cleaned_upto)
    try:
        if not log_path.is_file():
            raise IsADirectoryError(21, "not a regular file")
        log_size = os.path.getsize(path)
        FileSource(path).close()
    except OSError as e:
        sink.add("io-error", path, 0, f"cannot read: {e.strerror or e}")
        part.previous_last = None
        return
    part.segments += 1
    part.log_bytes += log_size
    if part.progress is not None:
        part.progress(f"verifying {path} ({log_size} bytes)")
    checks: list[Any] = []
    index = timeindex = None
    txn_check: TxnIndexCheck | None = None
    try:
        idx_path = log_path.with_name(prefix + ".index")
        if idx_path.is_file():
            index = OffsetIndexCheck(str(idx_path), base, log_size, sink)
            checks.append(index)
        tidx_path = log_path.with_name(prefix + ".timeindex")
        if tidx_path.is_file():
            timeindex = TimeIndexCheck(str(tidx_path), base, sink)
            checks.append(timeindex)
        txn_path = log_path.with_name(prefix + ".txnindex")
        txn_check = TxnIndexCheck(str(txn_path) if txn_path.is_file() else None, path, base, sink)
        checks.append(txn_check)
    except OSError as e:
        sink.add("io-error", path, 0, f"cannot read an index file: {e.strerror or e}")
        for c in checks:
            c.close()
        return
    end = WalkEnd()
    first = True
    txn = part.txn
    try:
        for b in walk_log(path, sink, part.limit, end, part.progress):
            part.batches += 1
            if first and b.first_offset is not None and base > b.first_offset:
                sink.add(
                    "segment-base-offset-mismatch",
                    path,
                    b.position,
                    f"file name base offset {base} > first batch's base offset {b.first_offset}",
                )
            first = False
            _continuity(part, path, b)
            if index is not None:
                index.on_batch(b)
            if timeindex is not None:
                timeindex.on_batch(b)
            expect = txn.on_batch(b)
            txn_check.on_batch(b, expect)
        if end.stopped_at is not None:  # the rest of the segment is unknown
            part.previous_last = None
            txn.forget()
        for c in checks:
            c.finish(end)
    finally:
        for c in checks:
            c.close()


def _continuity(part: PartitionState, path: str, b: BatchInfo) -> None:
    previous = part.previous_last
    if b.first_offset is not None and previous is not None:
        first = b.first_offset
        if first <= previous:
            part.sink.add(
                "offset-overlap",
                path,
                b.position,
                f"batch at byte {b.position} starts at offset {first}, not above "
                f"offset {previous} of the previous batch ({part.previous_where})",
            )
        elif first > previous + 1:
            cleaned = part.cleaned_upto
            if cleaned is None or first - 1 > cleaned:
                allowed = (
                    f"cleaner-offset-checkpoint allows gaps up to {cleaned}"
                    if cleaned is not None
                    else "no cleaner-offset-checkpoint entry"
                )
                part.sink.add(
                    "offset-gap",
                    path,
                    b.position,
                    f"offsets {previous + 1}..{first - 1} are missing before the batch "
                    f"at byte {b.position} ({allowed})",
                )
    if b.last_offset is not None:
        part.previous_last = b.last_offset
        part.previous_where = f"{os.path.basename(path)} @{b.position}"
    elif b.first_offset is None:
        part.previous_last = None
