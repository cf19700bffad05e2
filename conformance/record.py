"""One record of a magic-2 batch (``DefaultRecord``), read with Kafka's exact rules (spec §3.4-3.5).

==================  =======  ==============================================================
field               type     notes
==================  =======  ==============================================================
length              varint   bytes from ``attributes`` to the end of the headers
attributes          int8     unused; any value accepted
timestampDelta      varlong  timestamp = baseTimestamp + delta (LogAppendTime: maxTimestamp)
offsetDelta         varint   offset = baseOffset + delta (never checked)
keyLength           varint   < 0 -> null key
key                 bytes
valueLength         varint   < 0 -> null value
value               bytes
headerCount         varint   < 0 or > remaining bytes -> InvalidRecordException
  headerKeyLength   varint   < 0 -> InvalidRecordException
  headerKey         bytes    UTF-8, malformed sequences -> U+FFFD
  headerValueLength varint   < 0 -> null value
  headerValue       bytes
==================  =======  ==============================================================

Two readers, because Kafka has two (and they disagree on edge cases):

* :func:`read_uncompressed` — ``DefaultRecord.readFrom(ByteBuffer)`` over the whole records
  region of an uncompressed batch: fields may run into the next record before the final size
  check catches it.
* :func:`read_from_stream` — ``DefaultRecord.readFrom(InputStream)`` for compressed batches:
  the body is read into a buffer of exactly ``length`` bytes first.
"""

from __future__ import annotations

from .errors import (
    BufferUnderflowError,
    CodecError,
    DecodeError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaError,
)
from .varint import read_varint, read_varint_stream, read_varlong, varint_anomaly

#: strict-mode notes collected while parsing: (position in the parsed buffer, code, message)
Anomalies = list[tuple[int, str, str]]


def _note_varint(
    anomalies: Anomalies, buf: bytes, start: int, end: int, field: str, is_long: bool = False
) -> None:
    kind = varint_anomaly(buf, start, end, is_long=is_long)
    if kind == "non-minimal":
        anomalies.append(
            (start, "varint-non-minimal", f"{field} uses a non-minimal {end - start}-byte varint")
        )
    elif kind == "overflow-bits":
        anomalies.append(
            (start, "varint-overflow-bits", f"{field} varint has bits Kafka's reader drops")
        )


def _note_null_length(anomalies: Anomalies, pos: int, n: int, field: str) -> None:
    if n != -1:
        anomalies.append(
            (pos, "null-length-not-minus-one", f"{field} length {n} read as null (writers use -1)")
        )

Header = tuple[str, bytes | None]

_M64 = 1 << 64
_MIN64 = -(1 << 63)
_MAX64 = (1 << 63) - 1


class Record:
    """A decoded record (v2, or a v0/v1 message seen through Kafka's ``Record`` interface)."""

    __slots__ = (
        "offset",
        "timestamp",
        "key",
        "value",
        "headers",
        "attributes",
        "offset_delta",
        "timestamp_delta",
        "control",
        "magic",
        "crc",
        "size",
    )

    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...] = (),
        attributes: int = 0,
        offset_delta: int = 0,
        timestamp_delta: int = 0,
        magic: int = 2,
        crc: int | None = None,
        size: int = 0,
    ) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers
        self.attributes = attributes
        self.offset_delta = offset_delta
        self.timestamp_delta = timestamp_delta
        self.control: dict[str, object] | None = None
        self.magic = magic
        self.crc = crc
        self.size = size

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.offset, self.timestamp, self.key, self.value, self.headers) == (
            other.offset,
            other.timestamp,
            other.key,
            other.value,
            other.headers,
        )

    __hash__ = None  # type: ignore[assignment]


def wrap64(x: int) -> int:
    """Java ``long`` overflow."""
    if _MIN64 <= x <= _MAX64:
        return x
    return (x - _MIN64) % _M64 + _MIN64


