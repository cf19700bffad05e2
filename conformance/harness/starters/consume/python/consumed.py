"""The structures the hook (library.py) fills: what the library's consumer delivered.

Plain data; adapter.py writes them as the consume document (docs/adapter-protocol.md of
kafka-conformance, "The consumer side"). Python 3.11 or later, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the timestamp types Kafka reports (``ConsumerRecord.timestampType()``)
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime", "NoTimestampType")


@dataclass
class Options:
    """What the kit asked for: ``consume --bootstrap ... --topic ... --partition ...``."""

    bootstrap: str  # "127.0.0.1:PORT": the kit's fake broker
    topic: str
    partition: int
    #: "earliest", or an offset to start from (the kit passes "earliest")
    start: str
    #: "read_uncommitted" or "read_committed" (the consumer's isolation.level)
    isolation: str
    #: stop at this budget (milliseconds) and report Error("timeout", ...)
    timeout_ms: int
    #: the group id to use when the consumer subscribes (joins a group) instead of assigning
    #: the partition; the kit's check never passes it (None: use any id). Either way works: the
    #: fake broker is also the group coordinator and serves a group of one
    group: str | None = None


@dataclass
class Header:
    key: str
    value: bytes | None


@dataclass
class Record:
    """One delivered record, as the library's consumer handed it out."""

    offset: int
    timestamp: int  # -1 when the record has none, as Kafka reports it
    timestamp_type: str  # one of TIMESTAMP_TYPES
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)


@dataclass
class Error:
    """The error that stopped the consumer: ``cls`` is the library's error name (or Kafka's
    class name, e.g. "org.apache.kafka.common.KafkaException", when the capabilities declare
    ERROR_CLASSES other than "none"); ``message`` its text."""

    cls: str
    message: str | None = None


@dataclass
class Consumed:
    """Every record delivered, in delivery order, and the error that stopped the consumer
    (None: it reached the end of the partition)."""

    records: list[Record] = field(default_factory=list)
    error: Error | None = None
