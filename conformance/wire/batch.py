"""Magic-2 record batch (``DefaultRecordBatch``), docs/format.md §3.1-3.3 and §3.5.

==  ====================  ======  ===============================================
@   field                 type    notes
==  ====================  ======  ===============================================
0   baseOffset            int64
8   batchLength           int32   bytes after this field; batch = 12 + batchLength
12  partitionLeaderEpoch  int32   outside the CRC
16  magic                 int8    2
17  crc                   uint32  CRC-32C over [21, end)
21  attributes            int16   only the low byte is read (codec, ts type, txn,
                                  control, delete horizon)
23  lastOffsetDelta       int32
27  baseTimestamp         int64   delete horizon when attribute bit 6 is set
35  maxTimestamp          int64
43  producerId            int64
51  producerEpoch         int16
53  baseSequence          int32
57  recordsCount          int32
61  records               ...     or one compressed payload
==  ====================  ======  ===============================================

One writer, at the end (``# --- writer ---``): :func:`write_batch_v2` (the header packing of
``DefaultRecordBatch.writeHeader``), :func:`seal_v2`, :func:`v2_attributes`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from conformance import codecs
from conformance.errors import CorruptRecordError, InvalidRecordError
from conformance.primitives.crc import crc32c
from conformance.primitives.java import wrap32, wrap64
from conformance.wire._record_fast import read_records_fast
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    V2_HEADER,
    TimestampType,
)
from conformance.wire.record import (
    Anomalies,
    Record,
    RecordList,
    RecordSink,
    read_region,
    read_stream_region,
)

#: Process-wide, deliberately (docs/architecture.md, "Conventions: State"): let
#: :meth:`RecordBatchV2.read_records` try the fast path (``wire/_record_fast.py``) before the
#: reference reader. Never changed by the kit; ``False`` forces the reference everywhere, which
#: is how tests hold the fast path to the reference (tests/test_fast_path.py)
FAST_PATH = True


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence`` in Java int arithmetic."""
    if sequence > wrap32(0x7FFFFFFF - increment):
        return wrap32(increment - wrap32(0x7FFFFFFF - sequence) - 1)
    return wrap32(sequence + increment)


