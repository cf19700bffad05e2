"""``LogValidator.validateMessagesAndAssignOffsets``: the broker's check of a client's batch,
with the offsets, timestamps and epoch it writes into it (docs/broker.md).

Three paths, chosen from the source codec (the batch's), the target codec (topic
``compression.type``) and the topic's magic:

=======================  ========================================  ============================
path                     when                                      what is stored
=======================  ========================================  ============================
in place, uncompressed   source and target none, magics match      the batch, header rewritten
conversion               source and target none, another magic     rebuilt (2.x/3.x topics)
compressed               otherwise                                 the batch, header rewritten
                                                                   (same codec and magic, v1+,
                                                                   inner offsets 0, 1, 2 ...)
                                                                   or rebuilt (recompressed)
=======================  ========================================  ============================

Per batch (``validateBatch``): the same magic as the first batch; for magic 2 the offset
range, the count and their agreement; no control batches from clients; a producer id needs a
sequence; no producer ids or transactions below magic 2. Per record (``validateRecord``):
magic, the inner CRC of a legacy wrapper, a key on compacted topics, the timestamp bound (or
LogAppendTime set by the producer). Record errors are collected over the whole batch and
raised together (``RecordValidationException``, KIP-467); an exception of the iterator itself
ends the batch at once.

The header rewrites of the in-place paths are Kafka's setters: ``setLastOffset`` (base offset
= last offset - lastOffsetDelta), ``setPartitionLeaderEpoch``, ``setMaxTimestamp`` (the
timestamp-type bit and maxTimestamp, attributes recomputed and the CRC with them, unless
both are unchanged).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from conformance import codecs
from conformance.broker.config import TopicConfig
from conformance.broker.records import ValidatedRecord, records_of, timestamp_type_of
from conformance.broker.versions import BrokerVersion
from conformance.errors import (
    RESOURCE_LIMIT,
    CorruptRecordError,
    DecodeError,
    EncodeError,
    IllegalArgumentError,
    IllegalStateError,
    InvalidRecordError,
    InvalidTimestampError,
    NullPointerError,
    RecordLimitError,
    RecordValidationError,
    UnsupportedForMessageFormatError,
    UnsupportedOperationError,
)
from conformance.primitives.crc import crc32, crc32c
from conformance.primitives.java import wrap64
from conformance.stream.decoder import DEFAULT_MAX_RECORDS
from conformance.stream.splitter import Batch
from conformance.wire.batch import RecordBatchV2, v2_attributes
from conformance.wire.builder import BatchBuilder
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    CRC_OFFSET,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    MAX_TIMESTAMP_OFFSET,
    MESSAGE_ATTRIBUTES_OFFSET,
    MESSAGE_CRC_OFFSET,
    MESSAGE_MAGIC_OFFSET,
    MESSAGE_TIMESTAMP_OFFSET,
    NO_TIMESTAMP,
    PARTITION_LEADER_EPOCH_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
)

__all__ = ["Validated", "stamp_log_append_time", "validate"]


@dataclass
class Validated:
    """``ValidationResult``: what is stored, the broker's clock, the assigned max timestamp."""

    #: the bytes the log appends (each batch with its rewrites, or the rebuilt batch)
    stored: bytes
    log_append_time: int
    max_timestamp: int
    #: whether sizes may have changed (a rebuilt batch is checked against max.message.bytes)
    size_may_change: bool


@dataclass
class _Context:
    tp: str
    now: int
    leader_epoch: int
    topic: TopicConfig
    version: BrokerVersion
    #: kit resource limits (docs/memory.md): decompressed bytes per batch, records kept
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT
    max_records: int | None = DEFAULT_MAX_RECORDS

    def read_records(self, b: Batch, how: str) -> Iterator[ValidatedRecord | None]:
        return records_of(b, how, self.version.clients, self.decompressed_limit)


