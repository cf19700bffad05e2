"""The wire of ``capture.produce``: Produce, Fetch and ApiVersions with kafka-python's classes.

``WireClient`` sends one request at a time over one connection to a
:class:`~conformance.capture.proxy.RecordingProxy` (which records the frames) and tells a
response from a closed connection (how a broker answers a request it cannot read). The
partition response of a Produce response frame is read into the shape of the broker
verdict's ``response`` (``read_produce_response``); the stored batches of each request are
cut from a Fetch from offset 0 (``stored_by_request``).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Sequence
from typing import Any

from conformance.broker.codes import CODES
from conformance.capture.proxy import RecordingProxy, read_fetch_partitions
from conformance.corpus.produce.golden import stored_b64
from conformance.stream.splitter import Splitter

__all__ = [
    "API_PRODUCE",
    "CLIENT_ID",
    "TIMEOUT_MS",
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
FETCH_VERSION = 11  # topic names (v13+ has ids), spoken by 2.8 (v0-v12) through 4.x (v4+)
FETCH_MAX_BYTES = 1 << 20
TIMEOUT_MS = 30_000
CLIENT_ID = "kafka-conformance-produce-golden"


def _error_name(code: int) -> str:
    names = {c: n for n, c in CODES.items()}
    if code in names:
        return names[code]
    import kafka.errors

    return str(kafka.errors.for_code(code).message)


def read_produce_response(frame: bytes, version: int) -> dict[str, Any]:
    """The (only) partition response of a Produce response frame, shaped like the verdict's
    ``response`` (64-bit numbers as decimal strings; fields the version lacks at their
    defaults)."""
    parts = list(read_produce_responses(frame, version).values())
    if len(parts) != 1:
        raise ValueError(f"Produce response with {len(parts)} partitions (expected 1)")
    return parts[0]


def _topic_key(topic: Any, version: int) -> str:
    """A topic of a Produce request or response: its name, or (v13+) its id as text."""
    return str(topic.topic_id) if version >= 13 else str(topic.name)


def read_produce_responses(frame: bytes, version: int) -> dict[tuple[str, int], dict[str, Any]]:
    """Every partition response of a Produce response frame by (topic, partition), each
    shaped as :func:`read_produce_response`'s (the topic is its id as text from v13 on)."""
    from kafka.protocol.producer import ProduceResponse

    resp = ProduceResponse.decode(frame, version=version, header=True)
    return {
        (_topic_key(t, version), p.index): _partition_response(p, version)
        for t in resp.responses
        for p in t.partition_responses
    }


def _partition_response(p: Any, version: int) -> dict[str, Any]:
    return {
        "errorCode": p.error_code,
        "errorName": _error_name(p.error_code),
        "errorMessage": p.error_message if version >= 8 else None,
        "baseOffset": str(p.base_offset),
        "logAppendTimeMs": str(p.log_append_time_ms if version >= 2 else -1),
        "logStartOffset": str(p.log_start_offset if version >= 5 else -1),
        "recordErrors": [
            {"batchIndex": e.batch_index, "batchIndexErrorMessage": e.batch_index_error_message}
            for e in (p.record_errors if version >= 8 else [])
        ],
    }


def read_produce_partitions(
    frame: bytes, version: int
) -> tuple[str | None, int, list[tuple[str, int, bytes]]]:
    """The transactional id, acks and every (topic, partition, records) of a Produce
    request frame (the topic is its id as text from v13 on)."""
    from kafka.protocol.producer import ProduceRequest

    req = ProduceRequest.decode(frame, version=version, header=True)
    parts = [
        (_topic_key(t, version), p.index, bytes(p.records or b""))
        for t in req.topic_data
        for p in t.partition_data
    ]
    return (req.transactional_id if version >= 3 else None), int(req.acks), parts


def new_produce_request(
    topic: str, records: bytes, version: int, txn: str | None, topic_id: Any = None
) -> Any:
    """A Produce request of ``records`` for ``topic``-0 (v13+: by ``topic_id``, the topic's
    id as Metadata v10+ gives it)."""
    from kafka.protocol.producer import ProduceRequest

    r = ProduceRequest[version]
    part = r.TopicProduceData.PartitionProduceData(index=0, records=records)
    named = {"topic_id": topic_id} if version >= 13 else {"name": topic}
    return r(
        transactional_id=txn,
        acks=-1,
        timeout_ms=TIMEOUT_MS,
        topic_data=[r.TopicProduceData(partition_data=[part], **named)],
    )


