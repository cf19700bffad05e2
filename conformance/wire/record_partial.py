"""``DefaultRecord.readPartiallyFrom``: the record reader behind ``skipKeyValueIterator``.

The broker validates a compressed v2 batch it will store as it is (same codec, same magic)
without materialising keys, values or headers (docs/format.md §3.5(c)). Same layout as
``record.py``; what the reader does with it differs:

================  ============================================================================
field             read how
================  ============================================================================
length            varint (outside the structure guard, as in ``readFrom``); used only for
                  ``sizeInBytes``: the body is neither bounded by it nor checked against it
attributes        one ``read()``: at end of stream -1, i.e. attributes 0xFF
timestampDelta    varlong; offsetDelta varint
key, value        length varint, then *skipped* (a negative length skips nothing)
headerCount       varint; < 0: "Found invalid number of record headers N"
header key        length varint (< 0: "Invalid negative header key size N"), skipped
header value      length varint, skipped
================  ============================================================================

Skipping past the end of the stream raises ``InvalidRecordException`` "Reached end of input
stream before skipping all bytes. Remaining bytes:N"; a ``BufferUnderflowException`` or
``IllegalArgumentException`` inside becomes "Found invalid record structure". The iterator
around it (``StreamRecordIterator``) turns an IAE of the length varint into "Incorrect
declared batch size, premature EOF reached" and an ``IOException`` of the codec into
``KafkaException`` "Failed to decompress record stream".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from conformance.codecs import Decompressed
from conformance.errors import (
    BufferUnderflowError,
    CodecError,
    IllegalArgumentError,
    InvalidRecordError,
)
from conformance.primitives.java import wrap64
from conformance.primitives.varint import read_varint_stream, read_varlong_stream, write_varint
from conformance.wire.batch import increment_sequence
from conformance.wire.java_stream import DataInputReader, JavaStreamReader, StreamEof
from conformance.wire.record import (
    INVALID_STRUCTURE,
    PREMATURE_EOF,
    RECORDS_REMAINING,
    stream_failure,
    stream_failure_2_8,
    stream_has_leftover,
)

__all__ = [
    "PartialRecord",
    "read_partial_record",
    "read_partial_records",
    "read_partial_records_2_8",
]


@dataclass(frozen=True, slots=True)
class PartialRecord:
    """``PartialDefaultRecord``: what the skipping reader keeps of a record."""

    size_in_bytes: int
    attributes: int
    offset: int
    timestamp: int
    sequence: int
    key_size: int
    value_size: int


def _skip(src: JavaStreamReader, n: int) -> None:
    """``DefaultRecord.skipBytes``: discard exactly ``n`` bytes; fewer at end of stream is an
    error naming the bytes still to skip."""
    while n > 0:
        skipped = src.skip(n)
        if skipped > 0:  # ChunkedBytesStream never skips more than asked
            n -= skipped
        elif src.read() == -1:  # read one byte to tell the end
            raise InvalidRecordError(
                f"Reached end of input stream before skipping all bytes. Remaining bytes:{n}"
            )
        else:
            n -= 1


def read_partial_record(
    src: JavaStreamReader,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
) -> PartialRecord:
    """One record, as ``StreamRecordIterator.readNext`` calls ``readPartiallyFrom``."""
    try:
        try:
            length = read_varint_stream(src)
        except IllegalArgumentError as e:
            raise InvalidRecordError(PREMATURE_EOF, cause=e) from None
        size_in_bytes = len(write_varint(length)) + length
        try:
            attributes = src.read() & 0xFF
            ts_delta = read_varlong_stream(src)
            timestamp = wrap64(base_timestamp + ts_delta)
            if log_append_time is not None:
                timestamp = log_append_time
            offset_delta = read_varint_stream(src)
            offset = wrap64(base_offset + offset_delta)
            sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else -1
            key_size = read_varint_stream(src)
            _skip(src, key_size)
            value_size = read_varint_stream(src)
            _skip(src, value_size)
            headers = read_varint_stream(src)
            if headers < 0:
                raise InvalidRecordError(f"Found invalid number of record headers {headers}")
            for _ in range(headers):
                key_length = read_varint_stream(src)
                if key_length < 0:
                    raise InvalidRecordError(f"Invalid negative header key size {key_length}")
                _skip(src, key_length)
                _skip(src, read_varint_stream(src))
        except (BufferUnderflowError, IllegalArgumentError) as e:
            raise InvalidRecordError(INVALID_STRUCTURE, cause=e) from None
    except CodecError as e:
        raise stream_failure(e, "Failed to decompress record stream") from None
    return PartialRecord(
        size_in_bytes, attributes, offset, timestamp, sequence, key_size, value_size
    )


#: a reader of one record: ``(src, base_offset, base_timestamp, base_sequence,
#: log_append_time)`` -> the record
ReadPartial = Callable[[JavaStreamReader, int, int, int, int | None], PartialRecord]


def read_partial_records(
    stream: Decompressed,
    count: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    read: ReadPartial = read_partial_record,
) -> Iterator[PartialRecord]:
    """``skipKeyValueIterator`` of a compressed batch with ``count`` (> 0) records: each
    record as the iterator hands it out (read by ``read``), the exception where Kafka's
    iterator raises it (the last record is handed out only when nothing is left after it)."""
    src = JavaStreamReader(stream)
    last = count - 1
    for i in range(count):
        record = read(src, base_offset, base_timestamp, base_sequence, log_append_time)
        if i == last and stream_has_leftover(src):
            raise InvalidRecordError(RECORDS_REMAINING)
        yield record


# --- Kafka 2.x (before KIP-390): the record's body read through a small skip buffer ----------


class _SkipBuffer:
    """2.x ``readPartiallyFrom``: a ``MAX_SKIP_BUFFER_SIZE`` (2048) array refilled from the
    stream, never past the record's declared body (``bytesRemaining``)."""

    SIZE = 2048

    def __init__(self, src: JavaStreamReader, body: int) -> None:
        self.src = src
        self.remaining = body  # bytes of the body not yet pulled into the buffer
        self.buf = b""
        self.pos = 0

    def available(self) -> int:
        return len(self.buf) - self.pos

    def read_more(self) -> None:
        if self.remaining <= 0:
            raise InvalidRecordError(
                "Invalid record size: expected to read more bytes in record payload"
            )
        keep = self.buf[self.pos :]
        n = min(self.remaining, self.SIZE - len(keep))
        got = self.src.read_fully(n)
        if len(got) < n:  # DataInputStream.readFully
            raise StreamEof()
        self.buf = keep + got
        self.pos = 0
        self.remaining -= n

    def byte(self) -> int:
        if self.available() < 1 and self.remaining > 0:
            self.read_more()
        if self.available() < 1:
            raise BufferUnderflowError()
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self, is_long: bool = False) -> int:
        if self.available() < (10 if is_long else 5) and self.remaining > 0:
            self.read_more()
        reader = self._ByteReader(self)
        try:
            return read_varlong_stream(reader) if is_long else read_varint_stream(reader)
        except _Underflow:
            raise BufferUnderflowError() from None

    class _ByteReader:
        def __init__(self, outer: _SkipBuffer) -> None:
            self.outer = outer

        def read(self) -> int:
            o = self.outer
            if o.pos >= len(o.buf):
                raise _Underflow()
            b = o.buf[o.pos]
            o.pos += 1
            return b

    def skip_field(self) -> int:
        """``skipLengthDelimitedField``: the length, then that many bytes skipped."""
        while True:
            if self.available() < 5 and self.remaining > 0:
                self.read_more()
                continue
            size = self.varint()
            break
        if size <= 0:
            return size
        to_skip = size
        while to_skip > self.available():
            to_skip -= self.available()
            self.pos = len(self.buf)
            self.read_more()
        self.pos += to_skip
        return size


