"""``kafka-conformance dump``: Kafka 3.9's ``kafka.tools.DumpLogSegments``, byte for byte.

Source of truth: ``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` (Kafka 3.9) and the
classes it calls (``FileRecords``, ``FileLogInputStream.FileChannelRecordBatch``,
``DefaultRecordBatch``, ``AbstractLegacyRecordBatch``, ``LegacyRecord``, ``OffsetIndex``,
``TimeIndex``, ``TransactionIndex``, ``ProducerStateManager.readSnapshot``), checked against
the real tool (``conformance.jvm.kafka_jars.dump_log_segments``). All parsing is the kit's own
(``splitter``, ``batch``, ``legacy``, ``record``, ``control``, ``index``, ``txnindex``,
``snapshot``); this module only reproduces *what the tool reads when, and what it prints*.

What the tool does, per file given (in order), after printing ``Dumping <file>``:

=================  ===========================================================================
suffix (last .)    action
=================  ===========================================================================
``.log``           ``Log starting offset: N``; one line per batch; with deep iteration (implied
                   by ``--print-data-log``) one ``| offset: ...`` line per record (the batch's
                   ``iterator()``, not the consumer's streaming iterator); then
                   ``Found N invalid bytes at the end of <name>`` unless ``--max-bytes`` given
``.checkpoint``    as ``.log`` (KRaft snapshot): ``Snapshot end offset: O, epoch: E`` or
                   ``KRaft bootstrap snapshot``
``.index``         ``offset: O position: P`` per entry (stops at the first entry i > 0 whose
                   offset is the base offset), verified against the first batch at P
``.timeindex``     ``timestamp: T offset: O`` per entry, verified against the log
``.txnindex``      one line per aborted transaction (nothing if the file does not exist)
``.snapshot``      one line per producer (a corrupt snapshot: its message on stderr)
anything else      ``Ignoring unknown file <file>`` on stderr
=================  ===========================================================================

At the end, on stderr: index mismatches, time-index errors, non-consecutive offsets (each group
in the iteration order of a Scala 2.13 ``mutable.HashMap`` keyed by absolute path).

An exception the tool does not catch ends the run: what was printed so far stays, stderr gets
``Exception in thread "main" <class>: <message>`` (the JVM then prints a stack trace, not
mirrored) and the exit status is 1.

Deliberate differences (documented, not mirrored): a missing ``.index`` / ``.timeindex`` makes
the real tool *create* an empty file before failing (``AbstractIndex`` calls
``createNewFile``); this module reports the same exception without touching the directory.
Decompression is bounded by ``codecs.DEFAULT_DECOMPRESSED_LIMIT`` per batch (Kafka has no
limit and would need the heap).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from conformance import codecs
from conformance.wire import control
from conformance.logdir import snapshot
from conformance.wire.batch import RecordBatchV2
from conformance.errors import (
    BufferUnderflowError,
    CorruptSnapshotError,
    DecodeError,
    IllegalArgumentError,
    IndexOutOfBoundsError,
    KafkaError,
    NullPointerError,
)
from conformance.logdir.index import OffsetIndex, TimeIndex
from conformance.primitives.java import java_parse_int
from conformance.wire.legacy import LegacyBatch, LegacyMessage
from conformance.wire.record import Record, increment_sequence, wrap64
from conformance.fileio import FileSource
from conformance.stream.splitter import Splitter
from conformance.logdir.txnindex import TransactionIndex
from conformance.primitives.varint import read_unsigned_varint

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "INT_MAX", "dump", "dump_json"]

INT_MAX = 0x7FFFFFFF
#: ``--max-message-size`` default (5 MiB)
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_BATCH_OVERHEAD = 61


class _Uncaught(Exception):
    """A Java exception that escapes ``main`` (``Exception in thread "main" ...``)."""

    def __init__(self, java_class: str, message: str | None) -> None:
        super().__init__(message)
        self.java_class = java_class
        self.message = message

    def java_string(self) -> str:
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def _java_string(e: BaseException) -> str:
    if isinstance(e, (_Uncaught, DecodeError)):
        return e.java_string()
    raise TypeError(e)  # pragma: no cover


# ------------------------------------------------------------------------------------------
# Java value formatting and small JDK behaviours


def _jbool(b: bool) -> str:
    return "true" if b else "false"


def _optional_long(v: int | None) -> str:
    """``OptionalLong.toString()``."""
    return "OptionalLong.empty" if v is None else f"OptionalLong[{v}]"


def _utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _parse_long(s: str, bits: int = 64) -> int:
    """``Long.parseLong`` / ``Integer.parseInt``."""
    return java_parse_int(s, bits)


class _JFile:
    """``java.io.File`` on Unix: the normalised path, ``getName``, ``getAbsolutePath``."""

    def __init__(self, path: str) -> None:
        p = re.sub("/+", "/", path)
        if len(p) > 1 and p.endswith("/"):
            p = p[:-1]
        self.path = p

    def __str__(self) -> str:
        return self.path

    @property
    def name(self) -> str:
        return self.path[self.path.rfind("/") + 1 :]

    @property
    def absolute(self) -> str:
        if self.path.startswith("/"):
            return self.path
        cwd = os.getcwd()
        if not self.path:
            return cwd
        return cwd + self.path if cwd == "/" else cwd + "/" + self.path

    def sibling(self, name: str) -> _JFile:
        """``new File(file.getAbsoluteFile.getParent, name)``."""
        a = self.absolute
        i = a.rfind("/")
        parent = "/" if i <= 0 else a[:i]
        return _JFile(parent + name if parent == "/" else parent + "/" + name)


def _io_error(e: OSError, path: str) -> _Uncaught:
    """What ``FileChannel.open`` / ``Files.readAllBytes`` throw (``UnixException``)."""
    if isinstance(e, FileNotFoundError):
        return _Uncaught("java.nio.file.NoSuchFileException", path)
    if isinstance(e, PermissionError):
        return _Uncaught("java.nio.file.AccessDeniedException", path)
    return _Uncaught("java.nio.file.FileSystemException", f"{path}: {e.strerror}")


def _read_file(path: str, shown: str, how: str) -> bytes:
    """Small files only. ``how`` is how Kafka opens them, which decides its exception:
    ``raf`` (``RandomAccessFile``, indexes), ``rw`` (``FileChannel.open`` READ+WRITE,
    transaction index), ``all`` (``Files.readAllBytes``, producer snapshots)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        if how == "raf":
            reason = e.strerror or str(e)
            raise _Uncaught("java.io.FileNotFoundException", f"{shown} ({reason})") from None
        if isinstance(e, IsADirectoryError):
            if how == "all":
                raise _Uncaught("java.io.IOException", "Is a directory") from None
            raise _Uncaught("java.nio.file.FileSystemException", f"{shown}: Is a directory") from None
        raise _io_error(e, shown) from None