def validate(
    batches: list[Batch],
    *,
    source_codec: int,
    first_offset: int,
    topic: TopicConfig,
    version: BrokerVersion,
    now: int,
    leader_epoch: int,
    tp: str,
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    max_records: int | None = DEFAULT_MAX_RECORDS,
) -> Validated:
    """Validate ``batches`` (what ``MemoryRecords.batches()`` gave) and assign offsets from
    ``first_offset``; raises the exception the broker raises (or a kit resource limit's:
    ``decompressed_limit`` bytes per batch, ``max_records`` records kept for a rebuild)."""
    ctx = _Context(tp, now, leader_epoch, topic, version, decompressed_limit, max_records)
    target = source_codec if topic.compression is None else topic.compression
    if source_codec == codecs.NONE and target == codecs.NONE:
        if not all(b.magic == topic.magic for b in batches):  # hasMatchingMagic
            return _convert(ctx, batches, first_offset)
        return _in_place_uncompressed(ctx, batches, first_offset)
    return _compressed(ctx, batches, first_offset, source_codec, target)


def stamp_log_append_time(
    data: bytes, *, topic: TopicConfig, version: BrokerVersion, now: int
) -> bytes:
    """A v2 batch appended without client checks (a coordinator's marker) as ``LogValidator``
    leaves it: on a LogAppendTime topic, ``setMaxTimestamp(LOG_APPEND_TIME, now)``; else
    unchanged."""
    if topic.timestamp_type != TimestampType.LOG_APPEND_TIME:
        return data
    raw = bytearray(data)
    ctx = _Context("", now, 0, topic, version)
    _set_max_timestamp(ctx, raw, RecordBatchV2(data), TimestampType.LOG_APPEND_TIME, now)
    return bytes(raw)


# ------------------------------------------------------------------------------ the checks


def _first_batch(batches: list[Batch], source_codec: int) -> Batch:
    """``getFirstBatchAndMaybeValidateNoMoreBatches``."""
    if not batches:
        raise InvalidRecordError("Record batch has no batches at all")
    first = batches[0]
    if (first.magic >= MAGIC_VALUE_V2 or source_codec != codecs.NONE) and len(batches) > 1:
        raise InvalidRecordError("Compressed outer record has more than one batch")
    return first


def _has_producer_id(b: Batch) -> bool:
    return isinstance(b, RecordBatchV2) and b.producer_id > -1


def _validate_batch(ctx: _Context, first: Batch, b: Batch, to_magic: int) -> None:
    m = ctx.version.messages
    if first.magic != b.magic:
        raise InvalidRecordError(m.batch_magic.format(magic=b.magic, first=first.magic, tp=ctx.tp))
    if isinstance(b, RecordBatchV2):
        base, last = b.base_offset, b.last_offset
        from_offsets = wrap64(last - base + 1)
        if from_offsets <= 0:
            raise InvalidRecordError(m.offset_range.format(base=base, last=last, tp=ctx.tp))
        count = b.records_count
        if count <= 0:
            raise InvalidRecordError(m.reported_count.format(count=count, tp=ctx.tp))
        if from_offsets != count:
            raise InvalidRecordError(
                m.inconsistent_count.format(base=base, last=last, count=count, tp=ctx.tp)
            )
        if b.is_control:
            raise InvalidRecordError(m.control.format(tp=ctx.tp))
        if b.producer_id > -1 and b.base_sequence < 0:
            raise InvalidRecordError(
                m.sequence.format(sequence=b.base_sequence, pid=b.producer_id, tp=ctx.tp)
            )
    if b.is_transactional and to_magic < MAGIC_VALUE_V2:
        raise UnsupportedForMessageFormatError(
            f"Transactional records cannot be used with magic version {to_magic}"
        )
    if _has_producer_id(b) and to_magic < MAGIC_VALUE_V2:
        raise UnsupportedForMessageFormatError(
            f"Idempotent records cannot be used with magic version {to_magic}"
        )


