"""Crafted cases of area ``mixed-``."""

from __future__ import annotations

from conformance.corpus.crafted._build import (
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    Collector,
    ctl_batch_kv,
    ctl_key,
    ctl_value,
    legacy_message,
    legacy_wrapper,
    simple_batch,
    simple_records,
    v1_inner,
    v2_batch,
)
from conformance.wire.layout import TRANSACTIONAL_FLAG_MASK


def add_cases(add: Collector) -> None:
    v0w = legacy_wrapper(v1_inner(2, magic=0, offsets=[0, 1]), magic=0, codec=GZIP, offset=1)
    v1w = legacy_wrapper(v1_inner(3), magic=1, codec=GZIP, offset=4)
    add(
        "mixed-v0-then-v1-wrapper-c42",
        "C42/C43/§2.5: v0 gzip wrapper (absolute inner) then v1 gzip wrapper (relative inner)",
        v0w + v1w,
    )
    add(
        "mixed-v1-then-v0-wrapper-c42",
        "C42/§2.5: v1 gzip wrapper then v0 gzip wrapper",
        v1w + legacy_wrapper(v1_inner(2, magic=0, offsets=[5, 6]), magic=0, codec=GZIP, offset=6),
    )
    add(
        "mixed-v1-v1-v2-c44",
        "C44/§6.2: two v1 messages then a v2 batch (format upgrade in one partition)",
        legacy_message(b"a", b"1", offset=0)
        + legacy_message(b"b", b"2", offset=1)
        + simple_batch(2, base_offset=2),
    )
    add(
        "mixed-v2-v1-c44",
        "C44: a v2 batch then a v1 message (kafkajs decides by the first magic)",
        simple_batch(2, base_offset=0) + legacy_message(b"c", b"3", offset=2),
    )
    add(
        "mixed-v0-v1-v2",
        "§1/§6.2: v0 message, v1 snappy wrapper, v2 lz4 batch, v2 zstd batch",
        legacy_message(b"a", b"0", magic=0, offset=0)
        + legacy_wrapper(v1_inner(2), codec=SNAPPY, offset=2)
        + simple_batch(2, attributes=LZ4, base_offset=3)
        + simple_batch(2, attributes=ZSTD, base_offset=5),
    )
    add(
        "mixed-v1-lz4-v0-lz4",
        "C16/§5.4: v1 lz4 wrapper (correct HC) then v0 lz4 wrapper (broken HC)",
        legacy_wrapper(v1_inner(2), codec=LZ4, offset=1)
        + legacy_wrapper(v1_inner(2, magic=0, offsets=[2, 3]), magic=0, codec=LZ4, offset=3),
    )
    add(
        "mixed-v2-then-bad-legacy",
        "§1.2/§2.3: v2 batch then a v1 message with a bad CRC: error at batch_index 1",
        simple_batch(1) + legacy_message(offset=1, crc=3),
    )
    add(
        "mixed-legacy-then-partial-v2",
        "§1.2/§1.3: v1 message then a truncated v2 batch (30 bytes)",
        legacy_message(offset=0) + simple_batch(3, base_offset=1)[:30],
    )
    add(
        "mixed-control-and-data",
        "§3.7: data batch, COMMIT marker, legacy v1 message",
        v2_batch(
            simple_records(1),
            attributes=TRANSACTIONAL_FLAG_MASK,
            producer_id=4242,
            producer_epoch=3,
            base_sequence=0,
            base_offset=9,
        )
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=10)
        + legacy_message(offset=11),
    )
