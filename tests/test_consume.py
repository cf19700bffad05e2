"""The consumer side of ``check``: the consume scenarios (``corpora/consume/``), their
reference documents (Kafka's ``KafkaConsumer`` through the fake broker), the judge, and real
consumers run through the harness, hostile ones included.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance.broker.fetch import FetchLog, Segment
from conformance.corpus import consume as corpus
from conformance.corpus import golden
from conformance.fakebroker import read_log
from conformance.harness import cases as decode_cases
from conformance.harness.consumer import (
    ConsumeSide,
    consume_case,
    consume_unsupported_reason,
    judge_consume,
    log_batches,
    read_consume_cases,
)
from conformance.harness.judge import CONSUME, Capabilities, read_capabilities
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Implementation, Settings, run_side
from conformance.jvm.oracle import CONSUME_FORMAT

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
CASES = read_consume_cases(CORPORA)
PYTHON = sys.executable


def test_every_scenario_has_its_reference() -> None:
    """Every built-in scenario, in order, then the stored ones (promoted fuzz findings: each
    with its entry, its partition and Kafka's consumer's document)."""
    builtin = [s.name for s in corpus.SCENARIOS]
    assert [c.scenario.name for c in CASES][: len(builtin)] == builtin
    for case in CASES[len(builtin) :]:
        d = CORPORA / corpus.CONSUME_DIR / case.scenario.name
        assert (d / corpus.SCENARIO_FILE).is_file() and (d / "log" / "t-0").is_dir()
        assert case.expected()["format"] == CONSUME_FORMAT
    manifest = json.loads((CORPORA / corpus.CONSUME_DIR / "manifest.json").read_text())
    assert manifest["format"] == corpus.FORMAT
    assert manifest["scenarios"] == [s.to_dict() for s in corpus.SCENARIOS]
    assert manifest["reference"].startswith("KafkaConsumer of kafka-clients")
    kinds = {
        "error": [c for c in CASES if c.expected()["error"]],
        "committed": [c for c in CASES if c.scenario.isolation == "read_committed"],
        "cut": [c for c in CASES if c.scenario.cut_fetch],
    }
    assert all(kinds.values()), {k: len(v) for k, v in kinds.items()}


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scenario.name)
def test_reference_documents_are_kafkas_consumer(tmp_path: Path, schemas: Any, case: Any) -> None:
    """Kafka's KafkaConsumer, run again through the fake broker (crafted partitions written
    again, stored ones served as stored), delivers exactly the stored document."""
    from conformance.jvm import oracle

    root = tmp_path / "corpora"
    if case.scenario.capture:  # a broker capture: served from the checkout's corpora
        src = CORPORA / case.scenario.capture
        (root / case.scenario.capture).parent.mkdir(parents=True)
        (root / case.scenario.capture).symlink_to(src)
    elif case.scenario.write is None:  # a stored scenario: its partition as it is stored
        stored = corpus.partition_dir(root, case.scenario)
        stored.parent.mkdir(parents=True)
        stored.symlink_to(corpus.partition_dir(CORPORA, case.scenario))

    def reference(bootstrap: str, topic: str, isolation: str) -> dict[str, Any]:
        return oracle.consume(bootstrap, topic, 0, isolation=isolation)

    doc = corpus.write_scenario(root, case.scenario, schemas, reference)
    assert doc == case.expected()
    if case.scenario.write is not None:  # the kit's writer still writes the stored bytes
        stored = corpus.partition_dir(CORPORA, case.scenario)
        again = corpus.partition_dir(root, case.scenario)
        assert {p.name: p.read_bytes() for p in stored.iterdir()} == {
            p.name: p.read_bytes() for p in again.iterdir()
        }


# ------------------------------------------------------------------------------------------
# the judge, on the stored reference documents


def _case(name: str) -> Any:
    return next(c for c in CASES if c.scenario.name == name)


def test_judge_on_reference_documents() -> None:
    clean = _case("txn-uncommitted").expected()
    bad = _case("corrupt-between-good").expected()
    assert judge_consume(clean, clean).status == "pass"
    assert judge_consume(bad, bad).status == "pass"
    # any error class will do where Kafka's consumer raised
    other = dict(bad, error={"class": "MyLib.CrcError", "message": "crc"})
    assert judge_consume(bad, other).status == "pass"
    # an error where Kafka delivered everything
    raised = dict(clean, error={"class": "X", "message": "m"})
    v = judge_consume(clean, raised)
    assert v.status == "fail" and v.reason.startswith("raised X")
    # a stall where Kafka raises
    stalled = dict(bad, error={"class": "timeout", "message": "t"})
    assert judge_consume(bad, stalled).reason.startswith("stalls where")
    # no error, more records: the library went past the corrupt batch
    more = dict(bad, error=None, records=bad["records"] + clean["records"][:2])
    assert judge_consume(bad, more).reason.startswith("goes on (2 more records)")
    # a record changed
    changed = json.loads(json.dumps(clean))
    changed["records"][1]["value"] = "eA=="
    v = judge_consume(clean, changed)
    assert v.status == "fail" and v.diff[0].startswith("$.records[1].value")
    # a missing record
    fewer = dict(clean, records=clean["records"][:-1])
    assert "delivered 8 records, the adapter 7" in judge_consume(clean, fewer).diff[-1]
    # not a consume document
    assert judge_consume(clean, {"format": "x"}).status == "error"
    assert judge_consume(clean, {"format": CONSUME_FORMAT, "records": {}}).status == "error"
    assert judge_consume(clean, dict(clean, error="boom")).status == "error"


def _consume_caps(**declared: Any) -> Capabilities:
    """Consume-side capabilities as an adapter declares them (read as the runner reads them)."""
    return read_capabilities(json.dumps({"name": "x", **declared}), "x", CONSUME)


def _served(name: str) -> list[Any]:
    """The batches of a scenario's served log, from the stored partition."""
    case = _case(name)
    log = read_log(corpus.partition_dir(CORPORA, case.scenario))
    if case.scenario.high_watermark is not None:
        log.high_watermark = log.last_stable_offset = case.scenario.high_watermark
    return log_batches(log)


