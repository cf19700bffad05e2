"""``kafka-conformance fuzz --against`` / ``--cmd`` on the consume side: consumers fuzzed
through the fake broker against Kafka's own ``KafkaConsumer``.

The planted consumer (``tests/planted/consumer.py``: kafka-python's real consumer as the
hook of the kit's Python starter, with the aborted-transactions list ignored when
``PLANTED_CONSUMER_BUG=skip-abort``) is hunted in one bounded run; the bug must be found as a
finding whose case the same consumer without the bug passes, confirmed by Kafka's consumer,
minimized and reproduced by ``check --side consume``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.broker.fetch import FetchLog, Segment
from conformance.corpus import consume as corpus
from conformance.errors import CorpusError
from conformance.fakebroker import read_log, write_log
from conformance.fuzz_check.consume import consume_signature
from conformance.fuzz_check.inputs import ConsumeInputs, consume_seeds, partition_of
from conformance.harness.consumer import read_consume_cases
from conformance.levels import Verdict
from conformance.logdir.txnindex import AbortedTxn
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "conformance.cli"]
BUG = "PLANTED_CONSUMER_BUG"
#: inputs of the bounded run (with seed 0 the bug is first hit at the 4th)
INPUTS = 25


def _run(
    *args: str, bug: str | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != BUG}
    if bug:
        env[BUG] = bug
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
        check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The planted consumer's command: the Python consume starter with its hook."""
    directory = tmp_path_factory.mktemp("planted-consumer") / "adapter"
    made = _run("check", "--init-adapter", "python", str(directory), "--side", "consume")
    assert made.returncode == 0, made.stderr
    shutil.copyfile(ROOT / "tests" / "planted" / "consumer.py", directory / "library.py")
    return shlex.join([sys.executable, str(directory / "adapter.py")])


