"""A side added in the test suite alone runs through the CLI's reports.

The toy side "echo": each case is a few bytes that an adapter's ``echo`` command must print
back unchanged. It is one class against ``runner.Side`` plus ``runner.plug``: no module of the
kit knows it, yet ``check --side echo`` runs it with the run loop's jobs, timeouts, progress,
unsupported rule and known divergences, and writes every report (JSON, JUnit, HTML, Markdown),
which ``--from-json`` renders again.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.harness.process import ProcessTable, run_once
from conformance.harness.runner import (
    PLUGGED,
    CaseResult,
    Implementation,
    Job,
    Settings,
    Side,
    ask_capabilities,
    plug,
)
from conformance.jsondoc import read_json


@dataclass(frozen=True)
class EchoCase:
    id: str
    group: str
    data: bytes


@dataclass(frozen=True)
class EchoCapabilities:
    name: str
    #: the longest input the adapter takes (a longer case is unsupported)
    longest: int
    invalid: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "longest": self.longest}


CASES = [
    EchoCase("echo/empty", "echo", b""),
    EchoCase("echo/text", "echo", b"hello, kafka"),
    EchoCase("echo/binary", "echo", bytes(range(256))),
    EchoCase("echo/long", "long", b"x" * 5000),
]


class EchoSide(Side[EchoCase, EchoCapabilities]):
    name = "echo"

    def __init__(self, settings: Settings) -> None:
        self.settings, self.jobs = settings, settings.jobs

    def read_cases(self, corpora: Path) -> list[EchoCase]:
        return CASES

    def capabilities(
        self, impl: Implementation, table: ProcessTable
    ) -> tuple[EchoCapabilities, str | None]:
        text, problem = ask_capabilities(table, impl, self.settings.capabilities_timeout)
        doc = read_json(text or "{}")
        if not isinstance(doc.get("longest", 0), int):
            return EchoCapabilities(impl.name, 0, "capabilities: longest must be a number"), None
        return EchoCapabilities(str(doc.get("name", "")), int(doc.get("longest", 1 << 30))), problem

    def unsupported(self, case: EchoCase, caps: EchoCapabilities) -> str | None:
        if len(case.data) > caps.longest:
            return f"{len(case.data)} bytes, longer than the {caps.longest} declared"
        return None

    def run_case(
        self, env: Any, job: Job[EchoCase, EchoCapabilities], table: ProcessTable
    ) -> CaseResult:
        ex = run_once(
            table,
            [*job.impl.argv, "echo"],
            job.case.data,
            env=job.impl.env,
            timeout=self.settings.timeout,
            limit=self.settings.output_limit,
        )
        name, case = job.impl.name, job.case
        if ex.output is None:
            return CaseResult(name, case.id, case.group, "error", ex.problem or "no output")
        if ex.output != case.data:
            first = next(
                (i for i, (a, b) in enumerate(zip(ex.output, case.data)) if a != b),
                min(len(ex.output), len(case.data)),
            )
            want, got = case.data[first : first + 1].hex(), ex.output[first : first + 1].hex()
            line = f"$.bytes[{first}]: kafka={want} adapter={got}"
            return CaseResult(name, case.id, case.group, "fail", line, [line])
        return CaseResult(name, case.id, case.group, "pass", seconds=ex.seconds)

    def documents(self, cases: Sequence[EchoCase]) -> dict[str, dict[str, Any]]:
        return {
            c.id: {
                "group": c.group, "mode": "echo", "size": len(c.data), "path": "(test)",
                "description": f"{len(c.data)} bytes back", "outcome": "ok",
                "hex": c.data[:64].hex(), "hex_truncated": len(c.data) > 64,
            }
            for c in cases
        }  # fmt: skip

    def settings_doc(self) -> dict[str, Any]:
        return self.settings.to_dict()


@pytest.fixture
def echo_side() -> Iterator[None]:
    plug("echo", EchoSide)
    try:
        yield
    finally:
        PLUGGED.pop("echo", None)


ADAPTER = """\
import json, sys
if sys.argv[1] == "capabilities":
    print(json.dumps({"name": "toy-echo", "longest": 4096}))
    raise SystemExit
data = sys.stdin.buffer.read()
if sys.argv[1] == "echo":
    # the toy's bug: a byte 0x7f comes back as 0x3f
    sys.stdout.buffer.write(data.replace(b"\\x7f", b"?"))
"""


def test_a_side_plugged_in_the_tests_runs_through_every_report(
    tmp_path: Path, echo_side: None, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "echo.py"
    script.write_text(ADAPTER)
    out = {k: tmp_path / f"r.{k}" for k in ("json", "xml", "html", "md")}
    code = main(
        [
            "check", "--side", "echo", "--cmd", f"{sys.executable} {script}", "-q",
            "--json", str(out["json"]), "--junit", str(out["xml"]),
            "--html", str(out["html"]), "--markdown", str(out["md"]),
        ]
    )  # fmt: skip
    assert code == 1  # the one byte it changes is an unexplained failure
    report = json.loads(out["json"].read_text())
    assert report["side"] == "echo"
    (impl,) = report["implementations"]
    assert impl["name"] == "toy-echo"  # the name the adapter declares
    assert impl["counts"] == {"pass": 2, "fail": 1, "unsupported": 1, "error": 0}
    by_case = {r["case"]: r for r in report["results"]}
    assert by_case["echo/binary"]["status"] == "fail"
    assert by_case["echo/binary"]["reason"] == "$.bytes[127]: kafka=7f adapter=3f"
    assert by_case["echo/long"]["reason"] == "5000 bytes, longer than the 4096 declared"
    assert ["longest", "4096"] in impl["columns"]
    cases = ET.parse(out["xml"]).getroot().iter("testcase")
    assert sum(1 for c in cases if c.find("failure") is not None) == 1
    assert "echo/binary" in out["html"].read_text() and "toy-echo" in out["md"].read_text()
    capsys.readouterr()
    (tmp_path / "again").mkdir()
    again = tmp_path / "again" / "r.md"
    assert main(["check", "--side", "echo", "--from-json", str(out["json"]), "--markdown",
                 str(again), "--html", str(again.with_suffix(".html"))]) == 0  # fmt: skip
    assert again.read_text() == out["md"].read_text()


def test_a_known_divergence_of_a_plugged_side_explains_its_failure(
    tmp_path: Path, echo_side: None
) -> None:
    script = tmp_path / "echo.py"
    script.write_text(ADAPTER)
    known = tmp_path / "known.toml"
    known.write_text(
        '[[divergence]]\nimpl = "toy-echo"\ncases = ["echo/binary"]\nclass = "real-bug"\n'
        'summary = "0x7f comes back as ?"\n'
    )
    out = tmp_path / "r.json"
    argv = ["check", "--side", "echo", "--cmd", f"{sys.executable} {script}", "-q"]
    assert main([*argv, "--known", str(known), "--json", str(out)]) == 0
    (result,) = [r for r in json.loads(out.read_text())["results"] if r["case"] == "echo/binary"]
    assert result["divergence"] == 0
