"""Crafted cases of area ``hdr-``."""

from __future__ import annotations

from typing import Any

from conformance.corpus.crafted._build import (
    GZIP,
    Collector,
    Raw,
    v2_batch,
    v2_record,
)
from conformance.primitives.varint import write_varint


def add_cases(add: Collector) -> None:
    def hb(**knobs: Any) -> bytes:
        """One record k -> v whose headers section is given by the writer's knobs."""
        return v2_batch([v2_record(**knobs)])

    add(
        "hdr-count-negative",
        "§3.5(a) step 4: header count -1: 'Found invalid number of record headers -1'",
        hb(header_count=-1),
    )
    add("hdr-count-min-int", "§3.5(a) step 4: header count -2^31", hb(header_count=-(2**31)))
    add(
        "hdr-count-max-int-c55",
        "C55/§3.5(a) step 4: header count 2^31-1 with a tiny payload: larger than remaining",
        hb(header_count=0x7FFFFFFF),
    )
    add(
        "hdr-count-remaining-plus-1",
        "§3.5(a) step 4: header count one more than the bytes left in the batch",
        hb(header_count=3, headers=[("", b"")]),
    )
    add(
        "hdr-count-too-high",
        "§3.5(a): header count 2 but one header encoded: "
        "BufferUnderflow -> invalid record structure",
        hb(header_count=2, headers=[("h", b"x")]),
    )
    add(
        "hdr-count-overlong-varint",
        "§3.5(a)/§3.6: 6-byte header count varint",
        hb(header_count=Raw(b"\x80\x80\x80\x80\x80\x00")),
    )
    add(
        "hdr-key-size-negative-c52",
        "C52/§3.5(a): header key length -1: 'Invalid negative header key size -1'",
        hb(headers=[(Raw(write_varint(-1)), b"x")]),
    )
    add(
        "hdr-key-size-minus-7",
        "§3.5(a): header key length -7",
        hb(headers=[(Raw(write_varint(-7)), b"x")]),
    )
    add(
        "hdr-key-empty",
        "§3.5(a) step 4: header key of length 0 accepted",
        v2_batch([v2_record(headers=[("", b"x")])]),
    )
    add(
        "hdr-key-invalid-utf8",
        "§3.5(a) step 4: header key bytes ff fe 41: lenient UTF-8 decode (U+FFFD)",
        v2_batch([v2_record(headers=[(b"\xff\xfeA", b"x")])]),
    )
    add(
        "hdr-key-overlong-utf8",
        "§3.5(a): header key with overlong encoding c0 80 and truncated e2 82",
        v2_batch([v2_record(headers=[(b"a\xc0\x80b", b"1"), (b"\xe2\x82", b"2")])]),
    )
    add(
        "hdr-key-surrogate-utf8",
        "§3.5(a): header key with an encoded surrogate ed a0 80 and a 4-byte emoji",
        v2_batch([v2_record(headers=[(b"\xed\xa0\x80", b"1"), ("\U0001f600", b"2")])]),
    )
    add(
        "hdr-key-utf8-edge-sequences",
        "§3.5(a): header keys with JDK-vs-WHATWG replacement edge cases "
        "(4-byte overlong, > U+10FFFF, truncated 4-byte, lone continuation, f5, ed 9f bf, "
        "surrogate pair as two 3-byte sequences)",
        v2_batch(
            [
                v2_record(
                    headers=[
                        (b"\xf0\x80\x80\x80", b"1"),
                        (b"\xf4\x90\x80\x80", b"2"),
                        (b"\xf0\x9f\x98", b"3"),
                        (b"a\x80b", b"4"),
                        (b"\xf5\x80", b"5"),
                        (b"\xed\x9f\xbf", b"6"),
                        (b"\xed\xa0\xbd\xed\xb8\x80", b"7"),
                        (b"\xe0\x80\xaf", b"8"),
                        (b"\xe2\x28\xa1", b"9"),
                    ]
                )
            ]
        ),
    )
    add(
        "hdr-key-non-ascii",
        "§3.4: header keys with valid multi-byte UTF-8",
        v2_batch([v2_record(headers=[("clé", b"1"), ("ключ", b"2")])]),
    )
    add(
        "hdr-value-null",
        "C52/§3.4: header value null (-1)",
        v2_batch([v2_record(headers=[("h", None)])]),
    )
    add(
        "hdr-value-empty",
        "C52/§3.4: header value empty (0)",
        v2_batch([v2_record(headers=[("h", b"")])]),
    )
    add(
        "hdr-value-minus-9",
        "§3.4: header value length -9 read as null",
        hb(headers=[("h", Raw(write_varint(-9)))]),
    )
    add(
        "hdr-value-past-end",
        "§3.5(a) step 6: header value length past the end",
        hb(headers=[("h", Raw(write_varint(40) + b"x"))]),
    )
    add(
        "hdr-key-past-end",
        "§3.5(a) step 6: header key length past the end",
        hb(header_count=1, trailing=write_varint(40) + b"h"),
    )
    add(
        "hdr-duplicate-keys-c52",
        "C52: duplicate header keys kept in order",
        v2_batch([v2_record(headers=[("a", b"1"), ("a", b"2"), ("b", None), ("a", b"")])]),
    )
    add(
        "hdr-many-c52",
        "C52: 300 headers on one record",
        v2_batch([v2_record(headers=[(f"h{i}", b"%d" % i) for i in range(300)])]),
    )
    add("hdr-zero-c52", "C52: zero headers (single 00 byte)", v2_batch([v2_record(headers=[])]))
    add(
        "hdr-gzip-count-larger-than-record",
        "§3.5(b): gzip batch, header count larger than this record's remaining bytes "
        "(next record exists)",
        v2_batch(
            [v2_record(header_count=5), v2_record(offset_delta=1)],
            attributes=GZIP,
        ),
    )
    add(
        "hdr-gzip-key-size-negative",
        "§3.5(b): gzip batch, header key length -1",
        v2_batch([v2_record(headers=[(Raw(write_varint(-1)), b"x")])], attributes=GZIP),
    )
    add(
        "hdr-gzip-invalid-utf8",
        "§3.5(b): gzip batch, header key with invalid UTF-8",
        v2_batch([v2_record(headers=[(b"\x80\x80", b"x")])], attributes=GZIP),
    )
