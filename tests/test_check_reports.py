"""One report pipeline for every side of ``check`` and ``check-producer``
(``harness.report.model``, ``harness.divergences``, ``cli/check_common.py``):

* a report says what it judged (``decode``, ``consume``, both, ``producer``);
* a run lists only the known divergences of the implementations it ran (a ``--cmd`` run is not
  told about every built-in library's);
* an entry that explained a line of a result is in use (not stale) even when another line of
  that result is unexplained; the result then fails and names the lines no entry explains;
* producer-side entries must name their lines;
* ``check --side consume --list`` lists consumers; an adapter's name reaches the terminal
  escaped, in the progress lines too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, kit_cli

from conformance.harness import divergences as dv
from conformance.harness.judge import Capabilities
from conformance.harness.report import model
from conformance.harness.runner import CaseResult, Implementation, ImplementationRun, Settings

REFERENCE = [sys.executable, str(ROOT / "tests" / "adapters" / "reference.py")]


def _run(name: str, side: str, results: list[CaseResult]) -> ImplementationRun:
    return ImplementationRun(
        Implementation(name, ("x",)), Capabilities(name=name), None, results, 1.0, side=side
    )


def _entry(impl: str, lines: tuple[str, ...], summary: str = "s") -> dv.Divergence:
    return dv.Divergence(impl, ("*",), "leniency", summary, "", "test.toml", lines)


def _report(runs: list[ImplementationRun], known: list[dv.Divergence]) -> dict[str, Any]:
    cases = {r.case: {"group": r.group} for run in runs for r in run.results}
    return model.build(runs, cases, Settings().to_dict(), known, complete=True)


def test_a_report_says_which_side_it_judged() -> None:
    decode = _run("a", "decode", [CaseResult("a", "c1", "g", "pass")])
    consume = _run("a consumer", "consume", [CaseResult("a consumer", "c2", "consume", "pass")])
    producer = _run("p", "produce", [CaseResult("p", "c3", "g", "pass", level="java")])
    assert _report([consume], [])["side"] == "consume"
    assert _report([decode], [])["side"] == "decode"
    assert _report([decode, consume], [])["side"] == "decode+consume"
    report = _report([producer], [])
    assert report["side"] == "produce"
    (impl,) = report["implementations"]
    assert impl["levels"] == {"none": 0, "delivery": 0, "wire": 0, "java": 1}


def test_only_the_divergences_of_the_implementations_that_ran() -> None:
    run = _run("mine", "decode", [CaseResult("mine", "c1", "g", "pass")])
    report = _report([run], [_entry("mine", ()), _entry("a-builtin", ())])
    assert [d["impl"] for d in report["divergences"]] == ["mine"]


def test_an_entry_that_explains_a_line_is_in_use_though_another_line_is_new() -> None:
    lines = ["maxTimestamp -1, expected 5 (at batch 0)", "plan record 7 never read back"]
    run = _run("p", "produce", [CaseResult("p", "c1", "g", "fail", lines[0], lines)])
    report = _report([run], [_entry("p", ("maxTimestamp *",))])
    (result,) = report["results"]
    assert result["divergence"] is None  # not known: a line is unexplained
    assert result["unexplained"] == ["plan record 7 never read back"]
    assert report["divergences"][0]["count"] == 1 and report["stale"] == []
    assert model.unknown_problems(report) == [result]
    # with an entry for the other line too, the result is known
    both = _report([run], [_entry("p", ("maxTimestamp *",)), _entry("p", ("plan record *",))])
    assert both["results"][0]["divergences"] == [0, 1] and "unexplained" not in both["results"][0]


def test_a_gathering_results_lines_are_explained_by_their_own_cases_entries() -> None:
    """A line of a result that gathers other cases (``versions/produce-cases``) names its case
    (``scoped``): only that case's entries explain it, so an entry for one case cannot hide a
    new difference of another."""
    line = "errorCode: kafka=87 target=2"
    entry = dv.Divergence("b", ("req/req-a",), "real-bug", "s", "", "t.toml", ("*kafka=87*",))
    gathered = [dv.scoped("req/req-a", "Produce v3", line)]
    other = [dv.scoped("req/req-b", "Produce v3", line)]
    assert dv.explain([entry], "b", "versions/produce-cases", gathered)[2] == []
    assert dv.explain([entry], "b", "versions/produce-cases", other)[2] == other
    # a line that only looks scoped (no case id before " at ") is a line like any other
    plain = ["rewrite at offset 3: errorCode: kafka=87 target=2"]
    assert dv.explain([entry], "b", "versions/produce-cases", plain)[2] == plain


def test_an_entry_that_explains_nothing_is_stale() -> None:
    run = _run("p", "produce", [CaseResult("p", "c1", "g", "fail", "x", ["other"])])
    report = _report([run], [_entry("p", ("maxTimestamp *",))])
    assert report["stale"] == [0]


def test_producer_entries_must_name_their_lines(tmp_path: Path) -> None:
    f = tmp_path / "known.toml"
    f.write_text('[[divergence]]\nimpl = "x"\ncases = ["*"]\nclass = "leniency"\nsummary = "s"\n')
    assert dv.read_divergences([f])[0].lines == ()  # the decode side allows whole cases
    with pytest.raises(dv.DivergenceError, match="lines must name the diff lines"):
        dv.read_divergences([f], require_lines=True)
    proc = kit_cli("check-producer", "--cmd", "true", "--known", str(f), "--scenarios", "encode-*")
    assert proc.returncode == 2 and "lines must name the diff lines" in proc.stderr


def test_list_of_the_consume_side_lists_consumers() -> None:
    proc = kit_cli("check", "--side", "consume", "--list")
    assert proc.returncode == 0, proc.stderr
    sides = {line.split()[0]: line for line in proc.stdout.splitlines()[2:]}
    assert "librdkafka" in sides  # a consumer without a decoder
    assert "kit-native" not in sides  # a decoder without a consumer
    assert all(" consume " in line for line in sides.values())
    both = kit_cli("check", "--list")
    assert "kit-native" in both.stdout and "librdkafka" in both.stdout


def test_a_cmd_run_reports_its_side_and_no_builtin_divergences(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = kit_cli(
        "check", "--cmd", " ".join(REFERENCE), "--cases", "crafted/v2-crc-*", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["side"] == "decode"
    assert report["divergences"] == []
    (impl,) = report["implementations"]
    assert impl["side"] == "decode"


def test_an_adapter_name_reaches_the_progress_lines_escaped(tmp_path: Path) -> None:
    """The progress display prints the name the adapter declares: escaped, as the table."""
    adapter = tmp_path / "evil.py"
    adapter.write_text(
        "import json, sys\n"
        "from conformance import decode\n"
        "if sys.argv[1] == 'capabilities':\n"
        "    print(json.dumps({'name': 'evil\\x1b[2J\\x1b]0;owned\\x07'}))\n"
        "else:\n"
        "    mode = sys.argv[sys.argv.index('--as') + 1]\n"
        "    print(decode(sys.stdin.buffer.read(), mode=mode).to_json())\n"
    )
    proc = kit_cli("check", "--cmd", f"{sys.executable} {adapter}", "--cases", "crafted/v2-crc-*")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr and "\x1b" not in proc.stdout
    assert "\x07" not in proc.stderr
    assert "evil" in proc.stderr  # the progress line is there, escaped
