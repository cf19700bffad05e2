"""The one run loop: every side of the harness is a plug-in (:class:`Side`) run by :func:`run_side`.

Bowtie's shape: a side says what is particular to it; the loop owns what every side does.

=======================  =================================================================
a side (a plug-in) says  the loop (:func:`run_side`) does
=======================  =================================================================
``capabilities``         ask every implementation first; name a ``--cmd`` adapter by the
                         name it declares (``named``, ``row_name``); two alike become
                         ``name#N``; invalid capabilities make every case an ``error``
``unsupported``          decide each (implementation, case) before anything is started:
                         an unsupported case is never run
``stages``               the cases in the order their environments are set up (a broker
                         line each, or one stage); ``in_turn``: one implementation at a time
``environment``          entered only when a stage has a case to run (a broker started,
                         a proxy, the topics), left on errors and Ctrl-C
``run_case``             on ``jobs`` threads (``run_parallel``: on Ctrl-C or a bug every
(or ``run_jobs``)        adapter process is killed before a worker is waited for)
``documents``            each case's document in the report (``harness.report.model``)
``settings_doc``         the report's ``settings``
=======================  =================================================================

Results are kept in case order per implementation (stage by stage), progress is reported as
they come (per implementation, or over the run when the side has a ``title``), and the run of
each implementation is an :class:`ImplementationRun`: the one result type of every side, which
the report model, the known divergences and the CLI's summary read. Whatever an adapter does
(hang, crash, flood, garbage), its case gets a verdict and the run goes on.
"""

from __future__ import annotations

import hashlib
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from conformance.harness.process import ProcessTable, run_once
from conformance.harness.registry import SIDES
from conformance.jsondoc import JsonDocument
from conformance.levels import Judgement

__all__ = [
    "CaseResult",
    "Implementation",
    "ImplementationRun",
    "Job",
    "STATUSES",
    "Settings",
    "Side",
    "Stage",
    "ask_capabilities",
    "keep_name",
    "judged",
    "named",
    "plug",
    "run_parallel",
    "select",
    "run_side",
]

STATUSES = ("pass", "fail", "unsupported", "error")


@dataclass(frozen=True)
class Implementation:
    """What a side runs: an adapter command (built-in or ``--cmd``; an empty ``name`` is
    replaced by the name the adapter declares in its capabilities), or a broker target (no
    command: ``argv`` its bootstrap address, when it has one)."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None
    source: dict[str, Any] = field(default_factory=dict)  # registry description, for reports


@dataclass(frozen=True)
class Settings(JsonDocument):
    """How adapter processes run: ``jobs`` at once, each case within ``timeout`` seconds and
    ``output_limit`` bytes of output."""

    jobs: int = 2
    timeout: float = 20.0
    #: bytes an adapter may print for one case
    output_limit: int = 64 << 20
    capabilities_timeout: float = 120.0

    def to_dict(self) -> dict[str, Any]:
        """The report's ``settings`` (without the cases' globs and the level)."""
        return {"jobs": self.jobs, "timeout": self.timeout, "output_limit": self.output_limit}


@dataclass
class CaseResult(JsonDocument):
    """One case through one implementation: the verdict of every side."""

    impl: str
    case: str
    group: str
    status: str
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    stderr: str = ""
    seconds: float = 0.0
    #: differences above the level asked (``conformance.levels``): reported, never a failure
    findings: list[str] = field(default_factory=list)
    #: the highest level reached (``conformance.levels``), for a side judged at levels
    level: str | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "impl": self.impl,
            "case": self.case,
            "group": self.group,
            "status": self.status,
            "reason": self.reason,
            "diff": self.diff,
            "stderr": self.stderr,
            "seconds": round(self.seconds, 4),
        }
        if self.level is not None:
            doc |= {"level": self.level, "findings": self.findings}
        return doc


class CapabilityDocument(Protocol):
    """What the loop and the report read of a side's capabilities: the name an adapter
    declares (empty: none), why they are invalid (empty: they are not) and their document."""

    @property
    def name(self) -> str: ...
    @property
    def invalid(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class ImplementationRun:
    """One implementation over the cases of one side: the report's row."""

    impl: Implementation
    capabilities: CapabilityDocument
    capabilities_problem: str | None
    results: list[CaseResult]
    seconds: float
    #: the side (``Side.name``: one of ``harness.registry.SIDES``, or a plugged one)
    side: str = "decode"

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)


