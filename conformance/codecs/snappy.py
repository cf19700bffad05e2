"""snappy (codec 2): xerial framing, read as snappy-java's ``SnappyInputStream`` reads it
(docs/format.md §5.3).

==  ======================  =====  ===========================================================
@   field                   bytes  notes
==  ======================  =====  ===========================================================
0   magic                   8      ``82 'SNAPPY' 00``
8   version                 4      int32 big-endian, Java writes 1; not checked
12  min compatible version  4      int32 big-endian, Java writes 1; not checked
16  chunks                  ...    ``int32 length | raw snappy block`` each (32 KiB of input
                                   per chunk in ``SnappyOutputStream``)
==  ======================  =====  ===========================================================

A raw snappy block is ``varint uncompressed length | snappy elements``.

Mirrors snappy-java's ``org.xerial.snappy.SnappyInputStream`` (Kafka's ``SnappyCompression``
opens it for every magic) and ``SnappyOutputStream`` as the writer. Quirks modelled: an empty
payload fails on open; anything shorter than 16 bytes or not starting with the magic is read
in the constructor as ONE raw (unframed) block; the header's version fields are not checked;
1-3 trailing bytes end the stream silently; a chunk length of ``0x82534E41`` starts a
concatenated header (version < 1 is an error, a bad magic makes one read return -1); a negative
or > 512 MiB length is a ``SnappyError`` (a ``java.lang.Error``); a block's uncompressed length
is read as a Java int and an output array allocated before decompressing (a new one only when
the length is larger than the current one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conformance.codecs._stream import (
    CLIENTS,
    FILL,
    IO_EXCEPTION,
    Codec,
    Decompressed,
    Limit,
    open_error,
)
from conformance.errors import CodecError, OutOfMemoryError, jvm_allocate

_SNAPPY_IO = "org.xerial.snappy.SnappyIOException"
_SNAPPY_ERROR = "org.xerial.snappy.SnappyError"
_NEGATIVE_ARRAY = "java.lang.NegativeArraySizeException"

MAGIC = b"\x82SNAPPY\x00"
_HEAD = int.from_bytes(MAGIC[:4], "big")  # a chunk length equal to this starts a header
_MAX_CHUNK = 512 * 1024 * 1024
#: ``SnappyOutputStream``'s default block size (input bytes per chunk)
BLOCK_SIZE = 32 * 1024
_READ_SIZE = 2048


def _uncompressed_length(block: bytes) -> int | None:
    """snappy's ``GetUncompressedLength`` (Varint::Parse32WithLimit); None when invalid."""
    if len(block) >= 2:  # the one- and two-byte lengths (up to 16 KiB) without the loop
        b0 = block[0]
        if b0 < 0x80:
            return b0
        b1 = block[1]
        if b1 < 0x80:
            return (b0 & 0x7F) | (b1 << 7)
    result = 0
    for i in range(5):
        if i >= len(block):
            return None
        b = block[i]
        if i == 4:
            return result | (b << 28) if b < 16 else None
        result |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return result
    return None  # pragma: no cover


def _read_block(block: bytes, limit: Limit, array: int | None = None) -> bytes:
    """One raw snappy block, as snappy-java handles it: the uncompressed length is read as a
    Java ``int``; a new output array is made (``new byte[length]``) unless the current one
    (``array`` bytes; None: none yet, always the case for a raw stream) is at least as long,
    and the native call refuses an array shorter than the block's real length."""
    length = _uncompressed_length(block)
    if length is None:
        raise CodecError("PARSING_ERROR(2)", java_class=IO_EXCEPTION)
    java_length = length - (1 << 32) if length >= 1 << 31 else length
    if array is None or java_length > array:
        if java_length < 0:
            raise CodecError(str(java_length), java_class=_NEGATIVE_ARRAY)
        jvm_allocate(java_length)
    elif length > array:
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=IO_EXCEPTION)
    limit.add(length)
    import cramjam

    try:
        out = bytes(cramjam.snappy.decompress_raw(block))
    except Exception:  # cramjam.DecompressionError
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=IO_EXCEPTION) from None
    if len(out) != length:  # pragma: no cover - snappy guarantees this
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=IO_EXCEPTION)
    return out