def _without(doc: dict[str, Any], key: str) -> dict[str, Any]:
    return dict(doc, records=[{k: v for k, v in r.items() if k != key} for r in doc["records"]])


def test_omits_on_the_consume_side() -> None:
    """A declared key is not compared; an undeclared missing key differs, and a missing key
    prints apart from a null one (the decode side's diff lines)."""
    kafka = _case("txn-uncommitted").expected()
    first_type = kafka["records"][0]["timestampType"]
    no_type = _without(kafka, "timestampType")
    v = judge_consume(kafka, no_type)
    assert v.status == "fail"
    assert v.diff[0] == f'$.records[0].timestampType: kafka="{first_type}" adapter=(absent)'
    assert v.reason == (
        f"{len(kafka['records'])} differences, the first at $.records[0].timestampType"
    )
    nulls = dict(kafka, records=[dict(r, timestampType=None) for r in kafka["records"]])
    assert judge_consume(kafka, nulls).diff[0] == (
        f'$.records[0].timestampType: kafka="{first_type}" adapter=null'
    )
    declared = _consume_caps(omits=["timestampType"])
    assert judge_consume(kafka, no_type, declared).status == "pass"
    assert judge_consume(kafka, nulls, declared).status == "pass"
    # what is not declared is still compared
    changed = json.loads(json.dumps(no_type))
    changed["records"][2]["value"] = None
    v = judge_consume(kafka, changed, declared)
    assert v.diff == [f'$.records[2].value: kafka="{kafka["records"][2]["value"]}" adapter=null']
    # records missing or extra: one line
    fewer = dict(no_type, records=no_type["records"][:-2])
    v = judge_consume(kafka, fewer, declared)
    n = len(kafka["records"])
    assert v.diff == [f"$.records: Kafka's consumer delivered {n} records, the adapter {n - 2}"]
    assert v.reason == f"delivered {n - 2} records where Kafka's consumer delivered {n}"


