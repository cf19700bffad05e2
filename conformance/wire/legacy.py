"""Magic 0 and 1 messages (``LegacyRecord``, ``AbstractLegacyRecordBatch``), docs/format.md §2.

Positions after the 12-byte entry prefix (offset int64, size int32):

=====  =====  =====  ======  ===================================================
v0 @   v1 @   field  type    notes
=====  =====  =====  ======  ===================================================
0      0      crc    uint32  CRC-32 over [4, size)
4      4      magic  int8
5      5      attrs  int8    bits 0-2 codec, bit 3 (v1) LogAppendTime
—      6      ts     int64
6      14     klen   int32   < 0 -> null
10     18     key
10+K   18+K   vlen   int32   < 0 -> null
14+K   22+K   value
=====  =====  =====  ======  ===================================================

A compressed *wrapper* message carries, as its value, a compressed run of inner entries;
v0 inner offsets are absolute, v1 inner offsets are relative to ``wrapper offset - last inner
offset`` (wrapper offset 0 means "use as stored").

One writer, at the end (``# --- writer ---``): :func:`write_legacy_message` and
:func:`write_legacy_wrapper` (``LegacyRecord.write``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence

from conformance import codecs
from conformance.errors import (
    CodecError,
    CorruptRecordError,
    DecodeError,
    IllegalArgumentError,
    IndexOutOfBoundsError,
    InvalidRecordError,
    KafkaError,
    jvm_allocate,
    watching_allocations,
)
from conformance.primitives import native as _native
from conformance.primitives.crc import crc32
from conformance.primitives.java import wrap64
from conformance.wire import batch as _batch
from conformance.wire._record_fast import read_legacy_fast
from conformance.wire.java_stream import JavaStreamReader
from conformance.wire.layout import (
    COMPRESSION_CODEC_MASK,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MESSAGE_ATTRIBUTES_OFFSET,
    MESSAGE_CRC_OFFSET,
    MESSAGE_MAGIC_OFFSET,
    MESSAGE_TIMESTAMP_OFFSET,
    NO_TIMESTAMP,
    RECORD_OVERHEAD_V0,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
    header_size,
)
from conformance.wire.record import Record, RecordSink

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class LegacyMessage:
    """``LegacyRecord`` over ``buf`` (the message without its 12-byte entry prefix)."""

    __slots__ = ("buf", "wrapper_timestamp", "wrapper_timestamp_type")

    def __init__(
        self,
        buf: bytes,
        wrapper_timestamp: int | None = None,
        wrapper_timestamp_type: str | None = None,
    ) -> None:
        self.buf = buf
        self.wrapper_timestamp = wrapper_timestamp
        self.wrapper_timestamp_type = wrapper_timestamp_type

    def _get_int(self, index: int) -> int:
        if index < 0 or index + 4 > len(self.buf):
            raise IndexOutOfBoundsError()
        return _I32.unpack_from(self.buf, index)[0]

    @property
    def size(self) -> int:
        return len(self.buf)

    @property
    def crc(self) -> int:
        return int.from_bytes(self.buf[MESSAGE_CRC_OFFSET:MESSAGE_MAGIC_OFFSET], "big")

    @property
    def magic(self) -> int:
        b = self.buf[MESSAGE_MAGIC_OFFSET]
        return b - 256 if b > 127 else b

    @property
    def attributes(self) -> int:
        b = self.buf[MESSAGE_ATTRIBUTES_OFFSET]
        return b - 256 if b > 127 else b

    @property
    def compression_id(self) -> int:
        return self.buf[MESSAGE_ATTRIBUTES_OFFSET] & COMPRESSION_CODEC_MASK

    def computed_crc(self) -> int:
        return crc32(self.buf[MESSAGE_MAGIC_OFFSET:]) & 0xFFFFFFFF

    def ensure_valid(self) -> None:
        if len(self.buf) < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                "Record is corrupt (crc could not be retrieved as the record is too small, "
                f"size = {len(self.buf)})"
            )
        computed = self.computed_crc()
        if self.crc != computed:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {computed})"
            )

    @property
    def timestamp_type(self) -> str:
        if self.magic == MAGIC_VALUE_V0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.wrapper_timestamp_type is not None:
            return self.wrapper_timestamp_type
        return (
            TimestampType.LOG_APPEND_TIME
            if self.buf[MESSAGE_ATTRIBUTES_OFFSET] & TIMESTAMP_TYPE_MASK
            else TimestampType.CREATE_TIME
        )

    @property
    def timestamp(self) -> int:
        if self.magic == MAGIC_VALUE_V0:
            return NO_TIMESTAMP
        if (
            self.wrapper_timestamp_type == TimestampType.LOG_APPEND_TIME
            and self.wrapper_timestamp is not None
        ):
            return self.wrapper_timestamp
        if len(self.buf) < MESSAGE_TIMESTAMP_OFFSET + 8:
            raise IndexOutOfBoundsError()
        return _I64.unpack_from(self.buf, MESSAGE_TIMESTAMP_OFFSET)[0]

    def _key_size_offset(self) -> int:
        return header_size(self.magic)

    def _size_delimited(self, start: int) -> bytes | None:
        """``Utils.sizeDelimited``."""
        size = self._get_int(start)
        if size < 0:
            return None
        capacity = len(self.buf) - (start + 4)
        if size > capacity:
            raise IllegalArgumentError(f"newLimit > capacity: ({size} > {capacity})")
        return self.buf[start + 4 : start + 4 + size]

    @property
    def key(self) -> bytes | None:
        return self._size_delimited(self._key_size_offset())

    @property
    def key_size(self) -> int:
        return self._get_int(self._key_size_offset())

    def _value_size_offset(self) -> int:
        ks = self._key_size_offset()
        offset = ks + 4 + max(0, self.key_size)
        return offset - (1 << 32) if offset > 0x7FFFFFFF else offset

    @property
    def value_size(self) -> int:
        """``LegacyRecord.valueSize()``: the stored value length (< 0 means null)."""
        return self._get_int(self._value_size_offset())

    @property
    def value(self) -> bytes | None:
        return self._size_delimited(self._value_size_offset())


class LegacyBatch:
    """A top-level v0/v1 entry: one message, or a compressed wrapper of inner messages."""

    __slots__ = ("raw", "position", "offset", "message")

    def __init__(self, raw: bytes, position: int = 0) -> None:
        self.raw = raw
        self.position = position
        self.offset = _I64.unpack_from(raw, 0)[0]
        self.message = LegacyMessage(raw[LOG_OVERHEAD:])

    @property
    def size_in_bytes(self) -> int:
        return len(self.raw)

    @property
    def magic(self) -> int:
        return self.message.magic

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def compression_id(self) -> int:
        return self.message.compression_id

    @property
    def timestamp_type(self) -> str:
        return self.message.timestamp_type

    @property
    def max_timestamp(self) -> int:
        return self.message.timestamp

    @property
    def crc(self) -> int:
        return self.message.crc

    @property
    def attributes(self) -> int:
        return self.message.attributes

    is_control = False
    is_transactional = False

    def read_records(
        self,
        out: RecordSink,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    ) -> codecs.Decompressed | None:
        """The consumer's view: ``iterator()``, then per record ``ensureValid()`` and reads of
        offset, timestamp, key, value. Returns a wrapper's decompressed payload (for strict
        checks), else None."""
        state: list[codecs.Decompressed] = []
        codec = codecs.codec(self.message.compression_id).id
        if codec != codecs.NONE and _batch.FAST_PATH and _native.NATIVE is not None:
            # the codec's whole-payload fast path first (its Java stream reads such a payload
            # to its end without error or short read, whatever the wrapper's magic: under
            # magic 0, lz4's header checksum is not checked, and the fast path's is right)
            watched = watching_allocations()
            whole = None if watched else self._wrapper_whole(codec, decompressed_limit)
            if whole is not None and self._read_fast(codecs.Decompressed([whole]), out):
                return codecs.Decompressed([whole])
            stream = self._wrapper_stream(codec, decompressed_limit, codecs.CLIENTS[0])
            if stream.error is None and all(stream.pieces) and self._read_fast(stream, out):
                return stream
            state.append(stream)
        for offset, message in self.read_messages(decompressed_limit, state):
            out.append(_to_record(offset, message))
        return state[0] if state else None

    def _read_fast(self, stream: codecs.Decompressed, out: RecordSink) -> bool:
        """The native path over a payload decompressed without error or short read."""
        wrapper = self.message
        try:
            lat = (
                wrapper.timestamp
                if wrapper.timestamp_type == TimestampType.LOG_APPEND_TIME
                else None
            )
        except DecodeError:
            return False  # the reference raises it where Java does
        data = stream.pieces[0] if len(stream.pieces) == 1 else stream.data
        return read_legacy_fast(bytes(data), wrapper.magic, self.offset, lat, out)

    def read_messages(
        self,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
        state: list[codecs.Decompressed] | None = None,
        clients: str = codecs.CLIENTS[0],
    ) -> Iterator[tuple[int, LegacyMessage]]:
        """``iterator()`` as Kafka runs it: (absolute offset, message) pairs, errors raised
        where Java raises them (a wrapper is read completely before its first message);
        ``clients``: whose codec libraries decompress a wrapper (``codecs.CLIENTS``)."""
        codec = codecs.codec(self.message.compression_id).id
        if codec == codecs.NONE:
            yield self.offset, self.message
            return
        given = state[0] if state else None  # read_records decompressed it already
        entries, base, stream = self._deep_entries(codec, decompressed_limit, clients, given)
        if state is not None and given is None:
            state.append(stream)
        wrapper_v1 = self.message.magic == MAGIC_VALUE_V1
        for inner_offset, inner in entries:
            offset = wrap64(base + inner_offset) if wrapper_v1 else inner_offset
            if codecs.codec(inner.compression_id).id != codecs.NONE:
                raise InvalidRecordError("Inner messages must not be compressed")
            yield offset, inner

    def _wrapper_whole(self, codec: int, decompressed_limit: int) -> bytes | None:
        """The wrapper's payload by the codec's whole-payload fast path, or None: where the
        wrapper's own checks raise, or the fast path is not sure (then ``_wrapper_stream``
        decides, errors and all)."""
        try:
            value = self._wrapper_value(codec)
        except DecodeError:
            return None
        return codecs.read_whole(codec, value, decompressed_limit)

    def _wrapper_value(self, codec: int) -> bytes:
        """``DeepRecordsIterator``'s checks of the wrapper: its compressed payload."""
        wrapper = self.message
        wrapper_magic = wrapper.magic
        if wrapper_magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
            raise InvalidRecordError(
                f"Invalid wrapper magic found in legacy deep record iterator {wrapper_magic}"
            )
        if not codecs.CODECS[codec].legacy_magics:  # zstd
            raise InvalidRecordError(
                "Invalid wrapper compressionType found in legacy deep record iterator "
                f"{wrapper_magic}"
            )
        value = wrapper.value
        if value is None:
            raise InvalidRecordError(
                f"Found invalid compressed record set with null value (magic = {wrapper_magic})"
            )
        return value

    def _wrapper_stream(
        self, codec: int, decompressed_limit: int, clients: str
    ) -> codecs.Decompressed:
        """``DeepRecordsIterator``'s constructor up to the decompressing stream: the wrapper's
        checks, then the payload read as the clients' codec library reads it."""
        value = self._wrapper_value(codec)
        magic = self.message.magic
        return codecs.read_stream(codec, value, magic, decompressed_limit, clients)

    def _deep_entries(
        self,
        codec: int,
        decompressed_limit: int,
        clients: str,
        stream: codecs.Decompressed | None = None,
    ) -> tuple[list[tuple[int, LegacyMessage]], int, codecs.Decompressed]:
        """``DeepRecordsIterator``'s constructor: everything is read eagerly."""
        if stream is None:
            stream = self._wrapper_stream(codec, decompressed_limit, clients)
        wrapper_magic = self.message.magic
        entries = read_inner_messages(stream, self.message)
        if not entries:
            raise InvalidRecordError("Found invalid compressed record set with no inner records")
        base = -1
        if wrapper_magic == 1:
            if self.offset == 0:
                base = 0
            else:
                last_inner = entries[-1][0]
                if self.offset < last_inner:
                    raise InvalidRecordError(
                        "Found invalid wrapper offset in compressed v1 message set, wrapper "
                        f"offset '{self.offset}' is less than the last inner message offset "
                        f"'{last_inner}' and it is not zero."
                    )
                base = self.offset - last_inner
        return entries, base, stream

    def __repr__(self) -> str:
        return f"LegacyBatch(offset={self.offset}, magic={self.magic}, size={len(self.raw)})"