class RecordBatchV2:
    """A view of one magic>=2 batch; ``raw`` holds exactly its ``12 + batchLength`` bytes."""

    __slots__ = (
        "raw",
        "position",
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes_raw",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "records_count",
    )

    def __init__(self, raw: bytes, position: int = 0) -> None:
        self.raw = raw
        self.position = position
        if len(raw) >= RECORD_BATCH_OVERHEAD:
            (
                self.base_offset,
                self.batch_length,
                self.partition_leader_epoch,
                self.magic,
                self.crc,
                self.attributes_raw,
                self.last_offset_delta,
                self.base_timestamp,
                self.max_timestamp,
                self.producer_id,
                self.producer_epoch,
                self.base_sequence,
                self.records_count,
            ) = V2_HEADER.unpack_from(raw, 0)
        else:  # only reachable for batches that fail ensure_valid()
            self.base_offset, self.batch_length = struct.unpack_from(">qi", raw, 0)
            self.magic = struct.unpack_from(">b", raw, 16)[0]

    # --- derived values (docs/format.md §3.3) ------------------------------------------------
    @property
    def size_in_bytes(self) -> int:
        return len(self.raw)

    @property
    def attributes(self) -> int:
        """The low byte of the attributes field (what Kafka's readers look at)."""
        return self.attributes_raw & 0xFF

    @property
    def compression_id(self) -> int:
        return self.attributes_raw & COMPRESSION_CODEC_MASK

    @property
    def timestamp_type(self) -> str:
        return (
            TimestampType.LOG_APPEND_TIME
            if self.attributes_raw & TIMESTAMP_TYPE_MASK
            else TimestampType.CREATE_TIME
        )

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes_raw & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes_raw & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes_raw & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset(self) -> int:
        return wrap64(self.base_offset + self.last_offset_delta)

    @property
    def next_offset(self) -> int:
        return wrap64(self.last_offset + 1)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == -1:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    def computed_crc(self) -> int:
        return crc32c(self.raw, ATTRIBUTES_OFFSET)

    def is_valid(self) -> bool:
        return len(self.raw) >= RECORD_BATCH_OVERHEAD and self.crc == self.computed_crc()

    def ensure_valid(self) -> None:
        """``DefaultRecordBatch.ensureValid``: size, then CRC-32C."""
        if len(self.raw) < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {len(self.raw)} is smaller than the minimum "
                f"allowed overhead {RECORD_BATCH_OVERHEAD})"
            )
        computed = self.computed_crc()
        if self.crc != computed:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {computed})"
            )

    # --- iteration ---------------------------------------------------------------------------
    def read_records(
        self,
        out: RecordSink,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
        anomalies: Anomalies | None = None,
    ) -> codecs.Decompressed | None:
        """``streamingIterator()``: append records to ``out`` until done or an error is raised.

        Records are appended as Kafka would hand them out, so on error ``out`` holds exactly
        the records Kafka yielded before raising.

        The one API over two readers: a kafka-profile read (``anomalies`` None) of a region
        Java would read without error or short read first tries the fast path
        (:func:`~conformance.wire._record_fast.read_records_fast`); when it declines, or
        :data:`FAST_PATH` is off, the reference reader of ``wire/record.py`` decides.
        """
        codec = codecs.codec(self.attributes_raw & COMPRESSION_CODEC_MASK).id
        log_append_time = self.max_timestamp if self.attributes_raw & TIMESTAMP_TYPE_MASK else None
        base_offset = self.base_offset
        base_timestamp = self.base_timestamp
        if codec == codecs.NONE:
            count = self._checked_count()
            if count == 0:
                return None
            if (
                anomalies is None
                and FAST_PATH
                and read_records_fast(
                    self.raw,
                    count,
                    base_offset,
                    base_timestamp,
                    log_append_time,
                    out,
                    RECORDS_OFFSET,
                )
            ):
                return None
            buf = self.raw[RECORDS_OFFSET:]
            read_region(buf, count, base_offset, base_timestamp, log_append_time, out, anomalies)
            return None
        payload = self.raw[RECORDS_OFFSET:]
        if anomalies is None and FAST_PATH:
            # the codec's whole-payload fast path, when it is sure (else its Java model below)
            whole = codecs.read_whole(codec, payload, decompressed_limit)
            if whole is not None:
                count = self._checked_count()
                if count == 0 or read_records_fast(
                    whole, count, base_offset, base_timestamp, log_append_time, out
                ):
                    return None
        stream = codecs.read_stream(codec, payload, self.magic, decompressed_limit)
        count = self._checked_count()
        if count == 0:
            return stream
        if anomalies is None and FAST_PATH and stream.error is None and all(stream.pieces):
            # no error and no short read anywhere: Java reads the concatenated bytes
            data: bytes = stream.pieces[0] if len(stream.pieces) == 1 else stream.data  # type: ignore[assignment]
            if read_records_fast(data, count, base_offset, base_timestamp, log_append_time, out):
                return stream
        read_stream_region(
            stream, count, base_offset, base_timestamp, log_append_time, out, anomalies
        )
        return stream

    def read_records_eagerly(
        self, out: RecordSink, decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT
    ) -> None:
        """``iterator()`` (what DumpLogSegments and ``for (Record r : batch)`` use).

        Unlike ``streamingIterator()``: a batch with recordsCount 0 is never opened, and a
        compressed batch is decompressed and parsed completely before the first record is
        handed out (so an error anywhere in it yields no record at all).
        """
        if self.records_count == 0:
            return
        if self.attributes_raw & COMPRESSION_CODEC_MASK == 0:
            self.read_records(out, decompressed_limit)
            return
        if type(out) is list:
            whole: list[Record] = []
            self.read_records(whole, decompressed_limit)
            out.extend(whole)
            return
        # decide the whole batch first (records counted, not kept), then hand them out
        self.read_records(RecordList(keep=0), decompressed_limit)
        self.read_records(out, decompressed_limit)

    def _checked_count(self) -> int:
        if self.records_count < 0:
            raise InvalidRecordError(
                f"Found invalid record count {self.records_count} in magic v{self.magic} batch"
            )
        return self.records_count

    def __iter__(self) -> Iterator[Record]:
        out: list[Record] = []
        self.read_records(out)
        return iter(out)

    def __repr__(self) -> str:
        return (
            f"RecordBatchV2(baseOffset={self.base_offset}, lastOffsetDelta="
            f"{getattr(self, 'last_offset_delta', None)}, count="
            f"{getattr(self, 'records_count', None)}, size={len(self.raw)})"
        )


