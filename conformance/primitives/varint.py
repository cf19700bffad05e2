"""Zig-zag varint / varlong, with the exact acceptance rules of Kafka's ``ByteUtils``.

Encoding: zig-zag, then unsigned LEB128 (7 bits a byte, low group first, high bit = more).

=========  ==========  ================================================================
kind       max bytes   what Kafka accepts (docs/format.md §3.6)
=========  ==========  ================================================================
varint     5           5th byte with bit 7 set -> IllegalArgumentException
                       "Varint is too long, the most significant bit in the 5th byte is
                       set, converted value: <hex>"; bits 4-6 of the 5th byte are dropped
                       silently; non-minimal encodings are accepted
varlong    10          10th byte with bit 7 set -> IllegalArgumentException "Varlong is too
                       long, most significant bit in the 10th byte is set, converted value:
                       <hex>"; bits 1-6 of the 10th byte are dropped silently
=========  ==========  ================================================================

Buffer readers take ``(buf, pos, limit)`` and raise :class:`BufferUnderflowError` past
``limit`` (Java's ``ByteBuffer.get``). Stream readers read end of stream as the byte 0xFF,
as Kafka's ``InputStream`` readers do.
"""

from __future__ import annotations

from typing import Protocol

from conformance.errors import BufferUnderflowError, IllegalArgumentError

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _varint_too_long(raw: int) -> IllegalArgumentError:
    return IllegalArgumentError(
        "Varint is too long, the most significant bit in the 5th byte is set, "
        f"converted value: {raw & _MASK32:x}"
    )


def _varlong_too_long(raw: int) -> IllegalArgumentError:
    return IllegalArgumentError(
        "Varlong is too long, most significant bit in the 10th byte is set, "
        f"converted value: {raw & _MASK64:x}"
    )


def read_unsigned_varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Kafka's ``readUnsignedVarint(ByteBuffer)``: unsigned 32-bit value and next position."""
    result = 0
    shift = 0
    while True:
        if pos >= limit:
            raise BufferUnderflowError()
        b = buf[pos]
        pos += 1
        if shift == 28:
            result |= (b & 0x0F) << 28
            if b & 0x80:
                raise _varint_too_long(result)
            return result, pos
        if b < 0x80:
            return result | (b << shift), pos
        result |= (b & 0x7F) << shift
        shift += 7


def read_varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Kafka's ``readVarint(ByteBuffer)``: signed 32-bit zig-zag value and next position."""
    b = buf[pos] if pos < limit else 0x100
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    u, pos = read_unsigned_varint(buf, pos, limit)
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Kafka's ``readVarlong(ByteBuffer)``: signed 64-bit zig-zag value and next position."""
    value = 0
    shift = 0
    while True:
        if pos >= limit:
            raise BufferUnderflowError()
        b = buf[pos]
        pos += 1
        if b & 0x80:
            value = (value | ((b & 0x7F) << shift)) & _MASK64
            shift += 7
            if shift > 63:
                raise _varlong_too_long(value)
        else:
            value = (value | (b << shift)) & _MASK64
            return (value >> 1) ^ -(value & 1), pos


class ByteSource(Protocol):
    """What the stream readers need: ``read()`` returning 0..255, or -1 at end of stream."""

    def read(self) -> int: ...


def read_varint_stream(src: ByteSource) -> int:
    """Kafka's ``readVarint(InputStream)``: end of stream reads as 0xFF."""
    result = 0
    shift = 0
    while True:
        b = src.read() & 0xFF
        if shift == 28:
            result |= (b & 0x0F) << 28
            if b & 0x80:
                raise _varint_too_long(result)
            break
        if b < 0x80:
            result |= b << shift
            break
        result |= (b & 0x7F) << shift
        shift += 7
    return (result >> 1) ^ -(result & 1)


def read_varlong_stream(src: ByteSource) -> int:
    """Kafka's ``readVarlong(InputStream)``: end of stream reads as 0xFF."""
    value = 0
    shift = 0
    while True:
        b = src.read() & 0xFF
        if b & 0x80:
            value = (value | ((b & 0x7F) << shift)) & _MASK64
            shift += 7
            if shift > 63:
                raise _varlong_too_long(value)
        else:
            value = (value | (b << shift)) & _MASK64
            return (value >> 1) ^ -(value & 1)


def write_unsigned_varint(u: int) -> bytes:
    if u < 0:
        raise ValueError("unsigned varint must be >= 0")
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def write_varint(v: int) -> bytes:
    """Minimal zig-zag encoding of a signed 32-bit value (what Kafka's writers emit)."""
    if not -(1 << 31) <= v < (1 << 31):
        raise ValueError(f"varint out of int32 range: {v}")
    return write_unsigned_varint(((v << 1) ^ (v >> 31)) & _MASK32)


def write_varlong(v: int) -> bytes:
    """Minimal zig-zag encoding of a signed 64-bit value."""
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {v}")
    return write_unsigned_varint(((v << 1) ^ (v >> 63)) & _MASK64)


def varint_anomaly(buf: bytes, start: int, end: int, *, is_long: bool = False) -> str | None:
    """For strict mode: why the encoding at ``buf[start:end]`` is not what a Kafka writer emits.

    Returns ``"non-minimal"`` (an overlong encoding), ``"overflow-bits"`` (bits dropped by
    the reader in the last permitted byte), or None.
    """
    n = end - start
    last = buf[end - 1]
    if not is_long and n == 5 and last & 0x70:
        return "overflow-bits"
    if is_long and n == 10 and last & 0x7E:
        return "overflow-bits"
    if n > 1 and last == 0:
        return "non-minimal"
    return None