def test_omits_per_magic_on_the_consume_side() -> None:
    """The object form: by the magic of the served batch holding each record's offset."""
    kafka = _case("v0-gzip").expected()
    log = _served("v0-gzip")
    assert {b.magic for b in log} == {0}
    no_type = _without(kafka, "timestampType")
    assert (
        judge_consume(kafka, no_type, _consume_caps(omits={"0": ["timestampType"]}), log).status
        == "pass"
    )
    v = judge_consume(kafka, no_type, _consume_caps(omits={"1": ["timestampType"]}), log)
    assert v.status == "fail" and "adapter=(absent)" in v.diff[0]
    # without the served log, no magic is known: only the keys of every magic apply
    assert (
        judge_consume(kafka, no_type, _consume_caps(omits={"0": ["timestampType"]})).status
        == "fail"
    )


def test_magics_and_codecs_of_the_served_log() -> None:
    """A scenario whose log holds a batch of a magic or a codec not declared is unsupported,
    naming it; checks_crc false leaves out the checksum scenario, as before."""
    v0 = _case("v0-gzip").scenario
    log = _served("v0-gzip")
    reason = consume_unsupported_reason(v0, log, _consume_caps(magics=[1, 2]))
    assert reason is not None and reason.startswith("magic 0 not supported")
    reason = consume_unsupported_reason(v0, log, _consume_caps(codecs=["none", "snappy"]))
    assert reason is not None and reason.startswith("codec gzip not supported")
    assert consume_unsupported_reason(v0, log, _consume_caps()) is None
    mixed = _case("mixed-magic").scenario
    assert "codec gzip" in (
        consume_unsupported_reason(mixed, _served("mixed-magic"), _consume_caps(codecs=["none"]))
        or ""
    )
    crc = _case("corrupt-between-good").scenario
    reason = consume_unsupported_reason(
        crc, _served("corrupt-between-good"), _consume_caps(checks_crc=False)
    )
    assert reason is not None and "checks_crc false" in reason


def test_unsupported_and_refused_scenarios_start_no_consumer(schemas: Any) -> None:
    """consume_case decides unsupported (and refused capabilities) before any broker or
    adapter process: the command given here does not exist."""
    impl = Implementation("nothing", ("/nonexistent/consumer",))
    table = ProcessTable()
    try:
        run = consume_case(
            impl,
            _case("v1-snappy"),
            Settings(jobs=1),
            table,
            schemas,
            caps=_consume_caps(magics=[2]),
        )
        assert (run.result.status, run.requests) == ("unsupported", [])
        assert run.result.reason.startswith("magic 1 not supported")
        refused = Capabilities(name="x", side=CONSUME, invalid="capabilities: broken")
        run = consume_case(impl, _case("v1-snappy"), Settings(jobs=1), table, schemas, caps=refused)
        assert (run.result.status, run.result.reason) == ("error", "capabilities: broken")
    finally:
        table.kill_all()


def test_error_classes_on_the_consume_side() -> None:
    """Where Kafka's consumer raised: any class by default; family, class and exact compare
    the adapter's error (Kafka's class names) with Kafka's consumer's (exact: its message too,
    at the level java; below it a message that differs is a finding)."""
    kafka = _case("corrupt-between-good").expected()
    kafka_class, kafka_message = kafka["error"]["class"], kafka["error"]["message"]
    assert kafka_class == "org.apache.kafka.common.KafkaException"  # Kafka's consumer wraps

    def verdicts(cls: str, message: str) -> dict[str, str]:
        actual = dict(kafka, error={"class": cls, "message": message})
        return {
            g: judge_consume(kafka, actual, _consume_caps(error_classes=g), level="java").status
            for g in ("none", "family", "class", "exact")
        }

    everything = {"none": "pass", "family": "pass", "class": "pass", "exact": "pass"}
    assert verdicts(kafka_class, kafka_message) == everything
    assert verdicts(kafka_class, "checksum failed") == dict(everything, exact="fail")
    at_wire = judge_consume(
        kafka, dict(kafka, error={"class": kafka_class, "message": "checksum failed"}),
        _consume_caps(error_classes="exact"),
    )  # fmt: skip
    assert at_wire.status == "pass"
    finding, evidence = at_wire.findings  # the difference, then what the adapter raised
    assert evidence == f"| the adapter raised {kafka_class}: checksum failed"
    assert finding.startswith(f'java: $.error.message: kafka="{kafka_message[:60]}')
    assert finding.endswith(' adapter="checksum failed"')
    # same family (a codec stream failed), another class
    assert verdicts("org.xerial.snappy.SnappyError", kafka_message) == dict(
        everything, **{"class": "fail", "exact": "fail"}
    )
    # another family, and a library's own name
    for cls in ("org.apache.kafka.common.errors.CorruptRecordException", "kafka.errors.Crc"):
        assert verdicts(cls, kafka_message) == {
            "none": "pass",
            "family": "fail",
            "class": "fail",
            "exact": "fail",
        }
    actual = dict(kafka, error={"class": "kafka.errors.Crc", "message": "m"})
    v = judge_consume(kafka, actual, _consume_caps(error_classes="class"))
    assert v.diff == [
        f'$.error.class: kafka="{kafka_class}" adapter="kafka.errors.Crc"',
        "| the adapter raised kafka.errors.Crc: m",
    ]
    v = judge_consume(
        kafka,
        dict(kafka, error={"class": kafka_class, "message": "m"}),
        _consume_caps(error_classes="exact"),
        level="java",
    )
    line, _ = v.diff  # the difference, then the evidence: what the adapter raised
    assert line.startswith(f'$.error.message: kafka="{kafka_message[:60]}') and line.endswith(
        ' adapter="m"'
    )
    # a stall is a stall at every granularity
    stalled = dict(kafka, error={"class": "timeout", "message": "t"})
    assert judge_consume(kafka, stalled, _consume_caps(error_classes="none")).reason.startswith(
        "stalls where"
    )


