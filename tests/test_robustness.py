"""The decoder on arbitrary and mutated bytes: only the documented error hierarchy, bounded work."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import DecodeError, DecompressionLimitError, decode
from conformance import strategies as kst
from conformance.codecs import CODECS, NONE
from conformance.wire.batch import seal_v2
from conformance.wire.builder import BatchBuilder


def _check(data: bytes) -> None:
    for mode in ("memory", "file"):
        for profile in ("kafka", "strict"):
            result = decode(data, mode=mode, profile=profile, decompressed_limit=1 << 20)
            assert result.outcome in ("ok", "partial", "error")
            if result.outcome == "error":
                assert isinstance(result.error, DecodeError)
                assert result.error.kafka_exception.count(".") >= 2
                assert result.error.position is not None
            result.to_dict()


@settings(deadline=2000)
@given(st.binary(max_size=512))
def test_arbitrary_bytes(data: bytes) -> None:
    _check(data)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    case = draw(kst.batches(max_records=5))
    data = bytearray(case.data)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    if case.magic == 2 and len(data) >= 61 and draw(st.booleans()):
        return seal_v2(bytes(data))  # get past the CRC into the record parsers
    return bytes(data)


@settings(deadline=2000)
@given(mutated())
def test_mutated_batches(data: bytes) -> None:
    _check(data)


@settings(deadline=2000)
@given(kst.batches(max_records=5), st.integers(0, 200))
def test_truncation_is_partial_or_error_never_crash(case: kst.BatchCase, cut: int) -> None:
    data = case.data[: max(0, len(case.data) - 1 - cut)]
    result = decode(data)
    assert result.outcome in ("partial", "ok") or isinstance(result.error, DecodeError)
    if result.outcome == "ok":
        # only when the cut falls exactly between entries (an uncompressed v0/v1 message set
        # is one entry per message): what is left is whole entries, fewer records
        assert sum(b.size_in_bytes for b in result.batches) == len(data)
        assert len(result.records) < len(case.records)


def test_gzip_bomb_is_bounded() -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = c.compress(b"\0" * (64 << 20)) + c.flush()
    payload = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + b"\0" * 8
    b = BatchBuilder()
    b.append(0, None, b"x")
    raw = bytearray(b.build())
    raw[22] |= 1  # gzip
    data = seal_v2(bytes(raw[:61]) + payload)
    result = decode(data, decompressed_limit=1 << 20)
    assert result.outcome == "error"
    assert isinstance(result.error, DecompressionLimitError)
    assert result.error.kafka_exception == "org.apache.kafka.common.KafkaException"


@pytest.mark.parametrize("codec", [c.name for c in CODECS.values() if c.id != NONE])
def test_a_codec_stream_stays_ended(codec: str) -> None:
    """Java's streams return -1 for every read after their end; the kit's replay of them once
    handed out the last piece again on the second read past the end (found by the produce
    differential: an lz4 record's header count read at the end of the stream)."""
    from conformance import codecs
    from conformance.wire.java_stream import JavaStreamReader

    data = b"0123456789" * 3
    src = JavaStreamReader(codecs.read_stream(codecs.CODEC_IDS[codec], codecs.write_stream(
        codecs.CODEC_IDS[codec], data), 2))  # fmt: skip
    assert src.read_fully(len(data)) == data
    assert [src.read() for _ in range(5)] == [-1] * 5
    assert src.read_fully(3) == b""
