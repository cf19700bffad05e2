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

The report is ``kafka-conformance/check/2`` (``harness.report.model``, side ``decode``): one
result per adapter finding (its case the finding's case), so the terminal, JSON, JUnit and
HTML views are those of ``check``; its ``fuzz`` member has each hunt's counts and rate,
every finding (the kit's own too) and its reproduction command.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.fuzz_check.hunt import ADAPTER, KIT, Finding, Hunt
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.report import model
from conformance.harness.runner import CaseResult, ImplementationRun, keep_name
from conformance.levels import DEFAULT_LEVEL

__all__ = ["Written", "kit_findings", "report", "reproduction", "write_finding"]

#: the prefix of the evidence lines a result carries (``divergences.EVIDENCE``)
_E = dv.EVIDENCE


@dataclass
class Written:
    """A finding and where it was written (``case``: its case, None for the kit's own or an
    unconfirmed finding, which ``check`` cannot judge without Kafka's verdict)."""

    finding: Finding
    path: Path
    case: Case | None
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


def finding_document(f: Finding) -> dict[str, Any]:
    """What ``finding.json`` and the report's ``fuzz`` member say of a finding."""
    return {
        "target": "stream",  # its input is a record stream (``fuzz --promote``)
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
        "input_size": len(f.data),
        "minimized_size": len(f.minimized),
        "minimized_hex": f.minimized.hex() if len(f.minimized) <= 4096 else None,
        "confirmed": f.confirmed,
        "unconfirmed": f.unconfirmed,
        "known": [{"class": d.cls, "summary": d.summary, "source": d.source} for d in f.known],
        "new": f.kind == ADAPTER and not f.known,
    }


def _result(w: Written) -> CaseResult:
    f = w.finding
    evidence = [
        f"{_E}found {f.hits} time(s); minimized from {len(f.data)} to {len(f.minimized)} bytes",
        f"{_E}input (minimized): {f.minimized[:256].hex()}"
        + ("..." if len(f.minimized) > 256 else ""),
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
        docs |= model.case_documents([w.case for w in mine if w.case is not None])
        for w in mine:
            if w.case is None:  # unconfirmed: no case file; the report still names it
                docs[w.finding.case_id] = model.case_document(
                    "fuzz", w.finding.mode, str(w.path / "input.min.bin"),
                    w.finding.reason, w.finding.minimized, len(w.finding.minimized), "error",
                )  # fmt: skip
        runs.append(
            ImplementationRun(
                hunt.impl, hunt.caps, None, results, hunt.stats.seconds, side="decode"
            )
        )
        fuzz.append(
            {
                "impl": hunt.impl.name,
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
