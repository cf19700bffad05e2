"""The GitHub Actions workflows, checked by a real workflow linter (actionlint, built from the
Go module proxy by scripts/fetch-actionlint into .cache/tools/): the nightly fuzzing workflow
and the tox env it runs, and the release workflow (native wheels through maturin, both sdists,
a smoke test, PyPI publishing on tags), whose structure is read with PyYAML."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
NIGHTLY = WORKFLOWS / "nightly-fuzz.yml"
RELEASE = WORKFLOWS / "release.yml"
#: the repository's own action (action.yml) used by a workflow: actionlint checks its inputs
SELFTEST = WORKFLOWS / "action-selftest.yml"
MATURIN = "PyO3/maturin-action@"
PUBLISH = "pypa/gh-action-pypi-publish@"


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


@pytest.mark.parametrize("workflow", [NIGHTLY, RELEASE, SELFTEST], ids=lambda p: p.name)
def test_workflow_passes_actionlint(actionlint: str, workflow: Path) -> None:
    assert workflow.is_file(), workflow
    proc = _lint(actionlint, workflow)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("workflow", "broken", "message"),
    [
        (NIGHTLY, ('cron: "17 2 * * *"', 'cron: "61 2 * * *"'), "invalid CRON format"),
        (
            NIGHTLY,
            ("${{ inputs.fuzz_seconds || '600' }}", "${{ input.fuzz_seconds }}"),
            "undefined variable",
        ),
        (NIGHTLY, ("if: always()", "if: always( "), "[expression]"),
        # GitHub retired the macos-13 image; actionlint knows the hosted runner labels
        (RELEASE, ("runner: macos-15-intel", "runner: macos-13"), '"macos-13" is unknown'),
        (RELEASE, ("${{ matrix.target }}", "${{ matrix.arch }}"), 'property "arch" is not defined'),
        # the action's own inputs (action.yml), read through `uses: ./`
        (SELFTEST, ("          side: decode", "          sides: decode"), 'input "sides" is not'),
        (SELFTEST, ("          command: ", "          commands: "), 'missing input "command"'),
    ],
    ids=[
        "nightly-cron",
        "nightly-input",
        "nightly-expression",
        "release-runner",
        "release-matrix",
        "action-input",
        "action-required",
    ],  # fmt: skip
)
def test_actionlint_catches_a_broken_workflow(
    actionlint: str, tmp_path: Path, workflow: Path, broken: tuple[str, str], message: str
) -> None:
    text = workflow.read_text()
    assert broken[0] in text
    bad = tmp_path / ".github" / "workflows" / workflow.name
    bad.parent.mkdir(parents=True)
    bad.write_text(text.replace(broken[0], broken[1], 1))
    # a repository (actionlint finds local actions from its root) holding the action
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    shutil.copyfile(ROOT / "action.yml", tmp_path / "action.yml")
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


def test_nightly_workflow_fuzzes_every_built_in_decoder_and_keeps_its_findings() -> None:
    """Decoders, then consumers (also when the decoders' step failed), both kept."""
    text = NIGHTLY.read_text()
    job = text[text.index("\n  against:") :]
    assert "run: .venv/bin/tox -e fuzz-against\n" in job
    consume = job[job.index("run: .venv/bin/tox -e fuzz-against\n") :]
    assert "if: always()\n        run: .venv/bin/tox -e fuzz-against-consume" in consume
    upload = job[job.index("actions/upload-artifact") :]
    assert "path: .cache/fuzz/against" in upload and "if: always()" in job
    for tool in ("setup-java", "setup-go", "setup-node"):  # the built-in adapters' builds
        assert f"actions/{tool}@" in job
    proc = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tox"), "config", "-e", "fuzz-against", "-k", "commands"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fuzz --against all" in proc.stdout and ".cache/fuzz/against/report.html" in proc.stdout
    proc = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tox"), "config", "-e", "fuzz-against-consume", "-k",
         "commands"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "--side consume" in proc.stdout and ".cache/fuzz/against/consume/" in proc.stdout


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


# --- the release workflow's structure ---------------------------------------------------------


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    try:
        import yaml
    except ImportError:
        pytest.fail("PyYAML is needed to read the release workflow (pip install pyyaml)")
    doc = yaml.safe_load(RELEASE.read_text())
    assert isinstance(doc, dict), doc
    return doc


def _matrix_entries(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The job's matrix combinations (``include`` entries only), or one empty entry."""
    matrix = job.get("strategy", {}).get("matrix", {})
    return list(matrix.get("include", [])) or [{}]


def _resolve(value: Any, entry: dict[str, Any]) -> Any:
    """``value`` with each ``${{ matrix.KEY }}`` replaced by the entry's KEY."""
    if not isinstance(value, str):
        return value
    return re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(entry[m.group(1)]), value)


def _steps(job: dict[str, Any], uses: str) -> list[dict[str, Any]]:
    return [s for s in job.get("steps", []) if str(s.get("uses", "")).startswith(uses)]


def _jobs_using(release: dict[str, Any], uses: str) -> dict[str, dict[str, Any]]:
    return {name: job for name, job in release["jobs"].items() if _steps(job, uses)}


def _maturin_jobs(release: dict[str, Any], command: str) -> dict[str, dict[str, Any]]:
    """The jobs whose maturin step runs ``command`` (the action's default is build)."""
    return {
        name: job
        for name, job in _jobs_using(release, MATURIN).items()
        if any(s.get("with", {}).get("command", "build") == command for s in _steps(job, MATURIN))
    }


def _built_platforms(release: dict[str, Any]) -> set[tuple[str, str]]:
    """(runner, target) of every native wheel the workflow builds."""
    built = set()
    for job in _maturin_jobs(release, "build").values():
        for entry in _matrix_entries(job):
            for step in _steps(job, MATURIN):
                built.add(
                    (_resolve(job["runs-on"], entry), _resolve(step["with"]["target"], entry))
                )
    return built


def _uploads(release: dict[str, Any]) -> dict[str, list[str]]:
    """Artifact name -> the jobs (per matrix combination) that upload it."""
    names: dict[str, list[str]] = {}
    for name, job in release["jobs"].items():
        for entry in _matrix_entries(job):
            for step in _steps(job, "actions/upload-artifact@"):
                names.setdefault(_resolve(step["with"]["name"], entry), []).append(name)
    return names


def test_release_runs_on_version_tags_and_on_demand(release: dict[str, Any]) -> None:
    # YAML 1.1 (PyYAML) reads the key `on` as True
    triggers = release.get("on", release.get(True))
    assert triggers["push"]["tags"] == ["v*"]
    assert "workflow_dispatch" in triggers
    assert release["permissions"] == {"contents": "read"}


def test_release_builds_native_wheels_for_linux_and_macos(release: dict[str, Any]) -> None:
    built = _built_platforms(release)
    assert ("ubuntu-latest", "x86_64") in built, built
    assert ("ubuntu-latest", "aarch64") in built, built
    macos = {target for runner, target in built if runner.startswith("macos-")}
    assert macos >= {"x86_64", "aarch64"}, built
    for job in _maturin_jobs(release, "build").values():
        for step in _steps(job, MATURIN):
            assert step["uses"] == "PyO3/maturin-action@v1"
            assert step["with"]["working-directory"] == "native"
            assert step["with"]["args"] == "--release --out dist"
            # Linux wheels in the action's manylinux docker (the aarch64 one cross-built there)
            assert step["with"]["manylinux"] == "auto"


def test_release_builds_the_native_sdist_and_the_pure_main_dists(release: dict[str, Any]) -> None:
    sdist_jobs = _maturin_jobs(release, "sdist")
    assert sdist_jobs, "no `maturin sdist` job"
    for job in sdist_jobs.values():
        for step in _steps(job, MATURIN):
            assert step["with"]["working-directory"] == "native"
    main = [
        step
        for job in release["jobs"].values()
        for step in job.get("steps", [])
        if "python -m build" in step.get("run", "")
    ]
    assert main, "no `python -m build` step for the main package"
    # at the repository root, not in native/
    assert all("working-directory" not in step for step in main)
    # the corpora's wheel beside it, in the same job (published with the kit, same version)
    [job] = [j for j in release["jobs"].values() if main[0] in j.get("steps", [])]
    assert any("scripts/build-corpora-package --out dist" in s.get("run", "") for s in job["steps"])
    uploads = _uploads(release)
    assert all(len(jobs) == 1 for jobs in uploads.values()), uploads
    # one artifact per wheel, the native sdist, the main dists
    assert len(uploads) >= len(_built_platforms(release)) + 2, uploads


def test_release_smoke_tests_the_linux_x86_64_wheel_native_and_pure(
    release: dict[str, Any],
) -> None:
    (wheels_job,) = _maturin_jobs(release, "build")
    linux_x86_64 = {
        _resolve(step["with"]["name"], entry)
        for entry in _matrix_entries(release["jobs"][wheels_job])
        for step in _steps(release["jobs"][wheels_job], "actions/upload-artifact@")
        if _resolve(release["jobs"][wheels_job]["runs-on"], entry) == "ubuntu-latest"
        and entry.get("target") == "x86_64"
    }
    assert len(linux_x86_64) == 1, linux_x86_64
    smoke = [
        job
        for job in release["jobs"].values()
        if any(
            step.get("with", {}).get("name") in linux_x86_64
            for step in _steps(job, "actions/download-artifact@")
        )
    ]
    assert len(smoke) == 1, "no job downloads the Linux x86_64 wheel"
    (job,) = smoke
    assert wheels_job in job["needs"]
    pythons = [s["with"]["python-version"] for s in _steps(job, "actions/setup-python@")]
    assert pythons == ["3.11"]
    runs = [(s.get("env", {}), s.get("run", "")) for s in job["steps"]]
    assert any(
        "KAFKA_CONFORMANCE_PURE" not in env and "assert native.NATIVE is not None" in run
        for env, run in runs
    )
    assert any(
        env.get("KAFKA_CONFORMANCE_PURE") == "1" and "assert native.NATIVE is None" in run
        for env, run in runs
    )


def test_release_publishes_only_tags_after_every_build(release: dict[str, Any]) -> None:
    publishers = _jobs_using(release, PUBLISH)
    assert len(publishers) == 1, publishers
    ((name, job),) = publishers.items()
    condition = job["if"].replace("${{", "").replace("}}", "").strip()
    assert condition == "startsWith(github.ref, 'refs/tags/v')"
    assert job["environment"] in ("pypi", {"name": "pypi"})
    assert job["permissions"] == {"id-token": "write"}
    builders = {
        n for n, j in release["jobs"].items() if n != name and _steps(j, "actions/upload-artifact@")
    }
    assert builders >= set(_maturin_jobs(release, "build")) | set(_maturin_jobs(release, "sdist"))
    assert len(builders) >= 3, builders  # native wheels, native sdist, main dists
    assert set(job["needs"]) >= builders, (job["needs"], builders)
    (download,) = _steps(job, "actions/download-artifact@")
    assert download["with"]["merge-multiple"] is True
    assert download["with"]["path"] == "dist"
    assert "name" not in download["with"]  # every artifact