# --- writer ---------------------------------------------------------------------------------
def v2_attributes(
    codec: int,
    timestamp_type: str,
    is_transactional: bool,
    is_control: bool,
    has_delete_horizon: bool,
) -> int:
    """``DefaultRecordBatch.computeAttributes``."""
    attrs = codec & COMPRESSION_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attrs |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attrs |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attrs |= CONTROL_FLAG_MASK
    if has_delete_horizon:
        attrs |= DELETE_HORIZON_FLAG_MASK
    return attrs


def seal_v2(batch: bytearray | bytes, *, length: bool = True, crc: bool = True) -> bytes:
    """Recompute batchLength (= size - 12) and/or the CRC-32C over [21, end) of a v2 batch."""
    out = bytearray(batch)
    if length:
        struct.pack_into(">i", out, LENGTH_OFFSET, len(out) - LOG_OVERHEAD)
    if crc:
        struct.pack_into(">I", out, CRC_OFFSET, crc32c(bytes(out[ATTRIBUTES_OFFSET:])))
    return bytes(out)


def _signed(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def write_batch_v2(
    records: Iterable[bytes] = (),
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    magic: int = MAGIC_VALUE_V2,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    base_timestamp: int = NO_TIMESTAMP,
    max_timestamp: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    count: int | None = None,
    payload: bytes | None = None,
    crc: int | None = None,
    batch_length: int | None = None,
) -> bytes:
    """One v2 batch: the 61-byte header, then the records (docs/format.md §3.1).

    The one batch writer (BatchBuilder, ``empty_batch``, the crafted corpus). ``records`` (each
    from :func:`~conformance.wire.record.write_record_v2`) are concatenated and compressed as
    Kafka's producer does when ``attributes`` names a codec (``codecs.CODECS``). Defaults:
    ``count`` = the number of records, ``last_offset_delta`` = count - 1 (0 when empty),
    ``max_timestamp`` = ``base_timestamp``. Fault knobs: ``payload`` = the bytes after the
    header verbatim (no compression); ``crc`` = the stored CRC (default: the true CRC-32C);
    ``batch_length`` = the stored length (default: the true one); ``magic`` and ``attributes``
    are stored as raw
    int8 / int16 (any bits).
    """
    recs = list(records)
    if count is None:
        count = len(recs)
    if last_offset_delta is None:
        last_offset_delta = max(count - 1, 0)
    if max_timestamp is None:
        max_timestamp = base_timestamp
    if payload is None:
        payload = b"".join(recs)
        codec = attributes & COMPRESSION_CODEC_MASK
        if codec in codecs.CODECS:
            payload = codecs.write_stream(codec, payload, MAGIC_VALUE_V2)
    header = V2_HEADER.pack(
        base_offset,
        RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload)
        if batch_length is None
        else batch_length,
        partition_leader_epoch,
        _signed(magic, 8),
        0 if crc is None else crc & 0xFFFFFFFF,
        _signed(attributes, 16),
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    return seal_v2(header + payload, length=False, crc=crc is None)
