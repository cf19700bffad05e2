"""The fake broker under hostile or careless clients and inputs (issue 40): repeated
partitions, large requests, many connections, faults per connection, bad files and names, a
blocked stdout, and the places it differed from Kafka."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.broker.fetch import FetchLog, Segment
from conformance.fakebroker import FakeBroker, Faults, Served, read_log
from conformance.fakebroker import server as server_module
from conformance.messages import Message
from conformance.messages.protocol import frame_size, read_response, write_request
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parent.parent
CASE_DIR = ROOT / "corpora/kafka-3.9.2-kraft/multi-segment-bytes-v2/log"
TS = 1_700_000_000_000
FETCH, METADATA, API_VERSIONS = 1, 3, 18
UNKNOWN_SERVER_ERROR, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID = -1, 3, 100


def batch(base: int, n: int, value_size: int = 10) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base)
    for j in range(n):
        b.append(TS + j, None, bytes([65 + j % 26]) * value_size)
    return b.build()


class Client:
    """One connection speaking the protocol (requests and their answers in order)."""

    def __init__(self, schemas: Any, bootstrap: str, client_id: str = "hostile") -> None:
        host, port = bootstrap.split(":")
        self.schemas = schemas
        self.client_id = client_id
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.correlation = 0

    def send(self, api_key: int, version: int, **fields: Any) -> None:
        self.correlation += 1
        body = Message(self.schemas.request(api_key).struct)
        for name, value in fields.items():
            body[name] = value
        self.sock.sendall(
            write_request(
                self.schemas, api_key, version, self.correlation, body, client_id=self.client_id
            )
        )

    def receive(self, api_key: int, version: int) -> Any:
        size = frame_size(_recv(self.sock, 4))
        return read_response(self.schemas, api_key, version, _recv(self.sock, size)).body

    def ask(self, api_key: int, version: int, **fields: Any) -> Any:
        self.send(api_key, version, **fields)
        return self.receive(api_key, version)

    def closed(self, timeout: float = 5) -> bool:
        """Whether the broker closed this connection (EOF or reset) within ``timeout``."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.sock.close()