class _ScalaHashMap:
    """Iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` (what the tool's error
    maps are): buckets by ``improveHash(key.hashCode) & (size - 1)``, within a bucket by
    (signed) hash, ties in insertion order; the table doubles when an insert would reach
    ``0.75 * size``. Values keep their own order."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._table = 16

    @staticmethod
    def _hash(key: str) -> int:
        h = 0
        data = key.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
        h ^= h >> 16
        return h - (1 << 32) if h >= 1 << 31 else h

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def put(self, key: str, value: Any) -> None:
        if key not in self._values:
            if len(self._values) + 1 >= int(self._table * 0.75):
                self._table *= 2
        self._values[key] = value

    def items(self) -> list[tuple[str, Any]]:
        order = {k: i for i, k in enumerate(self._values)}
        mask = self._table - 1

        def sort_key(k: str) -> tuple[int, int, int]:
            h = self._hash(k)
            return (h & mask, h, order[k])

        return [(k, self._values[k]) for k in sorted(self._values, key=sort_key)]


class _Console:
    """``print``/``println`` to stdout: a line is written when it is complete; a partial line
    is written when the run dies (the JVM flushes ``System.out`` on exit)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.parts: list[str] = []

    def print(self, s: str) -> None:
        self.parts.append(s)

    def println(self, s: str = "") -> None:
        if self.parts:
            self.parts.append(s)
            s = "".join(self.parts)
            self.parts.clear()
        self.out.write(s + "\n")

    def flush_partial(self) -> None:
        if self.parts:
            self.out.write("".join(self.parts))
            self.parts.clear()


# ------------------------------------------------------------------------------------------
# FileRecords / FileChannelRecordBatch


class _View:
    """A window [start, end) of one shared :class:`FileSource` (what a ``FileRecords`` slice
    reads): sliceable with a length, as the splitter wants; no file is opened per slice."""

    def __init__(self, whole: FileSource, start: int, end: int) -> None:
        self.whole = whole
        self.start = start
        self.end = end

    def __len__(self) -> int:
        return max(0, self.end - self.start)

    def __getitem__(self, item: slice) -> bytes:
        n = len(self)
        lo = self.start + (item.start or 0)
        hi = self.start + (n if item.stop is None else min(item.stop, n))
        return self.whole[lo:hi] if hi > lo else b""


