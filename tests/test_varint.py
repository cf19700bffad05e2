"""Varint/varlong acceptance rules (docs/format.md §3.6), vectors from Kafka's ByteUtilsTest as
quoted there."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.errors import BufferUnderflowError, IllegalArgumentError
from conformance.primitives.varint import (
    read_varint,
    read_varint_stream,
    read_varlong,
    varint_anomaly,
    write_varint,
    write_varlong,
)

SPEC_VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7E"),
    (-64, "7F"),
    (64, "80 01"),
    (-65, "81 01"),
    (8191, "FE 7F"),
    (134217728, "80 80 80 80 01"),
    (2**31 - 1, "FE FF FF FF 0F"),
    (-(2**31), "FF FF FF FF 0F"),
]
SPEC_VARLONGS = [
    (2**63 - 1, "FE FF FF FF FF FF FF FF FF 01"),
    (-(2**63), "FF FF FF FF FF FF FF FF FF 01"),
]


@pytest.mark.parametrize(("value", "hexed"), SPEC_VARINTS)
def test_spec_varint_vectors(value: int, hexed: str) -> None:
    raw = bytes.fromhex(hexed)
    assert write_varint(value) == raw
    assert read_varint(raw, 0, len(raw)) == (value, len(raw))


@pytest.mark.parametrize(("value", "hexed"), SPEC_VARLONGS)
def test_spec_varlong_vectors(value: int, hexed: str) -> None:
    raw = bytes.fromhex(hexed)
    assert write_varlong(value) == raw
    assert read_varlong(raw, 0, len(raw)) == (value, len(raw))


def test_fifth_byte_msb_is_rejected_with_kafkas_message() -> None:
    raw = bytes.fromhex("FF FF FF FF 8F")
    with pytest.raises(IllegalArgumentError) as e:
        read_varint(raw, 0, len(raw))
    assert e.value.message == (
        "Varint is too long, the most significant bit in the 5th byte is set, "
        "converted value: ffffffff"
    )


def test_fifth_byte_overflow_bits_dropped_silently() -> None:
    # bits 4-6 of the 5th byte are discarded: 0x7F reads like 0x0F (docs/format.md §3.6)
    a = bytes.fromhex("FE FF FF FF 7F")
    b = bytes.fromhex("FE FF FF FF 0F")
    assert read_varint(a, 0, 5) == read_varint(b, 0, 5)
    assert varint_anomaly(a, 0, 5) == "overflow-bits"


def test_non_minimal_accepted() -> None:
    raw = bytes.fromhex("80 00")
    assert read_varint(raw, 0, 2) == (0, 2)
    assert varint_anomaly(raw, 0, 2) == "non-minimal"


def test_tenth_byte_continuation_rejected() -> None:
    raw = bytes.fromhex("FF" * 10 + "01")
    with pytest.raises(IllegalArgumentError, match="Varlong is too long"):
        read_varlong(raw, 0, len(raw))


def test_truncated_varint_underflows() -> None:
    with pytest.raises(BufferUnderflowError):
        read_varint(b"\x80\x80", 0, 2)


class _Src:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def read(self) -> int:
        if self.pos < len(self.data):
            self.pos += 1
            return self.data[self.pos - 1]
        return -1


def test_stream_reader_reads_eof_as_ff() -> None:
    # 0x80 then EOF: EOF bytes read as 0xFF, so the 5th byte has its MSB set
    with pytest.raises(IllegalArgumentError, match="Varint is too long"):
        read_varint_stream(_Src(b"\x80"))


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_roundtrip(v: int) -> None:
    raw = write_varint(v)
    assert read_varint(raw, 0, len(raw)) == (v, len(raw))
    assert read_varint_stream(_Src(raw)) == v


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_roundtrip(v: int) -> None:
    raw = write_varlong(v)
    assert read_varlong(raw, 0, len(raw)) == (v, len(raw))
