"""The wire of ``capture.produce``: Produce, Fetch, Metadata and the admin calls, on the kit's
own client (``conformance.client`` over ``host.broker_socket``: Kafka's definitions, no
third-party Kafka client).

``WireClient`` sends one request at a time over one connection (to a
:class:`~conformance.capture.proxy.RecordingProxy`, which records the frames, or to a broker)
and tells an answer from a closed connection (how a broker answers a request it cannot read).
The partition answers of a Produce answer frame are read into the shape of the broker
verdict's ``response`` (``read_produce_response``); the stored batches of each request are
cut from a Fetch from offset 0 (``stored_by_request``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.broker.codes import error_name
from conformance.client import calls
from conformance.client.cluster import API_METADATA, metadata_request, read_metadata
from conformance.client.connection import read_answer_frame, read_request_frame
from conformance.client.protocol import Protocol
from conformance.corpus.produce.golden import stored_b64
from conformance.host.broker_socket import WIRE_ERRORS, BrokerConnection
from conformance.host.kafka_client import KafkaClient
from conformance.jvm.message_defs import client_protocol
from conformance.messages.schema import Versions
from conformance.messages.value import Message
from conformance.stream.splitter import Splitter

__all__ = [
    "API_FETCH",
    "API_PRODUCE",
    "CLIENT_ID",
    "FETCH_VERSION",
    "TIMEOUT_MS",
    "Request",
    "WireClient",
    "create_topics",
    "delete_topics",
    "fetch_partition",
    "leader_address",
    "new_fetch_request",
    "new_produce_request",
    "read_api_versions",
    "produce_version_for",
    "read_produce_partitions",
    "read_produce_response",
    "read_produce_responses",
    "read_produce_versions",
    "stored_by_request",
]

API_PRODUCE = 0
API_FETCH = 1
FETCH_VERSION = 11  # topic names (v13+ has ids), spoken by 2.8 (v0-v12) through 4.x (v4+)
FETCH_MAX_BYTES = 1 << 20
#: the most a whole partition may hold, and the longest its Fetches may take (a broker whose
#: partition never ends gets a verdict, not a loop)
WHOLE_PARTITION_BYTES = 256 << 20
WHOLE_PARTITION_SECONDS = 120.0
TIMEOUT_MS = 30_000
CLIENT_ID = "kafka-conformance-produce-golden"


@dataclass(frozen=True)
class Request:
    """A request to send: its API, version and body."""

    api_key: int
    version: int
    body: Message


def read_produce_response(frame: bytes, version: int) -> dict[str, Any]:
    """The (only) partition response of a Produce response frame, shaped like the verdict's
    ``response`` (64-bit numbers as decimal strings; fields the version lacks at their
    defaults)."""
    parts = list(read_produce_responses(frame, version).values())
    if len(parts) != 1:
        raise ValueError(f"Produce response with {len(parts)} partitions (expected 1)")
    return parts[0]


def read_produce_responses(frame: bytes, version: int) -> dict[tuple[str, int], dict[str, Any]]:
    """Every partition response of a Produce response frame by (topic, partition), each
    shaped as :func:`read_produce_response`'s (the topic is its id as text from v13 on)."""
    body = read_answer_frame(client_protocol(), API_PRODUCE, version, frame)
    return calls.read_produce_answer(body, version)


def read_produce_partitions(
    frame: bytes, version: int
) -> tuple[str | None, int, list[tuple[str, int, bytes]]]:
    """The transactional id, acks and every (topic, partition, records) of a Produce
    request frame (the topic is its id as text from v13 on)."""
    request = read_request_frame(client_protocol(), frame)
    return calls.read_produce_request(request.body, version)


def new_produce_request(
    topic: str, records: bytes, version: int, txn: str | None, topic_id: Any = None
) -> Request:
    """A Produce request of ``records`` for ``topic``-0 (v13+: by ``topic_id``, the topic's
    id as Metadata v10+ gives it), acks -1."""
    body = calls.produce_request(
        client_protocol(),
        version,
        [(topic, 0, records)],
        acks=-1,
        timeout_ms=TIMEOUT_MS,
        transactional_id=txn,
        topic_ids={topic: topic_id} if topic_id is not None else None,
    )
    return Request(API_PRODUCE, version, body)


