"""A hunt's findings on disk and in the one report of every run.

One directory per finding (``<out>/<impl>/<kind>-<id>/``, the implementation's name as
``harness.runner.keep_name`` makes it a path component)::

    finding.json   impl, kind (adapter | kit), signature, status, mode, reason, diff, hits,
                   confirmed, the known divergences that explain it, the reproduction command
    input.bin      the first input that showed it;  input.min.bin  the minimized one
    kafka.json     Kafka's document of input.min.bin (the Java oracle's)
    ours.json      the kit's reference;  adapter.json  what the adapter printed
    corpora/regressions/stream/fuzz-<id>.bin, .json
                   the minimized input as a case with Kafka's verdict (``check --corpora
                   <dir>/corpora`` runs it: the reproduction), ready for ``fuzz --promote``

A consume finding (``consume-<id>``, its input a partition) has ``input/t-0/`` (the first
partition's segments) instead of the ``.bin`` files, and its case is a stored consume
scenario, ``corpora/consume/fuzz-<id>/`` (``scenario.json``, ``log/t-0/``, and Kafka's
consumer's ``expected.json``), run by ``check --side consume --corpora <dir>/corpora``.

The report is ``kafka-conformance/check/2`` (``harness.report.model``, side ``decode`` or
``consume``, each hunt's own): one result per adapter finding (its case the finding's
case), so the terminal, JSON, JUnit and HTML views are those of ``check``; its ``fuzz``
member has each hunt's counts and rate, every finding (the kit's own too) and its
reproduction command.
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.corpus import consume as consume_corpus
from conformance.errors import CorpusError
from conformance.fakebroker import FakeBroker, write_log
from conformance.fuzz_check.consume import ConsumeHunt
from conformance.fuzz_check.hunt import ADAPTER, CONSUME_TARGET, KIT, Finding, Hunt
from conformance.fuzz_check.inputs import Partition
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.consumer import ConsumeCase, consume_case_documents
from conformance.harness.report import model
from conformance.harness.runner import CaseResult, ImplementationRun, keep_name
from conformance.jvm.message_defs import message_schemas
from conformance.jvm.oracle import OracleServer
from conformance.levels import DEFAULT_LEVEL

__all__ = [
    "Written",
    "kit_findings",
    "promote_consume",
    "report",
    "reproduction",
    "write_finding",
]

#: the prefix of the evidence lines a result carries (``divergences.EVIDENCE``)
_E = dv.EVIDENCE


@dataclass
class Written:
    """A finding and where it was written (``case``: its case, None for the kit's own or an
    unconfirmed finding, which ``check`` cannot judge without Kafka's verdict)."""

    finding: Finding
    path: Path
    case: Case | ConsumeCase | None
    reproduce: str | None


def reproduction(
    hunt: Hunt, corpora: Path, level: str = DEFAULT_LEVEL, known: Sequence[str] = ()
) -> str:
    """The one ``check`` command that runs the finding's case through the same adapter."""
    source = hunt.impl.source
    words = ["kafka-conformance", "check"]
    if "command" in source:
        words += ["--cmd", str(source["command"])]
    else:
        words += ["--impl", hunt.impl.name]
    if hunt.side != "decode":
        words += ["--side", hunt.side]
    words += ["--corpora", str(corpora)]
    if level != DEFAULT_LEVEL:
        words += ["--level", level]
    for k in known:
        words += ["--known", k]
    return shlex.join(words)


def _dump(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def write_finding(
    hunt: Hunt, finding: Finding, root: Path, level: str, known_files: Sequence[str] = ()
) -> Written:
    """``finding`` of ``hunt`` written under ``root`` (the module docstring)."""
    where = root / keep_name(hunt.impl.name) / f"{finding.kind}-{finding.id}"
    where.mkdir(parents=True, exist_ok=True)
    if finding.target == CONSUME_TARGET:
        return _write_consume(hunt, finding, where, level, known_files)
    (where / "input.bin").write_bytes(finding.data)
    (where / "input.min.bin").write_bytes(finding.minimized)
    for name, doc in (
        ("kafka", finding.kafka),
        ("ours", finding.ours),
        ("adapter", finding.adapter),
    ):
        if doc is not None:
            _dump(where / f"{name}.json", doc)
    case: Case | None = None
    reproduce: str | None = None
    found = time.strftime("%Y-%m-%d", time.gmtime())
    if finding.kafka is not None and finding.kind == ADAPTER:
        stream = where / "corpora" / "regressions" / "stream"
        stream.mkdir(parents=True, exist_ok=True)
        name = f"fuzz-{finding.id}"
        (stream / f"{name}.bin").write_bytes(finding.minimized)
        note = f"found by fuzz --against in {finding.impl}: {finding.reason}"
        _dump(
            stream / f"{name}.json",
            {
                "target": "stream",
                "kind": finding.kind,
                "signature": finding.signature,
                "note": note,
                "found": found,
                "mode": finding.mode,
                "expected": finding.kafka,
                "expected_by": "Java oracle (kafka-clients) via `kafka-conformance fuzz --against`",
            },
        )
        case = Case(
            id=finding.case_id,
            group="fuzz",
            mode=finding.mode,
            path=stream / f"{name}.bin",
            expected_path=stream / f"{name}.json",
            expected_key="expected",
            description=note,
        )
        reproduce = reproduction(hunt, where / "corpora", level, known_files)
    doc = finding_document(finding) | {"first_seen": found, "reproduce": reproduce}
    _dump(where / "finding.json", doc)
    return Written(finding, where, case, reproduce)


def _write_consume(
    hunt: Hunt, finding: Finding, where: Path, level: str, known_files: Sequence[str]
) -> Written:
    """A consume finding (the module docstring)."""
    assert isinstance(hunt, ConsumeHunt) and isinstance(finding.data, Partition)
    first = where / "input" / f"{consume_corpus.TOPIC}-0"
    if first.exists():
        shutil.rmtree(first)
    write_log(first, finding.data.log())
    for name, doc in (("kafka", finding.kafka), ("adapter", finding.adapter)):
        if doc is not None:
            _dump(where / f"{name}.json", doc)
    corpora = where / "corpora"
    scenario = hunt.scenario_of(finding, f"fuzz-{finding.id}")
    assert isinstance(finding.minimized, Partition) and finding.kafka is not None
    consume_corpus.write_stored(corpora, scenario, finding.minimized.log(), finding.kafka)
    case = ConsumeCase(finding.case_id, scenario, corpora)
    reproduce = reproduction(hunt, corpora, level, known_files)
    found = time.strftime("%Y-%m-%d", time.gmtime())
    doc = finding_document(finding) | {"first_seen": found, "reproduce": reproduce}
    _dump(where / "finding.json", doc)
    return Written(finding, where, case, reproduce)


def finding_document(f: Finding) -> dict[str, Any]:
    """What ``finding.json`` and the report's ``fuzz`` member say of a finding."""
    return {
        "target": f.target,  # a record stream, or a partition (``fuzz --promote``)
        "impl": f.impl,
        "kind": f.kind,
        "id": f.id,
        "case": f.case_id if f.kind == ADAPTER else None,
        "signature": f.signature,
        "status": f.status,
        "mode": f.mode,
        "reason": f.reason,
        "diff": f.diff,
        "hits": f.hits,
        "first_input": f.first_input,
        "input_size": f.size,
        "minimized_size": f.minimized_size,
        "minimized_hex": _hex(f.minimized, 4096),
        "minimized_partition": (
            f.minimized.describe() if isinstance(f.minimized, Partition) else None
        ),
        "confirmed": f.confirmed,
        "unconfirmed": f.unconfirmed,
        "known": [{"class": d.cls, "summary": d.summary, "source": d.source} for d in f.known],
        "new": f.kind == ADAPTER and not f.known,
    }


def _hex(data: Any, limit: int) -> str | None:
    """A stream's bytes as hex (None past ``limit``); a partition's segments, each as hex
    (``;`` between them) when they fit together."""
    parts = [data] if isinstance(data, bytes) else [s.data for s in data.segments]
    return ";".join(p.hex() for p in parts) if sum(map(len, parts)) <= limit else None


def _result(w: Written) -> CaseResult:
    f = w.finding
    shown = _hex(f.minimized, 256)
    if isinstance(f.minimized, Partition):
        shown = f"{f.minimized.describe()}: {shown or 'more than 256 bytes'}"
    evidence = [
        f"{_E}found {f.hits} time(s); minimized from {f.size} to {f.minimized_size} bytes",
        f"{_E}input (minimized): {shown or f.minimized[:256].hex() + '...'}",
    ]
    if w.reproduce:
        evidence.append(f"{_E}reproduce: {w.reproduce}")
    if not f.confirmed:
        evidence.append(f"{_E}not confirmed by Kafka's classes: {f.unconfirmed}")
    return CaseResult(
        f.impl, f.case_id, "fuzz", f.status, f.reason, [*f.diff, *evidence], level=None
    )


def report(
    hunts: Sequence[tuple[Hunt, Sequence[Written]]],
    known: Sequence[dv.Divergence],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The run's report (the module docstring)."""
    runs: list[ImplementationRun] = []
    docs: dict[str, dict[str, Any]] = {}
    fuzz: list[dict[str, Any]] = []
    for hunt, written in hunts:
        mine = [w for w in written if w.finding.kind == ADAPTER]
        results = [_result(w) for w in mine]
        docs |= model.case_documents([w.case for w in mine if isinstance(w.case, Case)])
        docs |= consume_case_documents([w.case for w in mine if isinstance(w.case, ConsumeCase)])
        for w in mine:
            if w.case is None:  # unconfirmed: no case file; the report still names it
                docs[w.finding.case_id] = model.case_document(
                    "fuzz", w.finding.mode, str(w.path / "input.min.bin"),
                    w.finding.reason, w.finding.minimized, len(w.finding.minimized), "error",
                )  # fmt: skip
        impl = hunt.impl
        if isinstance(hunt, ConsumeHunt):
            impl = replace(impl, name=hunt.row)
        runs.append(
            ImplementationRun(impl, hunt.caps, None, results, hunt.stats.seconds, side=hunt.side)
        )
        fuzz.append(
            {
                "impl": impl.name,
                "side": hunt.side,
                "stats": hunt.stats.to_dict(),
                "oracle_problem": hunt.oracle_problem,
                "findings": [
                    finding_document(w.finding) | {"path": str(w.path), "reproduce": w.reproduce}
                    for w in written
                ],
            }
        )
    doc = model.build(runs, docs, settings, known, complete=False)
    doc["fuzz"] = {"hunts": fuzz, "seed": settings.get("seed")}
    return doc


def kit_findings(hunts: Sequence[tuple[Hunt, Sequence[Written]]]) -> list[Written]:
    """The kit's own findings of every hunt (its reference differs from Kafka)."""
    return [w for _, written in hunts for w in written if w.finding.kind == KIT]


def promote_consume(finding: Path, corpora: Path, name: str, note: str) -> Path:
    """A consume finding's scenario (``<finding>/corpora/consume/fuzz-<id>/``) stored as
    ``<corpora>/consume/<name>/``, described by ``note``, after Kafka's consumer read its
    partition again and delivered the document the finding holds (``CorpusError`` when it
    does not: a verdict that does not repeat is no corpus case; ``OracleError`` when it
    cannot run). Returns the directory written."""
    found = consume_corpus.stored_scenarios(finding / "corpora")
    if len(found) != 1:
        raise CorpusError(f"{finding}: not a consume finding (no corpora/consume/fuzz-*/)")
    source = finding / "corpora"
    scenario = found[0]
    expected = consume_corpus.read_expected(source, scenario)
    schemas = message_schemas(consume_corpus.DEFINITIONS, clients_only=True)
    served = consume_corpus.served(source, scenario, schemas)
    with OracleServer() as oracle, FakeBroker(served) as broker:
        again = oracle.consume(
            broker.bootstrap, served.topic, served.partition, isolation=scenario.isolation
        )
    if again != expected:
        raise CorpusError(
            f"{finding}: Kafka's consumer, asked again, delivered another document: "
            "not a case (the finding does not repeat)"
        )
    stored = replace(scenario, name=name, description=note or scenario.description)
    return consume_corpus.write_stored(corpora, stored, served.log, again)
