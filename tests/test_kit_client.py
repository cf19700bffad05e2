"""The kit's own Kafka client (issue 51): the sans-IO connection, version negotiation as Java's
``NetworkClient`` does it, and hostile servers on 127.0.0.1 (garbage, a 2 GB or negative size,
one byte at a time, a close mid-answer, a wrong correlation id, absurd ApiVersions ranges,
Metadata naming brokers that are not there, a server that never answers): each ends in a
typed error with a one-line reason, in bounded time and memory, and ``check-broker`` against
each writes its report and exits 1 without a traceback.

The servers answer with the kit's writer of Kafka's definitions (``messages.protocol``: the
server side the fake broker uses), with one knob each for the fault."""

from __future__ import annotations

import ast
import json
import resource
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import kit_cli

from conformance.client.cluster import metadata_request, read_metadata
from conformance.client.connection import (
    CLOSED,
    NEED_DATA,
    Answer,
    Connection,
    ConnectionClosedError,
    CorrelationError,
    FrameSizeError,
    MalformedAnswerError,
)
from conformance.client.negotiation import (
    BrokerVersions,
    NegotiationError,
    Retry,
    api_versions_request,
    read_api_versions,
)
from conformance.client.protocol import build
from conformance.host.broker_socket import (
    WIRE_ERRORS,
    AnswerTimeoutError,
    BrokerConnection,
    ConnectError,
)
from conformance.host.kafka_client import KafkaClient
from conformance.jvm.message_defs import client_protocol
from conformance.messages.protocol import read_request, write_response

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "conformance"
API_VERSIONS, METADATA, PRODUCE = 18, 3, 0


@pytest.fixture(scope="module")
def protocol() -> Any:
    return client_protocol()


# ------------------------------------------------------------------------------ sans-IO


def _answer_frame(protocol: Any, api: int, version: int, corr: int, **values: Any) -> bytes:
    schema = protocol.response(api, version)
    body = build(schema.struct, version, values)
    return write_response(protocol.releases[0], api, version, corr, body)


def test_a_request_frame_reads_back_as_kafka_reads_requests(protocol: Any) -> None:
    conn = Connection(protocol, "me")
    body = metadata_request(protocol, 12, ["t"])
    sent = conn.send(METADATA, 12, body)
    got = read_request(protocol.releases[0], sent.frame)
    assert (got.api_key, got.api_version, got.correlation_id, got.client_id) == (3, 12, 1, "me")
    assert got.body == body
    assert struct.unpack(">i", sent.data[:4])[0] == len(sent.frame)


def test_answers_in_order_and_any_split_of_the_bytes(protocol: Any) -> None:
    conn = Connection(protocol)
    a = conn.send(METADATA, 1, metadata_request(protocol, 1, ["t"]))
    b = conn.send(METADATA, 9, metadata_request(protocol, 9, ["t"]))
    data = _answer_frame(protocol, METADATA, 1, a.correlation_id, Brokers=[], Topics=[])
    data += _answer_frame(protocol, METADATA, 9, b.correlation_id, Brokers=[], Topics=[])
    for i in range(len(data)):  # one byte at a time: NEED_DATA until each frame is whole
        conn.receive_data(data[i : i + 1])
        event = conn.next_event()
        assert event is NEED_DATA or isinstance(event, Answer)
    conn.receive_data(b"")
    assert conn.next_event() is CLOSED


def test_a_wrong_correlation_id_is_refused(protocol: Any) -> None:
    conn = Connection(protocol)
    sent = conn.send(METADATA, 1, metadata_request(protocol, 1, ["t"]))
    conn.receive_data(
        _answer_frame(protocol, METADATA, 1, sent.correlation_id + 7, Brokers=[], Topics=[])
    )
    with pytest.raises(CorrelationError, match=f"{sent.correlation_id + 7} where"):
        conn.next_event()


@pytest.mark.parametrize("size", [2**31 - 1, 64 << 20 + 1, -1, -(2**31)])
def test_a_frame_size_out_of_bounds_is_refused_before_its_bytes(protocol: Any, size: int) -> None:
    conn = Connection(protocol, max_frame=64 << 20)
    conn.send(METADATA, 1, metadata_request(protocol, 1, ["t"]))
    conn.receive_data(struct.pack(">i", size))
    with pytest.raises(FrameSizeError, match=f"{size} bytes"):
        conn.next_event()


