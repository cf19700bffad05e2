"""gzip (codec 1): RFC 1952 members, read as the JDK's ``GZIPInputStream`` reads them
(docs/format.md §5.2).

==========  =====  ==============================================================
field       bytes  notes
==========  =====  ==============================================================
ID1 ID2     2      ``1f 8b``, else ZipException "Not in GZIP format"
CM          1      8 (deflate), else "Unsupported compression method"
FLG         1      FTEXT 1, FHCRC 2, FEXTRA 4, FNAME 8, FCOMMENT 16
MTIME       4      ignored
XFL, OS     1, 1   ignored; the JDK writes ``00 ff`` (OS 0 before JDK 16)
[XLEN|...]  2+n    FEXTRA: uint16le length, then that many bytes
[FNAME]     ...    zero-terminated
[FCOMMENT]  ...    zero-terminated
[HCRC]      2      FHCRC: low 16 bits of the CRC-32 of the header so far
deflate     ...    raw deflate stream
CRC32       4      little-endian CRC-32 of the data (compared first)
ISIZE       4      little-endian data length mod 2^32
==========  =====  ==============================================================

Mirrors ``java.util.zip.GZIPInputStream`` as Kafka opens it (``GzipCompression``:
``new GZIPInputStream(in, 8 * 1024)``) and the JDK's ``GZIPOutputStream`` as the writer.
Quirks modelled: the header is parsed in the constructor (an opening error); input is taken
8 KiB at a time, so a read returns what one fill inflates to and reads before the fill that
meets corrupt data succeed; the trailer CRC is compared before ISIZE is read; concatenated
members are read as one stream; after a member, bytes that do not parse as a whole gzip header
are silently ignored, and no further member is looked for unless the underlying stream has
input left or more than 26 bytes are left over.
"""

from __future__ import annotations

import zlib

from conformance.codecs._stream import (
    CLIENTS,
    EOF_EXCEPTION,
    PIECE,
    Codec,
    Decompressed,
    Limit,
    open_error,
)
from conformance.errors import CodecError, DecodeError

_ZIP = "java.util.zip.ZipException"

MAGIC = b"\x1f\x8b"
FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT = 1, 2, 4, 8, 16

_INPUT_CHUNK = 8 * 1024  # Kafka: new GZIPInputStream(in, 8 * 1024)
_FILL_SIZE = 16 * 1024  # ChunkedBytesStream over it


class _HeaderError(Exception):
    def __init__(self, err: CodecError) -> None:
        self.err = err


def _read_header(buf: bytes, pos: int) -> int:
    """JDK ``GZIPInputStream.readHeader``; returns the position after the header."""
    n = len(buf)

    def ubyte(p: int) -> int:
        if p >= n:
            raise _HeaderError(CodecError(None, java_class=EOF_EXCEPTION))
        return buf[p]

    start = pos
    b0 = ubyte(pos)
    b1 = ubyte(pos + 1)
    if (b1 << 8 | b0) != 0x8B1F:
        raise _HeaderError(CodecError("Not in GZIP format", java_class=_ZIP))
    if ubyte(pos + 2) != 8:
        raise _HeaderError(CodecError("Unsupported compression method", java_class=_ZIP))
    flg = ubyte(pos + 3)
    pos += 4
    if pos + 6 > n:
        raise _HeaderError(CodecError(None, java_class=EOF_EXCEPTION))
    pos += 6
    if flg & FEXTRA:
        m = ubyte(pos) | ubyte(pos + 1) << 8
        pos += 2
        if pos + m > n:
            raise _HeaderError(CodecError(None, java_class=EOF_EXCEPTION))
        pos += m
    if flg & FNAME:
        while ubyte(pos) != 0:
            pos += 1
        pos += 1
    if flg & FCOMMENT:
        while ubyte(pos) != 0:
            pos += 1
        pos += 1
    if flg & FHCRC:
        v = zlib.crc32(buf[start:pos]) & 0xFFFF
        stored = ubyte(pos) | ubyte(pos + 1) << 8
        if stored != v:
            raise _HeaderError(CodecError("Corrupt GZIP header", java_class=_ZIP))
        pos += 2
    return pos


def _zlib_message(e: zlib.error) -> str:
    text = str(e)
    marker = "while decompressing data: "
    i = text.find(marker)
    return text[i + len(marker) :] if i >= 0 else "Invalid ZLIB data format"


