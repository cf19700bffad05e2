"""Profile ``strict``: anomalies Kafka silently accepts, each with a stable code.

Findings never change the outcome; they say "Kafka takes this, but no Kafka writer would have
written it". Codes and meanings (``FINDING_CODES``) are part of the public contract.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance import codecs
from conformance.stream.result import Finding
from conformance.stream.splitter import Batch
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAX_TIMESTAMP_OFFSET,
    MESSAGE_ATTRIBUTES_OFFSET,
    MESSAGE_TIMESTAMP_OFFSET,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
    record_overhead,
)
from conformance.wire.record import Anomalies, Record, RecordSink

FINDING_CODES: dict[str, str] = {
    "varint-non-minimal": "a varint/varlong uses more bytes than the minimal encoding",
    "varint-overflow-bits": "a varint's last byte carries bits Kafka's reader drops",
    "null-length-not-minus-one": "a negative length other than -1 read as null",
    "attributes-high-byte": "v2 attributes: the high byte (ignored by readers) is not zero",
    "attributes-unused-bits": "attribute bits Kafka does not define are set",
    "record-attributes-set": "a v2 record's attributes byte (unused) is not zero",
    "last-offset-delta-mismatch": "lastOffsetDelta differs from the last record's offsetDelta",
    "max-timestamp-mismatch": "CreateTime maxTimestamp differs from the largest record timestamp",
    "base-timestamp-mismatch": "baseTimestamp differs from the first record's timestamp",
    "offset-delta-non-monotonic": "record offset deltas do not strictly increase",
    "offset-delta-negative": "a record offset delta is negative",
    "empty-batch-with-payload": "a v2 batch with recordsCount 0 carries record bytes",
    "control-batch-record-count": "a control batch does not hold exactly one record",
    "compressed-trailing-bytes": "bytes after the end of the compressed stream are ignored",
    "lz4-content-checksum-mismatch": "the lz4 content checksum (never verified by Kafka) is wrong",
    "snappy-xerial-header-version": "xerial header version/compat are not 1/1",
    "legacy-trailing-bytes": "a v0/v1 message has bytes after its value (CRC-covered, ignored)",
    "legacy-wrapper-key": "a compressed v0/v1 wrapper has a non-null key",
    "legacy-inner-magic-mismatch": "an inner message's magic differs from its wrapper's",
    "legacy-inner-offsets": "inner offsets of a compressed v0/v1 wrapper do not strictly increase",
    "legacy-wrapper-timestamp": "a CreateTime v1 wrapper's timestamp is not the max inner one",
}

_MAX_ID = 4


def check_batch(
    header: Batch,
    out: RecordSink,
    index: int,
    decompressed_limit: int,
    findings: list[Finding],
) -> None:
    """Decode ``header``'s records into ``out`` (as the kafka profile does) and add findings.

    Findings found before an error are kept; the error propagates unchanged.
    """

    def add(code: str, message: str, position: int) -> None:
        assert code in FINDING_CODES, code
        findings.append(Finding(code, message, index, position))

    if isinstance(header, RecordBatchV2):
        anomalies: Anomalies = []
        stream = None
        try:
            stream = header.read_records(out, decompressed_limit, anomalies)
        finally:
            base = header.position
            compressed = header.compression_id != 0
            for p, code, message in anomalies:
                if compressed:
                    add(code, f"{message} (decompressed byte {p})", base)
                else:
                    add(code, message, base + RECORDS_OFFSET + p)
        _v2_checks(header, out, stream, add)
    else:
        stream = header.read_records(out, decompressed_limit)
        _legacy_checks(header, out, stream, add)
    if stream is not None:
        if stream.ignored_trailing:
            add(
                "compressed-trailing-bytes",
                f"{stream.ignored_trailing} bytes after the end of the "
                f"{codecs.codec_name(header.compression_id)} stream are ignored",
                header.position + header.size_in_bytes - stream.ignored_trailing,
            )
        for code, message in stream.notes:
            add(code, message, header.position)


def _v2_checks(header: RecordBatchV2, records: Sequence[Record], stream, add) -> None:  # type: ignore[no-untyped-def]
    pos = header.position
    if header.attributes_raw & 0xFF00:
        add(
            "attributes-high-byte",
            f"attributes high byte is {header.attributes_raw >> 8 & 0xFF:#04x}",
            pos + ATTRIBUTES_OFFSET,
        )
    if header.attributes_raw & 0x80:
        add("attributes-unused-bits", "attribute bit 7 is set", pos + ATTRIBUTES_OFFSET + 1)
    if (
        header.records_count == 0
        and header.compression_id == 0
        and header.size_in_bytes > RECORD_BATCH_OVERHEAD
    ):
        add(
            "empty-batch-with-payload",
            f"{header.size_in_bytes - RECORD_BATCH_OVERHEAD} record bytes in an empty batch",
            pos + RECORDS_OFFSET,
        )
    if header.is_control and len(records) != 1:
        add("control-batch-record-count", f"control batch holds {len(records)} records", pos)
    if not records:
        return
    previous = None
    for r in records:
        if r.attributes:
            add(
                "record-attributes-set",
                f"record at offset {r.offset} has attributes {r.attributes}",
                pos,
            )
        if r.offset_delta < 0:
            add("offset-delta-negative", f"record offsetDelta {r.offset_delta}", pos)
        if previous is not None and r.offset_delta <= previous:
            add(
                "offset-delta-non-monotonic",
                f"offsetDelta {r.offset_delta} follows {previous}",
                pos,
            )
        previous = r.offset_delta
    if len(records) == header.records_count:
        last = records[-1].offset_delta
        if last != header.last_offset_delta:
            add(
                "last-offset-delta-mismatch",
                f"lastOffsetDelta {header.last_offset_delta}, last record offsetDelta {last}",
                pos + LAST_OFFSET_DELTA_OFFSET,
            )
        top = _other_max_timestamp(header, records)
        if top is not None:
            add(
                "max-timestamp-mismatch",
                f"maxTimestamp {header.max_timestamp}, records' max {top}",
                pos + MAX_TIMESTAMP_OFFSET,
            )
        if not header.has_delete_horizon and records[0].timestamp_delta != 0:
            add(
                "base-timestamp-mismatch",
                f"first record has timestampDelta {records[0].timestamp_delta}",
                pos + BASE_TIMESTAMP_OFFSET,
            )


def _legacy_checks(header, records: Sequence[Record], stream, add) -> None:  # type: ignore[no-untyped-def]
    pos = header.position
    message = header.message
    if message.attributes & 0xF0 or (
        message.magic == MAGIC_VALUE_V0 and message.attributes & TIMESTAMP_TYPE_MASK
    ):
        add(
            "attributes-unused-bits",
            f"message attributes {message.attributes & 0xFF:#04x}",
            pos + LOG_OVERHEAD + MESSAGE_ATTRIBUTES_OFFSET,
        )
    if stream is None:
        _message_trailing(message, pos, add)
        return
    if message.key is not None:
        add("legacy-wrapper-key", "compressed wrapper has a non-null key", pos)
    magics = {r.magic for r in records}
    if magics - {message.magic}:
        add(
            "legacy-inner-magic-mismatch",
            f"inner magics {sorted(magics)} under wrapper magic {message.magic}",
            pos,
        )
    offsets = [r.offset for r in records]
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        add("legacy-inner-offsets", f"inner offsets {offsets[:8]} do not increase", pos)
    if message.magic == MAGIC_VALUE_V1 and records:
        top = _other_max_timestamp(header, records)
        if top is not None:
            add(
                "legacy-wrapper-timestamp",
                f"wrapper timestamp {header.max_timestamp}, inner max {top}",
                pos + LOG_OVERHEAD + MESSAGE_TIMESTAMP_OFFSET,
            )


def _other_max_timestamp(header: Batch, records: Sequence[Record]) -> int | None:
    """The maximum a CreateTime batch should state (a v2 batch's maxTimestamp, a v1 wrapper's
    timestamp) where it states another one; None where they agree or the batch is
    LogAppendTime (``records``: not empty). That maximum is the records' largest timestamp but
    never below ``NO_TIMESTAMP``: ``MemoryRecordsBuilder`` and ``LogValidator`` start it at -1
    and only raise it, so records all stamped -5 make a batch whose maximum is -1."""
    if header.timestamp_type != TimestampType.CREATE_TIME:
        return None
    top = max(NO_TIMESTAMP, *(r.timestamp for r in records))
    return top if top != header.max_timestamp else None


def _message_trailing(message, pos: int, add) -> None:  # type: ignore[no-untyped-def]
    try:
        key = message.key
        value = message.value
    except Exception:  # noqa: BLE001 - already reported as the error
        return
    used = record_overhead(message.magic) + (len(key) if key else 0) + (len(value) if value else 0)
    if message.size > used:
        add(
            "legacy-trailing-bytes",
            f"{message.size - used} bytes after the value",
            pos + LOG_OVERHEAD + used,
        )
