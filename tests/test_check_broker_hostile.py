"""The hostile trial of ``check-broker`` (issue 51, point 9) against a real Kafka 4.3.1 broker
behind the recording proxy with one API's answers made hostile (its ``alter_response``
knob): garbage, an answer of 130 MB, a partition that never ends, a broker that stops
answering, a truncated ApiVersions list, and SIGTERM twice during topic deletion. Each run
writes its report, judges what it can, exits 1 without a traceback, in bounded time; the
run's topics are deleted (or, interrupted twice, named)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import kit_cli

from conformance.broker_check.run import DEFAULT_PREFIX
from conformance.capture.proxy import SILENT, RecordingProxy, RequestHeader
from conformance.client.calls import read_fetch_answer
from conformance.client.connection import read_answer_frame, read_request_frame
from conformance.client.protocol import build
from conformance.host.kafka_client import KafkaClient
from conformance.jvm.message_defs import client_protocol
from conformance.messages.protocol import write_response
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parents[1]
PRODUCE, FETCH, LIST_OFFSETS, FIND_COORDINATOR, INIT_PID, ADD_PARTITIONS = 0, 1, 2, 10, 22, 24
API_VERSIONS, DELETE_TOPICS, END_TXN = 18, 20, 26
#: a few cases of each kind: produce, the transactional session, reads
CASES = ("req-ok", "req-two-batches", "txn/transactions", "fetch/offsets-latest")

pytestmark = pytest.mark.capture


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from conformance.capture.brokers import BROKERS
    from conformance.capture.jvm import start_broker
    from conformance.capture.produce import produce_spec
    from conformance.jvm import kafka_jars

    try:
        kafka_jars.classpath("4.3.1")
    except kafka_jars.KafkaJarsUnavailable as exc:
        pytest.skip(f"Kafka 4.3.1 jars unavailable: {exc}")
    spec = produce_spec(BROKERS["kafka-4.3.1-kraft"])
    with start_broker(spec, tmp_path_factory.mktemp("broker")) as b:
        yield b


def _garbage(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    """The right correlation id, then bytes that are not the answer."""
    return response[:4] + b"\x7f\xff\xff\xff\x00\x01" * 3


def _huge(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    return response[:4] + b"\x00" * (130 << 20)


def _truncated(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    return response[: max(12, len(response) // 2)]


def _never_ends(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    """Every Fetch answered with a 1 MiB batch at the offset asked: the partition never
    ends."""
    protocol = client_protocol()
    req = read_request_frame(protocol, request)
    topic = req.body["Topics"][0]
    offset = int(topic["Partitions"][0]["FetchOffset"])
    batch = BatchBuilder(base_offset=offset)
    batch.append(1_700_000_000_000, None, b"x" * (1 << 20))
    v = hdr.api_version
    schema = protocol.response(FETCH, v)
    part = {"PartitionIndex": 0, "HighWatermark": offset + 2, "LastStableOffset": offset + 2,
            "LogStartOffset": 0, "Records": batch.build(), "AbortedTransactions": None,
            "PreferredReadReplica": -1}  # fmt: skip
    body = build(
        schema.struct, v, {"Responses": [{"Topic": topic["Topic"], "TopicId": topic["TopicId"],
                                          "Partitions": [part]}]},
    )  # fmt: skip
    return write_response(protocol.releases[0], FETCH, v, hdr.correlation_id, body)[4:]


def _only(api: int, rule: Callable[[RequestHeader, bytes, bytes], Any]) -> Callable[..., Any]:
    def altered(hdr: RequestHeader, request: bytes, response: bytes) -> Any:
        return rule(hdr, request, response) if hdr.api_key == api else None

    return altered


def _after(n: int) -> Callable[..., Any]:
    """Every answer silenced once ``n`` Produce answers went through: the broker stops
    answering in the middle of the cases."""
    produced = [0]

    def altered(hdr: RequestHeader, request: bytes, response: bytes) -> Any:
        if produced[0] >= n:
            return SILENT
        produced[0] += hdr.api_key == PRODUCE
        return None

    return altered


def _run(proxy: RecordingProxy, tmp_path: Path, *cases: str, answer: float = 40) -> Any:
    out = tmp_path / "r.json"
    picked = [a for c in (cases or CASES) for a in ("--cases", c)]
    t0 = time.monotonic()
    proc = kit_cli("check-broker", "--bootstrap", f"hostile={proxy.bootstrap}", *picked, "-q",
                   "--json", str(out), "--timeout", str(answer), timeout=300)  # fmt: skip
    seconds = time.monotonic() - t0
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    report = json.loads(out.read_text()) if out.exists() else None
    return proc, report, seconds


def _statuses(report: Any) -> dict[str, tuple[str, str]]:
    return {r["case"]: (r["status"], r["reason"]) for r in report["results"]}


def _left(broker: Any) -> list[str]:
    with KafkaClient(broker.bootstrap, client_protocol()) as client:
        return [t for t in client.metadata(None).topics if t.startswith(DEFAULT_PREFIX)]


def _epoch_kept(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    """EndTxn v5+ answered with the producer's epoch as it was: a coordinator that takes a
    transactions V2 client's EndTxn as V1's."""
    protocol = client_protocol()
    asked = read_request_frame(protocol, request).body
    v = hdr.api_version
    answer = read_answer_frame(protocol, END_TXN, v, response)
    values = {
        "ThrottleTimeMs": 0,
        "ErrorCode": answer["ErrorCode"],
        "ProducerId": asked["ProducerId"],
        "ProducerEpoch": asked["ProducerEpoch"],
    }
    body = build(protocol.response(END_TXN, v).struct, v, values)
    return write_response(protocol.releases[0], END_TXN, v, hdr.correlation_id, body)[4:]


def _judged(broker: Any, tmp_path: Path, rule: Callable[..., Any], *cases: str) -> Any:
    """``cases`` judged through a proxy that alters answers by ``rule``: (the process, each
    case's result by id); the run exits 1 and leaves no topic behind."""
    host, _, port = broker.bootstrap.rpartition(":")
    with RecordingProxy(host, int(port), record_api_keys=()) as proxy:
        proxy.alter_response(rule)
        proc, report, _ = _run(proxy, tmp_path, *cases)
    assert proc.returncode == 1, proc.stderr
    assert _left(broker) == []
    return proc, {r["case"]: r for r in report["results"]}


#: API -> (fault, the cases it breaks, what their reason says); Kafka 4.3.1's ``txn``
#: session is a transactions V2 client's (no AddPartitionsToTxn): V1 sessions run in
#: ``versions/produce`` (v3-v11)
FAULTS = {
    "Produce garbage": (PRODUCE, _garbage, ("req/req-ok",), "Produce v"),
    "Produce of 130 MB": (PRODUCE, _huge, ("req/req-ok",), "answer of"),
    "FindCoordinator garbage": (FIND_COORDINATOR, _garbage, ("txn/transactions",), "does not"),
    "InitProducerId garbage": (INIT_PID, _garbage, ("txn/transactions",), "does not read"),
    "AddPartitionsToTxn garbage": (ADD_PARTITIONS, _garbage, ("versions/produce",), "does not"),
    "EndTxn garbage": (END_TXN, _garbage, ("txn/transactions",), "does not"),
    "ListOffsets garbage": (LIST_OFFSETS, _garbage, ("txn/transactions",), "ListOffsets"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_one_hostile_api_breaks_its_cases_and_the_run_goes_on(
    broker: Any, tmp_path: Path, fault: str
) -> None:
    api, rule, broken, says = FAULTS[fault]
    host, _, port = broker.bootstrap.rpartition(":")
    with RecordingProxy(host, int(port), record_api_keys=()) as proxy:
        proxy.alter_response(_only(api, rule))
        proc, report, seconds = _run(proxy, tmp_path, *dict.fromkeys((*CASES, *broken)))
    assert proc.returncode == 1, proc.stderr
    got = _statuses(report)
    for case in broken:
        assert got[case][0] == "error" and says in got[case][1], got[case]
    if api != PRODUCE:  # every case produces: with Produce broken none passes
        assert got["req/req-ok"][0] == "pass", got  # the rest was judged
    assert seconds < 200
    assert _left(broker) == []


def test_a_coordinator_that_does_not_bump_the_epoch_fails_the_session(
    broker: Any, tmp_path: Path
) -> None:
    """Transactions V2 (EndTxn v5): Kafka answers the producer epoch + 1 and writes the
    markers with it; a target answering the epoch unchanged is a difference, a verdict
    (``fail``), not an error: its client then goes on with the epoch it was given."""
    _, got = _judged(broker, tmp_path, _only(END_TXN, _epoch_kept), "txn/transactions", "req-ok")
    assert got["req/req-ok"]["status"] == "pass"
    txn = got["txn/transactions"]
    assert txn["status"] == "fail", txn
    assert "EndTxn abort (A): producer id and epoch: kafka=" in json.dumps(txn), txn


def test_an_answer_that_does_not_read_at_one_version_fails_that_version_only(
    broker: Any, tmp_path: Path
) -> None:
    """The version sweep: Fetch v12 answered with bytes that do not read (as tansu 0.6.0's
    Fetch v12 answer carries a tag of v16+, which Java's generated reader refuses) is a
    ``delivery`` difference of v12; the other versions and the ListOffsets sweep are still
    judged."""

    def fetch_v12(hdr: RequestHeader, request: bytes, response: bytes) -> Any:
        return _garbage(hdr, request, response) if hdr.api_version == 12 else None

    cases = ("versions/fetch", "versions/list-offsets")
    _, got = _judged(broker, tmp_path, _only(FETCH, fetch_v12), *cases)
    assert got["versions/list-offsets"]["status"] == "pass", got["versions/list-offsets"]
    fetch = got["versions/fetch"]
    assert fetch["status"] == "fail", fetch
    lines = [d for d in fetch["diff"] if not d.startswith("| ")]
    assert lines and all(d.startswith("the answer to Fetch v12 does not read") for d in lines)


def _refused_init(hdr: RequestHeader, request: bytes, response: bytes) -> bytes:
    """InitProducerId answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), as a broker that
    lists the transaction APIs but takes no transactional id."""
    protocol = client_protocol()
    v = hdr.api_version
    values = {"ThrottleTimeMs": 0, "ErrorCode": 53, "ProducerId": -1, "ProducerEpoch": -1}
    body = build(protocol.response(INIT_PID, v).struct, v, values)
    return write_response(protocol.releases[0], INIT_PID, v, hdr.correlation_id, body)[4:]


def test_a_session_refused_a_producer_id_still_gives_the_reads_records(
    broker: Any, tmp_path: Path
) -> None:
    """InitProducerId refused: ``txn/transactions`` fails on it, and the reads are judged on
    the plain batches A-D the session then writes (not on an empty partition: a read inside
    a batch, or by timestamp, has records to find)."""
    reads = ("fetch/fetch-inside-a-batch", "fetch/offsets-by-timestamp", "fetch/fetch-kip-74")
    _, got = _judged(broker, tmp_path, _only(INIT_PID, _refused_init), "txn/transactions", *reads)
    txn = got["txn/transactions"]
    assert txn["status"] == "fail" and "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in txn["reason"]
    assert any("plain batches A-D" in d for d in txn["diff"]), txn
    assert all(got[r]["status"] == "pass" for r in reads), {r: got[r] for r in reads}


def test_a_truncated_api_versions_list_is_an_error_of_the_target(
    broker: Any, tmp_path: Path
) -> None:
    host, _, port = broker.bootstrap.rpartition(":")
    with RecordingProxy(host, int(port), record_api_keys=()) as proxy:
        proxy.alter_response(_only(API_VERSIONS, _truncated))
        proc, report, seconds = _run(proxy, tmp_path)
    assert proc.returncode == 1
    assert {s for s, _ in _statuses(report).values()} <= {"error", "unsupported"}
    assert "ApiVersions" in report["implementations"][0]["capabilities_problem"]
    assert seconds < 60


def test_a_partition_that_never_ends_is_an_error_not_a_loop(broker: Any, tmp_path: Path) -> None:
    host, _, port = broker.bootstrap.rpartition(":")
    with RecordingProxy(host, int(port), record_api_keys=()) as proxy:
        proxy.alter_response(_only(FETCH, _never_ends))
        proc, report, seconds = _run(proxy, tmp_path, "txn/transactions")
    assert proc.returncode == 1
    status, reason = _statuses(report)["txn/transactions"]
    assert status == "error" and "does not end" in reason, reason
    assert seconds < 200


def test_a_broker_that_stops_answering_is_judged_no_further(broker: Any, tmp_path: Path) -> None:
    """The first case without an answer waits once for the answer timeout; the broker then
    does not answer ApiVersions either, so every case left is an error at once, and the
    deletion of the run's topics is asked once, briefly: they are named as left behind."""
    host, _, port = broker.bootstrap.rpartition(":")
    many = ("req-*", "log-*", "txn/*")
    with RecordingProxy(host, int(port), record_api_keys=()) as proxy:
        proxy.alter_response(_after(3))
        proc, report, seconds = _run(proxy, tmp_path, *many, answer=5)
    assert proc.returncode == 1
    errors = [r for s, r in _statuses(report).values() if s == "error"]
    assert sum("stopped answering" in r for r in errors) >= 5, errors
    assert report["implementations"][0]["capabilities"]["leftBehind"]
    assert "left behind" in proc.stderr
    assert seconds < 45
    with KafkaClient(broker.bootstrap, client_protocol()) as client:
        client.delete_topics(_left(broker))


def test_a_second_sigterm_ends_the_topic_deletion(broker: Any, tmp_path: Path) -> None:
    """DeleteTopics answered slowly; SIGTERM during the deletion lets it go on, a second one
    ends it: exit 143 within seconds, the topics left named on stderr."""
    host, _, port = broker.bootstrap.rpartition(":")

    def slow(hdr: RequestHeader, request: bytes, response: bytes) -> Any:
        if hdr.api_key == DELETE_TOPICS:
            time.sleep(2)
        return None

    err = tmp_path / "err.txt"
    with RecordingProxy(host, int(port), record_api_keys=(DELETE_TOPICS,)) as proxy:
        proxy.alter_response(slow)
        with open(err, "wb") as f:
            proc = subprocess.Popen(
                [sys.executable, "-m", "conformance.cli", "check-broker", "--bootstrap",
                 f"slow={proxy.bootstrap}", "--cases", "req-*", "-q"],
                stdout=subprocess.DEVNULL, stderr=f, cwd=ROOT,
                env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
            )  # fmt: skip
            try:
                deadline = time.monotonic() + 180
                while not proxy.exchanges(DELETE_TOPICS) and time.monotonic() < deadline:
                    assert proc.poll() is None, err.read_text()
                    time.sleep(0.1)
                proc.send_signal(signal.SIGTERM)
                time.sleep(0.5)
                proc.send_signal(signal.SIGTERM)
                t0 = time.monotonic()
                assert proc.wait(timeout=60) == 143, err.read_text()
                assert time.monotonic() - t0 < 15
            finally:
                if proc.poll() is None:
                    proc.kill()
    text = err.read_text()
    assert "topics left:" in text and DEFAULT_PREFIX in text, text
    with KafkaClient(broker.bootstrap, client_protocol()) as client:
        client.delete_topics(_left(broker))


def test_frames_of_a_real_broker_read_as_the_kit_reads_them(broker: Any) -> None:
    """The kit's client against the real broker: every API it sends answered and read."""
    with KafkaClient(broker.bootstrap, client_protocol()) as client:
        assert client.versions.findings == []
        out = client.create_topics({"kc-client-t": (3, 1, {"cleanup.policy": "delete"})})
        assert out["kc-client-t"].created and out["kc-client-t"].error == "NONE"
        again = client.create_topics({"kc-client-t": (3, 1, {})})
        assert not again["kc-client-t"].created
        assert again["kc-client-t"].error == "TOPIC_ALREADY_EXISTS"
        view = client.metadata(["kc-client-t"])
        assert sorted(view.topics["kc-client-t"].partitions) == [0, 1, 2]
        v = client.version("Fetch", None)
        from conformance.client.calls import fetch_request

        answer = client.leader_request(
            "kc-client-t", 1, FETCH, v,
            fetch_request(client.protocol, v, "kc-client-t", 1, 0,
                          topic_id=view.topic_id("kc-client-t")),
            lambda a: read_fetch_answer(a.body, v)[1][0]["errorCode"],
        )  # fmt: skip
        top, parts = read_fetch_answer(answer.body, v)
        assert top == 0 and parts[0]["errorCode"] == 0 and parts[0]["records"] == b""
        assert client.delete_topics(["kc-client-t"]) == {"kc-client-t": None}