#: ``(implementation, done, total, counts per status)``
ProgressCallback = Callable[[str, int, int, Counter[str]], None]


class Identified(Protocol):
    """A case of any side, as a result names it."""

    @property
    def id(self) -> str: ...
    @property
    def group(self) -> str: ...


CaseT = TypeVar("CaseT", bound=Identified)
T = TypeVar("T")
CapsT = TypeVar("CapsT", bound=CapabilityDocument)


@dataclass(frozen=True)
class Job(Generic[CaseT, CapsT]):
    """One case to run through one implementation, under its capabilities."""

    impl: Implementation
    caps: CapsT
    case: CaseT


@dataclass(frozen=True)
class Stage(Generic[CaseT]):
    """Cases that share an environment (``key``: e.g. a broker id; None: the side's one
    stage); ``in_turn``: the implementations run one after the other, each in an environment
    of its own, else all of them at once in one."""

    key: str | None
    cases: Sequence[CaseT]
    in_turn: bool = True


class Side(ABC, Generic[CaseT, CapsT]):
    """A side of the harness: what is particular to it (the module docstring's table)."""

    #: the side's word: one of ``harness.registry.SIDES`` (``produce``: producers and encoders)
    name: str = ""
    #: the progress display's title (one display for the run), None: one per implementation
    title: str | None = None
    #: cases run at once
    jobs: int = 1

    @abstractmethod
    def capabilities(self, impl: Implementation, table: ProcessTable) -> tuple[CapsT, str | None]:
        """The implementation's capabilities for this side, and the problem with them (the
        protocol's defaults apply; or, with ``invalid`` set, every case is an error)."""

    @abstractmethod
    def read_cases(self, corpora: Path) -> Sequence[CaseT]:
        """Every case of this side (``corpora``: the corpora directory the run uses)."""

    @abstractmethod
    def unsupported(self, case: CaseT, caps: CapsT) -> str | None:
        """Why ``caps`` exclude ``case`` (None: the case is run)."""

    @abstractmethod
    def run_case(self, env: Any, job: Job[CaseT, CapsT], table: ProcessTable) -> CaseResult:
        """One supported case through one implementation in the stage's environment, judged."""

    @abstractmethod
    def documents(self, cases: Sequence[CaseT]) -> dict[str, dict[str, Any]]:
        """The report's ``cases`` member for ``cases``."""

    @abstractmethod
    def settings_doc(self) -> dict[str, Any]:
        """The report's ``settings`` (``jobs``, ``timeout``, ``output_limit``; ``level``)."""

    def named(self, impl: Implementation, caps: CapsT) -> Implementation:
        """``impl`` named (:func:`named`): a ``--cmd`` adapter by the name it declares."""
        return named(impl, caps)

    def row_name(self, name: str) -> str:
        """The report's name of an implementation's row on this side."""
        return name

    def stages(self, cases: Sequence[CaseT]) -> Sequence[Stage[CaseT]]:
        """The cases by environment, in order (default: one stage, implementations in turn)."""
        return [Stage(None, cases)]

    def environment(
        self, stage: Stage[CaseT], jobs: Sequence[Job[CaseT, CapsT]], table: ProcessTable
    ) -> AbstractContextManager[Any]:
        """What the supported ``jobs`` of ``stage`` run in (default: nothing)."""
        return nullcontext(None)

    def run_jobs(
        self,
        env: Any,
        jobs: Sequence[Job[CaseT, CapsT]],
        table: ProcessTable,
        record: Callable[[Job[CaseT, CapsT], CaseResult], None],
    ) -> str | None:
        """Every job of a stage (default: :meth:`run_case` on :attr:`jobs` threads), each
        result recorded; the problem of the whole stage, if it has one (a broker target that
        could not be started: the implementation's problem in the report)."""

        def one(i: int) -> None:
            record(jobs[i], self.run_case(env, jobs[i], table))

        run_parallel(len(jobs), one, self.jobs, table)
        return None