@pytest.fixture(scope="module")
def hunted(planted: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("consume-hunt")
    done = _run(
        "fuzz", "--cmd", planted, "--side", "consume", "--max-inputs", str(INPUTS),
        "--time", "300", "--minimize-seconds", "2", "--out", str(out), "--json",
        "--junit", str(out / "hunt.xml"), "--html", str(out / "hunt.html"),
        bug="skip-abort",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]  # the planted bug is a finding
    report = json.loads(done.stdout)
    [hunt] = report["fuzz"]["hunts"]
    return {"report": report, "out": out, "hunt": hunt}


@pytest.mark.oracle
def test_the_planted_consumer_bug_is_found_confirmed_and_reproduced(
    hunted: dict[str, Any], planted: str, tmp_path: Path
) -> None:
    """Every finding is confirmed by Kafka's consumer and fails with ``check --side consume``
    as the hunt says; the consumer without the bug passes the cases of the planted bug
    (read_committed partitions with an aborted transaction), fails the others (kafka-python's
    own divergences): no false finding, and the bug is among them."""
    hunt = hunted["hunt"]
    assert hunt["impl"] == "planted-consumer-skip-abort consumer" and hunt["side"] == "consume"
    findings = hunt["findings"]
    assert findings
    for f in findings:
        assert f["confirmed"] and f["kind"] == "adapter" and f["case"].startswith("consume/")
        assert f["minimized_size"] <= f["input_size"] and "--side consume" in f["reproduce"]
    first = findings[0]
    again = _run(*shlex.split(first["reproduce"])[1:], "--quiet", bug="skip-abort")
    assert again.returncode == 1 and first["case"] in again.stdout, again.stdout[-2000:]
    every = tmp_path / "corpora" / "consume"
    for f in findings:
        [case] = (Path(f["path"]) / "corpora" / "consume").iterdir()
        expected = json.loads((case / "expected.json").read_text())
        assert expected["format"] == "kafka-conformance/consume/1"
        assert expected == json.loads((Path(f["path"]) / "kafka.json").read_text())
        shutil.copytree(case, every / case.name)
    corpora = str(tmp_path / "corpora")
    results = {}
    for bug in ("skip-abort", None):
        report = tmp_path / f"{bug}.json"
        _run("check", "--side", "consume", "--cmd", planted, "--corpora", corpora,
             "--json", str(report), "-q", bug=bug)  # fmt: skip
        results[bug] = {r["case"]: r["status"] for r in json.loads(report.read_text())["results"]}
    assert results["skip-abort"] == {f["case"]: f["status"] for f in findings}
    planted_cases = [c for c, status in results[None].items() if status == "pass"]
    assert planted_cases, results  # the bug's own findings: the consumer without it passes
    for case in planted_cases:
        scenario = json.loads((every / case.split("/")[1] / "scenario.json").read_text())
        assert scenario["isolation"] == "read_committed"
        log = read_log(every / case.split("/")[1] / "log" / "t-0")
        assert any(s.aborted for s in log.segments)
    assert any(f["minimized_size"] < f["input_size"] for f in findings)


@pytest.mark.oracle
def test_the_consume_reports_are_those_of_check(hunted: dict[str, Any]) -> None:
    report, out = hunted["report"], hunted["out"]
    assert report["format"] == "kafka-conformance/check/2" and report["side"] == "consume"
    listed = {f["case"] for f in hunted["hunt"]["findings"]}
    assert {r["case"] for r in report["results"]} == listed
    assert set(report["cases"]) == listed
    assert hunted["hunt"]["stats"]["oracle_calls"] >= INPUTS
    xml = (out / "hunt.xml").read_text()
    assert xml.count("<testcase") == len(report["results"])
    assert "consume/fuzz-" in (out / "hunt.html").read_text()


@pytest.mark.oracle
def test_a_consume_finding_is_promoted_into_the_corpora(
    hunted: dict[str, Any], tmp_path: Path
) -> None:
    f = hunted["hunt"]["findings"][0]
    (tmp_path / "corpora").mkdir()
    for part in ("oracle", "jvm"):  # a checkout's oracle sources, Kafka's jars' project
        (tmp_path / part).symlink_to(ROOT / part)
    env = {**os.environ, "KAFKA_CONFORMANCE_ROOT": str(tmp_path)}
    done = subprocess.run(
        [*CLI, "fuzz", "--promote", f["path"], "--name", "planted-abort", "--note", "test"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [case] = read_consume_cases(tmp_path / "corpora")
    assert case.id == "consume/planted-abort" and case.description == "test"
    [source] = (Path(f["path"]) / "corpora" / "consume").iterdir()
    assert case.expected() == json.loads((source / "expected.json").read_text())
    replay = _run("fuzz", "--replay", f["path"])
    assert replay.returncode == 2 and "check" in replay.stderr


# ------------------------------------------------------------------------------- units


def _txn_log() -> bytes:
    txn = {"producer_id": 9, "producer_epoch": 0, "is_transactional": True}
    b = BatchBuilder(magic=2, base_offset=0, base_sequence=0, **txn)  # type: ignore[arg-type]
    for i in range(3):
        b.append(1_700_000_000_000 + i, b"k%d" % i, b"v")
    marker = end_txn_marker_batch(
        offset=3, producer_id=9, producer_epoch=0, commit=False, coordinator_epoch=0,
        timestamp=1_700_000_000_010,
    )  # fmt: skip
    return b.build() + marker


def test_a_partition_goes_to_files_and_back(tmp_path: Path) -> None:
    p = partition_of(_txn_log(), "read_committed")
    [segment] = p.segments
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in segment.aborted] == [(9, 0, 3)]
    write_log(tmp_path / "t-0", p.log())
    back = read_log(tmp_path / "t-0")
    [again] = back.segments
    assert again.data == segment.data and list(again.aborted) == list(segment.aborted)
    assert sorted(x.name for x in (tmp_path / "t-0").iterdir()) == [
        "00000000000000000000.log", "00000000000000000000.txnindex",
    ]  # fmt: skip


def test_consume_inputs_repeat_with_their_seed_and_reach_every_mutation(tmp_path: Path) -> None:
    seeds = list(consume_seeds(None, tmp_path))  # no corpora: the crafted scenarios written
    assert any(p.isolation == "read_committed" for p in seeds)
    a, b = ConsumeInputs(seeds, 3), ConsumeInputs(seeds, 3)
    made = [a.next() for _ in range(300)]
    assert made == [b.next() for _ in range(300)]
    assert any(p.cut_fetch for p in made)
    assert any(len(p.segments) > len(s.segments) for p in made for s in seeds[:1])
    entries = {len(s.aborted) for p in made for s in p.segments}
    assert len(entries) > 1
    for p in made:  # every input can be served
        FetchLog(list(p.segments))


def test_a_stored_scenario_is_read_and_a_bad_one_refused(tmp_path: Path) -> None:
    log = FetchLog([Segment(0, _txn_log(), (), [AbortedTxn(0, 9, 0, 3, 4)])])
    scenario = corpus.ConsumeScenario("fuzz-x", "d", isolation="read_committed")
    corpus.write_stored(tmp_path, scenario, log, {"format": "kafka-conformance/consume/1"})
    assert corpus.stored_scenarios(tmp_path) == [scenario]
    assert [c.id for c in read_consume_cases(tmp_path)] == ["consume/fuzz-x"]
    for bad in ({"name": "x", "isolation": "dirty"}, {"name": 3}, {"name": "x", "cut_fetch": [1]},
                {"name": "x", "partition": "elsewhere/t-0"}):  # fmt: skip
        with pytest.raises(CorpusError):
            corpus.ConsumeScenario.from_dict(bad)


def _records(*offsets: int) -> dict[str, Any]:
    return {"records": [{"offset": str(o)} for o in offsets], "error": None}


@pytest.mark.parametrize(
    ("kafka", "adapter", "expected"),
    [
        ((4, 5, 6), (0, 1, 2, 4, 5, 6), "delivered records Kafka's consumer skips"),
        ((0, 1, 2), (0, 1, 2, 0, 1, 2), "delivered an offset more than once"),
        ((), (0, 1), "delivered records where Kafka's consumer delivers none"),
        ((0, 1), (0, 1, 2), "delivered records past Kafka's consumer's last"),
        ((0, 1, 2), (0, 1), "stopped before Kafka's consumer's last record"),
        ((0, 1, 2), (0, 2), "skipped records Kafka's consumer delivers"),
        ((0, 1), (1, 0), "delivered offsets out of order"),
    ],
)
def test_a_consume_signature_says_how_the_delivery_differs(
    kafka: tuple[int, ...], adapter: tuple[int, ...], expected: str
) -> None:
    verdict = Verdict("fail", "delivered N records", ["$.records: ..."])
    assert consume_signature(verdict, _records(*kafka), _records(*adapter)) == expected


def test_a_consume_signature_drops_the_numbers_of_a_raised_error() -> None:
    reasons = [
        f"raised X: {n} unconsumed bytes after all records consumed where Kafka's consumer "
        "delivered every record"
        for n in (17, 11136)
    ]
    a, b = (consume_signature(Verdict("fail", r)) for r in reasons)
    assert (
        a
        == b
        == (
            "raised X (N unconsumed bytes after all records consumed) where Kafka's consumer "
            "delivered every record"
        )
    )
    same = consume_signature(Verdict("fail", "x", ['$.records[3].key: kafka="a" adapter="b"']))
    assert same == "$.records[].key"


@pytest.mark.oracle
def test_the_oracle_serves_consume_as_its_one_shot_command(schemas: Any) -> None:
    """The persistent oracle's ``consume`` (mode 3) delivers what the one-shot command
    delivered: every stored reference document of the consume scenarios."""
    from conformance.corpus import package
    from conformance.fakebroker import FakeBroker
    from conformance.jvm.oracle import OracleServer

    root = package.corpora_root()
    with OracleServer() as oracle:
        for case in read_consume_cases(root)[:8]:
            served = corpus.served(root, case.scenario, schemas)
            with FakeBroker(served) as broker:
                doc = oracle.consume(
                    broker.bootstrap, served.topic, 0, isolation=case.scenario.isolation
                )
            assert {k: doc[k] for k in ("records", "error")} == {
                k: case.expected()[k] for k in ("records", "error")
            }, case.id
