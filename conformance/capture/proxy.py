"""A loopback recording proxy for the Kafka protocol (``wire/<name>.bin``, docs/corpora.md).

Approach: Metadata rewriting, not ``advertised.listeners``.
    A client bootstraps through :class:`RecordingProxy`; every Metadata (and FindCoordinator)
    response is read with Kafka's own message definitions (the kit's client protocol,
    ``jvm.message_defs.client_protocol``) and written back with each broker's host/port
    replaced by a loopback listener of this proxy that forwards to that
    broker (one listener per distinct upstream address, created on demand). The client never
    learns the brokers' real addresses, so all its traffic -- in particular Fetch -- passes
    through the proxy. This needs no broker configuration (works with any already running
    Kafka 0.10-4.x broker, KRaft or ZooKeeper, several brokers too), unlike setting each
    broker's ``advertised.listeners`` to a proxy port before it starts.

Everything except those two response types is forwarded byte for byte, and what is recorded
is always what the upstream broker sent (``Exchange.response`` is the frame as received,
before any rewrite). Only PLAINTEXT is supported (no TLS/SASL). Not rewritten: the
NodeEndpoints of Fetch/Produce v16+/v10+ (only sent when a leader moved) and DescribeCluster
(admin only).

Recording: one :class:`Exchange` per request/response pair (request header fields, the
request and response frames without their 4-byte size prefix). :func:`fetch_records`
extracts the raw ``records`` field of every partition of every recorded Fetch response
(read with the definitions; Fetch v0-v18, flexible v12+; topic ids of v13+ resolved through
recorded Metadata responses). :func:`capture_fetch` reads a topic from offset 0 through a
proxy with the kit's client and small fetch sizes, so that the broker's ``FileRecords`` slice
ends in a partial trailing batch.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from conformance.client import calls
from conformance.client.cluster import read_metadata
from conformance.client.connection import read_answer_body, read_answer_frame
from conformance.client.protocol import Protocol
from conformance.host.kafka_client import KafkaClient
from conformance.host.lifetime import Closing
from conformance.jvm.message_defs import client_protocol
from conformance.messages.message import write_message
from conformance.messages.schema import Versions
from conformance.stream.splitter import Splitter

log = logging.getLogger(__name__)

API_FETCH = 1
#: after a dropped response, how long the broker's answers to the requests it already had are
#: waited for (each is recorded, dropped: the broker may have appended what they carried)
DRAIN_SECONDS = 10.0
API_METADATA = 3
API_FIND_COORDINATOR = 10

_LOOPBACK = "127.0.0.1"


class _Silent:
    def __repr__(self) -> str:
        return "SILENT"


#: what an ``alter_response`` rule returns for an answer the client never gets
SILENT = _Silent()


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


@dataclass(frozen=True)
class Exchange:
    """One request/response pair as it crossed the proxy."""

    connection: int  # proxy-wide connection number
    upstream: str  # "host:port" the connection was forwarded to
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    request: bytes  # request frame (header + body), without the 4-byte size; b"" if not kept
    response: bytes  # response frame exactly as the upstream sent it, without the size
    rewritten: bool = False  # True when the client received a rewritten response
    #: wall clock (ms) when the request arrived at the proxy / its response did (0: unknown)
    sent_at_ms: int = 0
    received_at_ms: int = 0
    #: True when the proxy dropped this response and closed the connection (``drop_response``)
    dropped: bool = False


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def read_request_header(frame: bytes | memoryview) -> RequestHeader:
    """Request header v0-v2 (the client id is never compact, even in flexible headers)."""
    if len(frame) < 10:
        raise ValueError(f"request frame too short for a header: {len(frame)} bytes")
    api_key, api_version, correlation_id, n = struct.unpack_from(">hhih", frame, 0)
    if n < 0:
        client_id = None
    else:
        if 10 + n > len(frame):
            raise ValueError("client_id runs past the end of the request frame")
        client_id = bytes(frame[10 : 10 + n]).decode("utf-8", "replace")
    return RequestHeader(api_key, api_version, correlation_id, client_id)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """``n`` bytes, or None on EOF before the first byte; raises on EOF mid-way."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            if not buf:
                return None
            raise ConnectionError(f"EOF after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


class _FrameSizeError(ConnectionError):
    """A frame whose size is out of bounds; ``head`` is its size prefix."""

    def __init__(self, head: bytes, size: int, max_frame: int) -> None:
        super().__init__(f"frame size {size} outside 0..{max_frame}")
        self.head = head


def _read_frame(sock: socket.socket, max_frame: int) -> bytes | None:
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > max_frame:
        raise _FrameSizeError(head, size, max_frame)
    payload = _recv_exact(sock, size) if size else b""
    if payload is None:
        raise ConnectionError("EOF after frame size")
    return payload


class _Listener:
    def __init__(self, proxy: RecordingProxy, upstream: tuple[str, int]) -> None:
        self.proxy = proxy
        self.upstream = upstream
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((_LOOPBACK, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.thread = threading.Thread(
            target=self._accept_loop, name=f"kproxy-accept-{self.port}", daemon=True
        )
        self.thread.start()

    def _accept_loop(self) -> None:
        while not self.proxy._stop.is_set():
            try:
                client, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            self.proxy._start_connection(client, self.upstream)
        try:
            self.sock.close()
        except OSError:
            pass


class _Connection:
    def __init__(
        self, proxy: RecordingProxy, conn_id: int, client: socket.socket, upstream: tuple[str, int]
    ) -> None:
        self.proxy = proxy
        self.conn_id = conn_id
        self.client = client
        self.upstream_addr = upstream
        self.upstream_name = f"{upstream[0]}:{upstream[1]}"
        self.server: socket.socket | None = None
        self.pending: dict[int, tuple[RequestHeader, bytes, int]] = {}
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self._closed = False
        #: after a dropped response: the client is gone, the broker's answers to the requests
        #: it already had are still read and recorded (they tell what the broker appended)
        self.draining = False

    def start(self) -> None:
        t = threading.Thread(target=self._run, name=f"kproxy-conn-{self.conn_id}", daemon=True)
        self.threads.append(t)
        t.start()

    def _run(self) -> None:
        try:
            self.server = socket.create_connection(
                self.upstream_addr, timeout=self.proxy.connect_timeout
            )
            self.server.settimeout(None)
            self.client.settimeout(None)
            for s in (self.client, self.server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as e:
            log.warning("proxy: cannot connect to upstream %s: %s", self.upstream_name, e)
            self.shutdown()
            self.proxy._connection_done(self)
            return
        t = threading.Thread(
            target=self._pump_responses, name=f"kproxy-resp-{self.conn_id}", daemon=True
        )
        self.threads.append(t)
        t.start()
        self._pump_requests()
        t.join()
        self.shutdown()
        self.proxy._connection_done(self)

    def shutdown(self) -> None:
        with self.lock:
            if self._closed:
                return
            self._closed = True
        for s in (self.client, self.server):
            if s is None:
                continue
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def _pump_requests(self) -> None:
        assert self.server is not None
        try:
            while True:
                frame = _read_frame(self.client, self.proxy.max_frame_bytes)
                if frame is None:
                    break
                try:
                    hdr = read_request_header(frame)
                except ValueError as e:
                    log.warning("proxy: unparseable request header (%s); forwarding", e)
                else:
                    keep = frame if self.proxy.keep_requests else b""
                    with self.lock:
                        self.pending[hdr.correlation_id] = (hdr, keep, _now_ms())
                self.server.sendall(struct.pack(">i", len(frame)) + frame)
        except OSError as e:
            log.debug("proxy conn %d: request side ended: %s", self.conn_id, e)
        finally:
            if not self.draining:  # else the response side closes when it has drained
                self.shutdown()

    def _close_client(self) -> None:
        """The client hears a closed connection; the broker side stays open to drain."""
        try:
            self.client.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _pump_responses(self) -> None:
        assert self.server is not None
        try:
            while True:
                if self.draining:
                    with self.lock:
                        if not self.pending:
                            break
                frame = _read_frame(self.server, self.proxy.max_frame_bytes)
                if frame is None:
                    break
                out = frame
                entry = None
                if len(frame) >= 4:
                    (corr,) = struct.unpack_from(">i", frame, 0)
                    with self.lock:
                        entry = self.pending.pop(corr, None)
                rewritten = drop = False
                if entry is not None:
                    hdr, req, sent_at = entry
                    drop = self.draining or self.proxy._drops(hdr, req)
                    if hdr.api_key in (API_METADATA, API_FIND_COORDINATOR):
                        new = self.proxy._rewrite(hdr, frame)
                        if new is not None:
                            out, rewritten = new, True
                    altered = self.proxy._altered(hdr, req, out)
                    if altered is not None:
                        out, rewritten = altered, True
                    self.proxy._record(
                        Exchange(
                            connection=self.conn_id,
                            upstream=self.upstream_name,
                            api_key=hdr.api_key,
                            api_version=hdr.api_version,
                            correlation_id=hdr.correlation_id,
                            client_id=hdr.client_id,
                            request=req,
                            response=frame,
                            rewritten=rewritten,
                            sent_at_ms=sent_at,
                            received_at_ms=_now_ms(),
                            dropped=drop,
                        )
                    )
                if out is SILENT:  # the client hears nothing
                    continue
                if drop or self.draining:  # the client hears a closed connection
                    if not self.draining:
                        self.draining = True
                        self._close_client()
                        self.server.settimeout(DRAIN_SECONDS)
                    continue
                self.client.sendall(struct.pack(">i", len(out)) + out)
        except _FrameSizeError as e:
            # the client hears the size the broker announced (and then a closed connection):
            # a too large answer is the broker's, not a closed connection of the proxy's
            log.debug("proxy conn %d: response side ended: %s", self.conn_id, e)
            try:
                self.client.sendall(e.head)
            except OSError:
                pass
        except OSError as e:
            log.debug("proxy conn %d: response side ended: %s", self.conn_id, e)
        finally:
            self.shutdown()


class RecordingProxy(Closing):
    """Loopback proxy in front of one Kafka bootstrap broker; records request/response pairs.

    ``bootstrap`` ("127.0.0.1:<port>") is what clients should use. Metadata/FindCoordinator
    responses are rewritten to point at the proxy (see module docstring); everything else is
    forwarded byte for byte. Bounded: at most ``max_connections`` concurrent connections
    (further ones are closed at once), ``max_listeners`` upstream addresses,
    ``max_recorded_bytes`` of recorded frames (later exchanges are counted in ``dropped``
    but still forwarded), ``max_frame_bytes`` per frame (larger ones end the connection).
    """

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        max_connections: int = 32,
        max_listeners: int = 16,
        max_recorded_bytes: int = 256 << 20,
        max_frame_bytes: int = 128 << 20,
        keep_requests: bool = True,
        record_api_keys: Iterable[int] | None = None,
        connect_timeout: float = 10.0,
        protocol: Protocol | None = None,
    ) -> None:
        #: the definitions Metadata and FindCoordinator answers are rewritten with (None: the
        #: kit's client protocol, read on the first rewrite)
        self.protocol = protocol
        self.upstream = (upstream_host, int(upstream_port))
        self.max_connections = max_connections
        self.max_listeners = max_listeners
        self.max_recorded_bytes = max_recorded_bytes
        self.max_frame_bytes = max_frame_bytes
        self.keep_requests = keep_requests
        self.record_api_keys = None if record_api_keys is None else frozenset(record_api_keys)
        self.connect_timeout = connect_timeout
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self.recorded_bytes = 0
        self.dropped = 0
        self.rejected_connections = 0
        self._conn_seq = 0
        self._connections: set[_Connection] = set()
        self._listeners: dict[tuple[str, int], _Listener] = {}
        self._drop_rule: Callable[[RequestHeader, bytes], bool] | None = None
        self._alter_rule: Callable[[RequestHeader, bytes, bytes], Any] | None = None
        self._main = self._listener_for(self.upstream)
        assert self._main is not None

    # ---------------------------------------------------------------- public API
    def drop_response(self, rule: Callable[[RequestHeader, bytes], bool] | None) -> None:
        """Fault injection: for a request ``rule(header, request frame)`` is true of, the
        proxy forwards the request, records the broker's response (``Exchange.dropped``),
        does not forward it and closes the client's connection (the client's request
        reached the broker; the client must retry). The broker's answers to the requests the
        client had already sent on that connection are still read and recorded, dropped too
        (for at most :data:`DRAIN_SECONDS`): what they carried may have been appended, and a
        judgement replaying the requests must see them. None removes the rule."""
        self._drop_rule = rule

    def alter_response(self, rule: Callable[[RequestHeader, bytes, bytes], Any] | None) -> None:
        """Fault injection: ``rule(header, request frame, response frame)`` returns the frame
        the client gets instead (any bytes, without the size prefix: garbage, another
        answer, a huge one), :data:`SILENT` (the client gets nothing and waits), or None (the
        response as it is). What is recorded is still the broker's response. None removes the
        rule."""
        self._alter_rule = rule

    def _altered(self, hdr: RequestHeader, request: bytes, response: bytes) -> Any:
        rule = self._alter_rule
        if rule is None:
            return None
        try:
            return rule(hdr, request, response)
        except Exception as exc:  # a broken rule must not stop the forwarding
            log.warning("proxy: alter rule failed: %s", exc)
            return None

    def _drops(self, hdr: RequestHeader, request: bytes) -> bool:
        rule = self._drop_rule
        if rule is None:
            return False
        try:
            return bool(rule(hdr, request))
        except Exception as exc:  # a broken rule must not stop the forwarding
            log.warning("proxy: drop rule failed: %s", exc)
            return False

    @property
    def host(self) -> str:
        return _LOOPBACK

    @property
    def port(self) -> int:
        return self._main.port

    @property
    def bootstrap(self) -> str:
        return f"{_LOOPBACK}:{self.port}"

    @property
    def recording(self) -> list[Exchange]:
        """Snapshot of the recorded exchanges, in completion order."""
        with self._lock:
            return list(self._exchanges)

    def exchanges(self, api_key: int | None = None) -> list[Exchange]:
        return [e for e in self.recording if api_key is None or e.api_key == api_key]

    def listeners(self) -> dict[str, int]:
        """Upstream "host:port" -> local proxy port."""
        with self._lock:
            return {f"{h}:{p}": lst.port for (h, p), lst in self._listeners.items()}

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()
            self.recorded_bytes = 0
            self.dropped = 0

    def close(self) -> None:
        """Stop listening, end every connection, join the threads; idempotent."""
        self._stop.set()
        with self._lock:
            listeners = list(self._listeners.values())
            conns = list(self._connections)
        for lst in listeners:
            lst.thread.join(timeout=5)
        for c in conns:
            c.shutdown()
        for c in conns:
            for t in list(c.threads):
                if t is not threading.current_thread():
                    t.join(timeout=5)

    # ---------------------------------------------------------------- internals
    def _listener_for(self, upstream: tuple[str, int]) -> _Listener | None:
        with self._lock:
            lst = self._listeners.get(upstream)
            if lst is not None or self._stop.is_set():
                return lst
            if len(self._listeners) >= self.max_listeners:
                log.warning("proxy: listener limit reached; %s:%d not proxied", *upstream)
                return None
            lst = _Listener(self, upstream)
            self._listeners[upstream] = lst
            return lst

    def _start_connection(self, client: socket.socket, upstream: tuple[str, int]) -> None:
        with self._lock:
            if self._stop.is_set() or len(self._connections) >= self.max_connections:
                self.rejected_connections += 1
                reject = True
            else:
                reject = False
                self._conn_seq += 1
                conn = _Connection(self, self._conn_seq, client, upstream)
                self._connections.add(conn)
        if reject:
            try:
                client.close()
            except OSError:
                pass
            return
        conn.start()

    def _connection_done(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _record(self, ex: Exchange) -> None:
        if self.record_api_keys is not None and ex.api_key not in self.record_api_keys:
            return
        size = len(ex.request) + len(ex.response)
        with self._lock:
            if self.recorded_bytes + size > self.max_recorded_bytes:
                self.dropped += 1
                return
            self.recorded_bytes += size
            self._exchanges.append(ex)

    def _local(self, host: str, port: int) -> tuple[str, int] | None:
        lst = self._listener_for((host, int(port)))
        return None if lst is None else (_LOOPBACK, lst.port)

    def _rewrite(self, hdr: RequestHeader, frame: bytes) -> bytes | None:
        """The response written back with broker addresses replaced; None to forward as
        is (the header's bytes are kept as they came)."""
        try:
            protocol = self.protocol or client_protocol()
            body, end = read_answer_body(protocol, hdr.api_key, hdr.api_version, frame)
            if hdr.api_key == API_METADATA:
                for b in body["Brokers"] or []:
                    loc = self._local(b["Host"], b["Port"])
                    if loc is not None:
                        b["Host"], b["Port"] = loc
            elif hdr.api_key == API_FIND_COORDINATOR:
                entries = body["Coordinators"] if hdr.api_version >= 4 else [body]
                for c in entries or []:
                    if c["Host"] and c["Port"] >= 0:
                        loc = self._local(c["Host"], c["Port"])
                        if loc is not None:
                            c["Host"], c["Port"] = loc
            schema = protocol.response(hdr.api_key, hdr.api_version)
            return frame[:end] + write_message(schema, hdr.api_version, body)
        except Exception as e:  # noqa: BLE001 - never break the stream over a rewrite
            log.warning(
                "proxy: cannot rewrite api %d v%d response (%s); forwarded unchanged",
                hdr.api_key,
                hdr.api_version,
                e,
            )
        return None


# -------------------------------------------------------------------- Fetch extraction
def _exchanges_of(recording: RecordingProxy | Iterable[Exchange]) -> list[Exchange]:
    if isinstance(recording, RecordingProxy):
        return recording.recording
    return list(recording)


def topic_names(exchanges: Iterable[Exchange]) -> dict[uuid.UUID, str]:
    """topic id -> name, from recorded Metadata responses (v10+)."""
    protocol = client_protocol()
    names: dict[uuid.UUID, str] = {}
    for ex in exchanges:
        if ex.api_key != API_METADATA or ex.api_version < 10:
            continue
        try:
            body = read_answer_frame(protocol, API_METADATA, ex.api_version, ex.response)
        except Exception:  # noqa: BLE001 - an answer that does not read names nothing
            continue
        for name, t in read_metadata(body, ex.api_version).topics.items():
            if t.topic_id is not None:
                names[t.topic_id] = name
    return names


def read_fetch_partitions(
    recording: RecordingProxy | Iterable[Exchange],
) -> Iterator[tuple[Exchange, str, int, int, bytes | None]]:
    """(exchange, topic, partition, error_code, records) for every partition of every Fetch."""
    protocol = client_protocol()
    exchanges = _exchanges_of(recording)
    names: dict[str, str] | None = None
    for ex in exchanges:
        if ex.api_key != API_FETCH:
            continue
        body = read_answer_frame(protocol, API_FETCH, ex.api_version, ex.response)
        _, parts = calls.read_fetch_answer(body, ex.api_version)
        for p in parts:
            name = p["topic"]
            if ex.api_version >= 13:
                if names is None:
                    names = {str(k): v for k, v in topic_names(exchanges).items()}
                name = names.get(name, name)
            yield ex, name, p["partition"], p["errorCode"], p["records"]


def fetch_records(
    recording: RecordingProxy | Iterable[Exchange], *, include_empty: bool = False
) -> list[tuple[str, int, bytes]]:
    """The raw ``records`` field of each partition of each recorded Fetch response.

    In recording order; null and (unless ``include_empty``) empty records fields are skipped.
    """
    out = []
    for _ex, topic, partition, _err, records in read_fetch_partitions(recording):
        if records is None or (not records and not include_empty):
            continue
        out.append((topic, partition, records))
    return out


# -------------------------------------------------------------------- capture with a consumer
def _split_hostport(bootstrap: str) -> tuple[str, int]:
    first = bootstrap.split(",")[0].strip()
    host, _, port = first.rpartition(":")
    return (host.strip("[]") or _LOOPBACK), int(port)


def capture_fetch(
    bootstrap: str,
    topic: str,
    *,
    max_bytes: int,
    fetch_version: int | None = None,
    partitions: Iterable[int] | None = None,
    timeout_s: float = 30.0,
    isolation_level: str = "read_uncommitted",
    include_empty: bool = False,
    proxy_kwargs: dict | None = None,
) -> list[bytes]:
    """Read ``topic`` from offset 0 through a :class:`RecordingProxy` with the kit's client;
    return the recorded ``records`` fields of its Fetch responses, in order.

    ``max_bytes`` is both the Fetch's max bytes and its partition max bytes: the broker
    returns at least one whole batch, then cuts its log slice at the limit, so a response
    usually ends in a partial batch. Each partition is fetched from the offset after the last
    whole batch a response carried until its end (the high watermark, or for
    ``read_committed`` the last stable offset, as ListOffsets answers) or after ``timeout_s``
    (TimeoutError). ``fetch_version`` (None: the newest both speak by topic name, up to v12)
    chooses the Fetch version: v3 reads magic 2 down-converted to magic 1 by a 2.x/3.x
    broker; Kafka 4.x brokers refuse Fetch below v4.
    """
    isolation = 1 if isolation_level == "read_committed" else 0
    host, port = _split_hostport(bootstrap)
    protocol = client_protocol()
    with RecordingProxy(host, port, protocol=protocol, **(proxy_kwargs or {})) as proxy:
        with KafkaClient(
            proxy.bootstrap, protocol, client_id="kafka-conformance-capture"
        ) as client:
            deadline = time.monotonic() + timeout_s
            both = client.versions.both(protocol, API_FETCH, Versions(0, 12))
            if both.empty:
                raise RuntimeError("the broker speaks no Fetch version up to v12")
            version = both.highest if fetch_version is None else fetch_version
            view = client.metadata([topic])
            t = view.topics.get(topic)
            if t is None or t.error or not t.partitions:
                raise TimeoutError(f"no partitions for topic {topic!r} via {bootstrap}")
            wanted = sorted(set(t.partitions) & set(partitions or t.partitions))
            lo_version = client.version("ListOffsets", Versions(1, 2 if isolation else 1))
            for p in wanted:
                end = _end_offset(client, protocol, topic, p, lo_version, isolation)
                offset = 0
                while offset < end:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"did not reach the end of {topic!r} in {timeout_s}s")
                    body = calls.fetch_request(
                        protocol, version, topic, p, offset, partition_max_bytes=max_bytes,
                        max_bytes=max_bytes, isolation=isolation,
                    )  # fmt: skip
                    answer = client.leader_request(
                        topic, p, API_FETCH, version, body, lambda a, p=p: _fetch_error(a, p)
                    )
                    _, parts = calls.read_fetch_answer(answer.body, version)
                    records = next(
                        (x["records"] for x in parts if x["partition"] == p and not x["errorCode"]),
                        None,
                    )
                    if records is None:
                        raise RuntimeError(f"Fetch of {topic}-{p} at {offset} answered {parts!r}")
                    batches = [b for b in Splitter(records, "memory") if b.last_offset >= offset]
                    if not batches:
                        time.sleep(0.1)
                        continue
                    offset = batches[-1].last_offset + 1
        return [
            records
            for t_name, _p, records in fetch_records(proxy, include_empty=include_empty)
            if t_name == topic
        ]


def _fetch_error(answer: Any, partition: int) -> int:
    """The error code a Fetch answer gives ``partition`` (the answer's own from v7)."""
    top, parts = calls.read_fetch_answer(answer.body, answer.version)
    return top or next((x["errorCode"] for x in parts if x["partition"] == partition), 0)


def _end_offset(
    client: KafkaClient, protocol: Any, topic: str, partition: int, version: int, isolation: int
) -> int:
    """The partition's end: ListOffsets latest (-1), the last stable offset under
    ``read_committed``."""
    body = calls.list_offsets_request(protocol, version, topic, partition, -1, isolation)

    def error_of(answer: Any) -> int:
        found = calls.read_list_offsets_answer(answer.body, version)
        return found[0]["errorCode"] if found else 0

    answer = client.leader_request(topic, partition, "ListOffsets", version, body, error_of)
    found = [x for x in calls.read_list_offsets_answer(answer.body, version)]
    if len(found) != 1 or found[0]["errorCode"]:
        raise RuntimeError(f"ListOffsets of {topic}-{partition} answered {found!r}")
    return int(found[0]["offset"])


__all__ = [
    "SILENT",
    "Exchange",
    "RecordingProxy",
    "RequestHeader",
    "capture_fetch",
    "fetch_records",
    "read_fetch_partitions",
    "read_request_header",
]