def _validate_record(
    ctx: _Context, b: Batch, r: ValidatedRecord | None, index: int
) -> tuple[str, int, str] | None:
    """``validateRecord``: None, or ``(error, batch index, message)``; raises for a corrupt
    inner record of a legacy wrapper."""
    if r is None:  # 2.x: the record iterator handed out null (records.records_of)
        raise _null_record(ctx, "hasMagic(byte)")
    m = ctx.version.messages
    # Record.hasMagic: a v2 record matches any v2+ batch, a legacy one its own magic
    has_magic = b.magic >= MAGIC_VALUE_V2 if r.legacy is None else r.magic == b.magic
    if not has_magic:
        return (
            "INVALID_RECORD",
            index,
            m.record_magic.format(record=r.text, magic=b.magic, tp=ctx.tp),
        )
    if b.magic <= MAGIC_VALUE_V1 and b.compression_id != codecs.NONE and r.legacy is not None:
        try:
            r.legacy.ensure_valid()
        except CorruptRecordError:
            raise
        except InvalidRecordError as e:
            raise CorruptRecordError(m.inner_crc.format(message=e.message, tp=ctx.tp)) from None
    if ctx.topic.compacted and not r.has_key:
        return "INVALID_RECORD", index, m.compacted_key.format(tp=ctx.tp)
    topic = ctx.topic
    create_time = topic.timestamp_type == TimestampType.CREATE_TIME
    if ctx.version.timestamp_bounds == "difference":
        # 2.x: one condition; a batch claiming LogAppendTime is refused whenever the
        # timestamp itself passed
        bad_timestamp = create_time and r.timestamp != NO_TIMESTAMP and _out_of_range(ctx, r)
        producer_lat = not bad_timestamp
    else:
        bad_timestamp = create_time and r.timestamp != NO_TIMESTAMP and _out_of_range(ctx, r)
        producer_lat = not (create_time and r.timestamp != NO_TIMESTAMP)
    if bad_timestamp:
        low = wrap64(ctx.now - topic.timestamp_before_max_ms)
        high = wrap64(ctx.now + topic.timestamp_after_max_ms)
        return (
            "INVALID_TIMESTAMP",
            index,
            m.timestamp_range.format(ts=r.timestamp, offset=r.offset, low=low, high=high),
        )
    if producer_lat and timestamp_type_of(b) == TimestampType.LOG_APPEND_TIME:
        return "INVALID_TIMESTAMP", index, m.log_append_time.format(record=r.text)
    return None


def _out_of_range(ctx: _Context, r: ValidatedRecord) -> bool:
    """Outside the topic's window around ``now``, in Java long arithmetic (2.x:
    ``math.abs(ts - now) > difference``, where ``abs(Long.MIN_VALUE)`` stays negative)."""
    topic = ctx.topic
    diff = wrap64(ctx.now - r.timestamp)
    if ctx.version.timestamp_bounds == "difference":
        magnitude = abs(diff) if diff != -(1 << 63) else diff
        return magnitude > topic.timestamp_before_max_ms
    return diff > topic.timestamp_before_max_ms or wrap64(-diff) > topic.timestamp_after_max_ms


def _raise_record_errors(ctx: _Context, errors: list[tuple[str, int, str]]) -> None:
    """``processRecordErrors``."""
    if not errors:
        return
    pairs: list[tuple[int, str | None]] = [(i, msg) for _, i, msg in errors]
    invalid: DecodeError
    if any(e == "INVALID_TIMESTAMP" for e, _, _ in errors):
        invalid = InvalidTimestampError(
            "One or more records have been rejected due to invalid timestamp"
        )
    else:
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{msg}')" for i, msg in pairs[:3])
        invalid = InvalidRecordError(
            ctx.version.messages.record_errors.format(count=len(pairs), errors=f"[{shown}]")
        )
    raise RecordValidationError(invalid, pairs)


# ------------------------------------------------------------------------------ the paths


