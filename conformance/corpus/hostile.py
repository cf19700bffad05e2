"""Hostile inputs that are too large to keep in git: generated on demand with the real writers.

:func:`tiny_records_batch` is a record bomb: one v2 batch whose payload is ``n`` copies of the
smallest record (7 bytes: no key, no value, no headers, every delta 0), compressed. At the
default limits of the kit, ``n = 29_900_000`` is a ~19 KB zstd batch that decompresses to
~200 MiB (under the 256 MiB decompressed limit) and hands out 29.9 million records, all valid:
Kafka's consumer accepts it. It is how the kit's memory bounds are measured
(``bench/memory_bounds.py``, docs/memory.md) and tested (``tests/test_memory_bounds.py``).
"""

from __future__ import annotations

from conformance import codecs
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.record import write_record_v2

#: the smallest v2 record: length 6, then attributes, timestampDelta 0, offsetDelta 0,
#: null key, null value, no headers
TINY_RECORD = write_record_v2()


def tiny_records_batch(n: int, codec: str = "zstd", *, base_offset: int = 0) -> bytes:
    """One valid v2 batch of ``n`` identical minimal records, compressed with ``codec``."""
    if n < 1:
        raise ValueError("n must be >= 1")
    codec_id = codecs.CODEC_IDS[codec]
    return write_batch_v2(
        [TINY_RECORD * n],
        base_offset=base_offset,
        attributes=v2_attributes(codec_id, "CreateTime", False, False, False),
        count=n,
        last_offset_delta=0,
        base_timestamp=1_700_000_000_000,
    )


def numbered_records_batch(n: int, codec: str = "zstd") -> bytes:
    """One v2 batch of ``n`` minimal records with offset deltas 0 .. n-1, as a producer sends
    them: what a broker accepts and, to another codec, rebuilds record by record (the broker
    profile's worst case, docs/memory.md)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    body = b"".join(write_record_v2(offset_delta=i) for i in range(n))
    return write_batch_v2(
        [body],
        attributes=v2_attributes(codecs.CODEC_IDS[codec], "CreateTime", False, False, False),
        count=n,
        last_offset_delta=n - 1,
        base_timestamp=1_700_000_000_000,
        max_timestamp=1_700_000_000_000,
    )
