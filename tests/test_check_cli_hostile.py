"""``check`` and ``check-producer`` against hostile operators and inputs (issue 40, 9-12).

* SIGTERM and Ctrl-C unwind ``check-producer`` as they do ``check``: exit 143 / 130, every
  adapter process (and what it spawned), the broker and the run's temporary directory gone;
* ``--keep DIR`` names each implementation's directory safely, whatever name it declares
  (a path, ``..``, control characters): nothing is written outside DIR, distinct names stay
  distinct, and the run completes;
* ``--impl ''`` (an empty CI variable) is a usage error, never a vacuous pass;
* ``--from-json`` on a document that is not a well-formed report exits 2 with the reason,
  never with a traceback (every report view is safe on whatever the validation accepts).
"""

from __future__ import annotations

import copy
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, processes, wait_until_gone

from conformance.cli import build_parser
from conformance.cli import check_common as shared
from conformance.harness.judge import Capabilities
from conformance.harness.report import model
from conformance.harness.runner import CaseResult, Implementation, ImplementationRun, Settings
from conformance.producer_check.run import ProducerCapabilities

CLI = [sys.executable, "-m", "conformance.cli"]
PARSER = build_parser()


def cli_main(argv: list[str]) -> int:
    """``kafka-conformance ARGV`` in this process (the parser made once)."""
    args = PARSER.parse_args(argv)
    return int(args.func(args))


#: a producer/encoder adapter: ``capabilities`` declares argv[1] as its name (none if it is
#: "-"); ``encode`` prints bytes that are no batch, unless argv[2] is "hang": then it starts a
#: child and both sleep (each command line names the test's directory, to be found)
ADAPTER = """\
import json, subprocess, sys, time
name, mode, command = sys.argv[1], sys.argv[2], sys.argv[3:]
if command[:1] == ["capabilities"]:
    doc = {"version": "0", "produce": {}, "encode": {}}
    if name != "-":
        doc["name"] = name
    print(json.dumps(doc))
    sys.exit(0)
if mode == "hang":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", TAG])
    time.sleep(3600)
sys.stdout.buffer.write(b"not a batch")
"""


def _adapter(tmp_path: Path) -> Path:
    script = tmp_path / "adapter.py"
    script.write_text(f"#!{sys.executable}\nTAG = {str(tmp_path)!r}\n" + ADAPTER, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _env(tmp: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)}
    if tmp is not None:  # where the run's temporary directory goes (``tempfile``)
        env["TMPDIR"] = str(tmp)
    return env


def _run(*args: str, tmp: Path | None = None, timeout: float = 300) -> tuple[int, str, str]:
    proc = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, cwd=ROOT, env=_env(tmp), timeout=timeout
    )
    return proc.returncode, proc.stdout, proc.stderr


def _mine(tmp_path: Path) -> dict[int, str]:
    """The processes of this test: the adapters, their children, the broker (its files are
    in the run's temporary directory, under ``tmp_path``)."""
    return processes((str(tmp_path),))


# ------------------------------------------------------------------ 9. SIGTERM and Ctrl-C