def _in_place_uncompressed(ctx: _Context, batches: list[Batch], offset: int) -> Validated:
    """``assignOffsetsNonCompressed``: each batch checked, then its header rewritten."""
    first = _first_batch(batches, codecs.NONE)
    out = []
    max_timestamp = NO_TIMESTAMP
    lat = ctx.topic.timestamp_type == TimestampType.LOG_APPEND_TIME
    for b in batches:
        _validate_batch(ctx, first, b, ctx.topic.magic)
        batch_max = NO_TIMESTAMP
        errors = []
        for index, r in enumerate(ctx.read_records(b, "iterator")):
            error = _validate_record(ctx, b, r, index)
            if error is not None:
                errors.append(error)
            offset += 1
            if b.magic > MAGIC_VALUE_V0 and r.timestamp > batch_max:
                batch_max = r.timestamp
        _raise_record_errors(ctx, errors)
        max_timestamp = max(max_timestamp, batch_max) if b.magic > MAGIC_VALUE_V0 else max_timestamp
        raw = bytearray(b.raw)
        _set_last_offset(raw, b, offset - 1)
        if b.magic >= MAGIC_VALUE_V2:
            struct.pack_into(">i", raw, PARTITION_LEADER_EPOCH_OFFSET, ctx.leader_epoch)
        if b.magic > MAGIC_VALUE_V0:
            if lat:
                _set_max_timestamp(ctx, raw, b, TimestampType.LOG_APPEND_TIME, ctx.now)
            else:
                _set_max_timestamp(ctx, raw, b, ctx.topic.timestamp_type, batch_max)
        out.append(bytes(raw))
    if lat:
        max_timestamp = ctx.now if ctx.topic.magic > MAGIC_VALUE_V0 else NO_TIMESTAMP
    return Validated(b"".join(out), ctx.now, max_timestamp, False)


def _null_record(ctx: _Context, call: str) -> NullPointerError:
    """The NullPointerException of calling ``call`` on a null record (2.x readers)."""
    return NullPointerError((ctx.version.messages.null_record or "").format(call=call))


def _convert(ctx: _Context, batches: list[Batch], offset: int) -> Validated:
    """``convertAndAssignOffsetsNonCompressed``: records copied into a batch of the topic's
    magic (message formats of 2.x/3.x topics). The size of the new batch is estimated first
    (``AbstractRecords.estimateSizeInBytes`` over ``records.records()``): every record of
    every batch is read, key and value included, before the first batch is validated."""
    for b in batches:
        for r in ctx.read_records(b, "iterator"):
            if r is None:  # records() is an AbstractIterator over the batches: a null is
                raise IllegalStateError("Expected item but none found.")
            r.key, r.value  # noqa: B018 - read as the estimate reads them (legacy: may raise)
    first = batches[0] if batches else None
    builder = _builder(ctx, first, ctx.topic.magic, codecs.NONE, offset)
    first = _first_batch(batches, codecs.NONE)
    for b in batches:
        _validate_batch(ctx, first, b, ctx.topic.magic)
        errors = []
        for index, r in enumerate(ctx.read_records(b, "iterator")):
            error = _validate_record(ctx, b, r, index)
            if error is not None:
                errors.append(error)
            if not errors:
                _append(builder, offset, r)
            offset += 1
        _raise_record_errors(ctx, errors)
    return Validated(_build(builder), ctx.now, NO_TIMESTAMP, True)


