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

from conformance.corpus import consume as corpus
from conformance.corpus import golden
from conformance.harness.consumer import judge_consume, read_consume_cases, run_consumer
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Implementation, Settings
from conformance.jvm.oracle import CONSUME_FORMAT

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
CASES = read_consume_cases(CORPORA)
PYTHON = sys.executable


def test_every_scenario_has_its_reference() -> None:
    assert [c.scenario.name for c in CASES] == [s.name for s in corpus.SCENARIOS]
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
    again), delivers exactly the stored document."""
    from conformance.jvm import oracle

    root = tmp_path / "corpora"
    if case.scenario.capture:  # a broker capture: served from the checkout's corpora
        src = CORPORA / case.scenario.capture
        (root / case.scenario.capture).parent.mkdir(parents=True)
        (root / case.scenario.capture).symlink_to(src)

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


# ------------------------------------------------------------------------------------------
# real and hostile consumers through the harness

KAFKA_PYTHON = ROOT / "adapters" / "kafka-python" / "consumer.py"


def _run(impl: Implementation, schemas: Any, cases: list[Any], timeout: float = 20.0) -> Any:
    table = ProcessTable()
    try:
        return run_consumer(impl, cases, Settings(jobs=2, timeout=timeout), table, schemas)
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
        run = run_consumer(
            impl, [case], Settings(jobs=1, timeout=3.0, output_limit=1 << 20), table, schemas
        )
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
        "wrong-records": "Kafka delivered 8 records, the adapter 0",
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
