"""The kit's own Kafka client, sans-IO (h11's shape: bytes in, events out; the sockets are
``host.broker_socket`` and ``host.kafka_client``), on Kafka's message definitions
(``messages``):

* ``protocol``: :class:`Protocol`, the definitions of one or more releases, newest first;
* ``connection``: :class:`Connection`, one connection's framing, correlation ids, request
  and response headers of every version, bounded reads;
* ``negotiation``: ApiVersions as Java's ``NetworkClient`` negotiates, the versions both
  sides speak;
* ``cluster``: what Metadata says of the cluster (brokers, leaders, topic ids);
* ``calls``: the requests the kit sends and what it reads of their answers.
"""

from __future__ import annotations

from conformance.client.connection import (
    CLOSED,
    NEED_DATA,
    Answer,
    Connection,
    ConnectionClosedError,
    CorrelationError,
    FrameSizeError,
    MalformedAnswerError,
    ProtocolError,
    Sent,
)
from conformance.client.negotiation import BrokerVersions, NegotiationError
from conformance.client.protocol import Protocol, UnknownApiError

__all__ = [
    "CLOSED",
    "NEED_DATA",
    "Answer",
    "BrokerVersions",
    "Connection",
    "ConnectionClosedError",
    "CorrelationError",
    "FrameSizeError",
    "MalformedAnswerError",
    "NegotiationError",
    "Protocol",
    "ProtocolError",
    "Sent",
    "UnknownApiError",
]
