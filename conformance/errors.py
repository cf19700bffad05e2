"""The one error hierarchy of the kit.

Every failure the decoder can report is a :class:`DecodeError`. Each subclass mirrors the Java
exception Apache Kafka raises for the same bytes; ``kafka_exception`` holds that Java class
name (the one the canonical JSON reports), ``message`` the text Kafka's exception carries, and
``position`` / ``batch_index`` say where in the input it happened (set by the decoder).

===================================  ===================================================
Python class                         Java class (``kafka_exception``)
===================================  ===================================================
CorruptRecordError                   org.apache.kafka.common.errors.CorruptRecordException
InvalidRecordError                   org.apache.kafka.common.InvalidRecordException
KafkaError                           org.apache.kafka.common.KafkaException
DecompressionLimitError(KafkaError)  (kit limit; reported as KafkaException)
RecordLimitError(KafkaError)         (kit limit; reported as KafkaException)
IllegalArgumentError                 java.lang.IllegalArgumentException
IndexOutOfBoundsError                java.lang.IndexOutOfBoundsException
BufferUnderflowError                 java.nio.BufferUnderflowException
NullPointerError                     java.lang.NullPointerException
OutOfMemoryError                     java.lang.OutOfMemoryError (JVM array size limit)
BrokerError and its subclasses       the broker's exceptions for a produced batch, e.g.
                                     RecordTooLargeException, InvalidTimestampException,
                                     OutOfOrderSequenceException (``conformance.broker``)
CorruptIndexError                    org.apache.kafka.storage.internals.log.CorruptIndexException
CorruptSnapshotError                 org.apache.kafka.storage.internals.log.CorruptSnapshotException
CheckpointError                      java.io.IOException (checkpoint and metadata files)
NumberFormatError                    java.lang.NumberFormatException
CodecError                           a compression library's IOException/Error, e.g.
                                     java.util.zip.ZipException, java.io.EOFException,
                                     org.xerial.snappy.SnappyIOException,
                                     org.xerial.snappy.SnappyError, java.io.IOException
MessageRuntimeError and subclasses   java.lang.RuntimeException of Kafka's generated message
                                     classes and ``ByteBufferAccessor`` (``messages``)
NegativeArraySizeError               java.lang.NegativeArraySizeException
===================================  ===================================================

Wrong arguments rather than bad bytes are ``ValueError`` subclasses: :class:`EncodeError`
(what Kafka's builders refuse), :class:`ConfigError` (a setting Kafka refuses,
``ConfigException``), :class:`BrokerContextError` (broker-profile arguments that describe
no broker), :class:`PartitionerError` (a partitioner name or composition that names no
partitioner) and :class:`CorpusError` (corpora that cannot be trusted or read: a tampered
corpora package, one of another version, a FIFO in a corpora directory).

Kafka sometimes lets raw JDK exceptions escape (docs/format.md §4.2); the kit reports those
faithfully rather than inventing a nicer class, because the verdict must match Kafka's.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from conformance.jsondoc import JsonDocument


class DecodeError(JsonDocument, Exception):
    """Base class of every error the kit reports for malformed bytes."""

    kafka_exception: str = "java.lang.RuntimeException"

    def __init__(
        self,
        message: str | None = None,
        *,
        cause: DecodeError | None = None,
        java_class: str | None = None,
        position: int | None = None,
        batch_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        if java_class is not None:
            self.kafka_exception = java_class
        self.position = position
        self.batch_index = batch_index

    def java_string(self) -> str:
        """``Throwable.toString()`` of the mirrored Java exception."""
        if self.message is None:
            return self.kafka_exception
        return f"{self.kafka_exception}: {self.message}"

    def __str__(self) -> str:
        where = ""
        if self.batch_index is not None:
            where = f" (batch {self.batch_index} at byte {self.position})"
        return f"{self.java_string()}{where}"

    def to_dict(self) -> dict[str, object]:
        return {
            "kafka_exception": self.kafka_exception,
            "message": self.message,
            "batch_index": self.batch_index,
            "position": self.position,
        }


class CorruptRecordError(DecodeError):
    kafka_exception = "org.apache.kafka.common.errors.CorruptRecordException"


class InvalidRecordError(DecodeError):
    kafka_exception = "org.apache.kafka.common.InvalidRecordException"


class KafkaError(DecodeError):
    kafka_exception = "org.apache.kafka.common.KafkaException"

    @classmethod
    def wrapping(cls, cause: DecodeError) -> KafkaError:
        """``new KafkaException(cause)``: the message is ``cause.toString()``."""
        return cls(cause.java_string(), cause=cause)


#: the end of every message of a kit resource limit (:class:`DecompressionLimitError`,
#: :class:`RecordLimitError`): Kafka has no such limit, so a verdict carrying it is the kit's
RESOURCE_LIMIT = "(kafka-conformance resource limit)"


def is_resource_limit(message: str | None) -> bool:
    """Whether an error message is a kit resource limit's (not Kafka's verdict)."""
    return RESOURCE_LIMIT in (message or "")


class DecompressionLimitError(KafkaError):
    """The decompressed size of one batch exceeded the configured limit.

    Kafka itself has no such limit (it would run out of heap); the kit stops early so memory
    stays bounded. Reported as a KafkaException.
    """


class RecordLimitError(KafkaError):
    """A batch handed out more records than the caller keeps (``max_records``).

    Kafka's consumer streams a batch's records and never holds them all; the kit's
    :func:`~conformance.decode` keeps them, so it stops at a configured count to keep memory
    bounded (docs/memory.md). Callers that do not need the records use
    ``StreamDecoder(keep=0)``, which has no such limit. Reported as a KafkaException.
    """


class JavaRuntimeError(DecodeError):
    """A raw JDK exception that Kafka lets escape."""


class IllegalArgumentError(JavaRuntimeError):
    kafka_exception = "java.lang.IllegalArgumentException"


class IndexOutOfBoundsError(JavaRuntimeError):
    kafka_exception = "java.lang.IndexOutOfBoundsException"


class BufferUnderflowError(JavaRuntimeError):
    kafka_exception = "java.nio.BufferUnderflowException"


class NullPointerError(JavaRuntimeError):
    kafka_exception = "java.lang.NullPointerException"


class IllegalStateError(JavaRuntimeError):
    """``java.lang.IllegalStateException`` (Kafka's ``AbstractIterator`` handed a null)."""

    kafka_exception = "java.lang.IllegalStateException"


class OutOfMemoryError(DecodeError):
    """The JVM refuses a buffer Kafka allocates from a length read off the wire.

    ``DefaultRecord.readFrom(InputStream)`` (records of compressed batches) and the legacy
    deep iterator allocate the record/entry buffer *before* reading it, so a length above the
    64-bit HotSpot array limit (2147483645 bytes for ``byte[]``) raises
    ``OutOfMemoryError: Requested array size exceeds VM limit`` whatever the heap: a Kafka
    quirk the kit mirrors (found by differential fuzzing). Smaller lengths that do not fit the
    heap give "Java heap space" in Java, which depends on ``-Xmx``; the kit reports those as
    Kafka does when the allocation succeeds (the payload "reached EOF").
    """

    kafka_exception = "java.lang.OutOfMemoryError"


#: the largest ``byte[]`` 64-bit HotSpot allocates (``arrayOopDesc::max_array_length``)
JVM_MAX_BYTE_ARRAY = 2147483645
#: a JVM that allocates more than this (256 MiB) before it reads on answers according to its
#: heap (OutOfMemoryError under the oracles' -Xmx1g, or after seconds of zeroing): the
#: differential fuzzers do not compare such inputs (:class:`Allocations` measures them)
HEAP_DEPENDENT = 256 * 1024 * 1024


class Allocations:
    """The largest buffer Kafka would have allocated from a wire length while this is active
    (``with Allocations() as a: decode(...)``, then ``a.largest``).

    Diagnostics for the differential fuzzer: a Java verdict reached after a huge allocation
    depends on the JVM's heap. The watch is context-local (a ``ContextVar``: per thread and
    per asyncio task) and exists only inside the ``with``; outside one, nothing is recorded
    and the core keeps no state between calls.
    """

    __slots__ = ("largest", "_token")

    def __init__(self) -> None:
        self.largest = 0
        self._token: Token[Allocations | None] | None = None

    def __enter__(self) -> Allocations:
        self.largest = 0
        self._token = _WATCH.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _WATCH.reset(self._token)
            self._token = None


_WATCH: ContextVar[Allocations | None] = ContextVar("conformance_allocations", default=None)


def watching_allocations() -> bool:
    """Whether an :class:`Allocations` watch is active in this context (the native paths then
    leave compressed payloads to the Python fast paths, which record what Kafka's codec
    libraries would allocate)."""
    return _WATCH.get() is not None


def jvm_allocate(length: int) -> None:
    """``ByteBuffer.allocate(length)`` as far as the array size limit goes."""
    if length > JVM_MAX_BYTE_ARRAY:
        raise OutOfMemoryError("Requested array size exceeds VM limit")
    watch = _WATCH.get()
    if watch is not None and length > watch.largest:
        watch.largest = length


class CodecError(DecodeError):
    """An error raised by a compression library (Java ``IOException`` family unless noted)."""

    kafka_exception = "java.io.IOException"

    @property
    def is_io_exception(self) -> bool:
        """False for ``java.lang.Error`` subclasses (SnappyError) and unchecked exceptions."""
        return self.kafka_exception not in _UNCHECKED_CODEC_CLASSES


_UNCHECKED_CODEC_CLASSES = frozenset(
    {
        "org.xerial.snappy.SnappyError",
        "java.nio.BufferUnderflowException",
        "java.lang.RuntimeException",
        "net.jpountz.lz4.LZ4Exception",
        "java.lang.NegativeArraySizeException",
    }
)


class CorruptIndexError(DecodeError):
    """``.index`` / ``.timeindex`` / ``.txnindex`` failed Kafka's ``sanityCheck()``."""

    kafka_exception = "org.apache.kafka.storage.internals.log.CorruptIndexException"


class CorruptSnapshotError(DecodeError):
    """A producer-state ``.snapshot`` file Kafka refuses to load."""

    kafka_exception = "org.apache.kafka.storage.internals.log.CorruptSnapshotException"


class CheckpointError(DecodeError):
    """A checkpoint / metadata file Kafka refuses (``java.io.IOException`` family)."""

    kafka_exception = "java.io.IOException"


class NumberFormatError(JavaRuntimeError):
    kafka_exception = "java.lang.NumberFormatException"


# --------------------------------------------------------------------------- the broker's verdict
# What a broker raises while validating a Produce request (``conformance.broker``); each class
# is the Java exception of that name. ``broker.codes.error_for`` maps them to the protocol's
# error codes as ``Errors.forException`` does.


class BrokerError(DecodeError):
    """An exception a broker raises for a produced batch (``conformance.broker``)."""


class RecordTooLargeError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.RecordTooLargeException"


class RecordBatchTooLargeError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.RecordBatchTooLargeException"


class InvalidTimestampError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.InvalidTimestampException"


class UnsupportedCompressionTypeError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.UnsupportedCompressionTypeException"


class UnsupportedForMessageFormatError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.UnsupportedForMessageFormatException"


class UnsupportedVersionError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.UnsupportedVersionException"


class OutOfOrderSequenceError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.OutOfOrderSequenceException"


class InvalidProducerEpochError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.InvalidProducerEpochException"


class InvalidTxnStateError(BrokerError):
    kafka_exception = "org.apache.kafka.common.errors.InvalidTxnStateException"


class UnsupportedOperationError(JavaRuntimeError):
    kafka_exception = "java.lang.UnsupportedOperationException"


class RecordValidationError(BrokerError):
    """``RecordValidationException``: records of a batch failed validation; ``invalid`` is the
    exception the partition is answered with, ``record_errors`` the ``(batch index, message)``
    pairs (KIP-467) of every failing record."""

    kafka_exception = "org.apache.kafka.common.errors.RecordValidationException"

    def __init__(self, invalid: DecodeError, record_errors: list[tuple[int, str | None]]) -> None:
        super().__init__(invalid.message)
        self.invalid = invalid
        self.record_errors = record_errors


# --------------------------------------------------------------------------- protocol messages
# What Kafka's generated message classes (``org.apache.kafka.common.message.*Data``, metadata
# records, coordinator keys and values) and ``ByteBufferAccessor`` throw on bytes or values
# (``conformance.messages``). Besides these: ``BufferUnderflowError`` (a fixed-size read past
# the end), ``IllegalArgumentError`` (a varint too long; ``ByteBuffer.limit`` of a zero-copy
# length past the end), ``UnsupportedVersionError`` and ``NullPointerError``.


class MessageRuntimeError(JavaRuntimeError):
    """A plain ``java.lang.RuntimeException`` thrown by a generated message class or its
    ``Readable``; the subclasses name which one (the Java class is the same)."""

    kafka_exception = "java.lang.RuntimeException"


class CollectionSizeError(MessageRuntimeError):
    """``Tried to allocate a collection of size N, but there are only M bytes remaining.``: an
    array length larger than the bytes left, refused before anything is allocated."""


class ByteArraySizeError(MessageRuntimeError):
    """``Error reading byte array of N byte(s): only M byte(s) available``
    (``ByteBufferAccessor.readArray``: strings, bytes, unknown tagged fields)."""


class NullFieldError(MessageRuntimeError):
    """``non-nullable field X was serialized as null``: a negative length where the version
    does not allow null."""


class StringLengthError(MessageRuntimeError):
    """``string field X had invalid length N`` (a compact string longer than 0x7fff)."""


class TagVersionError(MessageRuntimeError):
    """``Tag N is not valid for version V``: a known tag outside its tagged versions."""


class RawTagError(MessageRuntimeError):
    """Writing unknown tagged fields that are out of order or reuse a known tag
    (``RawTaggedFieldWriter``)."""


class FieldTooLongError(MessageRuntimeError):
    """``'x' field is too long to be serialized``: a string over 0x7fff UTF-8 bytes."""


class NegativeArraySizeError(JavaRuntimeError):
    """``new byte[n]`` with n < 0 (an unknown tagged field's negative size)."""

    kafka_exception = "java.lang.NegativeArraySizeException"


class ConfigError(ValueError):
    """A topic or broker setting Kafka refuses (``ConfigException``: a value its ``ConfigDef``
    cannot parse as the setting's type or that fails its validator, a setting the broker
    version does not have); the message names the setting (``conformance.broker.config``)."""

    kafka_exception = "org.apache.kafka.common.config.ConfigException"


class BrokerContextError(ValueError):
    """Arguments of the broker profile that describe no broker: a leader epoch outside Kafka's
    ``int`` (0 .. 2^31-1), a :class:`~conformance.broker.profile.ProduceContext` and a
    :class:`~conformance.broker.log.PartitionLog` of other broker versions or topic
    configurations (``conformance.broker.profile``)."""


class CorpusError(ValueError):
    """Corpora that ``check`` (or ``check-broker``) cannot use as they are, found before any
    case runs (``conformance.corpus.package.identity``): a corpora package whose files do not
    match the digest its ``corpus.json`` records (a file changed, missing or added), of
    another version than the kit, with a ``corpus.json`` that is not valid JSON or of an
    unknown format; a corpora directory that does not exist, cannot be read, or holds
    something that is not a regular file (a FIFO, socket or device, never opened). The
    message names the path and what to do."""


class PartitionerError(ValueError):
    """A partitioner that is not known: a name not in the registry, or a composition
    (``HASH|POSITIVE|mod``) with an unknown hash, positive step, reduction or hash parameter,
    or of the wrong shape; the message names what is not known and what is
    (``conformance.partitioners``, docs/partitioners.md)."""


class EncodeError(ValueError):
    """The encoder was asked for something Kafka's builders refuse (mirrors their IAE)."""

    kafka_exception = "java.lang.IllegalArgumentException"


__all__ = [
    "HEAP_DEPENDENT",
    "RESOURCE_LIMIT",
    "BrokerContextError",
    "BrokerError",
    "BufferUnderflowError",
    "ByteArraySizeError",
    "CollectionSizeError",
    "FieldTooLongError",
    "MessageRuntimeError",
    "NegativeArraySizeError",
    "NullFieldError",
    "RawTagError",
    "StringLengthError",
    "TagVersionError",
    "CheckpointError",
    "CodecError",
    "ConfigError",
    "CorpusError",
    "CorruptIndexError",
    "CorruptSnapshotError",
    "CorruptRecordError",
    "DecodeError",
    "DecompressionLimitError",
    "RecordLimitError",
    "EncodeError",
    "IllegalArgumentError",
    "IllegalStateError",
    "IndexOutOfBoundsError",
    "InvalidProducerEpochError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "InvalidTxnStateError",
    "JavaRuntimeError",
    "KafkaError",
    "NullPointerError",
    "NumberFormatError",
    "OutOfOrderSequenceError",
    "PartitionerError",
    "RecordBatchTooLargeError",
    "RecordTooLargeError",
    "RecordValidationError",
    "UnsupportedCompressionTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedOperationError",
    "UnsupportedVersionError",
    "is_resource_limit",
]
