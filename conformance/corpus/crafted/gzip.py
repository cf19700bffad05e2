"""Crafted cases of area ``gzip-``."""

from __future__ import annotations

from functools import partial

from conformance import codecs
from conformance.codecs.gzip import write_member
from conformance.corpus.crafted._build import (
    GZIP,
    Collector,
    codec_batch,
    flip,
    legacy_message,
    legacy_wrapper,
    legacy_wrapper_over,
    simple_batch,
    simple_records,
    v1_inner,
)


def add_cases(add: Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    gb = partial(codec_batch, GZIP)

    add(
        "gzip-v2-java",
        "§5.2: v2 gzip batch, 3 records, JDK-style header 1f8b0800000000 00ff",
        gb(codecs.write_stream(GZIP, raw)),
    )
    # GZIPInputStream.readTrailer compares the CRC before it reads the size (found by fuzzing)
    # (a legacy wrapper: its deep iterator reads to the end, and Kafka's message quotes the cause)
    inner = b"".join(v1_inner(2))
    for name, member in (
        ("gzip-short-trailer-wrong-crc", write_member(inner, crc=0x12345678)[:-3]),
        ("gzip-short-trailer-right-crc", write_member(inner)[:-3]),
    ):
        add(
            name,
            "a 5-byte gzip trailer: a wrong CRC is ZipException 'Corrupt GZIP trailer', "
            "a right one EOFException",
            legacy_message(None, member, magic=1, attributes=GZIP, offset=1),
        )
    add(
        "gzip-v2-large",
        "§5.2: v2 gzip batch, 20 records of 2 KB (> 32 KiB uncompressed)",
        simple_batch(20, value_size=2000, attributes=GZIP),
    )
    add(
        "gzip-bad-magic",
        "§5.2: payload 1f 8c ...: KafkaException(ZipException 'Not in GZIP format')",
        gb(b"\x1f\x8c" + codecs.write_stream(GZIP, raw)[2:]),
    )
    add(
        "gzip-empty", "§5.2: empty gzip payload with count 3: KafkaException(EOFException)", gb(b"")
    )
    add(
        "gzip-header-only",
        "§5.2: gzip payload is the 10-byte header only",
        gb(codecs.write_stream(GZIP, raw)[:10]),
    )
    add(
        "gzip-truncated-header",
        "§5.2: gzip payload of 5 bytes (truncated header)",
        gb(codecs.write_stream(GZIP, raw)[:5]),
    )
    full = codecs.write_stream(GZIP, raw)
    add(
        "gzip-truncated",
        "§5.2: gzip payload cut in the middle of the deflate stream",
        gb(full[: len(full) // 2]),
    )
    add(
        "gzip-truncated-trailer",
        "§5.2: gzip payload missing the last 4 trailer bytes (ISIZE)",
        gb(full[:-4]),
    )
    add(
        "gzip-bad-trailer-crc",
        "§5.2: trailer CRC-32 wrong: 'Corrupt GZIP trailer'",
        gb(write_member(raw, crc=0)),
    )
    add(
        "gzip-bad-trailer-isize",
        "§5.2: trailer ISIZE wrong",
        gb(write_member(raw, isize=len(raw) + 1)),
    )
    r1, r2 = b"".join(recs[:2]), recs[2]
    add(
        "gzip-concatenated-members",
        "§5.2: records split over two concatenated gzip members: read as one stream",
        gb(write_member(r1) + write_member(r2)),
    )
    add(
        "gzip-concatenated-empty-member",
        "§5.2: full member followed by a member of empty content",
        gb(write_member(raw) + write_member(b"")),
    )
    add(
        "gzip-trailing-junk",
        "§5.2: 7 junk bytes after the member: silently ignored",
        gb(full + b"JUNKJNK"),
    )
    add("gzip-trailing-zeros", "§5.2: 64 zero bytes after the member", gb(full + bytes(64)))
    add(
        "gzip-trailing-partial-header",
        "§5.2: bytes after the member start like a gzip header (1f 8b 08) but are truncated",
        gb(full + b"\x1f\x8b\x08"),
    )
    add(
        "gzip-trailing-bad-second-header",
        "§5.2: after the member, 1f 8b with method 7 (invalid second header)",
        gb(full + write_member(b"", method=7)[:10]),
    )
    add(
        "gzip-fextra",
        "§5.2: header with FEXTRA (6 bytes) honoured",
        gb(write_member(raw, extra=b"AB\x02\x00xy")),
    )
    add(
        "gzip-fname",
        "§5.2: header with FNAME honoured",
        gb(write_member(raw, fname=b"records.bin")),
    )
    add(
        "gzip-fcomment",
        "§5.2: header with FCOMMENT honoured",
        gb(write_member(raw, comment=b"hello")),
    )
    add(
        "gzip-fhcrc-good",
        "§5.2: header with a correct FHCRC",
        gb(write_member(raw, header_crc="correct", fname=b"x")),
    )
    add(
        "gzip-fhcrc-bad",
        "§5.2: header with a wrong FHCRC: 'Corrupt GZIP header'",
        gb(write_member(raw, header_crc=0x1234)),
    )
    add(
        "gzip-all-flags",
        "§5.2: FTEXT|FHCRC|FEXTRA|FNAME|FCOMMENT all set",
        gb(write_member(raw, flags=1, extra=b"e", fname=b"n", comment=b"c", header_crc="correct")),
    )
    add(
        "gzip-method-7",
        "§5.2: compression method 7: 'Unsupported compression method'",
        gb(write_member(raw, method=7)),
    )
    add("gzip-os-0", "§5.2: older-JDK header with OS byte 0", gb(write_member(raw, os_byte=0)))
    add(
        "gzip-level-0-stored",
        "§5.2: deflate level 0 (stored blocks)",
        gb(write_member(raw, level=0)),
    )
    add("gzip-level-9", "§5.2: deflate level 9", gb(write_member(raw, level=9)))
    add(
        "gzip-corrupt-deflate",
        "§5.2: deflate stream with a corrupted byte",
        gb(flip(full, 12, 0xFF)),
    )
    add(
        "gzip-legacy-bad-magic",
        "§2.5/§5.2: v1 gzip wrapper whose value is not gzip: KafkaException",
        legacy_wrapper([], offset=0, payload=b"definitely not gzip"),
    )
    add(
        "gzip-legacy-trailer-bad",
        "§2.5/§5.2: v1 gzip wrapper with a wrong trailer CRC",
        legacy_wrapper_over(GZIP, partial(write_member, crc=5)),
    )
    add(
        "gzip-legacy-empty-value",
        "§2.5/§5.2: v1 gzip wrapper with an empty (non-null) value",
        legacy_wrapper([], offset=0, payload=b""),
    )
