"""Crafted cases of area ``rec-``."""

from __future__ import annotations

from typing import Any

from conformance.corpus.crafted._build import (
    GZIP,
    LZ4,
    Collector,
    Raw,
    simple_batch,
    simple_records,
    v2_batch,
    v2_record,
)
from conformance.primitives.varint import write_varint


def add_cases(add: Collector) -> None:
    def rec(**knobs: Any) -> bytes:
        """key -> value with one header; the knobs (``length``, ...) go to the record writer."""
        return v2_record(b"key", b"value", [("h", b"x")], **knobs)

    L = len(rec()) - 1  # the true body length (its length varint is one byte)
    add(
        "rec-length-too-long-last",
        "§3.5(a) step 2: last record's length is 1 more than its body: "
        "'Invalid record size ... only R remaining'",
        v2_batch([rec(length=L + 1)]),
    )
    add(
        "rec-length-too-long-not-last",
        "§3.5(a) steps 3+5: first of two records declares 1 byte too many: "
        "'expected to read L bytes ... but instead read C'",
        v2_batch([rec(length=L + 1), v2_record(offset_delta=1)]),
    )
    add(
        "rec-length-too-short",
        "§3.5(a) step 5: length 1 less than the body: consumed != length",
        v2_batch([rec(length=L - 1), v2_record(offset_delta=1)]),
    )
    add(
        "rec-length-zero",
        "§3.5(a): length 0 with a normal body following",
        v2_batch([rec(length=0)]),
    )
    add(
        "rec-length-negative",
        "§3.5(a)/§4.2: record length -1 (uncompressed): 'expected to read -1 bytes'",
        v2_batch([rec(length=-1)]),
    )
    add(
        "rec-length-min-int",
        "§3.5(a): record length -2^31",
        v2_batch([rec(length=-(2**31))]),
    )
    add(
        "rec-length-huge",
        "§3.5(a) step 2: record length 2^31-1 > remaining",
        v2_batch([rec(length=0x7FFFFFFF)]),
    )
    add(
        "rec-length-overlong-varint",
        "§3.5(a) step 1/§3.6: length varint with 5th-byte MSB set: raw IAE 'Varint is too long'",
        v2_batch([rec(length=b"\x80\x80\x80\x80\x80\x01")]),
    )
    add(
        "rec-length-nonminimal",
        "§3.5(a) step 7/§3.6: length written as a 5-byte non-minimal varint: accepted",
        v2_batch(
            [rec(length=bytes([(L * 2) | 0x80, 0x80, 0x80, 0x80, 0x00])), v2_record(offset_delta=1)]
        ),
    )
    add(
        "rec-length-eof-mid-varint",
        "§3.5(a) step 1: batch ends inside the first record's length varint",
        v2_batch([], count=1, payload=b"\x80"),  # literal: a lone varint byte is no record at all
    )
    add(
        "rec-no-bytes-count-1",
        "§3.5(a) step 1: count 1, no record bytes: BufferUnderflow -> 'premature EOF'",
        v2_batch([], count=1),
    )
    add(
        "rec-key-length-past-end",
        "§3.5(a) step 6: key length past the end of the batch: 'Found invalid record structure'",
        v2_batch([v2_record(key=Raw(write_varint(100) + b"abc"), end_after="key")]),
    )
    add(
        "rec-value-length-past-end",
        "§3.5(a) step 6: value length past the end of the batch",
        v2_batch([v2_record(value=Raw(write_varint(50) + b"xy"), end_after="value")]),
    )
    add(
        "rec-key-past-batch-end-c5",
        "C5/§3.5(a): key length runs past the batch into the next batch's bytes: "
        "bounded by the batch",
        v2_batch([v2_record(key=Raw(write_varint(70) + b"ab"), end_after="key")])
        + simple_batch(1, base_offset=1),
    )
    add(
        "rec-field-runs-into-next-record",
        "§3.5(a) step 3: first record's value length covers the next record; "
        "length check catches it",
        v2_batch(
            [
                v2_record(value=Raw(write_varint(12) + b"v"), length=7),
                v2_record(offset_delta=1),
            ]
        ),
    )
    add(
        "rec-attributes-nonzero",
        "§3.4: record attributes 0xFF: any value accepted",
        v2_batch([v2_record(attributes=0xFF)]),
    )
    add(
        "rec-timestamp-overlong-varlong",
        "§3.5(a) step 6/§3.6: 11-byte timestampDelta varlong in the body: "
        "'Found invalid record structure'",
        v2_batch([v2_record(timestamp_delta=Raw(b"\x80" * 10 + b"\x01"))]),
    )
    add(
        "rec-offset-delta-overlong-varint",
        "§3.5(a) step 6/§3.6: 6-byte offsetDelta varint in the body",
        v2_batch([v2_record(offset_delta=Raw(b"\x80\x80\x80\x80\x80\x01"))]),
    )
    add(
        "rec-key-null-minus-2",
        "§3.4: key length -2 read as null",
        v2_batch([v2_record(key=Raw(write_varint(-2)))]),
    )
    add(
        "rec-value-null-minus-100",
        "§3.4: value length -100 read as null",
        v2_batch([v2_record(value=Raw(write_varint(-100)))]),
    )
    matrix = []
    i = 0
    for k in (None, b"", b"K"):
        for v in (None, b"", b"V"):
            for hv in (None, b"", b"H"):
                matrix.append(v2_record(k, v, [("h", hv)], offset_delta=i))
                i += 1
    add(
        "rec-null-empty-matrix-c52",
        "C52/§3.4: key x value x header value over {null, empty, 1 byte}: 27 records",
        v2_batch(matrix),
    )
    add("rec-key-empty", "C52/§3.4: empty key (length 0) vs null", v2_batch([v2_record(b"", b"v")]))
    add(
        "rec-value-empty",
        "C52/§3.4: empty value (length 0) vs null",
        v2_batch([v2_record(b"k", b"")]),
    )
    add("rec-key-value-null", "§3.4: null key and null value", v2_batch([v2_record(None, None)]))
    add(
        "rec-trailing-byte-after-records",
        "§3.5: one junk byte after the last declared record: 'records still remaining'",
        v2_batch([v2_record()], payload=v2_record() + b"\x00"),
    )
    add(
        "rec-truncated-body-last",
        "§3.5(a): last record truncated (length says 10, 4 bytes left)",
        v2_batch([v2_record(key=Raw(write_varint(1)), end_after="key", length=10)]),
    )
    # compressed path (§3.5 b)
    add(
        "rec-gzip-length-negative",
        "§3.5(b)/§4.2: gzip batch, record length -1: IAE 'capacity < 0' -> 'premature EOF'",
        v2_batch([rec(length=-1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-long",
        "§3.5(b): gzip batch, last record declares 5 bytes too many: 'record payload reached EOF'",
        v2_batch([rec(length=L + 5)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-short",
        "§3.5(b): gzip batch, first record declares 2 bytes too few: "
        "'Found invalid record structure'",
        v2_batch([rec(length=L - 2), v2_record(offset_delta=1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-long-not-last",
        "§3.5(b): gzip batch, first of two records declares 1 byte too many",
        v2_batch([rec(length=L + 1), v2_record(offset_delta=1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-overlong-varint",
        "§3.5(b)/§4.2: gzip batch, record length varint too long: 'premature EOF' (IAE cause)",
        v2_batch([rec(length=b"\xff\xff\xff\xff\xff\x01")], attributes=GZIP),
    )
    add(
        "rec-gzip-count-too-high",
        "§3.5(b): gzip batch, count 3 with 2 records: end of stream reads as 0xFF -> premature EOF",
        v2_batch(simple_records(2), attributes=GZIP, count=3),
    )
    add(
        "rec-gzip-count-too-low",
        "§3.5(b): gzip batch, count 1 with 2 records: 'records still remaining'",
        v2_batch(simple_records(2), attributes=GZIP, count=1),
    )
    add(
        "rec-gzip-count-max-c55",
        "C55/§3.5: gzip batch with count 2^31-1: streamingIterator fails cleanly (no OOM)",
        v2_batch(simple_records(2), attributes=GZIP, count=0x7FFFFFFF),
    )
    add(
        "rec-gzip-key-past-end",
        "§3.5(b): gzip batch, key length past the record: 'Found invalid record structure'",
        v2_batch([v2_record(key=Raw(write_varint(30) + b"abc"), end_after="key")], attributes=GZIP),
    )
    add(
        "rec-gzip-overlong-varlong-body",
        "§3.5(b)/§3.6: gzip batch, 11-byte timestampDelta inside the body",
        v2_batch([v2_record(timestamp_delta=Raw(b"\x81" * 10 + b"\x01"))], attributes=GZIP),
    )
    add(
        "rec-lz4-length-too-short",
        "§3.5(b): lz4 batch, first record declares 2 bytes too few",
        v2_batch([rec(length=L - 2), v2_record(offset_delta=1)], attributes=LZ4),
    )