#: the sides added as plug-ins (:func:`plug`), by name: ``check --side NAME`` runs one with
#: ``--cmd`` adapters, under the run's :class:`Settings`
PLUGGED: dict[str, Callable[[Settings], Side[Any, Any]]] = {}


def plug(name: str, factory: Callable[[Settings], Side[Any, Any]]) -> None:
    """Add the side ``name`` (made by ``factory`` from a run's settings) to ``check --side``.
    ValueError for the name of a side the kit has (``harness.registry.SIDES``)."""
    if name in SIDES:
        raise ValueError(f"{name} is a side of the kit; a plugged side needs a name of its own")
    PLUGGED[name] = factory


@dataclass
class _Row:
    """What the loop keeps of one implementation while the side runs."""

    impl: Implementation
    caps: CapabilityDocument
    problem: str | None
    seconds: float
    results: dict[tuple[int, int], CaseResult] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)


def run_side(
    side: Side[CaseT, CapsT],
    impls: Sequence[Implementation],
    cases: Sequence[CaseT],
    table: ProcessTable,
    progress: ProgressCallback | None = None,
) -> list[ImplementationRun]:
    """Every implementation over ``cases`` on ``side``; one :class:`ImplementationRun` per
    implementation, in the order of ``impls``, its results in the order of the side's stages
    and, within one, of ``cases``."""
    rows: list[_Row] = []
    caps_of: list[CapsT] = []
    for impl in impls:
        t0 = time.monotonic()
        caps, problem = side.capabilities(impl, table)
        impl = side.named(impl, caps)
        name = side.row_name(impl.name)
        if name in {r.impl.name for r in rows}:  # two --cmd adapters, one name
            name = f"{name}#{len(rows) + 1}"
        rows.append(_Row(replace(impl, name=name), caps, problem, time.monotonic() - t0))
        caps_of.append(caps)
    stages = side.stages(cases)
    total = sum(len(s.cases) for s in stages)
    lock = threading.Lock()
    overall: Counter[str] = Counter()
    where: dict[int, tuple[int, int, int]] = {}  # id(job) -> (row, stage index, case index)

    def put(row: int, at: tuple[int, int], result: CaseResult) -> None:
        with lock:
            r = rows[row]
            r.results[at] = result
            r.counts[result.status] += 1
            overall[result.status] += 1
            if progress is None:
                return
            if side.title is None:
                progress(r.impl.name, r.counts.total(), total, r.counts)
            else:
                progress(r.impl.name, overall.total(), total * len(rows), overall)

    def record(job: Job[CaseT, CapsT], result: CaseResult) -> None:
        row, s_index, c_index = where[id(job)]
        put(row, (s_index, c_index), result)

    for s_index, stage in enumerate(stages):
        groups = [[i] for i in range(len(rows))] if stage.in_turn else [list(range(len(rows)))]
        for members in groups:
            jobs: list[Job[CaseT, CapsT]] = []
            for c_index, case in enumerate(stage.cases):
                for i in members:
                    caps = caps_of[i]
                    why = caps.invalid or None
                    status = "error"
                    if why is None:
                        why, status = side.unsupported(case, caps), "unsupported"
                    if why is not None:
                        put(i, (s_index, c_index), _result(rows[i].impl, case, status, why))
                        continue
                    job = Job(rows[i].impl, caps, case)
                    jobs.append(job)
                    where[id(job)] = (i, s_index, c_index)
            if not jobs:
                continue

            t0 = time.monotonic()
            try:
                with side.environment(stage, jobs, table) as env:
                    problem = side.run_jobs(env, jobs, table, record)
                where.clear()
                for i in members:
                    rows[i].problem = rows[i].problem or problem
            finally:
                for i in members:
                    rows[i].seconds += time.monotonic() - t0
    return [
        ImplementationRun(
            r.impl,
            r.caps,
            r.problem,
            [r.results[k] for k in sorted(r.results)],
            r.seconds,
            side=side.name,
        )
        for r in rows
    ]


