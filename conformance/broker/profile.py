"""``conformance.decode``: the consumer's verdict, and with ``profile="broker"`` the broker's.

Profiles ``kafka`` and ``strict`` are the consumer's verdict (``stream.decoder.decode``).
Profile ``broker`` judges the bytes as one partition's records in a Produce request: the
consumer's verdict on them (memory semantics) plus ``result.broker``, the
:class:`~conformance.broker.verdict.ProduceVerdict` of a broker given by a
:class:`ProduceContext` (version, Produce version, topic configuration, clock, leader epoch).
A :class:`~conformance.broker.log.PartitionLog` passed as ``log`` keeps the partition's state
across calls, so a sequence of produces is judged like one broker judges them. The log is the
broker: a context of another broker version, or with another topic configuration, is refused
(:class:`~conformance.errors.BrokerContextError`, naming both); without a context the log's
version judges, with its newest Produce version.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from conformance import codecs
from conformance.broker.codes import COORDINATOR_ERRORS, NONE, unknown_coordinator
from conformance.broker.log import DEFAULT_TRANSACTIONAL_ID, PartitionLog
from conformance.broker.verdict import ProduceVerdict
from conformance.broker.versions import DEFAULT_VERSION, broker_version
from conformance.errors import BrokerContextError
from conformance.stream.decoder import DEFAULT_MAX_RECORDS
from conformance.stream.decoder import decode as decode_stream
from conformance.stream.result import DecodeResult, Mode, Profile
from conformance.stream.splitter import Source

__all__ = ["ProduceContext", "decode"]

#: a leader epoch is a Kafka ``int`` the broker counts up from 0
LEADER_EPOCH_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class ProduceContext:
    """What the broker profile needs besides the bytes."""

    #: the broker line (``conformance.broker.VERSIONS``)
    version: str = DEFAULT_VERSION
    #: the Produce API version of the request (None: the newest the broker speaks)
    produce_version: int | None = None
    #: the topic's configuration, Kafka's names and string values
    topic: Mapping[str, str] = field(default_factory=dict)
    #: the broker's clock in ms (None: this machine's clock when the verdict is made)
    now: int | None = None
    #: the leader epoch the broker stamps on the batch
    leader_epoch: int = 0
    #: 2.x/3.x brokers: the inter-broker protocol (bounds the topics' message format)
    inter_broker_protocol_version: str | None = None
    #: the request's transactional id (None: a request without one)
    transactional_id: str | None = DEFAULT_TRANSACTIONAL_ID
    #: 3.6+ brokers (KIP-890): the transaction coordinator's answer when the broker asks
    #: whether a transactional batch's partition is in the producer's transaction (a Kafka
    #: ``Errors`` name of ``codes.COORDINATOR_ERRORS``; NONE: it is)
    coordinator: str = NONE

    def __post_init__(self) -> None:
        if self.coordinator not in COORDINATOR_ERRORS:
            raise ValueError(unknown_coordinator(self.coordinator))
        epoch = self.leader_epoch
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise BrokerContextError(f"the leader epoch is an integer, not {epoch!r}")
        if not 0 <= epoch <= LEADER_EPOCH_MAX:
            raise BrokerContextError(
                f"the leader epoch {epoch} is out of range: a Kafka int, 0..{LEADER_EPOCH_MAX}"
            )

    def check_log(self, log: PartitionLog) -> None:
        """Refuse a ``log`` of another broker than this context describes: another broker
        version, or (where the context names one) another topic configuration."""
        if broker_version(self.version).version != log.version.version:
            raise BrokerContextError(
                f"the produce context is Kafka {self.version}'s and the log Kafka "
                f"{log.version.version}'s: give both the same version (or no context: the "
                "log's version judges)"
            )
        topic = tuple(sorted((k, str(v)) for k, v in self.topic.items()))
        if topic and topic != log.topic.properties:
            raise BrokerContextError(
                f"the produce context's topic configuration {dict(topic)} is not the log's "
                f"{dict(log.topic.properties)}: the log's topic judges (give the context none)"
            )

    def log(
        self,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
        max_records: int | None = DEFAULT_MAX_RECORDS,
    ) -> PartitionLog:
        """A fresh partition of this topic on this broker (with the kit's resource limits)."""
        return PartitionLog(
            self.topic,
            version=self.version,
            inter_broker_protocol_version=self.inter_broker_protocol_version,
            decompressed_limit=decompressed_limit,
            max_records=max_records,
        )

    def produce_version_or_newest(self) -> int:
        return (
            self.produce_version
            if self.produce_version is not None
            else broker_version(self.version).produce_versions[1]
        )

    def clock(self) -> int:
        return self.now if self.now is not None else int(time.time() * 1000)


def decode(
    data: bytes | bytearray | memoryview | Source,
    *,
    mode: Mode = "memory",
    profile: Profile = "kafka",
    filename: str = "<input>",
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    max_records: int | None = DEFAULT_MAX_RECORDS,
    produce: ProduceContext | None = None,
    log: PartitionLog | None = None,
) -> DecodeResult:
    """Kafka's verdict on ``data``: what its consumer does (every profile) and, with profile
    ``broker``, what a broker answers to the same bytes produced (``produce``: the context,
    default ``ProduceContext()``; ``log``: a partition whose state the produce continues).

    Never raises for bad input; ``ValueError``/``TypeError`` for wrong arguments (profile
    ``broker`` with ``mode="file"``, ``produce`` or ``log`` without profile ``broker``;
    :class:`~conformance.errors.BrokerContextError`: a ``produce`` context and a ``log`` of
    other broker versions or topic configurations).
    """
    verdict: ProduceVerdict | None = None
    if profile == "broker":
        if mode != "memory":
            raise ValueError("profile 'broker' judges a Produce request's records: mode 'memory'")
        if isinstance(data, bytearray | memoryview):
            data = bytes(data)
        if produce is not None:
            ctx = produce
        elif log is not None:
            ctx = ProduceContext(version=log.version.version)
        else:
            ctx = ProduceContext()
        if log is not None:
            ctx.check_log(log)
        partition = log if log is not None else ctx.log(decompressed_limit, max_records)
        # the broker first: what its append held is freed before the consumer's records are
        # kept, so the peak is the larger of the two, not their sum (docs/memory.md)
        verdict = partition.produce(
            data,  # type: ignore[arg-type]
            produce_version=ctx.produce_version_or_newest(),
            now=ctx.clock(),
            leader_epoch=ctx.leader_epoch,
            transactional_id=ctx.transactional_id,
            coordinator=ctx.coordinator,
        )
    elif produce is not None or log is not None:
        raise ValueError("produce= and log= go with profile='broker'")
    result = decode_stream(
        data,
        mode=mode,
        profile="kafka" if profile == "broker" else profile,
        filename=filename,
        decompressed_limit=decompressed_limit,
        max_records=max_records,
    )
    result.broker = verdict
    return result
