"""``kafka-conformance check-broker``: brokers judged against Kafka's answers.

Offline: the judge (``broker_check.judge``) on what real Kafka brokers answered
(``corpora/produce-golden``, captured from real 2.8.2 / 3.9.2 / 4.3.1 brokers): every answer
agrees with Kafka's at every level, and each tampered answer (the real answer with one fault)
is a difference at the level it breaks. The command line's usage errors, and a target that
cannot be reached. Marked ``capture``: a real Kafka broker judged twice, started by the kit
(``--target``) and running at a bootstrap address (``--bootstrap``), with a topic that was
there before the run left as it was.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import socket
import struct
from pathlib import Path

import pytest
from conftest import kit_cli

from conformance.broker.versions import VERSIONS
from conformance.broker_check.judge import judge_case
from conformance.broker_check.scenarios import session_cases
from conformance.codecs.zstd import LibzstdUnavailable
from conformance.corpus.produce.golden import GoldenCase, read_golden_corpus
from conformance.levels import DELIVERY, JAVA, NONE, WIRE
from conformance.wire.batch import seal_v2
from conformance.wire.layout import PARTITION_LEADER_EPOCH_OFFSET

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = read_golden_corpus(ROOT / "corpora" / "produce-golden")
#: the real-client cases are a producer's behaviour, not the broker's: check-broker sends the
#: crafted cases only
CASES = [(b, c) for b, (_m, cs) in GOLDEN.items() for c in cs if not c.name.startswith("client-")]


def _case(broker: str, name: str) -> GoldenCase:
    return next(c for c in GOLDEN[broker][1] if c.name == name)


def _with(case: GoldenCase, **changes: object) -> GoldenCase:
    r = case.requests[0]
    return dataclasses.replace(case, requests=(dataclasses.replace(r, **changes),))


@pytest.fixture(scope="module", autouse=True)
def _kafka2_zstd() -> None:
    from conformance.jvm.kafka_jars import use_kafka2_zstd

    try:
        use_kafka2_zstd()
    except Exception:  # noqa: BLE001 - no jars: the 2.8.2 zstd cases skip
        pass


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{b}/{c.name}") for b, c in CASES])
def test_real_kafka_answers_reach_every_level(case: GoldenCase) -> None:
    """A real Kafka broker's answers are Kafka's answers: nothing differs, at any level."""
    try:
        judgement = judge_case(case.exchange())
    except LibzstdUnavailable as exc:
        pytest.skip(str(exc))
    assert [d.text for d in judgement.differences] == []
    assert judgement.reached() == JAVA
    assert judgement.verdict(JAVA)[0] == "pass"


def test_each_fault_is_filed_at_the_level_it_breaks() -> None:
    case = _case("kafka-4.3.1-kraft", "req-ok")
    r = case.requests[0]
    assert r.response is not None and r.stored is not None
    # refused where Kafka accepts: a client sees it
    refused = {**r.response, "errorCode": 87, "errorName": "INVALID_RECORD"}
    j = judge_case(_with(case, response=refused).exchange())
    assert j.reached() == NONE and {d.level for d in j.differences} >= {DELIVERY}
    assert j.verdict(DELIVERY)[0] == "fail"
    assert "errorCode" in j.verdict(DELIVERY)[1]
    # a closed connection where Kafka answers
    j = judge_case(_with(case, response=None).exchange())
    assert j.reached() == NONE and "closed the connection" in j.verdict()[1]
    # logStartOffset: the answer's other fields are wire
    j = judge_case(_with(case, response={**r.response, "logStartOffset": "7"}).exchange())
    assert j.reached() == DELIVERY and j.verdict(DELIVERY)[0] == "pass"
    assert j.verdict(WIRE)[0] == "fail"
    # the stored batch with another leader epoch (CRC resealed): wire, not delivery
    stored = bytearray(base64.b64decode(r.stored))
    struct.pack_into(">i", stored, PARTITION_LEADER_EPOCH_OFFSET, 7)
    epoch7 = base64.b64encode(seal_v2(stored, length=False)).decode()
    j = judge_case(_with(case, stored=epoch7).exchange())
    assert j.reached() == DELIVERY
    assert any("partitionLeaderEpoch" in d.text for d in j.differences)
    # a record's value changed (CRC resealed): what a consumer reads back differs
    changed = bytearray(base64.b64decode(r.stored))
    at = changed.rindex(b"v2")
    changed[at : at + 2] = b"w2"
    j = judge_case(
        _with(case, stored=base64.b64encode(seal_v2(changed, length=False)).decode()).exchange()
    )
    assert j.reached() == NONE
    assert any(".records[2].value" in d.text for d in j.differences if d.level == DELIVERY)
    # nothing stored where Kafka stores the batch
    j = judge_case(_with(case, stored=None).exchange())
    assert j.reached() == NONE


def test_an_error_text_is_a_java_finding() -> None:
    """Kafka's error message texts are the java level: a finding at the default level."""
    case = next(
        c
        for c in GOLDEN["kafka-4.3.1-kraft"][1]
        if c.requests[0].response and c.requests[0].response["errorMessage"]
    )
    r = case.requests[0]
    assert r.response is not None
    j = judge_case(
        _with(case, response={**r.response, "errorMessage": "not Kafka's words"}).exchange()
    )
    assert j.reached() == WIRE
    status, _, _, findings = j.verdict()  # the default level: wire
    assert status == "pass" and findings and findings[0].startswith("java: ")
    assert j.verdict(JAVA)[0] == "fail"


