"""The report of a check run as one JSON document; every other view renders this document.

``kafka-conformance/check/2`` (``--from-json`` reads check/1 too: :func:`upgraded`)::

    {"format", "side" ("decode" | "consume" | "decode+consume" | "produce" | "broker" | a plugged
             side's name),
     "kit_version",
     "corpus": {"version", "source" ("package" | "directory" | "kit"), "digest"},
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

:func:`report_problem` says what makes a document no such report (``--from-json`` renders
only documents it accepts: :data:`REPORT_SCHEMA`, and the indices and names that point into
the report point at something).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from conformance import __version__
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.runner import STATUSES, ImplementationRun
from conformance.jvm import runtime
from conformance.levels import LEVELS, NONE

__all__ = [
    "CHECK_SIDES",
    "CONSUME",
    "DECODE",
    "DECODE_AND_CONSUME",
    "FORMAT",
    "corpus_text",
    "HEX_BYTES",
    "PRODUCE",
    "FORMATS",
    "upgraded",
    "BROKER",
    "LEVELED_SIDES",
    "SCENARIO_SIDES",
    "is_leveled",
    "build",
    "REPORT_SCHEMA",
    "case_document",
    "case_documents",
    "distinct_findings",
    "report_problem",
    "report_side",
    "unknown_problems",
]

FORMAT = "kafka-conformance/check/2"
#: the formats ``--from-json`` reads (:func:`upgraded`): check/1 named the producer side
#: ``producer``, check/2 by its word, ``produce``
FORMATS = ("kafka-conformance/check/1", FORMAT)
#: what a report judges (its ``side``): decoders (``check``) or producers and encoders
#: (``check-producer``)
DECODE = "decode"
CONSUME = "consume"
PRODUCE = "produce"
#: a ``check-broker`` report (Kafka-compatible brokers)
BROKER = "broker"
#: the sides judged at levels (``conformance.levels``): every side of the kit (a check/1 report
#: of the decode or consume side has none: :func:`is_leveled`)
LEVELED_SIDES = (DECODE, CONSUME, PRODUCE, BROKER)
#: the sides whose cases are scenarios (the Markdown matrix has a table of each one's level)
SCENARIO_SIDES = (PRODUCE, BROKER)
#: a ``check`` report with decoders and consumers
DECODE_AND_CONSUME = "decode+consume"
#: the report sides ``check`` writes (``check-producer``: :data:`PRODUCE`)
CHECK_SIDES = (DECODE, CONSUME, DECODE_AND_CONSUME)
#: bytes of each case's input shown (as hex) in the report's drill-down
HEX_BYTES = 512


def capability_columns(side: str, caps: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary table's capability cells of an implementation, by report side."""
    if side == BROKER:
        apis = caps.get("apiVersions", {})
        shown = [f"{name} v{lo}-{hi}" for name, (lo, hi) in apis.items()]
        return [("judged as", str(caps.get("judgedAs", ""))), ("versions", ", ".join(shown))]
    if side == PRODUCE:
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
    if side not in CHECK_SIDES:  # a plugged side: what its capabilities say, as they say it
        said = {k: v for k, v in caps.items() if k not in ("name", "invalid") and v is not None}
        return [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in said.items()]
    return [
        ("magics", ",".join(map(str, caps["magics"]))),
        ("codecs", ", ".join(caps["codecs"])),
        ("CRC", "checked" if caps["checks_crc"] else "not checked"),
        ("semantics, errors", f"{caps['error_semantics']}, {caps['error_classes']}"),
    ]


def case_document(
    group: str,
    mode: str,
    path: str,
    description: str,
    head: bytes,
    size: int,
    outcome: str = "ok",
    shown: int = HEX_BYTES,
) -> dict[str, Any]:
    """One member of a report's ``cases`` (of any side): its group, mode, where it comes from,
    what it is, its input's size and first ``shown`` bytes of ``head`` (as hex), the outcome
    Kafka gives it."""
    return {
        "group": group,
        "mode": mode,
        "size": size,
        "path": path,
        "description": description,
        "outcome": outcome,
        "hex": head[:shown].hex(),
        "hex_truncated": len(head) > shown,
    }


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
        outcome = case.expected()["outcome"]
        case_docs[case.id] = case_document(
            case.group, case.mode, path.as_posix(), case.description, data, len(data), outcome
        )
    return case_docs


