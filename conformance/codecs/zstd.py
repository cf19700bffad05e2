"""zstd (codec 4, magic 2 only): zstd frames, read as zstd-jni's ``ZstdInputStreamNoFinalizer``
reads them (docs/format.md §5.5).

========================  =====  ==============================================================
field                     bytes  notes (little-endian)
========================  =====  ==============================================================
magic                     4      ``28 B5 2F FD`` (0xFD2FB528)
Frame_Header_Descriptor   1      FCS flag (bits 6-7), Single_Segment (5), checksum flag (2)
[Window_Descriptor]       1      unless Single_Segment
[Frame_Content_Size]      0-8    1/2/4/8 bytes by the FCS flag; not checked against the content
blocks                    ...    3-byte header ``Last (bit 0) | Block_Type (1-2) | Block_Size``,
                                 then raw (type 0), RLE (1: one byte) or compressed (2) data
[Content_Checksum]        4      checksum flag: low 32 bits of XXH64 of the content
skippable frame           8+n    ``5? 2A 4D 18 | uint32 n | n bytes``, anywhere between frames
========================  =====  ==============================================================

Mirrors ``com.github.luben.zstd.ZstdInputStreamNoFinalizer`` (zstd-jni, as Kafka's
``ZstdCompression`` opens it) and zstd-jni's ``ZstdOutputStreamNoFinalizer`` (level 3, content
size written) as the writer. Quirks modelled: several frames and skippable frames read as one
stream; a truncated frame hands out what was decoded, then "Truncated source"; the 16 KiB reads
before a failing one succeed; once a whole frame (skippable or not) has ended, ``frameFinished``
is never cleared, so running out of input later is a clean end; a skippable frame cut short
after a whole frame fails when zstd's "bytes still to skip" hint, squeezed through a 32-bit int,
reads as an error code.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.codecs._stream import CLIENTS, PIECE, Codec, Decompressed, Limit
from conformance.errors import CodecError

_ZSTD_IO = "com.github.luben.zstd.ZstdIOException"

MAGIC = b"\x28\xb5\x2f\xfd"
SKIPPABLE_MAGIC = 0x184D2A50  # the low nibble is free: 0x184D2A50..0x184D2A5F

# zstd can expand 4 input bytes into a 128 KiB block: feeding at most remaining/32768 input
# bytes per call keeps any single output burst within the limit
_EXPANSION = 32768
#: ZSTD_isError(code): code > (size_t)-ZSTD_error_maxCode (120)
_MAX_ERROR_CODE = 119
_FILL_SIZE = 16 * 1024  # ChunkedBytesStream over the zstd-jni stream
#: the largest window a streaming decoder accepts by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT 27);
#: a one-shot decode does not check it
_WINDOW_MAX = 1 << 27


def read_stream(
    payload: bytes, limit: Limit, magic: int = 2, clients: str = CLIENTS[0]
) -> Decompressed:
    """zstd-jni's stream as ``ChunkedBytesStream`` reads it (each frame one piece).

    ``clients`` "2.8": Kafka 2.x's zstd-jni 1.4.9-1 with its own libzstd 1.4.9, whose decoder
    refuses frames libzstd 1.5 reads (and reads others differently): :func:`_read_stream_2_8`
    runs zstd-jni's read loop over that very library (registered by :func:`use_kafka2_reader`)."""
    if clients == "2.8":
        return _read_stream_2_8(payload, limit)
    return _read_stream(payload, limit)