def test_garbage_and_a_close_inside_an_answer(protocol: Any) -> None:
    conn = Connection(protocol)
    sent = conn.send(METADATA, 1, metadata_request(protocol, 1, ["t"]))
    conn.receive_data(struct.pack(">ii", 9, sent.correlation_id) + b"\xff" * 5)
    with pytest.raises(MalformedAnswerError, match="Metadata v1 does not read"):
        conn.next_event()
    conn = Connection(protocol)
    conn.send(METADATA, 1, metadata_request(protocol, 1, ["t"]))
    conn.receive_data(struct.pack(">i", 100) + b"\x00" * 10)
    conn.receive_data(b"")
    with pytest.raises(ConnectionClosedError, match="inside an answer"):
        conn.next_event()


def test_an_unknown_apiversions_version_falls_back_to_v0_and_retries(protocol: Any) -> None:
    """Kafka's answer to an ApiVersions version it does not know: v0, UNSUPPORTED_VERSION, its
    ranges; the client asks again at the broker's highest (kafka-python 3.0.12 could not read
    this answer: the traceback of issue 51)."""
    conn = Connection(protocol)
    version, body = api_versions_request(protocol)
    assert version == protocol.versions(API_VERSIONS).highest >= 3
    sent = conn.send(API_VERSIONS, version, body)
    keys = [{"ApiKey": API_VERSIONS, "MinVersion": 0, "MaxVersion": 2}]
    frame = _answer_frame(
        protocol, API_VERSIONS, 0, sent.correlation_id, ErrorCode=35, ApiKeys=keys
    )
    assert len(frame) == 4 + 4 + 2 + 4 + 6  # the 17-byte answer of the issue, and its size
    conn.receive_data(frame)
    answer = conn.next_event()
    assert isinstance(answer, Answer) and answer.read_version == 0
    assert read_api_versions(protocol, version, 0, answer.body) == Retry(2)
    # and no lower version to retry at: a one-line refusal
    keys[0]["MaxVersion"] = version
    body0 = build(protocol.response(API_VERSIONS, 0).struct, 0, {"ErrorCode": 35, "ApiKeys": keys})
    with pytest.raises(NegotiationError, match="UNSUPPORTED_VERSION"):
        read_api_versions(protocol, version, 0, body0)


def test_ranges_that_are_no_ranges_are_findings_and_versions_intersect(protocol: Any) -> None:
    schema = protocol.response(API_VERSIONS, 3)

    def keys(*entries: tuple[int, int, int]) -> Any:
        rows = [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, lo, hi in entries]
        return build(schema.struct, 3, {"ApiKeys": rows})

    got = read_api_versions(
        protocol, 3, 3, keys((PRODUCE, 99, 120), (1, 9, 4), (2, -3, 5), (3, 0, 12), (3, 0, 9))
    )
    assert isinstance(got, BrokerVersions)
    assert got.ranges == {PRODUCE: (99, 120)}
    assert len(got.findings) == 3 and "Fetch v9-4 is not a range" in got.findings[0]
    assert got.both(protocol, "Produce").empty
    with pytest.raises(NegotiationError, match="no Produce version both speak"):
        got.newest(protocol, "Produce")
    narrow = read_api_versions(protocol, 3, 3, keys((PRODUCE, 3, 7)))
    assert isinstance(narrow, BrokerVersions)
    assert narrow.newest(protocol, "Produce") == 7


# ------------------------------------------------------------------------------ hostile servers


Behaviour = Callable[[socket.socket, Any], None]


