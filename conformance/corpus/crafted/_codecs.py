"""Codec framings for the crafted cases: LZ4 frames, xerial snappy, gzip members, zstd frames.

Every knob a crafted ``gzip-`` / ``snappy-`` / ``lz4-`` / ``zstd-`` / ``codec-`` case needs
(docs/format.md §5). Moved unchanged from the former ``crafted.py``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from conformance import codecs
from conformance.primitives.crc import xxh32


def lz4_block(data: bytes) -> bytes:
    import lz4.block

    return bytes(lz4.block.compress(data, store_size=False))


LZ4_MAGIC = b"\x04\x22\x4d\x18"


def lz4_custom(
    blocks: Sequence[bytes | tuple[bytes, str]],
    *,
    flg: int = 0x60,
    bd: int = 0x40,
    content_size: int | None = None,
    hc: str | int = "correct",
    block_checksum: bool | str = False,
    content_checksum: bool | int | str = False,
    end_mark: bool = True,
    trailer: bytes = b"",
) -> bytes:
    """A hand-made LZ4 frame (spec §5.4).

    ``blocks``: each a data chunk (compressed) or ``(chunk, "raw"|"lz4"|"size:<hex>")``.
    ``hc``: "correct" (xxh32 of FLG..content size), "broken" (over magic+descriptor, the
    KAFKA-3160 bug) or an explicit byte. FLG bits 3/4/2 are set from ``content_size``,
    ``block_checksum`` and ``content_checksum`` when those are given. ``block_checksum="bad"``
    stores wrong block checksums; ``content_checksum`` True = correct, an int = that value,
    "missing" = flag set but no checksum bytes.
    """
    if content_size is not None:
        flg |= 0x08
    if block_checksum:
        flg |= 0x10
    if content_checksum is not False:
        flg |= 0x04
    desc = bytes([flg & 0xFF, bd & 0xFF])
    if content_size is not None:
        desc += struct.pack("<Q", content_size)
    if hc == "correct":
        hcb = (xxh32(desc) >> 8) & 0xFF
    elif hc == "broken":
        hcb = (xxh32(LZ4_MAGIC + desc) >> 8) & 0xFF
    else:
        hcb = int(hc) & 0xFF
    parts = [LZ4_MAGIC, desc, bytes([hcb])]
    whole = bytearray()
    for blk in blocks:
        kind = "lz4"
        if isinstance(blk, tuple):
            blk, kind = blk
        whole += blk
        if kind == "raw":
            stored, size = blk, len(blk) | 0x80000000
        elif kind.startswith("size:"):
            stored, size = lz4_block(blk), int(kind[5:], 16)
        else:
            stored = lz4_block(blk)
            size = len(stored)
        parts.append(struct.pack("<I", size))
        parts.append(stored)
        if block_checksum:
            cs = xxh32(stored)
            if block_checksum == "bad":
                cs ^= 0xFFFFFFFF
            parts.append(struct.pack("<I", cs))
    if end_mark:
        parts.append(b"\x00\x00\x00\x00")
    if content_checksum is True:
        parts.append(struct.pack("<I", xxh32(bytes(whole))))
    elif isinstance(content_checksum, int) and not isinstance(content_checksum, bool):
        parts.append(struct.pack("<I", content_checksum & 0xFFFFFFFF))
    parts.append(trailer)
    return b"".join(parts)


XERIAL_MAGIC = b"\x82SNAPPY\x00"


def xerial_header(version: int = 1, compat: int = 1, *, little_endian: bool = False) -> bytes:
    fmt = "<ii" if little_endian else ">ii"
    return XERIAL_MAGIC + struct.pack(fmt, version, compat)


def xerial(
    chunks: Sequence[bytes], *, header: bytes | None = None, block: int | None = None
) -> bytes:
    """xerial framing: header then ``int32 length | raw snappy block`` per chunk (spec §5.3).

    ``chunks`` are uncompressed pieces (each compressed as one raw block); ``block`` splits
    one piece further (SnappyOutputStream's 32 KiB input blocks).
    """
    parts = [xerial_header() if header is None else header]
    pieces: list[bytes] = []
    for c in chunks:
        if block:
            pieces.extend(c[i : i + block] for i in range(0, len(c), block))
        else:
            pieces.append(c)
    for p in pieces:
        raw = codecs.snappy_raw(p)
        parts.append(struct.pack(">i", len(raw)) + raw)
    return b"".join(parts)


def gzip_member(
    data: bytes,
    *,
    flags: int = 0,
    extra: bytes = b"",
    fname: bytes = b"",
    comment: bytes = b"",
    hcrc: int | None = None,
    method: int = 8,
    os_byte: int = 0xFF,
    level: int = 6,
    crc: int | None = None,
    isize: int | None = None,
    magic: bytes = b"\x1f\x8b",
) -> bytes:
    """One RFC 1952 member with optional FEXTRA/FNAME/FCOMMENT/FHCRC (spec §5.2)."""
    if extra:
        flags |= 0x04
    if fname:
        flags |= 0x08
    if comment:
        flags |= 0x10
    if hcrc is not None:
        flags |= 0x02
    hdr = magic + bytes([method, flags]) + b"\x00\x00\x00\x00" + bytes([0, os_byte])
    if extra:
        hdr += struct.pack("<H", len(extra)) + extra
    if fname:
        hdr += fname + b"\x00"
    if comment:
        hdr += comment + b"\x00"
    if hcrc is not None:
        good = zlib.crc32(hdr) & 0xFFFF
        hdr += struct.pack("<H", good if hcrc == -1 else hcrc)
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    trailer = struct.pack(
        "<II",
        (zlib.crc32(data) & 0xFFFFFFFF) if crc is None else crc,
        (len(data) & 0xFFFFFFFF) if isize is None else isize,
    )
    return hdr + body + trailer


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_raw_frame(
    data: bytes,
    *,
    content_size: int | None = None,
    fcs_bytes: int = 8,
    checksum: bool | int = False,
    block: int = 64 * 1024,
) -> bytes:
    """A zstd frame made of raw (stored) blocks, with full control of the header.

    ``content_size`` None: no Frame_Content_Size (window descriptor instead); otherwise the
    size is written in ``fcs_bytes`` (8 or 4) bytes with Single_Segment off. ``checksum``
    True = correct XXH64 low 32 bits; an int = that value.
    """
    import xxhash

    fcs_flag = {0: 0, 4: 2, 8: 3}[fcs_bytes if content_size is not None else 0]
    fhd = (fcs_flag << 6) | (0x04 if checksum is not False else 0)
    hdr = ZSTD_MAGIC + bytes([fhd])
    hdr += bytes([(20 - 10) << 3])  # window descriptor: 1 MiB window
    if content_size is not None:
        hdr += content_size.to_bytes(fcs_bytes, "little")
    blocks = []
    pieces = [data[i : i + block] for i in range(0, len(data), block)] or [b""]
    for i, p in enumerate(pieces):
        last = 1 if i == len(pieces) - 1 else 0
        bh = last | (0 << 1) | (len(p) << 3)
        blocks.append(bh.to_bytes(3, "little") + p)
    out = hdr + b"".join(blocks)
    if checksum is True:
        out += struct.pack("<I", xxhash.xxh64_intdigest(data) & 0xFFFFFFFF)
    elif checksum is not False:
        out += struct.pack("<I", int(checksum) & 0xFFFFFFFF)
    return out


def zstd_std(data: bytes, *, content_size: bool = True, checksum: bool = False) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(
        level=3, write_content_size=content_size, write_checksum=checksum
    ).compress(data)