def read_stream(
    payload: bytes, limit: Limit, magic: int = 2, clients: str = CLIENTS[0]
) -> Decompressed:
    """``SnappyInputStream`` as ``ChunkedBytesStream`` reads it (each chunk one piece)."""
    n = len(payload)
    if n == 0:
        raise open_error(
            CodecError("[EMPTY_INPUT] Cannot decompress empty stream", java_class=_SNAPPY_IO)
        )
    if n < 16 or payload[:8] != MAGIC:
        try:  # the raw format is decompressed in SnappyInputStream's constructor
            return Decompressed([_read_block(payload, limit)], policy=FILL, fill_size=_READ_SIZE)
        except (CodecError, OutOfMemoryError) as e:  # wrapForInput: catch (Throwable e)
            raise open_error(e) from None
    out: list[bytes | None] = []
    notes: list[tuple[str, str]] = []
    version = int.from_bytes(payload[8:12], "big", signed=True)
    compat = int.from_bytes(payload[12:16], "big", signed=True)
    if (version, compat) != (1, 1):
        notes.append(
            (
                "snappy-xerial-header-version",
                f"xerial header version/compat {version}/{compat}, Java writes 1/1 "
                "(snappy-java does not check them)",
            )
        )
    pos = 16
    trailing = 0
    array: int | None = None  # the length of snappy-java's current output array
    array_in: int | None = None  # the length of its compressed-chunk array (1.1.8.1)
    try:
        while True:
            if n - pos < 4:
                trailing = n - pos
                break
            size = int.from_bytes(payload[pos : pos + 4], "big", signed=True)
            pos += 4
            if size & 0xFFFFFFFF == _HEAD:
                if n - pos < 12:
                    raise CodecError(
                        "[FAILED_TO_UNCOMPRESS] Insufficient header size in a concatenated block",
                        java_class=_SNAPPY_IO,
                    )
                header = payload[pos - 4 : pos + 12]
                pos += 12
                if header[:8] != MAGIC:
                    # hasNextChunk() returns false once, without finishing the stream: this
                    # read() returns -1 / short, the next one carries on after the header
                    out.append(None)
                    notes.append(
                        (
                            "snappy-xerial-header-version",
                            "concatenated xerial header with a bad magic",
                        )
                    )
                    continue
                version = int.from_bytes(header[8:12], "big", signed=True)
                if version < 1:
                    raise CodecError(
                        f"[INCOMPATIBLE_VERSION] Compressed with an incompatible codec version "
                        f"{version}. At least version 1 is required",
                        java_class=_SNAPPY_IO,
                    )
                continue
            if clients == "2.8":
                # snappy-java 1.1.8.1 (Kafka 2.x) has neither bound check (CVE-2023-34455):
                # it allocates the chunk's array first
                if size < 0 and array_in is None:
                    raise CodecError(str(size), java_class="java.lang.NegativeArraySizeException")
                if size < 0:
                    # the array of the previous chunk is kept and handed to the native
                    # decompressor with a negative length (read as a huge size_t): it decodes
                    # that chunk again, then runs into memory past it and fails (the error
                    # Kafka 2.8.2 gives; undefined behaviour in snappy-java 1.1.8.1)
                    raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=IO_EXCEPTION)
                if array_in is None or size > array_in:
                    jvm_allocate(size)
                    array_in = size
            elif size < 0:
                raise CodecError(
                    f"[INVALID_CHUNK_SIZE] chunkSize is too big or negative : {size}",
                    java_class=_SNAPPY_ERROR,
                )
            elif size > _MAX_CHUNK:
                raise CodecError(
                    f"[FAILED_TO_UNCOMPRESS] Received chunkSize {size:,} is greater than max "
                    f"configured chunk size {_MAX_CHUNK:,}",
                    java_class=_SNAPPY_ERROR,
                )
            if n - pos < size:
                raise CodecError("failed to read chunk", java_class=IO_EXCEPTION)
            block = payload[pos : pos + size]
            out.append(_read_block(block, limit, array))
            if array is None or len(out[-1]) > array:  # snappy-java made a new array
                array = len(out[-1])
            pos += size
    except (CodecError, OutOfMemoryError) as e:
        return Decompressed(out, e, policy=FILL, fill_size=_READ_SIZE, notes=tuple(notes))
    return Decompressed(
        out, policy=FILL, fill_size=_READ_SIZE, ignored_trailing=trailing, notes=tuple(notes)
    )


#: the xerial header ``SnappyOutputStream`` writes (magic, version 1, compatible version 1)
_JAVA_HEADER = MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"


