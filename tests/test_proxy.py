"""conformance.capture.proxy: recording proxy against a fake upstream broker (no Kafka needed)."""

from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable

import pytest

pytest.importorskip("kafka")

from kafka.protocol.consumer import FetchRequest, FetchResponse  # noqa: E402
from kafka.protocol.metadata import (  # noqa: E402
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)

from conformance import decode  # noqa: E402
from conformance.capture.proxy import (
    API_FETCH,
    API_METADATA,
    Exchange,
    RecordingProxy,
    fetch_records,
    read_fetch_partitions,
    read_request_header,
)
from conformance.wire.builder import BatchBuilder  # noqa: E402

TOPIC_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")


# --------------------------------------------------------------------------- fixtures
def _batch(base: int, n: int, compression: str = "none") -> bytes:
    b = BatchBuilder(base_offset=base, compression=compression)
    for i in range(n):
        b.append(1_700_000_000_000 + i, f"k{base + i}".encode(), b"v" * 50)
    return b.build()


FULL = _batch(0, 3) + _batch(3, 4, "gzip")
NEXT = _batch(7, 5)
PARTIAL = (
    FULL + NEXT[: len(NEXT) // 2]
)  # what a broker's FileRecords slice cut at max_bytes looks like


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("EOF")
        buf += chunk
    return buf


def _read_frame(sock: socket.socket) -> bytes:
    (n,) = struct.unpack(">i", _recv_exact(sock, 4))
    return _recv_exact(sock, n)


def metadata_response(version: int, brokers: list[tuple[int, str, int]], corr: int) -> bytes:
    B = MetadataResponse.MetadataResponseBroker
    T = MetadataResponse.MetadataResponseTopic
    P = T.MetadataResponsePartition
    r = MetadataResponse(
        version=version,
        throttle_time_ms=0,
        brokers=[B(node_id=n, host=h, port=p, rack=None) for n, h, p in brokers],
        cluster_id="fake",
        controller_id=brokers[0][0],
        topics=[
            T(
                error_code=0,
                name="t",
                topic_id=TOPIC_ID,
                is_internal=False,
                partitions=[
                    P(
                        error_code=0,
                        partition_index=0,
                        leader_id=brokers[0][0],
                        leader_epoch=0,
                        replica_nodes=[brokers[0][0]],
                        isr_nodes=[brokers[0][0]],
                        offline_replicas=[],
                    )
                ],
            )
        ],
    )
    r.with_header(correlation_id=corr)
    return bytes(r.encode(header=True))


def fetch_response(version: int, parts: list[tuple[int, bytes | None]], corr: int) -> bytes:
    TR = FetchResponse.FetchableTopicResponse
    PD = TR.PartitionData
    r = FetchResponse(
        version=version,
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            TR(
                topic="t",
                topic_id=TOPIC_ID,
                partitions=[
                    PD(
                        partition_index=p,
                        error_code=0,
                        high_watermark=12,
                        last_stable_offset=12,
                        log_start_offset=0,
                        aborted_transactions=None,
                        preferred_read_replica=-1,
                        records=rec,
                    )
                    for p, rec in parts
                ],
            )
        ],
    )
    r.with_header(correlation_id=corr)
    return bytes(r.encode(header=True))


Handler = Callable[["FakeBroker", object, bytes], bytes | None]


