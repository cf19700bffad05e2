"""The report of a check run as one JSON document; every other view renders this document.

``kafka-conformance/check/1``::

    {"format", "side" ("decode" | "consume" | "decode+consume" | "producer"), "kit_version",
     "created",
     # "columns": [[header, text], ...] the summary's capability cells (capability_columns)
     "settings": {jobs, timeout, output_limit, cases_glob, level (producer side)},
     "complete": bool,                    # every case of the corpora was run
     "implementations": [{"name", "argv", "source", "capabilities", "capabilities_problem",
                          "seconds", "counts": {pass, fail, unsupported, error}, "known", "build",
                          "side", producer side: "levels": {none, delivery, wire, java}
                          (cases reaching each), "with_findings"}],
     "groups": [group, ...],              # in corpus order
     "cases": {id: {"group", "mode", "size", "path", "description", "outcome", "hex",
                    "hex_truncated"}},
     "results": [{"impl", "case", "group", "status", "reason", "diff", "stderr", "seconds",
                  producer side: "level" (reached), "findings" (differences above the level),
                  "unexplained": [diff lines no entry explains, when entries explain others],
                  "divergence": index into "divergences" or null (the first explaining it),
                  "divergences": [every index explaining one of its lines]}],
     "divergences": [{"impl", "cases", "class", "summary", "detail", "source", "count"}],
     "stale": [index into "divergences", ...]}
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from conformance import __version__
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.levels import LEVELS, NONE
from conformance.harness.runner import STATUSES, ImplementationRun, Settings
from conformance.jvm import runtime

__all__ = [
    "CHECK_SIDES",
    "CONSUME",
    "DECODE",
    "DECODE_AND_CONSUME",
    "FORMAT",
    "HEX_BYTES",
    "PRODUCER",
    "build",
    "case_documents",
    "distinct_findings",
    "report_side",
    "unknown_problems",
]

FORMAT = "kafka-conformance/check/1"
#: what a report judges (its ``side``): decoders (``check``) or producers and encoders
#: (``check-producer``)
DECODE = "decode"
CONSUME = "consume"
PRODUCER = "producer"
#: a ``check`` report with decoders and consumers
DECODE_AND_CONSUME = "decode+consume"
#: the report sides ``check`` writes (``check-producer``: :data:`PRODUCER`)
CHECK_SIDES = (DECODE, CONSUME, DECODE_AND_CONSUME)
#: bytes of each case's input shown (as hex) in the report's drill-down
HEX_BYTES = 512


def capability_columns(side: str, caps: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary table's capability cells of an implementation, by report side."""
    if side == PRODUCER:
        cells = []
        for name in ("produce", "encode"):
            c = caps.get(name)
            if c is None:
                cells.append((name, "-"))
                continue
            features = [f for f in ("idempotence", "transactions", "headers") if c.get(f, True)]
            text = ", ".join(c.get("codecs", ["all codecs"])) + "; " + ", ".join(features)
            if name == "produce":
                text += f"; partitioner {c.get('partitioner', 'java')}"
            cells.append((name, text))
        return cells
    return [
        ("magics", ",".join(map(str, caps["magics"]))),
        ("codecs", ", ".join(caps["codecs"])),
        ("CRC", "checked" if caps["checks_crc"] else "not checked"),
        ("semantics, errors", f"{caps['error_semantics']}, {caps['error_classes']}"),
    ]


def case_documents(cases: Sequence[Case]) -> dict[str, dict[str, Any]]:
    """The ``cases`` member of a decoder report: each corpus case's document, in corpus
    order."""
    case_docs: dict[str, Any] = {}
    checkout = runtime.checkout_root()
    for case in cases:
        data = case.data()
        path = case.path.resolve()
        if checkout is not None and path.is_relative_to(checkout.resolve()):
            path = path.relative_to(checkout.resolve())
        case_docs[case.id] = {
            "group": case.group,
            "mode": case.mode,
            "size": len(data),
            "path": path.as_posix(),
            "description": case.description,
            "outcome": case.expected()["outcome"],
            "hex": data[:HEX_BYTES].hex(),
            "hex_truncated": len(data) > HEX_BYTES,
        }
    return case_docs


