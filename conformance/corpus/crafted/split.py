"""Crafted cases of area ``split-``."""

from __future__ import annotations

from typing import Any

from conformance.corpus.crafted._build import (
    LZ4,
    TS,
    Collector,
    legacy_message,
    simple_batch,
    text,
    v2_batch,
)
from conformance.wire.layout import (
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
)


def add_cases(add: Collector) -> None:
    def good_with(**knobs: Any) -> bytes:
        """The batch ``good`` written with the batch writer's fault knobs (batch_length, magic)."""
        return simple_batch(2, base_offset=0, **knobs)

    good = good_with()
    nxt = simple_batch(3, base_offset=2)
    add("split-empty", "§1.2/§1.3: empty input: no batches, outcome ok", b"")
    for n in range(18):
        add(
            f"split-tail-{n:02d}",
            f"§1.2/§1.3: a complete batch followed by the first {n} bytes of another "
            "(size field valid); memory ignores tails < size, file ignores <= 17 bytes",
            good + nxt[:n],
        )
    for n in (11, LOG_OVERHEAD, 13, 16, HEADER_SIZE_UP_TO_MAGIC, 18, 20):
        add(
            f"split-zero-tail-{n:02d}",
            f"§1.2/§1.3/§6.2: a complete batch followed by {n} zero bytes (size 0 < 14: "
            "memory raises from 12 bytes on, file ignores up to 17)",
            good + bytes(n),
        )
    add(
        "split-17-zero-bytes",
        "§1.3: exactly 17 zero bytes: file ignores, memory raises size 0 < 14",
        bytes(17),
    )
    add("split-18-zero-bytes", "§1.3: 18 zero bytes: both modes see size 0 < 14", bytes(18))
    add(
        "split-12-zero-bytes",
        "§1.2: 12 zero bytes: memory raises (size < 14 before the 17-byte check)",
        bytes(12),
    )
    add("split-11-bytes", "§1.2: fewer than 12 bytes: ignored silently", good[:11])
    for size in (13, 0, -1, 1):
        tag = f"m{-size}" if size < 0 else str(size)
        add(
            f"split-size-{tag}",
            f"§1.2 step 2/§1.3 step 2: entry size field {size} < 14 (followed by a full v2 header)",
            good_with(batch_length=size),
        )
    add(
        "split-size-13-alone-12",
        "§1.2: a 12-byte fragment whose size field is 13 raises even though it is incomplete",
        good_with(batch_length=13)[:12],
    )
    add(
        "split-size-14-frag-16",
        "§1.2: a 16-byte fragment whose size field is 14 is ignored (needs 26 bytes)",
        good_with(batch_length=14)[:16],
    )
    add(
        "split-size-14-v2",
        "§1.2: magic-2 entry with size 14 (26 bytes) passes splitting; ensureValid fails (< 61)",
        good_with(batch_length=14)[:26],
    )
    add(
        "split-size-48-v2",
        "§1.2/§3.1: magic-2 entry with size 48 (60 bytes): "
        "'smaller than the minimum allowed overhead 61'",
        good_with(batch_length=48)[:60],
    )
    add(
        "split-size-49-v2-empty",
        "§3.1: minimal v2 batch (size 49 = 61 bytes) with count 0: valid",
        v2_batch([], count=0),
    )
    add(
        "split-size-max-int",
        "§1.2: size 0x7FFFFFFF: memory overflows size+12 (raw IAE newLimit < 0); file: partial",
        good_with(batch_length=0x7FFFFFFF),
    )
    add(
        "split-size-negative-c57",
        "C57/§1.2: batch length 0x80000000 (high bit set) must not panic: size < 14",
        good_with(batch_length=-(2**31)),  # stored 0x80000000
    )
    add(
        "split-size-overflowing",
        "§1.2 step 5: size larger than the input (no max in MemoryRecords): partial tail",
        good_with(batch_length=len(good) + 100),
    )
    add(
        "split-size-too-small-for-content",
        "§1.2/§3.1: batchLength 5 short of the true length: "
        "the cut batch's CRC range shrinks (mismatch)",
        good_with(batch_length=len(good) - LOG_OVERHEAD - 5),
    )
    for m in (3, 127, -1, -128):
        tag = f"m{-m}" if m < 0 else str(m)
        add(
            f"split-bad-magic-{tag}",
            f"§1.2 step 4/§1.3 step 4: magic {m} (CRC-valid v2 layout): "
            "memory raises, file has no range check",
            good_with(magic=m),
        )
    add(
        "split-bad-magic-partial",
        "§1.2: 17-byte fragment with invalid magic 5 raises in memory even though incomplete",
        good_with(magic=5)[:HEADER_SIZE_UP_TO_MAGIC],
    )
    add(
        "split-bad-magic-partial-30",
        "§1.2/§1.3: 30-byte fragment of a batch with magic 9: memory raises, file stops (partial)",
        good_with(magic=9)[:30],
    )
    add(
        "split-bad-magic-after-good",
        "§1.2: good batch then a complete entry with magic 4: error at batch_index 1",
        good + simple_batch(3, base_offset=2, magic=4),
    )
    add(
        "split-partial-only-c4",
        "C4/§1.2: only a truncated batch (first 40%): no batch, partial tail",
        nxt[: len(nxt) * 2 // 5],
    )
    add(
        "split-partial-trailing-c1",
        "C1/C7/§1.2: two complete v2 batches + first 40% of a third: 2 batches, partial tail",
        good + nxt + simple_batch(4, base_offset=5)[: len(simple_batch(4)) * 2 // 5],
    )
    for cut in (
        LOG_OVERHEAD,
        HEADER_SIZE_UP_TO_MAGIC,
        40,
        RECORD_BATCH_OVERHEAD - 1,
        RECORD_BATCH_OVERHEAD,
        len(nxt) - 1,
    ):
        add(
            f"split-truncated-at-{cut}-c2",
            f"C2/§1.2: single v2 batch truncated to {cut} bytes: partial, no error",
            nxt[:cut],
        )
    big = simple_batch(40, value_size=400, base_offset=100, max_timestamp=TS + 39)
    add(
        "split-large-batch-partial-c66",
        "C66/§1.2: only the first 4000 bytes of a ~17 KB batch (fetch size too small): partial",
        big[:4000],
    )
    add(
        "split-poison-after-batch-c5",
        "C5/§1.2: a complete batch followed by bytes of another stream ('poison' text): "
        "ignored or raise per size/magic",
        good + b"POISON-NEXT-PARTITION-BYTES....",
    )
    add(
        "split-offsets-non-monotonic",
        "§1.2: batch offsets are not checked: batch 100 then batch 5 then batch 100",
        simple_batch(2, base_offset=100)
        + simple_batch(2, base_offset=5)
        + simple_batch(1, base_offset=100),
    )
    add(
        "split-three-batches",
        "§1.2/§1.3: three complete v2 batches back to back: ok",
        good + nxt + simple_batch(1, base_offset=5),
    )
    add(
        "split-magic-3-crc-valid",
        "§1.3 step 4: magic 3 with a full, CRC-valid v2 body: memory raises, file reads it as v2",
        good_with(magic=3),
    )
    add(
        "split-magic-m1-legacy-layout",
        "§1.3 step 4: v1-layout message with magic -1 and a valid CRC-32: "
        "memory raises, file takes it for legacy",
        legacy_message(b"k", b"v", magic=-1),
    )
    add(
        "split-legacy-tail-9",
        "§1.2/§1.3: v1 message followed by 9 bytes of another: ignored in both modes",
        legacy_message(offset=0) + legacy_message(offset=1)[:9],
    )
    add(
        "split-legacy-size-13",
        "§1.2/§1.3: legacy entry whose size field is 13 after a good message",
        legacy_message(offset=0) + legacy_message(offset=1, size=13),
    )
    add(
        "split-overflow-message-c64",
        "C64/§1.2: v1 set whose last entry "
        "(offset -1, down-conversion overflow) is truncated: partial",
        legacy_message(b"a", b"1", offset=0)
        + legacy_message(b"b", b"2", offset=1)
        + legacy_message(b"c", text(300), offset=-1)[:60],
    )
    add(
        "split-truncated-lz4-batch-c3",
        "C3/§1.2: trailing LZ4 v2 batch truncated inside its compressed payload: partial",
        good + simple_batch(5, attributes=LZ4, base_offset=2, value_size=200)[:150],
    )
