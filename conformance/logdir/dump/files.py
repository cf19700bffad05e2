"""``FileRecords`` and ``FileLogInputStream.FileChannelRecordBatch`` as DumpLogSegments uses
them (read-only), over the kit's splitter; and how the tool opens index files.

What a ``FileChannelRecordBatch`` reads for its header accessors:

=======  ==========================================  ===================================
magic    bytes read                                  from
=======  ==========================================  ===================================
2        ``RECORD_BATCH_OVERHEAD`` (61), even past   ``DefaultRecordBatch`` header
         the end of a shorter batch
0, 1     ``LOG_OVERHEAD + headerSize(magic)``        ``LegacyRecord`` (other magic: throws)
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
from conformance.logdir.dump.javaemu import (
    INT_MAX,
    JFile,
    Uncaught,
    io_error,
)
from conformance.primitives.java import java_parse_int, wrap64
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    HEADER_SIZE_UP_TO_MAGIC,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
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
    def open(cls, file: JFile, opener: str = "channel") -> FileRecords:
        """``FileRecords.open(file, false)``: its channel from ``FileChannel.open``
        (``opener`` "channel", Kafka 2.1+) or a ``RandomAccessFile`` ("raf", up to 2.0,
        which refuses a directory and names the reason in parentheses)."""
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
        return cls(path, whole, 0, INT_MAX, size, size)

    def __str__(self) -> str:
        return (
            f"FileRecords(size={self.size}, file={self.shown}, start={self.start}, end={self.end})"
        )

    #: DumpFormat.short_record_message of the release printing (set by the dumper)
    short_record_message = "named"

    def slice(self, position: int, size: int) -> FileRecords:
        """``FileRecords.slice`` (``availableBytes``, Java int arithmetic)."""
        current = self.size
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
        start = self.start + position
        part = FileRecords(self.shown, self.whole, start, end, end - start, self.file_size)
        part.short_record_message = self.short_record_message
        return part

    def read_at(self, position: int, n: int) -> bytes:
        """``readFullyOrFail(channel, buffer, position)``: the file, not limited to the slice."""
        assert self.whole is not None
        return self.whole[position : position + n]

    def batches(self) -> Iterator[FileBatch]:
        """``batches()``: a :class:`FileBatch` per batch wholly inside [start, end)."""
        end = min(self.end, self.file_size)
        if self.whole is None:  # a directory: FileChannel.open works, the first read fails
            if self.start < end - HEADER_SIZE_UP_TO_MAGIC:
                raise KafkaError("java.io.IOException: Is a directory")
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
    ``LegacyRecord.headerSize(magic)`` for v0/v1, which throws for a magic other than 0/1)."""

    def __init__(
        self, batch: RecordBatchV2 | LegacyBatch, abs_position: int, records: FileRecords
    ) -> None:
        self.batch = batch
        self.abs_position = abs_position
        self.records = records
        self._header: RecordBatchV2 | LegacyBatch | None = None

    @property
    def magic(self) -> int:
        return self.batch.magic

    @property
    def is_v2(self) -> bool:
        return self.batch.magic >= MAGIC_VALUE_V2

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
            if b.magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
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

    def is_valid(self) -> bool:
        b = self.batch
        if isinstance(b, RecordBatchV2):
            return len(b.raw) >= RECORD_BATCH_OVERHEAD and b.crc == b.computed_crc()
        return legacy_message_valid(b.message)

    def visit_records(self, on_record: RecordVisitor) -> None:
        """``iterator()`` of the full batch, each record passed to ``on_record`` as Kafka hands
        it out: ``(offset, v2 record, None)`` or ``(offset, None, legacy message)``.

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
        for offset, message in b.read_messages():
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