# ------------------------------------------------------------------------ the command line


@pytest.mark.parametrize(
    "args, says",
    [
        ([], "give --target"),
        (["--target", "no-such-broker"], "unknown target no-such-broker"),
        (["--bootstrap", "nohost"], "give HOST:PORT"),
        (["--bootstrap", "127.0.0.1:99999"], "give HOST:PORT"),
        (["--bootstrap", "127.0.0.1:1", "--topic-prefix", "a/b"], "--topic-prefix"),
        (["--bootstrap", "127.0.0.1:1", "--cases", "no-such-*"], "no case matches"),
        (["--bootstrap", "a=127.0.0.1:1", "--bootstrap", "a=127.0.0.1:2"], "named alike"),
    ],
)
def test_usage_errors(args: list[str], says: str) -> None:
    proc = kit_cli("check-broker", *args, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr


def test_an_unreachable_broker_makes_every_case_an_error(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.json"
    proc = kit_cli(
        "check-broker", "--bootstrap", f"gone=127.0.0.1:{port}", "--cases", "req-*",
        "-q", "--json", str(out), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    report = json.loads(out.read_text())
    assert report["side"] == "broker"
    statuses = {r["status"] for r in report["results"]}
    assert statuses <= {"error", "unsupported"} and "error" in statuses
    assert "connection refused by 127.0.0.1" in report["implementations"][0]["capabilities_problem"]


def test_lists() -> None:
    proc = kit_cli("check-broker", "--list", timeout=120)
    assert proc.returncode == 0, proc.stderr
    for target in ("kafka-2.8.2-zk", "kafka-3.9.2-kraft", "kafka-4.3.1-kraft"):
        assert target in proc.stdout
    proc = kit_cli("check-broker", "--cases-list", timeout=120)
    assert proc.returncode == 0
    assert "req/req-ok" in proc.stdout and "pid/pid-duplicate" in proc.stdout
    for c in session_cases():  # the session scenarios, each with what it judges
        assert c.id in proc.stdout and c.description.split(":")[0] in proc.stdout


# ------------------------------------------------------------------------ a real broker

#: a subset over the request checks, a rewrite, the clock and producer state
LIVE = (
    "req-ok", "req-v12", "log-bad-crc", "rewrite-log-append-time", "pid-duplicate",
    # the session scenarios: a transactional session, the reads, every version
    "txn/*", "fetch/*", "versions/*",
)  # fmt: skip


def _verdicts(report: dict) -> dict[str, tuple[str, str | None]]:  # type: ignore[type-arg]
    return {r["case"]: (r["status"], r.get("level")) for r in report["results"]}


@pytest.mark.capture
def test_bootstrap_and_target_give_the_same_verdicts(tmp_path: Path) -> None:
    """One Kafka 4.3.1 broker judged at its bootstrap address gives the verdicts the kit's own
    Kafka 4.3.1 target gives; a topic that was there before is left as it was, and the run's
    topics are gone."""
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

    from conformance.broker_check.run import DEFAULT_PREFIX
    from conformance.capture.brokers import BROKERS
    from conformance.capture.jvm import start_broker
    from conformance.capture.produce import produce_spec

    cases = [a for c in LIVE for a in ("--cases", c)]
    by_target = tmp_path / "target.json"
    proc = kit_cli("check-broker", "--target", "kafka-4.3.1-kraft", *cases, "-q",
                   "--json", str(by_target), timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr

    spec = produce_spec(BROKERS["kafka-4.3.1-kraft"])
    with start_broker(spec, tmp_path / "broker") as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            from kafka.admin import NewTopic

            admin.create_topics([NewTopic("kc-check-users-topic", 1, 1)])
            producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
            for i in range(3):
                producer.send("kc-check-users-topic", key=b"k%d" % i, value=b"v%d" % i)
            producer.flush()
            producer.close()

            by_bootstrap = tmp_path / "bootstrap.json"
            keep = tmp_path / "keep"
            proc = kit_cli("check-broker", "--bootstrap", f"mine={broker.bootstrap}", *cases,
                           "-q", "--json", str(by_bootstrap), "--keep", str(keep),
                           timeout=600)  # fmt: skip
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert f"named {DEFAULT_PREFIX}" in proc.stderr

            left = [t for t in admin.list_topics() if t.startswith(DEFAULT_PREFIX)]
            assert left == ["kc-check-users-topic"]
            consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=5000)
            tp = TopicPartition("kc-check-users-topic", 0)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            read = [(m.offset, m.key, m.value) for m in consumer]
            consumer.close()
            assert read == [(i, b"k%d" % i, b"v%d" % i) for i in range(3)]
        finally:
            admin.close()
    a, b = json.loads(by_target.read_text()), json.loads(by_bootstrap.read_text())
    assert _verdicts(a) == _verdicts(b)
    assert {s for s, _ in _verdicts(a).values()} == {"pass"}
    assert {lv for _, lv in _verdicts(a).values()} == {JAVA}
    assert {c for c in _verdicts(a) if c.startswith(("txn/", "fetch/", "versions/"))} == {
        c.id for c in session_cases()
    }
    # the versions the model's line states are the ones the real broker advertises
    advertised = a["implementations"][0]["capabilities"]["apiVersions"]
    line = VERSIONS["4.3.1"]
    assert tuple(advertised["Fetch"]) == line.fetch_versions
    assert tuple(advertised["ListOffsets"]) == line.list_offsets_versions
    # the evidence decodes
    fetched = keep / "mine" / "req-ok" / "fetch.bin"
    proc = kit_cli("decode", str(fetched), timeout=120)
    assert proc.returncode == 0 and "3 records" in proc.stdout + proc.stderr, proc.stdout


def test_a_transactional_request_is_judged_against_each_coordinator_state() -> None:
    """A 3.6+ broker asks the transaction coordinator before a transactional write; the kit
    cannot see the coordinator of a target, so the Kafka answer of any state it may be in
    passes. Here: the real 4.3.1 broker had no coordinator (NOT_ENOUGH_REPLICAS); the answer
    of Kafka's own classes with a coordinator that verified (the broker oracle's, stored in
    corpora/produce) passes too, and names that state."""
    case = _case("kafka-4.3.1-kraft", "batch-control")
    assert case.requests[0].response is not None
    assert case.requests[0].response["errorName"] == "NOT_ENOUGH_REPLICAS"
    oracle = json.loads((ROOT / "corpora/produce/batch-control/expected.json").read_text())
    verified = oracle["4.3.1"][0]["response"]
    assert verified["errorName"] == "INVALID_RECORD"
    j = judge_case(_with(case, response=verified).exchange())
    assert j.reached() == JAVA, [d.text for d in j.differences]
    assert any("coordinator answering NONE" in e for e in j.evidence)
    # an answer no state gives still fails
    wrong = {**verified, "errorCode": 2, "errorName": "CORRUPT_MESSAGE"}
    assert judge_case(_with(case, response=wrong).exchange()).reached() == NONE


@pytest.mark.capture
def test_sigterm_stops_the_broker_it_started(tmp_path: Path) -> None:
    """SIGTERM in the middle of a run: exit 143, and the broker the kit started is gone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import wait_until_gone

    log = tmp_path / "err.txt"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.cli", "check-broker", "--target",
             "kafka-4.3.1-kraft", "-q"],
            stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT,
            env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 180
            while b"creating" not in log.read_bytes() and time.monotonic() < deadline:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.2)
            time.sleep(2)  # inside the cases
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=120) == 143, log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
    # the broker of this run: its JVM's command line names the run's directory (other runs
    # on the machine, and their brokers, are not this test's)
    started = re.search(r"starting \(JVM\) in (\S+)", log.read_text())
    assert started, log.read_text()
    left = wait_until_gone((started.group(1),), 30)
    assert not left, log.read_text()


def test_a_broker_report_renders_in_every_view(tmp_path: Path) -> None:
    """A report of side ``broker`` (judged real answers, one of them tampered, so it has a
    pass, a fail and a finding) is valid, and every view renders it; ``--from-json`` takes it."""
    import xml.etree.ElementTree as ET

    from conformance.broker_check.run import BrokerCapabilities
    from conformance.harness.report import html, junit, markdown, model, terminal
    from conformance.harness.runner import CaseResult, Implementation, ImplementationRun, Settings

    ok = _case("kafka-4.3.1-kraft", "req-ok")
    r = ok.requests[0]
    assert r.response is not None
    refused = _with(ok, response={**r.response, "errorCode": 87, "errorName": "INVALID_RECORD"})
    worded = next(
        c for c in GOLDEN["kafka-4.3.1-kraft"][1]
        if c.requests[0].response and c.requests[0].response["errorMessage"]
    )  # fmt: skip
    assert worded.requests[0].response is not None
    reworded = _with(
        worded, response={**worded.requests[0].response, "errorMessage": "other words"}
    )
    results = []
    for case_id, golden in (("req/ok", ok), ("req/refused", refused), ("x/worded", reworded)):
        j = judge_case(golden.exchange())
        status, headline, diff, findings = j.verdict()
        results.append(
            CaseResult("t", case_id, case_id.split("/")[0], status, headline, diff, "", 0.1,
                       findings, j.reached())
        )  # fmt: skip
    assert [x.status for x in results] == ["pass", "fail", "pass"] and results[2].findings
    run = ImplementationRun(
        Implementation("t", ()),
        BrokerCapabilities("a broker", "Apache Kafka 4.3.1", {"Produce": [3, 13]}),
        None,
        results,
        1.0,
        side=model.BROKER,
    )
    docs = {
        x.case: {"group": x.group, "mode": "produce", "size": 1, "description": x.case,
                 "outcome": "ok", "hex": "00", "hex_truncated": False}
        for x in results
    }  # fmt: skip
    built = model.build([run], docs, Settings().to_dict() | {"level": "wire"}, [], complete=False)
    report = json.loads(json.dumps(built))  # as --json writes it
    assert report["side"] == "broker" and model.report_problem(report) is None
    assert report["implementations"][0]["levels"] == {
        "none": 1, "delivery": 0, "wire": 1, "java": 1
    }  # fmt: skip
    assert "findings" in terminal.summary(report) and "other words" in terminal.findings(report)
    assert "Kafka-compatible broker" in html.render(report)
    assert "# Broker matrix" in markdown.render(report)
    ET.fromstring(junit.render(report))
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(report))
    proc = kit_cli("check-broker", "--from-json", str(saved), "--markdown",
                   str(tmp_path / "m.md"), timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m.md").read_text().startswith("# Broker matrix")