def wrap32(x: int) -> int:
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence`` in Java int arithmetic."""
    if sequence > wrap32(0x7FFFFFFF - increment):
        return wrap32(increment - wrap32(0x7FFFFFFF - sequence) - 1)
    return wrap32(sequence + increment)


_STRUCTURE = "Found invalid record structure"
_PREMATURE = "Incorrect declared batch size, premature EOF reached"


def _body(
    buf: bytes,
    pos: int,
    length: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    anomalies: Anomalies | None = None,
) -> tuple[Record, int]:
    """Parse attributes..headers starting at ``pos``; ``buf`` ends where Java's buffer ends.

    Single-byte varints take an inline fast path; only multi-byte ones (the only ones that can
    be non-minimal) go through the general reader, where strict-mode checks live.
    """
    start = pos
    end = len(buf)
    try:
        attributes = buf[pos]
        pos += 1
        b = buf[pos]
        if b < 0x80:
            ts_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            ts_delta, p2 = read_varlong(buf, pos, end)
            if anomalies is not None:
                _note_varint(anomalies, buf, pos, p2, "timestampDelta", True)
            pos = p2
        if log_append_time is None:
            timestamp = base_timestamp + ts_delta
            if not _MIN64 <= timestamp <= _MAX64:
                timestamp = wrap64(timestamp)
        else:
            timestamp = log_append_time
        b = buf[pos]
        if b < 0x80:
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            offset_delta, p2 = read_varint(buf, pos, end)
            if anomalies is not None:
                _note_varint(anomalies, buf, pos, p2, "offsetDelta")
            pos = p2
        offset = base_offset + offset_delta
        if not _MIN64 <= offset <= _MAX64:
            offset = wrap64(offset)
        b = buf[pos]
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, p2 = read_varint(buf, pos, end)
            if anomalies is not None:
                _note_varint(anomalies, buf, pos, p2, "keyLength")
            pos = p2
        if n < 0:
            key = None
            if anomalies is not None:
                _note_null_length(anomalies, pos, n, "key")
        else:
            if pos + n > end:
                raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
            key = buf[pos : pos + n]
            pos += n
        b = buf[pos]
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, p2 = read_varint(buf, pos, end)
            if anomalies is not None:
                _note_varint(anomalies, buf, pos, p2, "valueLength")
            pos = p2
        if n < 0:
            value = None
            if anomalies is not None:
                _note_null_length(anomalies, pos, n, "value")
        else:
            if pos + n > end:
                raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
            value = buf[pos : pos + n]
            pos += n
        b = buf[pos]
        if b < 0x80:
            count = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            count, p2 = read_varint(buf, pos, end)
            if anomalies is not None:
                _note_varint(anomalies, buf, pos, p2, "headerCount")
            pos = p2
        if count == 0:
            headers: tuple[Header, ...] = ()
        else:
            if count < 0:
                raise InvalidRecordError(f"Found invalid number of record headers {count}")
            if count > end - pos:
                raise InvalidRecordError(
                    f"Found invalid number of record headers. {count} is larger than the "
                    "remaining size of the buffer"
                )
            hs = []
            for _ in range(count):
                n, p2 = read_varint(buf, pos, end)
                if anomalies is not None:
                    _note_varint(anomalies, buf, pos, p2, "headerKeyLength")
                pos = p2
                if n < 0:
                    raise InvalidRecordError(f"Invalid negative header key size {n}")
                if pos + n > end:
                    raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
                hkey = buf[pos : pos + n].decode("utf-8", "replace")
                pos += n
                n, p2 = read_varint(buf, pos, end)
                if anomalies is not None:
                    _note_varint(anomalies, buf, pos, p2, "headerValueLength")
                pos = p2
                if n < 0:
                    hval = None
                    if anomalies is not None:
                        _note_null_length(anomalies, pos, n, "header value")
                else:
                    if pos + n > end:
                        raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
                    hval = buf[pos : pos + n]
                    pos += n
                hs.append((hkey, hval))
            headers = tuple(hs)
        if pos - start != length:
            raise InvalidRecordError(
                f"Invalid record size: expected to read {length} bytes in record payload, "
                f"but instead read {pos - start}"
            )
    except IndexError:
        raise InvalidRecordError(_STRUCTURE, cause=BufferUnderflowError()) from None
    except (BufferUnderflowError, IllegalArgumentError) as e:
        raise InvalidRecordError(_STRUCTURE, cause=e) from None
    return (
        Record(offset, timestamp, key, value, headers, attributes, offset_delta, ts_delta),
        pos,
    )


def read_uncompressed(
    buf: bytes,
    pos: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    anomalies: Anomalies | None = None,
) -> tuple[Record, int]:
    """``DefaultRecord.readFrom(ByteBuffer)`` as the uncompressed batch iterator calls it.

    ``buf`` is exactly the records region of the batch (Java's buffer limit is its end).
    """
    end = len(buf)
    if pos >= end:
        raise InvalidRecordError(_PREMATURE)
    b = buf[pos]
    if b < 0x80:
        length = (b >> 1) ^ -(b & 1)
        pos += 1
    else:
        try:
            length, p2 = read_varint(buf, pos, end)
        except BufferUnderflowError:
            raise InvalidRecordError(_PREMATURE) from None
        # an over-long varint escapes as a raw IllegalArgumentException (spec §3.5a)
        if anomalies is not None:
            _note_varint(anomalies, buf, pos, p2, "record length")
        pos = p2
    if end - pos < length:
        raise InvalidRecordError(
            f"Invalid record size: expected {length} bytes in record payload, but instead the "
            f"buffer has only {end - pos} remaining bytes."
        )
    record, new_pos = _body(
        buf, pos, length, base_offset, base_timestamp, log_append_time, anomalies
    )
    record.size = new_pos - pos
    return record, new_pos


class DecompressedReader:
    """The decompressed stream as Kafka's record iterator sees it (see ``codecs``)."""

    __slots__ = ("data", "pos", "error")

    def __init__(self, data: bytes, error: DecodeError | None) -> None:
        self.data = data
        self.pos = 0
        self.error = error

    def read(self) -> int:
        if self.pos < len(self.data):
            b = self.data[self.pos]
            self.pos += 1
            return b
        if self.error is not None:
            raise self.error
        return -1

    def at_end(self) -> bool:
        """``inputStream.read() == -1`` (the leftover-data check)."""
        return self.read() == -1


def _stream_failure(e: CodecError, text: str) -> DecodeError:
    if e.is_io_exception:
        return KafkaError(text, cause=e)
    return e  # unchecked (SnappyError, BufferUnderflowException, ...) escapes raw


def read_from_stream(
    src: DecompressedReader,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    anomalies: Anomalies | None = None,
) -> Record:
    """``DefaultRecord.readFrom(InputStream)`` wrapped as ``StreamRecordIterator.readNext``."""
    try:
        length_pos = src.pos
        length = read_varint_stream(src)
        if anomalies is not None and src.pos - length_pos > 1:
            _note_varint(anomalies, src.data, length_pos, src.pos, "record length")
        if length < 0:
            raise IllegalArgumentError(f"capacity < 0: ({length} < 0)")
        data = src.data
        start = src.pos
        if len(data) - start < length:
            if src.error is not None:
                src.pos = len(data)
                raise src.error
            src.pos = len(data)
            raise InvalidRecordError(
                f"Invalid record size: expected {length} bytes in record payload, but the "
                "record payload reached EOF."
            )
        src.pos = start + length
        body = data[start : start + length]
    except IllegalArgumentError as e:
        raise InvalidRecordError(_PREMATURE, cause=e) from None
    except CodecError as e:
        raise _stream_failure(e, "Failed to decompress record stream") from None
    if anomalies is None:
        record, _ = _body(body, 0, length, base_offset, base_timestamp, log_append_time)
    else:
        local: Anomalies = []
        record, _ = _body(body, 0, length, base_offset, base_timestamp, log_append_time, local)
        anomalies.extend((start + p, code, msg) for p, code, msg in local)
    record.size = length
    return record


def stream_has_leftover(src: DecompressedReader) -> bool:
    """``StreamRecordIterator.ensureNoneRemaining`` inverted, with Kafka's error wrapping."""
    try:
        return not src.at_end()
    except CodecError as e:
        raise _stream_failure(e, "Error checking for remaining bytes after reading batch") from None
