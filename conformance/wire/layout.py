"""Every layout constant of the record formats, derived from each other as Kafka derives them.

Mirrors the constants of ``Records``, ``DefaultRecordBatch``, ``LegacyRecord`` and
``RecordBatch`` (``org.apache.kafka.common.record``). Offsets are relative to the start of an
entry (a v2 batch, or a v0/v1 log entry ``offset | size | message``) unless named ``MESSAGE_``:
those are relative to the start of a legacy *message* (after the 12-byte log overhead).

Every entry, every magic (docs/format.md §1.1)::

    @0  offset / baseOffset  int64
    @8  size / batchLength   int32   bytes after this field
    @12 ...                          (v2: partitionLeaderEpoch; v0/v1: the message's crc)
    @16 magic                int8    the same position in every magic

A v2 batch header (§3.1) and a v0/v1 message (§2.1) are laid out in the tables below, field by
field; each offset is the previous one plus its length.
"""

from __future__ import annotations

import enum
import struct

# -- Records: the entry prefix shared by every magic (§1.1) -----------------------------------
OFFSET_OFFSET = 0
OFFSET_LENGTH = 8
SIZE_OFFSET = OFFSET_OFFSET + OFFSET_LENGTH
SIZE_LENGTH = 4
#: offset + size: the bytes before what ``size`` counts
LOG_OVERHEAD = SIZE_OFFSET + SIZE_LENGTH
MAGIC_OFFSET = 16
MAGIC_LENGTH = 1
#: what a splitter reads before it knows the magic
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + MAGIC_LENGTH

MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
MAGIC_VALUE_V2 = 2
CURRENT_MAGIC_VALUE = MAGIC_VALUE_V2

# -- DefaultRecordBatch: the v2 batch header (§3.1) ------------------------------------------
BASE_OFFSET_OFFSET = OFFSET_OFFSET
LENGTH_OFFSET = SIZE_OFFSET
PARTITION_LEADER_EPOCH_OFFSET = LOG_OVERHEAD
PARTITION_LEADER_EPOCH_LENGTH = 4
assert PARTITION_LEADER_EPOCH_OFFSET + PARTITION_LEADER_EPOCH_LENGTH == MAGIC_OFFSET
CRC_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH
CRC_LENGTH = 4
ATTRIBUTES_OFFSET = CRC_OFFSET + CRC_LENGTH
ATTRIBUTE_LENGTH = 2
LAST_OFFSET_DELTA_OFFSET = ATTRIBUTES_OFFSET + ATTRIBUTE_LENGTH
LAST_OFFSET_DELTA_LENGTH = 4
BASE_TIMESTAMP_OFFSET = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH
BASE_TIMESTAMP_LENGTH = 8
MAX_TIMESTAMP_OFFSET = BASE_TIMESTAMP_OFFSET + BASE_TIMESTAMP_LENGTH
MAX_TIMESTAMP_LENGTH = 8
PRODUCER_ID_OFFSET = MAX_TIMESTAMP_OFFSET + MAX_TIMESTAMP_LENGTH
PRODUCER_ID_LENGTH = 8
PRODUCER_EPOCH_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH
PRODUCER_EPOCH_LENGTH = 2
BASE_SEQUENCE_OFFSET = PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH
BASE_SEQUENCE_LENGTH = 4
RECORDS_COUNT_OFFSET = BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH
RECORDS_COUNT_LENGTH = 4
RECORDS_OFFSET = RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH
#: the whole v2 header: the smallest valid batch (61 bytes)
RECORD_BATCH_OVERHEAD = RECORDS_OFFSET
#: the v2 header as one struct, field by field in the order above
V2_HEADER = struct.Struct(">qiibIhiqqqhii")
assert V2_HEADER.size == RECORD_BATCH_OVERHEAD

# -- attributes (§2.2, §3.2) ------------------------------------------------------------------
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

# -- LegacyRecord: one v0/v1 message, relative to the message start (§2.1) --------------------
MESSAGE_CRC_OFFSET = 0
MESSAGE_CRC_LENGTH = 4
MESSAGE_MAGIC_OFFSET = MESSAGE_CRC_OFFSET + MESSAGE_CRC_LENGTH
assert LOG_OVERHEAD + MESSAGE_MAGIC_OFFSET == MAGIC_OFFSET
MESSAGE_ATTRIBUTES_OFFSET = MESSAGE_MAGIC_OFFSET + MAGIC_LENGTH
MESSAGE_ATTRIBUTES_LENGTH = 1
MESSAGE_TIMESTAMP_OFFSET = MESSAGE_ATTRIBUTES_OFFSET + MESSAGE_ATTRIBUTES_LENGTH
MESSAGE_TIMESTAMP_LENGTH = 8
MESSAGE_KEY_SIZE_OFFSET_V0 = MESSAGE_ATTRIBUTES_OFFSET + MESSAGE_ATTRIBUTES_LENGTH
MESSAGE_KEY_SIZE_OFFSET_V1 = MESSAGE_TIMESTAMP_OFFSET + MESSAGE_TIMESTAMP_LENGTH
MESSAGE_KEY_SIZE_LENGTH = 4
MESSAGE_VALUE_SIZE_LENGTH = 4
#: crc + magic + attributes (+ timestamp): what precedes the key size
MESSAGE_HEADER_SIZE_V0 = MESSAGE_KEY_SIZE_OFFSET_V0
MESSAGE_HEADER_SIZE_V1 = MESSAGE_KEY_SIZE_OFFSET_V1
#: the smallest message: header, key size and value size (14 and 22 bytes)
RECORD_OVERHEAD_V0 = MESSAGE_HEADER_SIZE_V0 + MESSAGE_KEY_SIZE_LENGTH + MESSAGE_VALUE_SIZE_LENGTH
RECORD_OVERHEAD_V1 = MESSAGE_HEADER_SIZE_V1 + MESSAGE_KEY_SIZE_LENGTH + MESSAGE_VALUE_SIZE_LENGTH
#: the smallest entry size a splitter accepts (``LegacyRecord.RECORD_OVERHEAD_V0``)
MIN_RECORD_OVERHEAD = RECORD_OVERHEAD_V0

# -- "no value" markers (``RecordBatch``) ------------------------------------------------------
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1


class TimestampType(enum.StrEnum):
    """``org.apache.kafka.common.record.TimestampType``; the value is Kafka's ``name``, which is
    what the canonical JSON and DumpLogSegments print."""

    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


def header_size(magic: int) -> int:
    """``LegacyRecord.headerSize(magic)``: a message's bytes before its key size."""
    return MESSAGE_HEADER_SIZE_V0 if magic == MAGIC_VALUE_V0 else MESSAGE_HEADER_SIZE_V1


def record_overhead(magic: int) -> int:
    """``LegacyRecord.recordOverhead(magic)``: the size of a message with null key and value."""
    return RECORD_OVERHEAD_V0 if magic == MAGIC_VALUE_V0 else RECORD_OVERHEAD_V1