@contextmanager
def hostile(behaviour: Behaviour, protocol: Any) -> Iterator[tuple[str, int]]:
    """A server on 127.0.0.1 running ``behaviour(connection, protocol)`` per connection; every
    socket and thread stopped on the way out."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()
    conns: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                c, _ = listener.accept()
            except OSError:
                continue
            conns.append(c)
            threading.Thread(target=_guarded, args=(behaviour, c, protocol), daemon=True).start()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield listener.getsockname()[:2]
    finally:
        stop.set()
        t.join(5)
        listener.close()
        for c in conns:
            try:
                c.close()
            except OSError:
                pass


def _guarded(behaviour: Behaviour, c: socket.socket, protocol: Any) -> None:
    try:
        behaviour(c, protocol)
    except OSError:
        pass


def _read_request(c: socket.socket) -> bytes | None:
    head = b""
    while len(head) < 4:
        chunk = c.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (size,) = struct.unpack(">i", head)
    payload = b""
    while len(payload) < size:
        chunk = c.recv(size - len(payload))
        if not chunk:
            return None
        payload += chunk
    return payload


def _api_versions(c: socket.socket, protocol: Any, frame: bytes, ranges: Any = None) -> None:
    """Answer one ApiVersions request (``frame``) with ``ranges`` (default: what the kit
    speaks of ApiVersions, Metadata, Produce, Fetch and CreateTopics)."""
    req = read_request(protocol.releases[0], frame)
    if ranges is None:
        ranges = [(k, *_range(protocol, k)) for k in (API_VERSIONS, METADATA, PRODUCE, 1, 19)]
    rows = [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, lo, hi in ranges]
    c.sendall(
        _answer_frame(protocol, API_VERSIONS, req.api_version, req.correlation_id, ApiKeys=rows)
    )


def _range(protocol: Any, key: int) -> tuple[int, int]:
    v = protocol.versions(key)
    return v.lowest, v.highest


def _then(after_api_versions: Behaviour, ranges: Any = None) -> Behaviour:
    """ApiVersions answered properly, then ``after_api_versions`` for the rest."""

    def behaviour(c: socket.socket, protocol: Any) -> None:
        frame = _read_request(c)
        if frame is None:
            return
        _api_versions(c, protocol, frame, ranges)
        after_api_versions(c, protocol)

    return behaviour


def _http(c: socket.socket, protocol: Any) -> None:
    if _read_request(c) is not None:
        c.sendall(b"\x00\x00\x00\x0bHTTP/1.1 400")


def _garbage(c: socket.socket, protocol: Any) -> None:
    """The right correlation id, then bytes that are no ApiVersions answer at any version."""
    frame = _read_request(c)
    if frame is not None:
        corr = struct.unpack_from(">i", frame, 4)[0]
        c.sendall(struct.pack(">ii", 12, corr) + b"\x00\x00\x7f\xff\xff\xff\x01\x02")


def _size(size: int) -> Behaviour:
    def behaviour(c: socket.socket, protocol: Any) -> None:
        if _read_request(c) is not None:
            c.sendall(struct.pack(">i", size))
            time.sleep(5)

    return behaviour


def _one_byte_a_second(c: socket.socket, protocol: Any) -> None:
    frame = _read_request(c)
    if frame is None:
        return
    req = read_request(protocol.releases[0], frame)
    data = _answer_frame(protocol, API_VERSIONS, req.api_version, req.correlation_id, ApiKeys=[])
    for i in range(len(data)):
        c.sendall(data[i : i + 1])
        time.sleep(1.0)


def _close_mid_answer(c: socket.socket, protocol: Any) -> None:
    if _read_request(c) is not None:
        c.sendall(struct.pack(">i", 40) + b"\x00\x00\x00\x01" + b"\x00" * 6)
        c.shutdown(socket.SHUT_RDWR)


def _wrong_correlation(c: socket.socket, protocol: Any) -> None:
    frame = _read_request(c)
    if frame is not None:
        req = read_request(protocol.releases[0], frame)
        c.sendall(_answer_frame(protocol, API_VERSIONS, req.api_version, req.correlation_id + 1))


def _silent(c: socket.socket, protocol: Any) -> None:
    _read_request(c)
    time.sleep(30)


def _ghost_brokers(gone_port: int) -> Behaviour:
    """Metadata names broker 7 at a port nobody listens on as every partition's leader."""

    def rest(c: socket.socket, protocol: Any) -> None:
        while (frame := _read_request(c)) is not None:
            req = read_request(protocol.releases[0], frame)
            v = req.api_version
            part = {"PartitionIndex": 0, "LeaderId": 7, "ReplicaNodes": [7], "IsrNodes": [7]}
            topics = [{"Name": t["Name"], "Partitions": [part], "TopicId": uuid.uuid4()}
                      for t in (req.body["Topics"] or [])]  # fmt: skip
            c.sendall(
                _answer_frame(
                    protocol,
                    METADATA,
                    v,
                    req.correlation_id,
                    ControllerId=7,
                    Topics=topics,
                    Brokers=[{"NodeId": 7, "Host": "127.0.0.1", "Port": gone_port}],
                )  # fmt: skip
            )

    no_create_topics = [(k, *_range(client_protocol(), k)) for k in (API_VERSIONS, METADATA, 0, 1)]
    return _then(rest, no_create_topics)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: name -> (behaviour, the error the first request ends in, what its message says)
