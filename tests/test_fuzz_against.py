"""``kafka-conformance fuzz --against`` / ``--cmd``: other implementations fuzzed differentially.

The planted-bug adapters (``tests/planted/adapter.py``: a small standalone decoder, and the
same decoder with one bug each) are hunted in one bounded run; each bug must be found as a
finding the clean decoder does not have, confirmed by Kafka's classes, minimized, and
reproduced by the ``check`` command the finding carries (and the clean decoder passes it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import processes, wait_until_gone

from conformance.fuzz.minimize import ddmin_stream, sealed
from conformance.fuzz.targets import MAX_LEN
from conformance.fuzz_check.hunt import signature
from conformance.fuzz_check.inputs import Inputs, writer_seeds
from conformance.levels import Verdict
from conformance.stream.decoder import decode
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "tests" / "planted" / "adapter.py"
CLI = [sys.executable, "-m", "conformance.cli"]
BUGS = ("varlong32", "unchecked-length", "skip-abort", "trust-count")
#: inputs per adapter: enough for every planted bug (with seed 0, each is first hit within 200
#: inputs; the margin keeps the test about the fuzzer, not about luck)
INPUTS = 1000


def _planted(bug: str | None) -> str:
    words = [sys.executable, str(PLANTED)] + (["--bug", bug] if bug else [])
    return shlex.join(words)


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )


@pytest.fixture(scope="module")
def hunted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One bounded run over the clean decoder and the four planted ones."""
    out = tmp_path_factory.mktemp("hunt")
    cmds = [a for bug in (None, *BUGS) for a in ("--cmd", _planted(bug))]
    done = _run(
        "fuzz", *cmds, "--max-inputs", str(INPUTS), "--time", "300",
        "--minimize-seconds", "2", "--out", str(out), "--json",
        "--junit", str(out / "hunt.xml"), "--html", str(out / "hunt.html"),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]  # the planted bugs are findings
    report = json.loads(done.stdout)
    return {"report": report, "out": out, "by": {h["impl"]: h for h in report["fuzz"]["hunts"]}}


@pytest.mark.oracle
def test_the_clean_decoder_has_no_finding(hunted: dict[str, Any]) -> None:
    clean = hunted["by"]["planted"]
    assert clean["findings"] == [], [f["signature"] for f in clean["findings"]]
    assert clean["stats"]["executions"] > INPUTS // 3  # most inputs are magic-2 uncompressed


def _planted_findings(hunted: dict[str, Any], bug: str) -> list[dict[str, Any]]:
    hunt = hunted["by"][f"planted-{bug}"]
    assert all(f["kind"] == "adapter" for f in hunt["findings"])  # none of the kit's own
    return hunt["findings"]


@pytest.mark.oracle
@pytest.mark.parametrize("bug", BUGS)
def test_a_planted_bug_is_found_minimized_and_confirmed(hunted: dict[str, Any], bug: str) -> None:
    findings = _planted_findings(hunted, bug)
    assert findings, f"{bug}: not found in {INPUTS} inputs"
    for f in findings:
        assert f["confirmed"] and f["new"], f
        assert f["minimized_size"] <= f["input_size"]
        assert f["reproduce"] and "--corpora" in f["reproduce"]
    assert any(f["minimized_size"] < f["input_size"] for f in findings), bug
    shown = {
        # what each bug must show, at least once, whatever else it breaks
        "varlong32": lambda f: "timestamp" in f["signature"],
        "unchecked-length": lambda f: (
            f["signature"].startswith("outcome") or ".records" in f["signature"]
        ),
        "skip-abort": lambda f: "$.batches" in f["signature"],
        "trust-count": lambda f: f["signature"].startswith("outcome"),
    }[bug]
    assert any(shown(f) for f in findings), [f["signature"] for f in findings]


@pytest.mark.oracle
@pytest.mark.parametrize("bug", BUGS)
def test_every_finding_reproduces_with_check(
    hunted: dict[str, Any], bug: str, tmp_path: Path
) -> None:
    """No false finding: ``check`` fails every finding's case, with the verdict Kafka's classes
    wrote into it, and the clean decoder passes them all. The first finding's own command is
    run as it is; then every finding's case in one corpora directory, each judged alone."""
    findings = _planted_findings(hunted, bug)
    first = findings[0]
    buggy = _run(*shlex.split(first["reproduce"])[1:], "--quiet")
    assert buggy.returncode == 1, buggy.stdout[-2000:]
    assert "FAIL" in buggy.stdout and first["case"] in buggy.stdout
    every = tmp_path / "corpora" / "regressions" / "stream"
    every.mkdir(parents=True)
    for f in findings:
        for case in (Path(f["path"]) / "corpora" / "regressions" / "stream").iterdir():
            if case.suffix == ".json":
                assert json.loads(case.read_text())["expected_by"].startswith("Java oracle")
            shutil.copy(case, every / case.name)
    report = tmp_path / "buggy.json"
    corpora = str(tmp_path / "corpora")
    buggy = _run("check", "--cmd", _planted(bug), "--corpora", corpora, "--json", str(report), "-q")
    assert buggy.returncode == 1, buggy.stdout[-2000:]
    results = {r["case"]: r["status"] for r in json.loads(report.read_text())["results"]}
    assert results == {f["case"]: "fail" if f["status"] == "fail" else "error" for f in findings}
    clean = _run("check", "--cmd", _planted(None), "--corpora", corpora, "--quiet")
    assert clean.returncode == 0, clean.stdout[-2000:]