def new_fetch_request(
    topic: str,
    partition: int = 0,
    offset: int = 0,
    *,
    version: int = FETCH_VERSION,
    partition_max_bytes: int = FETCH_MAX_BYTES,
    isolation: int = 0,
    topic_id: uuid.UUID | None = None,
) -> Request:
    """A consumer's Fetch of one partition (``version`` 13+: by ``topic_id``), MaxWaitMs
    ``calls.FETCH_MAX_WAIT_MS`` and MinBytes 0."""
    body = calls.fetch_request(
        client_protocol(),
        version,
        topic,
        partition,
        offset,
        partition_max_bytes=partition_max_bytes,
        max_bytes=FETCH_MAX_BYTES,
        isolation=isolation,
        topic_id=topic_id,
    )
    return Request(API_FETCH, version, body)


class WireClient:
    """One connection (to the proxy, or to ``address``: one of its listeners or a broker), a
    request at a time; reconnects after the broker closed it (its answer to a request it
    cannot read). Every wait is bounded (``timeout`` for a whole answer, default
    ``host.broker_socket.answer_timeout()``)."""

    def __init__(
        self,
        proxy: Any = None,
        timeout: float | None = None,
        address: tuple[str, int] | None = None,
        protocol: Protocol | None = None,
    ) -> None:
        self.address = address or (proxy.host, proxy.port)
        self.protocol = protocol or client_protocol()
        self.connection = BrokerConnection(
            self.address, self.protocol, client_id=CLIENT_ID, timeout=timeout
        )

    @property
    def correlation_id(self) -> int:
        return self.connection._next_id - 1

    def exchange(self, request: Request) -> tuple[int, bytes, bytes | None]:
        """(correlation id, request frame, response frame or None: connection closed); the
        frames without their size prefix."""
        sent, answer = self.connection.send(request.api_key, request.version, request.body)
        return sent.correlation_id, sent.frame, None if answer is None else answer.frame

    def answer(self, request: Request) -> Message:
        """The body of the answer to ``request`` (a closed connection raises)."""
        return self.connection.request(request.api_key, request.version, request.body).body

    def versions(self, api: str | int) -> Versions:
        """The versions of ``api`` the broker at the other end and the kit both speak."""
        return self.connection.negotiate().both(self.protocol, api)

    def close(self) -> None:
        self.connection.close()


def read_api_versions(proxy: Any) -> dict[int, tuple[int, int]]:
    """Every API the broker advertises: api key -> (min, max) version (negotiated as Java's
    client does; ranges that are no range are left out)."""
    client = WireClient(proxy)
    try:
        return dict(client.connection.negotiate().ranges)
    finally:
        client.close()


def read_produce_versions(proxy: Any) -> tuple[int, int]:
    """The Produce versions the broker advertises."""
    versions = read_api_versions(proxy).get(API_PRODUCE)
    if versions is None:
        raise ValueError("the broker advertises no Produce versions")
    return versions


def leader_address(proxy: Any, topic: str, partition: int = 0) -> tuple[str, int]:
    """The address of the leader of ``topic``-``partition`` as Metadata names it (through a
    proxy: one of its listeners, since it points every broker of the answer at one)."""
    client = WireClient(proxy)
    try:
        protocol = client.protocol
        version = client.connection.negotiate().newest(protocol, API_METADATA)
        body = client.answer(
            Request(API_METADATA, version, metadata_request(protocol, version, [topic]))
        )
    finally:
        client.close()
    view = read_metadata(body, version)
    t = view.topics.get(topic)
    if t is not None and t.error:
        raise RuntimeError(f"Metadata of {topic}: error {t.error_name}")
    found = view.leader(topic, partition)
    if found is None:
        raise RuntimeError(f"Metadata names no leader of {topic}-{partition}")
    return found[1]


def create_topics(
    bootstrap: str,
    topics: dict[str, dict[str, str]],
    partitions: dict[str, int] | None = None,
    replication: int = 1,
) -> dict[str, str]:
    """Create every topic (its configuration; ``partitions`` of it, default 1; replication
    factor ``replication``), each visible with its leaders; returns topic -> why it was not
    created (a topic that existed already was not created)."""
    specs = {n: ((partitions or {}).get(n, 1), replication, dict(c)) for n, c in topics.items()}
    with KafkaClient(bootstrap, client_protocol(), client_id=CLIENT_ID) as client:
        outcomes = client.create_topics(specs, TIMEOUT_MS)
    return {
        n: f"topic creation refused: {o.reason}"
        for n, o in outcomes.items()
        if not o.created or o.error != "NONE"
    }