SERVERS: dict[str, tuple[Callable[[], Behaviour], type[Exception], str]] = {
    "garbage": (lambda: _garbage, MalformedAnswerError, "does not read"),
    "http": (lambda: _http, CorrelationError, "correlation id 1213486160"),
    "2 GB size": (lambda: _size(2**31 - 1), FrameSizeError, "2147483647 bytes"),
    "negative size": (lambda: _size(-1), FrameSizeError, "-1 bytes"),
    "close mid-answer": (lambda: _close_mid_answer, ConnectionClosedError, "inside an answer"),
    "wrong correlation id": (lambda: _wrong_correlation, CorrelationError, "where 1"),
    "one byte a second": (lambda: _one_byte_a_second, AnswerTimeoutError, "within 3 s"),
    "silent": (lambda: _silent, AnswerTimeoutError, "within 3 s"),
}


@pytest.mark.parametrize("name", list(SERVERS))
def test_each_hostile_server_is_a_typed_error_in_bounded_time(protocol: Any, name: str) -> None:
    behaviour, error, says = SERVERS[name]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with hostile(behaviour(), protocol) as address:
        t0 = time.monotonic()
        with pytest.raises(error, match=says) as caught:
            with BrokerConnection(address, protocol, timeout=3.0, connect_timeout=3.0) as conn:
                conn.negotiate()
        assert time.monotonic() - t0 < 6
    assert isinstance(caught.value, WIRE_ERRORS)
    assert "\n" not in str(caught.value)
    # no answer of 2 GB was made room for (ru_maxrss: KiB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000


def test_connection_refused_is_not_a_closed_connection(protocol: Any) -> None:
    with pytest.raises(ConnectError, match="connection refused by 127.0.0.1"):
        BrokerConnection(("127.0.0.1", _free_port()), protocol).negotiate()


def test_metadata_naming_brokers_that_are_not_there(protocol: Any) -> None:
    with hostile(_ghost_brokers(_free_port()), protocol) as address:
        with KafkaClient([address], protocol, timeout=3.0, deadline=3.0) as client:
            view = client.metadata(["t"])
            assert view.leader("t", 0) == (7, ("127.0.0.1", view.brokers[7][1]))
            t0 = time.monotonic()
            with pytest.raises(WIRE_ERRORS, match="no leader of t-0: its leader 7"):
                client.leader("t", 0)
            assert time.monotonic() - t0 < 6


def test_the_fake_broker_under_a_version_cap_negotiates_down(protocol: Any) -> None:
    """A broker that knows ApiVersions up to v2 only: the kit's v4 request is answered in the
    v0 layout, and the kit retries at v2, as Java's client does."""
    from conformance.broker.fetch import FetchLog, Segment
    from conformance.fakebroker import FakeBroker, Served

    served = Served(protocol.releases[1], "t", 0, FetchLog([Segment(0, b"")]), version_cap=2)
    with FakeBroker(served) as broker, KafkaClient(broker.bootstrap, protocol) as client:
        assert client.versions.api_versions_version == 2
        assert client.version("Metadata") == 2
        assert (
            read_metadata(
                client.bootstrap().request(METADATA, 2, metadata_request(protocol, 2, ["t"])).body,
                2,
            )
            .topics["t"]
            .partitions[0]
            .leader
            == served.node_id
        )


# ------------------------------------------------------------------------------ check-broker


