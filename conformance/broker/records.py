"""The records of a produced batch as the broker's validator iterates them.

``LogValidator`` reads records through three iterators (docs/format.md §3.5), each with its
own failure points; :func:`records_of` gives the same records and raises the same exception at
the same record:

============  ===================================  ==============================================
how           Kafka                                for
============  ===================================  ==============================================
iterator      ``for (Record r : batch)``           the uncompressed paths (in place, conversion)
streaming     ``batch.streamingIterator(...)``     the compressed path when the batch is rebuilt
skip          ``batch.skipKeyValueIterator(...)``  the compressed path stored in place (v2):
                                                   keys, values and headers are skipped
============  ===================================  ==============================================

A :class:`ValidatedRecord` holds what the checks read (offset, timestamp, whether it has a
key, its magic, ``toString()``) and, unless skipped, what a rebuild copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from conformance import codecs
from conformance.errors import (
    BufferUnderflowError,
    CodecError,
    IllegalArgumentError,
    InvalidRecordError,
    jvm_allocate,
)
from conformance.primitives.varint import read_varint, read_varint_stream
from conformance.stream.splitter import Batch
from conformance.wire.batch import RecordBatchV2, increment_sequence
from conformance.wire.java_stream import DataInputReader, JavaStreamReader, StreamEof
from conformance.wire.layout import RECORDS_OFFSET, TIMESTAMP_TYPE_MASK, TimestampType
from conformance.wire.legacy import LegacyBatch, LegacyMessage
from conformance.wire.record import (
    RECORDS_REMAINING,
    Record,
    read_body,
    read_from_stream,
    read_uncompressed,
    stream_failure_2_8,
    stream_has_leftover,
)
from conformance.wire.record_partial import read_partial_records, read_partial_records_2_8

__all__ = ["HOW", "ValidatedRecord", "records_of"]

HOW = ("iterator", "streaming", "skip")


@dataclass(slots=True)
class ValidatedRecord:
    """One record as the validator sees it (``Record`` of Kafka's interface).

    A v2 record carries what its reader read. A legacy record (``legacy``) is read on each
    call, as ``LegacyRecord`` slices its buffer on each ``key()``/``value()``/``toString()``: a
    key or value length past the message end raises (``IllegalArgumentException``, or
    ``IndexOutOfBoundsException`` for a length field past it) only when that is asked for,
    not when the record is handed out."""

    offset: int
    timestamp: int
    magic: int
    #: ``sizeInBytes()``
    size: int = 0
    #: the producer sequence of the record (v2; -1 without one)
    sequence: int = -1
    #: read by the skipping iterator: key, value and headers were not read
    partial: bool = False
    #: the legacy message (v0/v1): its CRC, compression attribute, key and value
    legacy: LegacyMessage | None = None
    #: the clients library reading it (``versions.BrokerVersion.clients``)
    clients: str = "3.5"
    #: v2: key, value, headers as read (none for a skipped record)
    v2_key: bytes | None = None
    v2_value: bytes | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    #: a skipped record (``partial``): its key and value sizes (< 0: null)
    sizes: tuple[int, int] = (-1, -1)

    @property
    def has_key(self) -> bool:
        """``hasKey()`` (legacy: ``keySize() >= 0``)."""
        if self.legacy is not None:
            return self.legacy.key_size >= 0
        return self.sizes[0] >= 0 if self.partial else self.v2_key is not None

    @property
    def key(self) -> bytes | None:
        return self.legacy.key if self.legacy is not None else self.v2_key

    @property
    def value(self) -> bytes | None:
        return self.legacy.value if self.legacy is not None else self.v2_value

    @property
    def text(self) -> str:
        """``toString()`` (it appears in some messages)."""
        if self.legacy is not None:
            return legacy_record_text(self.offset, self.legacy, self.clients)
        if self.partial:  # PartialDefaultRecord.toString()
            return (
                f"PartialDefaultRecord(offset={self.offset}, timestamp={self.timestamp}, "
                f"key={self.sizes[0]} bytes, value={self.sizes[1]} bytes)"
            )
        return (  # DefaultRecord.toString()
            f"DefaultRecord(offset={self.offset}, timestamp={self.timestamp}, "
            f"key={len(self.v2_key or b'')} bytes, value={len(self.v2_value or b'')} bytes)"
        )


def legacy_record_text(offset: int, m: LegacyMessage, clients: str = "3.5") -> str:
    """``LegacyRecordBatch.toString()``: the offset and ``LegacyRecord.toString()``. The
    clients library of 2.x has no ``CompressionType.toString()``: the enum's name ("GZIP")
    stands where 3.x writes the codec's name ("gzip")."""
    key = m.key
    value = m.value
    codec = codecs.codec_name(m.compression_id)
    if clients == "2.8":
        codec = codec.upper()
    if m.magic > 0:
        inner = (
            f"Record(magic={m.magic}, attributes={m.attributes}, compression={codec}, "
            f"crc={m.crc}, {m.timestamp_type}={m.timestamp}, key={len(key or b'')} bytes, "
            f"value={len(value or b'')} bytes)"
        )
    else:
        inner = (
            f"Record(magic={m.magic}, attributes={m.attributes}, compression={codec}, "
            f"crc={m.crc}, key={len(key or b'')} bytes, value={len(value or b'')} bytes)"
        )
    return f"LegacyRecordBatch(offset={offset}, {inner})"


def records_of(
    batch: Batch,
    how: str,
    clients: str = "3.5",
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
) -> Iterator[ValidatedRecord | None]:
    """The records of ``batch`` through Kafka's iterator ``how`` (:data:`HOW`), as the
    clients library of ``clients`` ("3.5" or "2.8", ``versions.BrokerVersion``) reads them; a
    2.x uncompressed record shorter than its length is ``None`` (Kafka's ``null``)."""
    if isinstance(batch, RecordBatchV2):
        yield from _v2_records(batch, how, clients, decompressed_limit)
    else:
        yield from _legacy_records(batch, clients, decompressed_limit)


def _v2_records(
    b: RecordBatchV2, how: str, clients: str, limit: int
) -> Iterator[ValidatedRecord | None]:
    count = b.records_count
    if count == 0:
        return
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
    codec = codecs.codec(b.compression_id).id
    lat = b.max_timestamp if b.attributes_raw & TIMESTAMP_TYPE_MASK else None
    base, base_ts, base_seq = b.base_offset, b.base_timestamp, b.base_sequence

    def sequence(offset: int) -> int:
        return increment_sequence(base_seq, offset - base) if base_seq >= 0 else -1

    if codec == codecs.NONE:
        buf = b.raw[RECORDS_OFFSET:]
        pos = 0
        for i in range(count):
            if clients == "2.8":
                short, pos = _short_2_8(buf, pos)
                if short:  # DefaultRecord.readFrom returned null (after the length varint)
                    if i == count - 1 and pos != len(buf):
                        raise InvalidRecordError(RECORDS_REMAINING)
                    yield None
                    continue
            r, pos = read_uncompressed(buf, pos, base, base_ts, lat)
            if i == count - 1 and pos != len(buf):
                raise InvalidRecordError(RECORDS_REMAINING)
            yield _v2(r.offset, r.timestamp, r.key, r.value, r.headers, r.size, sequence(r.offset))
        return
    stream = codecs.read_stream(codec, b.raw[RECORDS_OFFSET:], b.magic, limit, clients)
    if how == "skip":
        partial = read_partial_records_2_8 if clients == "2.8" else read_partial_records
        for p in partial(stream, count, base, base_ts, base_seq, lat):
            yield ValidatedRecord(
                p.offset, p.timestamp, 2, p.size_in_bytes, p.sequence, partial=True,
                sizes=(p.key_size, p.value_size),
            )  # fmt: skip
        return
    src = JavaStreamReader(stream)
    read: list[ValidatedRecord] = []
    for i in range(count):
        if clients == "2.8":
            r = _read_from_stream_2_8(src, base, base_ts, lat)
        else:
            r = read_from_stream(src, base, base_ts, lat)
        if i == count - 1 and stream_has_leftover(src):
            raise InvalidRecordError(RECORDS_REMAINING)
        record = _v2(r.offset, r.timestamp, r.key, r.value, r.headers, r.size, sequence(r.offset))
        if how == "streaming":
            yield record
        else:  # iterator(): the whole batch is read before the first record is handed out
            read.append(record)
    yield from read


def _v2(
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[tuple[str, bytes | None], ...],
    size: int,
    sequence: int,
) -> ValidatedRecord:
    return ValidatedRecord(
        offset, timestamp, 2, size, sequence, v2_key=key, v2_value=value, headers=headers
    )


def _legacy_records(b: LegacyBatch, clients: str, limit: int) -> Iterator[ValidatedRecord]:
    for offset, m in b.read_messages(limit, clients=clients):
        yield ValidatedRecord(offset, m.timestamp, m.magic, m.size + 12, legacy=m, clients=clients)


def timestamp_type_of(batch: Batch) -> str:
    """``batch.timestampType()``: a v0 batch has none."""
    if batch.magic == 0:
        return TimestampType.NO_TIMESTAMP_TYPE
    return batch.timestamp_type


def _short_2_8(buf: bytes, pos: int) -> tuple[bool, int]:
    """2.x ``DefaultRecord.readFrom(ByteBuffer)``: after the length varint, fewer bytes left
    than the length is ``null`` (the position stays after the varint). Returns (short,
    position): the position is unchanged when the record is not short."""
    if pos >= len(buf):
        return False, pos
    try:
        length, after = read_varint(buf, pos, len(buf))
    except (BufferUnderflowError, IllegalArgumentError):
        return False, pos  # the 3.x reader raises as 2.x does
    if len(buf) - after < length:
        return True, after
    return False, pos


def _read_from_stream_2_8(
    src: JavaStreamReader, base: int, base_ts: int, lat: int | None
) -> Record:
    """2.x ``DefaultRecord.readFrom(DataInput)`` under ``StreamRecordIterator``: an end of
    stream anywhere (``EOFException``) is "premature EOF reached"; a negative length escapes
    as ``ByteBuffer.allocate``'s IllegalArgumentException."""
    try:
        length = read_varint_stream(DataInputReader(src))
        if length < 0:
            raise IllegalArgumentError(f"capacity < 0: ({length} < 0)")
        jvm_allocate(length)
        body = src.read_fully(length)
        if len(body) < length:
            raise StreamEof()
    except (StreamEof, CodecError) as e:
        raise stream_failure_2_8(e) from None
    record, _ = read_body(body, 0, length, base, base_ts, lat)
    record.size = length
    return record