def _recv(s: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = s.recv(min(n - len(out), 1 << 20))
        if not chunk:
            raise ConnectionError("connection closed")
        out += chunk
    return bytes(out)


def fetch_topic(schemas: Any, name: str = "t", topic_id: Any = None, *partitions: Any) -> Message:
    req = schemas.request(FETCH)
    t = Message(req.structs["FetchTopic"])
    t["Topic"] = name
    if topic_id is not None:
        t["TopicId"] = topic_id
    t["Partitions"] = list(partitions)
    return t


def fetch_partition(schemas: Any, index: int = 0, offset: int = 0, max_bytes: int = 1 << 20) -> Any:
    p = Message(schemas.request(FETCH).structs["FetchPartition"])
    p["Partition"], p["FetchOffset"], p["PartitionMaxBytes"] = index, offset, max_bytes
    return p


def simple_log() -> FetchLog:
    return FetchLog([Segment(0, batch(0, 3) + batch(3, 2))])


# ------------------------------------------------------------------------------------------
# 1. a repeated partition, fetch.max.bytes


def test_a_repeated_partition_is_answered_once(schemas: Any) -> None:
    """Kafka keys a Fetch's partitions in a map: a partition named 2,000 times is answered
    once (not 2,000 copies of its data)."""
    served = Served(schemas, "t", 0, simple_log())
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        p = fetch_partition(schemas)
        for version, topics in (
            (12, [fetch_topic(schemas, "t", None, *[p] * 2000)]),
            (13, [fetch_topic(schemas, "", served.topic_id, *[p] * 2000)]),
            (12, [fetch_topic(schemas, "t", None, *[p] * 600)] * 3),  # the topic named 3 times
        ):
            body = c.ask(FETCH, version, MaxBytes=2**31 - 1, MaxWaitMs=0, Topics=topics)
            parts = [q for t in body["Responses"] for q in t["Partitions"]]
            assert len(parts) == 1, version
            assert parts[0]["Records"] == served.log.segments[0].data
        c.close()


def test_a_response_is_bounded_by_fetch_max_bytes(schemas: Any) -> None:
    """``fetch.max.bytes`` (55 MiB by default) bounds a response whatever MaxBytes says."""
    batches = [batch(0, 3, 100), batch(3, 3, 100), batch(6, 3, 100)]
    log = FetchLog([Segment(0, b"".join(batches))])
    assert Served(schemas, "t", 0, log).fetch_max_bytes == 57671680
    served = Served(schemas, "t", 0, log, fetch_max_bytes=len(batches[0]) + 10)
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        topic = fetch_topic(schemas, "t", None, fetch_partition(schemas))
        body = c.ask(FETCH, 12, MaxBytes=2**31 - 1, MaxWaitMs=0, Topics=[topic])
        assert body["Responses"][0]["Partitions"][0]["Records"] == batches[0] + batches[1][:10]
        c.close()


# ------------------------------------------------------------------------------------------
# 2. the request frame and the work per request


def test_a_large_request_closes_the_connection(schemas: Any) -> None:
    """A frame over ``MAX_REQUEST_BYTES`` (128 KiB) or a request naming more than
    ``MAX_REQUEST_ENTRIES`` (1,000) entries closes the connection; the broker serves on."""
    with FakeBroker(Served(schemas, "t", 0, simple_log())) as broker:
        big = Client(schemas, broker.bootstrap)
        topics = [fetch_topic(schemas, f"x{i}") for i in range(25_000)]  # ~150 KB
        big.send(FETCH, 12, Topics=topics)
        assert big.closed()
        many = Client(schemas, broker.bootstrap)
        parts = [fetch_partition(schemas, i) for i in range(1500)]  # ~50 KB
        many.send(FETCH, 12, Topics=[fetch_topic(schemas, "t", None, *parts)])
        assert many.closed()
        empty = Client(schemas, broker.bootstrap)  # 1,500 topics naming nothing: ~10 KB
        empty.send(FETCH, 12, Topics=[fetch_topic(schemas, f"y{i}") for i in range(1500)])
        assert empty.closed()
        empty.close()
        ok = Client(schemas, broker.bootstrap)
        assert ok.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        for c in (big, many, ok):
            c.close()


# ------------------------------------------------------------------------------------------
# 3. connections


def test_excess_connections_are_refused_and_serving_goes_on(schemas: Any) -> None:
    with FakeBroker(Served(schemas, "t", 0, simple_log()), max_connections=3) as broker:
        clients = [Client(schemas, broker.bootstrap) for _ in range(3)]
        for c in clients:
            assert c.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        extra = [Client(schemas, broker.bootstrap) for _ in range(2)]
        assert all(c.closed() for c in extra)
        clients[0].close()
        deadline = time.time() + 5
        while broker.open_connections > 2 and time.time() < deadline:
            time.sleep(0.02)
        again = Client(schemas, broker.bootstrap)
        assert again.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        for c in [*clients[1:], *extra, again]:
            c.close()


def test_a_thread_that_cannot_start_refuses_one_connection(
    schemas: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``can't start new thread`` refuses that connection; the broker keeps accepting and
    stops cleanly."""
    real_start = threading.Thread.start
    failures = [1]

    def start(self: threading.Thread) -> None:
        if self.name == "fakebroker-conn" and failures:
            failures.pop()
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    broker = FakeBroker(Served(schemas, "t", 0, simple_log())).start()
    try:
        refused = Client(schemas, broker.bootstrap)
        assert refused.closed()
        served = Client(schemas, broker.bootstrap)
        assert served.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        refused.close()
        served.close()
    finally:
        broker.stop()


# ------------------------------------------------------------------------------------------
# 4. --cut-fetch cuts the intended response only


def test_cut_fetch_cuts_only_the_nth_response(schemas: Any) -> None:
    """A Fetch waiting on another connection (nothing to return) is not cut when the n-th
    response with records is."""
    log = simple_log()
    served = Served(schemas, "t", 0, log, faults=Faults(cut_fetch=(1, 30)))
    with FakeBroker(served) as broker:
        waiting = Client(schemas, broker.bootstrap)
        at_end = fetch_topic(schemas, "t", None, fetch_partition(schemas, 0, 5))
        waiting.send(FETCH, 12, MaxBytes=1 << 20, MaxWaitMs=400, Topics=[at_end])
        time.sleep(0.1)
        cut = Client(schemas, broker.bootstrap)
        data = fetch_topic(schemas, "t", None, fetch_partition(schemas, 0, 0))
        cut.send(FETCH, 12, MaxBytes=1 << 20, MaxWaitMs=0, Topics=[data])
        got = b""
        cut.sock.settimeout(5)
        while chunk := cut.sock.recv(1 << 16):
            got += chunk
        assert len(got) == 30
        body = waiting.receive(FETCH, 12)  # whole: not cut
        assert body["Responses"][0]["Partitions"][0]["Records"] == b""
        waiting.close()
        cut.close()


# ------------------------------------------------------------------------------------------
# 5. bad files, a corrupt index


def _start(*args: str, **kw: Any) -> subprocess.Popen[Any]:
    """``kafka-conformance fake-broker ARGS`` started (``kw``: the streams, ``preexec_fn``)."""
    return subprocess.Popen([sys.executable, "-m", "conformance.cli", "fake-broker", *args], **kw)


def _cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "fake-broker", *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def _serve_briefly(*args: str) -> tuple[int, str, str]:
    """Start the command, wait for its bootstrap line, SIGTERM it: (exit, stdout, stderr)."""
    proc = _start(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, first + out, err


def test_files_named_anyhow_are_served(tmp_path: Path) -> None:
    """The ``--help`` example (a file not named after an offset) and a sample ``.bin``."""
    segment = tmp_path / "segment.log"
    shutil.copy(sorted(CASE_DIR.glob("*/*.log"))[0], segment)
    for args in (
        (str(segment), "--topic", "orders", "--partition", "3"),
        (str(sorted((ROOT / "corpora/samples").glob("*.bin"))[0]),),
    ):
        code, out, err = _serve_briefly(*args)
        assert code == 0 and out.startswith("bootstrap "), (args, out, err)
        assert "Traceback" not in err


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    some_log = sorted(CASE_DIR.glob("*/*.log"))[0]
    foo = tmp_path / "foo-0"
    foo.mkdir()
    shutil.copy(some_log, foo / "foo.log")
    huge = tmp_path / "99999999999999999999.log"
    shutil.copy(some_log, huge)
    huge_dir = tmp_path / "h-0"
    huge_dir.mkdir()
    shutil.copy(some_log, huge_dir / "99999999999999999999.log")
    for path in (foo, huge, huge_dir):
        r = _cli(str(path))
        assert r.returncode == 2 and "Traceback" not in r.stderr, (path, r.stderr)
        assert path.name in r.stderr or "foo.log" in r.stderr or "9999" in r.stderr


def test_a_corrupt_index_falls_back_to_a_scan(schemas: Any, tmp_path: Path) -> None:
    """A negative ``.index`` position: Kafka searches from ``max(position, 0)``."""
    data = batch(0, 3) + batch(3, 2)
    log = FetchLog([Segment(0, data, [(0, -8), (3, -1)])])
    assert log.read(0, 1 << 20, min_one_message=True).records == data
    d = tmp_path / "t-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(data)
    (d / "00000000000000000000.index").write_bytes(
        (3).to_bytes(4, "big") + (-100).to_bytes(4, "big", signed=True)
    )
    served = Served(schemas, "t", 0, read_log(d))
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        for offset in (0, 3, 4):
            topic = fetch_topic(schemas, "t", None, fetch_partition(schemas, 0, offset))
            body = c.ask(FETCH, 12, MaxBytes=1 << 20, MaxWaitMs=0, Topics=[topic])
            part = body["Responses"][0]["Partitions"][0]
            assert part["ErrorCode"] == 0 and part["Records"], offset
        c.close()
        assert broker.errors == []


# ------------------------------------------------------------------------------------------
# 6. names Kafka refuses


def test_illegal_topics_and_partitions_are_refused_at_start(schemas: Any) -> None:
    d = str(sorted(CASE_DIR.glob("*"))[0])
    for args in (
        ("--partition", "2147483648"),
        ("--topic", "a" * 40_000),
        ("--topic", "a" * 250),
        ("--topic", "bad name"),
        ("--topic", ".."),
        ("--topic", ""),
    ):
        r = _cli(d, *args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args[0], r.stderr[-300:])
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "fake-broker", d, "--topic", b"\xff"],
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr[-300:]
    log = simple_log()
    Served(schemas, "a" * 249, 0, log)  # the longest legal name
    for topic, partition in (("a" * 250, 0), ("b\xff", 0), ("t", 2**31), ("t", -1)):
        with pytest.raises(ValueError):
            Served(schemas, topic, partition, log)


def test_a_log_whose_offsets_are_no_longs_is_refused_at_start(schemas: Any, tmp_path: Path) -> None:
    """A batch based just below 2^63 whose last offset delta runs past it (bytes a broker never
    wrote; base offsets are outside the checksum): its log end offset is no long, which
    ListOffsets could not answer. Refused when the broker is made (as the CLI says), not by
    a serving thread's traceback."""
    b = BatchBuilder(magic=2, base_offset=0)
    for i in range(3):
        b.append(1_700_000_000_000 + i, b"k", b"v")
    data = (2**63 - 2).to_bytes(8, "big") + b.build()[8:]
    with pytest.raises(ValueError, match="not a long"):
        Served(schemas, "t", 0, FetchLog([Segment(2**63 - 2, data)]))
    path = tmp_path / "t-0"
    path.mkdir()
    (path / "09223372036854775806.log").write_bytes(data)
    r = _cli(str(path), "--topic", "t")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not a long" in r.stderr


# ------------------------------------------------------------------------------------------
# 7. stdout never blocks serving


@pytest.mark.parametrize("reader", ["never-read", "head-1"])
def test_a_blocked_stdout_does_not_stop_serving(schemas: Any, reader: str) -> None:
    r, w = os.pipe()
    proc = _start(str(sorted(CASE_DIR.glob("*"))[0]), stdout=w, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        first = b""
        while not first.endswith(b"\n"):
            first += os.read(r, 1)
        bootstrap = first.split()[1].decode()
        if reader == "head-1":
            os.close(r)
        c = Client(schemas, bootstrap, client_id="x" * 200)  # ~230 bytes a line
        c.sock.settimeout(10)
        for _ in range(1000):  # ~230 KB of lines: more than a pipe holds
            assert c.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        c.close()
        started = time.time()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert time.time() - started < 4
    finally:
        if proc.poll() is None:
            proc.kill()
        if reader != "head-1":
            os.close(r)


# ------------------------------------------------------------------------------------------
# 8. where it differed from Kafka


def test_metadata_topic_lists_as_kafka(schemas: Any) -> None:
    served = Served(schemas, "t", 0, simple_log())
    topic_struct = schemas.request(METADATA).structs["MetadataRequestTopic"]
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        assert [t["Name"] for t in c.ask(METADATA, 0, Topics=[])["Topics"]] == ["t"]
        assert [t["Name"] for t in c.ask(METADATA, 1, Topics=None)["Topics"]] == ["t"]
        for version in (1, 4, 12):
            assert c.ask(METADATA, version, Topics=[])["Topics"] == [], version
        unknown = Message(topic_struct)
        unknown["TopicId"], unknown["Name"] = uuid.uuid4(), None
        known = Message(topic_struct)
        known["TopicId"], known["Name"] = served.topic_id, None
        topics = c.ask(METADATA, 12, Topics=[unknown, known])["Topics"]
        by_id = {t["TopicId"]: t for t in topics}
        assert by_id[unknown["TopicId"]]["ErrorCode"] == UNKNOWN_TOPIC_ID
        assert by_id[served.topic_id]["ErrorCode"] == 0 and by_id[served.topic_id]["Name"] == "t"
        c.close()


def test_fetch_errors_as_kafka(schemas: Any) -> None:
    served = Served(schemas, "t", 0, simple_log())
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        # an unknown topic id: UNKNOWN_TOPIC_ID; a known id, another partition: 3
        topics = [
            fetch_topic(schemas, "", uuid.uuid4(), fetch_partition(schemas)),
            fetch_topic(schemas, "", served.topic_id, fetch_partition(schemas, 5)),
        ]
        body = c.ask(FETCH, 13, MaxBytes=1 << 20, MaxWaitMs=0, Topics=topics)
        assert [t["Partitions"][0]["ErrorCode"] for t in body["Responses"]] == [
            UNKNOWN_TOPIC_ID,
            UNKNOWN_TOPIC_OR_PARTITION,
        ]
        c.close()


def test_a_negative_partition_max_bytes_as_kafka(schemas: Any) -> None:
    """LogSegment.read's IllegalArgumentException ("Invalid max size"): UNKNOWN_SERVER_ERROR."""
    served = Served(schemas, "t", 0, simple_log())
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        topic = fetch_topic(schemas, "t", None, fetch_partition(schemas, 0, 0, -1))
        part = c.ask(FETCH, 12, MaxBytes=1 << 20, MaxWaitMs=0, Topics=[topic])["Responses"][0][
            "Partitions"
        ][0]
        assert (part["ErrorCode"], part["Records"], part["HighWatermark"]) == (
            UNKNOWN_SERVER_ERROR,
            b"",
            -1,
        )
        c.close()


def test_an_unknown_isolation_level_as_kafka(schemas: Any) -> None:
    """IsolationLevel.forId's IllegalArgumentException: FetchRequest.getErrorResponse."""
    served = Served(schemas, "t", 0, simple_log())
    with FakeBroker(served) as broker:
        c = Client(schemas, broker.bootstrap)
        topic = fetch_topic(schemas, "t", None, fetch_partition(schemas))
        for version in (4, 12, 13):
            if version >= 13:
                topic = fetch_topic(schemas, "", served.topic_id, fetch_partition(schemas))
            body = c.ask(
                FETCH, version, MaxBytes=1 << 20, MaxWaitMs=0, IsolationLevel=7, Topics=[topic]
            )
            parts = [p for t in body["Responses"] for p in t["Partitions"]]
            if version >= 13:
                assert body["ErrorCode"] == UNKNOWN_SERVER_ERROR and parts == []
            else:
                assert [(p["ErrorCode"], p["Records"]) for p in parts] == [
                    (UNKNOWN_SERVER_ERROR, b"")
                ]
        c.close()


def test_seen_is_bounded(schemas: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``seen`` keeps the first ``SEEN_LIMIT`` requests, then only (api, version) pairs not
    seen before."""
    monkeypatch.setattr(server_module, "SEEN_LIMIT", 50)
    with FakeBroker(Served(schemas, "t", 0, simple_log())) as broker:
        c = Client(schemas, broker.bootstrap)
        for _ in range(200):
            c.ask(API_VERSIONS, 3)
        c.ask(API_VERSIONS, 2)
        c.close()
        assert len(broker.seen) == 51 and broker.seen[-1] == (API_VERSIONS, 2)


def test_a_client_id_cannot_forge_a_line(schemas: Any) -> None:
    proc = _start(
        str(sorted(CASE_DIR.glob("*"))[0]),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        bootstrap = proc.stdout.readline().split()[1]
        c = Client(schemas, bootstrap, client_id="evil\nbootstrap 10.0.0.1:1")
        c.ask(API_VERSIONS, 3)
        c.close()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = out.splitlines()
    assert lines and not any(line.startswith("bootstrap") for line in lines), lines
    assert "evil\\nbootstrap" in out


# ------------------------------------------------------------------------------------------
# done when: 1000 connections and a 2,000-times-repeated partition within the memory stated


#: docs/memory.md, "The fake broker": the address space it runs in, its peak RSS
ADDRESS_SPACE = 2 << 30
PEAK_RSS_MB = 250


def test_a_thousand_connections_and_a_repeated_partition_within_memory(schemas: Any) -> None:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    proc = _start(
        "--quiet",
        str(sorted(CASE_DIR.glob("*"))[0]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit,
    )
    clients: list[Client] = []
    try:
        assert proc.stdout is not None
        bootstrap = proc.stdout.readline().split()[1].decode()
        for _ in range(1000):
            c = Client(schemas, bootstrap)
            c.send(API_VERSIONS, 3)
            clients.append(c)
        for c in clients:
            assert c.receive(API_VERSIONS, 3)["ErrorCode"] == 0
        topic = _metadata_topics(clients[0])[0]
        p = fetch_partition(schemas)
        body = clients[0].ask(
            FETCH,
            12,
            MaxBytes=2**31 - 1,
            MaxWaitMs=0,
            Topics=[fetch_topic(schemas, topic, None, *[p] * 2000)],
        )
        assert len(body["Responses"][0]["Partitions"]) == 1
        for c in clients:
            c.close()
        clients = []
        fresh = Client(schemas, bootstrap)
        assert fresh.ask(API_VERSIONS, 3)["ErrorCode"] == 0
        fresh.close()
        # the broker's own peak (VmHWM): RUSAGE_CHILDREN's ru_maxrss is the largest of every
        # child the test process ever reaped (a JVM of another test included)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak_kb = int(next(s for s in status.splitlines() if s.startswith("VmHWM:")).split()[1])
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        for c in clients:
            c.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    peak_mb = peak_kb / 1024
    print(f"peak RSS {peak_mb:.1f} MB")
    assert peak_mb < PEAK_RSS_MB, peak_mb


def _metadata_topics(c: Client) -> list[str]:
    return [t["Name"] for t in c.ask(METADATA, 1, Topics=None)["Topics"]]
