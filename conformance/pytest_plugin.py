"""The pytest plugin: the corpus as parametrized test cases in a library's own test suite.

Registered as the ``pytest11`` entry point ``kafka_conformance`` (pyproject.toml), so it is
loaded wherever the kit is installed; it does nothing until a test asks for ``kafka_case``.
A test that takes ``kafka_case`` runs once per decode case of the corpus (the checkout's
``corpora/``, else the installed ``kafka-conformance-corpora`` package, else ``--kafka-corpora
DIR``), with the case's bytes, mode and Kafka's verdict::

    # conftest.py
    import pytest

    @pytest.fixture(scope="session")
    def kafka_capabilities():          # what `CMD capabilities` would print (optional)
        return {"name": "mylib", "codecs": ["none", "gzip"], "checks_crc": False}

    # test_kafka_conformance.py
    def test_decode(kafka_case):
        kafka_case.check(mylib_to_canonical(kafka_case.data, kafka_case.mode))

``KafkaCase.check`` compares the library's canonical document with Kafka's exactly as
``kafka-conformance check`` does (``harness.judge``: the capabilities' omits, error classes,
error semantics), and ends the test: pass; fail with the diff lines; skip when the
capabilities exclude the case (``unsupported``); xfail when every difference is explained by
an entry of the known file (``--kafka-known FILE``, ini ``kafka_conformance_known``; entries
whose ``impl`` is the capabilities' name, docs/adapters.md, "Known divergences"). Known
divergences are strict: a case an entry covers that passes fails the test (the entry is
stale), and at the end of the run an entry that matched none of the cases run fails the run.

Options (command line, or ini with the same name in ``kafka_conformance_*`` form):
``--kafka-known FILE`` (repeatable), ``--kafka-cases GLOB`` (repeatable: only the matching
case ids), ``--kafka-corpora DIR``. docs/for-library-maintainers.md has the whole recipe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.corpus import package
from conformance.harness import cases as case_source
from conformance.harness import divergences as dv
from conformance.harness.judge import Capabilities, Verdict, judge, read_capabilities
from conformance.harness.runner import decide

__all__ = ["KafkaCase", "KnownDivergence"]

_FIXTURE = "kafka_case"


class KnownDivergence(AssertionError):
    """A difference every line of which a known-divergence entry explains (an xfail)."""


@dataclass
class _Known:
    """The known file's entries for this run, and which of them covered a case run."""

    entries: list[dv.Divergence]
    covered: set[int] = field(default_factory=set)


@dataclass
class KafkaCase:
    """One decode case: ``data`` (the input bytes), ``mode`` (``memory``: a fetch response's
    records field; ``file``: a .log segment), ``expected`` (Kafka's canonical document,
    docs/canonical-json.md) and the comparison of :meth:`check`."""

    id: str
    group: str
    mode: str
    data: bytes
    expected: dict[str, Any]
    description: str
    capabilities: Capabilities
    _known: _Known

    def verdict(self, actual: dict[str, Any] | str) -> Verdict:
        """``check``'s verdict on ``actual`` (the document, or its JSON text), without ending
        the test: ``pass``, ``fail`` (with ``diff``) or ``error`` (not a decode document)."""
        if isinstance(actual, str):
            try:
                actual = json.loads(actual)
            except ValueError as e:
                return Verdict("error", f"invalid JSON: {e}")
        return judge(self.expected, actual, self.capabilities, self.mode)

    def check(self, actual: dict[str, Any] | str) -> None:
        """Compare ``actual`` with Kafka's document; pass, or end the test failed (the diff),
        xfailed (every line explained by a known entry) or failed as a stale known entry."""
        v = self.verdict(actual)
        name = self.capabilities.name
        mine = [(i, e) for i, e in enumerate(self._known.entries) if e.matches(name, self.id)]
        self._known.covered.update(i for i, _ in mine)
        if v.status == "pass":
            if mine:
                pytest.fail(
                    f"{self.id} passes, but the known divergence {mine[0][1].summary!r} "
                    f"({mine[0][1].source}) says it differs: remove or narrow the entry",
                    pytrace=False,
                )
            return
        lines = v.diff or [v.reason]
        explaining, _, unexplained = dv.explain(self._known.entries, name, self.id, lines)
        text = "\n".join([v.reason, *v.diff]) if v.diff else v.reason
        if explaining and not unexplained:
            pytest.xfail(f"known divergence: {explaining[0].summary} ({explaining[0].source})")
        raise AssertionError(f"{self.id}: {text}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-conformance", "Kafka record conformance (kafka_case)")
    group.addoption(
        "--kafka-known",
        action="append",
        default=[],
        metavar="FILE",
        help="known divergences (the format of check --known): explained differences xfail",
    )
    group.addoption(
        "--kafka-cases",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the corpus cases whose id matches (repeatable), e.g. 'crafted/v2-*'",
    )
    group.addoption(
        "--kafka-corpora",
        default=None,
        metavar="DIR",
        help="the corpora directory (default: the checkout's, else the installed "
        f"{package.DISTRIBUTION} package)",
    )
    parser.addini("kafka_conformance_known", "known-divergence files", type="linelist")
    parser.addini("kafka_conformance_cases", "case-id globs to run", type="linelist")
    parser.addini("kafka_conformance_corpora", "the corpora directory", default="")


