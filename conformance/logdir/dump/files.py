"""``FileRecords`` and ``FileLogInputStream.FileChannelRecordBatch`` as DumpLogSegments uses
them (read-only), over the kit's splitter; and how the tool opens index files.

What a ``FileChannelRecordBatch`` reads for its header accessors:

=======  ==========================================  ===================================
magic    bytes read                                  from
=======  ==========================================  ===================================
2        ``RECORD_BATCH_OVERHEAD`` (61), even past   ``DefaultRecordBatch`` header
         the end of a shorter batch
0, 1     ``LOG_OVERHEAD + headerSize(magic)``        ``LegacyRecord`` (other magic: throws)
any      the whole entry (0.10.2, ``entry_reader``   ``Record`` (``logentry``)
         "records")
=======  ==========================================  ===================================
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

from conformance.errors import (
    CorruptRecordError,
    IllegalArgumentError,
    IndexOutOfBoundsError,
    KafkaError,
)
from conformance.fileio import FileSource
from conformance.logdir.dump.formats import DumpFormat
from conformance.logdir.dump.javaemu import (
    INT_MAX,
    UNKNOWN_IDENTITY_HASH,
    JFile,
    Uncaught,
    io_error,
)
from conformance.logdir.dump.logentry import CodecOf, RecordEntry, read_entries
from conformance.primitives.java import java_parse_int, wrap64
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    HEADER_SIZE_UP_TO_MAGIC,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
)
from conformance.wire.legacy import LegacyBatch, LegacyMessage
from conformance.wire.record import Record, RecordList

#: what :meth:`FileBatch.visit_records` calls per record
RecordVisitor = Callable[[int, Record | None, LegacyMessage | None], None]


class FileView:
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


class FileRecords:
    """``FileRecords`` (read-only) or one of its slices, over the kit's file splitter."""

    def __init__(
        self, shown: str, whole: FileSource | None, start: int, end: int, size: int, file_size: int
    ) -> None:
        self.shown = shown  # File.toString() of the file (appears in messages)
        self.whole = whole  # None for a directory (opens, but every read fails)
        self.start = start
        self.end = end
        self.size = size
        self.file_size = file_size

    @classmethod
    def open(cls, file: JFile, fmt: DumpFormat) -> FileRecords:
        """``FileRecords.open(file, false)`` of the release ``fmt``: its channel from
        ``FileChannel.open`` (``log_opener`` "channel", Kafka 2.1+) or a ``RandomAccessFile``
        ("raf", up to 2.0, which refuses a directory and names the reason in parentheses)."""
        opener = fmt.log_opener
        path = file.path
        try:
            st = os.stat(path)
            if opener == "raf" and stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(21, "Is a directory")
            whole = None if stat.S_ISDIR(st.st_mode) else FileSource(path)
        except OSError as e:
            if opener == "raf":
                reason = e.strerror or str(e)
                raise Uncaught("java.io.FileNotFoundException", f"{path} ({reason})") from None
            raise io_error(e, path) from None
        size = st.st_size
        if size > INT_MAX:
            if whole is not None:
                whole.close()
            raise Uncaught(
                "org.apache.kafka.common.KafkaException",
                f"The size of segment {path} ({size}) is larger than the maximum allowed segment "
                f"size of {INT_MAX}",
            )
        records = cls(path, whole, 0, INT_MAX, size, size)
        records.short_record_message = fmt.short_record_message
        records.slice_checks = fmt.slice_checks
        records.entry_reader = fmt.entry_reader
        records.batch_load_error = fmt.batch_load_error
        return records

    def __str__(self) -> str:
        return (
            f"FileRecords(size={self.size}, file={self.shown}, start={self.start}, end={self.end})"
        )

    #: DumpFormat.short_record_message, slice_checks, entry_reader and batch_load_error of
    #: the release printing (set by :meth:`open`)
    short_record_message = "named"
    slice_checks = "bounded"
    entry_reader = "batches"
    batch_load_error = "named"

    def slice(self, position: int, size: int) -> FileRecords:
        """``FileRecords.slice`` (``availableBytes``, Java int arithmetic); up to 2.0
        ``FileRecords.read``, which checks less."""
        current = self.size
        if self.slice_checks == "unbounded":
            if position < 0:
                raise IllegalArgumentError(f"Invalid position: {position}")
            if size < 0:
                raise IllegalArgumentError(f"Invalid size: {size}")
            end = self.start + position + size
            if end > INT_MAX or end >= self.start + current:  # int overflow, or the end
                end = self.start + current
            return self._part(self.start + position, end)
        if position < 0:
            raise IllegalArgumentError(f"Invalid position: {position} in read from {self}")
        if position > current - self.start:
            raise IllegalArgumentError(
                f"Slice from position {position} exceeds end position of {self}"
            )
        if size < 0:
            raise IllegalArgumentError(f"Invalid size: {size} in read from {self}")
        end = self.start + position + size
        if end > INT_MAX or end > self.start + current:  # int overflow, or past the end
            end = self.start + current
        return self._part(self.start + position, end)

    def _part(self, start: int, end: int) -> FileRecords:
        """A slice [start, end) of the same file (its size ``end - start``, which up to 2.0
        may be negative: no batches then)."""
        part = FileRecords(self.shown, self.whole, start, end, end - start, self.file_size)
        part.short_record_message = self.short_record_message
        part.slice_checks = self.slice_checks
        part.entry_reader = self.entry_reader
        part.batch_load_error = self.batch_load_error
        return part

    def read_at(self, position: int, n: int) -> bytes:
        """``readFullyOrFail(channel, buffer, position)``: the file, not limited to the slice."""
        assert self.whole is not None
        return self.whole[position : position + n]

    def batches(self, max_record_size: int = INT_MAX) -> Iterator[FileBatch]:
        """``batches()``: a :class:`FileBatch` per batch wholly inside [start, end); with
        ``entry_reader`` "records" (0.10.2) ``shallowEntries(max_record_size)``: a
        :class:`~conformance.logdir.dump.logentry.RecordEntry` per entry, whatever its magic."""
        end = min(self.end, self.file_size)
        if self.whole is None:  # a directory: FileChannel.open works, the first read fails
            if self.start < end - HEADER_SIZE_UP_TO_MAGIC:
                raise KafkaError("java.io.IOException: Is a directory")
            return
        if self.entry_reader == "records":
            for entry in read_entries(self.whole, self.start, end, max_record_size):
                yield FileBatch(entry, entry.position, self)
            return
        batches = Splitter(FileView(self.whole, self.start, end), "file", self.shown)  # type: ignore[arg-type]
        try:
            for batch in batches:
                yield FileBatch(batch, self.start + batch.position, self)
        except CorruptRecordError as e:
            if self.short_record_message == "plain" and "smaller than minimum" in str(e.message):
                raise CorruptRecordError(
                    f"Record size is smaller than minimum record overhead ({RECORD_OVERHEAD_V0})."
                ) from None
            raise

    def close(self) -> None:
        if self.whole is not None:
            self.whole.close()