class _FileRecords:
    """``FileRecords`` (read-only) or one of its slices, over the kit's file splitter."""

    def __init__(self, shown: str, whole: FileSource | None, start: int, end: int,
                 size: int, file_size: int) -> None:
        self.shown = shown  # File.toString() of the file (appears in messages)
        self.whole = whole  # None for a directory (opens, but every read fails)
        self.start = start
        self.end = end
        self.size = size
        self.file_size = file_size

    @classmethod
    def open(cls, file: _JFile) -> _FileRecords:
        """``FileRecords.open(file, false)``."""
        path = file.path
        try:
            st = os.stat(path)
            whole = None if stat.S_ISDIR(st.st_mode) else FileSource(path)
        except OSError as e:
            raise _io_error(e, path) from None
        size = st.st_size
        if size > INT_MAX:
            if whole is not None:
                whole.close()
            raise _Uncaught(
                "org.apache.kafka.common.KafkaException",
                f"The size of segment {path} ({size}) is larger than the maximum allowed segment "
                f"size of {INT_MAX}",
            )
        return cls(path, whole, 0, INT_MAX, size, size)

    def __str__(self) -> str:
        return f"FileRecords(size={self.size}, file={self.shown}, start={self.start}, end={self.end})"

    def slice(self, position: int, size: int) -> _FileRecords:
        """``FileRecords.slice`` (``availableBytes``, Java int arithmetic)."""
        current = self.size
        if position < 0:
            raise IllegalArgumentError(f"Invalid position: {position} in read from {self}")
        if position > current - self.start:
            raise IllegalArgumentError(f"Slice from position {position} exceeds end position of {self}")
        if size < 0:
            raise IllegalArgumentError(f"Invalid size: {size} in read from {self}")
        end = self.start + position + size
        if end > INT_MAX or end > self.start + current:  # int overflow, or past the end
            end = self.start + current
        start = self.start + position
        return _FileRecords(self.shown, self.whole, start, end, end - start, self.file_size)

    def read_at(self, position: int, n: int) -> bytes:
        """``readFullyOrFail(channel, buffer, position)``: the file, not limited to the slice."""
        assert self.whole is not None
        return self.whole[position : position + n]

    def batches(self) -> Iterator[_FileBatch]:
        """``batches()``: a :class:`_FileBatch` per batch wholly inside [start, end)."""
        end = min(self.end, self.file_size)
        if self.whole is None:  # a directory: FileChannel.open works, the first read fails
            if self.start < end - 17:
                raise KafkaError("java.io.IOException: Is a directory")
            return
        for batch in Splitter(_View(self.whole, self.start, end), "file", self.shown):  # type: ignore[arg-type]
            yield _FileBatch(batch, self.start + batch.position, self)

    def close(self) -> None:
        if self.whole is not None:
            self.whole.close()


class _FileBatch:
    """``FileChannelRecordBatch``: the header is what Kafka reads for the header accessors
    (61 bytes for v2, even past a shorter batch; ``LegacyRecord.headerSize(magic)`` for v0/v1,
    which throws for a magic other than 0/1)."""

    def __init__(self, batch: RecordBatchV2 | LegacyBatch, abs_position: int,
                 records: _FileRecords) -> None:
        self.batch = batch
        self.abs_position = abs_position
        self.records = records
        self._header: RecordBatchV2 | LegacyBatch | None = None

    @property
    def magic(self) -> int:
        return self.batch.magic

    @property
    def is_v2(self) -> bool:
        return self.batch.magic >= 2

    @property
    def size_in_bytes(self) -> int:
        return self.batch.size_in_bytes

    def header(self) -> Any:
        if self._header is not None:
            return self._header
        b = self.batch
        if isinstance(b, RecordBatchV2):
            if len(b.raw) >= RECORD_BATCH_OVERHEAD:
                self._header = b
            else:
                pos = self.abs_position
                raw = self.records.read_at(pos, RECORD_BATCH_OVERHEAD)
                if len(raw) < RECORD_BATCH_OVERHEAD:
                    raise KafkaError(
                        f"Failed to load record batch at position {pos} from {self.records}"
                    )
                self._header = RecordBatchV2(raw, b.position)
        else:
            if b.magic not in (0, 1):
                raise IllegalArgumentError(f"Invalid magic used in LegacyRecord: {b.magic}")
            self._header = b
        return self._header

    @property
    def last_offset(self) -> int:
        if isinstance(self.batch, LegacyBatch):
            return self.batch.offset
        return wrap64(self.header().last_offset)

    def timestamp_type(self) -> str:
        return self.header().timestamp_type

    def compression_name(self) -> str:
        cid = self.header().compression_id
        if cid > 4:
            raise IllegalArgumentError(f"Unknown compression type id: {cid}")
        return codecs.codec_name(cid)

    def is_valid(self) -> bool:
        b = self.batch
        if isinstance(b, RecordBatchV2):
            return len(b.raw) >= RECORD_BATCH_OVERHEAD and b.crc == b.computed_crc()
        m = b.message
        return m.size >= 14 and m.crc == m.computed_crc()

    def records_iter(self) -> Iterator[tuple[int, Record | None, LegacyMessage | None]]:
        """``iterator()`` of the full batch: (offset, v2 record, legacy message)."""
        b = self.batch
        if isinstance(b, RecordBatchV2):
            if len(b.raw) < RECORD_BATCH_OVERHEAD:  # count() = getInt(57) on a short buffer
                raise IndexOutOfBoundsError()  # JDK 17 Buffer.checkIndex: no message
            out: list[Record] = []
            error: DecodeError | None = None
            try:
                b.iterator_records(out)
            except DecodeError as e:
                error = e
            for r in out:
                yield r.offset, r, None
            if error is not None:
                raise error
            return
        for offset, message in b.iter_messages():
            yield offset, None, message


# ------------------------------------------------------------------------------------------
# the tool


