"""Crafted cases of area ``zstd-``."""

from __future__ import annotations

from functools import partial

from conformance.codecs.zstd import (
    Block,
    write_frame,
    write_raw_frame,
    write_skippable_frame,
)
from conformance.corpus.crafted._build import (
    ZSTD,
    Collector,
    codec_batch,
    flip,
    simple_batch,
    simple_records,
    v2_batch,
    v2_record,
)


def add_cases(add: Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    zb = partial(codec_batch, ZSTD)

    add("zstd-v2", "§5.5: v2 zstd batch with content size", zb(write_frame(raw)))
    add(
        "zstd-no-content-size-c21",
        "C21/§5.5: zstd frame without content size",
        zb(write_frame(raw, content_size=False)),
    )
    add(
        "zstd-checksum",
        "§5.5: zstd frame with a content checksum",
        zb(write_frame(raw, checksum=True)),
    )
    add(
        "zstd-multi-frame-c21",
        "C21/§5.5: records split over two concatenated frames",
        zb(write_frame(b"".join(recs[:2])) + write_frame(recs[2])),
    )
    add(
        "zstd-skippable-c21",
        "C21/§5.5: skippable frame (0x184D2A50) before and between data frames",
        zb(
            write_skippable_frame(b"SKIPME")
            + write_frame(recs[0])
            + write_skippable_frame(b"", variant=0xF)
            + write_frame(b"".join(recs[1:]))
        ),
    )
    add(
        "zstd-trailing-junk",
        "§5.5: junk after the frame: 'Unknown frame descriptor' at the leftover check",
        zb(write_frame(raw) + b"JUNKJUNK"),
    )
    add(
        "zstd-trailing-zeros", "§5.5: 4 zero bytes after the frame", zb(write_frame(raw) + bytes(4))
    )
    full = write_frame(raw)
    add(
        "zstd-truncated-c21",
        "C21/§5.5: frame cut in the middle: 'Truncated source'",
        zb(full[: len(full) - 6]),
    )
    add("zstd-truncated-header", "§5.5: only the 4-byte magic", zb(full[:4]))
    add("zstd-empty", "§5.5: empty zstd payload with count 3", zb(b""))
    add("zstd-bad-magic", "§5.5: first byte of the magic changed", zb(b"\x29" + full[1:]))
    add(
        "zstd-raw-blocks",
        "§5.5: hand-made frame of raw blocks with an 8-byte content size",
        zb(write_raw_frame(raw, content_size=len(raw))),
    )
    add(
        "zstd-raw-blocks-no-fcs",
        "§5.5: hand-made frame of raw blocks, no content size",
        zb(write_raw_frame(raw)),
    )
    add(
        "zstd-content-size-lies-small-c21",
        "C21/§5.5: frame content size 10 smaller than the real content",
        zb(write_raw_frame(raw, content_size=10)),
    )
    add(
        "zstd-content-size-lies-large-c21",
        "C21/§5.5: frame content size larger than the real content",
        zb(write_raw_frame(raw, content_size=len(raw) + 100)),
    )
    add(
        "zstd-content-size-2-40-c25",
        "C25/§5.5: frame content size 2^40 over a tiny payload",
        zb(write_raw_frame(raw, content_size=2**40)),
    )
    add(
        "zstd-checksum-good-raw",
        "§5.5: raw-block frame with a correct checksum",
        zb(write_raw_frame(raw, checksum=True)),
    )
    add(
        "zstd-checksum-bad",
        "§5.5: raw-block frame with a wrong checksum",
        zb(write_raw_frame(raw, checksum=0x01020304)),
    )
    add(
        "zstd-large",
        "§5.5: zstd batch of ~120 KB of records",
        simple_batch(40, value_size=3000, attributes=ZSTD),
    )
    add(
        "zstd-corrupt-byte",
        "§5.5: one byte inside the compressed block flipped (content may change silently)",
        zb(full[:14] + flip(full[14:], 3, 0xFF)),
    )
    add(
        "zstd-reserved-block-type",
        "§5.5: block header with the reserved block type 3",
        zb(write_raw_frame([Block(raw, type=3)])),
    )
    add(
        "zstd-rle-block",
        "§5.5: hand-made frame with one RLE block of 200 zero bytes after a raw block (count 1)",
        v2_batch(
            [],
            attributes=ZSTD,
            count=1,
            payload=write_raw_frame([Block(recs[0]), Block(b"\x00", type=1, size=200)]),
        ),
    )
    # zstd-jni's frameFinished is never cleared once a frame (skippable or not) ends: running
    # out of input afterwards is a clean end of stream (found by differential fuzzing)
    one = write_frame(v2_record(b"k", b"v" * 300))
    skip_trunc = write_skippable_frame(b"abc", variant=0xF, size=1000)
    skip_full = write_skippable_frame(b"abc")
    for name, payload, count in (
        ("zstd-frame-then-truncated-frame", one + one[: len(one) // 2], 2),
        ("zstd-frame-then-truncated-skippable", one + skip_trunc, 2),
        ("zstd-skippable-then-truncated-skippable", skip_full + skip_trunc, 1),
        ("zstd-truncated-skippable-alone", skip_trunc, 1),
        # zstd's "bytes left to skip" hint goes through a 32-bit int in zstd-jni: within 119
        # of 2**32 it reads as an error code (found by fuzzing)
        (
            "zstd-skippable-hint-error-code",
            one + write_skippable_frame(b"abc", variant=0xF, size=0xFFFFFF8C),
            2,
        ),
        (
            "zstd-skippable-hint-just-below",
            one + write_skippable_frame(b"abc", variant=0xF, size=0xFFFFFF8B),
            2,
        ),
        (
            "zstd-skippable-hint-error-at-end-check",
            one + write_skippable_frame(b"", variant=0xF, size=0xFFFFFFFF),
            1,
        ),
    ):
        add(
            name,
            "zstd-jni: a truncated frame is an error only before the first whole frame",
            v2_batch([], attributes=ZSTD, count=count, payload=payload),
        )