def judged(impl: str, case: Identified, judgement: Judgement, level: str, **kw: Any) -> CaseResult:
    """The result of ``judgement`` at ``level`` (``conformance.levels``): its verdict, the findings
    above the level, the level reached (none for an ``error``); ``kw``: ``stderr``,
    ``seconds``."""
    v = judgement.verdict(level)
    reached = None if v.status == "error" else judgement.reached()
    return CaseResult(
        impl, case.id, case.group, v.status, v.reason, list(v.diff),
        findings=list(v.findings), level=reached, **kw,
    )  # fmt: skip


def _result(impl: Implementation, case: Identified, status: str, reason: str) -> CaseResult:
    return CaseResult(impl.name, case.id, case.group, status, reason)


def select(cases: Sequence[T], globs: Sequence[str] | None) -> list[T]:
    """The cases of any side (or producer scenarios) whose id or name matches one of
    ``globs`` (``fnmatch``, case-sensitive; all of them when there are none)."""
    if not globs:
        return list(cases)

    def names(case: Any) -> list[str]:
        return [n for n in (getattr(case, "id", None), getattr(case, "name", None)) if n]

    return [c for c in cases if any(fnmatchcase(n, g) for n in names(c) for g in globs)]


def ask_capabilities(
    table: ProcessTable, impl: Implementation, timeout: float
) -> tuple[str | None, str | None]:
    """What ``CMD capabilities`` printed (None: nothing usable) and, when it failed, the
    problem (the protocol's defaults then apply)."""
    exchange = run_once(
        table, [*impl.argv, "capabilities"], b"", env=impl.env, timeout=timeout, limit=1 << 20
    )
    text = exchange.output.decode("utf-8", "replace") if exchange.output is not None else None
    problem = None
    if exchange.problem:
        problem = f"`capabilities` failed ({exchange.problem}): the protocol's defaults apply"
    return text, problem


def named(impl: Implementation, caps: CapabilityDocument) -> Implementation:
    """``impl``, named: a ``--cmd`` adapter (no name) by the name it declares, else by its
    program's name."""
    if impl.name:
        return impl
    words = [w for w in impl.argv if not w.startswith("-")] or list(impl.argv)
    return replace(impl, name=caps.name or Path(words[-1]).name)


def run_parallel(count: int, one: Callable[[int], None], jobs: int, table: ProcessTable) -> None:
    """``one(i)`` for every ``i < count`` on ``jobs`` threads; on Ctrl-C or a bug every adapter
    process of ``table`` is stopped first, so that no worker waits for a deadline."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        for future in [pool.submit(one, i) for i in range(count)]:
            future.result()
    except BaseException:
        table.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


#: the characters of an implementation's name kept as they are in its ``--keep`` directory
_KEEP_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+#@=,~")
#: the longest ``--keep`` directory name (a file name has at most 255 bytes)
_KEEP_LONGEST = 200


def keep_name(name: str) -> str:
    """An implementation's name (the adapter declares it, or it is the command's path) as
    the name of its ``--keep`` directory: one path component, printable ASCII, never ``.``,
    ``..`` or hidden; distinct names give distinct directories.

    Every character but letters, digits and ``-_.+#@=,~`` is ``%XX`` per UTF-8 byte (a
    path separator, ``%`` itself, a control character, non-ASCII), and so is a leading
    ``.``: the directory name percent-decodes to the name. The empty name is ``%empty``; a
    name longer than 200 characters so escaped keeps its first 180, then ``%~`` and 16 hex
    digits of its SHA-256 (neither form is the escape of another name)."""
    if not name:
        return "%empty"
    raw = name.encode("utf-8", "surrogatepass")
    out = []
    for i, ch in enumerate(name):
        if ch in _KEEP_SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    safe = "".join(out)
    if len(safe) <= _KEEP_LONGEST:
        return safe
    head = safe[:180]
    cut = head.rfind("%", len(head) - 2)  # not in the middle of an escape
    if cut >= 0:
        head = head[:cut]
    return f"{head}%~{hashlib.sha256(raw).hexdigest()[:16]}"