@pytest.mark.oracle
def test_a_finding_is_promoted_into_the_corpora_every_library_runs(
    hunted: dict[str, Any], tmp_path: Path
) -> None:
    [f, *_] = [f for f in _planted_findings(hunted, "varlong32") if "timestamp" in f["signature"]]
    (tmp_path / "corpora").mkdir()
    (tmp_path / "oracle").symlink_to(ROOT / "oracle")  # a checkout's oracle sources
    env = {**os.environ, "KAFKA_CONFORMANCE_ROOT": str(tmp_path)}
    done = subprocess.run(
        [*CLI, "fuzz", "--promote", f["path"], "--name", "planted-timestamp", "--note", "test"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stream = tmp_path / "corpora" / "regressions" / "stream"
    meta = json.loads((stream / "planted-timestamp.json").read_text())
    assert meta["mode"] == f["mode"] and meta["expected"]["outcome"] == "ok"
    assert (stream / "planted-timestamp.bin").read_bytes() == bytes.fromhex(f["minimized_hex"])
    corpora = str(tmp_path / "corpora")
    buggy = _run("check", "--cmd", _planted("varlong32"), "--corpora", corpora, "-q")
    clean = _run("check", "--cmd", _planted(None), "--corpora", corpora, "-q")
    assert (buggy.returncode, clean.returncode) == (1, 0), buggy.stdout + clean.stdout
    assert "regressions/stream/planted-timestamp@" in buggy.stdout


@pytest.mark.oracle
def test_the_reports_are_those_of_check(hunted: dict[str, Any]) -> None:
    report, out = hunted["report"], hunted["out"]
    assert report["format"] == "kafka-conformance/check/2" and report["side"] == "decode"
    failing = {r["case"] for r in report["results"] if r["status"] == "fail"}
    listed = {f["case"] for h in report["fuzz"]["hunts"] for f in h["findings"]}
    assert failing == listed and failing
    assert (out / "against" / "report.json").is_file()
    xml = (out / "hunt.xml").read_text()
    assert xml.count("<testcase") == len(report["results"]) and "<failure" in xml
    assert "fuzz-" in (out / "hunt.html").read_text()
    rendered = _run("check", "--from-json", str(out / "against" / "report.json"))
    assert rendered.returncode == 0 and "planted-varlong32" in rendered.stdout


@pytest.mark.oracle
def test_a_crashing_adapter_is_a_finding_and_the_run_goes_on(tmp_path: Path) -> None:
    crash = shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"])
    done = _run(
        "fuzz", "--cmd", crash, "--cmd", _planted(None), "--max-inputs", "40",
        "--minimize-seconds", "1", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    hunts = json.loads(done.stdout)["fuzz"]["hunts"]
    assert [h["findings"] for h in hunts][1] == []  # the clean decoder after it
    [finding] = hunts[0]["findings"]
    assert finding["status"] == "error" and "exit" in finding["signature"]


@pytest.mark.oracle
def test_an_answer_that_does_not_repeat_is_no_finding(tmp_path: Path) -> None:
    """The flaky adapter answers wrongly once in 97 times, never twice in a row: asked the same
    input again it is right, so there is nothing ``check`` could reproduce."""
    done = _run(
        "fuzz", "--cmd", _planted("flaky"), "--max-inputs", "800", "--minimize-seconds", "1",
        "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [hunt] = json.loads(done.stdout)["fuzz"]["hunts"]
    assert hunt["findings"] == [] and hunt["stats"]["unrepeatable"] >= 1, hunt["stats"]


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_hunt_leaves_nothing(tmp_path: Path, sig: int, code: int) -> None:
    """Ctrl-C or SIGTERM in the middle of a hunt: the adapter's server is stopped, the
    temporary directory removed, the exit code says which signal."""
    adapter = tmp_path / "adapter.py"
    shutil.copy(PLANTED, adapter)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [*CLI, "fuzz", "--cmd", shlex.join([sys.executable, str(adapter)]), "--time", "300",
         "--out", str(tmp_path / "out")],
        cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _serving(adapter) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _serving(adapter), proc.poll()
        time.sleep(1)  # in the middle of the hunt
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == code, err[-3000:]
    assert "interrupted" in err and "Traceback" not in err, err[-3000:]
    assert wait_until_gone((str(adapter),), seconds=10) == {}
    assert list(tmp.iterdir()) == []


def _serving(adapter: Path) -> bool:
    return any("serve" in c for c in processes((str(adapter),)).values())


def test_usage_errors_are_refused() -> None:
    done = _run("fuzz", "varint", "--cmd", "true")
    assert done.returncode == 2 and "take no TARGET" in done.stderr
    done = _run("fuzz", "--against", "no-such-library", "--time", "1")
    assert done.returncode == 2 and "unknown implementation" in done.stderr


def _verdict(*lines: str) -> Verdict:
    return Verdict("fail", "reason", list(lines))


def test_one_root_cause_is_one_signature() -> None:
    """Positions, batch indexes and values do not make another finding; a different error
    class, outcome or first differing field does."""
    a = _verdict(
        '$.outcome: kafka="error" adapter="ok"',
        '$.error: kafka={"kafka_exception": "org.apache.kafka.common.InvalidRecordException", '
        '"batch_index": 0, "position": 0} adapter=null',
        "$.batches[0].records: length kafka=0 adapter=1",
    )
    b = _verdict(
        '$.outcome: kafka="error" adapter="ok"',
        '$.error: kafka={"kafka_exception": "org.apache.kafka.common.InvalidRecordException", '
        '"batch_index": 3, "position": 517} adapter=null',
    )
    c = _verdict(
        '$.outcome: kafka="error" adapter="ok"',
        '$.error: kafka={"kafka_exception": "java.nio.BufferUnderflowException", '
        '"batch_index": 3, "position": 517} adapter=null',
    )
    assert signature(a) == signature(b) != signature(c)
    t1 = _verdict('$.batches[0].records[3].timestamp: kafka="5" adapter="7"')
    t2 = _verdict(
        '$.batches[2].records[0].timestamp: kafka="1" adapter="9"',
        '$.batches[2].records[1].key: kafka="aw==" adapter=null',
    )
    k = _verdict('$.batches[2].records[1].key: kafka="aw==" adapter=null')
    assert signature(t1) == signature(t2) == "$.batches[].records[].timestamp" != signature(k)
    assert signature(Verdict("error", "timeout after 10 s")) == signature(
        Verdict("error", "timeout after 20 s")
    )


def test_inputs_repeat_with_their_seed_and_include_the_32_bit_spreads() -> None:
    seeds = list(writer_seeds())
    first = [Inputs(seeds, seed=7).next() for _ in range(1)]
    again = Inputs(seeds, seed=7)
    assert [again.next() for _ in range(1)] == first
    one, two = Inputs(seeds, seed=7), Inputs(seeds, seed=8)
    assert [one.next() for _ in range(50)] != [two.next() for _ in range(50)]
    spans = []
    for data in seeds:
        result = decode(data)
        assert result.error is None, result.error
        for batch in result.to_dict()["batches"]:
            stamps = [int(r["timestamp"]) for r in batch["records"] if int(r["timestamp"]) >= 0]
            if stamps:
                spans.append(max(stamps) - min(stamps))
    assert max(spans) > 2**31  # a timestamp delta a 32-bit reader gets wrong
    assert all(len(s) <= MAX_LEN for s in seeds)  # none dropped by the inputs' size bound
    assert len(Inputs(seeds).seeds) == len(seeds)


def test_minimizing_keeps_a_stream_that_still_fails() -> None:
    """Batches are dropped whole; a byte changed inside a batch is re-sealed, so the checksum
    does not stand in for the difference sought."""
    batches = []
    for i in range(3):
        b = BatchBuilder(base_offset=i * 10)
        b.append(1_700_000_000_000, b"key-%d" % i, b"x" * 40)
        batches.append(b.build())
    stream = b"".join(batches)

    def has_key_1(data: bytes) -> bool:  # "the adapter fails": a record key-1 is read
        result = decode(data).to_dict()
        return any(r["key"] == "a2V5LTE=" for b in result["batches"] for r in b["records"])

    small = ddmin_stream(stream, has_key_1, seconds=20)
    assert has_key_1(small) and len(small) <= len(batches[1])
    assert sealed(stream) == stream  # a sealed stream is left as it is
