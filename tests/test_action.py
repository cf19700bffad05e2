"""The composite action (action.yml at the repository root), its steps run as the shell
scripts they are: each `run:` step with its `env:` and `working-directory:` filled from the
inputs as GitHub fills them, run as GitHub runs `shell: bash` (`bash --noprofile --norc -eo
pipefail FILE`), its `if:` decided as GitHub decides it (a failed step skips the steps after it
unless their condition says otherwise), `$GITHUB_ENV` and `$GITHUB_OUTPUT` read in GitHub's
file-command format and carried from step to step, `$RUNNER_TEMP` a directory of the test; the
`uses:` steps (setup-python, upload-artifact) are GitHub's own and checked for what they are
given. What a step prints is read for workflow commands as GitHub's runner reads them
(actions/runner `ActionCommand`: `::name::data` at a line's start, the legacy `##[name]data`
anywhere in a line, nothing between `::stop-commands::TOKEN` and `::TOKEN::`).

The kit is installed from the built wheels (the `kit` input), as a client library's CI installs
it from PyPI; the hostile-input tests put a recorder in the installed kit's place (the install
step skipped, its venv holding a `kafka-conformance` that writes down its argv), so they see the
exact command line the kit would get. actionlint checks the workflow that uses the action, and
the action's inputs with it (tests/test_workflows.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from wheelenv import Wheels, clean_env

from conformance.harness import cases as C
from conformance.harness.runner import select

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
#: stands in for the installed kit: writes down its argv, prints workflow commands of its own
#: (which GitHub must not act on) and exits with the status in the file `status` beside it
RECORDER = """#!{python}
import json, os, sys
from pathlib import Path
venv = Path(__file__).resolve().parent.parent
record = {{"argv": sys.argv[1:], "cwd": os.getcwd(),
          "root": os.environ.get("KAFKA_CONFORMANCE_ROOT")}}
