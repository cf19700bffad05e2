"""The Java read model every codec reader returns: a decompressed payload as Kafka reads it.

Mirrors how Kafka's ``Compression.wrapForInput`` streams are consumed by
``ChunkedBytesStream`` (docs/format.md §5.1, "Read granularity"). A payload decompresses
to *pieces*, each what one ``read(len)`` of the Java codec stream can return. How a read
fills its buffer is the codec's *read policy*, declared with its ``ChunkedBytesStream``
buffer size in the codec's :class:`Codec` entry (``codecs.CODECS``).
``PIECE``: one read returns at most the rest of the current piece (an lz4 block, what one gzip
input fill inflates to, a zstd frame). ``FILL``: a read keeps taking pieces until ``len`` bytes
or a -1 (snappy-java; a ``None`` piece is such a -1 mid-stream). A :class:`Decompressed` also
carries a terminal condition (``error``, or a clean end); ``wire.record.JavaStreamReader``
replays it so an error surfaces at the same read as in Java. :class:`Limit` bounds the
decompressed size (:class:`DecompressionLimitError`, a kit resource limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.errors import RESOURCE_LIMIT, DecodeError, DecompressionLimitError, KafkaError

#: how a Java codec stream's read(len) fills its buffer
PIECE = "piece"  # at most the rest of the current piece (lz4 block, gzip member, zstd frame)
FILL = "fill"  # keeps reading pieces until len bytes or a -1 (snappy-java)

#: the Kafka clients lines whose codec libraries differ where the kit models them: "3.5"
#: (Kafka 3.x/4.x: snappy-java 1.1.10, zstd-jni 1.5, lz4-java 1.8) and "2.8" (Kafka 2.x:
#: snappy-java 1.1.8.1, zstd-jni 1.4.9, lz4-java 1.7); the first is the default
CLIENTS = ("3.5", "2.8")

#: Java exception classes the codec libraries throw
IO_EXCEPTION = "java.io.IOException"
EOF_EXCEPTION = "java.io.EOFException"


@dataclass(frozen=True, slots=True)
class Codec:
    """One compression codec as Kafka has it: an entry of ``codecs.CODECS``, defined by its
    own module (``codecs/<name>.py``, its ``CODEC``)."""

    #: ``CompressionType.id``: the low 3 bits of the attributes
    id: int
    #: ``CompressionType.name``, the name in the canonical JSON and on the command line
    name: str
    #: the Java class Kafka reads it through (for documentation and messages)
    java_stream: str
    #: ``read_stream(payload, limit, magic, clients)``: the payload as that Java stream of the
    #: ``clients`` line (:data:`CLIENTS`) reads it
    read_stream: Callable[[bytes, Limit, int, str], Decompressed]
    #: ``write_stream(data, magic)``: the payload as Kafka's Java producer frames it
    write_stream: Callable[[bytes, int], bytes]
    #: Kafka's quirk policy: how one ``read(len)`` of the Java stream fills its buffer
    read_policy: str
    #: the ``ChunkedBytesStream`` buffer size (``Compression.decompressionOutputSize``)
    fill_size: int
    #: Kafka 2.x (clients "2.8"): the ``BufferedInputStream`` around the stream (gzip, zstd:
    #: 16 KiB), or 1 where the record reader's ``DataInputStream`` reads it directly
    fill_size_2_8: int
    #: whether magic 0/1 message sets may use it (zstd: magic 2 only, KIP-110)
    legacy_magics: bool
    #: the first Kafka release that has it
    since: tuple[int, ...]
    #: ``ChunkedBytesStream``'s ``delegateSkipToSourceStream`` (3.5+): ``skip`` past its buffer
    #: calls the codec stream's own ``skip`` (lz4: within the current block) instead of
    #: filling the buffer
    skip_to_stream: bool = False
    #: ``read_whole(payload, limit)``: a fast path beside ``read_stream`` for a magic-2
    #: batch's payload: the whole payload decompressed in one call when the Java stream would
    #: read it to its end without error or short read, else None (then ``read_stream``
    #: decides); None: the codec has none. Held to ``read_stream`` by
    #: tests/test_codec_whole.py and the codec fuzz targets (``fuzz.targets.check_read_whole``)
    read_whole: Callable[[bytes, int], bytes | None] | None = None


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
    #: ``skip`` goes to the codec stream (``Codec.skip_to_stream``, set by ``read_stream``)
    skip_to_stream: bool = False

    @property
    def data(self) -> bytes:
        """All decompressed bytes (for diagnostics; Java may not deliver all of them)."""
        return b"".join(p for p in self.pieces if p)


class Limit:
    """The decompressed bytes produced so far, against the configured bound."""

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
                f"{RESOURCE_LIMIT}"
            )


def open_error(cause: DecodeError) -> KafkaError:
    """A failure Java raises while opening the codec stream: ``KafkaException(cause)``."""
    return KafkaError.wrapping(cause)
