"""What the hook (``library.py``) fills and ``adapter.py`` writes as canonical JSON: the
batches a Kafka client library decoded, and the error that ended decoding. Also the one read of
the input an adapter may do itself (``batch_position``). You should not need to edit it."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


@dataclass
class Header:
    key: str
    value: bytes | None


@dataclass
class Control:
    """The parsed key (and, for ABORT/COMMIT, value) of a record in a control batch."""

    type_id: int
    type: str  # ControlRecordType name: "ABORT", "COMMIT", ...
    coordinator_epoch: int | None = None  # only for ABORT / COMMIT markers


@dataclass
class Record:
    offset: int  # absolute offset
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)  # always [] for magic 0 and 1
    control: Control | None = None  # only in control batches


@dataclass
class Batch:
    """One batch (magic 2) or one top-level message (magic 0/1, a compressed wrapper included)."""

    position: int  # byte position of the batch in the input (see batch_position)
    size_in_bytes: int  # 12 + the batch's length field
    magic: int
    crc: int  # the stored checksum, unsigned 32-bit
    attributes: int  # as stored (magic 2: the signed int16; magic 0/1: the signed int8)
    compression: str  # none, gzip, snappy, lz4, zstd, or unknown-5 / unknown-6 / unknown-7
    timestamp_type: str  # CreateTime, LogAppendTime (magic 0: NoTimestampType)
    last_offset: int
    max_timestamp: int  # -1 for magic 0
    # magic 2 only (ignored for magic 0 and 1):
    base_offset: int = 0
    last_offset_delta: int = 0
    partition_leader_epoch: int = 0
    base_timestamp: int = 0
    delete_horizon_ms: int | None = None
    is_transactional: bool = False
    is_control: bool = False
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    last_sequence: int = -1
    records_count: int = 0
    # every magic:
    records: list[Record] = field(default_factory=list)


@dataclass
class Error:
    """Why decoding stopped: the Kafka exception the library's error corresponds to."""

    kafka_exception: str  # e.g. "org.apache.kafka.common.errors.CorruptRecordException"
    message: str | None  # the library's own error text
    batch_index: int  # index of the batch being split or decoded when the error happened
    position: int  # byte position where that batch starts (see batch_position)


@dataclass
class Decoded:
    """What the hook returns: the batches the library decoded, and the error that ended it."""

    batches: list[Batch] = field(default_factory=list)
    error: Error | None = None


def batch_position(data: bytes, index: int) -> int:
    """The byte position of entry ``index`` in ``data``, found by walking the entries' length
    fields from 0 (size = 12 + the big-endian int32 at position + 8). The walk stops at the end
    of the data (or at an entry whose length field is cut short or negative), so the result is
    at most ``len(data)``.

    This is the one read of the input an adapter may do itself: ``position`` and
    ``batch_index`` are counts, not decoding."""
    position = 0
    for _ in range(index):
        if position + 12 > len(data):
            break
        (length,) = struct.unpack_from(">i", data, position + 8)
        if length < 0:
            break
        position += 12 + length
    return min(position, len(data))