(venv / "argv.json").write_text(json.dumps(record))
print("::error::printed by the kit")
print("an adapter's line with ##[error]legacy in it", file=sys.stderr)
status = venv / "status"
sys.exit(int(status.read_text()) if status.exists() else 0)
"""
#: hostile `args`: what a shell would run, and the words the kit must get instead (by hand)
HOSTILE_ARGS = (
    "--timeout 60 $(touch PWNED-1) `touch PWNED-2` ; touch PWNED-3\n"
    "touch PWNED-4 && touch PWNED-5 | touch PWNED-6 'a b' \"c $HOME d\" e\\ f ~ *"
)
HOSTILE_WORDS = [
    "--timeout", "60", "$(touch", "PWNED-1)", "`touch", "PWNED-2`", ";", "touch", "PWNED-3",
    "touch", "PWNED-4", "&&", "touch", "PWNED-5", "|", "touch", "PWNED-6",
    "a b", "c $HOME d", "e f", "~", "*",
]  # fmt: skip
#: the workflow commands GitHub's runner registers (actions/runner: its command extensions,
#: and stop-commands)
REGISTERED = {
    "set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher",
    "remove-matcher", "debug", "warning", "error", "notice", "group", "endgroup", "echo",
    "stop-commands",
}  # fmt: skip
#: the unescaping of a command's data: the `::` form, then the legacy `##[` form
_DATA = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_LEGACY = (("%3B", ";"), ("%0D", "\r"), ("%0A", "\n"), ("%5D", "]"), ("%25", "%"))


def _action() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(ACTION.read_text())
    assert doc["runs"]["using"] == "composite"
    return doc


def _unescape(data: str, mappings: tuple[tuple[str, str], ...]) -> str:
    for escaped, char in mappings:
        data = data.replace(escaped, char)
    return data


def _parse(line: str, registered: set[str]) -> tuple[str, str] | None:
    """The command a line is to GitHub's runner (``ActionCommand.TryParseV2``, then
    ``TryParse``), or None."""
    trimmed = line.lstrip()
    if trimmed.startswith("::") and (end := trimmed.find("::", 2)) >= 0:
        name = trimmed[2:end].split(" ", 1)[0]
        if name.lower() in registered:
            return name.lower(), _unescape(trimmed[end + 2 :], _DATA)
    if (start := line.find("##[")) >= 0 and (end := line.find("]", start)) >= 0:
        name = line[start + 3 : end].split(" ", 1)[0]
        if name.lower() in registered:
            return name.lower(), _unescape(line[end + 1 :], _LEGACY)
    return None


def workflow_commands(output: str) -> tuple[list[tuple[str, str]], bool]:
    """The workflow commands GitHub acts on in a step's output, in order, without the pausing
    ones (``stop-commands`` and its token); and whether the output left commands paused."""
    acted: list[tuple[str, str]] = []
    token: str | None = None
    for line in output.split("\n"):
        line = line.removesuffix("\r")
        if token is not None:
            if _parse(line, REGISTERED | {token}) == (token, ""):
                token = None
            continue
        command = _parse(line, REGISTERED)
        if command is None:
            continue
        if command[0] == "stop-commands":
            assert command[1], "an empty stop token (the runner refuses it)"
            token = command[1].lower()
        else:
            acted.append(command)
    return acted, token is not None


def _file_commands(text: str) -> dict[str, str]:
    """`$GITHUB_ENV` / `$GITHUB_OUTPUT` as the runner reads them: ``NAME=VALUE`` lines, and
    ``NAME<<DELIMITER`` ... ``DELIMITER`` for a value of any lines."""
    values: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        eq, heredoc = line.find("="), line.find("<<")
        if heredoc >= 0 and (eq < 0 or heredoc < eq):
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            value: list[str] = []
            for more in lines:
                if more == delimiter:
                    break
                value.append(more)
            else:
                raise AssertionError(f"{name}: no closing delimiter {delimiter!r}")
            values[name] = "\n".join(value)
        else:
            assert eq > 0, f"a line the runner cannot read: {line!r}"
            values[line[:eq]] = line[eq + 1 :]
    return values


_EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@dataclass
class Run:
    """One use of the action: the exit status of the first step that failed (0: none), the
    check step's outputs, each step's output (stdout and stderr as interleaved), the steps
    that ran, what upload-artifact was given (None: it did not run), the job's summary."""

    rc: int = 0
    outputs: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    uploaded: Path | None = None
    summary: str = ""
    outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str:
        return "\n".join(f"## {name}\n{text}" for name, text in self.logs.items())

    @property
    def commands(self) -> list[tuple[str, str]]:
        """The workflow commands GitHub acts on over every step (each step's output alone)."""
        acted: list[tuple[str, str]] = []
        for name, text in self.logs.items():
            commands, paused = workflow_commands(text)
            assert not paused, f"{name} left workflow commands paused"
            acted += commands
        return acted


#: each `if:` of the action and what GitHub decides for it. Without a status function
#: (always(), cancelled(), ...) GitHub adds success(): no step before it failed.
CONDITIONS: dict[str | None, Callable[[dict[str, str], Run], bool]] = {
    None: lambda inputs, run: run.rc == 0,
    "inputs.build != ''": lambda inputs, run: run.rc == 0 and inputs["build"] != "",
    "${{ !cancelled() && steps.install.outcome == 'success' }}": (
        lambda inputs, run: run.outcomes.get("install") == "success"
    ),
    "always() && steps.check.outputs.report-dir != ''": (
        lambda inputs, run: run.outputs.get("report-dir", "") != ""
    ),
}


