"""The fake broker: the Fetch model (``broker.fetch``), the protocol framing
(``messages.protocol``) and real consumers (kafka-python's, Kafka's own KafkaConsumer) reading
corpus partitions through it.

Expected records come from the oracle's decode documents of the corpus
(``expected/<log>.decode.json``): a consumer delivers every record of every data batch, in
order; the slicing expectations are computed from the batch sizes the kit's writer produced.
"""

from __future__ import annotations

import glob
import json
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.broker.fetch import (
    CORRUPT_MESSAGE,
    NONE,
    OFFSET_OUT_OF_RANGE,
    READ_COMMITTED,
    FetchLog,
    Segment,
)
from conformance.fakebroker import APIS, FakeBroker, Faults, Served, max_magic, read_log
from conformance.logdir.txnindex import AbortedTxn
from conformance.messages import Message
from conformance.messages.protocol import (
    API_VERSIONS,
    frame_size,
    read_request,
    read_response,
    response_header_version,
    write_request,
)
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
TS = 1_700_000_000_000


def batch(base: int, n: int, value_size: int = 10, **kw: Any) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base, **kw)
    for j in range(n):
        b.append(TS + j, None, bytes([65 + j % 26]) * value_size)
    return b.build()


# ------------------------------------------------------------------------------------------
# the Fetch model


def test_read_slices_as_a_segment_read() -> None:
    batches = [batch(0, 3), batch(3, 2), batch(5, 4, 500), batch(9, 1)]
    sizes = [len(b) for b in batches]
    pos = [sum(sizes[:i]) for i in range(len(sizes))]
    log = FetchLog([Segment(0, b"".join(batches))])
    assert log.log_end_offset == 10 and log.high_watermark == 10
    # an offset inside a batch: the whole batch from its start, as many bytes as allowed
    r = log.read(4, sizes[1] + sizes[2], min_one_message=True)
    assert r.error == NONE and r.records == b"".join(batches[1:3])
    # the size ends inside the next batch: cut there (FileRecords.slice)
    r = log.read(3, sizes[1] + 7, min_one_message=True)
    assert r.records == batches[1] + batches[2][:7]
    # KIP-74: the first batch whole even when larger than max bytes
    r = log.read(5, 100, min_one_message=True)
    assert r.records == batches[2] and not r.first_entry_incomplete
    # Fetch v3+ without min_one_message (not the first partition): nothing
    r = log.read(5, 100, min_one_message=False)
    assert r.records == b"" and r.first_entry_incomplete
    # Fetch v0-v2 (hard limit): the batch cut at max bytes
    r = log.read(5, 100, min_one_message=False, hard_max_bytes_limit=True)
    assert r.records == batches[2][:100]
    # at the high watermark: nothing; past the log end / before the start: out of range
    assert log.read(10, 1000, min_one_message=True).records == b""
    assert log.read(11, 1000, min_one_message=True).error == OFFSET_OUT_OF_RANGE
    assert FetchLog([Segment(3, b"".join(batches[1:]))]).read(
        1, 100, min_one_message=True
    ).error == (OFFSET_OUT_OF_RANGE)
    # the index is only where the search starts
    indexed = FetchLog([Segment(0, b"".join(batches), [(3, pos[1]), (9, pos[3])])])
    assert indexed.read(9, 1000, min_one_message=True).records == batches[3]
    # the high watermark bounds what is read
    capped = FetchLog([Segment(0, b"".join(batches))], high_watermark=5)
    assert capped.read(0, 10_000, min_one_message=True).records == b"".join(batches[:2])


def test_segments_and_a_damaged_header() -> None:
    a, b = batch(0, 2), batch(2, 2)
    log = FetchLog([Segment(2, b), Segment(0, a)])
    assert log.read(1, 10_000, min_one_message=True).records == a
    assert log.read(2, 10_000, min_one_message=True).records == b
    bad = bytearray(a + b)
    bad[len(a) + 8 : len(a) + 12] = (5).to_bytes(4, "big")  # a size below the minimum
    damaged = FetchLog([Segment(0, bytes(bad))], high_watermark=4)
    assert damaged.read(2, 10_000, min_one_message=True).error == CORRUPT_MESSAGE
    assert damaged.read(0, 10, min_one_message=True).records == a


