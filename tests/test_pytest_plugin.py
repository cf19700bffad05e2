"""The pytest plugin (conformance/pytest_plugin.py, the `pytest11` entry point) in a sample
project of its own: a "library" whose decoder is the kit's reference decoder passes every case
it runs; the same library with a fault fails exactly the cases the fault touches; a known file
turns those into xfails, and is strict: an entry whose cases pass, or that covers no case run,
fails. Kafka's verdicts come from the corpus (the Java oracle's documents), never from the
decoder under test: the fault is measured against them."""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from conformance.corpus import golden
from conformance.harness import cases as C
from conformance.harness.runner import select
from conformance.jvm.runtime import ROOT_ENV, is_checkout

pytest_plugins = ["pytester"]

#: the cases the sample project runs (gzip and zstd v2 batches: the fault drops gzip records)
CASES = ("crafted/v2-*", "crafted/gzip-*")

CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def kafka_capabilities():
    return {"name": "samplelib", "error_classes": "class"}
"""

TEST = """
from conformance import decode

FAULT = {fault!r}

def samplelib_decode(data, mode):
    doc = decode(data, mode=mode).to_dict()
    if FAULT:
        for batch in doc["batches"]:
            if batch["compression"] == FAULT and batch["records"]:
                batch["records"].pop()   # the library loses a compressed batch's last record
    return doc

def test_decode(kafka_case):
    kafka_case.check(samplelib_decode(kafka_case.data, kafka_case.mode))
"""

KNOWN = """
[[divergence]]
impl = "samplelib"
cases = [{cases}]
class = "real-bug"
summary = "drops the last record of a gzip batch"
lines = ["$.batches*.records*"]
"""


def _selected() -> list[C.Case]:
    return select(C.read_cases(), list(CASES))


def _gzip_cases() -> list[str]:
    """The cases a gzip fault must touch: a gzip batch with records in Kafka's document."""
    return sorted(
        c.id
        for c in _selected()
        if any(b["compression"] == "gzip" and b["records"] for b in c.expected()["batches"])
    )


def _run(pytester: pytest.Pytester, fault: str | None, *args: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_sample=TEST.format(fault=fault))
    globs = [a for g in CASES for a in ("--kafka-cases", g)]
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *globs, *args)


def test_a_correct_library_passes_every_case(pytester: pytest.Pytester) -> None:
    n = len(_selected())
    assert n > 50
    result = _run(pytester, None)
    result.assert_outcomes(passed=n)


def test_a_fault_fails_exactly_the_cases_it_touches(pytester: pytest.Pytester) -> None:
    touched = _gzip_cases()
    assert touched
    result = _run(pytester, "gzip")
    result.assert_outcomes(passed=len(_selected()) - len(touched), failed=len(touched))
    # The short summary may carry the message after the id (its width is the terminal's),
    # so the id is read up to its own closing bracket.
    failed = {m.group(1) for line in result.outlines
              if (m := re.match(r"FAILED \S*?test_decode\[([^\]]+)\]", line))}  # fmt: skip
    assert failed == set(touched)
    assert "kafka=" in result.stdout.str() and "adapter=" in result.stdout.str()


def test_known_divergences_are_strict_xfails(pytester: pytest.Pytester) -> None:
    touched = _gzip_cases()
    known = pytester.path / "known.toml"
    known.write_text(KNOWN.format(cases=", ".join(f'"{c}"' for c in touched)))
    result = _run(pytester, "gzip", "--kafka-known", str(known))
    result.assert_outcomes(passed=len(_selected()) - len(touched), xfailed=len(touched))
    assert result.ret == 0

    # the library fixed: every entry's case passes, so each fails as a stale entry
    result = _run(pytester, None, "--kafka-known", str(known))
    result.assert_outcomes(passed=len(_selected()) - len(touched), failed=len(touched))
    assert "passes, but the known divergence" in result.stdout.str()

    # an entry that covers no case run fails the run
    extra = KNOWN.format(cases='"crafted/no-such-case"').replace("gzip batch", "ghost")
    known.write_text(known.read_text() + extra)
    result = _run(pytester, "gzip", "--kafka-known", str(known))
    result.assert_outcomes(passed=len(_selected()) - len(touched), xfailed=len(touched))
    assert result.ret == 1 and "stale known divergences" in result.stdout.str()