def _crafted_log(case_id: str) -> tuple[list[Any], dict[str, Any]]:
    """A crafted case's one batch (records, then an error inside it: its CRC is right) as a
    served log, and the document of Kafka's consumer on it: the records Kafka's own reader
    delivered before the error (the case's stored verdict) and the error Kafka's consumer
    raises on a batch that does not read (the consume corpus's)."""
    case = next(c for c in decode_cases.read_cases() if c.id == case_id)
    verdict = case.expected()
    (batch,) = verdict["batches"]
    assert verdict["outcome"] == "error" and batch["records"]
    records = [
        {
            "offset": r["offset"],
            "timestamp": r["timestamp"],
            "timestampType": batch["timestampType"],
            "key": r["key"],
            "value": r["value"],
            "headers": r["headers"],
        }
        for r in batch["records"]
    ]
    error = _case("corrupt-compressed").expected()["error"]
    doc = {"format": CONSUME_FORMAT, "records": records, "error": error}
    return log_batches(FetchLog([Segment(0, case.data())])), doc


def test_error_semantics_on_the_consume_side() -> None:
    """Under eager (a compressed batch) or atomic (any batch), the records Kafka's consumer
    delivered of the batch in which it raised may be a prefix, down to none; not under
    streaming, and never those of a batch that reads whole."""
    gzip_log, gzip_kafka = _crafted_log("crafted/rec-gzip-count-too-high@memory")
    plain_log, plain_kafka = _crafted_log("crafted/v2-count-too-high-c58@memory")
    assert [b.codec for b in gzip_log] == ["gzip"] and [b.codec for b in plain_log] == ["none"]
    raised = {"class": "MyLib.Error", "message": "m"}

    def status(log: list[Any], kafka: dict[str, Any], keep: int, semantics: str) -> str:
        actual = dict(kafka, records=kafka["records"][:keep], error=raised)
        return judge_consume(kafka, actual, _consume_caps(error_semantics=semantics), log).status

    n = len(gzip_kafka["records"])
    assert n >= 2
    for keep in (0, n - 1):
        assert status(gzip_log, gzip_kafka, keep, "streaming") == "fail"
        assert status(gzip_log, gzip_kafka, keep, "eager") == "pass"
        assert status(gzip_log, gzip_kafka, keep, "atomic") == "pass"
        assert status(plain_log, plain_kafka, keep, "eager") == "fail"  # not compressed
        assert status(plain_log, plain_kafka, keep, "atomic") == "pass"
    # the records delivered must still be Kafka's
    wrong = dict(gzip_kafka, records=[dict(gzip_kafka["records"][0], value=None)], error=raised)
    assert (
        judge_consume(gzip_kafka, wrong, _consume_caps(error_semantics="eager"), gzip_log).status
        == "fail"
    )
    # a batch that reads whole (Kafka's consumer raised at the next one) is delivered whole
    kafka = _case("corrupt-between-good").expected()
    fewer = dict(kafka, records=kafka["records"][:-1], error=raised)
    atomic = _consume_caps(error_semantics="atomic")
    assert judge_consume(kafka, fewer, atomic, _served("corrupt-between-good")).status == "fail"


