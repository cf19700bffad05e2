"""The report of a check run as one JSON document; every other view renders this document.

``kafka-conformance/check/1``::

    {"format", "side" ("decode" | "producer"), "kit_version", "created",
     # "columns": [[header, text], ...] the summary's capability cells (capability_columns)
     "settings": {jobs, timeout, output_limit, cases_glob},
     "complete": bool,                    # every case of the corpora was run
     "implementations": [{"name", "argv", "source", "capabilities", "capabilities_problem",
                          "seconds", "counts": {pass, fail, unsupported, error}, "known", "build"}],
     "groups": [group, ...],              # in corpus order
     "cases": {id: {"group", "mode", "size", "path", "description", "outcome", "hex",
                    "hex_truncated"}},
     "results": [{"impl", "case", "group", "status", "reason", "diff", "stderr", "seconds",
                  "divergence": index into "divergences" or null (the first explaining it),
                  "divergences": [every index explaining one of its lines]}],
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

__all__ = [
    "DECODE",
    "FORMAT",
    "HEX_BYTES",
    "PRODUCER",
    "build",
    "case_documents",
    "unknown_problems",
]

FORMAT = "kafka-conformance/check/1"
#: what a report judges (its ``side``): decoders (``check``) or producers and encoders
#: (``check-producer``)
DECODE = "decode"
PRODUCER = "producer"
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
    side: str = DECODE,
    every_case: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The report document of ``runs`` over the cases ``case_docs`` (:func:`case_documents`
    for a decoder run; ``side`` is :data:`DECODE` or :data:`PRODUCER`). ``every_case``: the
    ids of every case there is, for a run over some (``complete`` False): a known divergence
    is stale there when the run covered every case it names and it explained none."""
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
            entries = (
                dv.classify(known, r.impl, r.case, r.diff or [r.reason])
                if r.status in ("fail", "error")
                else []
            )
            doc["divergence"] = index[id(entries[0])] if entries else None
            doc["divergences"] = [index[id(e)] for e in entries]
            for e in entries:
                used[index[id(e)]] += 1
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
            }
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
