"""Compression codecs, read exactly as Kafka's Java input streams read them (spec §5).

==  ======  ===========================================================================
id  name    framing Kafka reads
==  ======  ===========================================================================
0   none    —
1   gzip    RFC 1952 members (JDK ``GZIPInputStream``): header parsed when the stream
            opens; concatenated members read as one; junk after a member ignored unless
            it parses as another gzip header; trailer CRC-32/ISIZE verified
2   snappy  xerial framing ``82 'SNAPPY' 00 | int32 version | int32 compat`` then
            ``int32 len | raw block`` chunks (snappy-java ``SnappyInputStream``); anything
            shorter than 16 bytes or without the magic is ONE raw snappy block; 1-3
            trailing bytes ignored; a concatenated header with version < 1 is an error,
            one with a bad magic ends the stream
3   lz4     Kafka's LZ4 frame subset (``Lz4BlockInputStream``): ``04 22 4D 18 | FLG | BD |
            [content size] | HC`` then ``uint32le size | block [| xxh32]`` ... ``0``;
            HC ignored under magic 0 (KAFKA-3160), content checksum read, not verified
4   zstd    zstd frames (zstd-jni): several frames and skippable frames accepted
==  ======  ===========================================================================

A decompressed payload is modelled as the Java input stream Kafka reads it through: a list of
*pieces* (the most one ``read(len)`` call of the Java codec stream can return: an lz4 block, a
gzip member, a zstd frame; ``None`` is a snappy-java read that returns -1 mid-stream) and a
terminal condition (``error``, or a clean end). ``record.JavaStreamReader`` replays it through
``ChunkedBytesStream`` exactly as Kafka does, so an error surfaces at the same read as in Java.
Failures Java raises while *opening* the stream are raised here directly, wrapped as Kafka
wraps them (``KafkaException(cause)``). Decompression is bounded by ``limit`` bytes
(:class:`DecompressionLimitError`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from conformance.primitives.crc import xxh32
from conformance.errors import (
    BufferUnderflowError,
    CodecError,
    DecodeError,
    DecompressionLimitError,
    IllegalArgumentError,
    KafkaError,
    OutOfMemoryError,
    jvm_allocate,
)

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS = {v: k for k, v in CODEC_NAMES.items()}

DEFAULT_DECOMPRESSED_LIMIT = 256 * 1024 * 1024

_IO = "java.io.IOException"
_EOF = "java.io.EOFException"
_ZIP = "java.util.zip.ZipException"
_SNAPPY_IO = "org.xerial.snappy.SnappyIOException"
_SNAPPY_ERROR = "org.xerial.snappy.SnappyError"
_NEGATIVE_ARRAY = "java.lang.NegativeArraySizeException"
_ZSTD_IO = "com.github.luben.zstd.ZstdIOException"


def codec_name(codec_id: int) -> str:
    return CODEC_NAMES.get(codec_id, f"unknown-{codec_id}")


#: how a Java codec stream's read(len) fills its buffer
PIECE = "piece"  # at most the rest of the current piece (lz4 block, gzip member, zstd frame)
FILL = "fill"  # keeps reading pieces until len bytes or a -1 (snappy-java)

#: ChunkedBytesStream buffer size per codec (``Compression.decompressionOutputSize``)
FILL_SIZE = {1: 16 * 1024, 2: 2 * 1024, 3: 2 * 1024, 4: 16 * 1024}


@dataclass(frozen=True, slots=True)
class Decompressed:
    pieces: list[bytes | None]
    error: DecodeError | None = None
    #: the error cuts the last piece short: a read reaching past it raises (its bytes lost)
    lossy: bool = False
    policy: str = PIECE
    fill_size: int = 2048
    #: payload bytes the Java stream silently ignores after its logical end (strict finding)
    ignored_trailing: int = 0
    #: other anomalies Kafka accepts silently, as (finding code, message) pairs
    notes: tuple[tuple[str, str], ...] = ()

    @property
    def data(self) -> bytes:
        """All decompressed bytes (for diagnostics; Java may not deliver all of them)."""
        return b"".join(p for p in self.pieces if p)


class _Limit:
    __slots__ = ("limit", "total")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0

    def remaining(self) -> int:
        return self.limit - self.total

    def add(self, n: int) -> None:
        self.total += n
        if self.total > self.limit:
            raise DecompressionLimitError(
                f"Decompressed size exceeds the configured limit of {self.limit} bytes "
                "(kafka-conformance resource limit)"
            )


def _open_error(cause: DecodeError) -> KafkaError:
    return KafkaError.wrapping(cause)


# --------------------------------------------------------------------------------------- gzip

_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 1, 2, 4, 8, 16


class _GzipHeaderError(Exception):
    def __init__(self, err: CodecError) -> None:
        self.err = err


def _gzip_header(buf: bytes, pos: int) -> int:
    """JDK ``GZIPInputStream.readHeader``; returns the position after the header."""
    n = len(buf)

    def ubyte(p: int) -> int:
        if p >= n:
            raise _GzipHeaderError(CodecError(None, java_class=_EOF))
        return buf[p]

    start = pos
    b0 = ubyte(pos)
    b1 = ubyte(pos + 1)
    if (b1 << 8 | b0) != 0x8B1F:
        raise _GzipHeaderError(CodecError("Not in GZIP format", java_class=_ZIP))
    if ubyte(pos + 2) != 8:
        raise _GzipHeaderError(CodecError("Unsupported compression method", java_class=_ZIP))
    flg = ubyte(pos + 3)
    pos += 4
    if pos + 6 > n:
        raise _GzipHeaderError(CodecError(None, java_class=_EOF))
    pos += 6
    if flg & _FEXTRA:
        m = ubyte(pos) | ubyte(pos + 1) << 8
        pos += 2
        if pos + m > n:
            raise _GzipHeaderError(CodecError(None, java_class=_EOF))
        pos += m
    if flg & _FNAME:
        while ubyte(pos) != 0:
            pos += 1
        pos += 1
    if flg & _FCOMMENT:
        while ubyte(pos) != 0:
            pos += 1
        pos += 1
    if flg & _FHCRC:
        v = zlib.crc32(buf[start:pos]) & 0xFFFF
        stored = ubyte(pos) | ubyte(pos + 1) << 8
        if stored != v:
            raise _GzipHeaderError(CodecError("Corrupt GZIP header", java_class=_ZIP))
        pos += 2
    return pos


def _zlib_message(e: zlib.error) -> str:
    text = str(e)
    marker = "while decompressing data: "
    i = text.find(marker)
    return text[i + len(marker) :] if i >= 0 else "Invalid ZLIB data format"


_GZIP_INPUT_CHUNK = 8 * 1024  # Kafka: new GZIPInputStream(in, 8 * 1024)


def _gunzip(payload: bytes, limit: _Limit) -> Decompressed:
    """``GZIPInputStream`` read by ``ChunkedBytesStream``, call for call.

    Each piece is what one ``read(b, 0, 16 KiB)`` returns: ``InflaterInputStream.read`` calls
    ``inflate`` on the input it holds and refills that input 8 KiB at a time
    (``fill()``) until ``inflate`` yields bytes, so a read returns at most what one input chunk
    inflates to. An error thrown inside a read loses that read's bytes (they never reach the
    caller); the reads before it stand. Members follow one another as ``readTrailer`` reads
    them: the trailer and next header come from the inflater's leftover input first.
    """
    try:
        pos = _gzip_header(payload, 0)
    except _GzipHeaderError as e:
        raise _open_error(e.err) from None
    pieces: list[bytes | None] = []
    n = len(payload)
    read_size = FILL_SIZE[GZIP]

    def result(error: DecodeError | None = None, trailing: int = 0) -> Decompressed:
        return Decompressed(pieces, error, False, PIECE, read_size, trailing)

    underlying = pos  # next byte fill() takes from the payload
    held = b""  # the inflater's input not consumed yet
    while True:
        d = zlib.decompressobj(-15)
        member_crc = 0
        member_size = 0
        try:
            while not d.eof:  # one Java read() per iteration
                chunk = b""
                while True:
                    if held:
                        chunk = d.decompress(held, read_size)
                        held = d.unconsumed_tail
                        if chunk or d.eof:
                            break
                    if underlying >= n:
                        return result(CodecError("Unexpected end of ZLIB input stream",
                                                 java_class=_EOF))
                    held = payload[underlying : underlying + _GZIP_INPUT_CHUNK]
                    underlying += len(held)
                if chunk:
                    limit.add(len(chunk))
                    member_crc = zlib.crc32(chunk, member_crc)
                    member_size += len(chunk)
                    pieces.append(chunk)
        except zlib.error as e:
            return result(CodecError(_zlib_message(e), java_class=_ZIP))
        leftover = d.unused_data
        rest = leftover + payload[underlying:]
        # readTrailer: readUInt(crc) is compared before the size is read, so a wrong CRC in a
        # short trailer is "Corrupt", a right one is EOF
        if len(rest) < 4:
            return result(CodecError(None, java_class=_EOF))
        if int.from_bytes(rest[0:4], "little") != member_crc:
            return result(CodecError("Corrupt GZIP trailer", java_class=_ZIP))
        if len(rest) < 8:
            return result(CodecError(None, java_class=_EOF))
        if int.from_bytes(rest[4:8], "little") != member_size & 0xFFFFFFFF:
            return result(CodecError("Corrupt GZIP trailer", java_class=_ZIP))
        if len(rest) <= 8:
            break
        if underlying >= n and len(leftover) <= 26:
            # "if (this.in.available() > 0 || n > 26)": no next member is looked for
            return result(trailing=len(rest) - 8)
        try:
            consumed = _gzip_header(rest, 8)
        except _GzipHeaderError:
            return result(trailing=len(rest) - 8)  # JDK: "ignore any malformed, do nothing"
        if consumed <= len(leftover):
            held = leftover[consumed:]
        else:
            underlying += consumed - len(leftover)
            held = b""
    return result()


# ------------------------------------------------------------------------------------- snappy

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEAD = 0x82534E41
_SNAPPY_MAX_CHUNK = 512 * 1024 * 1024


def _snappy_length(block: bytes) -> int | None:
    """snappy's ``GetUncompressedLength`` (Varint::Parse32WithLimit); None when invalid."""
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


