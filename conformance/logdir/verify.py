"""``kafka-conformance verify-dir``: verify a segment, a partition directory or a log directory.

Spec §6 (files of a log directory). Every check reads the files with the kit's own parsers
(``splitter``/``decoder`` for ``.log``, ``index``, ``txnindex``, ``snapshot``, ``checkpoint``);
this module only walks them side by side and compares:

* ``.log`` is decoded batch by batch, as Kafka's consumer decodes it (``StreamDecoder``, file
  semantics); after a batch that fails, the walk resumes at the next batch boundary when the
  splitter could still frame the failing batch (so one bad batch gives one finding);
* ``.index``, ``.timeindex``, ``.txnindex`` are memory-mapped and merged with the batch walk
  (each index is sorted, so one pass over the log checks every entry);
* offsets are followed across the segments of a partition, transactions across its batches.

Memory does not grow with file sizes: one batch is decoded at a time, index files are mapped,
not read, and findings are capped per (file, code) (:data:`MAX_FINDINGS_PER_FILE_AND_CODE`).

Every finding has a stable code (:data:`FINDING_CODES`), a severity (:data:`SEVERITY`), a file
and a byte position in that file. ``info`` findings (preallocated zero tails, lifecycle files,
an index entry written for a multi-batch append) are states Kafka produces itself; they do not
make a directory unclean.

Positions: a batch finding points at the batch's first byte in ``.log``; an index finding at the
entry (``n * 8``, ``n * 12``, ``n * 34``); a zero or partial tail at its first byte; a
``txnindex-missing`` at the ABORT marker in ``.log``; a checkpoint finding at the offending
line; a snapshot finding at the version (0), CRC (2) or count (6) field; whole-file findings at 0.

Consequences (one defect, several findings), by design:

* a batch that fails decoding still contributes its header (a v2 base offset is outside the
  CRC): a damaged header can also give offset-gap/overlap and index findings;
* an unframeable entry (size < 14, not a zero tail) ends that segment's walk: index entries
  past it are not judged, and the offset chain and transaction state restart as "unknown";
* index entries that break monotonicity, and .txnindex entries below the segment base, are
  reported once and left out of the matching; a bad .txnindex version disables the matching
  for that segment (Kafka cannot read the file either);
* a segment whose file name changes base offset makes its index entries name other offsets
  (index/timeindex offset mismatches follow);
* transaction state: exact when the partition's first segment has base 0 or its
  ``<base>.snapshot`` parses; otherwise a producer is unknown until its next marker, and for
  unknown producers, and at or below the cleaner-offset-checkpoint, an ABORT marker may or may
  not have an entry and firstOffset / lastStableOffset are not checked;
* an .index entry at a batch start whose offset is the last offset of a LATER batch is how a
  pre-4.0 broker indexed a multi-batch (follower) append: ``index-entry-multi-batch`` (info),
  not ``index-offset-mismatch``.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.logdir import checkpoint, snapshot
from conformance import codecs
from conformance.wire.batch import RecordBatchV2
from conformance.stream.decoder import StreamDecoder
from conformance.errors import (
    CodecError,
    CorruptIndexError,
    CorruptRecordError,
    DecodeError,
    DecompressionLimitError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaError,
    NumberFormatError,
)
from conformance.logdir.index import OffsetIndex, TimeIndex, base_offset_from_name
from conformance.fileio import FileSource
from conformance.stream.splitter import Splitter
from conformance.logdir.txnindex import ENTRY_SIZE as TXN_ENTRY_SIZE
from conformance.logdir.txnindex import TransactionIndex

# ------------------------------------------------------------------------------------ codes

FINDING_CODES: dict[str, str] = {
    # .log: Kafka's consumer-side decode (one code per Java exception family)
    "log-corrupt-record": "a batch fails decoding with CorruptRecordException (CRC, size < 61, record size < 14)",
    "log-invalid-record": "a batch fails decoding with InvalidRecordException (record structure, counts)",
    "log-kafka-exception": "a batch fails decoding with KafkaException (typically a corrupt compressed stream)",
    "log-codec-error": "a compression library error escapes unwrapped (e.g. org.xerial.snappy.SnappyError)",
    "log-illegal-argument": "a batch fails decoding with IllegalArgumentException (e.g. codec id 5-7)",
    "log-runtime-exception": "a batch fails decoding with another raw JDK exception (NPE, IndexOutOfBounds, ...)",
    "log-decompressed-limit": "a batch decompresses to more than --max-decompressed bytes (kit limit; not checked further)",
    "log-zero-tail": "the .log ends in a zero-filled (preallocated) tail; Kafka's recovery truncates it",
    "log-truncated-tail": "the .log ends in a partial batch (not zero-filled); Kafka ignores it, recovery truncates it",
    # offsets
    "offset-overlap": "a batch's first offset is not above the previous batch's last offset (same or earlier segment)",
    "offset-gap": "offsets are missing between two batches, outside the range cleaner-offset-checkpoint allows",
    "segment-base-offset-mismatch": "the segment file name's base offset is greater than its first batch's base offset",
    # .index
    "index-zero-tail": "the .index ends in zero-filled (preallocated, untrimmed) entries; Kafka counts them as entries",
    "index-sanity-check": ".index fails Kafka's OffsetIndex.sanityCheck() (CorruptIndexException)",
    "index-not-monotonic": ".index entry whose offset or position is not above the previous entry's",
    "index-position-outside": ".index entry whose position is negative or at/after the end of the .log",
    "index-not-batch-boundary": ".index entry whose position is not the start of a batch",
    "index-offset-mismatch": ".index entry whose offset is not the last offset of the batch at its position",
    "index-entry-multi-batch": ".index entry = (last offset of a LATER batch, this batch's position): a pre-4.0 "
    "broker's entry for a multi-batch (follower) append; not an error",
    # .timeindex
    "timeindex-zero-tail": "the .timeindex ends in zero-filled (preallocated) entries (Kafka's sanityCheck would fail on them)",
    "timeindex-sanity-check": ".timeindex fails Kafka's TimeIndex.sanityCheck() (CorruptIndexException)",
    "timeindex-not-monotonic": ".timeindex entry whose timestamp is not above, or offset below, the previous entry's",
    "timeindex-timestamp-mismatch": ".timeindex entry at a batch's last offset, but that batch did not first reach "
    "the entry's timestamp as the segment's running max timestamp",
    "timeindex-offset-mismatch": ".timeindex entry whose offset is not the last offset of any batch of the segment",
    # .txnindex
    "txnindex-sanity-check": ".txnindex fails Kafka's TransactionIndex.sanityCheck() (lastOffset < segment base)",
    "txnindex-bad-version": ".txnindex entry whose version byte is > 0 (KafkaException when read)",
    "txnindex-partial-entry": ".txnindex length is not a multiple of 34; Kafka silently ignores the partial entry",
    "txnindex-missing": "an ABORT marker that ends a transaction has no .txnindex entry (position: the marker in .log)",
    "txnindex-extra": ".txnindex entry with no ABORT marker ending a transaction at its lastOffset",
    "txnindex-mismatch": ".txnindex entry for an ABORT marker with the wrong producerId, firstOffset or lastStableOffset",
    # other files
    "snapshot-unreadable": "a producer-state .snapshot Kafka refuses to load (CorruptSnapshotException)",
    "checkpoint-unreadable": "an offset checkpoint or leader-epoch-checkpoint Kafka refuses to read",
    "metadata-unreadable": "partition.metadata or meta.properties Kafka refuses to read",
    "unexpected-file": "a file or directory Kafka does not expect here (including orphaned index files)",
    "lifecycle-file": "a .deleted/.cleaned/.swap file or a -delete/-future/-stray directory (transient; not verified)",
    "io-error": "a file that could not be read",
}
DIR_FINDING_CODES = FINDING_CODES

_INFO = {
    "log-zero-tail",
    "index-zero-tail",
    "timeindex-zero-tail",
    "index-entry-multi-batch",
    "lifecycle-file",
}
_WARNING = {
    "log-truncated-tail",
    "log-decompressed-limit",
    "txnindex-partial-entry",
    "unexpected-file",
}
SEVERITY: dict[str, str] = {
    code: "info" if code in _INFO else "warning" if code in _WARNING else "error"
    for code in FINDING_CODES
}

MAX_FINDINGS_PER_FILE_AND_CODE = 100
_PROGRESS_STEP = 64 << 20
_CHUNK = 1 << 20

_SEGMENT_FILE = re.compile(r"^(\d+)\.(log|index|timeindex|txnindex|snapshot)$")
_KRAFT_FILE = re.compile(r"^\d{20}-\d{10}\.checkpoint(\.part|\.deleted)?$")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
_LIFECYCLE_SUFFIXES = (".deleted", ".cleaned", ".swap")
_LIFECYCLE_DIR_SUFFIXES = ("-delete", "-future", "-stray")
_ROOT_FILES_OK = {".lock", ".kafka_cleanshutdown", "bootstrap.checkpoint"}
_ROOT_DIRS_OK = {"remote-log-index-cache"}

Progress = Callable[[str], None]


@dataclass(slots=True)
class Finding:
    code: str
    file: str
    position: int
    message: str
    java_exception: str | None = None

    @property
    def severity(self) -> str:
        return SEVERITY[self.code]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "position": self.position,
            "message": self.message,
        }
        if self.java_exception is not None:
            out["java_exception"] = self.java_exception
        return out


@dataclass
class Report:
    root: str
    findings: list[Finding] = field(default_factory=list)
    partitions: int = 0
    segments: int = 0
    batches: int = 0
    log_bytes: int = 0
    suppressed: dict[str, int] = field(default_factory=dict)  # "file\tcode" -> count

    @property
    def ok(self) -> bool:
        """No finding other than informational ones."""
        return all(f.severity == "info" for f in self.findings) and not any(
            SEVERITY[k.split("\t")[1]] != "info" for k in self.suppressed
        )

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def by_file(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in sorted(self.findings, key=lambda f: (f.file, f.position, f.code)):
            out.setdefault(f.file, []).append(f)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "kafka-conformance/verify-dir/1",
            "root": self.root,
            "ok": self.ok,
            "partitions": self.partitions,
            "segments": self.segments,
            "batches": self.batches,
            "log_bytes": self.log_bytes,
            "findings": [
                f.to_json() for f in sorted(self.findings, key=lambda f: (f.file, f.position, f.code))
            ],
            "suppressed": [
                {"file": k.split("\t")[0], "code": k.split("\t")[1], "count": n}
                for k, n in sorted(self.suppressed.items())
            ],
        }

    def format_text(self) -> str:
        counts = {s: 0 for s in ("error", "warning", "info")}
        for f in self.findings:
            counts[f.severity] += 1
        head = (
            f"{self.root}: {self.partitions} partition(s), {self.segments} segment(s), "
            f"{self.batches} batches, {self.log_bytes} log bytes: "
        )
        if not self.findings:
            return head + "clean"
        lines = [
            head + f"{counts['error']} error(s), {counts['warning']} warning(s), "
            f"{counts['info']} informational"
        ]
        root = self.root
        for file, fs in self.by_file().items():
            try:
                shown = os.path.relpath(file, root) if os.path.isdir(root) else file
            except ValueError:  # pragma: no cover - different drives
                shown = file
            lines.append(shown)
            for f in fs:
                lines.append(f"  @{f.position} {f.code} [{f.severity}]: {f.message}")
        for k, n in sorted(self.suppressed.items()):
            file, code = k.split("\t")
            lines.append(f"  ({n} more {code} finding(s) in {file} not shown)")
        return "\n".join(lines)


class _Sink:
    """Collects findings, at most ``cap`` per (file, code)."""

    def __init__(self, cap: int = MAX_FINDINGS_PER_FILE_AND_CODE) -> None:
        self.findings: list[Finding] = []
        self.counts: dict[tuple[str, str], int] = {}
        self.suppressed: dict[str, int] = {}
        self.cap = cap

    def add(self, code: str, file: str | os.PathLike[str], position: int, message: str,
            java_exception: str | None = None) -> None:
        assert code in FINDING_CODES, code
        file = os.fspath(file)
        key = (file, code)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        if n > self.cap:
            k = f"{file}\t{code}"
            self.suppressed[k] = self.suppressed.get(k, 0) + 1
            return
        self.findings.append(Finding(code, file, position, message, java_exception))


# ---------------------------------------------------------------------------- file helpers

def _map(path: str) -> Any:
    """A read-only mapping of ``path`` (``b""`` when empty): index files are never read whole."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size == 0:
            return b""
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def _close(buf: Any) -> None:
    if isinstance(buf, mmap.mmap):
        buf.close()


