"""The consumer side of ``check``: real consumers read the consume scenarios
(``corpora/consume/``) through the fake broker, and what they deliver is judged against Kafka's
own ``KafkaConsumer`` (docs/adapter-protocol.md, "The consumer side").

For each scenario the fake broker serves its partition; the adapter runs
``CMD consume --bootstrap HOST:PORT --topic T --partition 0 --from earliest --isolation L
--timeout-ms N`` as one process (the runner's deadline, output limit and process-group kill
apply), and prints one ``kafka-conformance/consume/1`` document:

============  ===================================================================
rule          verdict
============  ===================================================================
records       the same records in the same order as Kafka's consumer delivered
              (offset, timestamp, timestampType, key, value, headers)
no error      when Kafka's consumer delivered everything without an exception
an error      when Kafka's consumer raised one: any class (the library's own names
              differ), but ``timeout`` (the adapter's deadline: the consumer stalled)
              is "stalls", and no error at all "goes on" (more records) or "stops
              without an error"
unsupported   a scenario whose only fault is a checksum error, for an adapter that
              declares ``checks_crc`` false (its library's default)
============  ===================================================================
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.corpus import consume as corpus
from conformance.corpus import golden
from conformance.fakebroker import FakeBroker
from conformance.harness.judge import Verdict
from conformance.harness.process import ProcessTable, crash_line, run_once
from conformance.harness.runner import (
    CaseResult,
    Implementation,
    ImplementationRun,
    ProgressCallback,
    Settings,
    capabilities_of,
    run_parallel,
)
from conformance.jsondoc import read_json
from conformance.jvm.oracle import CONSUME_FORMAT, consume_argv
from conformance.messages.schema import Schemas

__all__ = [
    "GROUP",
    "RECORD_KEYS",
    "ConsumeCase",
    "ConsumeRun",
    "consume_case",
    "consume_case_documents",
    "judge_consume",
    "read_consume_cases",
    "run_consumer",
]

#: the report group of every consume case
GROUP = "consume"
#: what is compared of each delivered record
RECORD_KEYS = ("offset", "timestamp", "timestampType", "key", "value", "headers")
#: the adapter's own deadline, as a share of the runner's (so it reports a stall itself)
_ADAPTER_SHARE = 0.75
_TIMEOUT = "timeout"


@dataclass(frozen=True)
class ConsumeCase:
    id: str
    scenario: corpus.ConsumeScenario
    root: Path

    group = GROUP

    @property
    def description(self) -> str:
        return self.scenario.description

    def expected(self) -> dict[str, Any]:
        return corpus.read_expected(self.root, self.scenario)


def read_consume_cases(root: Path | None = None) -> list[ConsumeCase]:
    """Every scenario of ``<root>/consume`` that has its reference document (``root``: the
    corpora directory, default ``corpora/`` of the checkout)."""
    root = Path(root) if root is not None else golden.default_root()
    return [
        ConsumeCase(f"{GROUP}/{s.name}", s, root)
        for s in corpus.SCENARIOS
        if (root / corpus.CONSUME_DIR / s.name / "expected.json").is_file()
    ]


def consume_case_documents(cases: Sequence[ConsumeCase]) -> dict[str, dict[str, Any]]:
    """The ``cases`` members of a report for consume cases."""
    docs: dict[str, dict[str, Any]] = {}
    for case in cases:
        d = corpus.partition_dir(case.root, case.scenario)
        logs = sorted(d.glob("*.log"))
        head = logs[0].read_bytes()[:512] if logs else b""
        expected = case.expected()
        docs[case.id] = {
            "group": GROUP,
            "mode": "consume",
            "size": sum(p.stat().st_size for p in logs),
            "path": d.relative_to(case.root.parent).as_posix()
            if d.is_relative_to(case.root.parent)
            else d.as_posix(),
            "description": f"{case.scenario.description} ({case.scenario.isolation})",
            "outcome": "error" if expected.get("error") else "ok",
            "hex": head.hex(),
            "hex_truncated": bool(logs) and logs[0].stat().st_size > 512,
        }
    return docs


def _records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: r.get(k) for k in RECORD_KEYS} for r in doc.get("records") or []]


def judge_consume(expected: dict[str, Any], actual: Any) -> Verdict:
    """One consume document against Kafka's consumer's (the rules of the module docstring)."""
    if not isinstance(actual, dict) or actual.get("format") != CONSUME_FORMAT:
        return Verdict("error", f"not a {CONSUME_FORMAT} document")
    if not isinstance(actual.get("records"), list):
        return Verdict("error", "no records list")
    error = actual.get("error")
    if error is not None and not (isinstance(error, dict) and isinstance(error.get("class"), str)):
        return Verdict("error", 'error is neither null nor {"class": ..., "message": ...}')
    want, got = _records(expected), _records(actual)
    diff = _diff(want, got)
    kafka_error = expected.get("error")
    if kafka_error is None:
        if error is not None:
            return Verdict(
                "fail",
                f"raised {error['class']}: {error.get('message')} where Kafka's consumer "
                f"delivered every record",
                diff,
            )
        if diff:
            return Verdict("fail", diff[0], diff)
        return Verdict("pass")
    if error is not None and error["class"] == _TIMEOUT:
        return Verdict("fail", f"stalls where Kafka's consumer raises {kafka_error['class']}", diff)
    if error is None:
        if len(got) > len(want) and got[: len(want)] == want:
            what = f"goes on ({len(got) - len(want)} more records)"
        else:
            what = "stops without an error"
        return Verdict("fail", f"{what} where Kafka's consumer raises {kafka_error['class']}", diff)
    if diff:
        return Verdict("fail", diff[0], diff)
    return Verdict("pass")


def _diff(want: list[dict[str, Any]], got: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for i, (w, g) in enumerate(zip(want, got)):
        for k in RECORD_KEYS:
            if w[k] != g[k]:
                lines.append(f"$.records[{i}].{k}: Kafka {w[k]!r:.80}, adapter {g[k]!r:.80}")
        if len(lines) >= 20:
            return lines
    if len(got) != len(want):
        lines.append(f"$.records: Kafka delivered {len(want)} records, the adapter {len(got)}")
    return lines


@dataclass(frozen=True)
class ConsumeRun:
    """One consume case through one adapter: the verdict and the (API key, version) of every
    request the fake broker read from the client, in arrival order."""

    result: CaseResult
    requests: list[tuple[int, int]]


def consume_case(
    impl: Implementation,
    case: ConsumeCase,
    settings: Settings,
    table: ProcessTable,
    schemas: Schemas,
    *,
    checks_crc: bool = True,
    version_cap: int | None = None,
    group: str | None = None,
) -> ConsumeRun:
    """``case`` through ``impl``'s ``consume`` against a fake broker of its own (claiming no
    API version above ``version_cap``, when given; ``group``: the optional ``--group``)."""
    if case.scenario.crc_error and not checks_crc:
        reason = "Kafka's consumer stops at a checksum error; the adapter declares checks_crc false"
        return ConsumeRun(CaseResult(impl.name, case.id, GROUP, "unsupported", reason), [])
    served = replace(corpus.served(case.root, case.scenario, schemas), version_cap=version_cap)
    with FakeBroker(served) as broker:
        argv = consume_argv(
            broker.bootstrap,
            served.topic,
            served.partition,
            isolation=case.scenario.isolation,
            timeout_ms=int(settings.timeout * 1000 * _ADAPTER_SHARE),
            group=group,
        )
        exchange = run_once(
            table,
            [*impl.argv, *argv],
            b"",
            env=impl.env,
            timeout=settings.timeout,
            limit=settings.output_limit,
        )
    requests = list(broker.seen)
    problem = exchange.problem
    if problem is not None or exchange.output is None:
        crash = crash_line(exchange.stderr) if problem else None
        reason = f"{problem}: {crash}" if crash else (problem or "no output")
        result = CaseResult(impl.name, case.id, GROUP, "error", reason)
    else:
        try:
            actual = read_json(exchange.output.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            result = CaseResult(impl.name, case.id, GROUP, "error", f"invalid JSON ({exc})")
        else:
            verdict = judge_consume(case.expected(), actual)
            result = CaseResult(
                impl.name, case.id, GROUP, verdict.status, verdict.reason, verdict.diff
            )
    result.stderr, result.seconds = exchange.stderr, exchange.seconds
    return ConsumeRun(result, requests)


def run_consumer(
    impl: Implementation,
    cases: Sequence[ConsumeCase],
    settings: Settings,
    table: ProcessTable,
    schemas: Schemas,
    progress: ProgressCallback | None = None,
    *,
    version_cap: int | None = None,
) -> ImplementationRun:
    """Every consume case through ``impl``'s ``consume`` (:func:`consume_case`)."""
    started = time.monotonic()
    caps, caps_problem = capabilities_of(table, impl, settings)
    if not impl.name:
        impl = replace(impl, name=caps.name or Path(impl.argv[-1]).name)
    results: list[CaseResult | None] = [None] * len(cases)
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def one(index: int) -> None:
        run = consume_case(
            impl,
            cases[index],
            settings,
            table,
            schemas,
            checks_crc=caps.checks_crc,
            version_cap=version_cap,
        )
        with lock:
            results[index] = run.result
            counts[run.result.status] += 1
            if progress is not None:
                progress(impl.name, sum(counts.values()), len(cases), counts)

    run_parallel(len(cases), one, settings.jobs, table)
    done = [r for r in results if r is not None]
    return ImplementationRun(impl, caps, caps_problem, done, time.monotonic() - started)