def read_inner_messages(
    stream: codecs.Decompressed,
    wrapper: LegacyMessage,
    takes_wrapper_time: Callable[[int], bool] = lambda magic: magic == MAGIC_VALUE_V1,
) -> list[tuple[int, LegacyMessage]]:
    """The inner messages of a compressed wrapper, read from its decompressed ``stream`` as
    ``DataLogInputStream`` reads them (a short entry at the end is left out); an inner message
    whose magic ``takes_wrapper_time`` gets the wrapper's timestamp and type (magic 1; Kafka
    0.10.2 gives them to any magic above 0). A codec's I/O error surfaces as Kafka wraps it."""
    wrapper_timestamp = wrapper.timestamp
    wrapper_ts_type = wrapper.timestamp_type
    src = JavaStreamReader(stream)
    entries: list[tuple[int, LegacyMessage]] = []
    try:
        while True:  # DataLogInputStream.nextBatch
            head = src.read_fully(LOG_OVERHEAD)
            if len(head) < LOG_OVERHEAD:
                break
            offset = _I64.unpack_from(head, 0)[0]
            size = _I32.unpack_from(head, SIZE_OFFSET)[0]
            if size < RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                )
            jvm_allocate(size)
            body = src.read_fully(size)
            if len(body) < size:
                break
            inner = LegacyMessage(body)
            if takes_wrapper_time(inner.magic):
                inner = LegacyMessage(body, wrapper_timestamp, wrapper_ts_type)
            entries.append((offset, inner))
    except CodecError as e:
        if e.is_io_exception:
            raise KafkaError.wrapping(e) from None
        raise
    return entries