def _read_stream(payload: bytes, limit: Limit) -> Decompressed:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    pieces: list[bytes | None] = []
    size = _FILL_SIZE
    rest = payload
    out: list[int] = []  # sizes of the chunks of the current frame
    finished = False  # zstd-jni's frameFinished: a whole (non-skippable) frame was decoded
    try:
        while rest:
            obj = dctx.decompressobj()
            out = []
            frame = io.BytesIO()  # grows in place: no second copy of a large frame
            i = 0
            while i < len(rest) and not obj.eof:
                feed = max(256, min(1 << 16, limit.remaining() // _EXPANSION))
                chunk = obj.decompress(rest[i : i + feed])
                i += feed
                if chunk:
                    limit.add(len(chunk))
                    out.append(len(chunk))
                    frame.write(chunk)
            if not obj.eof:
                if not finished or out:
                    pieces.append(frame.getvalue())
                if finished:
                    # zstd-jni's frameFinished, once set by a whole frame (skippable or
                    # not), is never cleared: running out of input later is a clean end
                    # of stream, after the bytes decoded so far (found by fuzzing) ...
                    hint = _skip_hint(rest)
                    if hint is not None and hint >= (1 << 32) - _MAX_ERROR_CODE:
                        # ... unless zstd's "bytes still to skip" hint, which zstd-jni
                        # passes through a 32-bit int, reads as an error code
                        error = CodecError(
                            f"zstd error code {(1 << 32) - hint}", java_class=_ZSTD_IO
                        )
                        return Decompressed(pieces, error, False, PIECE, size)
                    return Decompressed(pieces, None, False, PIECE, size)
                # zstd-jni hands out what it decoded, then fails when it needs more input
                error = CodecError("Truncated source", java_class=_ZSTD_IO)
                return Decompressed(pieces, error, False, PIECE, size)
            finished = True
            if out:
                pieces.append(frame.getvalue())
            del frame
            consumed = min(i, len(rest)) - len(obj.unused_data)
            rest = rest[consumed:]
    except zstandard.ZstdError as e:
        text = str(e)
        text = text.removeprefix("zstd decompress error: ")
        # zstd-jni decodes into the reader's buffer (ChunkedBytesStream: 16 KiB per read)
        # and hands out every full read before the one that meets the error; the feed above
        # is coarser, so replay this frame the way Java reads it
        limit.total -= sum(out)
        delivered = _reads_before_error(dctx, rest, size, limit)
        if delivered:
            pieces.append(delivered)
        return Decompressed(pieces, CodecError(text, java_class=_ZSTD_IO), False, PIECE, size)
    return Decompressed(pieces, None, False, PIECE, size)


def read_whole(payload: bytes, limit: int) -> bytes | None:
    """The payload's data, or None: a fast path beside :func:`read_stream` for the case it
    decides exactly: one zstd frame (not skippable) that states its content size, not 0 and at
    most ``limit``, and ends at the payload's last byte, decoded by libzstd in one call without
    error (a wrong content size or checksum is an error there). zstd-jni reads such a payload
    to its end without error or short read; anything else is None and :func:`read_stream`
    replays Java."""
    import zstandard

    if payload[:4] != MAGIC:
        return None
    try:
        frame = zstandard.get_frame_parameters(payload)
        size = frame.content_size
        # -1: not stated; 0: python-zstandard returns b"" without reading the frame, so
        # whatever follows it would go unchecked (found by tests/test_codec_whole.py)
        if size <= 0 or size > limit:
            return None
        if frame.window_size > _WINDOW_MAX or frame.dict_id:
            return None  # a window streaming refuses, a dictionary: the model decides
        data: bytes = _decompressor().decompress(payload, allow_extra_data=False)
    except zstandard.ZstdError:
        return None
    return data


_LOCAL = threading.local()


def _decompressor() -> Any:
    """This thread's ``ZstdDecompressor`` (one is not safe across threads), made once: making
    one per payload (a libzstd context each) was two thirds of a small payload's time. A
    one-shot ``decompress`` starts afresh each call, so reuse changes no result."""
    found = getattr(_LOCAL, "decompressor", None)
    if found is None:
        import zstandard

        found = _LOCAL.decompressor = zstandard.ZstdDecompressor()
    return found


# ---------------------------------------------------------------- Kafka 2.x: libzstd 1.4.9

#: reads a payload as Kafka 2.x does (zstd-jni 1.4.9-1 over its libzstd 1.4.9)
Kafka2Reader = Callable[[bytes, Limit], Decompressed]
_kafka2: Kafka2Reader | None = None


class LibzstdUnavailable(RuntimeError):
    """The Kafka 2.x zstd model needs libzstd 1.4.9 and none was registered."""


def use_kafka2_reader(reader: Kafka2Reader | None) -> None:
    """Register how Kafka 2.x's zstd is read (None: none). The core loads no library: the
    JVM edge registers zstd-jni 1.4.9's read loop over the libzstd 1.4.9 that Kafka 2.8.2's
    jars carry (``conformance.jvm.kafka_jars.use_kafka2_zstd``)."""
    global _kafka2
    _kafka2 = reader


def _read_stream_2_8(payload: bytes, limit: Limit) -> Decompressed:
    if _kafka2 is None:
        raise LibzstdUnavailable(
            "judging zstd as Kafka 2.x does needs its libzstd 1.4.9: call "
            "conformance.jvm.kafka_jars.use_kafka2_zstd() (it takes the one in the Kafka "
            "2.8.2 jars, resolved with Maven on first use)"
        )
    return _kafka2(payload, limit)


def _skip_hint(frame: bytes) -> int | None:
    """For a skippable frame cut short after its 8-byte header: the bytes zstd still wants
    to skip, modulo 2**32 (what a 32-bit int makes of it); None for anything else."""
    if len(frame) < 8 or int.from_bytes(frame[:4], "little") & 0xFFFFFFF0 != SKIPPABLE_MAGIC:
        return None
    return (int.from_bytes(frame[4:8], "little") - (len(frame) - 8)) & 0xFFFFFFFF


def _reads_before_error(dctx, frame: bytes, size: int, limit: Limit) -> bytes:  # type: ignore[no-untyped-def]
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


# -------------------------------------------------------------------------------- writers


def write_frame(
    data: bytes, *, level: int = 3, content_size: bool = True, checksum: bool = False
) -> bytes:
    """One compressed frame as zstd-jni writes it for Kafka (level 3, content size written);
    ``content_size=False`` leaves Frame_Content_Size out, ``checksum`` adds Content_Checksum."""
    import zstandard

    return zstandard.ZstdCompressor(
        level=level, write_content_size=content_size, write_checksum=checksum
    ).compress(data)


@dataclass(frozen=True, slots=True)
class Block:
    """One block written by hand: ``type`` 0 raw (``data`` stored), 1 RLE (``data`` is the one
    byte, repeated ``size`` times), 3 reserved; ``size`` replaces the Block_Size field."""

    data: bytes
    type: int = 0
    size: int | None = None

    def content(self) -> bytes:
        return self.data * (self.size or 0) if self.type == 1 else self.data


def write_raw_frame(
    data: bytes | Sequence[Block],
    *,
    content_size: int | None = None,
    fcs_bytes: int = 8,
    checksum: bool | int = False,
    block: int = 64 * 1024,
) -> bytes:
    """A frame of hand-made blocks with full control of the header (1 MiB window descriptor).

    ``data``: bytes, stored as raw blocks of at most ``block`` bytes; or the :class:`Block`
    list. ``content_size`` None: no Frame_Content_Size; otherwise that value, written in
    ``fcs_bytes`` (8 or 4) bytes, Single_Segment off. ``checksum`` True = the correct XXH64 low
    32 bits; an int = that value.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        blocks = [Block(data[i : i + block]) for i in range(0, len(data), block)] or [Block(b"")]
    else:
        blocks = list(data)
    fcs_flag = {0: 0, 4: 2, 8: 3}[fcs_bytes if content_size is not None else 0]
    fhd = (fcs_flag << 6) | (0x04 if checksum is not False else 0)
    parts = [MAGIC, bytes([fhd, (20 - 10) << 3])]  # window descriptor: 1 MiB window
    if content_size is not None:
        parts.append(content_size.to_bytes(fcs_bytes, "little"))
    for i, b in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        size = len(b.data) if b.size is None else b.size
        parts.append((last | (b.type << 1) | (size << 3)).to_bytes(3, "little") + b.data)
    if checksum is True:
        import xxhash

        content = b"".join(b.content() for b in blocks)
        parts.append((xxhash.xxh64_intdigest(content) & 0xFFFFFFFF).to_bytes(4, "little"))
    elif checksum is not False:
        parts.append((int(checksum) & 0xFFFFFFFF).to_bytes(4, "little"))
    return b"".join(parts)


def write_skippable_frame(content: bytes, *, variant: int = 0, size: int | None = None) -> bytes:
    """A skippable frame ``0x184D2A5<variant> | uint32 size | content``; ``size`` replaces
    the length field (a frame cut short, or a size near 2**32)."""
    length = len(content) if size is None else size
    return (
        (SKIPPABLE_MAGIC | variant).to_bytes(4, "little")
        + (length & 0xFFFFFFFF).to_bytes(4, "little")
        + content
    )


def write_stream(data: bytes, magic: int = 2) -> bytes:
    """The payload as Kafka's Java producer writes it (zstd-jni's ``ZstdOutputStream``: one
    frame)."""
    return write_frame(data)


CODEC = Codec(
    id=4,
    name="zstd",
    java_stream="com.github.luben.zstd.ZstdInputStreamNoFinalizer",
    read_stream=read_stream,
    write_stream=write_stream,
    read_policy=PIECE,
    fill_size=_FILL_SIZE,
    fill_size_2_8=16 * 1024,
    legacy_magics=False,
    since=(2, 1),  # KIP-110,
    read_whole=read_whole,
)
