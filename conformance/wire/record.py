"""One record of a magic-2 batch (``DefaultRecord``), read with Kafka's exact rules
(docs/format.md §3.4-3.5).

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

:func:`read_region` / :func:`read_stream_region` read a batch's whole records region with
them. This module is the reference; the fast path for well-formed regions lives beside it in
:mod:`conformance.wire._record_fast` (never mixed in here), chosen by ``RecordBatchV2.records``.

One writer, at the end (``# --- writer ---``): :func:`write_record_v2` (``DefaultRecord.writeTo``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import starmap
from typing import overload

from conformance.codecs import EOF_EXCEPTION, Decompressed
from conformance.errors import (
    RESOURCE_LIMIT,
    BufferUnderflowError,
    CodecError,
    DecodeError,
    EncodeError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaError,
    RecordLimitError,
    jvm_allocate,
)
from conformance.primitives.java import java_utf8, wrap64
from conformance.primitives.varint import (
    read_varint,
    read_varint_stream,
    read_varlong,
    varint_anomaly,
    write_varint,
    write_varlong,
)
from conformance.wire.java_stream import JavaStreamReader, StreamEof

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


#: the fields of a record row (:data:`RecordRow`), in order: the arguments of ``Record(...)``
ROW_FIELDS = (
    "offset",
    "timestamp",
    "key",
    "value",
    "headers",
    "attributes",
    "offset_delta",
    "timestamp_delta",
    "magic",
    "crc",
    "size",
)


class Record:
    """A decoded record (v2, or a v0/v1 message seen through Kafka's ``Record`` interface).

    ``__init__`` only stores its arguments (and ``control = None``): the native path makes
    records slot by slot without calling it (``wire._record_fast.RECORD_SLOTS``), and
    tests/test_native.py compares every slot with the reference's records."""

    __slots__ = (*ROW_FIELDS, "control")

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


#: the arguments of ``Record(...)`` as one plain tuple: what the fast path produces
RecordRow = tuple[
    int, int, bytes | None, bytes | None, tuple[Header, ...], int, int, int, int, None, int
]


class RecordList(Sequence[Record]):
    """The records of one batch, in the order Kafka hands them out: what the readers write to.

    A sequence of :class:`Record` that stores the fast path's output compactly: rows
    (:data:`RecordRow`, plain tuples of ints, bytes and str) become ``Record`` objects only when
    read, a fresh object on each read. CPython's garbage collector stops tracking a tuple that
    holds no container, so a decoded segment of millions of records costs the collector almost
    nothing; a ``Record`` per record held for the whole decode would be traversed at every
    collection (docs/benchmarks-before-after.md, "Garbage collection"). Records the reference
    reader appends are kept as they are.

    What is kept is bounded by the caller (docs/memory.md):

    * ``keep``: keep the first ``keep`` records, count the others (``None``: keep all);
    * ``limit``: with ``keep=None``, a record beyond ``limit`` raises :class:`RecordLimitError`
      (a kit resource limit: Kafka's consumer streams records, it never holds them all);
    * ``visit``: called with every record as it is handed out (then nothing needs keeping).

    ``total`` counts every record handed out, kept or not; ``len()`` and iteration cover the
    kept ones. :meth:`mark` / :meth:`rollback` undo what was handed out since a mark (the fast
    path's way to decline a region it has begun); not possible once ``visit`` has seen records.
    """

    __slots__ = ("_items", "_rows", "keep", "limit", "visit", "total")

    def __init__(
        self,
        records: Sequence[Record] = (),
        *,
        keep: int | None = None,
        limit: int | None = None,
        visit: Callable[[Record], None] | None = None,
    ) -> None:
        if keep is not None and keep < 0 or limit is not None and limit < 0:
            raise ValueError("keep and limit must be None or >= 0")
        self._items: list = []  # type: ignore[type-arg]
        self._rows = False  # True: _items holds RecordRow tuples
        self.keep = keep
        self.limit = limit
        self.visit = visit
        self.total = 0
        for r in records:
            self.append(r)

    def _room(self, n: int) -> int:
        """How many of ``n`` more records are kept (raises past ``limit``)."""
        if self.keep is None:
            if self.limit is not None and self.total + n > self.limit:
                raise RecordLimitError(
                    f"Batch hands out more than {self.limit} records, the limit on records "
                    f"kept per batch {RESOURCE_LIMIT}"
                )
            return n
        return max(0, min(n, self.keep - len(self._items)))

    def append(self, record: Record) -> None:
        if self._room(1):
            if self._rows:
                self._items = [Record(*row) for row in self._items]
                self._rows = False
            self._items.append(record)
        self.total += 1
        if self.visit is not None:
            self.visit(record)

    def extend_rows(self, rows: list[RecordRow], total: int | None = None) -> None:
        """Append the fast path's rows (kept as rows when nothing else is stored).

        ``total`` (at least ``len(rows)``) counts records handed out of which only the first
        ``len(rows)`` came as rows, because no more are kept: only without ``visit``, in a
        plain ``RecordList`` with ``keep`` set."""
        if total is not None and total != len(rows):
            if self.visit is not None or type(self) is not RecordList or self.keep is None:
                raise ValueError("rows beyond those kept are needed here")
            if len(self._items) + len(rows) < min(self.keep, len(self._items) + total):
                raise ValueError("fewer rows than this list keeps")
        if type(self) is not RecordList:  # a subclass hooks append(): hand out one by one
            for row in rows:
                self.append(Record(*row))
            return
        n = self._room(len(rows))
        kept = rows if n == len(rows) else rows[:n]  # the fast path hands its lists over
        if kept and not self._items:
            self._items = kept  # a list, or the native path's lazy rows (a sequence)
            self._rows = True
        elif self._rows:
            self._own().extend(kept)
        else:
            self._items.extend(Record(*row) for row in kept)
        self.total += len(rows) if total is None else total
        if self.visit is not None:
            for row in rows:
                self.visit(Record(*row))

    def skip(self, n: int) -> None:
        """Count ``n`` more records handed out and not kept: only once ``keep`` records are
        kept, and without ``visit`` (the fast path checks such records without making them)."""
        if self.visit is not None or self.keep is None or len(self._items) < self.keep:
            raise ValueError("only records beyond those kept can be skipped")
        self.total += n

    def mark(self) -> tuple[int, int]:
        return len(self._items), self.total

    def rollback(self, mark: tuple[int, int]) -> None:
        if self.visit is not None and self.total != mark[1]:
            raise RuntimeError("records already visited cannot be taken back")
        del self._own()[mark[0] :]
        self.total = mark[1]

    def _own(self) -> list:  # type: ignore[type-arg]
        """The stored items as a list of this object's own (the native path's rows are a
        read-only sequence until something changes them)."""
        if type(self._items) is not list:
            self._items = list(self._items)
        return self._items

    @property
    def dropped(self) -> int:
        """Records handed out but not kept (``keep``)."""
        return self.total - len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Record]:
        items = self._items
        if not self._rows:
            return iter(items)
        if type(items) is list:
            return starmap(Record, items)
        return iter(items.records())  # the native path: the batch's Records, made in one call

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        item = self._items[index]
        if not self._rows:
            return item  # type: ignore[no-any-return]
        if isinstance(index, slice):
            return [Record(*row) for row in item]
        return Record(*item)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RecordList, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        more = f", dropped={self.dropped}" if self.dropped else ""
        return f"RecordList({list(self)!r}{more})"


