"""The composite action (action.yml at the repository root), its steps run as the shell
scripts they are: each `run:` step with its `env:` and `working-directory:` filled from the
inputs as GitHub fills them, `$GITHUB_ENV` and `$GITHUB_OUTPUT` carried from step to step,
`$RUNNER_TEMP` a directory of the test; the `uses:` steps (setup-python, upload-artifact) are
GitHub's own and checked for what they are given. The kit is installed from the built wheels
(the `kit` input), as a client library's CI installs it from PyPI. actionlint checks the
workflow that uses the action, and the action's inputs with it (tests/test_workflows.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from wheelenv import Wheels, clean_env

from conformance.harness import cases as C

pytestmark = pytest.mark.wheel

ACTION = ROOT / "action.yml"
CASES = ("crafted/v2-*", "crafted/gzip-*")
#: the five-line adapter of docs/adapter-protocol.md, written by the action's build step
ADAPTER = """import sys
from conformance import decode
if sys.argv[1:2] != ["decode"]:
    sys.exit(2)
doc = decode(sys.stdin.buffer.read(), mode=sys.argv[sys.argv.index("--as") + 1]).to_dict()
for batch in doc["batches"]:
    if FAULT and batch["compression"] == "gzip" and batch["records"]:
        batch["records"].pop()
print(__import__("json").dumps(doc))
"""
KNOWN = """
[[divergence]]
impl = "adapter.py"
cases = ["crafted/gzip-*"]
class = "real-bug"
summary = "loses the last record of a gzip batch"
lines = ["$.batches*.records*"]
"""


def _action() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(ACTION.read_text())
    assert doc["runs"]["using"] == "composite"
    return doc


_EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


class Runner:
    """GitHub's side of a composite action, for the `run:` steps."""

    def __init__(self, tmp: Path) -> None:
        self.temp = tmp / "runner-temp"
        self.workspace = tmp / "workspace"
        self.temp.mkdir()
        self.workspace.mkdir()

    def run(self, **given: str) -> tuple[int, dict[str, str], str]:
        """Run the action with inputs ``given`` (dashes as underscores): the exit status of
        the step that failed (0: none), the outputs of the steps, and their output."""
        doc = _action()
        inputs = {k: str(v.get("default", "")) for k, v in doc["inputs"].items()}
        inputs.update({k.replace("_", "-"): v for k, v in given.items()})
        assert set(inputs) == set(doc["inputs"]), set(inputs) ^ set(doc["inputs"])
        missing = [k for k, v in doc["inputs"].items() if v.get("required") and not inputs[k]]
        assert not missing, f"required inputs missing: {missing}"
        github_env, github_output = self.temp / "github-env", self.temp / "github-output"
        github_env.write_text("")
        outputs: dict[str, str] = {}
        carried: dict[str, str] = {}
        log: list[str] = []

        def expr(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                e = m.group(1)
                if e.startswith("inputs."):
                    return inputs[e.removeprefix("inputs.")]
                if e == "runner.temp":
                    return str(self.temp)
                raise AssertionError(f"an expression the test does not evaluate: {e}")

            return _EXPR.sub(one, text)

        for step in doc["runs"]["steps"]:
            if "uses" in step:
                continue  # GitHub's own actions (checked below)
            cond = step.get("if")
            if cond is not None:
                assert cond == "inputs.build != ''", cond  # the one condition of a run step
                if not inputs["build"]:
                    continue
            github_output.write_text("")
            env = {
                **clean_env(),
                # actions/setup-python put a python3 >= 3.11 first on PATH
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "RUNNER_TEMP": str(self.temp),
                "GITHUB_ACTION_PATH": str(ROOT),
                "GITHUB_ENV": str(github_env),
                "GITHUB_OUTPUT": str(github_output),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                **carried,
                **{k: expr(str(v)) for k, v in step.get("env", {}).items()},
            }
            cwd = self.workspace / expr(step.get("working-directory", "."))
            proc = subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                cwd=cwd, env=env, capture_output=True, text=True, timeout=1800,
            )  # fmt: skip
            log.append(f"## {step.get('name')}\n{proc.stdout}{proc.stderr}")
            carried.update(_pairs(github_env.read_text()))
            if "id" in step:
                outputs.update(_pairs(github_output.read_text()))
            if proc.returncode != 0:
                return proc.returncode, outputs, "\n".join(log)
        return 0, outputs, "\n".join(log)


def _pairs(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(tmp_path_factory.mktemp("action"))


def _inputs(runner: Runner, wheels: Wheels, fault: bool, **more: str) -> dict[str, str]:
    adapter = ADAPTER.replace("FAULT", str(fault))
    return {
        "kit": f"{wheels.kit} {wheels.corpora}",
        "build": f"cat > adapter.py <<'EOF'\n{adapter}EOF",
        "command": f"{runner.temp}/kafka-conformance-venv/bin/python adapter.py",
        "cases": "\n".join(CASES),
        "args": "--timeout 60 --jobs 2",
        **more,
    }


def test_the_action_passes_a_correct_decoder_and_writes_the_reports(
    runner: Runner, wheels: Wheels
) -> None:
    rc, outputs, log = runner.run(**_inputs(runner, wheels, fault=False))
    assert rc == 0, log[-5000:]
    out = Path(outputs["report-dir"])
    assert {p.name for p in out.iterdir()} == {"report.html", "report.xml", "report.json"}
    report = json.loads((out / "report.json").read_text())
    n = len(C.select(C.read_cases(ROOT / "corpora"), list(CASES)))
    [impl] = report["implementations"]
    assert impl["counts"] == {"pass": n, "fail": 0, "unsupported": 0, "error": 0}
    assert report["corpus"]["source"] == "package"
    assert (runner.workspace / "adapter.py").is_file()  # the build step ran in the workspace


def test_the_action_fails_on_an_unexplained_divergence_and_keeps_the_reports(
    runner: Runner, wheels: Wheels
) -> None:
    rc, outputs, log = runner.run(**_inputs(runner, wheels, fault=True))
    assert rc == 1, log[-5000:]
    report = json.loads((Path(outputs["report-dir"]) / "report.json").read_text())
    failed = {r["case"] for r in report["results"] if r["status"] == "fail"}
    assert failed and all(c.startswith("crafted/gzip-") for c in failed)

    (runner.workspace / "known.toml").write_text(KNOWN)
    rc, outputs, log = runner.run(**_inputs(runner, wheels, fault=True, known="known.toml"))
    assert rc == 0, log[-5000:]  # the known file (the gating itself: tests/test_client_ci.py)


def test_an_unknown_side_is_an_error(runner: Runner, wheels: Wheels) -> None:
    rc, _, log = runner.run(**_inputs(runner, wheels, fault=False, side="decoder"))
    assert rc == 2 and "::error::side must be" in log


def test_the_reports_are_uploaded_also_after_a_failure() -> None:
    steps = _action()["runs"]["steps"]
    setup = [s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python@")]
    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert len(setup) == 1 and "inputs.python-version" in setup[0]["with"]["python-version"]
    [up] = upload
    assert up["if"].startswith("always()")
    assert up["with"]["path"] == "${{ steps.check.outputs.report-dir }}"
    assert steps.index(up) == len(steps) - 1
