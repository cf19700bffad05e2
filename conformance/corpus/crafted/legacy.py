"""Crafted cases of area ``legacy-``."""

from __future__ import annotations

from conformance import codecs
from conformance.codecs.zstd import write_frame as zstd_std
from conformance.corpus.crafted._build import (
    BOTH,
    GZIP,
    SNAPPY,
    TS,
    ZSTD,
    Collector,
    legacy_message,
    legacy_wrapper,
    legacy_wrapper_over,
    simple_batch,
    text,
    v1_inner,
)
from conformance.wire.layout import (
    LOG_OVERHEAD,
    MESSAGE_CRC_LENGTH,
    MESSAGE_CRC_OFFSET,
    TIMESTAMP_TYPE_MASK,
)


def stored_crc(entry: bytes) -> int:
    """The CRC-32 stored in a v0/v1 log entry."""
    start = LOG_OVERHEAD + MESSAGE_CRC_OFFSET
    return int.from_bytes(entry[start : start + MESSAGE_CRC_LENGTH], "big")


def add_cases(add: Collector) -> None:
    # docs/format.md Appendix A.2 verbatim (reference bytes, checked against the writer)
    a2v1 = bytes.fromhex(
        (
            "0000000000000064 0000001a 74aa5140 01 00 0000018bcfe56800 00000002 6b30 00000002 7630"
        ).replace(" ", "")
    )
    a2v0 = bytes.fromhex(
        "0000000000000064 00000012 8697724c 00 00 00000002 6b30 00000002 7630".replace(" ", "")
    )
    if (
        legacy_message(b"k0", b"v0", magic=1, offset=100) != a2v1
        or legacy_message(b"k0", b"v0", magic=0, offset=100) != a2v0
    ):
        raise AssertionError(
            "legacy_message does not reproduce docs/format.md Appendix A.2"
        )  # pragma: no cover
    add("legacy-v1-appendix-a2", "Appendix A.2: v1 message offset 100", a2v1)
    add("legacy-v0-appendix-a2", "Appendix A.2: v0 message offset 100", a2v0)
    add("legacy-v0-null-key", "§2.1: v0 message with null key", legacy_message(None, b"v", magic=0))
    add(
        "legacy-v0-null-value",
        "§2.1: v0 message with null value (tombstone)",
        legacy_message(b"k", None, magic=0),
    )
    add(
        "legacy-v1-null-both",
        "§2.1: v1 message with null key and value",
        legacy_message(None, None),
    )
    add(
        "legacy-v1-empty-both",
        "§2.1: v1 message with empty key and value",
        legacy_message(b"", b""),
    )
    add(
        "legacy-v1-key-minus-5",
        "§2.1: v1 key length -5 means null",
        legacy_message(None, b"v", key_length=-5),
    )
    add(
        "legacy-v1-crc-bad",
        "§2.3: v1 message with a wrong CRC: 'Record is corrupt (stored crc = ...'",
        legacy_message(crc=0x12345678),
    )
    add("legacy-v0-crc-bad", "§2.3: v0 message with a wrong CRC", legacy_message(magic=0, crc=1))
    i = 0
    while not stored_crc(legacy_message(b"k", b"%d" % i)) & 0x80000000:
        i += 1
    add(
        "legacy-v1-crc-high-bit",
        "§2.1: CRC-32 with the high bit set compared unsigned",
        legacy_message(b"k", b"%d" % i),
    )
    add(
        "legacy-v1-trailing-bytes",
        "§2.3: 5 bytes after the value, CRC covering them: accepted",
        legacy_message(trailing=b"JUNK!"),
    )
    add(
        "legacy-v1-trailing-bytes-crc-excluded",
        "§2.1: trailing bytes not covered by the stored CRC: mismatch",
        legacy_message(trailing=b"JUNK!", crc=stored_crc(legacy_message())),
    )
    add(
        "legacy-v1-key-past-end-good-crc",
        "§2.3: key length 100 past the end, valid CRC: key() raises IAE",
        legacy_message(b"k", b"v", key_length=100),
    )
    add(
        "legacy-v0-value-past-end-good-crc",
        "§2.3: value length 50 past the end, valid CRC",
        legacy_message(b"k", b"v", magic=0, value_length=50),
    )
    add(
        "legacy-v1-value-short-good-crc",
        "§2.3: value length 0 but 3 value bytes present (trailing), valid CRC",
        legacy_message(b"k", b"v", value_length=0, trailing=b"ab"),
    )
    for size in range(14, 22):
        add(
            f"legacy-v1-size-{size}",
            f"§2.1/§2.3: v1 message of size {size} (< 22), CRC recomputed: passes splitting",
            legacy_message(None, None, magic=1, truncate=size),
        )
    add(
        "legacy-v0-size-14",
        "§2.1: smallest v0 message (size 14, null key and value)",
        legacy_message(None, None, magic=0),
    )
    add(
        "legacy-v0-size-13",
        "§1.2/§2.3: v0 message truncated to size 13 (< 14)",
        legacy_message(None, None, magic=0, truncate=13),
    )
    add(
        "legacy-v1-log-append-time",
        "§2.2: stand-alone v1 message with timestamp-type bit 3",
        legacy_message(attributes=TIMESTAMP_TYPE_MASK, timestamp=TS + 1),
    )
    add(
        "legacy-v1-timestamp-negative",
        "§2.1: v1 timestamp -5 accepted on read",
        legacy_message(timestamp=-5),
    )
    add(
        "legacy-v1-timestamp-minus-1",
        "§2.1: v1 timestamp -1 (no timestamp)",
        legacy_message(timestamp=-1),
    )
    add(
        "legacy-v0-attr-bit3",
        "§2.2: timestamp-type bit on a v0 message is ignored",
        legacy_message(magic=0, attributes=TIMESTAMP_TYPE_MASK),
    )
    add(
        "legacy-v1-attr-high-bits",
        "§2.2: reserved attribute bits 4-7 set: ignored",
        legacy_message(attributes=0xF0),
    )
    add(
        "legacy-v1-codec-5",
        "§2.2/§2.5: v1 attributes codec 5: IAE 'Unknown compression type id: 5'",
        legacy_message(attributes=5),
    )
    add(
        "legacy-v0-codec-7",
        "§2.2/§2.5: v0 attributes codec 7",
        legacy_message(magic=0, attributes=7),
    )
    add(
        "legacy-v1-zstd-wrapper-c24",
        "C24/§2.5: v1 wrapper with codec 4 (zstd): InvalidRecordException",
        legacy_wrapper_over(ZSTD, zstd_std),
    )
    add(
        "legacy-v0-zstd-wrapper",
        "§2.5: v0 wrapper with codec 4 (message prints the magic, 0)",
        legacy_wrapper_over(ZSTD, zstd_std, magic=0),
    )
    add(
        "legacy-v1-set-c46",
        "C46/§2.1: v1 message set of 3 uncompressed messages, CRC per message",
        b"".join(
            legacy_message(b"k%d" % i, b"v%d" % i, offset=10 + i, timestamp=TS + i)
            for i in range(3)
        ),
        BOTH,
    )
    add(
        "legacy-v0-set",
        "§2.1: v0 message set of 3 messages",
        b"".join(legacy_message(b"k%d" % i, b"v%d" % i, magic=0, offset=i) for i in range(3)),
        BOTH,
    )
    # ---- wrappers
    for magic in (0, 1):
        for codec, cname in ((c.id, c.name) for c in codecs.legacy_codecs() if c.id != codecs.NONE):
            inner = v1_inner(3, magic=magic, offsets=[100, 101, 102] if magic == 0 else None)
            add(
                f"legacy-v{magic}-{cname}-wrapper",
                f"§2.4/§2.5: v{magic} {cname} wrapper with 3 inner v{magic} "
                "messages as Java writes it",
                legacy_wrapper(inner, magic=magic, codec=codec, offset=102),
            )
    add(
        "legacy-v1-wrapper-offset-0-c41",
        "C41/§2.5: v1 wrapper offset 0 with relative inner offsets 0..2: "
        "inner offsets used as stored",
        legacy_wrapper(v1_inner(3), offset=0),
    )
    add(
        "legacy-v1-wrapper-offset-less-than-last",
        "§2.5: v1 wrapper offset 1 < last inner offset 2 (not 0): InvalidRecordException",
        legacy_wrapper(v1_inner(3), offset=1),
    )
    add(
        "legacy-v1-wrapper-offset-minus-1-c67",
        "C67/§2.5: v1 wrapper offset -1 (< last inner, not 0)",
        legacy_wrapper(v1_inner(2), offset=-1),
    )
    add(
        "legacy-v1-gaps-c39",
        "C39/§2.5: v1 gzip wrapper offset 105, inner relative {0,2,5}: absolute {100,102,105}",
        legacy_wrapper(v1_inner(3, offsets=[0, 2, 5]), offset=105),
    )
    add(
        "legacy-v1-gaps-0-5-9",
        "§2.5: inner 0,5,9 under W=109 give 100,105,109",
        legacy_wrapper(v1_inner(3, offsets=[0, 5, 9]), offset=109),
    )
    add(
        "legacy-v1-gaps-c40",
        "C40/§2.5: v1 wrapper with gaps, inner offsets not 0-based (3,4,8) under W=20",
        legacy_wrapper(v1_inner(3, offsets=[3, 4, 8]), offset=20),
    )
    add(
        "legacy-v0-gaps-c40",
        "C40/§2.5: v0 wrapper, inner absolute offsets 50,52,57 with gaps: used as stored",
        legacy_wrapper(v1_inner(3, magic=0, offsets=[50, 52, 57]), magic=0, offset=57),
    )
    add(
        "legacy-v0-wrapper-offset-mismatch",
        "§2.5: v0 wrapper offset 999 with inner absolute offsets 0..2: "
        "inner offsets used, lastOffset 999",
        legacy_wrapper(v1_inner(3, magic=0), magic=0, offset=999),
    )
    add(
        "legacy-v1-inner-non-monotonic",
        "§2.5: v1 wrapper W=10 with inner offsets 2,0,1 (L=1): base 9",
        legacy_wrapper(v1_inner(3, offsets=[2, 0, 1]), offset=10),
    )
    add(
        "legacy-v1-wrapper-lat-c47",
        "C47/§2.5: v1 wrapper with LogAppendTime: inner v1 records report the wrapper timestamp",
        legacy_wrapper(
            v1_inner(3, ts=5), offset=2, timestamp=TS + 500, extra_attributes=TIMESTAMP_TYPE_MASK
        ),
    )
    add(
        "legacy-v1-wrapper-create-time",
        "§2.5: v1 wrapper CreateTime: "
        "inner records keep their own timestamps, maxTimestamp = wrapper field",
        legacy_wrapper(v1_inner(3, ts=TS - 10), offset=2, timestamp=TS + 77),
    )
    add(
        "legacy-v1-wrapper-null-value",
        "§2.5: v1 gzip wrapper with null value: "
        "'Found invalid compressed record set with null value (magic = 1)'",
        legacy_message(None, None, attributes=GZIP, offset=3),
    )
    add(
        "legacy-v0-wrapper-null-value",
        "§2.5: v0 snappy wrapper with null value",
        legacy_message(None, None, magic=0, attributes=SNAPPY, offset=3),
    )
    add(
        "legacy-v1-wrapper-no-inner",
        "§2.5: v1 gzip wrapper whose value decompresses to nothing: 'no inner records'",
        legacy_wrapper([], offset=0),
    )
    add(
        "legacy-v1-wrapper-only-short-fragment",
        "§2.5: v1 wrapper whose value decompresses to 8 bytes "
        "(less than an entry prefix): no inner records",
        legacy_wrapper([], offset=0, payload=codecs.write_stream(GZIP, b"\x00" * 8)),
    )
    add(
        "legacy-v1-inner-compressed",
        "§2.5: second inner message carries codec gzip: "
        "'Inner messages must not be compressed' after 1 record",
        legacy_wrapper(
            [v1_inner(1)[0], legacy_wrapper(v1_inner(1), offset=1)],
            offset=1,
        ),
    )
    add(
        "legacy-v1-inner-size-13",
        "§2.5: inner entry with size 13: CorruptRecordException",
        legacy_wrapper(
            [v1_inner(1)[0], legacy_message(b"k1", b"v1", offset=1, timestamp=TS + 1, size=13)],
            offset=1,
        ),
    )
    add(
        "legacy-v1-inner-truncated",
        "§2.5: last inner message truncated inside the compressed value: dropped silently",
        legacy_wrapper(
            v1_inner(2), payload=codecs.write_stream(GZIP, b"".join(v1_inner(3))[:-5]), offset=1
        ),
    )
    add(
        "legacy-v1-inner-magic-0",
        "§2.5: v1 wrapper with inner v0 messages (magic mismatch, relative offsets applied)",
        legacy_wrapper(v1_inner(2, magic=0), offset=11),
    )
    add(
        "legacy-v0-inner-magic-1",
        "§2.5: v0 wrapper with inner v1 messages: NoTimestampType but their own timestamp values",
        legacy_wrapper(v1_inner(2, magic=1, offsets=[4, 5]), magic=0, offset=5),
    )
    add(
        "legacy-v1-inner-crc-bad",
        "§2.5/§4.3: second inner message with a bad CRC: consumer's record.ensureValid raises",
        legacy_wrapper([v1_inner(2)[0], legacy_message(b"k1", b"v1", offset=1, crc=7)], offset=1),
    )
    add(
        "legacy-v1-wrapper-crc-bad",
        "§4.1/§4.3: wrapper's own CRC wrong, inner messages fine: the consumer does not check it",
        legacy_wrapper(v1_inner(2), offset=1, crc=0xDEADBEEF),
    )
    add(
        "legacy-v1-wrapper-key-nonnull",
        "§2.5: wrapper with a non-null key: not rejected",
        legacy_wrapper(v1_inner(2), offset=1, key=b"wrapper-key"),
    )
    add(
        "legacy-v1-wrapper-codec-6",
        "§2.5: v1 wrapper attributes codec 6: IAE",
        legacy_message(None, codecs.write_stream(GZIP, b"".join(v1_inner(1))), attributes=6),
    )
    add(
        "legacy-v1-wrapper-inner-v2",
        "§2.5: v1 gzip wrapper whose inner entry is a v2 batch (inner magic not range-checked)",
        legacy_wrapper([simple_batch(1)], offset=0),
    )
    add(
        "legacy-v1-wrapper-attr-high-bits",
        "§2.2: v1 gzip wrapper with reserved bits 0x70 set",
        legacy_wrapper(v1_inner(2), offset=1, extra_attributes=0x70),
    )
    add(
        "legacy-v1-wrapper-large-gzip",
        "§2.5: v1 gzip wrapper with 40 inner messages of 1 KiB (multi-buffer decompression)",
        legacy_wrapper(
            [legacy_message(b"k%d" % i, text(1024, i), offset=i) for i in range(40)], offset=39
        ),
    )
    add(
        "legacy-v1-wrapper-inner-lat-bit",
        "§2.5: CreateTime wrapper whose inner messages carry the LogAppendTime bit",
        legacy_wrapper(
            [
                legacy_message(
                    b"k", b"v", offset=0, attributes=TIMESTAMP_TYPE_MASK, timestamp=TS - 1
                )
            ],
            offset=0,
            timestamp=TS,
        ),
    )
