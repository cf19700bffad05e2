"""Outside adapters (`kafka-conformance check --cmd`): a library that exposes less than Kafka
fails only where it really differs, once it declares what it does not expose (issue 25), and a
library's own CI can gate on a run with its known divergences (`--known`). Also what hostile
adapters did to a run: nested JSON, escaped children, crash reasons, odd names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, wait_until_gone

from conformance.harness import cases as C
from conformance.harness.judge import Capabilities, CapabilityError, judge, read_capabilities

CLI = [sys.executable, "-m", "conformance.cli", "check"]
PARTIAL = [sys.executable, str(ROOT / "tests" / "adapters" / "partial.py")]
BROKEN = [sys.executable, str(ROOT / "tests" / "adapters" / "broken.py")]
MARK = ("kafka-conformance-broken-adapter",)
TRAITS = ["no-failing-batch", "v2-only-header", "control-no-epoch", "bare-eof", "atomic"]


def _check(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )


def _cmd(argv: list[str]) -> list[str]:
    return ["--cmd", " ".join(argv)]


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every partial adapter over every case, in one run: each trait alone and all together,
    declared; each trait undeclared."""
    out = tmp_path_factory.mktemp("partial") / "r.json"
    args: list[str] = []
    for traits in [*TRAITS, ",".join(TRAITS), *(f"{t},undeclared" for t in TRAITS)]:
        args += _cmd([*PARTIAL, traits])
    proc = _check(*args, "--jobs", "2", "--json", str(out))
    report = json.loads(out.read_text())
    report["_proc"] = proc
    return report


