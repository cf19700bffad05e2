"""Encoders for magic 0, 1 and 2, mirroring Kafka's ``MemoryRecordsBuilder``.

What :meth:`BatchBuilder.build` emits, and the one writer that writes each part:

=========  ==========================================  =========================================
magic      bytes                                       writer
=========  ==========================================  =========================================
2          61-byte header + records (or one            ``wire.batch.write_batch_v2``,
           compressed payload)                         ``wire.record.write_record_v2``
0/1 plain  ``offset | size | message`` per record      ``wire.legacy.write_legacy_message``
0/1 codec  one wrapper entry whose value is the        ``wire.legacy.write_legacy_wrapper``
           compressed inner entries
control    key ``version | type``, value               ``wire.control.write_control_key``,
           ``version | coordinatorEpoch``              ``write_end_txn_marker_value``
=========  ==========================================  =========================================

This module only decides the field values (offsets, deltas, timestamps, attributes) and the
producer-state checks, as ``MemoryRecordsBuilder`` does; it writes no bytes itself.

Uncompressed output is byte-identical to Kafka's builder for the same inputs (tests check it
against the spec's reference bytes and round-trip through the Java oracle). Compressed output
uses the same framing as Kafka (gzip member, xerial snappy, Kafka lz4 frame incl. the magic-0
header-checksum quirk, zstd frame); the compressed bytes themselves may differ from Java's
compressor output, which Kafka does not pin either.

>>> b = BatchBuilder(magic=2, base_offset=100)
>>> b.append(1700000000000, b"k0", b"v0", [("h1", b"x")])
>>> data = b.build()
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from conformance import codecs
from conformance.errors import EncodeError
from conformance.primitives.java import wrap32, wrap64
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.control import (
    ABORT,
    COMMIT,
    write_control_key,
    write_end_txn_marker_value,
)
from conformance.wire.layout import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
)
from conformance.wire.legacy import write_legacy_message, write_legacy_wrapper
from conformance.wire.record import HeaderInput, write_record_v2


def _codec_id(compression: str | int) -> int:
    """A codec of ``codecs.CODECS`` by name or id (``CompressionType.forName``/``forId``)."""
    found = codecs.CODEC_IDS.get(compression) if isinstance(compression, str) else compression
    if found not in codecs.CODECS:
        raise EncodeError(f"unknown compression {compression!r}")
    return found


@dataclass
class _Pending:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[HeaderInput, ...]


@dataclass
class BatchBuilder:
    """One batch (v2) or message set (v0/v1), as ``MemoryRecords.builder(...)`` makes it."""

    magic: int = 2
    compression: str | int = "none"
    timestamp_type: str = TimestampType.CREATE_TIME
    base_offset: int = 0
    log_append_time: int = NO_TIMESTAMP
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    delete_horizon_ms: int = NO_TIMESTAMP
    _records: list[_Pending] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        codec = _codec_id(self.compression)
        if self.magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1, MAGIC_VALUE_V2):
            raise EncodeError(f"Unsupported magic {self.magic}")
        if self.magic > MAGIC_VALUE_V0 and self.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise EncodeError("TimestampType must be set for magic >= 0")
        if self.magic < MAGIC_VALUE_V2:
            if self.is_transactional:
                raise EncodeError(f"Transactional records are not supported for magic {self.magic}")
            if self.is_control:
                raise EncodeError(f"Control records are not supported for magic {self.magic}")
            if not codecs.CODECS[codec].legacy_magics:  # zstd: KIP-110
                raise EncodeError(f"ZStandard compression is not supported for magic {self.magic}")
            if self.delete_horizon_ms != NO_TIMESTAMP:
                raise EncodeError(
                    f"Delete horizon timestamp is not supported for magic {self.magic}"
                )

    def append(
        self,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: Iterable[HeaderInput] = (),
        *,
        offset: int | None = None,
    ) -> None:
        """``appendWithOffset``; ``offset`` defaults to the next sequential offset."""
        self._append(timestamp, key, value, headers, offset, control=False)

    def _append(
        self,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: Iterable[HeaderInput],
        offset: int | None,
        control: bool,
    ) -> None:
        if control != self.is_control:
            raise EncodeError("Control records can only be appended to control batches")
        if offset is None:
            offset = self._records[-1].offset + 1 if self._records else self.base_offset
        if self._records and offset <= self._records[-1].offset:
            raise EncodeError(
                f"Illegal offset {offset} following previous offset {self._records[-1].offset} "
                "(Offsets must increase monotonically)."
            )
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise EncodeError(f"Invalid negative timestamp {timestamp}")
        hs = tuple(headers)
        if self.magic < MAGIC_VALUE_V2 and hs:
            raise EncodeError(f"Magic v{self.magic} does not support record headers")
        if offset - self.base_offset > 0x7FFFFFFF:
            raise EncodeError(
                "Maximum offset delta exceeded, "
                f"base offset: {self.base_offset}, last offset: {offset}"
            )
        self._records.append(_Pending(offset, timestamp, key, value, hs))

    def append_end_txn_marker(self, commit: bool, coordinator_epoch: int, timestamp: int) -> None:
        """A COMMIT/ABORT control record (``EndTransactionMarker``); needs ``is_control``."""
        if self.producer_id == NO_PRODUCER_ID:
            raise EncodeError("End transaction marker requires a valid producerId")
        if not self.is_transactional:
            raise EncodeError(
                "End transaction marker depends on batch transactional flag being enabled"
            )
        key = write_control_key(COMMIT if commit else ABORT)
        value = write_end_txn_marker_value(coordinator_epoch)
        self._append(timestamp, key, value, (), None, control=True)

    def build(self) -> bytes:
        """``close()``: producer-state checks, then the bytes (empty when no record was added)."""
        if self.is_transactional and self.producer_id == NO_PRODUCER_ID:
            raise EncodeError("Cannot write transactional messages without a valid producer ID")
        if self.producer_id != NO_PRODUCER_ID:
            if self.producer_epoch == NO_PRODUCER_EPOCH:
                raise EncodeError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control:
                raise EncodeError("Invalid negative sequence number used")
            if self.magic < MAGIC_VALUE_V2:
                raise EncodeError(f"Idempotent messages are not supported for magic {self.magic}")
        if not self._records:
            return b""  # MemoryRecords.EMPTY
        if self.magic == MAGIC_VALUE_V2:
            return self._build_v2()
        return self._build_legacy()

    # ---------------------------------------------------------------------------------------
    def _build_v2(self) -> bytes:
        codec = _codec_id(self.compression)
        records = self._records
        has_dh = self.delete_horizon_ms >= 0
        if has_dh:
            base_ts = self.delete_horizon_ms
        elif records:
            base_ts = records[0].timestamp
        else:
            base_ts = NO_TIMESTAMP
        max_ts = NO_TIMESTAMP
        for r in records:
            if r.timestamp > max_ts:
                max_ts = r.timestamp
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            max_ts = self.log_append_time
        if base_ts < 0 and base_ts != NO_TIMESTAMP:
            raise EncodeError(f"Invalid message timestamp {base_ts}")
        attrs = v2_attributes(
            codec, self.timestamp_type, self.is_transactional, self.is_control, has_dh
        )
        return write_batch_v2(
            (
                write_record_v2(
                    r.offset - self.base_offset,
                    wrap64(r.timestamp - base_ts),  # Java long arithmetic
                    r.key,
                    r.value,
                    r.headers,
                )
                for r in records
            ),
            base_offset=self.base_offset,
            partition_leader_epoch=self.partition_leader_epoch,
            attributes=attrs,
            last_offset_delta=records[-1].offset - self.base_offset,
            base_timestamp=base_ts,
            max_timestamp=max_ts,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
        )

    def _build_legacy(self) -> bytes:
        codec = _codec_id(self.compression)
        magic = self.magic
        log_append = self.timestamp_type == TimestampType.LOG_APPEND_TIME
        lat = log_append and magic > MAGIC_VALUE_V0
        ts_bit = TIMESTAMP_TYPE_MASK if lat else 0
        entries = []
        for r in self._records:
            ts = self.log_append_time if log_append else r.timestamp
            if ts < 0 and ts != NO_TIMESTAMP:  # LegacyRecord.write, for both magics
                raise EncodeError(f"Invalid message timestamp {ts}")
            if codec != codecs.NONE and magic > MAGIC_VALUE_V0:
                inner_offset = r.offset - self.base_offset
            else:
                inner_offset = r.offset
            entries.append(write_legacy_message(magic, inner_offset, ts, r.key, r.value, ts_bit))
        if codec == codecs.NONE or not entries:
            return b"".join(entries)
        if lat:
            wrapper_ts = self.log_append_time
        else:
            wrapper_ts = max((r.timestamp for r in self._records), default=NO_TIMESTAMP)
            wrapper_ts = max(wrapper_ts, NO_TIMESTAMP)
        return write_legacy_wrapper(
            magic, self._records[-1].offset, wrapper_ts, entries, codec, ts_bit
        )


def write_batch(
    records: Iterable[
        tuple[int, bytes | None, bytes | None]
        | tuple[int, bytes | None, bytes | None, Sequence[HeaderInput]]
    ],
    **options: object,
) -> bytes:
    """Convenience:
    ``write_batch([(ts, key, value[, headers]), ...], magic=2, compression="lz4")``."""
    builder = BatchBuilder(**options)  # type: ignore[arg-type]
    for rec in records:
        ts, key, value = rec[0], rec[1], rec[2]
        headers = rec[3] if len(rec) > 3 else ()  # type: ignore[misc]
        builder.append(ts, key, value, headers)
    return builder.build()


def empty_batch(
    *,
    base_offset: int,
    last_offset: int,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    timestamp_type: str = TimestampType.CREATE_TIME,
    timestamp: int = NO_TIMESTAMP,
    is_transactional: bool = False,
    is_control: bool = False,
) -> bytes:
    """``DefaultRecordBatch.writeEmptyHeader``: a v2 batch with no records, as the log cleaner
    keeps one to preserve producer state (baseTimestamp -1, maxTimestamp = ``timestamp``)."""
    return write_batch_v2(
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        attributes=v2_attributes(codecs.NONE, timestamp_type, is_transactional, is_control, False),
        last_offset_delta=wrap32(last_offset - base_offset),  # Java's (int) cast
        base_timestamp=NO_TIMESTAMP,
        max_timestamp=timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )


def end_txn_marker_batch(
    *,
    offset: int,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp: int,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """``MemoryRecords.withEndTransactionMarker``: a transactional control batch of one marker."""
    b = BatchBuilder(
        base_offset=offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
    b.append_end_txn_marker(commit, coordinator_epoch, timestamp)
    return b.build()


__all__ = [
    "BatchBuilder",
    "HeaderInput",
    "write_batch",
    "empty_batch",
    "end_txn_marker_batch",
]
