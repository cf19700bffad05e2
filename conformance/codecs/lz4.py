"""lz4 (codec 3): Kafka's LZ4 frame subset, read as ``Lz4BlockInputStream`` reads it
(docs/format.md §5.4).

==================  =====  =======================================================================
field               bytes  notes (all little-endian)
==================  =====  =======================================================================
magic               4      ``04 22 4D 18`` (0x184D2204)
FLG                 1      version 01 (bits 6-7), block independence (5) must be set, block
                           checksum (4), content size (3), content checksum (2), reserved (0-1)
BD                  1      bits 4-6: max block size code 4..7 (64 KiB .. 4 MiB); others reserved
[content size]      8      FLG bit 3; read, never checked
HC                  1      ``(xxh32(FLG .. content size) >> 8) & 0xFF``; magic 0: not checked
blocks              ...    ``uint32 size`` (top bit: stored uncompressed) | data
                           [| uint32 xxh32 of the stored bytes, FLG bit 4]
end mark            4      ``00000000``
[content checksum]  4      FLG bit 2; read, not verified
==================  =====  =======================================================================

Mirrors Kafka's ``org.apache.kafka.common.compress.Lz4BlockInputStream`` (over lz4-java's safe
decompressor) and ``Lz4BlockOutputStream`` as the writer (FLG 0x60, BD 0x40: independent
64 KiB blocks, no checksums; a block that does not shrink is stored). Quirks modelled: under
magic 0 the header checksum is not checked and the writer computes it over the magic bytes too
(KAFKA-3160: ``04 22 4D 18 60 40 1A``, the "broken" HC); the header is parsed in the
constructor (an opening error); a missing checksum field is a raw ``BufferUnderflowException``;
bytes after the end mark are ignored; a block decoding to 0 bytes is a read of 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.codecs._stream import (
    CLIENTS,
    IO_EXCEPTION,
    PIECE,
    Codec,
    Decompressed,
    Limit,
    open_error,
)
from conformance.errors import (
    BufferUnderflowError,
    CodecError,
    DecodeError,
    IllegalArgumentError,
)
from conformance.primitives.crc import xxh32

MAGIC = b"\x04\x22\x4d\x18"
_MAGIC_INT = int.from_bytes(MAGIC, "little")
_PREMATURE = "Stream ended prematurely"
_RUNTIME = "java.lang.RuntimeException"
_READ_SIZE = 2048
#: what Kafka's writer puts in FLG and BD, and its block size
FLG, BD, BLOCK_SIZE = 0x60, 0x40, 64 * 1024


def _read_header(payload: bytes, magic: int) -> tuple[int, int, int]:
    """``Lz4BlockInputStream.readHeader``: returns (flg, max block size, position after)."""
    n = len(payload)
    if n < 6:
        raise CodecError(_PREMATURE, java_class=IO_EXCEPTION)
    if int.from_bytes(payload[0:4], "little") != _MAGIC_INT:
        raise CodecError("Stream unsupported (invalid magic bytes)", java_class=IO_EXCEPTION)
    flg = payload[4]
    if flg & 3:
        raise CodecError("Reserved bits must be 0", java_class=_RUNTIME)
    if not (flg >> 5) & 1:
        raise CodecError("Dependent block stream is unsupported", java_class=_RUNTIME)
    if (flg >> 6) & 3 != 1:
        raise CodecError(f"Version {(flg >> 6) & 3} is unsupported", java_class=_RUNTIME)
    bd = payload[5]
    if bd & 15:
        raise CodecError("Reserved2 field must be 0", java_class=_RUNTIME)
    code = (bd >> 4) & 7
    if code < 4:
        raise CodecError("Block size value must be between 4 and 7", java_class=_RUNTIME)
    if bd >> 7:
        raise CodecError("Reserved3 field must be 0", java_class=_RUNTIME)
    max_block = 1 << (2 * code + 8)
    pos = 6
    if flg & 0x08:
        if n - pos < 8:
            raise CodecError(_PREMATURE, java_class=IO_EXCEPTION)
        pos += 8
    if magic == 0:
        if pos + 1 > n:
            raise IllegalArgumentError(f"newPosition > limit: ({pos + 1} > {n})")
        return flg, max_block, pos + 1
    if pos >= n:
        raise BufferUnderflowError()
    if payload[pos] != (xxh32(payload[4:pos]) >> 8) & 0xFF:
        raise CodecError("Stream frame descriptor corrupted", java_class=IO_EXCEPTION)
    return flg, max_block, pos + 1


def read_stream(
    payload: bytes, limit: Limit, magic: int = 2, clients: str = CLIENTS[0]
) -> Decompressed:
    """``Lz4BlockInputStream`` as ``ChunkedBytesStream`` reads it (each block one piece);
    ``magic`` is the enclosing batch's (the HC is ignored under 0)."""
    try:
        flg, max_block, pos = _read_header(payload, magic)
    except DecodeError as e:
        raise open_error(e) from None
    import lz4.block

    n = len(payload)
    out: list[bytes | None] = []
    notes: list[tuple[str, str]] = []
    try:
        while True:
            if n - pos < 4:
                raise CodecError(_PREMATURE, java_class=IO_EXCEPTION)
            raw = int.from_bytes(payload[pos : pos + 4], "little")
            pos += 4
            compressed = not raw & 0x80000000
            size = raw & 0x7FFFFFFF
            if size == 0:
                if flg & 0x04:
                    if n - pos < 4:
                        raise BufferUnderflowError()
                    stored = int.from_bytes(payload[pos : pos + 4], "little")
                    pos += 4
                    if stored != xxh32(b"".join(p for p in out if p)):
                        notes.append(
                            (
                                "lz4-content-checksum-mismatch",
                                "lz4 content checksum does not match (Kafka does not verify it)",
                            )
                        )
                break
            if size > max_block:
                raise CodecError(
                    f"Block size {size} exceeded max: {max_block}", java_class=IO_EXCEPTION
                )
            if n - pos < size:
                raise CodecError(_PREMATURE, java_class=IO_EXCEPTION)
            block = payload[pos : pos + size]
            if compressed:
                try:
                    data = lz4.block.decompress(block, uncompressed_size=max_block)
                except lz4.block.LZ4BlockError:
                    raise CodecError(
                        "net.jpountz.lz4.LZ4Exception: Malformed input", java_class=IO_EXCEPTION
                    ) from None
            else:
                data = bytes(block)
            pos += size
            if flg & 0x10:
                if n - pos < 4:
                    raise BufferUnderflowError()
                if int.from_bytes(payload[pos : pos + 4], "little") != xxh32(block):
                    raise CodecError("Block checksum mismatch", java_class=IO_EXCEPTION)
                pos += 4
            limit.add(len(data))
            out.append(data)
    except DecodeError as e:
        return Decompressed(out, e, policy=PIECE, fill_size=_READ_SIZE, notes=tuple(notes))
    return Decompressed(
        out, policy=PIECE, fill_size=_READ_SIZE, ignored_trailing=n - pos, notes=tuple(notes)
    )