class Runner:
    """GitHub's side of a composite action, for the `run:` steps."""

    def __init__(self, tmp: Path) -> None:
        self.temp = tmp / "runner-temp"
        self.workspace = tmp / "workspace"
        self.temp.mkdir()
        self.workspace.mkdir()

    def run(self, recorder: Path | None = None, **given: str) -> Run:
        """Run the action with inputs ``given`` (dashes as underscores). ``recorder``: a venv whose
        `bin/kafka-conformance` stands in for the installed kit (the install step skipped)."""
        doc = _action()
        inputs = {k: str(v.get("default", "")) for k, v in doc["inputs"].items()}
        inputs.update({k.replace("_", "-"): v for k, v in given.items()})
        assert set(inputs) == set(doc["inputs"]), set(inputs) ^ set(doc["inputs"])
        missing = [k for k, v in doc["inputs"].items() if v.get("required") and not inputs[k]]
        assert not missing, f"required inputs missing: {missing}"
        github_env = self.temp / "github-env"
        github_output, summary = self.temp / "github-output", self.temp / "step-summary"
        github_env.write_text("")
        summary.write_text("")
        run = Run()
        carried: dict[str, str] = {}

        def expr(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                e = m.group(1)
                if e.startswith("inputs."):
                    return inputs[e.removeprefix("inputs.")]
                if e == "runner.temp":
                    return str(self.temp)
                if (outcome := re.fullmatch(r"steps\.([\w-]+)\.outcome", e)) is not None:
                    return run.outcomes.get(outcome.group(1), "skipped")
                if e == "steps.check.outputs.report-dir":
                    return run.outputs.get("report-dir", "")
                raise AssertionError(f"an expression the test does not evaluate: {e}")

            return _EXPR.sub(one, text)

        for step in doc["runs"]["steps"]:
            cond = step.get("if")
            assert cond in CONDITIONS, f"a condition the test does not decide: {cond!r}"
            if not CONDITIONS[cond](inputs, run):
                if "id" in step:
                    run.outcomes[step["id"]] = "skipped"
                continue
            if "uses" in step:  # GitHub's own actions (checked below)
                if str(step["uses"]).startswith("actions/upload-artifact@"):
                    run.uploaded = Path(expr(step["with"]["path"]))
                continue
            if recorder is not None and step.get("id") == "install":
                carried["KAFKA_CONFORMANCE_VENV"] = str(recorder)
                run.outcomes["install"] = "success"
                continue
            assert "${{" not in step["run"], f"an expression inside the script of {step['name']}"
            github_output.write_text("")
            script = self.temp / "step.sh"
            script.write_text(step["run"])
            env = {
                **clean_env(),
                # actions/setup-python put a python3 >= 3.11 first on PATH
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "RUNNER_TEMP": str(self.temp),
                "GITHUB_ACTION_PATH": str(ROOT),
                "GITHUB_ENV": str(github_env),
                "GITHUB_OUTPUT": str(github_output),
                "GITHUB_STEP_SUMMARY": str(summary),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                **carried,
                **{k: expr(str(v)) for k, v in step.get("env", {}).items()},
            }
            cwd = self.workspace / expr(step.get("working-directory", "."))
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, timeout=1800,
            )  # fmt: skip
            run.logs[step["name"]] = proc.stdout
            # the runner reads the file commands also of a step that failed
            carried.update(_file_commands(github_env.read_text()))
            if "id" in step:
                run.outcomes[step["id"]] = "success" if proc.returncode == 0 else "failure"
                if step["id"] == "check":
                    run.outputs.update(_file_commands(github_output.read_text()))
            if proc.returncode != 0 and run.rc == 0:
                run.rc = proc.returncode
        run.summary = summary.read_text()
        return run


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


@pytest.mark.wheel
def test_the_action_passes_a_correct_decoder_and_writes_the_reports(
    runner: Runner, wheels: Wheels
) -> None:
    run = runner.run(**_inputs(runner, wheels, fault=False))
    assert run.rc == 0, run.log[-5000:]
    out = Path(run.outputs["report-dir"])
    assert {p.name for p in out.iterdir()} == {
        "report.html", "report.xml", "report.json", "summary.md", "build.log",
    }  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    n = len(select(C.read_cases(ROOT / "corpora"), list(CASES)))
    [impl] = report["implementations"]
    assert impl["counts"] == {"pass": n, "fail": 0, "unsupported": 0, "error": 0}
    assert report["corpus"]["source"] == "package"
    assert (runner.workspace / "adapter.py").is_file()  # the build step ran in the workspace
    assert run.uploaded == out
    assert run.summary == (out / "summary.md").read_text()
    assert run.summary.startswith("## kafka-conformance (decode): passed\n")
    assert run.commands == []  # the kit's output is never read as workflow commands


