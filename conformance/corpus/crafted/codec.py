"""Crafted cases of area ``codec-``."""

from __future__ import annotations

import struct

from conformance import codecs
from conformance.codecs.gzip import write_member
from conformance.codecs.zstd import write_frame as zstd_frame
from conformance.corpus.crafted._build import (
    BOTH,
    GZIP,
    LZ4,
    TS,
    ZSTD,
    Collector,
    codec_batch,
    legacy_message,
    simple_records,
    v1_inner,
    v2_batch,
    v2_record,
)
from conformance.primitives.varint import write_varint


def add_cases(add: Collector) -> None:
    recs = simple_records(6, value_size=6000)
    for codec, cname in ((c.id, c.name) for c in codecs.CODECS.values() if c.id != codecs.NONE):
        add(
            f"codec-{cname}-v2-several-records",
            f"§5.1/§5.{codec + 1}: {cname} v2 batch with 6 records of 6 KB (> 32 KiB uncompressed)",
            v2_batch(recs, attributes=codec, max_timestamp=TS + 5, base_offset=1000),
        )
        add(
            f"codec-{cname}-headers-and-nulls",
            f"§5.1: {cname} v2 batch with headers, null key/value, empty values",
            v2_batch(
                [
                    v2_record(None, b"v", [("h", None), ("", b"")]),
                    v2_record(b"", None, offset_delta=1, timestamp_delta=-1),
                    v2_record(b"k", b"", [("x", b"y")], offset_delta=2, timestamp_delta=3),
                ],
                attributes=codec,
                max_timestamp=TS + 3,
            ),
        )
    for length in (2147483645, 2147483646):  # the JVM's byte[] limit (found by fuzzing)
        add(
            f"codec-gzip-record-length-{length}",
            "Kafka allocates the record buffer before reading it: above 2147483645 bytes the "
            "JVM throws OutOfMemoryError (Requested array size exceeds VM limit), below it the "
            "payload reaches EOF",
            v2_batch(
                [],
                attributes=GZIP,
                count=1,
                payload=write_member(write_varint(length) + b"\x00" * 20),
            ),
        )
        inner = struct.pack(">qi", 0, length) + b"\x00" * 20
        add(
            f"legacy-wrapper-inner-size-{length}",
            "the legacy deep iterator allocates each inner entry before reading it: same JVM "
            "array limit as for v2 records",
            legacy_message(None, write_member(inner), magic=1, attributes=GZIP),
        )
    zero_rec = b"\x00" * (64 * 1024 * 1024)
    add(
        "codec-gzip-bomb-c25",
        "C25/§3.5(b): ~64 KB gzip payload expanding to 64 MiB of zeros (length-0 records): "
        "fails on the first record",
        v2_batch([], attributes=GZIP, count=1, payload=write_member(zero_rec, level=9)),
    )
    add(
        "codec-zstd-bomb-c25",
        "C25/§3.5(b): tiny zstd payload expanding to 64 MiB of zeros",
        v2_batch([], attributes=ZSTD, count=1, payload=zstd_frame(zero_rec)),
    )
    add(
        "codec-gzip-bomb-trailing-c25",
        "C25/§3.5(b): one valid record followed by 32 MiB of zeros: "
        "'records still remaining' after 1 byte",
        v2_batch(
            [],
            attributes=GZIP,
            count=1,
            payload=write_member(v2_record() + b"\x00" * (32 * 1024 * 1024), level=9),
        ),
    )
    add(
        "codec-lz4-bomb-c25",
        "C25/§3.5(b): lz4 payload expanding to 8 MiB of zeros",
        v2_batch(
            [],
            attributes=LZ4,
            count=1,
            payload=codecs.write_stream(LZ4, b"\x00" * (8 * 1024 * 1024), 2),
        ),
    )
    add(
        "codec-gzip-plain-marked-c14",
        "C14: batch marked gzip whose payload is plaintext records",
        codec_batch(GZIP, b"".join(simple_records(2)), 2),
    )
    add(
        "codec-none-payload-compressed",
        "§5.1: codec none but the payload is a gzip stream",
        v2_batch([], count=1, payload=codecs.write_stream(GZIP, v2_record())),
    )
    add(
        "codec-legacy-v1-codec-7-wrapper",
        "§2.2/§5.1: v1 message with codec 7 and a gzip value",
        legacy_message(None, codecs.write_stream(GZIP, b"".join(v1_inner(1))), attributes=7),
    )
    add(
        "codec-count-0-all-codecs",
        "§3.5: four count-0 batches with codecs gzip/snappy/lz4/zstd and garbage payloads "
        "(codec opened or not)",
        b"".join(
            v2_batch([], attributes=c, count=0, payload=b"garbage", base_offset=c)
            for c in codecs.CODECS
            if c != codecs.NONE
        ),
        BOTH,
    )