def test_a_test_without_the_fixture_is_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_capabilities_exclude_cases_as_skips(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture(scope="session")
            def kafka_capabilities():
                return {"name": "samplelib", "codecs": ["none"]}
            """
        )
    )
    pytester.makepyfile(test_sample=TEST.format(fault=None))
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "--kafka-cases", CASES[0], "-rs"
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) > 0 and "failed" not in outcomes
    assert "unsupported: codec" in result.stdout.str()


# --------------------------------------------------------------------------------------------
# Nothing checked is never green: each way of asking for cases that cannot run is one usage
# error (exit code 4) naming what was given and what to do, before any test runs.

PLAIN_TEST = "def test_decode(kafka_case):\n    kafka_case.check({})\n"


def _usage_error(result: pytest.RunResult, *fragments: str) -> str:
    """The run's one error message (pytest's ``ERROR:`` line, or the ``Exit`` line of an end
    from a fixture); asserted to contain ``fragments``, with no test run and no traceback."""
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "Traceback" not in out and "passed" not in out and "skipped" not in out, out
    messages = [line for line in result.outlines + result.errlines if "kafka-conformance (" in line]
    assert len(messages) == 1, out
    for fragment in fragments:
        assert fragment in messages[0], (fragment, messages[0])
    return messages[0]


def _run_plain(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_sample=PLAIN_TEST)
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *args)


def test_a_case_glob_matching_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    every = C.read_cases()
    # alone, beside a glob that matches (its cases would run, the typo's silently not), and
    # from the ini file
    for args in (
        ["--kafka-cases", "crafted/no-such-*"],
        ["--kafka-cases", CASES[0], "--kafka-cases", "crafted/no-such-*"],
    ):
        message = _usage_error(
            _run_plain(pytester, *args),
            "'crafted/no-such-*'",
            f"none of the {len(every)} decode cases",
            "--collect-only",
        )
        assert sum(c.id in message for c in every) >= 3  # a few real ids as examples
    pytester.makeini("[pytest]\nkafka_conformance_cases = crafted/no-such-*\n")
    _usage_error(_run_plain(pytester), "ini kafka_conformance_cases 'crafted/no-such-*'")


@pytest.mark.parametrize("kind", ["missing", "file", "empty directory"])
def test_kafka_corpora_without_cases_is_a_usage_error(pytester: pytest.Pytester, kind: str) -> None:
    where = pytester.path / "corpora"
    if kind == "file":
        where.write_text("not a directory\n")
    elif kind == "empty directory":
        where.mkdir()
    problem = {
        "missing": "does not exist",
        "file": "is not a directory",
        "empty directory": "holds no decode case",
    }[kind]
    _usage_error(
        _run_plain(pytester, "--kafka-corpora", str(where)),
        f"--kafka-corpora {where}",
        problem,
        "name a corpora directory",
    )


@pytest.mark.parametrize("damage", ["garbled verdict", "fifo"])
def test_a_damaged_corpus_is_one_usage_error(pytester: pytest.Pytester, damage: str) -> None:
    """The corpus is checked as ``check`` checks it, before any test: a verdict that is not
    JSON, a FIFO (never opened: an open would block the run for ever)."""
    where = pytester.path / "corpora"
    shutil.copytree(golden.default_root() / "crafted", where / "crafted")
    if damage == "fifo":
        os.mkfifo(where / "crafted" / "v2-appendix-a1.bin.tmp")
        said = "a FIFO in the corpora"
    else:
        (where / "crafted" / "v2-appendix-a1.file.json").write_text("{not json")
        said = "v2-appendix-a1.file.json: not valid JSON"
    _usage_error(
        _run_plain(pytester, "--kafka-corpora", str(where), "--kafka-cases", "crafted/v2-*"),
        said,
    )


@pytest.mark.parametrize("kind", ["missing", "file", "/etc", "checkout with empty corpora"])
def test_a_root_without_cases_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    root = pytester.path / "root"
    if kind == "file":
        root.write_text("not a directory\n")
    elif kind == "/etc":
        root = Path("/etc")
    elif kind == "checkout with empty corpora":
        # what jvm.runtime.is_checkout recognises: the project's pyproject.toml and package
        (root / "conformance").mkdir(parents=True)
        (root / "conformance" / "__init__.py").write_text("")
        (root / "pyproject.toml").write_text('[project]\nname = "kafka-conformance"\n')
        (root / "corpora").mkdir()
        assert is_checkout(root)
    corpora = root / "corpora"
    problem = {
        "missing": f"{root} does not exist",
        "file": f"{root} is not a directory",
        "/etc": f"{corpora} does not exist",
        "checkout with empty corpora": f"{corpora} holds no decode case",
    }[kind]
    monkeypatch.setenv(ROOT_ENV, str(root))
    _usage_error(
        _run_plain(pytester),
        f"{ROOT_ENV}={root}:",
        problem,
        f"set {ROOT_ENV} to a kafka-conformance checkout",
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (KNOWN.format(cases='"crafted/*"').replace("real-bug", "a-bug"), "class must be one of"),
        ('[divergence]\nimpl = "samplelib"\n', "array of tables"),
        ("impl = [", "not TOML"),
        (None, "cannot be read"),
    ],
    ids=["bad class", "a table, not an array", "not TOML", "missing"],
)
def test_a_bad_known_file_is_one_usage_error(
    pytester: pytest.Pytester, text: str | None, problem: str
) -> None:
    """Not one setup error per test: the file is read once, before any test runs."""
    known = pytester.path / "known.toml"
    if text is not None:
        known.write_text(text)
    result = _run(pytester, None, "--kafka-known", str(known))
    _usage_error(result, f"--kafka-known: {known}", problem)


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ('["none", "gzip"]', "returned a list (['none', 'gzip']), not a mapping"),
        ('{"name": "samplelib", "codecs": {"gzip"}}', "not a JSON document"),
        ('{"name": "samplelib", "codec": ["gzip"]}', "kafka_capabilities: unknown key 'codec'"),
    ],
    ids=["a list", "a set inside", "an unknown key"],
)
def test_bad_capabilities_are_one_usage_error(
    pytester: pytest.Pytester, returned: str, problem: str
) -> None:
    """Never silently the defaults, and one message for the run, not one per test."""
    pytester.makeconftest(
        CONFTEST.replace('{"name": "samplelib", "error_classes": "class"}', returned)
    )
    pytester.makepyfile(test_sample=TEST.format(fault=None))
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "--kafka-cases", CASES[1]
    )
    _usage_error(result, problem, "fixture")