#: where the readers hand records out: a plain list, or a batch's :class:`RecordList`
RecordSink = list[Record] | RecordList


#: the messages of Kafka's record readers and iterators (``DefaultRecord``,
#: ``DefaultRecordBatch.StreamRecordIterator``), shared by every reader of the kit
INVALID_STRUCTURE = "Found invalid record structure"
PREMATURE_EOF = "Incorrect declared batch size, premature EOF reached"
RECORDS_REMAINING = "Incorrect declared batch size, records still remaining in file"


def _varint_field(
    buf: bytes, pos: int, end: int, anomalies: Anomalies | None, field: str, is_long: bool = False
) -> tuple[int, int]:
    """One varint (varlong) field; in strict mode, a multi-byte encoding is checked."""
    value, nxt = (read_varlong if is_long else read_varint)(buf, pos, end)
    if anomalies is not None and nxt - pos > 1:
        _note_varint(anomalies, buf, pos, nxt, field, is_long)
    return value, nxt


def _nullable_bytes(
    buf: bytes, pos: int, end: int, anomalies: Anomalies | None, field: str, shown: str
) -> tuple[bytes | None, int]:
    """A length varint (``field``) then that many bytes; a negative length is null."""
    n, pos = _varint_field(buf, pos, end, anomalies, field)
    if n < 0:
        if anomalies is not None:
            _note_null_length(anomalies, pos, n, shown)
        return None, pos
    if pos + n > end:
        raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
    return buf[pos : pos + n], pos + n