class _Underflow(Exception):
    pass


def _read_partial_record_2_8(
    src: JavaStreamReader,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
) -> PartialRecord:
    """One record of 2.x's ``readPartiallyFrom``: its body read through the skip buffer,
    bounded by its declared length ("... but there are still bytes remaining" when fields end
    before it, "expected to read more bytes" when they need more)."""
    try:
        length = read_varint_stream(DataInputReader(src))
        size_in_bytes = len(write_varint(length)) + length
        sb = _SkipBuffer(src, length)
        try:
            attributes = sb.byte()
            ts_delta = sb.varint(is_long=True)
            offset_delta = sb.varint()
            key_size = sb.skip_field()
            value_size = sb.skip_field()
            headers = sb.varint()
            if headers < 0:
                raise InvalidRecordError(f"Found invalid number of record headers {headers}")
            for _ in range(headers):
                key_length = sb.skip_field()
                if key_length < 0:
                    raise InvalidRecordError(f"Invalid negative header key size {key_length}")
                sb.skip_field()
            if sb.remaining > 0 or sb.available() > 0:
                raise InvalidRecordError(
                    f"Invalid record size: expected to read {length} bytes in record "
                    "payload, but there are still bytes remaining"
                )
        except (BufferUnderflowError, IllegalArgumentError) as e:
            raise InvalidRecordError(INVALID_STRUCTURE, cause=e) from None
    except (StreamEof, CodecError) as e:
        raise stream_failure_2_8(e) from None
    timestamp = (
        log_append_time if log_append_time is not None else wrap64(base_timestamp + ts_delta)
    )
    sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else -1
    return PartialRecord(
        size_in_bytes,
        attributes,
        wrap64(base_offset + offset_delta),
        timestamp,
        sequence,
        key_size,
        value_size,
    )


#: 2.x ``skipKeyValueIterator``: :func:`read_partial_records`, each record read by 2.x's
#: ``readPartiallyFrom`` (through a skip buffer, bounded by its declared length)
read_partial_records_2_8 = partial(read_partial_records, read=_read_partial_record_2_8)