class FileBatch:
    """``FileChannelRecordBatch``: the header is what Kafka reads for the header accessors
    (``RECORD_BATCH_OVERHEAD`` bytes for v2, even past a shorter batch;
    ``LegacyRecord.headerSize(magic)`` for v0/v1, which throws for a magic other than 0/1);
    or 0.10.2's ``FileChannelLogEntry`` (a :class:`RecordEntry`: one record, any magic)."""

    def __init__(
        self,
        batch: RecordBatchV2 | LegacyBatch | RecordEntry,
        abs_position: int,
        records: FileRecords,
    ) -> None:
        self.batch = batch
        self.abs_position = abs_position
        self.records = records
        self._header: RecordBatchV2 | LegacyBatch | RecordEntry | None = None

    @property
    def magic(self) -> int:
        return self.batch.magic

    @property
    def is_v2(self) -> bool:
        return isinstance(self.batch, RecordBatchV2)

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
                    raise self._header_read_error(pos, len(raw))
                self._header = RecordBatchV2(raw, b.position)
        elif isinstance(b, RecordEntry):
            self._header = b
        else:
            if b.magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
                raise IllegalArgumentError(f"Invalid magic used in LegacyRecord: {b.magic}")
            self._header = b
        return self._header

    def _header_read_error(self, pos: int, got: int) -> KafkaError:
        """``loadBatchWithSize`` of a header cut by the end of the file: 2.1.1+ names the
        position and the records, before ``KafkaException(e)`` of the ``EOFException``, whose
        text holds the channel's ``toString`` (an identity hash the kit cannot know:
        :data:`UNKNOWN_IDENTITY_HASH`)."""
        if self.records.batch_load_error == "named":
            return KafkaError(f"Failed to load record batch at position {pos} from {self.records}")
        return KafkaError(
            "java.io.EOFException: Failed to read `record batch header` from file channel "
            f"`sun.nio.ch.FileChannelImpl@{UNKNOWN_IDENTITY_HASH}`. Expected to read "
            f"{RECORD_BATCH_OVERHEAD} bytes, but reached end of file after reading {got} bytes. "
            f"Started read from position {pos}."
        )

    @property
    def last_offset(self) -> int:
        if isinstance(self.batch, LegacyBatch):  # a RecordEntry too
            return self.batch.offset
        return wrap64(self.header().last_offset)

    def timestamp_type(self) -> str:
        return self.header().timestamp_type

    def is_valid(self) -> bool:
        b = self.batch
        if isinstance(b, RecordBatchV2):
            return len(b.raw) >= RECORD_BATCH_OVERHEAD and b.crc == b.computed_crc()
        return legacy_message_valid(b.message)

    def visit_records(self, on_record: RecordVisitor, codec_of: CodecOf) -> None:
        """``iterator()`` of the full batch, each record passed to ``on_record`` as Kafka hands
        it out: ``(offset, v2 record, None)`` or ``(offset, None, legacy message)``;
        ``codec_of`` is the release's ``CompressionType.forId`` (0.10.2's entries ask it).

        Nothing is kept: memory stays bounded by one batch's payload however many records it
        holds (a compressed batch is checked whole first, as Kafka parses it before handing out
        its first record, then read again).
        """
        b = self.batch
        if isinstance(b, RecordBatchV2):
            # count() = getInt(RECORDS_COUNT_OFFSET) on a short buffer
            if len(b.raw) < RECORD_BATCH_OVERHEAD:
                raise IndexOutOfBoundsError()  # JDK 17 Buffer.checkIndex: no message
            b.read_records_eagerly(RecordList(keep=0, visit=lambda r: on_record(r.offset, r, None)))
            return
        messages = b.entry_iterator(codec_of) if isinstance(b, RecordEntry) else b.read_messages()
        for offset, message in messages:
            on_record(offset, None, message)