class _Dumper:
    def __init__(self, out: TextIO, err: TextIO, *, deep: bool, print_data: bool,
                 verify_only: bool, sanity_only: bool, max_bytes: int,
                 max_message_size: int) -> None:
        self.con = _Console(out)
        self.err = err
        self.deep = deep
        self.print_data = print_data
        self.verify_only = verify_only
        self.sanity_only = sanity_only
        self.max_bytes = max_bytes
        self.max_message_size = max_message_size
        self.index_mismatches = _ScalaHashMap()  # path -> list (prepended)
        self.ts_mismatches = _ScalaHashMap()  # path -> list (appended)
        self.ts_out_of_order = _ScalaHashMap()
        self.ts_not_found = _ScalaHashMap()
        self.non_consecutive = _ScalaHashMap()  # path -> list (prepended)

    def eprintln(self, s: str) -> None:
        self.err.write(s + "\n")

    # -- main ---------------------------------------------------------------------------------
    def run(self, files: Sequence[str]) -> None:
        for arg in files:
            file = _JFile(arg)
            self.con.println(f"Dumping {file}")
            name = file.name
            dot = name.rfind(".")
            if dot < 0:
                n = _utf16_len(name)
                raise _Uncaught(
                    "java.lang.StringIndexOutOfBoundsException", f"begin -1, end {n}, length {n}"
                )
            suffix = name[dot:]
            if suffix in (".log", ".checkpoint"):
                self.dump_log(file)
            elif suffix == ".index":
                self.dump_index(file)
            elif suffix == ".timeindex":
                self.dump_time_index(file)
            elif suffix == ".snapshot":
                self.dump_producer_snapshot(file)
            elif suffix == ".txnindex":
                self.dump_txn_index(file)
            else:
                self.eprintln(f"Ignoring unknown file {file}")
        for path, pairs in self.index_mismatches.items():
            self.eprintln(f"Mismatches in :{path}")
            for index_offset, log_offset in pairs:
                self.eprintln(f"  Index offset: {index_offset}, log offset: {log_offset}")
        for path, pairs in self.ts_mismatches.items():
            self.eprintln(f"Found timestamp mismatch in :{path}")
            for a, b in pairs:
                self.eprintln(f"  Index timestamp: {a}, log timestamp: {b}")
        for path, pairs in self.ts_out_of_order.items():
            self.eprintln(f"Found out of order timestamp in :{path}")
            for a, b in pairs:
                self.eprintln(f"  Index timestamp: {a}, Previously indexed timestamp: {b}")
        for _path, pairs in self.ts_not_found.items():
            self.eprintln("The following indexed offsets are not found in the log.")
            for a, b in pairs:
                self.eprintln(f"Indexed offset: {a}, found log offset: {b}")
        for path, pairs in self.non_consecutive.items():
            self.eprintln(f"Non-consecutive offsets in {path}")
            for first, second in pairs:
                self.eprintln(f"  {first} is followed by {second}")

    @staticmethod
    def _prepend(m: _ScalaHashMap, key: str, pair: tuple[int, int]) -> None:
        m.put(key, [pair, *(m.get(key) or [])])

    @staticmethod
    def _append(m: _ScalaHashMap, key: str, pair: tuple[int, int]) -> None:
        lst = m.get(key)
        if lst is None:
            lst = []
            m.put(key, lst)
        lst.append(pair)

    @staticmethod
    def _start_offset(file: _JFile) -> tuple[int, str]:
        """``file.getName.split("\\\\.")(0).toLong`` and that prefix."""
        parts = file.name.split(".")
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings
            parts.pop()
        if not parts:
            raise _Uncaught(
                "java.lang.ArrayIndexOutOfBoundsException", "Index 0 out of bounds for length 0"
            )
        return _parse_long(parts[0]), parts[0]

    # -- .txnindex ----------------------------------------------------------------------------
    def dump_txn_index(self, file: _JFile) -> None:
        name = file.name
        start = _parse_long(name[: name.find(".")])
        if not os.path.exists(file.path):
            return  # TransactionIndex opens no channel: no entries
        data = _read_file(file.path, file.path, "rw")
        txns = list(TransactionIndex(data, start, file.absolute))
        for t in txns:
            self.con.println(
                f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
                f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}"
            )

    # -- .snapshot ----------------------------------------------------------------------------
    def dump_producer_snapshot(self, file: _JFile) -> None:
        data = _read_file(file.path, file.path, "all")
        try:
            entries = snapshot.parse(data)
        except CorruptSnapshotError as e:
            self.eprintln(str(e.message))
            return
        for e in entries:
            self.con.print(
                f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
                f"coordinatorEpoch: {e.coordinator_epoch} currentTxnFirstOffset: "
                f"{_optional_long(e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None)} "
                f"lastTimestamp: {e.timestamp} "
            )
            if e.has_batch_metadata:
                self.con.print(
                    f"firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} "
                    f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
                )
            self.con.println()

    # -- .index -------------------------------------------------------------------------------
    @staticmethod
    def _open_index(cls: type, file: _JFile, base: int) -> Any:
        """``new OffsetIndex/TimeIndex(file, base, -1, false)``."""
        if not os.path.exists(file.path):
            # Kafka creates the file (createNewFile) and then refuses maxIndexSize -1
            raise IllegalArgumentError("Invalid max index size: -1")
        try:
            index = cls.open(file.path, base)
        except OSError as e:  # RandomAccessFile(file, "r")
            raise _Uncaught("java.io.FileNotFoundException",
                            f"{file.path} ({e.strerror or e})") from None
        index.path = file.absolute  # Kafka's messages use getAbsolutePath (no normalisation)
        return index

    def dump_index(self, file: _JFile) -> None:
        start, prefix = self._start_offset(file)
        log_file = file.sibling(prefix + ".log")
        records = _FileRecords.open(log_file)
        try:
            index = self._open_index(OffsetIndex, file, start)
            if index.entries == 0:
                self.con.println(f"{file} is empty.")
                return
            if self.sanity_only:
                index.sanity_check()
                self.con.println(f"{file} passed sanity check.")
                return
            for i in range(index.entries):
                entry = index.entry(i)
                offset = wrap64(entry.offset)
                if offset == index.base_offset and i > 0:
                    return
                part = records.slice(entry.position, self.max_message_size)
                first = next(part.batches(), None)
                if first is None:
                    raise _Uncaught("java.util.NoSuchElementException", None)
                last = first.last_offset
                if last != offset:
                    self._prepend(self.index_mismatches, file.absolute, (offset, last))
                if not self.verify_only:
                    self.con.println(f"offset: {offset} position: {entry.position}")
        finally:
            records.close()

    # -- .timeindex ---------------------------------------------------------------------------
    def dump_time_index(self, file: _JFile) -> None:
        start, prefix = self._start_offset(file)
        log_file = file.sibling(prefix + ".log")
        records = _FileRecords.open(log_file)
        try:
            index = self._open_index(OffsetIndex, file.sibling(prefix + ".index"), start)
            time_index = self._open_index(TimeIndex, file, start)
            if self.sanity_only:
                time_index.sanity_check()
                self.con.println(f"{file} passed sanity check.")
                return
            prev = -1
            key = file.absolute
            for i in range(time_index.entries):
                entry = time_index.entry(i)
                offset = wrap64(entry.offset)
                if offset == time_index.base_offset and i > 0:
                    return
                position = index.lookup(offset).position
                found = None
                for batch in records.slice(position, INT_MAX).batches():
                    if batch.last_offset >= offset:
                        found = batch
                        break
                if found is None:
                    self._append(self.ts_not_found, key, (offset, -1))
                elif found.last_offset != offset:
                    self._append(self.ts_not_found, key, (offset, found.last_offset))
                else:
                    max_ts = -1
                    for _o, record, message in found.records_iter():
                        ts = record.timestamp if record is not None else message.timestamp  # type: ignore[union-attr]
                        max_ts = max(max_ts, ts)
                    if max_ts != entry.timestamp:
                        self._append(self.ts_mismatches, key, (entry.timestamp, max_ts))
                    if prev >= entry.timestamp:
                        self._append(self.ts_out_of_order, key, (entry.timestamp, prev))
                if not self.verify_only:
                    self.con.println(f"timestamp: {entry.timestamp} offset: {offset}")
                prev = entry.timestamp
        finally:
            records.close()

    # -- .log / .checkpoint -------------------------------------------------------------------
    def dump_log(self, file: _JFile) -> None:
        name = file.name
        if name.endswith(".log"):
            start, _ = self._start_offset(file)
            self.con.println(f"Log starting offset: {start}")
        elif name.endswith(".checkpoint"):
            if name == "bootstrap.checkpoint":
                self.con.println("KRaft bootstrap snapshot")
            else:
                end_offset, epoch = _parse_snapshot_name(name)
                self.con.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
        opened = _FileRecords.open(file)
        try:
            records = opened.slice(0, self.max_bytes)
            valid_bytes = 0
            last_offset = -1
            key = file.absolute
            for batch in records.batches():
                self._print_batch_level(batch, valid_bytes)
                if self.deep:
                    for offset, record, message in batch.records_iter():
                        if last_offset == -1:
                            last_offset = offset
                        elif offset != wrap64(last_offset + 1):
                            self._prepend(self.non_consecutive, key, (last_offset, offset))
                        last_offset = offset
                        if record is not None:
                            self._print_record(batch, record)
                        else:
                            self._print_legacy_record(batch, offset, message)  # type: ignore[arg-type]
                valid_bytes += batch.size_in_bytes
            trailing = records.size - valid_bytes
            if trailing > 0 and self.max_bytes == INT_MAX:
                self.con.println(f"Found {trailing} invalid bytes at the end of {name}")
        finally:
            opened.close()

    def _print_batch_level(self, batch: _FileBatch, accumulative: int) -> None:
        con = self.con
        if batch.is_v2:
            h = batch.header()
            con.print(
                f"baseOffset: {batch.batch.base_offset} lastOffset: {batch.last_offset} "
                f"count: {h.records_count} baseSequence: {h.base_sequence} "
                f"lastSequence: {h.last_sequence} producerId: {h.producer_id} "
                f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
                f"isTransactional: {_jbool(h.is_transactional)} isControl: {_jbool(h.is_control)} "
                f"deleteHorizonMs: {_optional_long(h.delete_horizon_ms)}"
            )
        else:
            con.print(f"offset: {batch.last_offset}")
        h = batch.header()
        line = (
            f" position: {accumulative} {batch.timestamp_type()}: {h.max_timestamp} "
            f"size: {batch.size_in_bytes} magic: {batch.magic} "
            f"compresscodec: {batch.compression_name()} crc: {h.crc} "
        )
        con.println(line + f"isvalid: {_jbool(batch.is_valid())}")

    def _print_record(self, batch: _FileBatch, r: Record) -> None:
        con = self.con
        h = batch.header()
        key_size = -1 if r.key is None else len(r.key)
        value_size = -1 if r.value is None else len(r.value)
        con.print(
            f"| offset: {r.offset} {h.timestamp_type}: {r.timestamp} "
            f"keySize: {key_size} valueSize: {value_size}"
        )
        # magic >= 2 (records of v2 batches only come from v2 batches)
        seq = increment_sequence(h.base_sequence, r.offset_delta) if h.base_sequence >= 0 else -1
        con.print(f" sequence: {seq} headerKeys: [{','.join(k for k, _ in r.headers)}]")
        if h.is_control:
            con.print(self._control_text(r))
        elif self.print_data:
            prefix = " "
            if r.key is not None:
                con.print(f"{prefix}key: {_decode_string(r.key)}")
            if r.value is not None:
                con.print(f" payload: {_decode_string(r.value)}")
        con.println()

    def _control_text(self, r: Record) -> str:
        if r.key is None:
            raise NullPointerError(
                'Cannot invoke "java.nio.ByteBuffer.remaining()" because "key" is null'
            )
        type_id = control.parse_type_id(r.key)
        name = control.CONTROL_TYPES.get(type_id, "UNKNOWN")
        if type_id in (control.ABORT, control.COMMIT):
            if r.value is None:
                raise NullPointerError(
                    'Cannot invoke "java.nio.ByteBuffer.remaining()" because "value" is null'
                )
            epoch = control.parse_end_txn_coordinator_epoch(type_id, r.value)
            return f" endTxnMarker: {name} coordinatorEpoch: {epoch}"
        if type_id in (3, 4, 5, 6):
            return _kraft_control_text(type_id, r.value)
        return f" controlType: {name}({type_id})"

    def _print_legacy_record(self, batch: _FileBatch, offset: int, m: LegacyMessage) -> None:
        con = self.con
        ts_type = batch.timestamp_type()
        ts = m.timestamp
        key_size = m.key_size
        value_size = m.value_size
        con.print(
            f"| offset: {offset} {ts_type}: {ts} keySize: {key_size} valueSize: {value_size}"
        )
        valid = m.size >= 14 and m.crc == m.computed_crc()
        con.print(f" isValid: {_jbool(valid)} crc: {m.crc}}}")
        if self.print_data:
            key = m.key if m.key_size >= 0 else None
            value = m.value if m.value_size >= 0 else None
            if key is not None:
                con.print(f" key: {_decode_string(key)}")
            if value is not None:
                con.print(f" payload: {_decode_string(value)}")
        con.println()


