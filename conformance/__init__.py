"""kafka-conformance: the reference decoder/encoder for Apache Kafka record formats.

>>> from conformance import decode
>>> result = decode(data)            # doctest: +SKIP
>>> result.outcome, [r.offset for r in result.records]   # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: where each public name lives: imported on first use (PEP 562), so a command or a module
#: of the kit imports only what it uses (``import conformance.fileio`` does not load the
#: broker model behind ``decode``)
_HOMES = {
    "ProduceContext": "conformance.broker.profile",
    "decode": "conformance.broker.profile",
    "StreamDecoder": "conformance.stream.decoder",
    "DecodedBatch": "conformance.stream.result",
    "DecodeResult": "conformance.stream.result",
    "Finding": "conformance.stream.result",
    "Tail": "conformance.stream.result",
    "BatchBuilder": "conformance.wire.builder",
    "Record": "conformance.wire.record",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name, "conformance.errors" if name in __all__ else None)
    if home is None:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