def _compressed(
    ctx: _Context, batches: list[Batch], offset: int, source: int, target: int
) -> Validated:
    """``validateMessagesAndAssignOffsetsCompressed``."""
    to_magic = ctx.topic.magic
    in_place = source == target
    first = _first_batch(batches, source)
    if first.magic != to_magic or to_magic == MAGIC_VALUE_V0:
        in_place = False
    if source == codecs.NONE and first.is_control:
        in_place = True  # control records are not compressed unless written so
    max_timestamp = NO_TIMESTAMP
    expected = 0
    rebuild = _Rebuild(ctx, first, to_magic, target, offset)
    count = 0
    for b in batches:
        _validate_batch(ctx, first, b, to_magic)
        how = "skip" if in_place and first.magic >= MAGIC_VALUE_V2 else "streaming"
        errors = []
        for index, r in enumerate(ctx.read_records(b, how)):
            expected_offset = expected
            expected += 1
            error = _validate_record(ctx, b, r, index)
            if error is None and b.magic > MAGIC_VALUE_V0 and to_magic > MAGIC_VALUE_V0:
                if r.timestamp > max_timestamp:
                    max_timestamp = r.timestamp
                # older clients' v1 inner offsets: the broker rewrites rather than rejects
                if r.offset != expected_offset:
                    in_place = False
            if error is not None:
                errors.append(error)
            else:
                count += 1
                rebuild.add(r, copy_now=not in_place)
        _raise_record_errors(ctx, errors)
    if not in_place:
        return Validated(rebuild.build(), ctx.now, NO_TIMESTAMP, True)
    offset += count
    raw = bytearray(first.raw)
    _set_last_offset(raw, first, offset - 1)
    if ctx.topic.timestamp_type == TimestampType.LOG_APPEND_TIME:
        max_timestamp = ctx.now
    if to_magic >= MAGIC_VALUE_V1:
        _set_max_timestamp(ctx, raw, first, ctx.topic.timestamp_type, max_timestamp)
    if to_magic >= MAGIC_VALUE_V2:
        struct.pack_into(">i", raw, PARTITION_LEADER_EPOCH_OFFSET, ctx.leader_epoch)
    return Validated(bytes(raw), ctx.now, max_timestamp, False)


class _Rebuild:
    """``buildRecordsAndAssignOffsets`` over the validated records, done as they come so no
    list of them is held (Kafka's ``validatedRecords``): its size estimate reads every
    record's key and value, then the builder is made and each record appended; the first
    error of that sequence is raised once validation has passed, as Kafka raises it then.
    Records are held only while the batch may still be stored in place (a later one may
    need them); a record the skipping iterator read cannot be copied
    (``PartialDefaultRecord.key()`` throws)."""

    def __init__(
        self, ctx: _Context, first: Batch, magic: int, codec: int, base_offset: int
    ) -> None:
        self.ctx = ctx
        self.args = (first, magic, codec, base_offset)
        self.base_offset = base_offset
        self.held: list[ValidatedRecord] = []
        self.partial_held = False
        self.builder: BatchBuilder | None = None
        self.copied = 0
        self.estimate_error: DecodeError | None = None
        self.build_error: DecodeError | None = None

    def add(self, r: ValidatedRecord, *, copy_now: bool) -> None:
        if not copy_now:
            if r.partial:  # read by the skipping iterator: copying it throws, keep no more
                self.partial_held = True
            else:
                self._count(len(self.held))
                self.held.append(r)
            return
        self._flush()
        self._copy(r)

    def _flush(self) -> None:
        if self.partial_held:  # partial records come first: the estimate throws at the first
            self.partial_held = False
            if self.estimate_error is None:
                self.estimate_error = UnsupportedOperationError(
                    "key is skipped in PartialDefaultRecord"
                )
        for held in self.held:
            self._copy(held)
        self.held = []

    def _count(self, n: int) -> None:
        if self.ctx.max_records is not None and n >= self.ctx.max_records:
            raise RecordLimitError(
                f"Batch has more than {self.ctx.max_records} records to copy, the limit on "
                f"records kept per batch {RESOURCE_LIMIT}"
            )

    def _copy(self, r: ValidatedRecord) -> None:
        self._count(self.copied)
        offset = self.base_offset + self.copied
        self.copied += 1
        if self.estimate_error is not None:
            return
        try:  # AbstractRecords.estimateSizeInBytes: key() and value() of each record
            if r.partial:
                raise UnsupportedOperationError("key is skipped in PartialDefaultRecord")
            r.key, r.value  # noqa: B018 - read as the estimate reads them (legacy: may raise)
        except DecodeError as e:
            self.estimate_error = e
            return
        if self.build_error is not None:
            return
        try:
            if self.builder is None:
                self.builder = _builder(self.ctx, *self.args)
            _append(self.builder, offset, r)
        except DecodeError as e:
            self.build_error = e

    def build(self) -> bytes:
        self._flush()
        if self.estimate_error is not None:
            raise self.estimate_error
        if self.build_error is not None:
            raise self.build_error
        if self.builder is None:
            self.builder = _builder(self.ctx, *self.args)
        return _build(self.builder)