def _counts(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {i["name"]: i["counts"] for i in report["implementations"]}


def test_declared_partial_adapters_fail_nowhere(partial_run: dict[str, Any]) -> None:
    """Kafka's verdict on every case is what each partial adapter shows, minus what it
    declares it does not show: 0 failures are the kit's."""
    n = len(C.read_cases())
    counts = _counts(partial_run)
    for name in ["partial-" + t for t in TRAITS] + ["partial-" + "-".join(sorted(TRAITS))]:
        assert counts[name] == {"pass": n, "fail": 0, "unsupported": 0, "error": 0}, name


def test_undeclared_they_fail_where_they_differ(partial_run: dict[str, Any]) -> None:
    """The same adapters without the declaration fail: the declarations are what passes them
    (and the cases each trait touches are the cases Kafka's verdict makes it touch)."""
    counts = _counts(partial_run)
    expected_docs = [c.expected() for c in C.read_cases()]
    errors = [d for d in expected_docs if d["outcome"] == "error"]
    listed = [d for d in errors if d["error"]["batch_index"] < len(d["batches"])]
    controls_with_epoch = [
        d
        for d in expected_docs
        if any(
            "coordinatorEpoch" in r.get("control", {}) for b in d["batches"] for r in b["records"]
        )
    ]
    legacy = [d for d in expected_docs if any(b["magic"] < 2 for b in d["batches"])]
    assert counts["partial-no-failing-batch-undeclared"]["fail"] == len(listed)
    assert counts["partial-control-no-epoch-undeclared"]["fail"] == len(controls_with_epoch)
    assert counts["partial-undeclared-v2-only-header"]["fail"] == len(legacy)
    other_class = [
        d
        for d in errors
        if d["error"]["kafka_exception"] != "org.apache.kafka.common.errors.CorruptRecordException"
    ]
    assert counts["partial-bare-eof-undeclared"]["fail"] == len(other_class)
    assert counts["partial-atomic-undeclared"]["fail"] > 0
    assert partial_run["_proc"].returncode == 1


def test_diff_lines_name_kafka_and_the_adapter(partial_run: dict[str, Any]) -> None:
    """`kafka=... adapter=...` in every diff line, JSON values (a string and a number that
    print alike are told apart); the FAIL line is not a copy of the first diff line."""
    out = partial_run["_proc"].stdout
    assert "$.batches: length kafka=" in out and " adapter=(absent)" in out
    fails = [r for r in partial_run["results"] if r["status"] == "fail"]
    assert fails and all(r["reason"] != r["diff"][0] for r in fails)
    assert all(
        " kafka=" in line and " adapter=" in line or line.startswith("... ")
        for r in fails
        for line in r["diff"]
    )


def test_omits_per_magic_and_control_fields() -> None:
    caps = read_capabilities(
        json.dumps({"omits": {"*": ["control.coordinatorEpoch"], "1": ["crc"]}}), "a"
    )
    assert caps.omitted(1) == {"crc", "control.coordinatorEpoch"}
    assert caps.omitted(2) == {"control.coordinatorEpoch"}
    assert caps.omitted(-1) == caps.omitted(0) == {"control.coordinatorEpoch"}
    assert caps.to_dict()["omits"]["1"] == ["control.coordinatorEpoch", "crc"]
    for bad in (
        {"omits": ["crcs"]},  # a typo is not silently ignored
        {"omits": {"3": ["crc"]}},
        {"omits": {"2": "crc"}},
        {"lists_failing_batch": "no"},
        {"error_semantics": "lazy"},
    ):
        with pytest.raises(CapabilityError):
            read_capabilities(json.dumps(bad), "a")


def _failing_listed_case() -> dict[str, Any]:
    for case in C.read_cases():
        e = case.expected()
        if e["outcome"] == "error" and 0 < e["error"]["batch_index"] == len(e["batches"]) - 1:
            return e
    raise AssertionError("no case fails in a listed batch after another")


def test_an_unlisted_failing_batch_is_the_only_batch_that_may_be_missing() -> None:
    exp = _failing_listed_case()
    unlisted = Capabilities(name="x", lists_failing_batch=False)
    without = {**exp, "batches": exp["batches"][:-1]}
    assert judge(exp, without, unlisted, exp["mode"]).status == "pass"
    assert judge(exp, without, Capabilities(name="x"), exp["mode"]).status == "fail"
    # the batches before it are still compared, and so is where the error is
    short = {**exp, "batches": exp["batches"][:-2]}
    assert judge(exp, short, unlisted, exp["mode"]).status == "fail"
    moved = {**without, "error": {**exp["error"], "position": exp["error"]["position"] + 1}}
    assert judge(exp, moved, unlisted, exp["mode"]).status == "fail"


# ------------------------------------------------------------------------------------------
# --known: an outside adapter's CI gate


def _known_entry(impl: str, cases: list[str], summary: str) -> str:
    return (
        f'[[divergence]]\nimpl = "{impl}"\ncases = {json.dumps(cases)}\n'
        f'class = "leniency"\nsummary = "{summary}"\ndetail = "test"\n\n'
    )


def test_known_file_makes_an_outside_adapter_a_ci_gate(tmp_path: Path) -> None:
    """broken.py v2-only-lenient accepts what Kafka rejects: with a --known file naming the
    cases where Kafka's verdict is an error or a partial input, the run exits 0; an entry
    that explains nothing is stale and fails it; an invalid file is a usage error."""
    selected = [c for c in C.read_cases() if c.id.startswith("crafted/v2-")]
    rejected = [c.id for c in selected if c.expected()["outcome"] != "ok"]  # it says ok
    assert rejected
    known = tmp_path / "known.toml"
    known.write_text(_known_entry("broken-v2-only-lenient", rejected, "accepts every error"))
    adapter = _cmd([*BROKEN, "v2-only-lenient"])
    out = tmp_path / "r.json"
    plain = _check(*adapter, "--cases", "crafted/v2-*", "-q")
    assert plain.returncode == 1
    gated = _check(*adapter, "--cases", "crafted/v2-*", "--known", str(known), "--json", str(out))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    report = json.loads(out.read_text())
    assert report["implementations"][0]["known"] == len(rejected)
    passing = next(c.id for c in selected if c.expected()["outcome"] == "ok")
    known.write_text(
        known.read_text() + _known_entry("broken-v2-only-lenient", [passing], "nothing here")
    )
    stale = _check(*adapter, "--cases", "crafted/v2-*", "--known", str(known), "-q")
    assert stale.returncode == 1 and "stale" in stale.stdout and "nothing here" in stale.stdout
    other = tmp_path / "other.toml"
    other.write_text(_known_entry("no-such-adapter", [passing], "x"))
    named = _check(*adapter, "--cases", passing, "--known", str(other), "-q")
    assert named.returncode == 0 and "no-such-adapter" in named.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[[divergence]]\nimpl = "x"\ncases = []\n')
    assert _check(*adapter, "--known", str(bad)).returncode == 2
    bad.write_text("not = toml = at all")
    result = _check(*adapter, "--known", str(bad))
    assert result.returncode == 2 and "Traceback" not in result.stderr


# ------------------------------------------------------------------------------------------
# hostile adapters


def test_nested_json_is_an_error_verdict_and_the_report_is_written(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    few = ["--cases", "crafted/v2-appendix-a1@memory", "--cases", "crafted/v2-empty-batch@memory"]
    proc = _check(
        *_cmd([*BROKEN, "nested"]),
        *_cmd([*BROKEN, "serve-nested"]),
        *_cmd([*BROKEN, "nested-caps"]),
        *few,
        "--json",
        str(out),
        "-q",
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    by_name = {i["name"]: i for i in report["implementations"]}
    for name in ("broken-nested", "broken-serve-nested"):
        reasons = [r["reason"] for r in report["results"] if r["impl"] == name]
        assert reasons and all("nested too deeply" in r for r in reasons), reasons
    caps = next(i for n, i in by_name.items() if n not in ("broken-nested", "broken-serve-nested"))
    assert "no JSON object" in caps["capabilities_problem"]


def test_a_child_that_leaves_the_session_is_killed(tmp_path: Path) -> None:
    proc = _check(*_cmd([*BROKEN, "setsid-child"]), "--cases", "crafted/v2-[a-c]*@memory", "-q")
    assert proc.returncode == 0, proc.stdout
    assert wait_until_gone(MARK) == {}


def test_a_crash_keeps_its_reason(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = _check(
        *_cmd([*BROKEN, "panic"]),
        "--cases",
        "crafted/v2-appendix-a1@memory",
        "--json",
        str(out),
    )
    panic = "panic: runtime error: index out of range [7] with length 3"
    assert f"stderr: {panic}" in proc.stdout
    (result,) = json.loads(out.read_text())["results"]
    assert result["reason"] == f"exit code 2: {panic}"
    assert result["stderr"].startswith(panic) and "bytes of stderr left out" in result["stderr"]
    assert result["stderr"].rstrip().endswith("main.go:309 +0x1d")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "soon"])
def test_timeout_must_be_a_finite_positive_number(value: str) -> None:
    proc = _check("--cmd", "true", "--timeout", value)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--timeout" in proc.stderr


def test_names_with_control_characters_are_escaped(tmp_path: Path) -> None:
    adapter = tmp_path / "adapter.py"
    adapter.write_text(
        "import json, sys\n"
        "from conformance import decode\n"
        "if sys.argv[1] == 'capabilities':\n"
        "    print(json.dumps({'name': 'evil\\x1b[2J\\nname', 'version': '1\\x1b]0;x\\x07'}))\n"
        "else:\n"
        "    print(decode(sys.stdin.buffer.read()).to_json())\n"
    )
    proc = _check("--cmd", f"{sys.executable} {adapter}", "--cases", "crafted/v2-appendix-a1@*")
    assert "\x1b" not in proc.stdout and "evil\\x1b[2J\\nname" in proc.stdout