def legacy_message_valid(m: LegacyMessage) -> bool:
    """``LegacyRecord.isValid``: long enough and its CRC-32 holds."""
    return m.size >= RECORD_OVERHEAD_V0 and m.crc == m.computed_crc()


def start_offset(file: JFile) -> tuple[int, str]:
    """``file.getName.split("\\\\.")(0).toLong`` and that prefix."""
    parts = file.name.split(".")
    while parts and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    if not parts:
        raise Uncaught(
            "java.lang.ArrayIndexOutOfBoundsException", "Index 0 out of bounds for length 0"
        )
    return java_parse_int(parts[0]), parts[0]


def open_index(cls: type, file: JFile, base: int) -> Any:
    """``new OffsetIndex/TimeIndex(file, base, -1, false)``."""
    if not os.path.exists(file.path):
        # Kafka creates the file (createNewFile) and then refuses maxIndexSize -1
        raise IllegalArgumentError("Invalid max index size: -1")
    try:
        index = cls.open(file.path, base)
    except OSError as e:  # RandomAccessFile(file, "r")
        raise Uncaught(
            "java.io.FileNotFoundException", f"{file.path} ({e.strerror or e})"
        ) from None
    index.path = file.absolute  # Kafka's messages use getAbsolutePath (no normalisation)
    return index