def _decode_string(b: bytes) -> str:
    """``StringDecoder``: ``new String(bytes, UTF_8)``."""
    from conformance.primitives.java import java_utf8

    return java_utf8(b)


def _parse_snapshot_name(name: str) -> tuple[int, int]:
    """``Snapshots.parse(path).get()`` for a ``.checkpoint`` name."""
    n = _utf16_len(name)

    def substring(begin: int, end: int) -> str:
        if begin < 0 or end > n or begin > end:
            raise _Uncaught(
                "java.lang.StringIndexOutOfBoundsException",
                f"begin {begin}, end {end}, length {n}",
            )
        return name[begin:end]

    end_offset = _parse_long(substring(0, 20))
    epoch = _parse_long(substring(21, 31), bits=32)
    return end_offset, epoch


def dump(
    files: Sequence[str],
    *,
    deep_iteration: bool = False,
    print_data_log: bool = False,
    verify_index_only: bool = False,
    index_sanity_check: bool = False,
    max_bytes: int | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    out: TextIO,
    err: TextIO,
) -> int:
    """Write exactly what ``DumpLogSegments --files <files> <flags>`` writes; return its exit
    status (0, or 1 when an exception escapes the tool)."""
    d = _Dumper(
        out,
        err,
        deep=deep_iteration or print_data_log,
        print_data=print_data_log,
        verify_only=verify_index_only,
        sanity_only=index_sanity_check,
        max_bytes=INT_MAX if max_bytes is None else max_bytes,
        max_message_size=max_message_size,
    )
    try:
        d.run(files)
    except (_Uncaught, DecodeError) as e:
        d.con.flush_partial()
        err.write(f'Exception in thread "main" {_java_string(e)}\n')
        return 1
    return 0