def _snappy_block(block: bytes, limit: _Limit, array: int | None = None) -> bytes:
    """One raw snappy block, as snappy-java handles it: the uncompressed length is read as a
    Java ``int``; a new output array is made (``new byte[length]``) unless the current one
    (``array`` bytes; None: none yet, always the case for a raw stream) is at least as long,
    and the native call refuses an array shorter than the block's real length."""
    length = _snappy_length(block)
    if length is None:
        raise CodecError("PARSING_ERROR(2)", java_class=_IO)
    java_length = length - (1 << 32) if length >= 1 << 31 else length
    if array is None or java_length > array:
        if java_length < 0:
            raise CodecError(str(java_length), java_class=_NEGATIVE_ARRAY)
        jvm_allocate(java_length)
    elif length > array:
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=_IO)
    limit.add(length)
    import cramjam

    try:
        out = bytes(cramjam.snappy.decompress_raw(block))
    except Exception:  # cramjam.DecompressionError
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=_IO) from None
    if len(out) != length:  # pragma: no cover - snappy guarantees this
        raise CodecError("FAILED_TO_UNCOMPRESS(5)", java_class=_IO)
    return out


def _unsnappy(payload: bytes, limit: _Limit) -> Decompressed:
    n = len(payload)
    if n == 0:
        raise _open_error(
            CodecError("[EMPTY_INPUT] Cannot decompress empty stream", java_class=_SNAPPY_IO)
        )
    if n < 16 or payload[:8] != _XERIAL_MAGIC:
        try:  # the raw format is decompressed in SnappyInputStream's constructor
            return Decompressed([_snappy_block(payload, limit)], policy=FILL, fill_size=2048)
        except (CodecError, OutOfMemoryError) as e:  # wrapForInput: catch (Throwable e)
            raise _open_error(e) from None
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
    try:
        while True:
            if n - pos < 4:
                trailing = n - pos
                break
            size = int.from_bytes(payload[pos : pos + 4], "big", signed=True)
            pos += 4
            if size & 0xFFFFFFFF == _XERIAL_HEAD:
                if n - pos < 12:
                    raise CodecError(
                        "[FAILED_TO_UNCOMPRESS] Insufficient header size in a concatenated block",
                        java_class=_SNAPPY_IO,
                    )
                header = payload[pos - 4 : pos + 12]
                pos += 12
                if header[:8] != _XERIAL_MAGIC:
                    # hasNextChunk() returns false once, without finishing the stream: this
                    # read() returns -1 / short, the next one carries on after the header
                    out.append(None)
                    notes.append(
                        ("snappy-xerial-header-version", "concatenated xerial header with a bad magic")
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
            if size < 0:
                raise CodecError(
                    f"[INVALID_CHUNK_SIZE] chunkSize is too big or negative : {size}",
                    java_class=_SNAPPY_ERROR,
                )
            if size > _SNAPPY_MAX_CHUNK:
                raise CodecError(
                    f"[FAILED_TO_UNCOMPRESS] Received chunkSize {size:,} is greater than max "
                    f"configured chunk size {_SNAPPY_MAX_CHUNK:,}",
                    java_class=_SNAPPY_ERROR,
                )
            if n - pos < size:
                raise CodecError("failed to read chunk", java_class=_IO)
            block = payload[pos : pos + size]
            out.append(_snappy_block(block, limit, array))
            if array is None or len(out[-1]) > array:  # snappy-java made a new array
                array = len(out[-1])
            pos += size
    except (CodecError, OutOfMemoryError) as e:
        return Decompressed(out, e, policy=FILL, fill_size=2048, notes=tuple(notes))
    return Decompressed(
        out, policy=FILL, fill_size=2048, ignored_trailing=trailing, notes=tuple(notes)
    )


# ---------------------------------------------------------------------------------------- lz4

_LZ4_MAGIC = 0x184D2204
_LZ4_PREMATURE = "Stream ended prematurely"


def _lz4_header(payload: bytes, magic: int) -> tuple[int, int, int]:
    """``Lz4BlockInputStream.readHeader``: returns (flg, max block size, position after)."""
    n = len(payload)
    if n < 6:
        raise CodecError(_LZ4_PREMATURE, java_class=_IO)
    if int.from_bytes(payload[0:4], "little") != _LZ4_MAGIC:
        raise CodecError("Stream unsupported (invalid magic bytes)", java_class=_IO)
    flg = payload[4]
    if flg & 3:
        raise CodecError("Reserved bits must be 0", java_class="java.lang.RuntimeException")
    if not (flg >> 5) & 1:
        raise CodecError(
            "Dependent block stream is unsupported", java_class="java.lang.RuntimeException"
        )
    if (flg >> 6) & 3 != 1:
        raise CodecError(
            f"Version {(flg >> 6) & 3} is unsupported", java_class="java.lang.RuntimeException"
        )
    bd = payload[5]
    if bd & 15:
        raise CodecError("Reserved2 field must be 0", java_class="java.lang.RuntimeException")
    code = (bd >> 4) & 7
    if code < 4:
        raise CodecError(
            "Block size value must be between 4 and 7", java_class="java.lang.RuntimeException"
        )
    if bd >> 7:
        raise CodecError("Reserved3 field must be 0", java_class="java.lang.RuntimeException")
    max_block = 1 << (2 * code + 8)
    pos = 6
    if flg & 0x08:
        if n - pos < 8:
            raise CodecError(_LZ4_PREMATURE, java_class=_IO)
        pos += 8
    if magic == 0:
        if pos + 1 > n:
            raise IllegalArgumentError(f"newPosition > limit: ({pos + 1} > {n})")
        return flg, max_block, pos + 1
    if pos >= n:
        raise BufferUnderflowError()
    if payload[pos] != (xxh32(payload[4:pos]) >> 8) & 0xFF:
        raise CodecError("Stream frame descriptor corrupted", java_class=_IO)
    return flg, max_block, pos + 1


def _unlz4(payload: bytes, magic: int, limit: _Limit) -> Decompressed:
    try:
        flg, max_block, pos = _lz4_header(payload, magic)
    except DecodeError as e:
        raise _open_error(e) from None
    import lz4.block

    n = len(payload)
    out: list[bytes | None] = []
    notes: list[tuple[str, str]] = []
    try:
        while True:
            if n - pos < 4:
                raise CodecError(_LZ4_PREMATURE, java_class=_IO)
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
                raise CodecError(f"Block size {size} exceeded max: {max_block}", java_class=_IO)
            if n - pos < size:
                raise CodecError(_LZ4_PREMATURE, java_class=_IO)
            block = payload[pos : pos + size]
            if compressed:
                try:
                    data = lz4.block.decompress(block, uncompressed_size=max_block)
                except lz4.block.LZ4BlockError:
                    raise CodecError(
                        "net.jpountz.lz4.LZ4Exception: Malformed input", java_class=_IO
                    ) from None
            else:
                data = bytes(block)
            pos += size
            if flg & 0x10:
                if n - pos < 4:
                    raise BufferUnderflowError()
                if int.from_bytes(payload[pos : pos + 4], "little") != xxh32(block):
                    raise CodecError("Block checksum mismatch", java_class=_IO)
                pos += 4
            limit.add(len(data))
            out.append(data)
    except DecodeError as e:
        return Decompressed(out, e, fill_size=2048, notes=tuple(notes))
    return Decompressed(out, fill_size=2048, ignored_trailing=n - pos, notes=tuple(notes))


# --------------------------------------------------------------------------------------- zstd

# zstd can expand 4 input bytes into a 128 KiB block: feeding at most remaining/32768 input
# bytes per call keeps any single output burst within the limit
_ZSTD_EXPANSION = 32768


def _unzstd(payload: bytes, limit: _Limit) -> Decompressed:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    pieces: list[bytes | None] = []
    size = FILL_SIZE[ZSTD]
    rest = payload
    out: list[bytes] = []
    finished = False  # zstd-jni's frameFinished: a whole (non-skippable) frame was decoded
    try:
        while rest:
            obj = dctx.decompressobj()
            out = []
            i = 0
            while i < len(rest) and not obj.eof:
                feed = max(256, min(1 << 16, limit.remaining() // _ZSTD_EXPANSION))
                chunk = obj.decompress(rest[i : i + feed])
                i += feed
                if chunk:
                    limit.add(len(chunk))
                    out.append(chunk)
            if not obj.eof:
                if not finished or out:
                    pieces.append(b"".join(out))
                if finished:
                    # zstd-jni's frameFinished, once set by a whole frame (skippable or
                    # not), is never cleared: running out of input later is a clean end
                    # of stream, after the bytes decoded so far (found by fuzzing) ...
                    hint = _skip_hint(rest)
                    if hint is not None and hint >= (1 << 32) - _ZSTD_MAX_ERROR_CODE:
                        # ... unless zstd's "bytes still to skip" hint, which zstd-jni
                        # passes through a 32-bit int, reads as an error code
                        error = CodecError(f"zstd error code {(1 << 32) - hint}",
                                           java_class=_ZSTD_IO)
                        return Decompressed(pieces, error, False, PIECE, size)
                    return Decompressed(pieces, None, False, PIECE, size)
                # zstd-jni hands out what it decoded, then fails when it needs more input
                error = CodecError("Truncated source", java_class=_ZSTD_IO)
                return Decompressed(pieces, error, False, PIECE, size)
            finished = True
            if out:
                pieces.append(b"".join(out))
            consumed = min(i, len(rest)) - len(obj.unused_data)
            rest = rest[consumed:]
    except zstandard.ZstdError as e:
        text = str(e)
        prefix = "zstd decompress error: "
        if text.startswith(prefix):
            text = text[len(prefix) :]
        # zstd-jni decodes into the reader's buffer (ChunkedBytesStream: 16 KiB per read)
        # and hands out every full read before the one that meets the error; the feed above
        # is coarser, so replay this frame the way Java reads it
        limit.total -= sum(len(c) for c in out)
        delivered = _zstd_reads_before_error(dctx, rest, size, limit)
        if delivered:
            pieces.append(delivered)
        return Decompressed(pieces, CodecError(text, java_class=_ZSTD_IO), False, PIECE, size)
    return Decompressed(pieces, None, False, PIECE, size)


#: ZSTD_isError(code): code > (size_t)-ZSTD_error_maxCode (120)
_ZSTD_MAX_ERROR_CODE = 119


def _skip_hint(frame: bytes) -> int | None:
    """For a skippable frame cut short after its 8-byte header: the bytes zstd still wants
    to skip, modulo 2**32 (what a 32-bit int makes of it); None for anything else."""
    if len(frame) < 8 or int.from_bytes(frame[:4], "little") & 0xFFFFFFF0 != 0x184D2A50:
        return None
    return (int.from_bytes(frame[4:8], "little") - (len(frame) - 8)) & 0xFFFFFFFF


def _zstd_reads_before_error(dctx, frame: bytes, size: int, limit: _Limit) -> bytes:  # type: ignore[no-untyped-def]
    """The bytes of the ``size``-byte reads of a failing frame that succeed."""
    import zstandard

    reader = dctx.stream_reader(frame, read_size=1 << 17, read_across_frames=False)
    parts: list[bytes] = []
    try:
        while True:
            chunk = reader.read(size)
            if not chunk:
                break
            limit.add(len(chunk))
            parts.append(chunk)
    except zstandard.ZstdError:
        pass
    return b"".join(parts)


# ----------------------------------------------------------------------------------- dispatch


def open_stream(
    codec_id: int, payload: bytes, magic: int, limit: int = DEFAULT_DECOMPRESSED_LIMIT
) -> Decompressed:
    """Decompress ``payload`` as Kafka's ``Compression.wrapForInput(buffer, magic)`` reads it.

    ``magic`` matters for lz4 only (header checksum ignored under magic 0). Raises
    :class:`KafkaError` (or a raw unchecked error) for failures Java raises on open.
    """
    lim = _Limit(limit)
    if codec_id == GZIP:
        return _gunzip(payload, lim)
    if codec_id == SNAPPY:
        return _unsnappy(payload, lim)
    if codec_id == LZ4:
        return _unlz4(payload, magic, lim)
    if codec_id == ZSTD:
        return _unzstd(payload, lim)
    if codec_id == NONE:
        return Decompressed([bytes(payload)])
    raise IllegalArgumentError(f"Unknown compression type id: {codec_id}")


# ------------------------------------------------------------------------------- compression


def compress(codec_id: int, data: bytes, magic: int = 2) -> bytes:
    """Compress as Kafka's Java producer frames it (see the module table)."""
    if codec_id == NONE:
        return bytes(data)
    if codec_id == GZIP:
        c = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
        body = c.compress(data) + c.flush()
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        trailer = (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "little") + (
            len(data) & 0xFFFFFFFF
        ).to_bytes(4, "little")
        return header + body + trailer
    if codec_id == SNAPPY:
        return snappy_xerial(data)
    if codec_id == LZ4:
        return lz4_frame(data, magic)
    if codec_id == ZSTD:
        import zstandard

        return zstandard.ZstdCompressor(level=3, write_content_size=True).compress(data)
    raise ValueError(f"unknown codec id {codec_id}")


def snappy_raw(data: bytes) -> bytes:
    import cramjam

    return bytes(cramjam.snappy.compress_raw(data))


def snappy_xerial(data: bytes, block: int = 32 * 1024) -> bytes:
    """xerial framing as ``SnappyOutputStream`` writes it (32 KiB input blocks)."""
    parts = [_XERIAL_MAGIC, (1).to_bytes(4, "big"), (1).to_bytes(4, "big")]
    for i in range(0, len(data), block):
        c = snappy_raw(data[i : i + block])
        parts.append(len(c).to_bytes(4, "big"))
        parts.append(c)
    return b"".join(parts)


def lz4_frame(data: bytes, magic: int = 2, block_size: int = 64 * 1024) -> bytes:
    """Kafka's lz4 frame: FLG 0x60, BD 0x40 (64 KiB blocks), magic-0 broken header checksum."""
    import lz4.block

    flg_bd = b"\x60\x40"
    magic_bytes = _LZ4_MAGIC.to_bytes(4, "little")
    hc_input = magic_bytes + flg_bd if magic == 0 else flg_bd
    parts = [magic_bytes, flg_bd, bytes([(xxh32(hc_input) >> 8) & 0xFF])]
    for i in range(0, len(data), block_size):
        chunk = data[i : i + block_size]
        c = lz4.block.compress(chunk, store_size=False)
        if len(c) >= len(chunk):
            parts.append((len(chunk) | 0x80000000).to_bytes(4, "little"))
            parts.append(chunk)
        else:
            parts.append(len(c).to_bytes(4, "little"))
            parts.append(c)
    parts.append(b"\x00\x00\x00\x00")
    return b"".join(parts)