def read_whole(payload: bytes, limit: int) -> bytes | None:
    """The payload's data, or None: a fast path beside :func:`read_stream` for the case it
    decides exactly: one raw block, or Java's xerial header followed by whole chunks up to the
    last byte (no concatenated header, no trailing bytes), each length in range and each block
    decompressing to its stated length (not 0), the data within ``limit``.
    ``SnappyInputStream`` reads such a payload to its end without error or short read;
    anything else is None and :func:`read_stream` replays Java. The arrays snappy-java would
    allocate are reported as :func:`read_stream` reports them (``jvm_allocate``)."""
    n = len(payload)
    if n == 0:
        return None
    if n < 16 or payload[:8] != MAGIC:
        blocks = [(0, n)]
    elif payload[:16] != _JAVA_HEADER:
        return None
    else:
        blocks = []
        pos = 16
        while pos < n:
            if n - pos < 4:
                return None
            size = int.from_bytes(payload[pos : pos + 4], "big")  # unsigned: < 0 is > max
            pos += 4
            if size > _MAX_CHUNK or size > n - pos:
                return None
            blocks.append((pos, pos + size))
            pos += size
    decompress = _raw_decompressor()
    view = memoryview(payload)
    out = []
    total = 0
    array: int | None = None
    for start, stop in blocks:
        length = _uncompressed_length(payload[start : min(stop, start + 5)])
        if not length or length >= 1 << 31:  # None (invalid), 0 (an empty read), or < 0
            return None
        total += length
        if total > limit:
            return None
        if array is None or length > array:
            try:
                jvm_allocate(length)
            except OutOfMemoryError:
                return None
            array = length
        try:
            block = decompress(view[start:stop])
        except Exception:  # noqa: BLE001 - cramjam.DecompressionError: the model decides
            return None
        if len(block) != length:  # pragma: no cover - snappy guarantees this
            return None
        out.append(block)
    return bytes(out[0]) if len(out) == 1 else b"".join(out)


_DECOMPRESS_RAW: Callable[[memoryview], Any] | None = None


def _raw_decompressor() -> Callable[[memoryview], Any]:
    """``cramjam.snappy.decompress_raw``, imported on first use (an ``import`` statement per
    payload was a tenth of a small payload's time)."""
    global _DECOMPRESS_RAW
    if _DECOMPRESS_RAW is None:
        import cramjam

        _DECOMPRESS_RAW = cramjam.snappy.decompress_raw
    return _DECOMPRESS_RAW


# -------------------------------------------------------------------------------- writers


def write_raw(data: bytes) -> bytes:
    """One raw (unframed) snappy block: ``varint length | elements`` (``Snappy.compress``)."""
    import cramjam

    return bytes(cramjam.snappy.compress_raw(data))


def write_header(
    version: int = 1, compat: int = 1, *, little_endian: bool = False, magic: bytes = MAGIC
) -> bytes:
    """The 16-byte xerial stream header; ``little_endian`` writes the two ints the wrong way
    round (C9), ``version``/``compat`` other than 1/1 are what snappy-java does not check,
    ``magic`` replaces the 8 magic bytes."""
    order = "little" if little_endian else "big"
    return magic + version.to_bytes(4, order, signed=True) + compat.to_bytes(4, order, signed=True)


def write_chunk(block: bytes, *, length: int | None = None) -> bytes:
    """One xerial chunk ``int32 length | block`` around an already compressed ``block``;
    ``length`` writes another length field (negative, too big, longer than the block...)."""
    size = len(block) if length is None else length
    return size.to_bytes(4, "big", signed=size < 0) + block


def write_xerial(
    data: bytes | Sequence[bytes],
    *,
    block: int | None = BLOCK_SIZE,
    header: bool = True,
    version: int = 1,
    compat: int = 1,
    little_endian: bool = False,
) -> bytes:
    """xerial framing; the defaults are what ``SnappyOutputStream`` writes.

    ``data``: the bytes to compress, or a sequence of pieces, one chunk each. ``block`` splits
    (each piece) into chunks of at most that many input bytes (None: a piece is one chunk,
    even an empty one). ``header=False`` leaves the stream header out (chunks only);
    ``version``, ``compat``, ``little_endian``: see :func:`write_header`.
    """
    parts = [write_header(version, compat, little_endian=little_endian)] if header else []
    pieces: list[bytes] = []
    for piece in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
        piece = bytes(piece)
        if block:
            pieces.extend(piece[i : i + block] for i in range(0, len(piece), block))
        else:
            pieces.append(piece)
    parts.extend(write_chunk(write_raw(p)) for p in pieces)
    return b"".join(parts)


def write_stream(data: bytes, magic: int = 2) -> bytes:
    """The payload as Kafka's Java producer writes it (``SnappyOutputStream``: xerial framing,
    32 KiB blocks)."""
    return write_xerial(data)


CODEC = Codec(
    id=2,
    name="snappy",
    java_stream="org.xerial.snappy.SnappyInputStream",
    read_stream=read_stream,
    write_stream=write_stream,
    read_policy=FILL,
    fill_size=_READ_SIZE,
    fill_size_2_8=1,
    legacy_magics=True,
    since=(0, 8),
    read_whole=read_whole,
)
