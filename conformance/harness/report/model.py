"""The report of a check run as one JSON document; every other view renders this document.

``kafka-conformance/check/1``::

    {"format", "kit_version", "created", "settings": {jobs, timeout, output_limit, cases_glob},
     "complete": bool,                    # every case of the corpora was run
     "implementations": [{"name", "argv", "source", "capabilities", "capabilities_problem",
                          "seconds", "counts": {pass, fail, unsupported, error}, "known", "build"}],
     "groups": [group, ...],              # in corpus order
     "cases": {id: {"group", "mode", "size", "path", "description", "outcome", "hex",
                    "hex_truncated"}},
     "results": [{"impl", "case", "group", "status", "reason", "diff", "stderr", "seconds",
                  "divergence": index into "divergences" or null}],
     "divergences": [{"impl", "cases", "class", "summary", "detail", "source", "count"}],
     "stale": [index into "divergences", ...]}
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Sequence
from typing import Any

from conformance import __version__
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.runner import STATUSES, ImplementationRun, Settings
from conformance.jvm import runtime

__all__ = ["FORMAT", "HEX_BYTES", "build", "unknown_problems"]

FORMAT = "kafka-conformance/check/1"
#: bytes of each case's input shown (as hex) in the report's drill-down
HEX_BYTES = 512


def build(
    runs: Sequence[ImplementationRun],
    cases: Sequence[Case],
    settings: Settings,
    known: Sequence[dv.Divergence],
    *,
    complete: bool,
    globs: Sequence[str] | None = None,
    builds: dict[str, Any] | None = None,
) -> dict[str, Any]:
    groups: list[str] = []
    for case in cases:
        if case.group not in groups:
            groups.append(case.group)
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
    index = {id(d): i for i, d in enumerate(known)}
    used: Counter[int] = Counter()
    results: list[dict[str, Any]] = []
    impls: list[dict[str, Any]] = []
    for run in runs:
        known_count = 0
        for r in run.results:
            doc = r.to_dict()
            entry = dv.classify(known, r.impl, r.case) if r.status in ("fail", "error") else None
            doc["divergence"] = index[id(entry)] if entry is not None else None
            if entry is not None:
                used[index[id(entry)]] += 1
                known_count += 1
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
                "capabilities_problem": run.capabilities_problem,
                "seconds": round(run.seconds, 1),
                "counts": {s: counts.get(s, 0) for s in STATUSES},
                "known": known_count,
                "build": (builds or {}).get(run.impl.name),
            }
        )
    names = {run.impl.name for run in runs}
    relevant = [d for d in known if d.impl in names]
    stale = []
    if complete:
        stale = [index[id(d)] for d in relevant if used[index[id(d)]] == 0]
    return {
        "format": FORMAT,
        "kit_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "settings": {
            "jobs": settings.jobs,
            "timeout": settings.timeout,
            "output_limit": settings.output_limit,
            "cases_glob": list(globs or []),
        },
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


def unknown_problems(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Results that fail the run: ``fail`` or ``error`` not covered by a known divergence."""
    return [
        r for r in report["results"] if r["status"] in ("fail", "error") and r["divergence"] is None
    ]
