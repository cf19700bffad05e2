"""Compression codecs, read exactly as Kafka's Java input streams read them (docs/format.md §5).

The registry and the two entry points; each codec's framing (reader and writer) lives in its own
module, the Java read model they share in ``_stream``:

==  ======  =========  =========================================================================
id  name    module     framing Kafka reads (Java class)
==  ======  =========  =========================================================================
0   none    —          —
1   gzip    ``gzip``   RFC 1952 members (JDK ``GZIPInputStream``)
2   snappy  ``snappy`` xerial ``82 'SNAPPY' 00 | int32 version | int32 compat`` then
                       ``int32 len | raw block`` chunks, or one raw block (snappy-java
                       ``SnappyInputStream``)
3   lz4     ``lz4``    ``04 22 4D 18 | FLG | BD | [content size] | HC`` then
                       ``uint32le size | block [| xxh32]`` ... ``0`` (Kafka's
                       ``Lz4BlockInputStream``; HC ignored under magic 0, KAFKA-3160)
4   zstd    ``zstd``   zstd frames and skippable frames (zstd-jni ``ZstdInputStreamNoFinalizer``)
==  ======  =========  =========================================================================

A decompressed payload is modelled as the Java input stream Kafka reads it through: a list of
*pieces* (the most one ``read(len)`` call of the Java codec stream can return) and a terminal
condition (:class:`Decompressed`). ``record.JavaStreamReader`` replays it through
``ChunkedBytesStream`` exactly as Kafka does, so an error surfaces at the same read as in Java.
Failures Java raises while *opening* the stream are raised directly, wrapped as Kafka wraps
them (``KafkaException(cause)``). Decompression is bounded by ``limit`` bytes
(:class:`DecompressionLimitError`).
"""

from __future__ import annotations

from conformance.codecs import gzip, lz4, snappy, zstd
from conformance.codecs._stream import (
    FILL,
    FILL_SIZE,
    GZIP,
    LZ4,
    NONE,
    PIECE,
    SNAPPY,
    ZSTD,
    Decompressed,
    Limit,
)
from conformance.errors import IllegalArgumentError

__all__ = [
    "CODEC_IDS",
    "CODEC_NAMES",
    "DEFAULT_DECOMPRESSED_LIMIT",
    "FILL",
    "FILL_SIZE",
    "GZIP",
    "LZ4",
    "NONE",
    "PIECE",
    "SNAPPY",
    "ZSTD",
    "Decompressed",
    "codec_name",
    "compress",
    "gzip",
    "lz4",
    "open_stream",
    "snappy",
    "zstd",
]

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
CODEC_IDS = {v: k for k, v in CODEC_NAMES.items()}

DEFAULT_DECOMPRESSED_LIMIT = 256 * 1024 * 1024


def codec_name(codec_id: int) -> str:
    return CODEC_NAMES.get(codec_id, f"unknown-{codec_id}")


def open_stream(
    codec_id: int, payload: bytes, magic: int, limit: int = DEFAULT_DECOMPRESSED_LIMIT
) -> Decompressed:
    """Decompress ``payload`` as Kafka's ``Compression.wrapForInput(buffer, magic)`` reads it.

    ``magic`` matters for lz4 only (header checksum ignored under magic 0). Raises
    :class:`KafkaError` (or a raw unchecked error) for failures Java raises on open.
    """
    lim = Limit(limit)
    if codec_id == GZIP:
        return gzip.read_stream(payload, lim)
    if codec_id == SNAPPY:
        return snappy.read_stream(payload, lim)
    if codec_id == LZ4:
        return lz4.read_stream(payload, lim, magic)
    if codec_id == ZSTD:
        return zstd.read_stream(payload, lim)
    if codec_id == NONE:
        return Decompressed([bytes(payload)])
    raise IllegalArgumentError(f"Unknown compression type id: {codec_id}")


def compress(codec_id: int, data: bytes, magic: int = 2) -> bytes:
    """Compress as Kafka's Java producer frames it (each codec module's writer, defaults)."""
    if codec_id == NONE:
        return bytes(data)
    if codec_id == GZIP:
        return gzip.write_member(data)
    if codec_id == SNAPPY:
        return snappy.write_xerial(data)
    if codec_id == LZ4:
        return lz4.write_frame(data, magic=magic)
    if codec_id == ZSTD:
        return zstd.write_frame(data)
    raise ValueError(f"unknown codec id {codec_id}")
