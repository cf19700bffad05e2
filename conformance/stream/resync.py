"""Finding where intact batches resume after damaged bytes (docs/replay.md, "Resynchronising").

Kafka's file reader stops at the first entry it cannot frame, and a consumer stops at the
first batch that fails. A replay of a damaged segment goes on: it needs the next position
where an *intact* batch starts. A position ``q`` is a batch start (:func:`is_batch_start`) when

==========================  ====================================================================
check                       bytes at ``q``
==========================  ====================================================================
framed                      ``size`` (int32 @8) >= 14, the batch ends inside the source,
                            magic (@16) in 0..2, ``12 + size <= max_batch_bytes``
plausible header (v2)       ``size >= 49``; attributes (int16 @21) codec <= 4 and bits 7..15
                            zero; ``lastOffsetDelta`` (@23) >= 0; ``recordsCount`` (@57) >= 0
plausible header (v0/v1)    attributes (@17) codec <= 4, unused bits zero (v0: 3..7,
                            v1: 4..7); key length in -1..size
checksum                    v2: CRC-32C from the attributes to the end equals the stored CRC
                            (``DefaultRecordBatch.ensureValid``); v0/v1: CRC-32 from the magic
                            (``LegacyRecord.ensureValid``)
==========================  ====================================================================

Only the checksum decides; the other checks keep random bytes from costing a checksum over up
to ``max_batch_bytes`` each (they reject headers no Kafka version writes). A region of zero
bytes is skipped at C speed: no batch can start where its size field would be zero.
"""

from __future__ import annotations

import re
import struct

from conformance.codecs import CODECS
from conformance.errors import DecodeError
from conformance.stream.splitter import Source
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V2,
    MESSAGE_KEY_SIZE_OFFSET_V0,
    MESSAGE_KEY_SIZE_OFFSET_V1,
    MIN_RECORD_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT_OFFSET,
    SIZE_OFFSET,
)
from conformance.wire.legacy import LegacyMessage

__all__ = ["DEFAULT_MAX_BATCH_BYTES", "find_next_batch", "is_batch_start"]

#: the largest batch a resynchronisation lands on (``message.max.bytes`` is 1 MiB by default)
DEFAULT_MAX_BATCH_BYTES = 64 << 20

_CHUNK = 1 << 20
_HEAD = RECORD_BATCH_OVERHEAD  # enough header bytes for every plausibility check
_MAGIC = re.compile(rb"[\x00-\x02]")
_NON_ZERO = re.compile(rb"[^\x00]")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def _plausible(head: bytes, q: int, total: int, max_batch_bytes: int) -> int:
    """The batch size if ``head`` (the first bytes at ``q``) passes every check but the
    checksum, else 0."""
    if len(head) < HEADER_SIZE_UP_TO_MAGIC:
        return 0
    size = _I32.unpack_from(head, SIZE_OFFSET)[0]
    batch_size = size + LOG_OVERHEAD
    if size < MIN_RECORD_OVERHEAD or batch_size > max_batch_bytes or q + batch_size > total:
        return 0
    magic = head[MAGIC_OFFSET]
    if magic == MAGIC_VALUE_V2:
        if batch_size < RECORD_BATCH_OVERHEAD or len(head) < RECORD_BATCH_OVERHEAD:
            return 0
        attributes = _I16.unpack_from(head, ATTRIBUTES_OFFSET)[0]
        if attributes & ~0x7F or (attributes & COMPRESSION_CODEC_MASK) not in CODECS:
            return 0
        if (
            _I32.unpack_from(head, LAST_OFFSET_DELTA_OFFSET)[0] < 0
            or _I32.unpack_from(head, RECORDS_COUNT_OFFSET)[0] < 0
        ):
            return 0
        return batch_size
    if magic > MAGIC_VALUE_V2:
        return 0
    attributes = head[MAGIC_OFFSET + 1]
    unused = 0xF8 if magic == MAGIC_VALUE_V0 else 0xF0
    if attributes & unused or (attributes & COMPRESSION_CODEC_MASK) not in CODECS:
        return 0
    key_at = LOG_OVERHEAD + (
        MESSAGE_KEY_SIZE_OFFSET_V0 if magic == MAGIC_VALUE_V0 else MESSAGE_KEY_SIZE_OFFSET_V1
    )
    if len(head) < key_at + 4:
        return 0
    key_length = _I32.unpack_from(head, key_at)[0]
    if key_length < -1 or key_length > size:
        return 0
    return batch_size


def _checksum_ok(raw: bytes) -> bool:
    try:
        if raw[MAGIC_OFFSET] == MAGIC_VALUE_V2:
            RecordBatchV2(raw).ensure_valid()
        else:
            LegacyMessage(raw[LOG_OVERHEAD:]).ensure_valid()
    except DecodeError:
        return False
    return True


def is_batch_start(
    source: Source, q: int, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
) -> bool:
    """True when an intact batch (checks in the module table) starts at byte ``q``."""
    total = len(source)
    if q < 0 or q + HEADER_SIZE_UP_TO_MAGIC > total:
        return False
    size = _plausible(source[q : q + _HEAD], q, total, max_batch_bytes)
    return size > 0 and _checksum_ok(source[q : q + size])


def find_next_batch(
    source: Source, after: int, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
) -> int | None:
    """The first ``q > after`` where an intact batch starts, or None (none before the end).

    Reads ``source`` a MiB at a time; candidates are the positions 16 bytes before a byte
    0..2 (a magic), each checked with :func:`is_batch_start`."""
    total = len(source)
    q = after + 1
    while q + HEADER_SIZE_UP_TO_MAGIC <= total:
        chunk_end = min(total, q + _CHUNK + _HEAD)
        chunk = source[q:chunk_end]
        limit = min(len(chunk), _CHUNK) - MAGIC_OFFSET  # candidates starting in this chunk
        rel = 0
        while rel < limit:
            m = _MAGIC.search(chunk, rel + MAGIC_OFFSET)
            if m is None:
                break
            rel = m.start() - MAGIC_OFFSET
            if rel >= limit:
                break
            head = chunk[rel : rel + _HEAD]
            if len(head) < _HEAD and rel + len(head) < total - q:
                head = source[q + rel : q + rel + _HEAD]
            size = _plausible(head, q + rel, total, max_batch_bytes)
            if size and _checksum_ok(source[q + rel : q + rel + size]):
                return q + rel
            if head[SIZE_OFFSET : SIZE_OFFSET + 4] == b"\0\0\0\0":
                # zeros: the next candidate needs a non-zero byte in its size field; zeros
                # to the chunk's end are told by bytes.count (about 1 GB/s, ten times the
                # regular expression's scan: a 5 GiB preallocated segment took minutes)
                start = rel + SIZE_OFFSET
                nz = None
                if chunk.count(0, start) != len(chunk) - start:
                    nz = _NON_ZERO.search(chunk, start)
                if nz is None:
                    rel = limit
                    break
                rel = max(rel + 1, nz.start() - SIZE_OFFSET - 3)
            else:
                rel += 1
        q += max(rel, limit, 1)
    return None