@pytest.mark.wheel
def test_the_action_fails_on_an_unexplained_divergence_and_keeps_the_reports(
    runner: Runner, wheels: Wheels
) -> None:
    run = runner.run(**_inputs(runner, wheels, fault=True))
    assert run.rc == 1, run.log[-5000:]
    assert run.uploaded == Path(run.outputs["report-dir"])
    report = json.loads((run.uploaded / "report.json").read_text())
    failed = {r["case"] for r in report["results"] if r["status"] == "fail"}
    assert failed and all(c.startswith("crafted/gzip-") for c in failed)
    assert run.summary.startswith("## kafka-conformance (decode): failed (exit status 1)\n")

    (runner.workspace / "known.toml").write_text(KNOWN)
    run = runner.run(**_inputs(runner, wheels, fault=True, known="known.toml"))
    # the known file explains them (the gating itself: tests/test_client_ci.py)
    assert run.rc == 0, run.log[-5000:]


# --- hostile inputs, the kit replaced by a recorder ------------------------------------------


@pytest.fixture
def recorder(tmp_path: Path) -> Path:
    venv = tmp_path / "kit-venv"
    (venv / "bin").mkdir(parents=True)
    kit = venv / "bin" / "kafka-conformance"
    kit.write_text(RECORDER.format(python=sys.executable))
    kit.chmod(0o755)
    return venv


def _recorded(venv: Path) -> dict[str, Any] | None:
    record = venv / "argv.json"
    return json.loads(record.read_text()) if record.exists() else None


def _reports(out: Path) -> list[str]:
    return [f"--json={out}/report.json", f"--junit={out}/report.xml", f"--html={out}/report.html"]


def _no_pwned(tmp_path: Path) -> None:
    assert not list(tmp_path.rglob("PWNED*")), list(tmp_path.rglob("PWNED*"))
    assert not list(ROOT.glob("PWNED*"))


def test_no_step_script_holds_an_expression() -> None:
    """Inputs reach the scripts only through `env:`: GitHub pastes `${{ }}` into the script
    text before bash reads it, so an input there would be code."""
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
            assert "eval" not in re.findall(r"[\w-]+", step["run"]), step["name"]


def test_hostile_inputs_reach_the_kit_as_data(tmp_path: Path, recorder: Path) -> None:
    runner = Runner(tmp_path)
    command = "./adapter --flag 'x y'\n::error::x\n##[warning]y"
    run = runner.run(
        recorder=recorder,
        command=command,
        # a build that makes the globs match, were they expanded
        build="mkdir -p conf crafted/v2-a 'my known' && touch conf/a.toml 'my known/k.toml'",
        known="my known/k.toml\n  conf/*.toml  \n\n",
        cases="crafted/v2-*  consume/*\n~",
        args=HOSTILE_ARGS,
    )
    assert run.rc == 0, run.log
    _no_pwned(tmp_path)
    out = Path(run.outputs["report-dir"])
    assert _recorded(recorder) == {
        "argv": [
            "check", f"--cmd={command}",
            "--known=my known/k.toml", "--known=conf/*.toml",
            "--cases=crafted/v2-*", "--cases=consume/*", "--cases=~",
            *HOSTILE_WORDS, *_reports(out),
        ],
        "cwd": str(runner.workspace),
        "root": None,
    }  # fmt: skip
    # neither the command echoed nor the kit's own `::error::` and `##[error]` lines
    assert run.commands == [], run.log
    # the command line echoed on one line, shell-quoted (newlines as $'\n')
    [running] = [x for x in run.logs["Run kafka-conformance"].split("\n") if "running:" in x]
    assert running.startswith("running: ") and running.endswith(f"--html={out}/report.html")
    assert "$'--cmd=./adapter --flag \\'x y\\'\\n::error::x\\n##[warning]y'" in running
    assert run.uploaded == out
    assert run.summary == (out / "summary.md").read_text()
    assert run.summary.startswith("## kafka-conformance (decode): passed\n")
    assert "\n::error::x" not in run.summary  # the command in <pre>, escaped and on one line