def test_aborted_transactions_for_read_committed() -> None:
    pid = 77
    data = [
        batch(0, 2, producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True),
        end_txn_marker_batch(
            offset=2,
            producer_id=pid,
            producer_epoch=0,
            commit=False,
            coordinator_epoch=0,
            timestamp=TS,
        ),
        batch(3, 2),
    ]
    txns = [AbortedTxn(0, pid, 0, 2, 3)]
    log = FetchLog([Segment(0, b"".join(data), (), txns)])
    r = log.read(0, 10_000, min_one_message=True, isolation=READ_COMMITTED)
    assert [(t.producer_id, t.first_offset) for t in r.aborted or []] == [(pid, 0)]
    assert log.read(0, 10_000, min_one_message=True).aborted is None
    later = log.read(3, 10_000, min_one_message=True, isolation=READ_COMMITTED)
    assert later.aborted == []


# ------------------------------------------------------------------------------------------
# protocol framing


def test_every_claimed_version_frames_both_ways(schemas: Any, tmp_path: Path) -> None:
    """A request at every version the broker claims is read back as written; its response is
    read by the client side with the header version Kafka uses."""
    log = FetchLog([Segment(0, batch(0, 3))])
    with FakeBroker(Served(schemas, "t", 0, log)) as broker:
        versions = {k: broker._handlers.versions(k) for k in APIS}  # type: ignore[union-attr]
        assert versions[1][0] == 4  # magic 2: no Fetch v0-v3 (no down-conversion)
        for api_key, (low, high) in versions.items():
            for version in range(low, high + 1):
                body = Message(schemas.request(api_key).struct)
                raw = write_request(schemas, api_key, version, 7, body)
                parsed = read_request(schemas, raw[4:])
                assert (parsed.api_key, parsed.api_version, parsed.correlation_id) == (
                    api_key,
                    version,
                    7,
                )
                assert parsed.body == body
                reply = _exchange(broker.bootstrap, raw)
                response = read_response(schemas, api_key, version, reply)
                assert response.correlation_id == 7
    assert response_header_version(schemas.response(API_VERSIONS), 3) == 0


def test_unknown_api_versions_version_gets_v0_unsupported(schemas: Any) -> None:
    log = FetchLog([Segment(0, batch(0, 1))])
    with FakeBroker(Served(schemas, "t", 0, log)) as broker:
        raw = (18).to_bytes(2, "big") + (99).to_bytes(2, "big") + (5).to_bytes(4, "big")
        reply = _exchange(broker.bootstrap, len(raw).to_bytes(4, "big") + raw)
        response = read_response(schemas, API_VERSIONS, 0, reply)
        assert response.body["ErrorCode"] == 35
        assert {k["ApiKey"] for k in response.body["ApiKeys"]} == set(APIS)


def _ask(schemas: Any, bootstrap: str, api_key: int, version: int, **fields: Any) -> Any:
    """One request (``fields`` set on an empty body) and its response's body."""
    body = Message(schemas.request(api_key).struct)
    for name, value in fields.items():
        body[name] = value
    reply = _exchange(bootstrap, write_request(schemas, api_key, version, 3, body))
    return read_response(schemas, api_key, version, reply).body


def test_claimed_versions_follow_the_magic_and_the_cap(schemas: Any) -> None:
    """Fetch from v2 for magic 1 batches, from v4 for magic 2 (no down-conversion); a version
    cap lowers every range, and an API whose lowest version is above it is not claimed."""
    log = FetchLog([Segment(0, batch(0, 1))])
    for magic, low in ((0, 0), (1, 2), (2, 4)):
        with FakeBroker(Served(schemas, "t", 0, log, max_magic=magic)) as broker:
            claimed = _ask(schemas, broker.bootstrap, API_VERSIONS, 3)["ApiKeys"]
            fetch = next(k for k in claimed if k["ApiKey"] == 1)
            assert (fetch["MinVersion"], fetch["MaxVersion"]) == (low, 17)
    with FakeBroker(Served(schemas, "t", 0, log, version_cap=3)) as broker:
        # ApiVersions v4 is above the cap: answered with v0, UNSUPPORTED_VERSION and the ranges
        raw = write_request(schemas, API_VERSIONS, 4, 3, Message(schemas.request(18).struct))
        answer = read_response(schemas, API_VERSIONS, 0, _exchange(broker.bootstrap, raw)).body
        assert answer["ErrorCode"] == 35
        ranges = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in answer["ApiKeys"]}
        assert 1 not in ranges  # magic 2 needs Fetch v4: not claimed under cap 3
        assert ranges[3] == (0, 3) and ranges[18] == (0, 3)
        assert set(ranges) == set(APIS) - {1}


