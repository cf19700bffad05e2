"""Splitting a byte stream into batches: Kafka's in-memory and file semantics
(docs/format.md §1).

Every entry starts ``offset int64 | size int32``; the byte at @16 is the magic. The two
Java readers disagree on the edges:

=========================  ======================================  =================================
condition                  memory (``ByteBufferLogInputStream``)   file (``FileLogInputStream``)
=========================  ======================================  =================================
< 12 bytes left            stop                                    stop (any tail <= 17 bytes: stop)
size < 14                  CorruptRecordException                  CorruptRecordException
                           (even if partial)                       (if > 17 left)
12..16 bytes left          stop                                    stop
magic not in 0..2          CorruptRecordException                  magic < 2 legacy, else v2
                           (even if partial)
batch incomplete           stop                                    stop
size + 12 overflows int32  IllegalArgumentException                stop
                           "newLimit < 0"
=========================  ======================================  =================================

A stop with bytes left over is a *partial tail*, not an error.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Literal, Protocol, get_args

from conformance.errors import CorruptRecordError, IllegalArgumentError
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    CURRENT_MAGIC_VALUE,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    MIN_RECORD_OVERHEAD,
    SIZE_OFFSET,
)
from conformance.wire.legacy import LegacyBatch

Batch = RecordBatchV2 | LegacyBatch

_SIZE = struct.Struct(">i")
#: Java's Integer.MAX_VALUE: the largest segment (and so batch) Kafka reads
_INT_MAX = 0x7FFFFFFF


class ByteSource(Protocol):
    """What the splitter reads from: ``bytes``, or any object with a length whose slices are
    ``bytes`` (``conformance.fileio.FileSource`` reads a file that way, with ``pread``)."""

    def __len__(self) -> int: ...

    def __getitem__(self, item: slice) -> bytes: ...


Source = bytes | ByteSource

#: Kafka's two splitting semantics (docs/format.md §1): the one list
Mode = Literal["memory", "file"]
MODES: tuple[Mode, ...] = get_args(Mode)


class Splitter:
    """Iterates batches of ``data``; ``position`` is where the next batch would start.

    ``data`` is ``bytes`` or a :class:`ByteSource` (anything sliceable with a length).
    """

    def __init__(self, data: Source, mode: str = "memory", filename: str = "<input>") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be {' or '.join(map(repr, MODES))}, not {mode!r}")
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
        size = _SIZE.unpack_from(head, SIZE_OFFSET)[0]
        if size < MIN_RECORD_OVERHEAD:
            raise CorruptRecordError(
                f"Record size {size} is less than "
                f"the minimum record overhead ({MIN_RECORD_OVERHEAD})"
            )
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            return None
        magic = head[MAGIC_OFFSET]
        if magic > CURRENT_MAGIC_VALUE:
            signed = magic - 256 if magic > 127 else magic
            raise CorruptRecordError(f"Invalid magic found in record: {signed}")
        batch_size = size + LOG_OVERHEAD
        if batch_size > 0x7FFFFFFF:  # int32 overflow in Java: slice.limit(negative)
            raise IllegalArgumentError(f"newLimit < 0: ({batch_size - (1 << 32)} < 0)")
        if remaining < batch_size:
            return None
        return self._make(magic, pos, batch_size)

    def _next_file(self) -> Batch | None:
        frame = file_frame(self.data, self.position, self.filename)
        if frame is None:
            return None
        return self._make(frame[1], self.position, frame[0])

    def _make(self, magic: int, pos: int, batch_size: int) -> Batch:
        raw = bytes(self.data[pos : pos + batch_size])
        self.position = pos + batch_size
        if magic >= MAGIC_VALUE_V2:
            return RecordBatchV2(raw, pos)
        return LegacyBatch(raw, pos)


def file_frame(data: Source, pos: int, filename: str = "<input>") -> tuple[int, int] | None:
    """``FileLogInputStream.nextBatch`` at ``pos``, reading its 17 header bytes only:
    ``(batch size in bytes, signed magic)``, or None where Kafka's file reader stops (a short
    tail, a batch that runs past the end); ``CorruptRecordError`` for a size below the minimum.
    A header walk over a segment of any size reads 17 bytes per batch with this.

    A batch of more than 2^31 - 1 bytes (a size field over 2^31 - 13) runs past the end
    whatever the file's size: Kafka opens no segment over 2^31 - 1 bytes (``FileRecords``
    sizes are ints), so its ``position > end - LOG_OVERHEAD - size`` is then always true.
    The kit reads longer segments too; without this, such a header in a sparse file over
    2 GiB had a 2 GiB batch read whole."""
    end = len(data)
    if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
        return None
    head = data[pos : pos + HEADER_SIZE_UP_TO_MAGIC]
    size = _SIZE.unpack_from(head, SIZE_OFFSET)[0]
    if size < MIN_RECORD_OVERHEAD:
        raise CorruptRecordError(
            f"Found record size {size} smaller than minimum record overhead "
            f"({MIN_RECORD_OVERHEAD}) in file {filename}."
        )
    if pos > end - LOG_OVERHEAD - size or size > _INT_MAX - LOG_OVERHEAD:
        return None
    magic = head[MAGIC_OFFSET]
    return size + LOG_OVERHEAD, magic if magic < 128 else magic - 256