@pytest.mark.parametrize(
    "name",
    ["garbage", "http", "2 GB size", "negative size", "close mid-answer", "wrong correlation id"],
)
def test_check_broker_against_a_hostile_server_reports_and_exits_1(
    protocol: Any, name: str, tmp_path: Path
) -> None:
    behaviour, _, says = SERVERS[name]
    out = tmp_path / "r.json"
    with hostile(behaviour(), protocol) as (host, port):
        t0 = time.monotonic()
        proc = kit_cli(
            "check-broker", "--bootstrap", f"hostile=127.0.0.1:{port}", "--cases", "req-*",
            "-q", "--json", str(out), timeout=120,
        )  # fmt: skip
        seconds = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    report = json.loads(out.read_text())
    statuses = {r["status"] for r in report["results"]}
    assert statuses <= {"error", "unsupported"} and "error" in statuses
    problem = report["implementations"][0]["capabilities_problem"]
    assert says.split()[0] in problem and "\n" not in problem
    assert seconds < 60


def test_check_broker_against_ghost_brokers_and_a_broker_without_create_topics(
    protocol: Any, tmp_path: Path
) -> None:
    """A broker without CreateTopics whose Metadata names every topic, led by a broker that is
    not there: the topics are asked of Metadata's auto-creation, the cases needing a topic
    configuration are unsupported with the reason, and since the ghost says every topic
    existed before, none is written to (every other case an error), a report, exit 1."""
    out = tmp_path / "r.json"
    with hostile(_ghost_brokers(_free_port()), protocol) as (host, port):
        proc = kit_cli(
            "check-broker", "--bootstrap", f"ghost=127.0.0.1:{port}", "--cases", "req-*",
            "--cases", "log-*", "-q", "--json", str(out), timeout=300,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "by Metadata auto-creation" in proc.stderr
    results = json.loads(out.read_text())["results"]
    reasons = {r["case"]: (r["status"], r["reason"]) for r in results}
    assert reasons["log/log-too-large"][0] == "unsupported"
    assert "no CreateTopics" in reasons["log/log-too-large"][1]
    assert reasons["req/req-ok"] == (
        "error",
        "topic creation refused: TOPIC_ALREADY_EXISTS: it existed before the run",
    )


def test_keep_and_names_are_checked_before_anything_runs(tmp_path: Path) -> None:
    afile = tmp_path / "f"
    afile.write_text("x")
    for keep in (str(afile), "/dev/null", ""):
        proc = kit_cli("check-broker", "--bootstrap", "127.0.0.1:1", "--keep", keep, timeout=60)
        assert proc.returncode == 2 and "--keep" in proc.stderr, proc.stderr
    proc = kit_cli("check-broker", "--bootstrap", "a\x1b[31m\nb=127.0.0.1:1", timeout=60)
    assert proc.returncode == 2 and "\x1b" not in proc.stderr and "printable" in proc.stderr


# ------------------------------------------------------------------------------ no other client

#: the only places a third-party Kafka client is imported: where it is what is judged or
#: captured (kafka-python's producer in the capture scenarios, its records in the fuzzing
#: differential), never the kit's own wire work
ALLOWED = {
    ("conformance/capture/produce.py", "client_cases"),
    ("conformance/capture/produce.py", "_client"),
    ("conformance/capture/scenarios/producers.py", "kafka_python_produce"),
    ("conformance/fuzz/differential.py", "_kafka_python"),
}
_CLIENTS = ("kafka", "aiokafka", "confluent_kafka")


def _client_imports() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if "starters" in path.parts:
            continue
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        for func in [tree, *ast.walk(tree)]:
            if not isinstance(func, ast.Module | ast.FunctionDef):
                continue
            for node in ast.walk(func) if isinstance(func, ast.FunctionDef) else func.body:
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                if any(n.split(".")[0] in _CLIENTS for n in names):
                    found.add((rel, func.name if isinstance(func, ast.FunctionDef) else "<module>"))
    return found


def test_the_kits_wire_work_imports_no_third_party_kafka_client() -> None:
    found = _client_imports()
    assert found <= ALLOWED, sorted(found - ALLOWED)
    assert ("conformance/capture/produce.py", "_client") in found  # the scan sees them