def test_a_group_of_one(schemas: Any) -> None:
    """JoinGroup makes the joining member its group's leader with its own metadata; SyncGroup
    gives the leader back the assignment it sent for itself; a stale generation is refused."""
    log = FetchLog([Segment(0, batch(0, 1))])
    join_struct = schemas.request(11).structs["JoinGroupRequestProtocol"]
    protocol = Message(join_struct)
    protocol["Name"], protocol["Metadata"] = "range", b"member-metadata"
    with FakeBroker(Served(schemas, "t", 0, log)) as broker:
        for version in (0, 5, 9):
            joined = _ask(
                schemas,
                broker.bootstrap,
                11,
                version,
                GroupId="g",
                ProtocolType="consumer",
                Protocols=[protocol],
            )
            assert joined["ErrorCode"] == 0
            member = joined["MemberId"]
            assert member and joined["Leader"] == member
            assert joined["ProtocolName"] == "range"
            assert [m["Metadata"] for m in joined["Members"]] == [b"member-metadata"]
            assignment = Message(schemas.request(14).structs["SyncGroupRequestAssignment"])
            assignment["MemberId"], assignment["Assignment"] = member, b"my-partitions"
            synced = _ask(
                schemas,
                broker.bootstrap,
                14,
                min(version, 5),
                GroupId="g",
                GenerationId=joined["GenerationId"],
                MemberId=member,
                Assignments=[assignment],
            )
            assert (synced["ErrorCode"], synced["Assignment"]) == (0, b"my-partitions")
        stale = _ask(schemas, broker.bootstrap, 14, 3, GroupId="g", GenerationId=1, MemberId="x")
        assert stale["ErrorCode"] == 22  # ILLEGAL_GENERATION
        empty = _ask(schemas, broker.bootstrap, 11, 5, GroupId="g", ProtocolType="consumer")
        assert empty["ErrorCode"] == 23  # INCONSISTENT_GROUP_PROTOCOL


def _exchange(bootstrap: str, request: bytes) -> bytes:
    host, port = bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(request)
        size = frame_size(_recv(s, 4))
        return _recv(s, size)


def _recv(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        assert chunk, "connection closed"
        out += chunk
    return out


def test_stop_closes_everything_also_with_clients_connected(schemas: Any) -> None:
    log = FetchLog([Segment(0, batch(0, 1))])
    before = threading.active_count()
    broker = FakeBroker(Served(schemas, "t", 0, log)).start()
    host, port = broker.bootstrap.split(":")
    clients = [socket.create_connection((host, int(port))) for _ in range(3)]
    clients[0].sendall(b"\x7f\xff\xff\xff")  # a size beyond the limit: that connection closes
    deadline = time.time() + 5
    while broker.open_connections != 2 and time.time() < deadline:
        time.sleep(0.02)
    assert broker.open_connections == 2
    broker.stop()
    assert broker.open_connections == 0
    for c in clients:
        c.settimeout(5)
        try:
            assert c.recv(1) == b""  # closed by the broker
        except ConnectionResetError:
            pass  # closed with unread bytes (the oversized frame's): a reset
        c.close()
    time.sleep(0.1)
    assert threading.active_count() <= before
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=2).close()


# ------------------------------------------------------------------------------------------
# real consumers on corpus partitions


def _partition(case: str) -> tuple[Path, str]:
    found = sorted(glob.glob(str(CORPORA / case / "log" / "*-0")))
    assert found, case
    d = Path(found[0])
    return d, d.name.rsplit("-", 1)[0]


def _expected_records(case: str) -> list[dict[str, Any]]:
    """Every record of every data batch of the partition, from the oracle's decodes."""
    d, _ = _partition(case)
    out: list[dict[str, Any]] = []
    for log in sorted(d.glob("*.log")):
        rel = log.relative_to(CORPORA / case).as_posix()
        doc = json.loads((CORPORA / case / "expected" / (rel + ".decode.json")).read_text())
        assert doc["outcome"] == "ok"
        for b in doc["batches"]:
            if b.get("isControl"):
                continue
            for r in b["records"]:
                out.append({k: r[k] for k in ("offset", "timestamp", "key", "value", "headers")})
    return out


def _served(schemas: Any, case: str) -> Served:
    d, topic = _partition(case)
    log = read_log(d)
    return Served(schemas, topic, 0, log, max_magic=max_magic(log))


CASES = [
    "kafka-0.10.2.2-zk/codec-gzip-v0-kafka-python",
    "kafka-1.1.1-zk/codec-snappy-v1-java",
    "kafka-2.8.2-zk/headers-gzip-v2-java",
    "kafka-3.9.2-kraft/multi-segment-bytes-v2",
    "kafka-4.3.1-kraft/codec-zstd-v2-java",
    "kafka-4.3.1-kraft/compacted-v2-java",
]