def read_body(
    buf: bytes,
    pos: int,
    length: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    anomalies: Anomalies | None = None,
) -> tuple[Record, int]:
    """Parse attributes..headers starting at ``pos``; ``buf`` ends where Java's buffer ends.

    The reference reader: field by field, as ``DefaultRecord.readFrom`` reads them (the fast
    path, ``_record_fast``, is held to it by tests/test_fast_path.py).
    """
    start = pos
    end = len(buf)
    try:
        attributes = buf[pos]
        pos += 1
        ts_delta, pos = _varint_field(buf, pos, end, anomalies, "timestampDelta", True)
        if log_append_time is None:
            timestamp = wrap64(base_timestamp + ts_delta)
        else:
            timestamp = log_append_time
        offset_delta, pos = _varint_field(buf, pos, end, anomalies, "offsetDelta")
        offset = wrap64(base_offset + offset_delta)
        key, pos = _nullable_bytes(buf, pos, end, anomalies, "keyLength", "key")
        value, pos = _nullable_bytes(buf, pos, end, anomalies, "valueLength", "value")
        count, pos = _varint_field(buf, pos, end, anomalies, "headerCount")
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
                n, pos = _varint_field(buf, pos, end, anomalies, "headerKeyLength")
                if n < 0:
                    raise InvalidRecordError(f"Invalid negative header key size {n}")
                if pos + n > end:
                    raise IllegalArgumentError(f"newLimit > capacity: ({n} > {end - pos})")
                hkey = java_utf8(buf[pos : pos + n])
                pos += n
                hval, pos = _nullable_bytes(
                    buf, pos, end, anomalies, "headerValueLength", "header value"
                )
                hs.append((hkey, hval))
            headers = tuple(hs)
        if pos - start != length:
            raise InvalidRecordError(
                f"Invalid record size: expected to read {length} bytes in record payload, "
                f"but instead read {pos - start}"
            )
    except IndexError:
        raise InvalidRecordError(INVALID_STRUCTURE, cause=BufferUnderflowError()) from None
    except (BufferUnderflowError, IllegalArgumentError) as e:
        raise InvalidRecordError(INVALID_STRUCTURE, cause=e) from None
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
        raise InvalidRecordError(PREMATURE_EOF)
    b = buf[pos]
    if b < 0x80:
        length = (b >> 1) ^ -(b & 1)
        pos += 1
    else:
        try:
            length, p2 = read_varint(buf, pos, end)
        except BufferUnderflowError:
            raise InvalidRecordError(PREMATURE_EOF) from None
        # an over-long varint escapes as a raw IllegalArgumentException (docs/format.md §3.5a)
        if anomalies is not None:
            _note_varint(anomalies, buf, pos, p2, "record length")
        pos = p2
    if end - pos < length:
        raise InvalidRecordError(
            f"Invalid record size: expected {length} bytes in record payload, but instead the "
            f"buffer has only {end - pos} remaining bytes."
        )
    record, new_pos = read_body(
        buf, pos, length, base_offset, base_timestamp, log_append_time, anomalies
    )
    record.size = new_pos - pos
    return record, new_pos