def corpus_text(report: dict[str, Any]) -> str:
    """The corpus a report was made with, in words: ``corpus 0.1.0 (package, sha256 1a2b3c4d5e6f)``
    (a report written before the corpus was recorded: ``corpus unrecorded``)."""
    c = report.get("corpus")
    if not c:
        return "corpus unrecorded"
    digest = f", sha256 {c['digest'][:12]}" if c.get("digest") else ""
    return f"corpus {c['version']} ({c['source']}{digest})"


def build(
    runs: Sequence[ImplementationRun],
    case_docs: dict[str, dict[str, Any]],
    settings: Mapping[str, Any],
    known: Sequence[dv.Divergence],
    *,
    complete: bool,
    globs: Sequence[str] | None = None,
    builds: dict[str, Any] | None = None,
    every_case: Sequence[str] | None = None,
    corpus: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report document of ``runs`` over the cases ``case_docs`` (:func:`case_documents`
    for a decoder run). The report's side is its runs' (:func:`report_side`); ``settings``: the
    side's (``Side.settings_doc``: ``jobs``, ``timeout``, ``output_limit``, and the judgement
    ``level`` asked of a side judged at levels, ``conformance.levels``). ``every_case``:
    the ids of every case there is, for a run over some (``complete`` False): a known
    divergence is stale there when the run covered every case it names and it explained none.
    Only the known divergences of the implementations that ran are in the report. ``corpus``:
    which corpus the cases came from (``corpus.package.identity``; the producer side's
    scenarios are the kit's own: its version)."""
    side = report_side(runs)
    names = {run.impl.name for run in runs}
    known = [d for d in known if any(d.about(n) for n in names)]
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
                # every view shows the version: a plugged side's document may have none
                "capabilities": {"version": ""} | run.capabilities.to_dict(),
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
    # stale: an entry that explained nothing, though its runs (the runs it is about:
    # ``Divergence.about``) covered every case (of ``every_case``) it names, or, in a run over
    # every case, one that names none of them
    ran = {run.impl.name: {r.case for r in run.results} for run in runs}

    def is_stale(d: dv.Divergence) -> bool:
        named = [c for c in every_case or () if d.matches(d.impl, c)]
        if not named:
            return complete
        cases = set().union(*(done for name, done in ran.items() if d.about(name)))
        return all(c in cases for c in named)

    stale = [index[id(d)] for d in known if used[index[id(d)]] == 0 and is_stale(d)]
    return {
        "format": FORMAT,
        "side": side,
        "kit_version": __version__,
        "corpus": corpus or {"version": __version__, "source": "kit", "digest": None},
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "settings": {
            "jobs": settings.get("jobs"),
            "timeout": settings.get("timeout"),
            "output_limit": settings.get("output_limit"),
            "cases_glob": list(globs or []),
        }
        | ({"level": settings["level"]} if settings.get("level") is not None else {}),
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


def is_leveled(report: dict[str, Any]) -> bool:
    """Whether the report's results were judged at levels (they reach one)."""
    return any("levels" in i for i in report["implementations"])


def upgraded(report: dict[str, Any]) -> dict[str, Any]:
    """A saved report of one of :data:`FORMATS` as a :data:`FORMAT` document: a check/1
    report's side ``producer`` is ``produce``; nothing else changed."""
    if report.get("format") == FORMATS[0]:
        side = report.get("side")
        report = report | {"format": FORMAT, "side": PRODUCE if side == "producer" else side}
    return report


def report_side(runs: Sequence[ImplementationRun]) -> str:
    """What a report judges: the side of its runs (:data:`DECODE`, :data:`CONSUME`,
    :data:`PRODUCE`, :data:`BROKER`, a plugged side), or :data:`DECODE_AND_CONSUME` for a
    ``check`` that ran decoders and consumers."""
    sides = {run.side for run in runs}
    if sides == {DECODE, CONSUME}:
        return DECODE_AND_CONSUME
    return sides.pop() if len(sides) == 1 else DECODE


def _levels(run: ImplementationRun) -> dict[str, Any]:
    """For a side judged at levels: how many cases reach each level (``none``: not even the
    lowest), and how many passed or failed with findings (differences above the level
    asked)."""
    judged = [r for r in run.results if r.level is not None]
    if not judged and run.side not in LEVELED_SIDES:
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


# ------------------------------------------------------------------------ a saved report

_STR: dict[str, Any] = {"type": "string"}
_STRS: dict[str, Any] = {"type": "array", "items": _STR}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_INDICES: dict[str, Any] = {"type": "array", "items": _COUNT}
_SECONDS: dict[str, Any] = {"type": "number", "minimum": 0}

#: what every view of a report (terminal, JUnit, HTML, Markdown) reads, with its type; other
#: members are allowed (and kept)
REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": [
        "format",
        "kit_version",
        "created",
        "settings",
        "implementations",
        "groups",
        "cases",
        "results",
        "divergences",
        "stale",
    ],
    "properties": {
        "format": {"const": FORMAT},
        "side": _STR,  # the kit's sides, or a plugged one (``runner.plug``)
        "kit_version": _STR,
        "corpus": {
            "type": "object",
            "required": ["version", "source"],
            "properties": {"version": _STR, "source": _STR, "digest": {"type": ["string", "null"]}},
        },
        "created": _STR,
        "settings": {"type": "object", "properties": {"level": {"type": ["string", "null"]}}},
        "complete": {"type": "boolean"},
        "implementations": {"type": "array", "items": {"$ref": "#/$defs/implementation"}},
        "groups": _STRS,
        "cases": {"type": "object", "additionalProperties": {"$ref": "#/$defs/case"}},
        "results": {"type": "array", "items": {"$ref": "#/$defs/result"}},
        "divergences": {"type": "array", "items": {"$ref": "#/$defs/divergence"}},
        "stale": _INDICES,
    },
    "$defs": {
        "implementation": {
            "type": "object",
            "required": [
                "name",
                "source",
                "capabilities",
                "capabilities_problem",
                "seconds",
                "counts",
                "known",
            ],
            "properties": {
                "name": _STR,
                "argv": _STRS,
                "source": {"type": ["object", "null"]},
                "capabilities": {
                    "type": "object",
                    "required": ["version"],
                    "properties": {"version": _STR},
                },
                "columns": {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "prefixItems": [_STR, _STR],
                        "minItems": 2,
                        "maxItems": 2,
                    },
                },
                "capabilities_problem": {"type": ["string", "null"]},
                "seconds": _SECONDS,
                "counts": {
                    "type": "object",
                    "required": list(STATUSES),
                    "properties": {s: _COUNT for s in STATUSES},
                },
                "known": _COUNT,
                "levels": {"type": "object", "additionalProperties": _COUNT},
                "with_findings": _COUNT,
                "side": _STR,
            },
        },
        "case": {
            "type": "object",
            "required": [
                "group",
                "mode",
                "size",
                "description",
                "outcome",
                "hex",
                "hex_truncated",
            ],
            "properties": {
                "group": _STR,
                "mode": _STR,
                "size": _COUNT,
                "path": _STR,
                "description": _STR,
                "outcome": _STR,
                "hex": {"type": "string", "pattern": "^([0-9a-f]{2})*$"},
                "hex_truncated": {"type": "boolean"},
            },
        },
        "result": {
            "type": "object",
            "required": ["impl", "case", "group", "status", "reason", "seconds", "divergence"],
            "properties": {
                "impl": _STR,
                "case": _STR,
                "group": _STR,
                "status": {"enum": list(STATUSES)},
                "reason": _STR,
                "diff": _STRS,
                "stderr": _STR,
                "seconds": _SECONDS,
                "level": {"type": ["string", "null"]},
                "findings": _STRS,
                "unexplained": _STRS,
                "divergence": {"type": ["integer", "null"], "minimum": 0},
                "divergences": _INDICES,
            },
            # what the views show of a failure (its diff) and of an error (also its stderr)
            "allOf": [
                {
                    "if": {"properties": {"status": {"enum": ["fail", "error"]}}},
                    "then": {"required": ["diff"]},
                },
                {
                    "if": {"properties": {"status": {"const": "error"}}},
                    "then": {"required": ["stderr"]},
                },
            ],
        },
        "divergence": {
            "type": "object",
            "required": ["impl", "cases", "class", "summary", "detail", "source", "count"],
            "properties": {
                "impl": _STR,
                "cases": _STRS,
                "class": _STR,
                "summary": _STR,
                "detail": _STR,
                "source": _STR,
                "count": _COUNT,
            },
        },
    },
}
#: how deep a report's values may nest (the kit writes some 6 levels; an adapter's declared
#: capabilities add a few)
MAX_DEPTH = 64
#: the longest problem text (a schema error quotes the offending value)
_PROBLEM_CHARS = 300


