"""Compression codecs, read exactly as Kafka's Java input streams read them (docs/format.md §5).

:data:`CODECS` is the one list of codecs: every other part of the kit (the wire readers and
writers, the strategies, the fuzzers, the corpora, the harness) takes the ids, names and
properties from it. Each entry is a :class:`Codec` defined by the codec's own module (its
``CODEC``), which holds the framing's byte layout, its reader and its writers:

==  ======  ==========  ======================================================================
id  name    module      framing Kafka reads (Java class)
==  ======  ==========  ======================================================================
0   none    ``none``    — (the records region itself)
1   gzip    ``gzip``    RFC 1952 members (JDK ``GZIPInputStream``)
2   snappy  ``snappy``  xerial ``82 'SNAPPY' 00 | int32 version | int32 compat`` then
                        ``int32 len | raw block`` chunks, or one raw block (snappy-java
                        ``SnappyInputStream``)
3   lz4     ``lz4``     ``04 22 4D 18 | FLG | BD | [content size] | HC`` then
                        ``uint32le size | block [| xxh32]`` ... ``0`` (Kafka's
                        ``Lz4BlockInputStream``; HC ignored under magic 0, KAFKA-3160)
4   zstd    ``zstd``    zstd frames and skippable frames (zstd-jni
                        ``ZstdInputStreamNoFinalizer``); magic 2 only
==  ======  ==========  ======================================================================

Ids 5-7 fit the attributes' 3 codec bits but name no codec: Kafka's
``CompressionType.forId`` raises ``IllegalArgumentException("Unknown compression type id:
N")`` (:func:`codec`).

A decompressed payload is modelled as the Java input stream Kafka reads it through: a list of
*pieces* (the most one ``read(len)`` call of the Java codec stream can return) and a terminal
condition (:class:`Decompressed`). ``record.JavaStreamReader`` replays it through
``ChunkedBytesStream`` exactly as Kafka does, so an error surfaces at the same read as in Java.
Failures Java raises while *opening* the stream are raised directly, wrapped as Kafka wraps
them (``KafkaException(cause)``). Decompression is bounded by ``limit`` bytes
(:class:`DecompressionLimitError`).
"""

from __future__ import annotations

from dataclasses import replace

from conformance.codecs import gzip, lz4, none, snappy, zstd
from conformance.codecs._stream import (
    CLIENTS,
    EOF_EXCEPTION,
    FILL,
    PIECE,
    Codec,
    Decompressed,
    Limit,
)
from conformance.errors import IllegalArgumentError

__all__ = [
    "CLIENTS",
    "CODECS",
    "CODEC_IDS",
    "DEFAULT_DECOMPRESSED_LIMIT",
    "EOF_EXCEPTION",
    "FILL",
    "GZIP",
    "LZ4",
    "NONE",
    "PIECE",
    "SNAPPY",
    "ZSTD",
    "Codec",
    "Decompressed",
    "codec",
    "codec_name",
    "gzip",
    "legacy_codecs",
    "lz4",
    "none",
    "read_stream",
    "read_whole",
    "snappy",
    "write_stream",
    "zstd",
]

#: every codec Kafka knows, by id (ascending): the kit's one list of codecs
CODECS: dict[int, Codec] = {
    c.id: c for c in (none.CODEC, gzip.CODEC, snappy.CODEC, lz4.CODEC, zstd.CODEC)
}
#: codec name -> id
CODEC_IDS: dict[str, int] = {c.name: c.id for c in CODECS.values()}

NONE, GZIP, SNAPPY, LZ4, ZSTD = (CODEC_IDS[n] for n in ("none", "gzip", "snappy", "lz4", "zstd"))

DEFAULT_DECOMPRESSED_LIMIT = 256 * 1024 * 1024


def codec(codec_id: int) -> Codec:
    """``CompressionType.forId``: the codec of an id, else Kafka's IllegalArgumentException."""
    found = CODECS.get(codec_id)
    if found is None:
        raise IllegalArgumentError(f"Unknown compression type id: {codec_id}")
    return found


def codec_name(codec_id: int) -> str:
    """The codec's name; ``unknown-N`` for an id no codec has (canonical JSON)."""
    found = CODECS.get(codec_id)
    return f"unknown-{codec_id}" if found is None else found.name


def legacy_codecs() -> list[Codec]:
    """The codecs magic 0/1 message sets may use, by id."""
    return [c for c in CODECS.values() if c.legacy_magics]


def read_stream(
    codec_id: int,
    payload: bytes,
    magic: int,
    limit: int = DEFAULT_DECOMPRESSED_LIMIT,
    clients: str = CLIENTS[0],
) -> Decompressed:
    """Decompress ``payload`` as Kafka's ``Compression.wrapForInput(buffer, magic)`` reads it.

    ``magic`` matters for lz4 only (header checksum ignored under magic 0); ``clients`` is the
    Kafka clients line whose codec libraries read it (:data:`CLIENTS`; the broker model of
    Kafka 2.x passes "2.8"). Raises :class:`KafkaError` (or a raw unchecked error) for
    failures Java raises on open, and Kafka's IllegalArgumentException for an id no codec has.
    """
    if clients not in CLIENTS:
        raise ValueError(f"clients: {clients!r} is not one of {', '.join(CLIENTS)}")
    found = codec(codec_id)
    decoded = found.read_stream(payload, Limit(limit), magic, clients)
    if clients == "2.8":  # no ChunkedBytesStream: Kafka 2.x's own buffering (or none)
        return replace(decoded, fill_size=found.fill_size_2_8)
    if found.skip_to_stream:
        return replace(decoded, skip_to_stream=True)
    return decoded


def read_whole(
    codec_id: int, payload: bytes, limit: int = DEFAULT_DECOMPRESSED_LIMIT
) -> bytes | None:
    """The codec's fast path (``Codec.read_whole``): the whole payload when Kafka's stream
    would read it without error or short read, else None (``read_stream`` decides)."""
    found = CODECS.get(codec_id)
    if found is None or found.read_whole is None:
        return None
    return found.read_whole(payload, limit)


def write_stream(codec_id: int, data: bytes, magic: int = 2) -> bytes:
    """Compress as Kafka's Java producer frames it (the codec module's writer, defaults)."""
    found = CODECS.get(codec_id)
    if found is None:
        raise ValueError(f"unknown codec id {codec_id}")
    return found.write_stream(data, magic)
