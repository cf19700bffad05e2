"""The nightly fuzzing workflow, checked by a real workflow linter (actionlint, built from the
Go module proxy by scripts/fetch-actionlint into .cache/tools/), and the tox env it runs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
NIGHTLY = WORKFLOWS / "nightly-fuzz.yml"


@pytest.fixture(scope="module")
def actionlint() -> str:
    if shutil.which("go") is None:
        pytest.fail("Go is needed to build actionlint (scripts/fetch-actionlint)")
    proc = subprocess.run(
        [str(ROOT / "scripts" / "fetch-actionlint")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _lint(actionlint: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [actionlint, "-no-color", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )


def test_workflows_pass_actionlint(actionlint: str) -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert NIGHTLY in files
    proc = _lint(actionlint, *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (('cron: "17 2 * * *"', 'cron: "61 2 * * *"'), "invalid CRON format"),
        (
            ("${{ inputs.fuzz_seconds || '600' }}", "${{ input.fuzz_seconds }}"),
            "undefined variable",
        ),
        (("if: always()", "if: always( "), "[expression]"),
    ],
)
def test_actionlint_catches_a_broken_workflow(
    actionlint: str, tmp_path: Path, broken: tuple[str, str], message: str
) -> None:
    text = NIGHTLY.read_text()
    assert broken[0] in text
    bad = tmp_path / ".github" / "workflows" / "nightly-fuzz.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(text.replace(broken[0], broken[1], 1))
    proc = subprocess.run(
        [actionlint, "-no-color", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout
    assert message.lower() in proc.stdout.lower(), proc.stdout


def test_nightly_workflow_runs_tox_fuzz_and_keeps_findings() -> None:
    text = NIGHTLY.read_text()
    assert "schedule:" in text and "- cron:" in text
    assert "run: .venv/bin/tox -e fuzz" in text
    upload = text[text.index("actions/upload-artifact") :]
    for path in (".cache/fuzz/findings", ".cache/fuzz/summary"):
        assert path in upload
    # artifacts and the known-findings cache also when the fuzz step failed
    assert text.count("if: always()") >= 3


def test_tox_fuzz_env_runs_every_command_and_fails_on_any() -> None:
    proc = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "tox"),
            "config",
            "-e",
            "fuzz",
            "-k",
            "ignore_errors",
            "commands",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    if proc.returncode != 0 and not (ROOT / ".venv" / "bin" / "tox").exists():
        pytest.fail("tox is installed by scripts/bootstrap")
    assert proc.returncode == 0, proc.stderr
    assert "ignore_errors = True" in proc.stdout
    assert "kafka-conformance fuzz all" in proc.stdout