def _to_record(offset: int, message: LegacyMessage) -> Record:
    """The consumer's view of one message: CRC check, then offset, timestamp, key, value."""
    message.ensure_valid()
    timestamp = message.timestamp
    key = message.key
    value = message.value
    return Record(
        offset,
        timestamp,
        key,
        value,
        (),
        message.attributes,
        magic=message.magic,
        crc=message.crc,
        size=message.size + LOG_OVERHEAD,
    )


# --- writer ---------------------------------------------------------------------------------
def write_legacy_message(
    magic: int,
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    attributes: int = 0,
    *,
    crc: int | None = None,
    size: int | None = None,
    key_length: int | None = None,
    value_length: int | None = None,
    trailing: bytes = b"",
    truncate: int | None = None,
) -> bytes:
    """``LegacyRecord.write`` plus the 12-byte entry prefix: one v0/v1 log entry (§2.1).

    The one message writer (BatchBuilder, the crafted corpus, the fuzzers). Any magic other
    than 0 gets the v1 layout, as ``LegacyRecord`` reads it. Fault knobs, all defaulting to the
    correct encoding: ``crc`` = the stored CRC (default: CRC-32 over [magic, end));
    ``size`` = the stored size; ``key_length`` / ``value_length`` = the stored lengths;
    ``trailing`` = extra bytes after the value; ``truncate`` = cut the message (what ``size``
    counts) to that many bytes, the CRC computed over what is left.
    """
    body = bytes([magic & 0xFF, attributes & 0xFF])
    if magic != MAGIC_VALUE_V0:
        body += _I64.pack(timestamp)
    kl = (-1 if key is None else len(key)) if key_length is None else key_length
    vl = (-1 if value is None else len(value)) if value_length is None else value_length
    body += _I32.pack(kl) + (key or b"") + _I32.pack(vl) + (value or b"") + trailing
    if truncate is not None:
        body = body[: truncate - MESSAGE_MAGIC_OFFSET]
    message = struct.pack(">I", (crc32(body) if crc is None else crc) & 0xFFFFFFFF) + body
    return struct.pack(">qi", offset, len(message) if size is None else size) + message


