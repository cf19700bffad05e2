"""Splitting a byte stream into batches: Kafka's in-memory and file semantics (spec §1).

Every entry starts ``offset int64 | size int32``; the byte at @16 is the magic. The two
Java readers disagree on the edges:

=========================  ==========================================  ========================================
condition                  memory (``ByteBufferLogInputStream``)        file (``FileLogInputStream``)
=========================  ==========================================  ========================================
< 12 bytes left            stop                                         stop (any tail <= 17 bytes: stop)
size < 14                  CorruptRecordException (even if partial)     CorruptRecordException (if > 17 left)
12..16 bytes left          stop                                         stop
magic not in 0..2          CorruptRecordException (even if partial)     magic < 2 legacy, else v2
batch incomplete           stop                                         stop
size + 12 overflows int32  IllegalArgumentException "newLimit < 0"      stop
=========================  ==========================================  ========================================

A stop with bytes left over is a *partial tail*, not an error.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator

from conformance.wire.batch import RecordBatchV2
from conformance.errors import CorruptRecordError, IllegalArgumentError
from conformance.wire.legacy import LegacyBatch

LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
RECORD_OVERHEAD_V0 = 14

Batch = RecordBatchV2 | LegacyBatch

_SIZE = struct.Struct(">i")


class FileSource:
    """Random-access reads of a file (``os.pread``): memory never grows with the file size."""

    def __init__(self, path: str | os.PathLike[str], start: int = 0, end: int | None = None) -> None:
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_RDONLY)
        size = os.fstat(self._fd).st_size
        self.start = start
        self.end = size if end is None else min(size, end)

    def __len__(self) -> int:
        return max(0, self.end - self.start)

    def __getitem__(self, item: slice) -> bytes:
        start = self.start + (item.start or 0)
        stop = self.start + (len(self) if item.stop is None else min(item.stop, len(self)))
        if stop <= start:
            return b""
        return os.pread(self._fd, stop - start, start)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> FileSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


Source = bytes | FileSource


class Splitter:
    """Iterates batches of ``data``; ``position`` is where the next batch would start.

    ``data`` is ``bytes`` or a :class:`FileSource` (anything sliceable with a length).
    """

    def __init__(self, data: Source, mode: str = "memory", filename: str = "<input>") -> None:
        if mode not in ("memory", "file"):
            raise ValueError(f"mode must be 'memory' or 'file', not {mode!r}")
        self.data = data
        self.mode = mode
        self.filename = filename
        self.position = 0

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        batch = self._next_memory() if self.mode == "memory" else self._next_file()
        if batch is None:
            raise StopIteration
        return batch

    def _next_memory(self) -> Batch | None:
        data, pos = self.data, self.position
        remaining = len(data) - pos
        if remaining < LOG_OVERHEAD:
            return None
        head = data[pos : pos + HEADER_SIZE_UP_TO_MAGIC]
        size = _SIZE.unpack_from(head, 8)[0]
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
            )
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            return None
        magic = head[16]
        if magic > 2:
            signed = magic - 256 if magic > 127 else magic
            raise CorruptRecordError(f"Invalid magic found in record: {signed}")
        batch_size = size + LOG_OVERHEAD
        if batch_size > 0x7FFFFFFF:  # int32 overflow in Java: slice.limit(negative)
            raise IllegalArgumentError(
                f"newLimit < 0: ({batch_size - (1 << 32)} < 0)"
            )
        if remaining < batch_size:
            return None
        return self._make(magic, pos, batch_size)

    def _next_file(self) -> Batch | None:
        data, pos = self.data, self.position
        end = len(data)
        if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
            return None
        head = data[pos : pos + HEADER_SIZE_UP_TO_MAGIC]
        size = _SIZE.unpack_from(head, 8)[0]
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"Found record size {size} smaller than minimum record overhead "
                f"({RECORD_OVERHEAD_V0}) in file {self.filename}."
            )
        if pos > end - LOG_OVERHEAD - size:
            return None
        magic = head[16]
        return self._make(magic if magic < 128 else magic - 256, pos, size + LOG_OVERHEAD)

    def _make(self, magic: int, pos: int, batch_size: int) -> Batch:
        raw = bytes(self.data[pos : pos + batch_size])
        self.position = pos + batch_size
        if magic >= 2:
            return RecordBatchV2(raw, pos)
        return LegacyBatch(raw, pos)