class FakeBroker:
    """A socket server on 127.0.0.1 answering canned responses, in request order."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.requests: list[bytes] = []
        self.connections = 0
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            self._conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        try:
            while True:
                frame = _read_frame(c)
                self.requests.append(frame)
                hdr = read_request_header(frame)
                out = self.handler(self, hdr, frame)
                if out is not None:
                    c.sendall(struct.pack(">i", len(out)) + out)
        except OSError:
            pass
        finally:
            c.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()
        for c in self._conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


def default_handler(fb: FakeBroker, hdr, frame: bytes) -> bytes | None:  # type: ignore[no-untyped-def]
    if hdr.api_key == API_METADATA:
        return metadata_response(hdr.api_version, [(1, "127.0.0.1", fb.port)], hdr.correlation_id)
    if hdr.api_key == API_FETCH:
        return fetch_response(
            hdr.api_version, [(0, PARTIAL), (1, b""), (2, FULL)], hdr.correlation_id
        )
    if hdr.api_key == 99:  # "no response" (like acks=0 produce)
        return None
    raise AssertionError(f"unexpected api {hdr.api_key}")


@pytest.fixture
def broker():
    fb = FakeBroker(default_handler)
    yield fb
    fb.close()


def _connect(proxy_port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    return s


def _send(s: socket.socket, req, corr: int, client_id: str = "test-client") -> None:  # type: ignore[no-untyped-def]
    req.with_header(correlation_id=corr, client_id=client_id)
    s.sendall(bytes(req.encode(framed=True, header=True)))


def _metadata_request(version: int) -> MetadataRequest:
    return MetadataRequest(
        version=version,
        topics=[MetadataRequest.MetadataRequestTopic(name="t", topic_id=TOPIC_ID)],
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
    )


def _fetch_request(version: int) -> FetchRequest:
    FT = FetchRequest.FetchTopic
    FP = FT.FetchPartition
    return FetchRequest(
        version=version,
        replica_id=-1,
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=1000,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            FT(
                topic="t",
                topic_id=TOPIC_ID,
                partitions=[
                    FP(
                        partition=0,
                        current_leader_epoch=-1,
                        fetch_offset=0,
                        log_start_offset=-1,
                        partition_max_bytes=1000,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


def _closed_by_peer(s: socket.socket) -> bool:
    s.settimeout(5)
    try:
        return s.recv(4) == b""
    except ConnectionResetError:
        return True


def _wait(pred: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


# --------------------------------------------------------------------------- tests
def test_fixture_batches_decode_as_expected() -> None:
    assert decode(FULL).outcome == "ok"
    assert decode(PARTIAL).outcome == "partial"


def test_parse_request_header() -> None:
    req = _metadata_request(12)
    req.with_header(correlation_id=42, client_id="abc")
    h = read_request_header(bytes(req.encode(header=True)))
    assert (h.api_key, h.api_version, h.correlation_id, h.client_id) == (3, 12, 42, "abc")
    null_id = struct.pack(">hhih", 1, 4, 5, -1)
    assert read_request_header(null_id).client_id is None
    with pytest.raises(ValueError):
        read_request_header(b"\x00\x01")
    with pytest.raises(ValueError):
        read_request_header(struct.pack(">hhih", 1, 4, 5, 20) + b"x")


def test_listens_on_loopback_only(broker: FakeBroker) -> None:
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        assert proxy.host == "127.0.0.1"
        assert proxy.bootstrap == f"127.0.0.1:{proxy.port}"
        assert proxy._main.sock.getsockname()[0] == "127.0.0.1"


@pytest.mark.parametrize("version", [1, 5, 9, 12])
def test_metadata_rewritten_to_proxy_and_recorded_raw(broker: FakeBroker, version: int) -> None:
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        _send(s, _metadata_request(version), corr=7)
        got = _read_frame(s)
        s.close()
        resp = MetadataResponse.decode(got, version=version, header=True)
        assert resp.header.correlation_id == 7
        assert [(b.node_id, b.host, b.port) for b in resp.brokers] == [(1, "127.0.0.1", proxy.port)]
        assert resp.topics[0].name == "t"
        _wait(lambda: len(proxy.recording) == 1)
        (ex,) = proxy.recording
        assert isinstance(ex, Exchange)
        assert (ex.api_key, ex.api_version, ex.correlation_id, ex.client_id) == (
            3,
            version,
            7,
            "test-client",
        )
        assert ex.rewritten
        assert ex.response == metadata_response(version, [(1, "127.0.0.1", broker.port)], 7)
        assert ex.request == broker.requests[0]
        assert ex.upstream == f"127.0.0.1:{broker.port}"


def test_metadata_other_broker_gets_its_own_listener(broker: FakeBroker) -> None:
    other = FakeBroker(default_handler)

    def handler(fb: FakeBroker, hdr, frame: bytes):  # type: ignore[no-untyped-def]
        if hdr.api_key == API_METADATA:
            return metadata_response(
                hdr.api_version,
                [(1, "127.0.0.1", fb.port), (2, "127.0.0.1", other.port)],
                hdr.correlation_id,
            )
        return default_handler(fb, hdr, frame)

    broker.handler = handler
    try:
        with RecordingProxy("127.0.0.1", broker.port) as proxy:
            s = _connect(proxy.port)
            _send(s, _metadata_request(9), corr=1)
            resp = MetadataResponse.decode(_read_frame(s), version=9, header=True)
            s.close()
            ports = {b.node_id: b.port for b in resp.brokers}
            assert ports[1] == proxy.port
            assert ports[2] not in (proxy.port, other.port)
            assert proxy.listeners()[f"127.0.0.1:{other.port}"] == ports[2]
            # the second listener forwards to the second broker
            s2 = _connect(ports[2])
            _send(s2, _fetch_request(12), corr=5)
            FetchResponse.decode(_read_frame(s2), version=12, header=True)
            s2.close()
            _wait(lambda: len(proxy.recording) == 2)
            assert proxy.recording[1].upstream == f"127.0.0.1:{other.port}"
            assert len(other.requests) == 1
    finally:
        other.close()


def test_find_coordinator_rewritten(broker: FakeBroker) -> None:
    def handler(fb: FakeBroker, hdr, frame: bytes):  # type: ignore[no-untyped-def]
        C = FindCoordinatorResponse.Coordinator
        if hdr.api_version >= 4:
            r = FindCoordinatorResponse(
                version=hdr.api_version,
                throttle_time_ms=0,
                coordinators=[
                    C(
                        key="g",
                        node_id=1,
                        host="127.0.0.1",
                        port=fb.port,
                        error_code=0,
                        error_message=None,
                    )
                ],
            )
        else:
            r = FindCoordinatorResponse(
                version=hdr.api_version,
                throttle_time_ms=0,
                error_code=0,
                error_message=None,
                node_id=1,
                host="127.0.0.1",
                port=fb.port,
            )
        r.with_header(correlation_id=hdr.correlation_id)
        return bytes(r.encode(header=True))

    broker.handler = handler
    from kafka.protocol.metadata import FindCoordinatorRequest

    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        for corr, v in enumerate((2, 4)):
            s = _connect(proxy.port)
            req = FindCoordinatorRequest(version=v, key="g", key_type=0, coordinator_keys=["g"])
            _send(s, req, corr=corr)
            resp = FindCoordinatorResponse.decode(_read_frame(s), version=v, header=True)
            s.close()
            port = resp.coordinators[0].port if v >= 4 else resp.port
            assert port == proxy.port


@pytest.mark.parametrize("version", [4, 7, 11, 12])
def test_fetch_forwarded_byte_for_byte_and_partial_records_extracted(
    broker: FakeBroker, version: int
) -> None:
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        _send(s, _fetch_request(version), corr=11)
        got = _read_frame(s)
        s.close()
        expected = fetch_response(version, [(0, PARTIAL), (1, b""), (2, FULL)], 11)
        assert got == expected  # not rewritten
        _wait(lambda: len(proxy.recording) == 1)
        (ex,) = proxy.recording
        assert (ex.api_key, ex.api_version, ex.correlation_id) == (API_FETCH, version, 11)
        assert ex.response == expected and not ex.rewritten
        recs = fetch_records(proxy)
        assert recs == [("t", 0, PARTIAL), ("t", 2, FULL)]
        assert decode(recs[0][2]).outcome == "partial"
        assert decode(recs[1][2]).outcome == "ok"
        assert [r.offset for b in decode(recs[0][2]).batches for r in b.records] == list(range(7))
        assert fetch_records(proxy, include_empty=True)[1] == ("t", 1, b"")
        assert fetch_records(proxy.recording) == recs


def test_fetch_v13_topic_ids_resolved_from_recorded_metadata(broker: FakeBroker) -> None:
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        _send(s, _metadata_request(12), corr=1)
        _read_frame(s)
        _send(s, _fetch_request(13), corr=2)
        _read_frame(s)
        s.close()
        _wait(lambda: len(proxy.recording) == 2)
        assert [t for t, _, _ in fetch_records(proxy)] == ["t", "t"]
        # without the metadata, the topic id stands in for the name
        only_fetch = proxy.exchanges(API_FETCH)
        assert fetch_records(only_fetch)[0][0] == str(TOPIC_ID)
        assert [(p, e) for _, _, p, e, _ in read_fetch_partitions(only_fetch)] == [
            (0, 0),
            (1, 0),
            (2, 0),
        ]


def test_pipelined_requests_and_requests_without_response(broker: FakeBroker) -> None:
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        s.sendall(struct.pack(">i", 10) + struct.pack(">hhih", 99, 0, 100, 0))  # no response
        for corr in (101, 102, 103):
            _send(s, _fetch_request(12), corr=corr)
        _send(s, _metadata_request(9), corr=104)
        corrs = [struct.unpack_from(">i", _read_frame(s))[0] for _ in range(4)]
        s.close()
        assert corrs == [101, 102, 103, 104]
        _wait(lambda: len(proxy.recording) == 4)
        assert [e.correlation_id for e in proxy.recording] == [101, 102, 103, 104]
        assert [e.api_key for e in proxy.recording] == [1, 1, 1, 3]
        assert len(fetch_records(proxy)) == 6


def test_a_dropped_response_closes_the_client_but_later_answers_are_recorded(
    broker: FakeBroker,
) -> None:
    """``drop_response``: the client hears a closed connection after the first answer; the
    broker's answers to the requests it already had are still recorded (dropped too), so a
    judgement replaying the requests sees everything the broker may have appended."""

    # the first answer comes late, so the proxy has forwarded all three requests before it
    # drops it (what the client wrote after the proxy closed it never reaches the broker)
    def slow_first(fb: FakeBroker, hdr, frame: bytes):  # type: ignore[no-untyped-def]
        if hdr.correlation_id == 201:
            time.sleep(0.5)
        return default_handler(fb, hdr, frame)

    broker.handler = slow_first
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        proxy.drop_response(lambda hdr, _: hdr.correlation_id == 201)
        s = _connect(proxy.port)
        for corr in (201, 202, 203):
            _send(s, _fetch_request(12), corr=corr)
        s.settimeout(10)
        assert s.recv(4) == b""  # closed, with no answer at all
        s.close()
        _wait(lambda: len(proxy.recording) == 3)
        assert [(e.correlation_id, e.dropped) for e in proxy.recording] == [
            (201, True),
            (202, True),
            (203, True),
        ]
        # a new connection is served as usual
        s = _connect(proxy.port)
        _send(s, _fetch_request(12), corr=204)
        assert struct.unpack_from(">i", _read_frame(s))[0] == 204
        s.close()


def test_large_response_in_many_segments(broker: FakeBroker) -> None:
    big = b"".join(_batch(i * 100, 100) for i in range(30))  # ~250 KB
    broker.handler = lambda fb, hdr, frame: fetch_response(
        hdr.api_version, [(0, big)], hdr.correlation_id
    )
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        _send(s, _fetch_request(12), corr=1)
        got = FetchResponse.decode(_read_frame(s), version=12, header=True)
        s.close()
        assert got.responses[0].partitions[0].records == big
        _wait(lambda: len(proxy.recording) == 1)
        assert fetch_records(proxy) == [("t", 0, big)]


def test_record_api_keys_filter_and_keep_requests(broker: FakeBroker) -> None:
    with RecordingProxy(
        "127.0.0.1", broker.port, record_api_keys={API_FETCH}, keep_requests=False
    ) as proxy:
        s = _connect(proxy.port)
        _send(s, _metadata_request(9), corr=1)
        _read_frame(s)
        _send(s, _fetch_request(12), corr=2)
        _read_frame(s)
        s.close()
        _wait(lambda: len(proxy.recording) == 1)
        time.sleep(0.05)
        (ex,) = proxy.recording
        assert ex.api_key == API_FETCH and ex.request == b""


def test_max_recorded_bytes_drops_but_still_forwards(broker: FakeBroker) -> None:
    one = len(fetch_response(12, [(0, PARTIAL), (1, b""), (2, FULL)], 1))
    with RecordingProxy(
        "127.0.0.1", broker.port, max_recorded_bytes=one + one // 2, keep_requests=False
    ) as proxy:
        s = _connect(proxy.port)
        for corr in (1, 2, 3):
            _send(s, _fetch_request(12), corr=corr)
            _read_frame(s)
        s.close()
        _wait(lambda: proxy.dropped == 2)
        assert len(proxy.recording) == 1 and proxy.recorded_bytes == one
        proxy.clear()
        assert proxy.recording == [] and proxy.recorded_bytes == 0


def test_max_connections(broker: FakeBroker) -> None:
    with RecordingProxy("127.0.0.1", broker.port, max_connections=1) as proxy:
        s1 = _connect(proxy.port)
        _send(s1, _metadata_request(9), corr=1)
        _read_frame(s1)
        s2 = _connect(proxy.port)
        s2.settimeout(5)
        try:
            s2.sendall(b"\x00\x00\x00\x00")
        except OSError:
            pass
        assert _closed_by_peer(s2)
        s2.close()
        _wait(lambda: proxy.rejected_connections == 1)
        # the first connection still works
        _send(s1, _metadata_request(9), corr=2)
        assert struct.unpack_from(">i", _read_frame(s1))[0] == 2
        s1.close()
        # slot released once the first connection ends
        _wait(lambda: not proxy._connections)
        s3 = _connect(proxy.port)
        _send(s3, _metadata_request(9), corr=3)
        assert struct.unpack_from(">i", _read_frame(s3))[0] == 3
        s3.close()


def test_oversized_frame_ends_connection(broker: FakeBroker) -> None:
    with RecordingProxy("127.0.0.1", broker.port, max_frame_bytes=1000) as proxy:
        s = _connect(proxy.port)
        s.settimeout(5)
        s.sendall(struct.pack(">i", 5000) + b"\x00" * 100)
        assert _closed_by_peer(s)
        s.close()
        # a response above the limit ends the connection too, after its size: the client
        # hears the size the broker announced (its own bound refuses it), not a bare close
        s = _connect(proxy.port)
        s.settimeout(5)
        big = _batch(0, 100)
        broker.handler = lambda fb, hdr, frame: fetch_response(12, [(0, big)], hdr.correlation_id)
        _send(s, _fetch_request(12), corr=1)
        heard = b""
        while chunk := s.recv(100):
            heard += chunk
        assert len(heard) == 4 and struct.unpack(">i", heard)[0] > 1000
        s.close()
        assert proxy.recording == []


def test_unrewritable_metadata_forwarded_unchanged(broker: FakeBroker) -> None:
    garbage = struct.pack(">i", 1) + b"\xff\xff\xff"
    broker.handler = lambda fb, hdr, frame: struct.pack(">i", hdr.correlation_id) + b"\xff\xff\xff"
    with RecordingProxy("127.0.0.1", broker.port) as proxy:
        s = _connect(proxy.port)
        _send(s, _metadata_request(9), corr=1)
        assert _read_frame(s) == garbage
        s.close()
        _wait(lambda: len(proxy.recording) == 1)
        assert not proxy.recording[0].rewritten


def test_upstream_unreachable_closes_client() -> None:
    s0 = socket.socket()
    s0.bind(("127.0.0.1", 0))
    dead_port = s0.getsockname()[1]
    s0.close()
    with RecordingProxy("127.0.0.1", dead_port, connect_timeout=2) as proxy:
        s = _connect(proxy.port)
        s.settimeout(5)
        assert _closed_by_peer(s)
        s.close()
        _wait(lambda: not proxy._connections)


def test_close_stops_everything(broker: FakeBroker) -> None:
    proxy = RecordingProxy("127.0.0.1", broker.port)
    s = _connect(proxy.port)
    _send(s, _metadata_request(9), corr=1)
    _read_frame(s)
    port = proxy.port
    before = threading.active_count()
    proxy.close()
    s.settimeout(5)
    assert s.recv(4) == b""  # open client connection ended
    s.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert threading.active_count() < before
    assert not any(t.name.startswith("kproxy") and t.is_alive() for t in threading.enumerate())
    proxy.close()  # idempotent


# --------------------------------------------------------------------------- real broker
def _require_kafka(version: str) -> None:
    """Resolve (and cache) the Kafka jars now; skip only when Java/Maven are really missing."""
    from conformance.jvm import kafka_jars

    try:
        kafka_jars.classpath(version)
    except kafka_jars.KafkaJarsUnavailable as e:
        pytest.skip(f"Kafka {version} jars unavailable: {e}")


@pytest.mark.capture
@pytest.mark.timeout(300)
def test_capture_fetch_against_real_broker(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _require_kafka("3.9.2")
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    from conformance.capture import jvm
    from conformance.capture.brokers import BROKERS
    from conformance.capture.proxy import capture_fetch

    with jvm.start_broker(BROKERS["kafka-3.9.2-kraft"], tmp_path / "broker") as b:
        admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
        admin.create_topics([NewTopic("t", 1, 1)])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=b.bootstrap, linger_ms=0)
        for i in range(20):  # 20 batches of 5 records
            for _ in range(5):
                producer.send("t", key=b"k%d" % i, value=b"v" * 60)
            producer.flush()
        producer.close()

        for fetch_version, magic in ((None, 2), (3, 1)):  # Fetch v12 / v3 (down-converted)
            captured = capture_fetch(b.bootstrap, "t", max_bytes=1000, fetch_version=fetch_version)
            results = [decode(r) for r in captured]
            assert len(captured) >= 5
            assert all(r.outcome in ("ok", "partial") for r in results)
            assert sum(r.outcome == "partial" for r in results) >= 3
            assert {bt.magic for r in results for bt in r.batches} == {magic}
            offsets = {rec.offset for r in results for bt in r.batches for rec in bt.records}
            assert offsets == set(range(100))
