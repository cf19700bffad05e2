"""One implementation over many cases: capabilities, then a verdict per case, in parallel.

:func:`run_implementation` asks the adapter for its capabilities, decides which cases are
unsupported, and runs the rest on ``jobs`` threads, each with its own adapter process (a
persistent server when the adapter declares one, else one process per case). Whatever an
adapter does (hang, crash, flood, garbage), its case gets a verdict and the run goes on.
Capabilities that say something invalid are a verdict too: every case is an ``error`` with
the reason ``capabilities: <problem>`` (a ``capabilities`` command that fails or prints no
JSON object leaves the protocol's defaults instead).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from conformance.harness.cases import Case, case_features
from conformance.harness.judge import (
    DECODE,
    Capabilities,
    CapabilityError,
    Verdict,
    judge,
    read_capabilities,
    unsupported_reason,
)
from conformance.harness.process import ProcessTable, Server, crash_line, run_once
from conformance.jsondoc import JsonDocument, read_json

__all__ = [
    "CaseResult",
    "Implementation",
    "ImplementationRun",
    "Settings",
    "STATUSES",
    "capabilities_of",
    "keep_name",
    "named",
    "start",
    "Start",
    "run_parallel",
    "run_implementation",
]

STATUSES = ("pass", "fail", "unsupported", "error")


@dataclass(frozen=True)
class Implementation:
    """An adapter command to run (built-in or ``--cmd``); an empty ``name`` is replaced by
    the name the adapter declares in its capabilities."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None
    source: dict[str, Any] = field(default_factory=dict)  # registry description, for reports


@dataclass(frozen=True)
class Settings:
    jobs: int = 2
    timeout: float = 20.0
    #: bytes an adapter may print for one case
    output_limit: int = 64 << 20
    capabilities_timeout: float = 120.0


@dataclass
class CaseResult(JsonDocument):
    impl: str
    case: str
    group: str
    status: str
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    stderr: str = ""
    seconds: float = 0.0
    #: differences above the level asked (``harness.levels``): reported, never a failure
    findings: list[str] = field(default_factory=list)
    #: the highest level reached (``harness.levels``), for a side judged at levels
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


@dataclass
class ImplementationRun:
    impl: Implementation
    capabilities: Capabilities
    capabilities_problem: str | None
    results: list[CaseResult]
    seconds: float
    #: what was judged: ``decode``, ``consume`` or ``producer`` (producers and encoders)
    side: str = "decode"

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)


ProgressCallback = Callable[[str, int, int, Counter[str]], None]


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


def capabilities_of(
    table: ProcessTable, impl: Implementation, settings: Settings, side: str = DECODE
) -> tuple[Capabilities, str | None]:
    """The adapter's capabilities for ``side`` (``judge.DECODE``, ``judge.CONSUME``), and the
    problem when they are not what it declared: the protocol's defaults (its
    ``capabilities`` failed or printed no JSON object), or a capability error (``invalid``
    set: every case is then an ``error``)."""
    text, problem = ask_capabilities(table, impl, settings.capabilities_timeout)
    try:
        caps = read_capabilities(text, impl.name, side)
    except CapabilityError as exc:
        refused = Capabilities(
            name=impl.name or exc.name, declared=False, side=side, invalid=str(exc)
        )
        return refused, f"{exc}: every case is an error"
    if not caps.declared and problem is None:
        problem = "`capabilities` printed no JSON object: the protocol's defaults apply"
    return caps, problem


class _Identified(Protocol):
    """A case of either side, as a result names it."""

    @property
    def id(self) -> str: ...
    @property
    def group(self) -> str: ...


@dataclass
class Start:
    """An implementation about to run over ``total`` cases: named, its capabilities for the
    side and the problem with them; ``refused``: the whole run already (invalid capabilities:
    every case an ``error`` that says why). Workers :meth:`record` each case's result (from
    any thread, with progress); :meth:`finished` is the run."""

    impl: Implementation
    caps: Capabilities
    problem: str | None
    started: float
    refused: ImplementationRun | None
    total: int = 0
    progress: ProgressCallback | None = None
    results: list[CaseResult | None] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, index: int, result: CaseResult) -> None:
        with self.lock:
            self.results[index] = result
            self.counts[result.status] += 1
            if self.progress is not None:
                self.progress(self.impl.name, self.counts.total(), self.total, self.counts)

    def finished(self) -> ImplementationRun:
        done = [r for r in self.results if r is not None]
        seconds = time.monotonic() - self.started
        return ImplementationRun(self.impl, self.caps, self.problem, done, seconds)