def _last_nonzero(buf: Any, limit: int) -> int:
    """Index of the last non-zero byte in ``buf[:limit]``, -1 if none (64 KiB at a time)."""
    end = limit
    while end > 0:
        start = max(0, end - (1 << 16))
        stripped = bytes(buf[start:end]).rstrip(b"\0")
        if stripped:
            return start + len(stripped) - 1
        end = start
    return -1


def _zero_from(path: str, position: int) -> bool:
    """True when every byte of ``path`` from ``position`` to its end is zero (pread, 1 MiB)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = position
        while pos < size:
            chunk = os.pread(fd, min(_CHUNK, size - pos), pos)
            if not chunk or chunk.count(0) != len(chunk):
                return False
            pos += len(chunk)
        return True
    finally:
        os.close(fd)


def _abs(path: str) -> str:
    return str(Path(path).absolute())


class _Peek:
    """A one-item look-ahead over an iterator."""

    def __init__(self, it: Iterator[Any]) -> None:
        self._it = it
        self._head: Any = None
        self._done = False
        self._advance()

    def _advance(self) -> None:
        try:
            self._head = next(self._it)
        except StopIteration:
            self._head = None
            self._done = True

    @property
    def head(self) -> Any:
        return self._head

    def pop(self) -> Any:
        h = self._head
        self._advance()
        return h

    def rest(self) -> Iterator[Any]:
        while not self._done:
            yield self.pop()


# ---------------------------------------------------------------------------- the .log walk

@dataclass(slots=True)
class _BatchInfo:
    position: int
    size: int
    first_offset: int | None  # None: unknown (legacy wrapper that failed, short v2 batch)
    last_offset: int | None
    max_timestamp: int | None
    producer_id: int
    is_control: bool
    is_transactional: bool
    control_type: int | None  # type id of the control record, if decoded
    failed: bool


_ERROR_CODES: tuple[tuple[type[DecodeError], str], ...] = (
    (DecompressionLimitError, "log-decompressed-limit"),
    (CorruptRecordError, "log-corrupt-record"),
    (InvalidRecordError, "log-invalid-record"),
    (KafkaError, "log-kafka-exception"),
    (CodecError, "log-codec-error"),
    (IllegalArgumentError, "log-illegal-argument"),
)


def _error_code(e: DecodeError) -> str:
    for cls, code in _ERROR_CODES:
        if isinstance(e, cls):
            return code
    return "log-runtime-exception"


def _batch_info(header: Any, records: list[Any], position: int, failed: bool) -> _BatchInfo:
    if isinstance(header, RecordBatchV2):
        if len(header.raw) < 61:  # framed, but too short for a v2 header
            return _BatchInfo(position, header.size_in_bytes, header.base_offset, None, None,
                              -1, False, False, None, True)
        control_type = None
        if header.is_control and records and getattr(records[0], "control", None):
            control_type = records[0].control.get("typeId")
        return _BatchInfo(
            position, header.size_in_bytes, header.base_offset, header.last_offset,
            header.max_timestamp, header.producer_id, header.is_control,
            header.is_transactional, control_type, failed,
        )
    # legacy: the first offset is only known from the records of a compressed wrapper
    if header.compression_id == 0:
        first: int | None = header.last_offset
    else:
        first = records[0].offset if records else None
    try:
        max_ts: int | None = header.max_timestamp
    except DecodeError:  # pragma: no cover - a framed legacy entry has >= 14 bytes
        max_ts = None
    return _BatchInfo(position, header.size_in_bytes, first, header.last_offset, max_ts,
                      -1, False, False, None, failed)


@dataclass
class _WalkEnd:
    """How the walk over a .log ended."""

    valid_end: int = 0  # end of the last framed batch
    stopped_at: int | None = None  # an unframeable entry: nothing after it was verified
    tail_start: int | None = None  # a zero or partial tail starts here (entries into it are wrong)


def _walk_log(path: str, sink: _Sink, limit: int, end: _WalkEnd,
              progress: Progress | None) -> Iterator[_BatchInfo]:
    size = os.path.getsize(path)
    start = 0
    next_report = _PROGRESS_STEP
    while True:
        source = FileSource(path, start=start)
        decoder = StreamDecoder(source, mode="file", filename=path, decompressed_limit=limit)
        resume: int | None = None
        try:
            for decoded in decoder:
                header = decoded.header
                position = start + header.position
                failed = decoder.error is not None  # the batch whose records failed
                if failed:
                    _decode_finding(sink, path, decoder.error, position)
                    resume = position + header.size_in_bytes
                end.valid_end = position + header.size_in_bytes
                yield _batch_info(header, decoded.records, position, failed)
                if progress is not None and end.valid_end >= next_report:
                    progress(f"{path}: {end.valid_end >> 20}/{size >> 20} MiB")
                    next_report += _PROGRESS_STEP
            if decoder.error is not None and resume is None:
                error = decoder.error
                position = start + (error.position or 0)
                if start + decoder.splitter.position > position:
                    # framed (e.g. a CRC failure): report it and carry on after it
                    header = next(iter(Splitter(FileSource(path, start=position), "file", path)))
                    _decode_finding(sink, path, error, position)
                    resume = position + header.size_in_bytes
                    end.valid_end = resume
                    yield _batch_info(header, [], position, True)
                elif isinstance(error, CorruptRecordError) and _zero_from(path, position):
                    sink.add("log-zero-tail", path, position,
                             f"{size - position} zero bytes from byte {position} to the end "
                             "(preallocated segment; Kafka's reader fails on it with "
                             f"\"{error.message}\", recovery truncates it)")
                    end.tail_start = position
                    return
                else:
                    _decode_finding(sink, path, error, position)
                    end.stopped_at = position
                    return
            if resume is None:
                tail = decoder.tail
                if tail is not None:
                    position = start + tail.position
                    end.tail_start = position
                    if _zero_from(path, position):
                        sink.add("log-zero-tail", path, position,
                                 f"{tail.bytes} zero bytes at the end (preallocated segment)")
                    else:
                        sink.add("log-truncated-tail", path, position,
                                 f"{tail.bytes} bytes after the last complete batch do not form "
                                 "a complete batch (Kafka's reader stops there)")
                return
        finally:
            source.close()
        start = resume


def _decode_finding(sink: _Sink, path: str, error: DecodeError | None, position: int) -> None:
    assert error is not None
    sink.add(_error_code(error), path, position,
             f"batch at byte {position}: {error.java_string()}", error.kafka_exception)


# ------------------------------------------------------------------------- .index checks

class _OffsetIndexCheck:
    def __init__(self, path: str, base: int, log_size: int, sink: _Sink) -> None:
        self.path = path
        self.sink = sink
        self.log_size = log_size
        self.buf = _map(path)
        index = OffsetIndex(self.buf, base, _abs(path))
        self.index = index
        n = index.entries
        self.count = (_last_nonzero(self.buf, n * 8) + 8) // 8  # entries before the zero tail
        if self.count < n:
            sink.add("index-zero-tail", path, self.count * 8,
                     f"{n - self.count} zero-filled entries from byte {self.count * 8} "
                     f"(file length {index.length}: preallocated, not trimmed)")
        self._sanity()
        self.cursor = _Peek(self._entries())
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
        if index.length % 8 == 0 and self.count < index.entries:
            view = memoryview(self.buf)[: self.count * 8] if self.count else b""
            try:
                OffsetIndex(view, index.base_offset, index.path).sanity_check()
                return  # only the zero tail makes it fail
            except CorruptIndexError:
                pass
            finally:
                if isinstance(view, memoryview):
                    view.release()
        position = index.entries * 8 if index.length % 8 else max(0, self.count - 1) * 8
        self.sink.add("index-sanity-check", self.path, position, full.message or "",
                      full.kafka_exception)

    def _entries(self) -> Iterator[tuple[int, int, int]]:
        previous: tuple[int, int] | None = None
        for n in range(self.count):
            entry = self.index.entry(n)  # the one .index entry parser (conformance.logdir.index)
            offset, pos = entry.offset, entry.position
            if previous is not None and (offset <= previous[0] or pos <= previous[1]):
                self.sink.add("index-not-monotonic", self.path, n * 8,
                              f"entry {n} (offset {offset}, position {pos}) does not follow "
                              f"(offset {previous[0]}, position {previous[1]})")
                continue
            previous = (offset, pos)
            yield n, offset, pos

    def _outside(self, n: int, offset: int, pos: int) -> None:
        self.sink.add("index-position-outside", self.path, n * 8,
                      f"entry {n} (offset {offset}) points at position {pos}, outside the "
                      f".log ({self.log_size} bytes)")

    def _mismatch(self, n: int, offset: int, last: int, pos: int) -> None:
        self.sink.add("index-offset-mismatch", self.path, n * 8,
                      f"entry {n} names offset {offset}, but the batch at position {pos} "
                      f"ends at offset {last}")

    def on_batch(self, b: _BatchInfo) -> None:
        if self.pending is not None and b.last_offset is not None:
            n, offset, pos, last = self.pending
            if b.last_offset >= offset:
                if b.last_offset == offset:
                    self.sink.add("index-entry-multi-batch", self.path, n * 8,
                                  f"entry {n} pairs offset {offset} (last offset of the batch "
                                  f"at {b.position}) with the position {pos} of an earlier batch")
                else:
                    self._mismatch(n, offset, last, pos)
                self.pending = None
        cursor = self.cursor
        while cursor.head is not None and cursor.head[2] < b.position:
            n, offset, pos = cursor.pop()
            if pos < 0:
                self._outside(n, offset, pos)
            else:
                self.sink.add("index-not-batch-boundary", self.path, n * 8,
                              f"entry {n} (offset {offset}) points at position {pos}, inside "
                              "a batch")
        if cursor.head is not None and cursor.head[2] == b.position:
            n, offset, pos = cursor.pop()
            if b.last_offset is None or offset == b.last_offset:
                return
            if offset > b.last_offset and not b.failed and self.pending is None:
                self.pending = (n, offset, pos, b.last_offset)
            else:
                self._mismatch(n, offset, b.last_offset, pos)

    def finish(self, end: _WalkEnd) -> None:
        if self.pending is not None and end.stopped_at is None:
            n, offset, pos, last = self.pending
            self._mismatch(n, offset, last, pos)
        for n, offset, pos in self.cursor.rest():
            if pos < 0 or pos >= self.log_size:
                self._outside(n, offset, pos)
            elif end.stopped_at is not None and pos >= end.stopped_at:
                continue  # past an unframeable entry: cannot tell
            else:
                self.sink.add("index-not-batch-boundary", self.path, n * 8,
                              f"entry {n} (offset {offset}) points at position {pos}, after "
                              f"the last complete batch (ends at {end.valid_end})")

    def close(self) -> None:
        self.cursor = _Peek(iter(()))
        _close(self.buf)


# --------------------------------------------------------------------- .timeindex checks

class _TimeIndexCheck:
    def __init__(self, path: str, base: int, sink: _Sink) -> None:
        self.path = path
        self.sink = sink
        self.buf = _map(path)
        index = TimeIndex(self.buf, base, _abs(path))
        self.index = index
        n = index.entries
        self.count = (_last_nonzero(self.buf, n * 12) + 12) // 12
        self._sanity(n)
        self.cursor = _Peek(self._entries())
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
            self.sink.add("timeindex-zero-tail", self.path, self.count * 12,
                          f"{n - self.count} zero-filled entries from byte {self.count * 12} "
                          f"(file length {index.length}: preallocated, not trimmed)"
                          + ("; Kafka's sanityCheck fails on them" if full is not None else ""))
        if full is None:
            return
        if index.length % 12 == 0 and self.count < n:
            view = memoryview(self.buf)[: self.count * 12] if self.count else b""
            try:
                TimeIndex(view, index.base_offset, index.path).sanity_check()
                return
            except CorruptIndexError:
                pass
            finally:
                if isinstance(view, memoryview):
                    view.release()
        position = n * 12 if index.length % 12 else max(0, self.count - 1) * 12
        self.sink.add("timeindex-sanity-check", self.path, position, full.message or "",
                      full.kafka_exception)

    def _entries(self) -> Iterator[tuple[int, int, int]]:
        previous: tuple[int, int] | None = None
        for n in range(self.count):
            entry = self.index.entry(n)  # the one .timeindex entry parser (conformance.logdir.index)
            ts, offset = entry.timestamp, entry.offset
            if previous is not None and (ts <= previous[0] or offset < previous[1]):
                self.sink.add("timeindex-not-monotonic", self.path, n * 12,
                              f"entry {n} (timestamp {ts}, offset {offset}) does not follow "
                              f"(timestamp {previous[0]}, offset {previous[1]})")
                continue
            previous = (ts, offset)
            yield n, ts, offset

    def on_batch(self, b: _BatchInfo) -> None:
        if b.last_offset is None:
            return
        changed = b.max_timestamp is not None and b.max_timestamp > self.running_max
        if changed:
            assert b.max_timestamp is not None
            self.running_max, self.running_max_offset = b.max_timestamp, b.last_offset
        cursor = self.cursor
        while cursor.head is not None and cursor.head[2] < b.last_offset:
            n, ts, offset = cursor.pop()
            self.sink.add("timeindex-offset-mismatch", self.path, n * 12,
                          f"entry {n} (timestamp {ts}) names offset {offset}, which is not the "
                          "last offset of a batch")
        if cursor.head is not None and cursor.head[2] == b.last_offset:
            n, ts, offset = cursor.pop()
            if b.failed or (changed and ts == self.running_max):
                return
            where = (
                f"first reached at offset {self.running_max_offset}"
                if self.running_max_offset is not None else "no timestamp yet"
            )
            self.sink.add("timeindex-timestamp-mismatch", self.path, n * 12,
                          f"entry {n} (timestamp {ts}, offset {offset}): the segment's max "
                          f"timestamp up to that batch is {self.running_max} ({where})")

    def finish(self, end: _WalkEnd) -> None:
        if end.stopped_at is not None:
            return
        for n, ts, offset in self.cursor.rest():
            self.sink.add("timeindex-offset-mismatch", self.path, n * 12,
                          f"entry {n} (timestamp {ts}) names offset {offset}, after the "
                          "segment's last batch")

    def close(self) -> None:
        self.cursor = _Peek(iter(()))
        _close(self.buf)


# ---------------------------------------------------------------- transactions, .txnindex

_UNKNOWN = object()


@dataclass
class _TxnState:
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

    def on_batch(self, b: _BatchInfo) -> tuple[str, Any, Any] | None:
        """Update the state; for an ABORT/COMMIT marker return what .txnindex must hold at its
        offset: ("required", firstOffset|None, lastStableOffset|None), ("none",) or
        ("optional",). None for other batches."""
        pid = b.producer_id
        if pid < 0 or b.last_offset is None:
            return None
        if not b.is_control:
            if b.is_transactional and pid not in self.open:
                known = self.is_known(pid)
                self.open[pid] = b.first_offset if known and b.first_offset is not None else _UNKNOWN
                self.known.add(pid)
                self.unknown.discard(pid)
            return None
        if b.failed or b.control_type is None:
            self.open.pop(pid, None)
            self.unknown.add(pid)
            return ("optional", None, None)
        if b.control_type not in (0, 1):
            return None
        cleaned = self.cleaned_upto is not None and b.last_offset <= self.cleaned_upto
        had = pid in self.open
        first = self.open.pop(pid, None)
        known = self.is_known(pid)
        self.known.add(pid)
        self.unknown.discard(pid)
        if b.control_type == 1:
            return ("none",)
        if had:
            lso: Any = None
            if self.complete and not cleaned and not self.unknown and all(
                v is not _UNKNOWN for v in self.open.values()
            ):
                lso = min(self.open.values(), default=b.last_offset + 1)
            if first is _UNKNOWN or cleaned:
                return ("required", None, lso)
            return ("required", first, lso)
        if known and not cleaned:
            return ("none",)
        return ("optional", None, None)


class _TxnIndexCheck:
    def __init__(self, path: str | None, log_path: str, base: int, sink: _Sink) -> None:
        self.path = path
        self.log_path = log_path
        self.sink = sink
        self.base = base
        self.buf: Any = b""
        self.enabled = True
        self.cursor = _Peek(iter(()))
        if path is None:
            return
        self.buf = _map(path)
        self.index = TransactionIndex(self.buf, base, _abs(path))
        length = len(self.buf)
        if length % TXN_ENTRY_SIZE:
            sink.add("txnindex-partial-entry", path, length - length % TXN_ENTRY_SIZE,
                     f"{length % TXN_ENTRY_SIZE} trailing bytes do not form an entry "
                     f"({TXN_ENTRY_SIZE} bytes); Kafka ignores them")
        # Kafka's own checks first: a bad version makes the index unreadable
        last_position = -TXN_ENTRY_SIZE
        try:
            for txn in self.index:
                last_position = txn.position
        except KafkaError as e:
            sink.add("txnindex-bad-version", path, last_position + TXN_ENTRY_SIZE,
                     e.message or "", e.kafka_exception)
            self.enabled = False
            return
        try:
            self.index.sanity_check()
        except CorruptIndexError as e:
            bad = next(t for t in self.index if t.last_offset < base)
            sink.add("txnindex-sanity-check", path, bad.position, e.message or "",
                     e.kafka_exception)
        self.cursor = _Peek(t for t in self.index if t.last_offset >= base)

    def _extra(self, txn: Any, why: str) -> None:
        assert self.path is not None
        self.sink.add("txnindex-extra", self.path, txn.position, f"{txn}: {why}")

    def on_batch(self, b: _BatchInfo, expect: tuple[str, Any, Any] | None) -> None:
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
                self.sink.add("txnindex-missing", self.log_path, b.position,
                              f"ABORT marker of producer {b.producer_id} at offset "
                              f"{b.last_offset} ends a transaction; {where} has no entry for it")
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
            self.sink.add("txnindex-mismatch", self.path, entry.position,
                          f"{entry}: " + "; ".join(problems))

    def finish(self, end: _WalkEnd) -> None:
        if not self.enabled or end.stopped_at is not None:
            return
        for txn in self.cursor.rest():
            self._extra(txn, "after the segment's last batch")

    def close(self) -> None:
        self.cursor = _Peek(iter(()))
        _close(self.buf)


# ----------------------------------------------------------------------- partition state

@dataclass
class _Partition:
    sink: _Sink
    limit: int
    progress: Progress | None
    cleaned_upto: int | None = None
    txn: _TxnState | None = None
    previous_last: int | None = None
    previous_where: str = ""
    segments: int = 0
    batches: int = 0
    log_bytes: int = 0


def _cleaned_upto(partition_dir: Path) -> int | None:
    """The root ``cleaner-offset-checkpoint`` entry of ``partition_dir``, if readable."""
    m = _PARTITION_DIR.match(partition_dir.name)
    ckpt = partition_dir.parent / "cleaner-offset-checkpoint"
    if m is None or not ckpt.is_file():
        return None
    try:
        entries = checkpoint.parse_offset_checkpoint(ckpt.read_bytes(), str(ckpt))
    except (DecodeError, OSError):
        return None
    for e in entries:
        if e.topic == m.group(1) and e.partition == int(m.group(2)):
            return e.offset
    return None


def _seed_txn_state(log_path: Path, cleaned_upto: int | None) -> _TxnState:
    base = base_offset_from_name(log_path)
    if base == 0:
        return _TxnState(True, cleaned_upto)
    snap = log_path.with_name(f"{log_path.name.split('.')[0]}.snapshot")
    try:
        entries = snapshot.read(snap)
    except (DecodeError, OSError):
        return _TxnState(False, cleaned_upto)
    state = _TxnState(True, cleaned_upto)
    for e in entries:
        if e.current_txn_first_offset >= 0:
            state.open[e.producer_id] = e.current_txn_first_offset
    return state


def _verify_segment(log_path: Path, part: _Partition) -> None:
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
    txn_check: _TxnIndexCheck | None = None
    try:
        idx_path = log_path.with_name(prefix + ".index")
        if idx_path.is_file():
            index = _OffsetIndexCheck(str(idx_path), base, log_size, sink)
            checks.append(index)
        tidx_path = log_path.with_name(prefix + ".timeindex")
        if tidx_path.is_file():
            timeindex = _TimeIndexCheck(str(tidx_path), base, sink)
            checks.append(timeindex)
        txn_path = log_path.with_name(prefix + ".txnindex")
        txn_check = _TxnIndexCheck(str(txn_path) if txn_path.is_file() else None, path, base, sink)
        checks.append(txn_check)
    except OSError as e:
        sink.add("io-error", path, 0, f"cannot read an index file: {e.strerror or e}")
        for c in checks:
            c.close()
        return
    end = _WalkEnd()
    first = True
    txn = part.txn
    try:
        for b in _walk_log(path, sink, part.limit, end, part.progress):
            part.batches += 1
            if first and b.first_offset is not None and base > b.first_offset:
                sink.add("segment-base-offset-mismatch", path, b.position,
                         f"file name base offset {base} > first batch's base offset "
                         f"{b.first_offset}")
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


def _continuity(part: _Partition, path: str, b: _BatchInfo) -> None:
    previous = part.previous_last
    if b.first_offset is not None and previous is not None:
        first = b.first_offset
        if first <= previous:
            part.sink.add("offset-overlap", path, b.position,
                          f"batch at byte {b.position} starts at offset {first}, not above "
                          f"offset {previous} of the previous batch ({part.previous_where})")
        elif first > previous + 1:
            cleaned = part.cleaned_upto
            if cleaned is None or first - 1 > cleaned:
                allowed = (
                    f"cleaner-offset-checkpoint allows gaps up to {cleaned}"
                    if cleaned is not None else "no cleaner-offset-checkpoint entry"
                )
                part.sink.add("offset-gap", path, b.position,
                              f"offsets {previous + 1}..{first - 1} are missing before the batch "
                              f"at byte {b.position} ({allowed})")
    if b.last_offset is not None:
        part.previous_last = b.last_offset
        part.previous_where = f"{os.path.basename(path)} @{b.position}"
    elif b.first_offset is None:
        part.previous_last = None


# ------------------------------------------------------------------- other files of a dir

def _line_starts(data: bytes) -> list[tuple[int, str]]:
    """(byte position, text) of each line, split as ``BufferedReader.readLine`` splits."""
    out = []
    pos = 0
    for m in re.finditer(rb"\r\n|\r|\n", data):
        out.append((pos, data[pos : m.start()].decode("utf-8", "replace")))
        pos = m.end()
    if pos < len(data):
        out.append((pos, data[pos:].decode("utf-8", "replace")))
    return out


def _checkpoint_error_position(data: bytes, e: DecodeError) -> int:
    """Where in a checkpoint / partition.metadata file the error ``e`` points."""
    lines = _line_starts(data)
    message = e.message or ""

    def line(i: int) -> int:
        return lines[i][0] if i < len(lines) else len(data)

    m = re.search(r"Malformed line in checkpoint file \[.*?\]: (.*)\Z", message, re.S)
    if m is not None:
        for start, text in lines:
            if text == m.group(1):
                return start
        return 0
    if message.startswith(("Expected [", "Illegal Capacity")):
        return line(1)
    if message.startswith("Invalid topic ID") or isinstance(e, IllegalArgumentError):
        return line(1)
    if isinstance(e, NumberFormatError):
        token = re.search(r'For input string: "(.*)"\Z', message, re.S)
        for start, text in lines[2:]:
            if token is not None and token.group(1) in re.split(r"\s+", text):
                return start
        return 0
    if e.kafka_exception == "java.lang.NullPointerException":  # a missing line
        return len(data)
    return 0


def _properties_error_position(data: bytes, e: DecodeError) -> int:
    message = e.message or ""
    key = None
    if message.startswith("Unknown meta.properties version"):
        key = "version"
    else:
        m = re.match(r"Unable to read (\S+) as", message)
        if m is not None:
            key = m.group(1)
    if key is None:
        return 0
    for start, text in _line_starts(data):
        if re.match(rf"[ \t\f]*{re.escape(key)}[ \t\f]*[=: \t\f]", text + " "):
            return start
    return 0


def _verify_text_file(path: Path, sink: _Sink) -> None:
    try:
        data = path.read_bytes()
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    location = str(path.absolute())
    name = path.name
    try:
        if name in checkpoint.OFFSET_CHECKPOINTS:
            checkpoint.parse_offset_checkpoint(data, location)
        elif name == checkpoint.LEADER_EPOCH_CHECKPOINT:
            checkpoint.parse_leader_epoch_checkpoint(data, location)
        elif name == checkpoint.PARTITION_METADATA:
            checkpoint.parse_partition_metadata(data, location)
        elif name == checkpoint.META_PROPERTIES:
            checkpoint.parse_meta_properties(data)
    except DecodeError as e:
        if name == checkpoint.META_PROPERTIES:
            code, position = "metadata-unreadable", _properties_error_position(data, e)
        else:
            code = "metadata-unreadable" if name == checkpoint.PARTITION_METADATA else "checkpoint-unreadable"
            position = _checkpoint_error_position(data, e)
        sink.add(code, str(path), position, e.java_string(), e.kafka_exception)


def _verify_snapshot(path: Path, sink: _Sink) -> None:
    try:
        data = path.read_bytes()
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    try:
        snapshot.parse(data)
    except DecodeError as e:
        message = e.message or ""
        if "CRC" in message:
            position = 2
        elif "unknown file version" in message or "field 'version'" in message:
            position = 0
        elif "field 'crc'" in message:
            position = 2
        elif "Error reading field 'producer_entries'" in message and len(data) >= 10:
            position = 6
        elif "Error reading field" in message and len(data) >= 10:  # a partial entry
            position = 10 + (len(data) - 10) // 46 * 46
        else:
            position = 0
        sink.add("snapshot-unreadable", str(path), position, e.java_string(), e.kafka_exception)


def _classify_partition_file(name: str, is_dir: bool, kraft: bool) -> str | None:
    """None (expected), "lifecycle" or "unexpected"."""
    if is_dir:
        return "unexpected"
    if _SEGMENT_FILE.match(name) or name in (
        checkpoint.LEADER_EPOCH_CHECKPOINT, checkpoint.PARTITION_METADATA
    ):
        return None
    if kraft and (name == "quorum-state" or _KRAFT_FILE.match(name)):
        return None
    for suffix in _LIFECYCLE_SUFFIXES:
        if name.endswith(suffix) and _SEGMENT_FILE.match(name[: -len(suffix)]):
            return "lifecycle"
    return "unexpected"


def _verify_partition(pdir: Path, sink: _Sink, limit: int, progress: Progress | None,
                      report: Report) -> None:
    part = _Partition(sink, limit, progress, cleaned_upto=_cleaned_upto(pdir))
    kraft = pdir.name.startswith("__cluster_metadata-")
    logs: list[tuple[int, Path]] = []
    names = sorted(os.listdir(pdir))
    present = set(names)
    for name in names:
        p = pdir / name
        kind = _classify_partition_file(name, p.is_dir() and not _SEGMENT_FILE.match(name), kraft)
        if kind == "lifecycle":
            sink.add("lifecycle-file", str(p), 0,
                     "transient file of a deletion, cleaning or swap (Kafka finishes or undoes "
                     "it at load); not verified")
            continue
        if kind == "unexpected":
            sink.add("unexpected-file", str(p), 0, "Kafka does not expect this in a partition "
                     "directory")
            continue
        m = _SEGMENT_FILE.match(name)
        if m is None:
            if name in (checkpoint.LEADER_EPOCH_CHECKPOINT, checkpoint.PARTITION_METADATA):
                _verify_text_file(p, sink)
            continue
        suffix = m.group(2)
        if suffix == "log":
            logs.append((int(m.group(1)), p))
        elif suffix == "snapshot":
            _verify_snapshot(p, sink)
        elif f"{m.group(1)}.log" not in present:
            sink.add("unexpected-file", str(p), 0,
                     f"orphaned index file: no {m.group(1)}.log (Kafka deletes it at load)")
    for _, log_path in sorted(logs):
        _verify_segment(log_path, part)
    report.partitions += 1
    report.segments += part.segments
    report.batches += part.batches
    report.log_bytes += part.log_bytes


def _is_log_dir(path: Path) -> bool:
    try:
        children = list(path.iterdir())
    except OSError:
        return False
    for c in children:
        if c.name in checkpoint.OFFSET_CHECKPOINTS or c.name == checkpoint.META_PROPERTIES:
            return True
        if c.is_dir() and (_PARTITION_DIR.match(c.name) or c.name.endswith(_LIFECYCLE_DIR_SUFFIXES)):
            return True
    return False


def _verify_log_dir(root: Path, sink: _Sink, limit: int, progress: Progress | None,
                    report: Report) -> None:
    for name in sorted(os.listdir(root)):
        p = root / name
        if p.is_dir():
            if name.endswith(_LIFECYCLE_DIR_SUFFIXES):
                sink.add("lifecycle-file", str(p), 0, "partition directory being deleted, moved "
                         "(-future) or marked stray; not verified")
            elif _PARTITION_DIR.match(name):
                _verify_partition(p, sink, limit, progress, report)
            elif name not in _ROOT_DIRS_OK:
                sink.add("unexpected-file", str(p), 0, "directory Kafka does not expect in a log "
                         "directory")
        elif name in checkpoint.OFFSET_CHECKPOINTS or name == checkpoint.META_PROPERTIES:
            _verify_text_file(p, sink)
        elif name not in _ROOT_FILES_OK:
            sink.add("unexpected-file", str(p), 0, "file Kafka does not expect in a log directory")


# ------------------------------------------------------------------------------ public API

def verify_segment(
    log_path: str | os.PathLike[str],
    *,
    max_decompressed: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    progress: Progress | None = None,
) -> list[Finding]:
    """Verify one ``<base>.log`` and its ``.index``/``.timeindex``/``.txnindex``.

    Transactions are followed from the segment's start (state seeded from ``<base>.snapshot``
    when the base is not 0); offset gaps are allowed up to the root cleaner-offset-checkpoint
    entry (``../../cleaner-offset-checkpoint``) of the partition.
    """
    p = Path(log_path)
    base_offset_from_name(p)  # ValueError for a name that is not <offset>.log
    sink = _Sink()
    part = _Partition(sink, max_decompressed, progress, cleaned_upto=_cleaned_upto(p.parent))
    _verify_segment(p, part)
    return sink.findings


def verify_dir(
    path: str | os.PathLike[str],
    *,
    max_decompressed: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    progress: Progress | None = None,
) -> Report:
    """Verify a partition directory, a log directory (several partitions plus root checkpoint
    files) or a single ``.log`` file. Raises ``FileNotFoundError`` / ``ValueError`` for a path
    that is none of these."""
    p = Path(path)
    report = Report(str(p))
    sink = _Sink()
    if p.is_file():
        if not p.name.endswith(".log"):
            raise ValueError(f"{p}: not a .log file or a directory")
        base_offset_from_name(p)
        part = _Partition(sink, max_decompressed, progress, cleaned_upto=_cleaned_upto(p.parent))
        _verify_segment(p, part)
        report.segments, report.batches, report.log_bytes = part.segments, part.batches, part.log_bytes
        report.partitions = 0
    elif p.is_dir():
        if _is_log_dir(p):
            _verify_log_dir(p, sink, max_decompressed, progress, report)
        else:
            _verify_partition(p, sink, max_decompressed, progress, report)
    else:
        raise FileNotFoundError(f"{p}: no such file or directory")
    report.findings = sink.findings
    report.suppressed = sink.suppressed
    return report


# ------------------------------------------------------------------------------------- CLI


__all__ = [
    "DIR_FINDING_CODES",
    "FINDING_CODES",
    "Finding",
    "Report",
    "SEVERITY",
    "verify_dir",
    "verify_segment",
]
