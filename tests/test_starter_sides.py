"""`kafka-conformance check --init-adapter LANG DIR --side consume|produce`: the consumer and
producer starters of every language build as written, declare capabilities the kit accepts
for their side, refuse honestly while their hook is unwritten, and, with the hook replaced by
a bridge to a correct implementation (tests/adapters/starter-bridges/<side>/<lang>/: Kafka's
own KafkaConsumer, KafkaProducer and MemoryRecordsBuilder, spoken to as lines by
tests/adapters/starter_bridge.py), pass through the protocol code the user keeps: the consume
document, the plan reader, the produce-result document and the encoded batch.

The consume starters run together in one `check --side consume` over a few scenarios (the
fake broker); the producer starters together in one `check-producer` on one real broker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from conformance.harness.judge import read_capabilities
from conformance.harness.starter import SIDES, Starter, starters
from conformance.producer_check.run import read_producer_capabilities

CLI = [sys.executable, "-m", "conformance.cli"]
BRIDGES = ROOT / "tests" / "adapters" / "starter-bridges"
LANGUAGES = {"python", "go", "java", "rust", "node"}
ENV = {
    **os.environ,
    "KAFKA_CONFORMANCE_ROOT": str(ROOT),
    "STARTER_BRIDGE_PYTHON": sys.executable,
    "STARTER_BRIDGE_SCRIPT": str(ROOT / "tests" / "adapters" / "starter_bridge.py"),
}
#: the consume scenarios the bridged consumers read: headers and gzip, an error Kafka's
#: consumer raises, a transaction read committed
CONSUME_CASES = ("consume/v2-headers-gzip", "consume/corrupt-between-good",
                 "consume/txn-committed")  # fmt: skip
#: the producer scenarios: headers of every shape, a transaction, an encode plan
#: (idempotent, lz4)
PRODUCE_SCENARIOS = ("headers-shapes", "txn-abort", "encode-idempotent")


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=ENV
    )


def _build(starter: Starter, directory: Path) -> None:
    for step in starter.build:
        proc = subprocess.run(
            list(step), cwd=directory, capture_output=True, text=True, timeout=600, env=ENV
        )
        assert proc.returncode == 0, f"{' '.join(step)}:\n{proc.stdout}{proc.stderr}"


def _run(command: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120, env=ENV)


def test_every_language_has_a_starter_of_every_side() -> None:
    for side in SIDES:
        made = starters(side)
        assert set(made) == LANGUAGES, side
        for s in made.values():
            assert (s.source / s.hook).is_file(), (side, s.language)
            assert (BRIDGES / side / s.language / s.hook).is_file(), (side, s.language)


def test_produce_side_is_refused_without_init_adapter() -> None:
    proc = _cli("check", "--side", "produce", "--cmd", "true")
    assert proc.returncode == 2 and "check-producer" in proc.stderr


def _refuses(starter: Starter, command: list[str], sample_plan: Path) -> None:
    """The unwritten hook: every request of the side ends non-zero, saying so."""
    if starter.side == "consume":
        runs = [
            _run(command, "consume", "--bootstrap", "127.0.0.1:1", "--topic", "t",
                 "--partition", "0", "--from", "earliest", "--isolation", "read_uncommitted",
                 "--timeout-ms", "1000"),
        ]  # fmt: skip
    else:
        runs = [
            _run(command, "produce", "--bootstrap", "127.0.0.1:1", "--plan", str(sample_plan)),
            _run(command, "encode", "--plan", str(sample_plan)),
        ]
    for proc in runs:
        assert proc.returncode not in (0, 2), proc
        assert "not implemented" in proc.stderr, proc.stderr[-2000:]
        assert proc.stdout == "", proc.stdout[:500]


def _made(side: str, language: str, tmp: Path) -> list[str]:
    """Make, build and check ``language``'s ``side`` starter as written; then bridge its hook,
    rebuild it, and return its command."""
    starter = starters(side)[language]
    missing = starter.missing_tools()
    assert not missing, f"the machine lacks {missing}"  # the toolchains are the machine's
    directory = tmp / f"{side}-{language}"
    made = _cli("check", "--init-adapter", language, str(directory), "--side", side)
    assert made.returncode == 0, made.stderr
    assert starter.hook in made.stdout
    assert ("check-producer" if side == "produce" else "--side consume") in made.stdout
    assert not (directory / "starter.toml").exists()
    _build(starter, directory)
    command = starter.command(directory)
    caps = _run(command, "capabilities")
    assert caps.returncode == 0, caps.stderr
    sample = directory / "sample-plan.json"
    if side == "consume":
        declared = read_capabilities(caps.stdout, "x", side="consume")
        assert declared.declared and declared.name == "my-consumer", caps.stdout
    else:
        assert sample.is_file(), "a producer starter carries a sample plan"
        declared_p, problem = read_producer_capabilities(caps.stdout, "x")
        assert problem is None and declared_p.produce and declared_p.encode, caps.stdout
        assert declared_p.name == "my-producer"
    _refuses(starter, command, sample)
    shutil.copyfile(BRIDGES / side / language / starter.hook, directory / starter.hook)
    _build(starter, directory)
    return command


@pytest.fixture(scope="module")
def consumers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("consume-starters")
    return {lang: _made("consume", lang, tmp) for lang in sorted(LANGUAGES)}


@pytest.fixture(scope="module")
def producers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("produce-starters")
    return {lang: _made("produce", lang, tmp) for lang in sorted(LANGUAGES)}


def _counts(report: dict[str, object]) -> dict[str, dict[str, int]]:
    return {i["name"]: i["counts"] for i in report["implementations"]}  # type: ignore[index, union-attr]


@pytest.mark.oracle
def test_consume_starters_pass_when_backed_by_kafkas_consumer(
    consumers: dict[str, list[str]], tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    args = ["check", "--side", "consume", "--json", str(out), "-q"]
    for command in consumers.values():
        args += ["--cmd", " ".join(command)]
    for case in CONSUME_CASES:
        args += ["--cases", case]
    run = _cli(*args)
    counts = _counts(json.loads(out.read_text()))
    every = {"pass": len(CONSUME_CASES), "fail": 0, "unsupported": 0, "error": 0}
    assert counts == {f"{lang}-consume-starter-bridge consumer": every for lang in consumers}, (
        run.stdout + run.stderr[-3000:]
    )
    assert run.returncode == 0


@pytest.mark.oracle
@pytest.mark.capture
def test_produce_starters_pass_when_backed_by_kafkas_producer(
    producers: dict[str, list[str]], tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    args = ["check-producer", "--json", str(out), "-q", "--level", "java"]
    for command in producers.values():
        args += ["--cmd", " ".join(command)]
    for scenario in PRODUCE_SCENARIOS:
        args += ["--scenarios", scenario]
    run = _cli(*args, timeout=1800)
    counts = _counts(json.loads(out.read_text()))
    every = {"pass": len(PRODUCE_SCENARIOS), "fail": 0, "unsupported": 0, "error": 0}
    assert counts == {f"{lang}-produce-starter-bridge": every for lang in producers}, (
        run.stdout + run.stderr[-3000:]
    )
    assert run.returncode == 0


def test_a_subscribing_consumer_works_as_an_assigning_one(tmp_path: Path) -> None:
    """The consume starters say a consumer may assign the partition or subscribe to the topic:
    the fake broker is also the group coordinator, of a group of one. The Python starter with
    kafka-python's consumer subscribing (tests/adapters/subscribing_library.py: its partition
    comes from JoinGroup and SyncGroup) passes the scenarios the bridged consumers read."""
    directory = tmp_path / "subscribing"
    made = _cli("check", "--init-adapter", "python", str(directory), "--side", "consume")
    assert made.returncode == 0, made.stderr
    hook = ROOT / "tests" / "adapters" / "subscribing_library.py"
    shutil.copyfile(hook, directory / "library.py")
    out = tmp_path / "report.json"
    args = ["check", "--side", "consume", "--json", str(out), "-q"]
    args += ["--cmd", f"{sys.executable} {directory / 'adapter.py'}"]  # kafka-python: the venv's
    for case in CONSUME_CASES:
        args += ["--cases", case]
    run = _cli(*args)
    every = {"pass": len(CONSUME_CASES), "fail": 0, "unsupported": 0, "error": 0}
    counts = _counts(json.loads(out.read_text()))
    assert counts == {"kafka-python-subscribing consumer": every}, run.stdout + run.stderr[-3000:]
    assert run.returncode == 0


#: per language, the hook's defaults and batching as written -> a library without a linger or
#: a batch size, with a batch call (Rust has no batching field: undeclared, a linger)
NO_SETTINGS = {
    "python": [('"linger_ms": 5, "batch_size": 16384', '"linger_ms": "none", "batch_size": "none"'),
               ('"batching": "linger"', '"batching": "call"')],
    "node": [("linger_ms: 5, batch_size: 16384", "linger_ms: 'none', batch_size: 'none'"),
             ("batching: 'linger'", "batching: 'call'")],
    "go": [("LingerMs: 5, BatchSize: 16384", "LingerMs: NoSetting, BatchSize: NoSetting"),
           ('\tPartitioner:  "java",', '\tPartitioner:  "java",\n\tBatching: "call",')],
    "java": [("new Adapter.Defaults(true, -1, 5, 16384)",
              "new Adapter.Defaults(true, -1, Adapter.Defaults.NONE, Adapter.Defaults.NONE)"),
             ('"linger");', '"call");')],
    "rust": [("linger_ms: 5,", "linger_ms: NO_SETTING as i64,"),
             ("batch_size: 16384,", "batch_size: NO_SETTING,")],
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_produce_starter_declares_settings_the_library_does_not_have(
    language: str, tmp_path: Path
) -> None:
    """A library without a linger or a batch size declares "none" for them (the kit accepts
    it); the produce starter of every language writes it, and its batching."""
    starter = starters("produce")[language]
    directory = tmp_path / language
    made = _cli("check", "--init-adapter", language, str(directory), "--side", "produce")
    assert made.returncode == 0, made.stderr
    hook = directory / starter.hook
    text = hook.read_text(encoding="utf-8")
    for old, new in NO_SETTINGS[language]:
        assert text.count(old) == 1, (language, old)
        text = text.replace(old, new)
    hook.write_text(text, encoding="utf-8")
    _build(starter, directory)
    caps = _run(starter.command(directory), "capabilities")
    assert caps.returncode == 0, caps.stderr
    declared, problem = read_producer_capabilities(caps.stdout, "x")
    assert problem is None and declared.produce is not None, caps.stdout
    defaults = declared.produce["defaults"]
    assert (defaults["linger_ms"], defaults["batch_size"]) == ("none", "none"), caps.stdout
    assert declared.batching() == ("linger" if language == "rust" else "call"), caps.stdout


def test_node_consume_starter_prints_a_64_bit_value_out_of_range(tmp_path: Path) -> None:
    """A BigInt offset the library computed past 2^63 - 1 (a timestamp below -2^63) is the
    library's answer: the Node consume starter prints it for the kit to compare, where it
    used to exit as a crashed adapter."""
    directory = tmp_path / "node"
    made = _cli("check", "--init-adapter", "node", str(directory), "--side", "consume")
    assert made.returncode == 0, made.stderr
    (directory / "library.js").write_text(
        "'use strict';\n"
        "module.exports = { NAME: 'n', VERSION: '', MAGICS: [2], CODECS: ['none'],\n"
        "  CHECKS_CRC: true, ERROR_SEMANTICS: 'streaming', ERROR_CLASSES: 'none', OMITS: [],\n"
        "  NOTES: '', consume: () => ({ error: null, records: [{ offset: 2n ** 63n,\n"
        "    timestamp: -(2n ** 63n) - 1n, timestampType: 'CreateTime', key: null,\n"
        "    value: Buffer.from('v'), headers: [] }] }) };\n"
    )
    command = starters("consume")["node"].command(directory)
    run = _run(command, "consume", "--bootstrap", "127.0.0.1:1", "--topic", "t",
               "--partition", "0", "--from", "earliest", "--isolation", "read_uncommitted",
               "--timeout-ms", "1000")  # fmt: skip
    assert run.returncode == 0, run.stderr
    (record,) = json.loads(run.stdout)["records"]
    assert (record["offset"], record["timestamp"]) == (str(2**63), str(-(2**63) - 1))