@pytest.mark.parametrize(
    ("side", "head", "glob"),
    [
        ("decode", ["check", "--cmd=CMD"], "--cases"),
        ("consume", ["check", "--side", "consume", "--cmd=CMD"], "--cases"),
        ("produce", ["check-producer", "--cmd=CMD"], "--scenarios"),
        ("broker", ["check-broker", "--bootstrap=CMD"], "--cases"),
    ],
)
def test_each_side_runs_its_command(
    tmp_path: Path, recorder: Path, side: str, head: list[str], glob: str
) -> None:
    runner = Runner(tmp_path)
    run = runner.run(recorder=recorder, side=side, command="CMD", cases="a-* b", args="-v")
    assert run.rc == 0, run.log
    record = _recorded(recorder)
    out = Path(run.outputs["report-dir"])
    assert record == {
        "argv": [*head, f"{glob}=a-*", f"{glob}=b", "-v", *_reports(out)],
        "cwd": str(runner.workspace),
        "root": None,  # every side runs from the installed kit, no checkout
    }
    assert "build.log" not in {p.name for p in out.iterdir()}  # no build input: no build


def test_an_unknown_side_is_an_escaped_error(tmp_path: Path, recorder: Path) -> None:
    side = "decoder\r\n::warning::w %0A ##[error]z"
    run = Runner(tmp_path).run(recorder=recorder, side=side, command="CMD")
    assert run.rc == 2, run.log
    # one command, whose message GitHub reads back exactly
    assert run.commands == [
        ("error", f"side must be decode, consume, produce or broker, not '{side}'")
    ]
    assert _recorded(recorder) is None


@pytest.mark.parametrize("args", ["--level 'java", '--timeout 30\n"--level java', "x\\"])
def test_an_args_input_that_is_not_shell_words_is_an_error(
    tmp_path: Path, recorder: Path, args: str
) -> None:
    run = Runner(tmp_path).run(recorder=recorder, command="CMD", args=f"$(touch PWNED) {args}")
    assert run.rc == 2, run.log
    [(name, message)] = run.commands
    assert name == "error"
    assert message.startswith("the args input is not a list of shell words (")
    assert message.endswith(f"): $(touch PWNED) {args}")  # the newline given back, escaped
    assert _recorded(recorder) is None
    _no_pwned(tmp_path)


def test_a_failed_build_fails_the_job_with_a_report_saying_so(
    tmp_path: Path, recorder: Path
) -> None:
    build = "echo compiling the adapter\necho 'adapter.go:3: </pre><b>syntax error' >&2\nexit 3"
    run = Runner(tmp_path).run(recorder=recorder, command="./adapter", build=build)
    assert run.rc == 3, run.log  # the build step's status: the job fails
    assert run.outcomes == {"install": "success", "build": "failure", "check": "failure"}
    assert _recorded(recorder) is None  # no case was run
    out = Path(run.outputs["report-dir"])
    assert run.uploaded == out
    assert {p.name for p in out.iterdir()} == {"build.log", "summary.md"}
    assert (out / "build.log").read_text() == (
        "compiling the adapter\nadapter.go:3: </pre><b>syntax error\n"
    )
    assert run.summary == (out / "summary.md").read_text()
    assert run.summary.startswith("## kafka-conformance (decode): the adapter's build failed\n")
    assert "adapter.go:3: &lt;/pre&gt;&lt;b&gt;syntax error" in run.summary
    assert "<b>" not in run.summary
    assert run.commands == [
        (
            "error",
            "the adapter's build failed, so no case was run: its output is build.log in the "
            f"report ({out})",
        )
    ]


def test_a_failing_check_still_uploads_its_reports(tmp_path: Path, recorder: Path) -> None:
    (recorder / "status").write_text("1")
    run = Runner(tmp_path).run(recorder=recorder, command="./adapter", build="true")
    assert run.rc == 1, run.log
    assert run.outcomes == {"install": "success", "build": "success", "check": "failure"}
    assert run.uploaded == Path(run.outputs["report-dir"])
    assert run.summary.startswith("## kafka-conformance (decode): failed (exit status 1)\n")


def test_the_reports_are_uploaded_also_after_a_failure() -> None:
    steps = _action()["runs"]["steps"]
    setup = [s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python@")]
    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert len(setup) == 1 and "inputs.python-version" in setup[0]["with"]["python-version"]
    [up] = upload
    assert up["if"].startswith("always()")
    assert up["with"]["path"] == "${{ steps.check.outputs.report-dir }}"
    assert steps.index(up) == len(steps) - 1