def new_fetch_request(
    topic: str,
    partition: int = 0,
    offset: int = 0,
    *,
    version: int = FETCH_VERSION,
    partition_max_bytes: int = FETCH_MAX_BYTES,
    isolation: int = 0,
    topic_id: Any = None,
) -> Any:
    """A consumer's Fetch of one partition (``version`` 13+: by ``topic_id``), answered at
    once (no wait, no minimum)."""
    from kafka.protocol.consumer import FetchRequest

    f = FetchRequest[version]
    part = f.FetchTopic.FetchPartition(
        partition=partition,
        current_leader_epoch=-1,
        fetch_offset=offset,
        log_start_offset=-1,
        partition_max_bytes=partition_max_bytes,
    )
    named = {"topic_id": topic_id} if version >= 13 else {"topic": topic}
    return f(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=FETCH_MAX_BYTES,
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[f.FetchTopic(partitions=[part], **named)],
        forgotten_topics_data=[],
        rack_id="",
    )


class WireClient:
    """One connection to the proxy, a request at a time; reconnects after the broker closed
    it (its answer to a request it cannot read)."""

    def __init__(
        self,
        proxy: RecordingProxy,
        timeout: float = TIMEOUT_MS / 1000 + 30,
        address: tuple[str, int] | None = None,
    ) -> None:
        # ``address``: one of the proxy's listeners (a partition leader's), else its bootstrap
        self.address = address or (proxy.host, proxy.port)
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.correlation_id = 0

    def exchange(self, message: Any) -> tuple[int, bytes, bytes | None]:
        """(correlation id, request frame, response frame or None: connection closed)."""
        self.correlation_id += 1
        message.with_header(correlation_id=self.correlation_id, client_id=CLIENT_ID)
        frame = bytes(message.encode(header=True))
        if self.sock is None:
            self.sock = socket.create_connection(self.address, timeout=self.timeout)
        try:
            self.sock.sendall(struct.pack(">i", len(frame)) + frame)
            head = self._recv(4)
            if head is None:
                self.close()
                return self.correlation_id, frame, None
            (size,) = struct.unpack(">i", head)
            body = self._recv(size)
            if body is None:
                raise ConnectionError("connection closed inside a response frame")
            return self.correlation_id, frame, body
        except BaseException:
            self.close()
            raise

    def _recv(self, n: int) -> bytes | None:
        assert self.sock is not None
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None


def read_api_versions(proxy: RecordingProxy) -> dict[int, tuple[int, int]]:
    """Every API the broker advertises (ApiVersions v0): api key -> (min, max) version."""
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

    client = WireClient(proxy)
    try:
        _, _, frame = client.exchange(ApiVersionsRequest[0]())
    finally:
        client.close()
    if frame is None:
        raise ConnectionError("the broker closed the connection on ApiVersions v0")
    resp = ApiVersionsResponse.decode(frame, version=0, header=True)
    if resp.error_code:
        raise ConnectionError(f"ApiVersions v0 answered {_error_name(resp.error_code)}")
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in resp.api_keys}


def read_produce_versions(proxy: RecordingProxy) -> tuple[int, int]:
    """The Produce versions the broker advertises (ApiVersions v0)."""
    versions = read_api_versions(proxy).get(API_PRODUCE)
    if versions is None:
        raise ValueError("the broker advertises no Produce versions")
    return versions