def stream_failure(e: CodecError, text: str, *, eof_is_premature: bool = False) -> DecodeError:
    """The exception ``StreamRecordIterator`` turns a codec's exception into: an
    ``IOException`` is wrapped as ``KafkaException(text)``, unchecked ones escape; 2.x
    (``eof_is_premature``) first catches ``EOFException``: "premature EOF reached"."""
    if eof_is_premature and e.kafka_exception == EOF_EXCEPTION:
        return InvalidRecordError(PREMATURE_EOF)
    if e.is_io_exception:
        return KafkaError(text, cause=e)
    return e  # unchecked (SnappyError, BufferUnderflowException, ...) escapes raw


def stream_failure_2_8(e: CodecError | StreamEof) -> DecodeError:
    """The exception 2.x ``StreamRecordIterator.readNext`` turns an exception of a record
    read into: an ``EOFException`` (the stream's, or the codec's) is "premature EOF reached",
    an ``IOException`` is wrapped as ``KafkaException("Failed to decompress record stream")``,
    unchecked ones escape."""
    if isinstance(e, StreamEof):
        return InvalidRecordError(PREMATURE_EOF)
    return stream_failure(e, "Failed to decompress record stream", eof_is_premature=True)


def read_from_stream(
    src: JavaStreamReader,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    anomalies: Anomalies | None = None,
) -> Record:
    """``DefaultRecord.readFrom(InputStream)`` wrapped as ``StreamRecordIterator.readNext``."""
    try:
        buf, bpos = src.buf, src.bpos
        if bpos < len(buf) and buf[bpos] < 0x80:
            b = buf[bpos]
            src.bpos = bpos + 1
            length = (b >> 1) ^ -(b & 1)
        else:
            length = read_varint_stream(src)
        if length < 0:
            raise IllegalArgumentError(f"capacity < 0: ({length} < 0)")
        jvm_allocate(length)
        body = src.read_fully(length)
        if len(body) != length:
            raise InvalidRecordError(
                f"Invalid record size: expected {length} bytes in record payload, but the "
                "record payload reached EOF."
            )
    except IllegalArgumentError as e:
        raise InvalidRecordError(PREMATURE_EOF, cause=e) from None
    except CodecError as e:
        raise stream_failure(e, "Failed to decompress record stream") from None
    if anomalies is None:
        record, _ = read_body(body, 0, length, base_offset, base_timestamp, log_append_time)
    else:
        local: Anomalies = []
        record, _ = read_body(body, 0, length, base_offset, base_timestamp, log_append_time, local)
        anomalies.extend(local)
    record.size = length
    return record


def stream_has_leftover(src: JavaStreamReader) -> bool:
    """``StreamRecordIterator.ensureNoneRemaining`` inverted, with Kafka's error wrapping."""
    try:
        return not src.at_end()
    except CodecError as e:
        raise stream_failure(e, "Error checking for remaining bytes after reading batch") from None


def read_region(
    buf: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    out: RecordSink,
    anomalies: Anomalies | None = None,
) -> None:
    """The reference reader of an uncompressed batch's records region (``buf``, exactly).

    ``count`` records by :func:`read_uncompressed`, each appended to ``out`` as Kafka's
    iterator hands it out; bytes left after the last one are an error (docs/format.md §3.5a).
    """
    pos = 0
    append = out.append
    last = count - 1
    for i in range(count):
        record, pos = read_uncompressed(
            buf, pos, base_offset, base_timestamp, log_append_time, anomalies
        )
        if i == last and pos != len(buf):
            raise InvalidRecordError(RECORDS_REMAINING)
        append(record)