def _setting(config: pytest.Config, option: str, ini: str) -> Any:
    value = config.getoption(option)
    return value if value else config.getini(ini)


def _selected_cases(config: pytest.Config) -> list[case_source.Case]:
    cached = config.stash.get(_CASES, None)
    if cached is None:
        corpora = _setting(config, "kafka_corpora", "kafka_conformance_corpora")
        root = Path(corpora) if corpora else package.corpora_root()
        globs: Sequence[str] = _setting(config, "kafka_cases", "kafka_conformance_cases")
        cached = case_source.select(case_source.read_cases(root), list(globs))
        config.stash[_CASES] = cached
    return cached


_CASES = pytest.StashKey[list[case_source.Case]]()
_KNOWN = pytest.StashKey[_Known]()


def _known(config: pytest.Config) -> _Known:
    if _KNOWN not in config.stash:
        files = [Path(f) for f in _setting(config, "kafka_known", "kafka_conformance_known")]
        config.stash[_KNOWN] = _Known(dv.read_divergences(files, ordered=True))
    return config.stash[_KNOWN]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if _FIXTURE not in metafunc.fixturenames:
        return
    cases = _selected_cases(metafunc.config)
    metafunc.parametrize(_FIXTURE, cases, ids=[c.id for c in cases], indirect=True)


@pytest.fixture(scope="session")
def kafka_capabilities() -> dict[str, Any]:
    """What the library under test decodes (the document of docs/adapter-protocol.md,
    "Capabilities"); override it in conftest.py. Default: everything, CRCs checked,
    streaming errors, error classes not compared."""
    return {"name": "library"}


@pytest.fixture
def kafka_case(request: pytest.FixtureRequest, kafka_capabilities: dict[str, Any]) -> KafkaCase:
    """One corpus case (parametrized over the corpus by this plugin)."""
    case: case_source.Case = request.param
    caps = read_capabilities(json.dumps(kafka_capabilities), "library")
    data, expected, unsupported = decide(case, caps)
    if unsupported:
        pytest.skip(f"unsupported: {unsupported}")
    return KafkaCase(
        case.id,
        case.group,
        case.mode,
        data,
        expected,
        case.description,
        caps,
        _known(request.config),
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A known entry that covered none of the cases run is stale: the run fails (when it ran
    the whole selected corpus: a ``-k`` or ``--lf`` run says nothing about the others)."""
    known = session.config.stash.get(_KNOWN, None)
    option = session.config.option
    if known is None or getattr(option, "keyword", "") or getattr(option, "lf", False):
        return
    stale = [e for i, e in enumerate(known.entries) if i not in known.covered]
    if stale and exitstatus == 0:
        lines = "\n".join(f"  {e.source}: {e.impl}: {e.summary}" for e in stale)
        print(f"\nkafka-conformance: stale known divergences (cover no case run):\n{lines}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