def leader_address(proxy: RecordingProxy, topic: str, partition: int = 0) -> tuple[str, int]:
    """The proxy's listener in front of the leader of ``topic``-``partition`` (a Metadata v1
    request for that topic only, answered through the proxy, which points every broker of the
    answer at one of its listeners)."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    client = WireClient(proxy)
    try:
        _, _, frame = client.exchange(MetadataRequest[1](topics=[topic]))
    finally:
        client.close()
    if frame is None:
        raise ConnectionError("the broker closed the connection on Metadata")
    resp = MetadataResponse.decode(frame, version=1, header=True)
    nodes = {b.node_id: (str(b.host), int(b.port)) for b in resp.brokers}
    for t in resp.topics:
        if t.name != topic:
            continue
        if t.error_code:
            raise RuntimeError(f"Metadata of {topic}: error {_error_name(t.error_code)}")
        for p in t.partitions:
            if p.partition_index == partition and p.leader_id in nodes:
                return nodes[p.leader_id]
    raise RuntimeError(f"Metadata names no leader of {topic}-{partition}")


def create_topics(
    bootstrap: str,
    topics: dict[str, dict[str, str]],
    partitions: dict[str, int] | None = None,
) -> dict[str, str]:
    """Create every topic (its configuration; ``partitions`` of it, default 1; replication
    factor 1), each visible with a leader before the next; returns topic -> why it could not
    be created."""
    from kafka import KafkaAdminClient

    failed: dict[str, str] = {}
    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, client_id=CLIENT_ID, request_timeout_ms=TIMEOUT_MS
    )
    try:
        for name, configs in topics.items():
            count = (partitions or {}).get(name, 1)
            new = {name: {"num_partitions": count, "replication_factor": 1, "configs": configs}}
            try:
                admin.create_topics(new, timeout_ms=TIMEOUT_MS, wait_for_metadata=True)
            except Exception as exc:  # noqa: BLE001 - the broker refused this configuration
                if not _created(admin, name):
                    failed[name] = f"topic creation refused: {type(exc).__name__}: {exc}"
    finally:
        admin.close()
    return failed


def _created(admin: Any, name: str) -> bool:
    """Whether topic ``name`` exists after all: a broker may create a topic and answer in a
    way kafka-python cannot read (franz-go's kfake echoes each config with source -1)."""
    try:
        return name in admin.list_topics()
    except Exception:  # noqa: BLE001 - cannot tell: not created
        return False


def delete_topics(bootstrap: str, names: Sequence[str]) -> dict[str, str]:
    """Delete the topics ``names`` (and no other); returns topic -> why it was not deleted.
    Never raises: a broker that is gone leaves every topic undeleted, with the reason."""
    from kafka import KafkaAdminClient

    failed: dict[str, str] = {}
    if not names:
        return failed
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap, client_id=CLIENT_ID, request_timeout_ms=TIMEOUT_MS
        )
    except Exception as exc:  # noqa: BLE001 - said by the caller, the run goes on
        return {name: f"{type(exc).__name__}: {exc}" for name in names}
    try:
        for name in names:
            try:
                admin.delete_topics([name], timeout_ms=TIMEOUT_MS)
            except Exception as exc:  # noqa: BLE001 - said, the run goes on
                failed[name] = f"{type(exc).__name__}: {exc}"
    finally:
        admin.close()
    return failed


def fetch_partition(
    client: WireClient,
    proxy: RecordingProxy,
    topic: str,
    partition: int = 0,
    *,
    whole: bool = False,
) -> bytes:
    """The partition's records from offset 0 (a Fetch through the proxy, read back from the
    proxy's recording); ``whole``: Fetch again after the last batch until the partition's
    end (a partition larger than one Fetch)."""
    out, offset = b"", 0
    while True:
        corr, _, frame = client.exchange(new_fetch_request(topic, partition, offset))
        if frame is None:
            raise ConnectionError("the broker closed the connection on Fetch")
        found = [
            (err, records)
            for ex, t, p, err, records in read_fetch_partitions(
                e for e in proxy.recording if e.correlation_id == corr
            )
            if ex.client_id == CLIENT_ID and t == topic and p == partition
        ]
        if len(found) != 1 or found[0][0] != 0:
            raise RuntimeError(f"Fetch of {topic}-{partition} answered {found!r}")
        data = found[0][1] or b""
        if not whole:
            return data
        batches = [b for b in Splitter(data, "memory") if b.last_offset >= offset]
        if not batches:
            return out
        out += b"".join(bytes(b.raw) for b in batches)
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


def produce_version_for(requested: int, advertised: tuple[int, int]) -> int:
    """``requested`` when kafka-python can write a Produce request of that version, else the
    nearest version both kafka-python and the broker (``advertised``) speak."""
    from kafka.protocol.producer import ProduceRequest

    low, high = ProduceRequest.min_version, ProduceRequest.max_version
    if low <= requested <= high:
        return requested
    both = range(max(low, advertised[0]), min(high, advertised[1]) + 1)
    if not both:
        raise ValueError("no Produce version both kafka-python and the broker speak")
    return min(both, key=lambda v: (abs(v - requested), v))