def read_whole(payload: bytes, limit: int) -> bytes | None:
    """A magic-2 payload's data, or None: a fast path beside :func:`read_stream` for the case
    it decides exactly: a header that parses (the same parser), no block or content checksum
    (Kafka's writer sets neither), blocks each within the maximum size and each decoding to
    at least one byte, the end mark as the last four bytes, the data within ``limit``.
    ``Lz4BlockInputStream`` reads such a payload to its end without error or short read;
    anything else is None and :func:`read_stream` replays Java."""
    import lz4.block

    try:
        flg, max_block, pos = _read_header(payload, 2)
    except DecodeError:
        return None
    if flg & 0x14:
        return None
    n = len(payload)
    view = memoryview(payload)
    out: list[bytes | memoryview] = []
    total = 0
    while True:
        if n - pos < 4:
            return None
        raw = int.from_bytes(payload[pos : pos + 4], "little")
        pos += 4
        size = raw & 0x7FFFFFFF
        if size == 0:
            return b"".join(out) if pos == n else None
        if size > max_block or n - pos < size:
            return None
        block = view[pos : pos + size]
        pos += size
        if raw & 0x80000000:
            data: bytes | memoryview = block
        else:
            try:
                data = lz4.block.decompress(block, uncompressed_size=max_block)
            except lz4.block.LZ4BlockError:
                return None
        if not data:
            return None
        total += len(data)
        if total > limit:
            return None
        out.append(data)


# -------------------------------------------------------------------------------- writers


def write_block(data: bytes) -> bytes:
    """``data`` as one raw lz4 block (no size prefix), as lz4-java's compressor writes it."""
    import lz4.block

    return bytes(lz4.block.compress(data, store_size=False))


@dataclass(frozen=True, slots=True)
class Block:
    """One frame block written by hand: ``data`` compressed (``stored=False``, even when it
    grows) or stored uncompressed (size top bit set); ``size`` replaces the size field."""

    data: bytes
    stored: bool = False
    size: int | None = None