def start(
    impl: Implementation,
    cases: Sequence[_Identified],
    settings: Settings,
    table: ProcessTable,
    progress: ProgressCallback | None = None,
    side: str = DECODE,
) -> Start:
    """What every run does first (decode and consume sides): ask the capabilities, name a
    ``--cmd`` adapter, and refuse every case (``id``, ``group``) when they are invalid."""
    started = time.monotonic()
    caps, problem = capabilities_of(table, impl, settings, side)
    impl = named(impl, caps)
    if not caps.invalid:
        return Start(impl, caps, problem, started, None, len(cases), progress, [None] * len(cases))
    results: list[CaseResult] = []
    for case in cases:
        results.append(CaseResult(impl.name, case.id, case.group, "error", caps.invalid))
        if progress is not None:
            progress(impl.name, len(results), len(cases), Counter(error=len(results)))
    run = ImplementationRun(impl, caps, problem, results, time.monotonic() - started)
    return Start(impl, caps, problem, started, run)


def decide(case: Case, caps: Capabilities) -> tuple[bytes, dict[str, Any], str | None]:
    """The case's bytes, Kafka's document, and why ``caps`` exclude it (None: they do not)."""
    data, expected = case.data(), case.expected()
    return data, expected, unsupported_reason(case_features(case, data, expected), case.mode, caps)


def named(impl: Implementation, caps: Capabilities) -> Implementation:
    """``impl``, named: a ``--cmd`` adapter (no name) by the name it declares, else by its
    program's name."""
    if impl.name:
        return impl
    words = [w for w in impl.argv if not w.startswith("-")] or list(impl.argv)
    return replace(impl, name=caps.name or Path(words[-1]).name)


def run_implementation(
    impl: Implementation,
    cases: Sequence[Case],
    settings: Settings,
    table: ProcessTable,
    progress: ProgressCallback | None = None,
) -> ImplementationRun:
    """Every case through ``impl``; one :class:`CaseResult` per case, in the order of ``cases``."""
    begun = start(impl, cases, settings, table, progress)
    if begun.refused is not None:
        return begun.refused
    impl, caps = begun.impl, begun.caps
    lock = threading.Lock()
    local = threading.local()
    servers: list[Server] = []

    def server() -> Server:
        if not hasattr(local, "server"):
            local.server = Server(table, [*impl.argv, "serve"], impl.env)
            with lock:
                servers.append(local.server)
        return local.server

    def one(index: int) -> None:
        case = cases[index]
        data, expected, reason = decide(case, caps)
        if reason is not None:
            result = CaseResult(impl.name, case.id, case.group, "unsupported", reason)
        else:
            if caps.persistent:
                exchange = server().request(
                    case.mode, data, timeout=settings.timeout, limit=settings.output_limit
                )
            else:
                exchange = run_once(
                    table,
                    [*impl.argv, "decode", "--as", case.mode],
                    data,
                    env=impl.env,
                    timeout=settings.timeout,
                    limit=settings.output_limit,
                )
            problem = exchange.problem
            crash = crash_line(exchange.stderr) if problem else None
            if crash:  # why it died, beside how: "exit code 2: panic: ..."
                problem = f"{problem}: {crash}"
            result = _verdict(impl.name, case, expected, caps, exchange.output, problem)
            result.stderr, result.seconds = exchange.stderr, exchange.seconds
        begun.record(index, result)

    try:
        run_parallel(len(cases), one, settings.jobs, table)
    finally:
        for s in servers:
            s.close()
    return begun.finished()


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


def _verdict(
    name: str,
    case: Case,
    expected: dict[str, Any],
    caps: Capabilities,
    output: bytes | None,
    problem: str | None,
) -> CaseResult:
    if problem is not None or output is None:
        return CaseResult(name, case.id, case.group, "error", problem or "no output")
    try:
        actual = read_json(output.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return CaseResult(name, case.id, case.group, "error", f"output is not UTF-8: {exc}")
    except ValueError as exc:
        preview = output[:80].decode("utf-8", "replace")
        return CaseResult(name, case.id, case.group, "error", f"invalid JSON ({exc}): {preview!r}")
    verdict: Verdict = judge(expected, actual, caps, case.mode)
    return CaseResult(name, case.id, case.group, verdict.status, verdict.reason, verdict.diff)


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
