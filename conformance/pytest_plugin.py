"""The pytest plugin: the corpus as parametrized test cases in a library's own test suite.

Registered as the ``pytest11`` entry point ``kafka_conformance`` (pyproject.toml), so it is
loaded wherever the kit is installed; it does nothing until a test asks for ``kafka_case``.
A test that takes ``kafka_case`` runs once per decode case of the corpus (``--kafka-corpora
DIR``, else the checkout's ``corpora/``, else the installed ``kafka-conformance-corpora``
package), with the case's bytes, mode and Kafka's verdict::

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

Nothing checked is never green: a run whose ``kafka_case`` tests could check nothing, or not
what was asked, ends with one usage error (exit code 4) saying what to do, before any test
runs: no corpora at all; ``--kafka-corpora`` or ``$KAFKA_CONFORMANCE_ROOT`` naming a missing
path, a file or a directory without decode cases; a ``--kafka-cases`` glob that matches no
case; a known file that cannot be read or is not valid. A ``kafka_capabilities`` fixture
whose value is not a valid capabilities mapping ends the run the same way at the first
``kafka_case`` test (``pytest.exit``: the fixture's value exists only then), never silently
the defaults.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from conformance.corpus import package
from conformance.errors import CorpusError
from conformance.harness import cases as case_source
from conformance.harness import divergences as dv
from conformance.harness.decode import decide
from conformance.harness.judge import (
    Capabilities,
    CapabilityError,
    judge,
    read_capabilities,
)
from conformance.harness.runner import select
from conformance.jvm.runtime import ROOT_ENV, NoCheckout
from conformance.levels import Verdict

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


class _Problem(Exception):
    """Why the plugin's cases cannot run as asked: one usage error for the whole run (pytest's
    exit code 4), its message saying what to do."""


@dataclass
class _Plan:
    """What every ``kafka_case`` test of the run shares: the cases selected and the known file."""

    cases: list[case_source.Case]
    known: _Known


_PREFIX = "kafka-conformance (kafka_case): "
_PLAN = pytest.StashKey["_Plan | str"]()  # the plan, or the problem's message
_KNOWN = pytest.StashKey[_Known]()
#: where the capabilities document is described (the fixture returns that document)
_CAPABILITIES_DOC = 'docs/adapter-protocol.md, "Capabilities"'


def _setting(config: pytest.Config, option: str, ini: str) -> tuple[Any, str]:
    """The command line's value of ``option`` (``--kafka-...``), else the ini's ``ini``; with
    the name it was given under (for messages)."""
    value = config.getoption(option.lstrip("-").replace("-", "_"))
    return (value, option) if value else (config.getini(ini), f"ini {ini}")


def _corpora(config: pytest.Config) -> list[case_source.Case]:
    """Every decode case of the corpora the run reads; :class:`_Problem` when there are none
    (a missing path, a file, a directory without cases) or they cannot be read."""
    given, name = _setting(config, "--kafka-corpora", "kafka_conformance_corpora")
    env = os.environ.get(ROOT_ENV)
    if given:
        root, origin = Path(given), f"{name} {given}"
        fix = (
            "name a corpora directory (a kafka-conformance checkout's corpora/, or the "
            f"directory of the installed {package.PACKAGE} package)"
        )
    elif env:
        origin = f"{ROOT_ENV}={env}"
        fix = (
            f"set {ROOT_ENV} to a kafka-conformance checkout (the directory holding "
            "corpora/), or unset it for the default corpora (the kit's own checkout, else the "
            f"installed {package.DISTRIBUTION} package)"
        )
        if not Path(env).is_dir():
            missing = "does not exist" if not Path(env).exists() else "is not a directory"
            raise _Problem(f"{origin}: {env} {missing}; {fix}")
        root = package.corpora_root()
    else:
        try:
            root = package.corpora_root()
        except NoCheckout:
            raise _Problem(
                f"no corpora to take the cases from (no checkout, no {package.DISTRIBUTION} "
                "package): pip install 'kafka-conformance[corpora]', pass --kafka-corpora DIR, "
                f"or set {ROOT_ENV} to a checkout"
            ) from None
        origin = f"the default corpora ({root})"
        fix = (
            f"reinstall the {package.DISTRIBUTION} package (pip install --force-reinstall "
            "'kafka-conformance[corpora]') or pass --kafka-corpora DIR"
        )
    if not root.is_dir():
        missing = "does not exist" if not root.exists() else "is not a directory"
        raise _Problem(f"{origin}: {root} {missing}; {fix}")
    try:
        package.identity(root)  # every file hashed: a tampered package, a FIFO are refused
        cases = case_source.read_cases(root)
    except CorpusError as exc:
        raise _Problem(f"{origin}: {exc}") from None
    except (OSError, ValueError, KeyError) as exc:
        raise _Problem(f"{origin}: the corpora in {root} cannot be read ({exc}); {fix}") from None
    if not cases:
        raise _Problem(
            f"{origin}: {root} holds no decode case (no crafted/manifest.json, no golden "
            f"capture, no regressions/stream/); {fix}"
        )
    return cases


def _selected(config: pytest.Config, cases: list[case_source.Case]) -> list[case_source.Case]:
    """The cases the globs select; :class:`_Problem` for a glob that matches none (a typo
    would otherwise leave its cases unchecked in a green run)."""
    globs, name = _setting(config, "--kafka-cases", "kafka_conformance_cases")
    unmatched = [g for g in globs if not select(cases, [g])]
    if unmatched:
        examples: dict[str, str] = {}
        for c in cases:
            examples.setdefault(c.group, c.id)
        shown = ", ".join(list(examples.values())[:4])
        raise _Problem(
            f"{name} {' '.join(repr(g) for g in unmatched)} "
            f"{'matches' if len(unmatched) == 1 else 'match'} none of the {len(cases)} decode "
            f"cases (ids such as {shown}); give fnmatch globs of case ids, e.g. 'crafted/v2-*' "
            f"or '*@file' (pytest --collect-only -q without {name} lists every id)"
        )
    selected = select(cases, list(globs))
    try:
        case_source.check_readable(selected)  # a missing input, a garbled verdict: up front
    except CorpusError as exc:
        raise _Problem(str(exc)) from None
    return selected


def _read_known(config: pytest.Config) -> _Known:
    """The known files' entries; :class:`_Problem` for a file that cannot be read or is not a
    valid known file."""
    files, name = _setting(config, "--kafka-known", "kafka_conformance_known")
    try:
        entries = dv.read_divergences([Path(f) for f in files], ordered=True)
    except OSError as exc:
        raise _Problem(
            f"{name}: {exc.filename or ''}: cannot be read ({exc.strerror or exc}); name an "
            "existing known-divergence file"
        ) from None
    except ValueError as exc:  # DivergenceError, or text that is not UTF-8
        raise _Problem(
            f'{name}: {exc}; fix the file (its format: docs/adapters.md, "Known divergences")'
        ) from None
    return _Known(entries)


def _plan(config: pytest.Config) -> _Plan | str:
    """The run's plan, made once (the problem's message instead when there is one)."""
    if _PLAN not in config.stash:
        try:
            cases = _selected(config, _corpora(config))
            plan: _Plan | str = _Plan(cases, _read_known(config))
        except _Problem as exc:
            plan = _PREFIX + str(exc)
        else:
            config.stash[_KNOWN] = plan.known
        config.stash[_PLAN] = plan
    return config.stash[_PLAN]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if _FIXTURE not in metafunc.fixturenames:
        return
    plan = _plan(metafunc.config)
    if isinstance(plan, _Plan):
        cases = plan.cases
        metafunc.parametrize(_FIXTURE, cases, ids=[c.id for c in cases], indirect=True)
    # else: the one usage error, raised when the collection is over


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config) -> None:
    """A problem of the plan ends the run here, once (exit code 4), before any test runs:
    raised while collecting, it would be a collection error per test module."""
    plan = config.stash.get(_PLAN, None)
    if isinstance(plan, str):
        raise pytest.UsageError(plan)


@pytest.fixture(scope="session")
def kafka_capabilities() -> dict[str, Any]:
    """What the library under test decodes (the document of docs/adapter-protocol.md,
    "Capabilities"); override it in conftest.py. Default: everything, CRCs checked,
    streaming errors, error classes not compared."""
    return {"name": "library"}


def _capabilities(declared: object) -> Capabilities:
    """The ``kafka_capabilities`` fixture's document read as ``check`` reads an adapter's;
    anything else ends the run (exit code 4, one message): a value that is not a mapping, is
    not JSON, or says something invalid is never silently the defaults."""
    fix = (
        "make the kafka_capabilities fixture return a mapping such as {'name': 'mylib', "
        f"'codecs': ['none', 'gzip']}} ({_CAPABILITIES_DOC})"
    )
    if not isinstance(declared, Mapping):
        shown = repr(declared)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        _end(
            f"kafka_capabilities returned a {type(declared).__name__} ({shown}), not a "
            f"mapping of capabilities; {fix}"
        )
    try:
        text = json.dumps(dict(declared))
    except (TypeError, ValueError) as exc:
        _end(f"kafka_capabilities is not a JSON document ({exc}); {fix}")
    try:
        return read_capabilities(text, "library")
    except CapabilityError as exc:
        _end(f"kafka_{exc}; fix the kafka_capabilities fixture ({_CAPABILITIES_DOC})")


def _end(message: str) -> NoReturn:
    """End the whole run with one usage error (from a fixture: the tests' setup is past the
    point where a :class:`pytest.UsageError` would end it)."""
    pytest.exit(_PREFIX + message, returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture
def kafka_case(request: pytest.FixtureRequest, kafka_capabilities: dict[str, Any]) -> KafkaCase:
    """One corpus case (parametrized over the corpus by this plugin)."""
    case: case_source.Case = request.param
    caps = _capabilities(kafka_capabilities)
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
        request.config.stash[_KNOWN],
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