def delete_topics(
    bootstrap: str, names: Sequence[str], timeout: float | None = None
) -> dict[str, str]:
    """Delete the topics ``names`` (and no other); returns topic -> why it was not deleted.
    Never raises: a broker that is gone leaves every topic undeleted, with the reason
    (``timeout``: seconds for each answer and in all, default the client's)."""
    if not names:
        return {}
    bounds = {} if timeout is None else {"timeout": timeout, "deadline": timeout}
    try:
        with KafkaClient(bootstrap, client_protocol(), client_id=CLIENT_ID, **bounds) as client:
            results = client.delete_topics(list(names), TIMEOUT_MS)
    except WIRE_ERRORS as exc:
        return {name: str(exc) for name in names}
    return {n: why for n, why in results.items() if why is not None}


def fetch_partition(
    client: WireClient,
    topic: str,
    partition: int = 0,
    *,
    whole: bool = False,
) -> bytes:
    """The partition's records from offset 0 (a Fetch by topic name: v11 where the broker
    speaks it, else the newest both speak up to v12); ``whole``: Fetch again after the last
    batch until the partition's end (a partition larger than one Fetch)."""
    both = client.versions(API_FETCH).intersect(Versions(4, 12))
    if both.empty:
        raise RuntimeError("the broker speaks no Fetch version from 4 to 12 (by topic name)")
    version = FETCH_VERSION if FETCH_VERSION in both else both.highest
    out, offset, fetches = bytearray(), 0, 0
    deadline = time.monotonic() + WHOLE_PARTITION_SECONDS
    while True:
        fetches += 1
        if len(out) > WHOLE_PARTITION_BYTES or time.monotonic() > deadline:
            raise RuntimeError(
                f"{topic}-{partition} does not end: {fetches - 1} Fetches gave {len(out)} bytes "
                f"up to offset {offset} (the kit reads at most {WHOLE_PARTITION_BYTES >> 20} MiB "
                f"in {WHOLE_PARTITION_SECONDS:.0f} s)"
            )
        body = client.answer(new_fetch_request(topic, partition, offset, version=version))
        top, parts = calls.read_fetch_answer(body, version)
        found = [
            (p["errorCode"], p["records"])
            for p in parts
            if p["topic"] == topic and p["partition"] == partition
        ]
        if top or len(found) != 1 or found[0][0] != 0:
            shown = [(error_name(e), len(r or b"")) for e, r in found]
            raise RuntimeError(
                f"Fetch of {topic}-{partition} answered "
                + (error_name(top) if top else f"{shown!r}")
            )
        data = found[0][1] or b""
        if not whole:
            return data
        batches = [b for b in Splitter(data, "memory") if b.last_offset >= offset]
        if not batches:
            return bytes(out)
        for b in batches:
            out += b.raw
        offset = batches[-1].last_offset + 1


def stored_by_request(fetched: bytes, answers: Sequence[dict[str, Any] | None]) -> list[str | None]:
    """Per request, the fetched batches it stored: from its base offset to the next accepted
    request's (None: an error, or a duplicate that stored nothing)."""
    batches = [(b.last_offset, bytes(b.raw)) for b in Splitter(fetched, "memory")]
    starts = sorted(
        {int(a["baseOffset"]) for a in answers if a is not None and a["errorCode"] == 0}
    )
    out: list[str | None] = []
    seen: set[int] = set()
    for a in answers:
        if a is None or a["errorCode"] != 0 or int(a["baseOffset"]) in seen:
            out.append(None)
            continue
        first = int(a["baseOffset"])
        seen.add(first)
        later = [s for s in starts if s > first]
        end = later[0] if later else 1 << 63
        data = b"".join(raw for last, raw in batches if first <= last < end)
        out.append(stored_b64(data) if data else None)
    return out


def produce_version_for(requested: int, advertised: tuple[int, int], kafka: tuple[int, int]) -> int:
    """The Produce version a case asking for ``requested`` is sent at, to a broker that
    advertises ``advertised``, judged as a Kafka line speaking ``kafka``: ``requested`` when
    the broker advertises it, or when Kafka itself does not speak it (the case is about a
    version the broker must refuse); else the nearest version the kit, the broker and Kafka
    all speak (ValueError when there is none)."""
    ours = client_protocol().versions(API_PRODUCE)
    low, high = advertised
    if requested in ours and (low <= requested <= high or not kafka[0] <= requested <= kafka[1]):
        return requested
    both = ours.intersect(Versions(low, high)).intersect(Versions(*kafka))
    if both.empty:
        raise ValueError(
            f"no Produce version the kit (v{ours.lowest}-{ours.highest}), the target "
            f"(v{low}-{high}) and Kafka (v{kafka[0]}-{kafka[1]}) all speak"
        )
    return min(range(both.lowest, both.highest + 1), key=lambda v: (abs(v - requested), v))