# ------------------------------------------------------------------------------------------
# real and hostile consumers through the harness

KAFKA_PYTHON = ROOT / "adapters" / "kafka-python" / "consumer.py"


def _run(impl: Implementation, schemas: Any, cases: list[Any], timeout: float = 20.0) -> Any:
    table = ProcessTable()
    try:
        side = ConsumeSide(Settings(jobs=2, timeout=timeout), schemas)
        return run_side(side, [impl], cases, table)[0]
    finally:
        table.kill_all()


def test_kafka_python_consumer_through_the_harness(schemas: Any) -> None:
    """kafka-python's real KafkaConsumer (the kit's venv has the pinned version) on every
    scenario: all pass, as the published matrix says."""
    impl = Implementation("kafka-python", (PYTHON, str(KAFKA_PYTHON)))
    before = threading.active_count()
    run = _run(impl, schemas, CASES)
    failed = [f"{r.case}: {r.status} {r.reason}" for r in run.results if r.status != "pass"]
    assert not failed, failed
    assert threading.active_count() <= before + 1  # every fake broker stopped


HOSTILE = {
    "hangs": "import time\ntime.sleep(60)",
    "crashes": "raise SystemExit(3)",
    "garbage": "print('not json')",
    "floods": "import sys\nsys.stdout.write('x' * (1 << 22))",
    "wrong-records": (
        f"import json\nprint(json.dumps({{'format': '{CONSUME_FORMAT}', 'records': [], "
        "'error': None}))"
    ),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_consumers_get_a_verdict(tmp_path: Path, schemas: Any, kind: str) -> None:
    script = tmp_path / "adapter.py"
    script.write_text(
        "import sys\nif sys.argv[1] == 'capabilities':\n    print('{}')\n    raise SystemExit\n"
        + HOSTILE[kind]
        + "\n"
    )
    impl = Implementation(kind, (PYTHON, str(script)))
    case = _case("txn-uncommitted")
    table = ProcessTable()
    try:
        side = ConsumeSide(Settings(jobs=1, timeout=3.0, output_limit=1 << 20), schemas)
        (run,) = run_side(side, [impl], [case], table)
    finally:
        table.kill_all()
    (result,) = run.results
    expected = "fail" if kind == "wrong-records" else "error"
    assert result.status == expected, result
    reasons = {
        "hangs": "timeout",
        "crashes": "exit code 3",
        "garbage": "invalid JSON",
        "floods": "output",
        "wrong-records": "delivered 0 records where Kafka's consumer delivered 8",
    }
    assert reasons[kind] in result.reason, result.reason
    out = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True)
    assert out.stdout.strip() == "", "an adapter process was left running"


def test_check_command_line_consume_side(tmp_path: Path) -> None:
    """``check --cmd ... --side consume`` with kafka-python's consumer: a report whose rows
    are the consumer's, every scenario passing."""
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            PYTHON,
            "-m",
            "conformance.cli",
            "check",
            "--side",
            "consume",
            "--cmd",
            f"{PYTHON} {KAFKA_PYTHON}",
            "--cases",
            "consume/txn-*",
            "--json",
            str(report),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    assert [i["name"] for i in doc["implementations"]] == ["kafka-python consumer"]
    assert {r["case"] for r in doc["results"]} == {
        "consume/txn-uncommitted",
        "consume/txn-committed",
        "consume/txn-committed-1.1",
    }
    assert all(r["status"] == "pass" for r in doc["results"])
    assert all(doc["cases"][r["case"]]["group"] == "consume" for r in doc["results"])
    assert golden.default_root() == CORPORA


CONSUMER_OMITS = ROOT / "tests" / "adapters" / "consumer_omits.py"