def read_stream_region(
    stream: Decompressed,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    out: RecordSink,
    anomalies: Anomalies | None = None,
) -> None:
    """The reference reader of a compressed batch's records (``StreamRecordIterator``).

    ``count`` records by :func:`read_from_stream` over the payload replayed as Java reads it;
    data left after the last one is an error (docs/format.md §3.5b).
    """
    src = JavaStreamReader(stream)
    append = out.append
    last = count - 1
    for i in range(count):
        record = read_from_stream(src, base_offset, base_timestamp, log_append_time, anomalies)
        if i == last and stream_has_leftover(src):
            raise InvalidRecordError(RECORDS_REMAINING)
        append(record)


# --- writer ---------------------------------------------------------------------------------
HeaderInput = tuple[str | bytes, bytes | None]
RECORD_FIELDS = (
    "attributes",
    "timestamp_delta",
    "offset_delta",
    "key",
    "value",
    "header_count",
    "headers",
)


class Raw(bytes):
    """Bytes the writers put verbatim in place of a field's encoding (a fault knob)."""

    __slots__ = ()


def _bytes_field(b: bytes | None) -> bytes:
    if isinstance(b, Raw):
        return bytes(b)
    return write_varint(-1) if b is None else write_varint(len(b)) + b


def _header_key(k: str | bytes | None) -> bytes:
    if k is None:
        raise EncodeError("Invalid null header key found in headers")
    return _bytes_field(
        k if isinstance(k, Raw) else k.encode("utf-8") if isinstance(k, str) else bytes(k)
    )


def write_headers_v2(headers: Sequence[HeaderInput], *, count: int | bytes | None = None) -> bytes:
    """The headers section of a v2 record: ``headerCount`` varint, then each key and value.

    Fault knobs: ``count`` = the count declared (default ``len(headers)``; bytes = raw); a
    :class:`Raw` key or value is written verbatim."""
    n = write_varint(len(headers)) if count is None else _varint(count)
    return n + b"".join(_header_key(hk) + _bytes_field(hv) for hk, hv in headers)


def _varint(x: int | bytes, enc: Callable[[int], bytes] = write_varint) -> bytes:
    return bytes(x) if isinstance(x, (bytes, bytearray)) else enc(x)


def write_record_v2(
    offset_delta: int | bytes = 0,
    timestamp_delta: int | bytes = 0,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: Sequence[HeaderInput] = (),
    attributes: int = 0,
    *,
    header_count: int | bytes | None = None,
    length: int | bytes | None = None,
    trailing: bytes = b"",
    end_after: str | None = None,
) -> bytes:
    """``DefaultRecord.writeTo``: one v2 record with its length prefix (docs/format.md §3.4).

    The one record writer (BatchBuilder, crafted corpus, fuzzers). Fault knobs, all defaulting
    to the correct encoding: an int field given as bytes, or a key / value / header key given as
    :class:`Raw`, is written verbatim (non-minimal or overlong varints, lying lengths);
    ``header_count`` is the count declared (default ``len(headers)``); ``length`` None = the
    true body length, an int = that value, bytes = its raw encoding; ``trailing`` = extra bytes
    after the headers; ``end_after`` cuts the body after that field (:data:`RECORD_FIELDS`).
    """
    parts = [
        bytes([attributes & 0xFF]),
        _varint(timestamp_delta, write_varlong),
        _varint(offset_delta),
        _bytes_field(key),
        _bytes_field(value),
    ]
    if end_after is not None and end_after in RECORD_FIELDS[: len(parts)]:
        parts = parts[: RECORD_FIELDS.index(end_after) + 1]
    elif end_after == "header_count":
        parts.append(
            write_headers_v2((), count=len(headers) if header_count is None else header_count)
        )
    else:
        parts.append(write_headers_v2(headers, count=header_count))
    body = b"".join(parts) + trailing
    return _varint(len(body) if length is None else length) + body
