"""A partition's log for the fake broker, from files: a partition directory (its segments'
``.log``, ``.index`` and ``.txnindex``) or one file of record batches (a segment ``.log`` or
a captured ``records`` field, served as a single segment); and back (:func:`write_log`: the
segments' ``.log`` and ``.txnindex``, as a broker names them).

Bad inputs are ``ValueError`` with the reason: a segment whose name is not an offset Kafka
reads (``Long.parseLong``), a file named with digits that are not a 64-bit offset."""

from __future__ import annotations

import os
from pathlib import Path

from conformance.broker.fetch import FetchLog, Segment
from conformance.errors import CorruptRecordError, DecodeError
from conformance.fileio import read_bytes
from conformance.logdir.index import OffsetIndex, base_offset_from_name
from conformance.logdir.txnindex import AbortedTxn, TransactionIndex, write_aborted_txn
from conformance.stream.splitter import file_frame

__all__ = ["max_magic", "read_log", "write_log"]


def read_log(path: str | os.PathLike[str], *, base_offset: int | None = None) -> FetchLog:
    """The :class:`FetchLog` of a partition directory or of one file. A file's segment
    starts at ``base_offset``, else at the offset its name gives (``<20 digits>.log``), else
    at its first batch's base offset."""
    p = Path(path)
    if p.is_dir():
        logs = sorted(p.glob("*.log"))
        if not logs:
            raise ValueError(f"{p}: no .log segment in this directory")
        return FetchLog([_segment(f) for f in logs])
    if base_offset is None and p.name.split(".")[0].isdigit():
        base_offset = _offset_name(p)  # digits that are no offset: refused, not guessed
    data = read_bytes(p)
    if base_offset is None:  # not an offset-named file: its first batch's base offset
        base_offset = int.from_bytes(data[:8], "big", signed=True) if len(data) >= 8 else 0
    return FetchLog([Segment(base_offset, data)])


def _offset_name(path: Path) -> int:
    """The base offset a segment's name gives (``UnifiedLog.offsetFromFile``), or
    ``ValueError`` saying why it gives none."""
    try:
        offset = base_offset_from_name(path)
    except DecodeError as e:
        raise ValueError(
            f"{path.name}: a segment is named after its base offset (20 digits, "
            f"Long.parseLong): {e}"
        ) from None
    if offset < 0:
        raise ValueError(f"{path.name}: a segment's base offset cannot be negative")
    return offset


def _segment(log: Path) -> Segment:
    base = _offset_name(log)
    index_path = log.with_suffix(".index")
    txn_path = log.with_suffix(".txnindex")
    index: list[tuple[int, int]] = []
    if index_path.is_file():
        try:
            idx = OffsetIndex.open(index_path, base)
            index = [(e.offset, e.position) for e in idx if e.offset > base or not index]
        except DecodeError as e:
            raise ValueError(f"{index_path.name}: {e}") from None
    try:
        aborted = list(TransactionIndex.open(txn_path, base)) if txn_path.is_file() else []
    except DecodeError as e:
        raise ValueError(f"{txn_path.name}: {e}") from None
    return Segment(base, read_bytes(log), index, aborted)


def write_log(directory: str | os.PathLike[str], log: FetchLog) -> Path:
    """``log``'s segments as files of ``directory`` (created): ``<base offset, 20 digits>.log``
    with the segment's bytes and, when it has aborted transactions, its ``.txnindex``
    (``AbortedTxn`` entries, version 0 for any other kind of entry). :func:`read_log` reads
    them back; the ``.index`` is not written (a leader reads a segment without one)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for segment in log.segments:
        name = f"{segment.base_offset:020d}"
        (d / f"{name}.log").write_bytes(segment.data)
        if segment.aborted:
            entries = (
                t if isinstance(t, AbortedTxn) else AbortedTxn(
                    0, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset
                )
                for t in segment.aborted
            )  # fmt: skip
            (d / f"{name}.txnindex").write_bytes(b"".join(map(write_aborted_txn, entries)))
    return d


def max_magic(log: FetchLog) -> int:
    """The highest magic of the log's batches (what Fetch versions it can be served at)."""
    top = 0
    for segment in log.segments:
        pos = 0
        while True:
            try:
                framed = file_frame(segment.data, pos)
            except CorruptRecordError:  # a damaged header ends the walk
                break
            if framed is None:
                break
            size, magic = framed
            top = max(top, magic)
            pos += size
    return top