def read_stream(
    payload: bytes, limit: Limit, magic: int = 2, clients: str = CLIENTS[0]
) -> Decompressed:
    """``GZIPInputStream`` read by ``ChunkedBytesStream``, call for call.

    Each piece is what one ``read(b, 0, 16 KiB)`` returns: ``InflaterInputStream.read`` calls
    ``inflate`` on the input it holds and refills that input 8 KiB at a time
    (``fill()``) until ``inflate`` yields bytes, so a read returns at most what one input chunk
    inflates to. An error thrown inside a read loses that read's bytes (they never reach the
    caller); the reads before it stand. Members follow one another as ``readTrailer`` reads
    them: the trailer and next header come from the inflater's leftover input first.
    """
    try:
        pos = _read_header(payload, 0)
    except _HeaderError as e:
        raise open_error(e.err) from None
    pieces: list[bytes | None] = []
    n = len(payload)
    read_size = _FILL_SIZE

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
                        return result(
                            CodecError(
                                "Unexpected end of ZLIB input stream", java_class=EOF_EXCEPTION
                            )
                        )
                    held = payload[underlying : underlying + _INPUT_CHUNK]
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
            return result(CodecError(None, java_class=EOF_EXCEPTION))
        if int.from_bytes(rest[0:4], "little") != member_crc:
            return result(CodecError("Corrupt GZIP trailer", java_class=_ZIP))
        if len(rest) < 8:
            return result(CodecError(None, java_class=EOF_EXCEPTION))
        if int.from_bytes(rest[4:8], "little") != member_size & 0xFFFFFFFF:
            return result(CodecError("Corrupt GZIP trailer", java_class=_ZIP))
        if len(rest) <= 8:
            break
        if underlying >= n and len(leftover) <= 26:
            # "if (this.in.available() > 0 || n > 26)": no next member is looked for
            return result(trailing=len(rest) - 8)
        try:
            consumed = _read_header(rest, 8)
        except _HeaderError:
            return result(trailing=len(rest) - 8)  # JDK: "ignore any malformed, do nothing"
        if consumed <= len(leftover):
            held = leftover[consumed:]
        else:
            underlying += consumed - len(leftover)
            held = b""
    return result()


def read_whole(payload: bytes, limit: int) -> bytes | None:
    """The payload's data in one inflate, or None: a fast path beside :func:`read_stream` for
    the common case it decides exactly, a single member whose header parses (the same parser),
    whose deflate stream ends with nothing after its 8-byte trailer, CRC and ISIZE right, and
    whose data stays within ``limit``. ``GZIPInputStream`` reads such a payload to its end
    without error or short read, whatever its chunking; anything else (concatenated members,
    trailing bytes, any error) is None and :func:`read_stream` replays Java call for call."""
    try:
        pos = _read_header(payload, 0)
    except _HeaderError:
        return None
    d = zlib.decompressobj(-15)
    try:
        data = d.decompress(payload[pos:], limit + 1)
    except zlib.error:
        return None
    rest = d.unused_data
    if not d.eof or d.unconsumed_tail or len(data) > limit or len(rest) != 8:
        return None
    if int.from_bytes(rest[0:4], "little") != zlib.crc32(data):
        return None
    if int.from_bytes(rest[4:8], "little") != len(data) & 0xFFFFFFFF:
        return None
    return data


def write_member(
    data: bytes,
    *,
    level: int = 6,
    flags: int = 0,
    extra: bytes = b"",
    fname: bytes = b"",
    comment: bytes = b"",
    header_crc: str | int | None = None,
    method: int = 8,
    mtime: int = 0,
    xfl: int = 0,
    os_byte: int = 0xFF,
    crc: int | None = None,
    isize: int | None = None,
    magic: bytes = MAGIC,
) -> bytes:
    """One gzip member; the defaults are what ``GZIPOutputStream`` writes (JDK ≥ 16).

    ``level`` is the deflate level (the JDK's default compression is zlib's 6). Header knobs:
    ``flags`` adds FLG bits (e.g. FTEXT); ``extra``/``fname``/``comment`` are written, and their
    FLG bits set, when non-empty; ``header_crc`` None = no FHCRC, "correct" = the right one, an
    int = that value; ``magic``, ``method``, ``mtime``, ``xfl``, ``os_byte`` are written as
    given. Trailer knobs: ``crc`` and ``isize`` replace the true values.
    """
    if extra:
        flags |= FEXTRA
    if fname:
        flags |= FNAME
    if comment:
        flags |= FCOMMENT
    if header_crc is not None:
        flags |= FHCRC
    hdr = (
        magic
        + bytes([method, flags])
        + (mtime & 0xFFFFFFFF).to_bytes(4, "little")
        + bytes([xfl, os_byte])
    )
    if extra:
        hdr += len(extra).to_bytes(2, "little") + extra
    if fname:
        hdr += fname + b"\x00"
    if comment:
        hdr += comment + b"\x00"
    if header_crc is not None:
        value = zlib.crc32(hdr) & 0xFFFF if header_crc == "correct" else int(header_crc)
        hdr += (value & 0xFFFF).to_bytes(2, "little")
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    trailer = ((zlib.crc32(data) if crc is None else crc) & 0xFFFFFFFF).to_bytes(4, "little") + (
        (len(data) if isize is None else isize) & 0xFFFFFFFF
    ).to_bytes(4, "little")
    return hdr + body + trailer


def write_stream(data: bytes, magic: int = 2) -> bytes:
    """The payload as Kafka's Java producer writes it (``GZIPOutputStream``: one member)."""
    return write_member(data)


CODEC = Codec(
    id=1,
    name="gzip",
    java_stream="java.util.zip.GZIPInputStream",
    read_stream=read_stream,
    write_stream=write_stream,
    read_policy=PIECE,
    fill_size=_FILL_SIZE,
    fill_size_2_8=16 * 1024,
    legacy_magics=True,
    since=(0, 8),
    read_whole=read_whole,
)
