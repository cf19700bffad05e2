"""The broker's verdict on produced records: what a Kafka broker answers, and what it stores.

The consumer's question is ``conformance.decode``; this package answers the producer's: would
a broker of a given version accept these records in a Produce request, with which error code,
exception and per-record errors, and what would it rewrite (docs/broker.md)?

>>> from conformance.broker import PartitionLog
>>> log = PartitionLog({"cleanup.policy": "compact"}, version="3.9.2")
>>> verdict = log.produce(batch_bytes, produce_version=9, now=1_700_000_000_000)
>>> verdict.response.error, verdict.to_json()

=================  ===========================================================================
module             mirrors
=================  ===========================================================================
``versions``       what differs between the supported broker lines (data)
``config``         ``LogConfig``: the topic settings the checks read
``request``        ``KafkaApis`` / ``ProduceRequest.validateRecords``
``log``            ``UnifiedLog.append`` (``analyzeAndValidateRecords``, the append)
``validator``      ``LogValidator`` (checks, offsets, rewrites, rebuilds)
``records``        the records through ``LogValidator``'s three iterators
``producers``      ``ProducerStateManager`` / ``ProducerAppendInfo`` (idempotence)
``response``       ``ReplicaManager``: exceptions as the partition's response
``codes``          ``Errors`` and ``Errors.forException``
``verdict``        the answer and its canonical JSON
=================  ===========================================================================

Sans-IO like the rest of the core: bytes and settings in, a :class:`ProduceVerdict` out; a
:class:`PartitionLog` keeps the partition's state (log end, producers) between produces.
"""

from __future__ import annotations

from conformance.broker.config import TopicConfig
from conformance.broker.log import PartitionLog
from conformance.broker.verdict import FORMAT, PartitionResponse, ProduceVerdict
from conformance.broker.versions import DEFAULT_VERSION, VERSIONS, BrokerVersion

__all__ = [
    "DEFAULT_VERSION",
    "FORMAT",
    "VERSIONS",
    "BrokerVersion",
    "PartitionLog",
    "PartitionResponse",
    "ProduceVerdict",
    "TopicConfig",
]