def write_legacy_wrapper(
    magic: int,
    offset: int,
    timestamp: int,
    entries: Sequence[bytes],
    codec: int,
    attributes: int = 0,
    *,
    key: bytes | None = None,
    payload: bytes | None = None,
    crc: int | None = None,
) -> bytes:
    """A compressed wrapper (§2.4): ``entries`` (inner log entries) compressed with ``codec``
    as the value of one message; ``attributes`` adds bits to the codec's. Fault knobs:
    ``payload`` = the value verbatim; ``key``; ``crc``."""
    if payload is None:
        payload = codecs.write_stream(codec, b"".join(entries), magic)
    return write_legacy_message(
        magic,
        offset,
        timestamp,
        key,
        payload,
        (codec & COMPRESSION_CODEC_MASK) | attributes,
        crc=crc,
    )


def seal_legacy(entry: bytes) -> bytes:
    """An existing v0/v1 log entry with its CRC recomputed over [magic, end) (§2.3); the
    counterpart of ``batch.seal_v2`` for a message whose bytes were changed in place."""
    if len(entry) < LOG_OVERHEAD + MESSAGE_MAGIC_OFFSET:
        return bytes(entry)
    crc = crc32(entry[LOG_OVERHEAD + MESSAGE_MAGIC_OFFSET :]) & 0xFFFFFFFF
    return (
        entry[: LOG_OVERHEAD + MESSAGE_CRC_OFFSET]
        + struct.pack(">I", crc)
        + entry[LOG_OVERHEAD + MESSAGE_MAGIC_OFFSET :]
    )
