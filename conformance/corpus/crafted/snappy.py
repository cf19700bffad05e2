"""Crafted cases of area ``snappy-``."""

from __future__ import annotations

from functools import partial

from conformance.codecs.snappy import (
    MAGIC,
    write_chunk,
    write_header,
    write_raw,
    write_xerial,
)
from conformance.corpus.crafted._build import (
    SNAPPY,
    Collector,
    codec_batch,
    flip,
    legacy_wrapper,
    legacy_wrapper_over,
    simple_batch,
    simple_records,
    v1_inner,
    v2_batch,
    v2_record,
)
from conformance.primitives.varint import write_unsigned_varint


def add_cases(add: Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    sb = partial(codec_batch, SNAPPY)

    add(
        "snappy-v2-xerial",
        "C15/§5.3/A.3: v2 snappy batch in xerial framing as snappy-java (Java producer) writes it",
        sb(write_xerial(raw)),
    )
    add(
        "snappy-raw-c11",
        "C11/§5.3: v2 batch with raw (unframed) snappy, as franz-go writes: raw fallback",
        sb(write_raw(raw)),
    )
    # snappy-java reads the uncompressed length as a Java int and allocates before it
    # decompresses (found by differential fuzzing)
    for length in (3_000_000_000, 2147483646):
        block = write_unsigned_varint(length) + b"\x00" * 12
        add(
            f"snappy-raw-length-{length}",
            "raw snappy whose uncompressed length is >= 2^31 (new byte[negative]) or above "
            "the JVM array limit: Kafka wraps the JVM's exception in a KafkaException",
            sb(block, 1),
        )
        add(
            f"snappy-xerial-first-chunk-length-{length}",
            "the same length in the first xerial chunk: thrown by read(), escapes raw",
            sb(write_header() + write_chunk(block), 1),
        )
    first = write_raw(recs[0])
    bad = write_unsigned_varint(0xFFFFFFFF) + b"\x00" * 12
    add(
        "snappy-xerial-second-chunk-length-negative",
        "a later xerial chunk whose length reads as a negative int: no new array (-1 is not "
        "larger), the native call refuses the short one: an IOException (found by fuzzing)",
        sb(write_header() + write_chunk(first) + write_chunk(bad), 2),
    )
    big = b"".join(simple_records(12, value_size=4000))
    add(
        "snappy-multi-chunk-c12",
        "C12/C13/C10/§5.3: xerial stream with ~48 KB of records in two 32 KiB chunks",
        simple_batch(12, value_size=4000, attributes=SNAPPY, payload=write_xerial(big)),
    )
    add(
        "snappy-raw-large-c11",
        "C11/§5.3: raw snappy (no framing) of ~48 KB of records",
        simple_batch(12, value_size=4000, attributes=SNAPPY, payload=write_raw(big)),
    )
    add(
        "snappy-chunk-per-record",
        "§5.3: xerial stream with one chunk per record",
        sb(write_xerial(recs)),
    )
    add(
        "snappy-chunk-zero-length-c12",
        "C12/§5.3: xerial stream with a zero-length chunk between two chunks",
        sb(write_xerial(recs[0]) + write_chunk(b"") + write_xerial(recs[1:], header=False)),
    )
    add(
        "snappy-le-header-c9",
        "C9/§5.3: xerial header version/compat written little-endian (01 00 00 00)",
        sb(write_xerial(raw, little_endian=True)),
    )
    add(
        "snappy-version-0",
        "§5.3: xerial header version 0, compat 0: version not checked",
        sb(write_xerial(raw, version=0, compat=0)),
    )
    add(
        "snappy-version-99",
        "§5.3: xerial header version 99, compat 99",
        sb(write_xerial(raw, version=99, compat=99)),
    )
    chunk = write_raw(raw)
    add(
        "snappy-negative-chunk",
        "§5.3: chunk length -1: SnappyError (unwrapped java.lang.Error)",
        sb(write_header() + write_chunk(chunk, length=-1)),
    )
    add(
        "snappy-chunk-too-big-c25",
        "C25/§5.3: chunk length 0x7FFFFFF0 (> 512 MiB): SnappyError",
        sb(write_header() + write_chunk(chunk, length=0x7FFFFFF0)),
    )
    add(
        "snappy-short-chunk",
        "§5.3: chunk length 5 more than the bytes present: 'failed to read chunk'",
        sb(write_header() + write_chunk(chunk, length=len(chunk) + 5)),
    )
    add(
        "snappy-chunk-overrun-c12",
        "C12/§5.3: final chunk length overruns into nothing after a good first chunk",
        sb(write_xerial(recs[0]) + write_chunk(write_raw(b"".join(recs[1:])), length=1000)),
    )
    for n in (1, 2, 3):
        add(
            f"snappy-trailing-{n}-bytes",
            f"§5.3: {n} trailing byte(s) after the last chunk: ignored silently",
            sb(write_xerial(raw) + b"\x01\x02\x03"[:n]),
        )
    add(
        "snappy-trailing-4-bytes",
        "§5.3: 4 trailing bytes 00000000 (a zero-length chunk)",
        sb(write_xerial(raw) + write_chunk(b"")),
    )
    add(
        "snappy-concatenated-header",
        "§5.3: second xerial stream header (version 1) between chunks: continues",
        sb(write_xerial(recs[0]) + write_xerial(recs[1:])),
    )
    add(
        "snappy-concatenated-header-version-0",
        "§5.3: concatenated header with version 0: treated as end of stream",
        sb(write_xerial(recs[0]) + write_xerial(recs[1:], version=0, compat=0)),
    )
    add(
        "snappy-concatenated-header-bad-magic",
        "§5.3: chunk length equal to 0x82534E41 followed by a non-magic: end of stream",
        sb(
            write_xerial(recs[0])
            + write_header(magic=b"\x82SNAXXXX")
            + write_xerial(recs[1:], header=False)
        ),
    )
    add(
        "snappy-concatenated-header-truncated",
        "§5.3: concatenated header cut after 10 bytes: SnappyIOException",
        sb(write_xerial(recs[0]) + write_header()[:10]),
    )
    add(
        "snappy-empty",
        "§5.3: empty snappy payload: '[EMPTY_INPUT] Cannot decompress empty stream'",
        sb(b""),
    )
    add("snappy-header-only", "§5.3: xerial header and no chunks, count 3", sb(write_header()))
    add(
        "snappy-magic-only",
        "§5.3: 8-byte magic only (< 16 bytes): raw fallback on the magic",
        sb(MAGIC),
    )
    add(
        "snappy-header-15-bytes",
        "§5.3: 15 bytes of header: shorter than 16, raw fallback",
        sb(write_header()[:15]),
    )
    add(
        "snappy-corrupt-raw-block",
        "§5.3: chunk with a corrupted raw snappy block",
        sb(write_header() + write_chunk(flip(chunk, len(chunk) // 2, 0xFF))),
    )
    add(
        "snappy-raw-corrupt-c11",
        "C11/§5.3: unframed payload that is not valid snappy",
        sb(b"\x05not snappy at all"),
    )
    add(
        "snappy-raw-short-c11",
        "C11/§5.3: raw snappy payload shorter than 16 bytes (one small record)",
        v2_batch(
            [v2_record(None, None)], attributes=SNAPPY, payload=write_raw(v2_record(None, None))
        ),
    )
    add(
        "snappy-legacy-v0-raw",
        "§5.3: v0 snappy wrapper with raw (unframed) snappy value",
        legacy_wrapper_over(SNAPPY, write_raw, magic=0),
    )
    add(
        "snappy-legacy-v1-le-header-c9",
        "C9/§5.3: v1 snappy wrapper with little-endian xerial header",
        legacy_wrapper_over(SNAPPY, partial(write_xerial, little_endian=True)),
    )
    add(
        "snappy-legacy-negative-chunk",
        "§5.3: v1 snappy wrapper with chunk length -1 (SnappyError at deep-iterator creation)",
        legacy_wrapper(
            v1_inner(2),
            codec=SNAPPY,
            offset=1,
            payload=write_header() + write_chunk(b"", length=-1),
        ),
    )
    add(
        "snappy-plain-marked-c14",
        "C14: batch marked snappy whose payload is plaintext records",
        sb(raw),
    )