def _written(b: Block) -> tuple[bytes, int]:
    """(the block's bytes in the frame, its size field)."""
    stored = b.data if b.stored else write_block(b.data)
    size = len(stored) | (0x80000000 if b.stored else 0)
    return stored, size if b.size is None else b.size


def _kafka_block(chunk: bytes) -> tuple[bytes, int]:
    """``Lz4BlockOutputStream.writeBlock``: compressed, unless that does not shrink it."""
    compressed = write_block(chunk)
    if len(compressed) >= len(chunk):
        return chunk, len(chunk) | 0x80000000
    return compressed, len(compressed)


def write_frame(
    data: bytes | Sequence[bytes | Block],
    *,
    magic: int = 2,
    block_size: int = BLOCK_SIZE,
    flg: int = FLG,
    bd: int = BD,
    content_size: int | None = None,
    header_checksum: str | int | None = None,
    block_checksum: bool | str = False,
    content_checksum: bool | int | str = False,
    end_mark: bool = True,
    trailer: bytes = b"",
) -> bytes:
    """An lz4 frame; the defaults are what Kafka's ``Lz4BlockOutputStream`` writes for ``magic``.

    ``data``: bytes, cut into ``block_size`` blocks as Kafka's writer does; or a sequence giving
    the blocks exactly (bytes: one compressed block; a :class:`Block` for the other kinds).
    ``flg``/``bd`` are written as given, except that FLG bits 3, 4 and 2 are added for
    ``content_size``, ``block_checksum`` and ``content_checksum``. ``header_checksum``: None =
    as Kafka's writer for ``magic`` (broken under 0), "correct" (xxh32 of FLG..content size),
    "broken" (over the magic bytes too, KAFKA-3160) or an explicit byte. ``block_checksum``:
    True = correct, "bad" = inverted. ``content_checksum``: True = correct, an int = that value,
    "missing" = flag set but no checksum bytes. ``end_mark=False`` leaves out the end mark;
    ``trailer`` is appended after everything.
    """
    if content_size is not None:
        flg |= 0x08
    if block_checksum:
        flg |= 0x10
    if content_checksum is not False:
        flg |= 0x04
    desc = bytes([flg & 0xFF, bd & 0xFF])
    if content_size is not None:
        desc += content_size.to_bytes(8, "little")
    if header_checksum is None:
        header_checksum = "broken" if magic == 0 else "correct"
    if header_checksum == "correct":
        hc = (xxh32(desc) >> 8) & 0xFF
    elif header_checksum == "broken":
        hc = (xxh32(MAGIC + desc) >> 8) & 0xFF
    else:
        hc = int(header_checksum) & 0xFF
    if isinstance(data, (bytes, bytearray, memoryview)):
        content = bytes(data)
        chunks = [content[i : i + block_size] for i in range(0, len(content), block_size)]
        written = [_kafka_block(c) for c in chunks]
    else:
        blocks = [b if isinstance(b, Block) else Block(bytes(b)) for b in data]
        content = b"".join(b.data for b in blocks)
        written = [_written(b) for b in blocks]
    parts = [MAGIC, desc, bytes([hc])]
    for stored, size in written:
        parts.append(size.to_bytes(4, "little"))
        parts.append(stored)
        if block_checksum:
            cs = xxh32(stored)
            if block_checksum == "bad":
                cs ^= 0xFFFFFFFF
            parts.append(cs.to_bytes(4, "little"))
    if end_mark:
        parts.append(b"\x00\x00\x00\x00")
    if content_checksum is True:
        parts.append(xxh32(content).to_bytes(4, "little"))
    elif isinstance(content_checksum, int) and not isinstance(content_checksum, bool):
        parts.append((content_checksum & 0xFFFFFFFF).to_bytes(4, "little"))
    parts.append(trailer)
    return b"".join(parts)


def write_stream(data: bytes, magic: int = 2) -> bytes:
    """The payload as Kafka's Java producer writes it (``Lz4BlockOutputStream``: one frame;
    under magic 0 with Kafka's pre-0.10 header checksum)."""
    return write_frame(data, magic=magic)


CODEC = Codec(
    id=3,
    name="lz4",
    java_stream="org.apache.kafka.common.compress.Lz4BlockInputStream",
    read_stream=read_stream,
    write_stream=write_stream,
    read_policy=PIECE,
    fill_size=_READ_SIZE,
    fill_size_2_8=1,
    legacy_magics=True,
    since=(0, 8, 2),
    skip_to_stream=True,
    read_whole=read_whole,
)
