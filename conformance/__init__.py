"""kafka-conformance: the reference decoder/encoder for Apache Kafka record formats.

>>> from conformance import decode
>>> result = decode(data)            # doctest: +SKIP
>>> result.outcome, [r.offset for r in result.records]   # doctest: +SKIP
"""

from __future__ import annotations

from conformance.broker.profile import ProduceContext, decode
from conformance.errors import (
    BrokerContextError,
    BufferUnderflowError,
    CodecError,
    ConfigError,
    CorruptRecordError,
    DecodeError,
    DecompressionLimitError,
    EncodeError,
    IllegalArgumentError,
    IndexOutOfBoundsError,
    InvalidRecordError,
    JavaRuntimeError,
    KafkaError,
    NullPointerError,
    OutOfMemoryError,
    RecordLimitError,
)
from conformance.stream.decoder import StreamDecoder
from conformance.stream.result import DecodedBatch, DecodeResult, Finding, Tail
from conformance.wire.builder import BatchBuilder
from conformance.wire.record import Record

__version__ = "0.1.0"

__all__ = [
    "BrokerContextError",
    "ConfigError",
    "BatchBuilder",
    "BufferUnderflowError",
    "CodecError",
    "CorruptRecordError",
    "DecodeError",
    "DecodeResult",
    "DecodedBatch",
    "DecompressionLimitError",
    "RecordLimitError",
    "EncodeError",
    "Finding",
    "IllegalArgumentError",
    "IndexOutOfBoundsError",
    "InvalidRecordError",
    "JavaRuntimeError",
    "KafkaError",
    "NullPointerError",
    "OutOfMemoryError",
    "ProduceContext",
    "Record",
    "StreamDecoder",
    "Tail",
    "decode",
]