def build(
    runs: Sequence[ImplementationRun],
    case_docs: dict[str, dict[str, Any]],
    settings: Settings,
    known: Sequence[dv.Divergence],
    *,
    complete: bool,
    globs: Sequence[str] | None = None,
    builds: dict[str, Any] | None = None,
    every_case: Sequence[str] | None = None,
    level: str | None = None,
) -> dict[str, Any]:
    """The report document of ``runs`` over the cases ``case_docs`` (:func:`case_documents`
    for a decoder run). The report's side is its runs' (:func:`report_side`); ``level``: the
    judgement level asked, for a side judged at levels (``harness.levels``). ``every_case``:
    the ids of every case there is, for a run over some (``complete`` False): a known
    divergence is stale there when the run covered every case it names and it explained none.
    Only the known divergences of the implementations that ran are in the report."""
    side = report_side(runs)
    names = {run.impl.name for run in runs}
    known = [d for d in known if d.impl in names]
    groups: list[str] = []
    for doc in case_docs.values():
        if doc["group"] not in groups:
            groups.append(doc["group"])
    index = {id(d): i for i, d in enumerate(known)}
    used: Counter[int] = Counter()
    results: list[dict[str, Any]] = []
    impls: list[dict[str, Any]] = []
    for run in runs:
        known_count = 0
        for r in run.results:
            doc = r.to_dict()
            entries: list[dv.Divergence] = []
            if r.status in ("fail", "error"):
                entries, matched, unexplained = dv.explain(
                    known, r.impl, r.case, r.diff or [r.reason]
                )
                for e in matched:
                    used[index[id(e)]] += 1
                if unexplained and entries:
                    # entries explained some lines, not all: the result is not known, and the
                    # lines no entry explains are named
                    doc["unexplained"] = unexplained
                if unexplained:
                    entries = []
            doc["divergence"] = index[id(entries[0])] if entries else None
            doc["divergences"] = [index[id(e)] for e in entries]
            known_count += bool(entries)
            if r.status == "pass":
                doc.pop("diff"), doc.pop("stderr")
            results.append(doc)
        counts = run.counts()
        impls.append(
            {
                "name": run.impl.name,
                "argv": list(run.impl.argv),
                "source": run.impl.source or None,
                "capabilities": run.capabilities.to_dict(),
                "columns": capability_columns(side, run.capabilities.to_dict()),
                "capabilities_problem": run.capabilities_problem,
                "seconds": round(run.seconds, 1),
                "counts": {s: counts.get(s, 0) for s in STATUSES},
                "known": known_count,
                "build": (builds or {}).get(run.impl.name),
                "side": run.side,
            }
            | _levels(run)
        )
    # stale: an entry that explained nothing, though the run covered every case, or every
    # case (of ``every_case``) the entry names
    ran = {run.impl.name: {r.case for r in run.results} for run in runs}

    def covered(d: dv.Divergence) -> bool:
        named = [c for c in every_case or () if d.matches(d.impl, c)]
        return bool(named) and all(c in ran[d.impl] for c in named)

    stale = [
        index[id(d)]
        for d in known
        if d.impl in ran and used[index[id(d)]] == 0 and (complete or covered(d))
    ]
    return {
        "format": FORMAT,
        "side": side,
        "kit_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "settings": {
            "jobs": settings.jobs,
            "timeout": settings.timeout,
            "output_limit": settings.output_limit,
            "cases_glob": list(globs or []),
        }
        | ({"level": level} if level is not None else {}),
        "complete": complete,
        "implementations": impls,
        "groups": groups,
        "cases": case_docs,
        "results": results,
        "divergences": [
            {
                "impl": d.impl,
                "cases": list(d.cases),
                "class": d.cls,
                "summary": d.summary,
                "detail": d.detail,
                "source": d.source,
                "count": used[i],
            }
            for i, d in enumerate(known)
        ],
        "stale": stale,
    }


def report_side(runs: Sequence[ImplementationRun]) -> str:
    """What a report judges: the side of its runs (:data:`DECODE`, :data:`CONSUME`,
    :data:`PRODUCER`), or :data:`DECODE_AND_CONSUME` for a ``check`` that ran decoders and
    consumers."""
    sides = {run.side for run in runs}
    if sides == {DECODE, CONSUME}:
        return DECODE_AND_CONSUME
    return sides.pop() if len(sides) == 1 else DECODE


def _levels(run: ImplementationRun) -> dict[str, Any]:
    """For a side judged at levels: how many cases reach each level (``none``: not even the
    lowest), and how many passed or failed with findings (differences above the level
    asked)."""
    judged = [r for r in run.results if r.level is not None]
    if not judged and run.side != PRODUCER:
        return {}
    reached = Counter(r.level for r in judged)
    return {
        "levels": {name: reached.get(name, 0) for name in (NONE, *LEVELS)},
        "with_findings": sum(bool(r.findings) for r in run.results),
    }


#: where a grouped difference was seen (`` (at request 0 ... and 3 more)``), left out when
#: findings are counted per scenario
_WHERE = re.compile(r" \(at [^()]*\)$")


def distinct_findings(report: dict[str, Any], impl: str) -> dict[str, int]:
    """The findings of ``impl`` (differences above the level asked), each distinct text once
    (without where it was seen) with how many cases show it, in first-seen order."""
    seen: dict[str, int] = {}
    for r in report["results"]:
        if r["impl"] == impl:
            texts = {_WHERE.sub("", f) for f in r.get("findings", []) if not f.startswith("| ")}
            for f in sorted(texts):
                seen[f] = seen.get(f, 0) + 1
    return seen


def unknown_problems(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Results that fail the run: ``fail`` or ``error`` not covered by a known divergence."""
    return [
        r for r in report["results"] if r["status"] in ("fail", "error") and r["divergence"] is None
    ]