def _check_consume(*cmds: str, report: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [PYTHON, "-m", "conformance.cli", "check", "--side", "consume"]
        + [arg for cmd in cmds for arg in ("--cmd", cmd)]
        + ["--json", str(report), "--quiet"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    doc: dict[str, Any] = json.loads(report.read_text())
    return doc


def test_a_consumer_that_omits_a_field_and_declares_it(tmp_path: Path) -> None:
    """kafka-python's real KafkaConsumer whose records lack ``timestampType`` (as a library
    without a timestamp type): declared in ``omits``, every scenario gets the built-in
    kafka-python consumer's verdict; undeclared, every scenario where Kafka's consumer
    delivered records fails on that key, with Kafka's value."""
    doc = _check_consume(
        f"{PYTHON} {CONSUMER_OMITS} declared",
        f"{PYTHON} {KAFKA_PYTHON}",
        f"{PYTHON} {CONSUMER_OMITS} undeclared",
        report=tmp_path / "r.json",
    )
    names = [i["name"] for i in doc["implementations"]]
    assert names == [
        "kafka-python-no-timestamp-type consumer",
        "kafka-python consumer",
        "kafka-python-no-timestamp-type consumer#3",
    ]
    status: dict[str, dict[str, Any]] = {n: {} for n in names}
    for r in doc["results"]:
        status[r["impl"]][r["case"]] = r
    declared, built_in, undeclared = (status[n] for n in names)
    assert set(declared) == set(built_in) == set(undeclared) == {c.id for c in CASES}
    assert {c: r["status"] for c, r in declared.items()} == {
        c: r["status"] for c, r in built_in.items()
    }
    # the published matrix: kafka-python's consumer passes every scenario
    assert all(r["status"] == "pass" for r in declared.values()), declared
    for case in CASES:
        records = case.expected()["records"]
        assert records  # Kafka's consumer delivered records in every scenario
        result = undeclared[case.id]
        assert result["status"] == "fail", result
        assert result["diff"][0] == (
            f'$.records[0].timestampType: kafka="{records[0]["timestampType"]}" adapter=(absent)'
        )
        n = len(records)
        assert result["reason"] == (
            f"{n} difference{'s' if n > 1 else ''}, the first at $.records[0].timestampType"
        )


def test_capability_errors_on_the_consume_side(tmp_path: Path) -> None:
    """Invalid consume-side capabilities are a verdict: every scenario an ``error`` with the
    reason ``capabilities: ...``, no consumer started; a decode-only key is refused there."""
    cmds = []
    for name, caps in (
        ("typo", {"name": "typo", "omit": ["timestampType"]}),
        ("decode-only", {"name": "decode-only", "file_semantics": False}),
        ("bad-omits", {"name": "bad-omits", "omits": ["crc"]}),
    ):
        script = tmp_path / f"{name}.py"
        script.write_text(
            "import json, sys\n"
            "if sys.argv[1] == 'capabilities':\n"
            f"    print(json.dumps({caps!r}))\n"
            "else:\n"
            "    raise SystemExit('never asked to consume')\n"
        )
        cmds.append(f"{PYTHON} {script}")
    doc = _check_consume(*cmds, report=tmp_path / "r.json")
    reasons = {
        "typo consumer": "capabilities: unknown key 'omit' (known: ",
        "decode-only consumer": "capabilities: file_semantics has no meaning on the consume side",
        "bad-omits consumer": "capabilities: omits names no key of a delivered record: crc",
    }
    assert [i["name"] for i in doc["implementations"]] == list(reasons)
    for impl in doc["implementations"]:
        assert impl["capabilities_problem"].startswith(reasons[impl["name"]])
    for r in doc["results"]:
        assert r["status"] == "error" and r["reason"].startswith(reasons[r["impl"]]), r
    assert len(doc["results"]) == 3 * len(CASES)


@pytest.mark.oracle
def test_java_capabilities_serve_both_sides() -> None:
    """The built-in java adapter's one document: decode capabilities at its top level,
    Kafka's KafkaConsumer's in its ``consume`` object (read without a capability error)."""
    from conformance.jvm import oracle

    text = json.dumps(oracle.capabilities())
    decode_side = read_capabilities(text, "java")
    consume_side = read_capabilities(text, "java", CONSUME)
    assert decode_side.persistent and decode_side.file_semantics
    assert consume_side.name == "java" and consume_side.checks_crc
    assert consume_side.error_classes == "exact"
