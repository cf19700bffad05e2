"""The decode side of ``check``: an adapter's decoder over the corpora's cases, judged against
Kafka's documents (docs/adapter-protocol.md, "The decoder side").

==============  ===================================================================
step            how
==============  ===================================================================
capabilities    ``CMD capabilities`` (``judge.read_capabilities``, decode side)
unsupported     the case's features against them (``judge.unsupported_reason``)
environment     a persistent ``CMD serve`` per implementation and thread, when the
                adapter declares ``persistent`` (closed at the end of its run)
one case        ``CMD decode --as MODE`` with the case's bytes on stdin (or a request
                to the server); its document judged by ``judge.judgement`` at the
                level asked (``conformance.levels``)
==============  ===================================================================
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from conformance.harness.cases import Case, case_features, read_cases
from conformance.harness.judge import (
    DECODE,
    Capabilities,
    CapabilityError,
    judgement,
    read_capabilities,
    unsupported_reason,
)
from conformance.harness.process import ProcessTable, Server, run_once
from conformance.harness.report.model import case_documents
from conformance.harness.runner import (
    CaseResult,
    Implementation,
    Job,
    Settings,
    Side,
    Stage,
    ask_capabilities,
    judged,
)
from conformance.levels import DEFAULT_LEVEL

__all__ = ["AdapterSide", "DecodeSide", "capabilities_of", "decide"]

CaseT = TypeVar("CaseT")


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


def decide(case: Case, caps: Capabilities) -> tuple[bytes, dict[str, Any], str | None]:
    """The case's bytes, Kafka's document, and why ``caps`` exclude it (None: they do not)."""
    data, expected = case.data(), case.expected()
    return data, expected, unsupported_reason(case_features(case, data, expected), case.mode, caps)


class _Servers:
    """The persistent servers of one implementation's run: one per thread, started on first
    use, all closed when the run ends."""

    def __init__(self, table: ProcessTable, impl: Implementation) -> None:
        self.table, self.impl = table, impl
        self.local = threading.local()
        self.lock = threading.Lock()
        self.started: list[Server] = []

    def get(self) -> Server:
        if not hasattr(self.local, "server"):
            self.local.server = Server(self.table, [*self.impl.argv, "serve"], self.impl.env)
            with self.lock:
                self.started.append(self.local.server)
        server: Server = self.local.server
        return server


class AdapterSide(Side[CaseT, Capabilities]):
    """A side of ``check`` (decode, consume): its adapters' capabilities for the side
    (:func:`capabilities_of`), the cases judged at ``level``, the report's settings those of
    the run and the level."""

    def __init__(self, settings: Settings, level: str = DEFAULT_LEVEL) -> None:
        self.settings, self.level = settings, level
        self.jobs = settings.jobs

    def capabilities(
        self, impl: Implementation, table: ProcessTable
    ) -> tuple[Capabilities, str | None]:
        return capabilities_of(table, impl, self.settings, self.name)

    def settings_doc(self) -> dict[str, Any]:
        return self.settings.to_dict() | {"level": self.level}


class DecodeSide(AdapterSide[Case]):
    """Decoders over the corpora's cases (``check``, ``check --side decode``)."""

    name = DECODE

    def read_cases(self, corpora: Path) -> list[Case]:
        return read_cases(corpora)

    def unsupported(self, case: Case, caps: Capabilities) -> str | None:
        return decide(case, caps)[2]

    def documents(self, cases: Sequence[Case]) -> dict[str, dict[str, Any]]:
        return case_documents(cases)

    @contextmanager
    def environment(
        self, stage: Stage[Case], jobs: Sequence[Job[Case, Capabilities]], table: ProcessTable
    ) -> Iterator[_Servers | None]:
        if not jobs or not jobs[0].caps.persistent:
            yield None
            return
        servers = _Servers(table, jobs[0].impl)
        try:
            yield servers
        finally:
            for s in servers.started:
                s.close()

    def run_case(
        self, env: _Servers | None, job: Job[Case, Capabilities], table: ProcessTable
    ) -> CaseResult:
        case, name, s = job.case, job.impl.name, self.settings
        data, expected = case.data(), case.expected()
        if env is not None:
            exchange = env.get().request(case.mode, data, timeout=s.timeout, limit=s.output_limit)
        else:
            exchange = run_once(
                table,
                [*job.impl.argv, "decode", "--as", case.mode],
                data,
                env=job.impl.env,
                timeout=s.timeout,
                limit=s.output_limit,
            )
        actual, failure = exchange.document()
        if failure is not None:
            result = CaseResult(name, case.id, case.group, "error", failure)
        else:
            result = judged(
                name, case, judgement(expected, actual, job.caps, case.mode), self.level
            )
        result.stderr, result.seconds = exchange.stderr, exchange.seconds
        return result