def _interrupt(tmp_path: Path, sig: int, scenario: str, wait: float) -> tuple[int, str]:
    """Run ``check-producer`` with two hanging adapters on ``scenario``, send ``sig`` once
    both and their children run; (exit code, stderr)."""
    script = _adapter(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    args = ["check-producer", "-q", "--timeout", "900", "--jobs", "2", "--scenarios", scenario]
    for name in ("hang-a", "hang-b"):
        args += ["--cmd", f"{sys.executable} {script} {name} hang"]
    proc = subprocess.Popen(
        [*CLI, *args],
        cwd=ROOT,
        env=_env(tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + wait
        hanging = [c for c in _mine(tmp_path).values() if "time.sleep(3600)" in c]
        while len(hanging) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            hanging = [c for c in _mine(tmp_path).values() if "time.sleep(3600)" in c]
        assert len(hanging) >= 2, (proc.poll(), _mine(tmp_path))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=150)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, err


def _left_behind(tmp_path: Path) -> tuple[dict[int, str], list[str]]:
    left = wait_until_gone((str(tmp_path),), seconds=10)
    for pid in left:  # not to leak them into the next tests, whatever the verdict
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left, sorted(p.name for p in (tmp_path / "tmp").iterdir())


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_encode_run_leaves_nothing(tmp_path: Path, sig: int, code: int) -> None:
    """No broker: the adapters hang in ``encode``; the run stops at once, every adapter and
    its child killed, the temporary directory removed."""
    started = time.monotonic()
    rc, err = _interrupt(tmp_path, sig, "encode-codec-none", wait=60)
    assert rc == code, err[-3000:]
    assert "interrupted" in err and "Traceback" not in err, err[-3000:]
    assert time.monotonic() - started < 100
    assert _left_behind(tmp_path) == ({}, [])


def test_sigterm_on_a_broker_stops_the_broker_too(tmp_path: Path) -> None:
    """The adapters hang in ``produce`` against the broker the run started: SIGTERM stops
    them, the proxy and the broker, and removes the run's directory (the broker's data)."""
    rc, err = _interrupt(tmp_path, signal.SIGTERM, "codec-none", wait=240)
    assert rc == 143, err[-3000:]
    assert "interrupted" in err and "Traceback" not in err, err[-3000:]
    assert _left_behind(tmp_path) == ({}, [])


def test_interrupted_maps_to_the_exit_code_of_its_signal() -> None:
    assert (shared.EXIT_INTERRUPTED, shared.EXIT_TERMINATED) == (130, 143)


# ------------------------------------------------------------------------ 10. --keep names


def keep_name(name: str) -> str:
    from conformance.producer_check.run import keep_name as made

    return made(name)


def test_keep_names_are_safe_and_distinct() -> None:
    names = [
        "java",
        "faulty-ok",
        "a/b",
        "a_b",
        "a%2Fb",
        "a%b",
        "/abs/x",
        "../x",
        "..",
        ".",
        "",
        ".hidden",
        "x\ny",
        "x\x00y",
        "x\x1b[31my",
        "\\",
        "n#2",
        "é",
        "\udc80",
        "z" * 300,
        "z" * 299 + "y",
        "%" * 200,
    ]
    made = [keep_name(n) for n in names]
    assert len(set(made)) == len(names), made
    for n, m in zip(names, made, strict=True):
        assert m and m not in (".", "..") and not m.startswith("."), (n, m)
        assert "/" not in m and "\\" not in m, (n, m)
        assert m.isprintable() and m.isascii(), (n, m)
        assert len(m.encode()) <= 255, (n, len(m))
    assert keep_name("java") == "java" and keep_name("faulty-ok") == "faulty-ok"
    assert keep_name("n#2") == "n#2"  # the run's suffix for a repeated name


def test_keep_writes_inside_its_directory_whatever_the_names(tmp_path: Path) -> None:
    """An adapter given by an absolute path, declaring no name (its name is that path), and
    adapters declaring ``../x``, an absolute path and two names that differ by a separator:
    the run completes, writes its report, and keeps each one's files in a directory of its
    own under DIR, nothing outside."""
    script = _adapter(tmp_path)
    keep, out = tmp_path / "keep", tmp_path / "report.json"
    outside = tmp_path / "outside"
    names = ["../x", str(outside / "abs"), "a/b", "a_b"]
    args = ["--cmd", f"{script} - ok"]  # no name: the command's path
    for name in names:
        args += ["--cmd", f"{sys.executable} {script} {name} ok"]
    code, stdout, stderr = _run(
        "check-producer",
        "-q",
        "--scenarios",
        "encode-codec-none",
        "--keep",
        str(keep),
        "--json",
        str(out),
        *args,
    )
    assert code == 1, stderr[-3000:]  # the batches are garbage: failures, not a crash
    report = json.loads(out.read_text())
    declared = sorted(i["name"] for i in report["implementations"])
    assert declared == sorted([str(script), *names])
    kept = sorted(p.name for p in keep.iterdir())
    assert kept == sorted(keep_name(n) for n in declared)
    for d in keep.iterdir():
        assert (d / "encode" / "encode-codec-none" / "plan.json").is_file()
    assert not (tmp_path / "x").exists() and not outside.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter.py", "keep", "report.json"]


# ----------------------------------------------------------------------- 11. empty --impl


@pytest.mark.parametrize("command", ["check", "check-producer"])
@pytest.mark.parametrize("value", ["", ",,", " , "])
def test_an_empty_impl_is_a_usage_error(tmp_path: Path, command: str, value: str) -> None:
    junit = tmp_path / "r.xml"
    code, _, err = _run(command, "--impl", value, "-q", "--junit", str(junit))
    assert code == 2, err
    assert "--impl" in err and "names no implementation" in err, err
    assert "no case matches" not in err and "Traceback" not in err
    assert not junit.exists()


def test_an_empty_impl_beside_a_named_one_is_a_usage_error() -> None:
    code, _, err = _run("check", "--impl", "java", "--impl", "", "-q")
    assert code == 2 and "names no implementation" in err, err


# -------------------------------------------------------------------- 12. --from-json


def _decode_report() -> dict[str, Any]:
    impl = Implementation("x", ("x",), None, {"library": "lib-x"})
    results = [
        CaseResult("x", "crafted/v2-a@memory", "crafted/v2", "pass", seconds=0.1),
        CaseResult("x", "crafted/v2-b@memory", "crafted/v2", "fail", "r", ["d1", "d2"]),
        CaseResult("x", "crafted/v2-c@file", "crafted/v2", "error", "boom", stderr="e\nf"),
        CaseResult("x", "crafted/v1-d@file", "crafted/v1", "unsupported", "magic 1"),
    ]
    run = ImplementationRun(impl, Capabilities(name="x", version="1"), "a note", results, 1.5)
    cases = {
        r.case: {
            "group": r.group,
            "mode": r.case.rpartition("@")[2],
            "size": 3,
            "path": "corpora/x",
            "description": "d",
            "outcome": "ok",
            "hex": "00ff10",
            "hex_truncated": False,
        }
        for r in results
    }
    return model.build([run], cases, Settings().to_dict(), [], complete=True)


def _producer_report() -> dict[str, Any]:
    impl = Implementation("p", ("p",), None, {})
    results = [
        CaseResult("p", "4.3.1/codec-none", "4.3.1 codec", "pass", level="java"),
        CaseResult(
            "p",
            "4.3.1/codec-gzip",
            "4.3.1 codec",
            "fail",
            "bad",
            ["bad"],
            findings=["f (at x)"],
            level="delivery",
        ),
        CaseResult("p", "encode/encode-codec-none", "encode", "error", "hang", stderr="s"),
    ]
    caps = ProducerCapabilities("p", "2", produce={"codecs": ["none"]}, encode={})
    run = ImplementationRun(impl, caps, None, results, 2.0, side="produce")
    cases = {
        r.case: {
            "group": r.group,
            "mode": "encode" if r.case.startswith("encode/") else "produce",
            "size": 1,
            "path": "scenarios.py",
            "description": "d",
            "outcome": "ok",
            "hex": "",
            "hex_truncated": False,
        }
        for r in results
    }
    return model.build([run], cases, Settings().to_dict() | {"level": "wire"}, [], complete=True)


REPORTS = {  # as saved: through JSON
    "check": lambda: json.loads(json.dumps(_decode_report())),
    "check-producer": lambda: json.loads(json.dumps(_producer_report())),
}


def _without(report: dict[str, Any], *path: str | int) -> dict[str, Any]:
    doc = copy.deepcopy(report)
    target = doc
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return doc


def _hostile_documents(command: str) -> dict[str, str]:
    good = REPORTS[command]()
    first = dict(good["implementations"][0])
    nan_counts = json.dumps(
        {**good, "implementations": [{**first, "counts": {**first["counts"], "pass": "NaN!"}}]}
    ).replace('"NaN!"', "NaN")
    return {
        "top-level array": json.dumps([good]),
        "top-level NaN": "NaN",
        "NaN inside": nan_counts,
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "deep nesting in an object": json.dumps({**good, "settings": "X"}).replace(
            '"X"', '{"a":' * 5000 + "1" + "}" * 5000
        ),
        "no counts": json.dumps(_without(good, "implementations", 0, "counts")),
        "no cases": json.dumps(_without(good, "cases")),
        "no created": json.dumps(_without(good, "created")),
        "implementations of arrays": json.dumps({**good, "implementations": [[1]]}),
        "results not a list": json.dumps({**good, "results": {"a": 1}}),
        "a result of an unknown case": json.dumps(
            {**good, "results": [{**good["results"][0], "case": "nowhere"}]}
        ),
        "a divergence index out of range": json.dumps(
            {**good, "results": [{**good["results"][1], "divergence": 7}]}
        ),
        "a stale index out of range": json.dumps({**good, "stale": [3]}),
        "a case of an unknown group": json.dumps({**good, "groups": good["groups"][:1]}),
        "counts of strings": json.dumps(
            {**good, "implementations": [{**first, "counts": {s: "1" for s in first["counts"]}}]}
        ),
        "not UTF-8": "\udcff",
    }


@pytest.mark.parametrize("command", ["check", "check-producer"])
def test_from_json_refuses_what_is_no_report(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    outs = [tmp_path / f"out.{k}" for k in ("json", "xml", "html", "md")]
    flags = [
        a for f, o in zip(("json", "junit", "html", "markdown"), outs) for a in (f"--{f}", str(o))
    ]
    for what, text in _hostile_documents(command).items():
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        try:
            code = cli_main([command, "--from-json", str(path), *flags])
        except BaseException as exc:  # noqa: BLE001 - the assertion names it
            pytest.fail(f"{what}: {type(exc).__name__}: {str(exc)[:300]}")
        err = capsys.readouterr().err
        assert code == 2, (what, code, err[-2000:])
        assert str(path) in err and "report" in err or "cannot read" in err, (what, err)
        assert not any(o.exists() for o in outs), what


@pytest.mark.parametrize("command", ["check", "check-producer"])
def test_from_json_renders_a_good_report(tmp_path: Path, command: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(REPORTS[command]()), encoding="utf-8")
    outs = {k: tmp_path / f"out.{k}" for k in ("json", "junit", "html", "markdown")}
    flags = [a for k, o in outs.items() for a in (f"--{k}", str(o))]
    code, stdout, err = _run(command, "--from-json", str(path), *flags)
    assert code == 0, err
    assert all(o.is_file() for o in outs.values())
    assert model.report_problem(REPORTS[command]()) is None


def test_from_json_reads_a_check_1_report_as_check_2(tmp_path: Path) -> None:
    """A report saved by an older kit (``kafka-conformance/check/1``, whose producer side was
    called ``producer``) renders as the same report of today's format (check/2, ``produce``)."""
    today = REPORTS["check-producer"]()
    assert today["format"] == "kafka-conformance/check/2" and today["side"] == "produce"
    old = today | {"format": "kafka-conformance/check/1", "side": "producer"}
    outs = []
    for name, doc in (("old", old), ("new", today)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out = tmp_path / name
        out.mkdir()
        flags = ["--json", str(out / "r.json"), "--markdown", str(out / "m.md")]
        code, _, err = _run("check-producer", "--from-json", str(path), *flags)
        assert code == 0, err
        outs.append(((out / "m.md").read_text(), json.loads((out / "r.json").read_text())))
    assert outs[0] == outs[1]
    assert outs[0][1]["format"] == "kafka-conformance/check/2"


def _paths(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value in ``doc`` (object members and array items)."""
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    for key, value in items:
        yield (*path, key)
        yield from _paths(value, (*path, key))


_ODD_VALUES = [None, True, -1, 1.5, "x", [1], {"a": 1}]


@pytest.mark.parametrize("command", ["check", "check-producer"])
def test_every_view_is_safe_on_what_validation_accepts(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each member of a good report removed, or replaced by a value of another type: the
    validation refuses it (exit 2), or every view renders it (exit 0 or 1); never a
    traceback."""
    good = REPORTS[command]()
    path = tmp_path / "r.json"
    outs = [tmp_path / f"out.{k}" for k in ("json", "xml", "html", "md")]
    flags = [
        a for f, o in zip(("json", "junit", "html", "markdown"), outs) for a in (f"--{f}", str(o))
    ]
    accepted = 0
    for where in _paths(good):
        variants = [_without(good, *where)]
        for value in _ODD_VALUES:
            doc = copy.deepcopy(good)
            target = doc
            for key in where[:-1]:
                target = target[key]
            target[where[-1]] = value
            variants.append(doc)
        for doc in variants:
            path.write_text(json.dumps(doc), encoding="utf-8")
            try:
                code = cli_main([command, "--from-json", str(path), *flags])
            except Exception as exc:  # noqa: BLE001 - the assertion names it
                pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
            assert code in (0, 1, 2), where
            accepted += code != 2
            capsys.readouterr()
    assert accepted  # some members are optional, or free text


# ------------------------------------------- issue 52, 6: a grandchild that leaves everything

#: an adapter of the decode and consume sides whose grandchild leaves the session (``setsid``)
#: with an empty environment (no marker) and sleeps, named by a token (argv[1]) to be found;
#: it reports a document no side accepts, promptly
ESCAPING_ADAPTER = """\
import os, sys
token, command = sys.argv[1], sys.argv[2:]
if command[:1] == ["capabilities"]:
    print('{"version": "0"}')
    sys.exit(0)
if os.fork() == 0:  # the child: starts the grandchild and is gone
    if os.fork() == 0:
        os.setsid()
        os.execve("/bin/sleep", ["kit-escapee-" + token, "300"], {})
    os._exit(0)
os.wait()
sys.stdin.buffer.read()
print("{}")
"""


@pytest.mark.parametrize(
    ("side", "case"), [("consume", "consume/v2-nulls"), ("decode", "crafted/codec-count-0-*")]
)
def test_a_grandchild_that_leaves_session_and_environment_is_killed(
    tmp_path: Path, side: str, case: str
) -> None:
    """``check --side consume`` / ``decode`` with an adapter whose grandchild calls ``setsid``
    and drops its environment: once ``check`` exits, no such process is left (the adapter's
    supervisor, a child subreaper, adopted and killed it)."""
    token = f"{os.getpid()}-{side}-{time.monotonic_ns()}"
    script = tmp_path / "escaping.py"
    script.write_text(f"#!{sys.executable}\n" + ESCAPING_ADAPTER, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    mine = (f"kit-escapee-{token}",)
    try:
        code, _, err = _run(
            "check", "--side", side, "--cmd", f"{script} {token}", "--cases", case,
            "--jobs", "1", "--timeout", "20", timeout=120,
        )  # fmt: skip
        assert code == 1, err  # the adapter's answers fail; the run itself completes
        assert "Traceback" not in err
        assert wait_until_gone(mine, seconds=3) == {}
    finally:
        for pid in processes(mine):
            os.kill(pid, signal.SIGKILL)


def test_invalid_producer_capabilities_keep_the_name_the_adapter_declares(tmp_path: Path) -> None:
    """Capabilities that say something invalid make every scenario an error, and the report's
    row is still named as the adapter names itself (not by its interpreter, ``python``); no
    broker is started for a run that can judge nothing."""
    script = tmp_path / "adapter.py"
    script.write_text(
        "import json, sys\n"
        "if sys.argv[1] == 'capabilities':\n"
        "    print(json.dumps({'name': 'mylib', 'produce': {'codecs': ['brotli']}}))\n"
    )
    out = tmp_path / "r.json"
    started = time.monotonic()
    code, _, err = _run(
        "check-producer", "--cmd", f"{sys.executable} {script}", "--scenarios", "codec-*",
        "--json", str(out), "-q",
    )  # fmt: skip
    assert code == 1, err
    report = json.loads(out.read_text())
    (impl,) = report["implementations"]
    assert impl["name"] == "mylib"
    assert {r["status"] for r in report["results"]} == {"error"}
    assert all("brotli" in r["reason"] for r in report["results"])
    assert time.monotonic() - started < 60  # capabilities only: no broker was started