# ------------------------------------------------------------------------------------------
# KRaft control records of .checkpoint files (generated message readers + JSON converters)


class _Accessor:
    """``ByteBufferAccessor`` over a control record value (flexible version 0 messages)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise DecodeError(None, java_class="java.nio.BufferUnderflowException")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def short(self) -> int:
        return int.from_bytes(self._take(2), "big", signed=True)

    def ushort(self) -> int:
        return int.from_bytes(self._take(2), "big")

    def int32(self) -> int:
        return int.from_bytes(self._take(4), "big", signed=True)

    def int64(self) -> int:
        return int.from_bytes(self._take(8), "big", signed=True)

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint`` (as a Java int)."""
        try:
            value, self.pos = read_unsigned_varint(self.data, self.pos, len(self.data))
        except BufferUnderflowError:
            raise DecodeError(None, java_class="java.nio.BufferUnderflowException") from None
        return value - (1 << 32) if value >= 1 << 31 else value

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            size = self.uvarint()
            remaining = len(self.data) - self.pos
            if size > remaining:
                raise DecodeError(
                    f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available",
                    java_class="java.lang.RuntimeException",
                )
            self.pos += size

    def string(self, field: str) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise DecodeError(
                f"non-nullable field {field} was serialized as null",
                java_class="java.lang.RuntimeException",
            )
        if length > 0x7FFF:
            raise DecodeError(
                f"string field {field} had invalid length {length}",
                java_class="java.lang.RuntimeException",
            )
        from conformance.primitives.java import java_utf8

        return java_utf8(self._take(length))

    def array_length(self, field: str) -> int:
        n = self.uvarint() - 1
        if n < 0:
            raise DecodeError(
                f"non-nullable field {field} was serialized as null",
                java_class="java.lang.RuntimeException",
            )
        remaining = len(self.data) - self.pos
        if n > remaining:
            raise DecodeError(
                f"Tried to allocate a collection of size {n}, but there are only {remaining} "
                "bytes remaining.",
                java_class="java.lang.RuntimeException",
            )
        return n