@cache
def _validator() -> Any:
    """The validator of :data:`REPORT_SCHEMA` (``jsonschema`` is imported when a report is
    validated, not with every command)."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(REPORT_SCHEMA)
    return Draft202012Validator(REPORT_SCHEMA)


def _where(path: Sequence[Any]) -> str:
    """A location in the report, as ``implementations[0].counts``."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else f"{'.' if out else ''}{step}"
    return out or "the report"


def _shape_problem(doc: Any) -> str | None:
    """Values nested deeper than :data:`MAX_DEPTH`, or a string that is no Unicode text (a
    lone surrogate, which JSON's ``\\udXXX`` escapes can make); walked without recursion."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return f"{_where(path[:3])}...: nested deeper than {MAX_DEPTH} levels"
        if isinstance(value, dict):
            for k, v in value.items():
                if not _is_text(k):
                    return f"{_where(path)}: a member name is not Unicode text"
                stack.append((v, (*path, k)))
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
        elif isinstance(value, str) and not _is_text(value):
            return f"{_where(path)}: not Unicode text (a lone surrogate)"
    return None


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reference_problem(report: dict[str, Any]) -> str | None:
    """What points nowhere: a result's case, a case's group, a divergence index; the summary
    columns an implementation without ``columns`` needs from its capabilities."""
    cases, groups = report["cases"], set(report["groups"])
    count = len(report["divergences"])
    for cid, case in cases.items():
        if case["group"] not in groups:
            return f"cases[{cid!r}]: group {case['group']!r} is not in groups"
    for i, r in enumerate(report["results"]):
        if r["case"] not in cases:
            return f"results[{i}]: case {r['case']!r} is not in cases"
        indices = [r["divergence"], *r.get("divergences", [])]
        if any(k is not None and k >= count for k in indices):
            return f"results[{i}]: a divergence index out of range (divergences: {count})"
    if any(k >= count for k in report["stale"]):
        return f"stale: an index out of range (divergences: {count})"
    side = report.get("side", DECODE)
    for i, impl in enumerate(report["implementations"]):
        if "columns" not in impl:
            try:
                capability_columns(side, impl["capabilities"])
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                return (
                    f"implementations[{i}]: no columns, and its capabilities lack what they "
                    f"are made of ({type(exc).__name__}: {exc})"
                )
    return None


def report_problem(report: Any) -> str | None:
    """Why ``report`` (a parsed JSON document) is not a report every view can render: not an
    object, nested too deep, not text, not of :data:`REPORT_SCHEMA`, or an index or name
    pointing nowhere (:func:`_reference_problem`); None if it is one."""
    if not isinstance(report, dict):
        return f"a JSON {type(report).__name__}, not an object"
    problem = _shape_problem(report)
    if problem is not None:
        return problem
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(report))
    if error is not None:
        message = error.message
        if len(message) > _PROBLEM_CHARS:
            message = message[: _PROBLEM_CHARS - 3] + "..."
        return f"{_where(error.absolute_path)}: {message}"
    return _reference_problem(report)