@pytest.mark.parametrize("case", CASES)
def test_kafka_python_consumer_reads_what_the_oracle_decodes(schemas: Any, case: str) -> None:
    from kafka import KafkaConsumer, TopicPartition

    served = _served(schemas, case)
    with FakeBroker(served) as broker:
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            enable_auto_commit=False,
            consumer_timeout_ms=5000,
        )
        try:
            tp = TopicPartition(served.topic, 0)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            got = []
            end = served.log.high_watermark
            for m in consumer:
                got.append(
                    {
                        "offset": str(m.offset),
                        # kafka-python says None where Kafka says -1 (NO_TIMESTAMP, magic 0)
                        "timestamp": str(-1 if m.timestamp is None else m.timestamp),
                        "key": _b64(m.key),
                        "value": _b64(m.value),
                        "headers": [{"key": k, "value": _b64(v)} for k, v in m.headers],
                    }
                )
                if end is not None and m.offset + 1 >= end:
                    break
        finally:
            consumer.close()
        assert broker.errors == []
    assert got == _expected_records(case)


def _b64(v: bytes | None) -> str | None:
    import base64

    return None if v is None else base64.b64encode(v).decode()


def _java_consume(bootstrap: str, topic: str, isolation: str = "read_uncommitted") -> Any:
    from conformance.jvm import oracle

    return oracle.consume(bootstrap, topic, 0, isolation=isolation)


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES)
def test_kafka_consumer_reads_what_the_oracle_decodes(schemas: Any, case: str) -> None:
    served = _served(schemas, case)
    with FakeBroker(served) as broker:
        doc = _java_consume(broker.bootstrap, served.topic)
        assert broker.errors == []
    assert doc["error"] is None
    records = [
        {k: r[k] for k in ("offset", "timestamp", "key", "value", "headers")}
        for r in doc["records"]
    ]
    assert records == _expected_records(case)


@pytest.mark.oracle
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_kafka_consumer_isolation_on_a_real_broker_transaction_log(
    schemas: Any, isolation: str
) -> None:
    """A real broker's partition with a committed and an aborted transaction: the aborted
    transactions come from its .txnindex, and read_committed drops their records."""
    case = "kafka-4.3.1-kraft/txn-commit-abort-v2-java"
    served = _served(schemas, case)
    with FakeBroker(served) as broker:
        doc = _java_consume(broker.bootstrap, served.topic, isolation)
    assert doc["error"] is None
    offsets = [int(r["offset"]) for r in doc["records"]]
    everything = [int(r["offset"]) for r in _expected_records(case)]
    if isolation == "read_uncommitted":
        assert offsets == everything
    else:
        aborted = served.log.segments[-1].aborted
        assert aborted, "the capture has an aborted transaction"
        dropped = {o for o in everything for t in aborted if t.first_offset <= o <= t.last_offset}
        assert dropped and offsets == [o for o in everything if o not in dropped]


@pytest.mark.oracle
def test_a_dropped_connection_mid_response(schemas: Any) -> None:
    """The first Fetch response with records is cut after 30 bytes and the connection closed:
    Kafka's consumer reconnects and still reads everything."""
    case = "kafka-3.9.2-kraft/multi-segment-bytes-v2"
    served = _served(schemas, case)
    served.faults = Faults(cut_fetch=(1, 30))
    with FakeBroker(served) as broker:
        doc = _java_consume(broker.bootstrap, served.topic)
    assert doc["error"] is None
    assert len(doc["records"]) == len(_expected_records(case))


def test_command_line_serves_until_interrupted(schemas: Any) -> None:
    """``kafka-conformance fake-broker`` prints its address, serves a real consumer
    (kafka-python, read_committed: the aborted transaction's records are left out), logs the
    requests and exits 0 on SIGINT with nothing left listening."""
    import os
    import signal
    import sys

    from kafka import KafkaConsumer, TopicPartition

    case = "kafka-4.3.1-kraft/txn-commit-abort-v2-java"
    d, topic = _partition(case)
    cli = [sys.executable, "-m", "conformance.cli", "fake-broker", str(d)]
    proc = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        assert first[0] == "bootstrap", first
        consumer = KafkaConsumer(
            bootstrap_servers=first[1],
            enable_auto_commit=False,
            consumer_timeout_ms=3000,
            isolation_level="read_committed",
        )
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        offsets = [m.offset for m in consumer]
        consumer.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    served = _served(schemas, case)
    aborted = served.log.segments[-1].aborted
    everything = [int(r["offset"]) for r in _expected_records(case)]
    assert offsets == [
        o for o in everything if not any(t.first_offset <= o <= t.last_offset for t in aborted)
    ]
    assert "Fetch v" in out and f"as {topic}-0" in err
    host, port = first[1].split(":")
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=2).close()