def _json_str(s: str) -> str:
    """Jackson's string escaping (control characters only; non-ASCII as is)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            short = {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}.get(o)
            out.append("\\" + short if short else f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _kraft_control_text(type_id: int, value: bytes | None) -> str:
    """``SnapshotHeader {json}`` etc. (``ControlRecordUtils.deserialize*`` + JsonConverter)."""
    import base64

    if value is None:
        raise NullPointerError(
            'Cannot invoke "java.nio.ByteBuffer.slice()" because "data" is null'
        )
    a = _Accessor(value)
    if type_id == 3:
        version = a.short()
        ts = a.int64()
        a.tagged_fields()
        return f' SnapshotHeader {{"version":{version},"lastContainedLogTimestamp":{ts}}}'
    if type_id == 4:
        version = a.short()
        a.tagged_fields()
        return f' SnapshotFooter {{"version":{version}}}'
    if type_id == 5:
        version = a.short()
        kraft = a.short()
        a.tagged_fields()
        return f' KRaftVersion {{"version":{version},"kRaftVersion":{kraft}}}'
    version = a.short()
    voters = []
    for _ in range(a.array_length("voters")):
        voter_id = a.int32()
        uuid = base64.urlsafe_b64encode(a._take(16)).decode().rstrip("=")
        endpoints = []
        for _e in range(a.array_length("endpoints")):
            name = a.string("name")
            host = a.string("host")
            port = a.ushort()
            a.tagged_fields()
            endpoints.append(f'{{"name":{_json_str(name)},"host":{_json_str(host)},"port":{port}}}')
        lo = a.short()
        hi = a.short()
        a.tagged_fields()  # KRaftVersionFeature
        a.tagged_fields()  # Voter
        voters.append(
            f'{{"voterId":{voter_id},"voterDirectoryId":"{uuid}","endpoints":[{",".join(endpoints)}],'
            f'"kRaftVersionFeature":{{"minSupportedVersion":{lo},"maxSupportedVersion":{hi}}}}}'
        )
    a.tagged_fields()
    return f' KRaftVoters {{"version":{version},"voters":[{",".join(voters)}]}}'


# ------------------------------------------------------------------------------------------
# --json: one canonical document per file


def _error_json(e: BaseException) -> dict[str, Any]:
    if isinstance(e, (_Uncaught, DecodeError)):
        cls = e.java_class if isinstance(e, _Uncaught) else e.kafka_exception
        return {"kafka_exception": cls, "message": e.message}
    raise TypeError(e)  # pragma: no cover


def _log_json(file: _JFile, max_bytes: int, out: TextIO) -> bool:
    """The canonical decode document (docs/canonical-json.md) of a segment, ``mode: file``.

    Batches are spooled (to disk past 8 MiB) so the document keeps its key order
    (``outcome`` first) while memory stays bounded by one batch."""
    from conformance.stream.result import FORMAT, batch_to_json
    from conformance.stream.decoder import StreamDecoder

    if os.path.isdir(file.path):
        raise _Uncaught("java.io.IOException", "Is a directory")
    try:
        source = FileSource(file.path, 0, None if max_bytes == INT_MAX else max(0, max_bytes))
    except OSError as e:
        raise _io_error(e, file.path) from None
    with source, tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as spool:
        decoder = StreamDecoder(source, mode="file", filename=file.path)
        first = True
        for batch in decoder:
            if not first:
                spool.write(",")
            first = False
            spool.write(json.dumps(batch_to_json(batch), separators=(",", ":"), ensure_ascii=True))
        head = {
            "format": FORMAT,
            "mode": "file",
            "outcome": decoder.outcome,
            "error": None if decoder.error is None else decoder.error.to_json(),
            "tail": None if decoder.tail is None else decoder.tail.to_json(),
        }
        text = json.dumps(head, separators=(",", ":"), ensure_ascii=True)
        out.write(text[:-1] + ',"batches":[')
        spool.seek(0)
        shutil.copyfileobj(spool, out)
        out.write("]}\n")
        return decoder.outcome != "error"


def _entries_json(file: _JFile, kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"file": file.path, "kind": kind, "baseOffset": None, "entries": [],
                           "error": None}
    entries: list[dict[str, Any]] = doc["entries"]
    try:
        if kind == "unknown":
            return doc
        name = file.name
        base = _parse_long(name[: name.find(".")] if kind == "txnindex" else name.split(".")[0])
        doc["baseOffset"] = str(base) if kind != "snapshot" else None
        if kind == "txnindex" and not os.path.exists(file.path):
            return doc
        if kind in ("index", "timeindex"):
            idx = _Dumper._open_index(OffsetIndex if kind == "index" else TimeIndex, file, base)
            doc["sizeInBytes"] = idx.length
            for i in range(idx.entries):  # the tool's rule: stop at a zero (base offset) entry
                e = idx.entry(i)
                if e.offset == base and i > 0:
                    break
                if kind == "index":
                    entries.append({"offset": str(e.offset), "position": e.position})
                else:
                    entries.append({"timestamp": str(e.timestamp), "offset": str(e.offset)})
        elif kind == "txnindex":
            data = _read_file(file.path, file.path, "rw")
            for t in TransactionIndex(data, base, file.absolute):
                entries.append({
                    "version": t.version, "producerId": str(t.producer_id),
                    "firstOffset": str(t.first_offset), "lastOffset": str(t.last_offset),
                    "lastStableOffset": str(t.last_stable_offset),
                })
        else:
            doc["baseOffset"] = str(base)
            for p in snapshot.parse(_read_file(file.path, file.path, "all")):
                entries.append({
                    "producerId": str(p.producer_id), "producerEpoch": p.producer_epoch,
                    "coordinatorEpoch": p.coordinator_epoch,
                    "currentTxnFirstOffset": None if p.current_txn_first_offset < 0
                    else str(p.current_txn_first_offset),
                    "lastTimestamp": str(p.timestamp),
                    "batch": None if not p.has_batch_metadata else {
                        "firstSequence": p.first_sequence, "lastSequence": p.last_sequence,
                        "lastOffset": str(p.last_offset), "offsetDelta": p.offset_delta,
                        "timestamp": str(p.timestamp),
                    },
                })
    except (_Uncaught, DecodeError) as e:
        doc["error"] = _error_json(e)
    order = ("file", "kind", "baseOffset", "sizeInBytes", "entries", "error")
    return {k: doc[k] for k in order if k in doc}


_KINDS = {".log": "log", ".checkpoint": "log", ".index": "index", ".timeindex": "timeindex",
          ".txnindex": "txnindex", ".snapshot": "snapshot"}


def dump_json(files: Sequence[str], *, max_bytes: int | None = None, out: TextIO,
              err: TextIO) -> int:
    """One JSON line per file: the canonical decode document for ``.log``/``.checkpoint``,
    ``{"file", "kind", "baseOffset", "entries", "error"}`` for the other kinds (see the
    ``dump --help`` text). Returns 1 if any file has an error, else 0."""
    status = 0
    limit = INT_MAX if max_bytes is None else max_bytes
    for arg in files:
        file = _JFile(arg)
        name = file.name
        dot = name.rfind(".")
        kind = _KINDS.get(name[dot:], "unknown") if dot >= 0 else "unknown"
        if kind == "log":
            try:
                if not _log_json(file, limit, out):
                    status = 1
            except _Uncaught as e:
                status = 1
                doc = {"file": file.path, "kind": "log", "baseOffset": None, "entries": [],
                       "error": _error_json(e)}
                out.write(json.dumps(doc, separators=(",", ":"), ensure_ascii=True) + "\n")
            continue
        if kind == "unknown":
            err.write(f"Ignoring unknown file {file}\n")
        doc = _entries_json(file, kind)
        if doc["error"] is not None:
            status = 1
        out.write(json.dumps(doc, separators=(",", ":"), ensure_ascii=True) + "\n")
    return status
