"""Crafted cases of area ``varint-``."""

from __future__ import annotations

from conformance.corpus.crafted._build import (
    GZIP,
    Collector,
    Raw,
    v2_batch,
    v2_record,
)
from conformance.primitives.varint import write_unsigned_varint


def add_cases(add: Collector) -> None:
    def rec_with(
        ts: bytes = b"\x00", od: bytes = b"\x00", kl: bytes | None = None, kd: bytes = b"k"
    ) -> bytes:
        """Record k -> v with raw timestampDelta / offsetDelta varints and, if ``kl`` is
        given, the raw key length ``kl`` followed by the key bytes ``kd``."""
        key = Raw(kl + kd) if kl is not None else kd
        return v2_record(key, timestamp_delta=Raw(ts), offset_delta=Raw(od))

    add(
        "varint-nonminimal-offset-delta",
        "§3.6: offsetDelta 0 written 80 00 (non-minimal): accepted",
        v2_batch([rec_with(od=b"\x80\x00")]),
    )
    add(
        "varint-nonminimal-5-bytes",
        "§3.6: offsetDelta 1 written as 5 bytes 82 80 80 80 00: accepted",
        v2_batch([rec_with(od=b"\x82\x80\x80\x80\x00")]),
    )
    add(
        "varint-5th-byte-overflow-bits",
        "§3.6: 5th byte 0x70 (bits 4-6 set) silently dropped: offsetDelta 2 read",
        v2_batch([rec_with(od=b"\x84\x80\x80\x80\x70")]),
    )
    add(
        "varint-5th-byte-msb",
        "§3.6: offsetDelta with 5th-byte MSB set: IAE -> 'Found invalid record structure'",
        v2_batch([rec_with(od=b"\x80\x80\x80\x80\x80\x00")]),
    )
    add(
        "varint-key-length-nonminimal",
        "§3.6: key length 1 written 82 00",
        v2_batch([rec_with(kl=b"\x82\x00")]),
    )
    add(
        "varint-key-length-6-bytes-c54",
        "C54/§3.6: 6-byte varint in the key length slot",
        v2_batch([rec_with(kl=b"\x82\x80\x80\x80\x80\x00")]),
    )
    add(
        "varint-eof-continuation-c54",
        "C54/§3.6: batch ends while every varint byte has the continuation bit",
        v2_batch([v2_record(timestamp_delta=Raw(b"\x80\x80\x80"), end_after="timestamp_delta")]),
    )
    add(
        "varint-varlong-10-byte-min",
        "§3.6: timestampDelta Long.MIN as a 10-byte varlong: wraps with baseTimestamp",
        v2_batch([rec_with(ts=bytes.fromhex("ffffffffffffffffff01"))]),
    )
    add(
        "varint-varlong-10-byte-max",
        "§3.6: timestampDelta Long.MAX (FE FF .. 01), baseTimestamp 0",
        v2_batch([rec_with(ts=bytes.fromhex("feffffffffffffffff01"))], base_timestamp=0),
    )
    add(
        "varint-varlong-10th-byte-overflow-bits",
        "§3.6: 10th varlong byte 0x7E: bits 1-6 silently dropped",
        v2_batch([rec_with(ts=bytes.fromhex("828080808080808080" + "7e"))]),
    )
    add(
        "varint-varlong-11-bytes-c54",
        "C54/§3.6: 11-byte varlong (10th byte has MSB): 'Varlong is too long'",
        v2_batch([rec_with(ts=bytes.fromhex("80808080808080808080" + "00"))]),
    )
    add(
        "varint-varlong-nonminimal",
        "§3.6: timestampDelta 0 written as 10 bytes 80..80 00",
        v2_batch([rec_with(ts=bytes.fromhex("808080808080808080" + "00"))]),
    )
    vectors = [0, -1, 1, 63, -64, 64, -65, 8191, 134217728, 2**31 - 1, -(2**31)]
    add(
        "varint-vectors-offset-delta",
        "§3.6: ByteUtilsTest varint vectors as record offsetDeltas",
        v2_batch(
            [v2_record(b"%d" % v, None, offset_delta=v) for v in vectors],
            base_offset=0,
            last_offset_delta=0,
        ),
    )
    add(
        "varint-vectors-timestamp-delta",
        "§3.6: varlong vectors (incl. Long.MAX/MIN) as timestampDeltas, baseTimestamp 0",
        v2_batch(
            [
                v2_record(None, b"%d" % v, timestamp_delta=v, offset_delta=i)
                for i, v in enumerate([0, -1, 1, 2**63 - 1, -(2**63), 2**40])
            ],
            base_timestamp=0,
        ),
    )
    add(
        "varint-unsigned-ff-int-min",
        "§3.6: length field FF FF FF FF 0F (zig-zag Integer.MIN) as a key length: null key",
        v2_batch([rec_with(kl=write_unsigned_varint(0xFFFFFFFF), kd=b"")]),
    )
    add(
        "varint-nonminimal-gzip",
        "§3.5(b)/§3.6: gzip batch, record length and offsetDelta non-minimal",
        v2_batch(
            [v2_record(offset_delta=Raw(b"\x80\x00"), length=Raw(b"\x92\x80\x00"))],
            attributes=GZIP,
        ),
    )
    add(
        "varint-5th-byte-msb-gzip",
        "§3.5(b)/§3.6: gzip batch, offsetDelta varint with 5th-byte MSB",
        v2_batch([rec_with(od=b"\x80\x80\x80\x80\x80\x00")], attributes=GZIP),
    )