# -------------------------------------------------------------------------- the rewrites


def _set_last_offset(raw: bytearray, b: Batch, last: int) -> None:
    """``setLastOffset``: v2 stores ``last - lastOffsetDelta`` as the base offset, v0/v1 the
    wrapper's (or the message's) offset; neither is covered by a CRC."""
    if isinstance(b, RecordBatchV2):
        struct.pack_into(">q", raw, BASE_OFFSET_OFFSET, wrap64(last - b.last_offset_delta))
    else:
        struct.pack_into(">q", raw, 0, last)


def _set_max_timestamp(
    ctx: _Context, raw: bytearray, b: Batch, timestamp_type: str, ts: int
) -> None:
    """``setMaxTimestamp``: nothing when type and value are unchanged; else the attributes are
    recomputed (v2: unknown bits dropped, the delete-horizon bit too before 3.0) with the
    timestamp-type bit, the timestamp written and the CRC recomputed."""
    if b.timestamp_type == timestamp_type and b.max_timestamp == ts:
        return
    lat = timestamp_type == TimestampType.LOG_APPEND_TIME
    if isinstance(b, RecordBatchV2):
        attrs = v2_attributes(
            b.compression_id, timestamp_type, b.is_transactional, b.is_control,
            b.has_delete_horizon and ctx.version.delete_horizon_bit,
        )  # fmt: skip
        struct.pack_into(">h", raw, ATTRIBUTES_OFFSET, attrs)
        struct.pack_into(">q", raw, MAX_TIMESTAMP_OFFSET, ts)
        struct.pack_into(">I", raw, CRC_OFFSET, crc32c(bytes(raw[ATTRIBUTES_OFFSET:])))
        return
    # LegacyRecord.setTimestampAndUpdateCrc (v1 only: v0 has no timestamp)
    base = LOG_OVERHEAD
    attrs = raw[base + MESSAGE_ATTRIBUTES_OFFSET]
    attrs = (attrs | TIMESTAMP_TYPE_MASK) if lat else (attrs & ~TIMESTAMP_TYPE_MASK & 0xFF)
    raw[base + MESSAGE_ATTRIBUTES_OFFSET] = attrs
    struct.pack_into(">q", raw, base + MESSAGE_TIMESTAMP_OFFSET, ts)
    crc = crc32(bytes(raw[base + MESSAGE_MAGIC_OFFSET :]))
    struct.pack_into(">I", raw, base + MESSAGE_CRC_OFFSET, crc)


# --------------------------------------------------------------------------- the rebuilds


def _builder(
    ctx: _Context, first: Batch | None, magic: int, codec: int, base_offset: int
) -> BatchBuilder:
    """``MemoryRecords.builder(...)`` with the first batch's producer fields."""
    v2 = first if isinstance(first, RecordBatchV2) else None
    try:
        return BatchBuilder(
            magic=magic,
            compression=codec,
            timestamp_type=ctx.topic.timestamp_type,
            base_offset=base_offset,
            log_append_time=ctx.now,
            producer_id=v2.producer_id if v2 else -1,
            producer_epoch=v2.producer_epoch if v2 else -1,
            base_sequence=v2.base_sequence if v2 else -1,
            is_transactional=v2.is_transactional if v2 else False,
            partition_leader_epoch=ctx.leader_epoch,
        )
    except EncodeError as e:
        raise IllegalArgumentError(str(e)) from None


def _append(builder: BatchBuilder, offset: int, r: ValidatedRecord) -> None:
    try:
        builder.append(r.timestamp, r.key, r.value, r.headers, offset=offset)
    except EncodeError as e:
        raise IllegalArgumentError(str(e)) from None


def _build(builder: BatchBuilder) -> bytes:
    try:
        return builder.build()
    except EncodeError as e:
        raise IllegalArgumentError(str(e)) from None
