"""The pytest plugin (conformance/pytest_plugin.py, the `pytest11` entry point) in a sample
project of its own: a "library" whose decoder is the kit's reference decoder passes every case
it runs; the same library with a fault fails exactly the cases the fault touches; a known file
turns those into xfails, and is strict: an entry whose cases pass, or that covers no case run,
fails. Kafka's verdicts come from the corpus (the Java oracle's documents), never from the
decoder under test: the fault is measured against them."""

from __future__ import annotations

import re
import textwrap

import pytest

from conformance.harness import cases as C

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
    return C.select(C.read_cases(), list(CASES))


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
