"""The terminal view: a summary table per implementation, then what failed and why."""

from __future__ import annotations

from typing import Any

from conformance.fileio import printable_name as escaped
from conformance.harness.process import crash_line
from conformance.harness.report.model import (
    SCENARIO_SIDES,
    corpus_text,
    distinct_findings,
    is_leveled,
)
from conformance.harness.runner import STATUSES
from conformance.levels import LEVELS, NONE

__all__ = ["findings", "problems", "summary", "table"]

#: stderr lines shown under an error in the terminal (besides the crash line)
_STDERR_LINES = 3
#: the reached-level columns of a side judged at levels (``conformance.levels``, and ``none``)
_LEVELS = (NONE, *LEVELS)


def table(rows: list[list[str]], right: frozenset[int] | set[int] = frozenset()) -> list[str]:
    """Rows as aligned columns, a rule under the first (the header); ``right``: right-aligned
    columns."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        cells = [
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))
        ]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def summary(report: dict[str, Any]) -> str:
    """One row per implementation: counts per outcome, known divergences, pass rate of the
    cases it supports, time."""
    leveled = is_leveled(report)
    levels = [*_LEVELS, "findings"] if leveled else []
    rows = [["implementation", "version", *STATUSES, "known", *levels, "pass rate", "time"]]
    for impl in report["implementations"]:
        c = impl["counts"]
        supported = c["pass"] + c["fail"] + c["error"]
        rate = f"{100 * c['pass'] / supported:.1f}%" if supported else "-"
        reached = impl.get("levels") or {}
        rows.append(
            [
                escaped(impl["name"]),
                escaped(impl["capabilities"]["version"] or "?"),
                *(str(c[s]) for s in STATUSES),
                str(impl["known"]),
                *(
                    [*(str(reached.get(n, 0)) for n in _LEVELS), str(impl.get("with_findings", 0))]
                    if leveled
                    else []
                ),
                rate,
                f"{impl['seconds']:.1f} s",
            ]
        )
    lines = table(rows, right=set(range(2, 9 + len(levels))))
    if leveled:
        unit = "scenarios" if report.get("side") in SCENARIO_SIDES else "cases"
        lines.append(
            f"judged at level {report['settings'].get('level')}; level columns: {unit} "
            f"reaching each (none: not even delivery); findings: {unit} with differences "
            "above that level"
        )
    lines.append(escaped(f"kit {report['kit_version']}, {corpus_text(report)}"))
    notes = [
        escaped(f"{i['name']}: {i['capabilities_problem']}")
        for i in report["implementations"]
        if i["capabilities_problem"]
    ]
    stale = [report["divergences"][i] for i in report["stale"]]
    if notes:
        lines += ["", *notes]
    if stale:
        lines += [
            "",
            "stale known divergences (matched no failing case):",
            *(escaped(f"  {d['impl']}: {d['summary']} ({d['source']})") for d in stale),
        ]
    return "\n".join(lines)


def problems(report: dict[str, Any], *, limit: int = 20, diff_lines: int = 8) -> str:
    """The failing and erroring cases not covered by a known divergence, with their diffs
    (at most ``limit`` per implementation)."""
    out: list[str] = []
    for impl in report["implementations"]:
        mine = [
            r
            for r in report["results"]
            if r["impl"] == impl["name"]
            and r["status"] in ("fail", "error")
            and r["divergence"] is None
        ]
        if not mine:
            continue
        out.append(
            f"{escaped(impl['name'])}: {len(mine)} unexplained "
            f"{'divergence' if len(mine) == 1 else 'divergences'}"
        )
        for r in mine[:limit]:
            out.append(escaped(f"  {r['status'].upper():5} {r['case']}: {r['reason']}"))
            out += [escaped(f"        {line}") for line in r["diff"][:diff_lines]]
            if r["status"] == "error":
                out += [escaped(f"        stderr: {line}") for line in _stderr_lines(r["stderr"])]
        if len(mine) > limit:
            out.append(f"  ... and {len(mine) - limit} more (see --json / --html)")
    return "\n".join(out)


def findings(report: dict[str, Any], *, limit: int = 8) -> str:
    """Per implementation, its distinct findings (differences above the level asked) and how
    many cases show each (at most ``limit`` per implementation)."""
    out: list[str] = []
    for impl in report["implementations"]:
        seen = distinct_findings(report, impl["name"])
        if not seen:
            continue
        out.append(f"{escaped(impl['name'])}: findings (not failures at this level)")
        for text, n in list(seen.items())[:limit]:
            out.append(escaped(f"  {n:4} x {text}"))
        if len(seen) > limit:
            out.append(f"  ... and {len(seen) - limit} more (see --json / --html)")
    return "\n".join(out)


def _stderr_lines(stderr: str) -> list[str]:
    """What the terminal shows of an error's stderr: the crash line, then the last lines."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-_STDERR_LINES:]
    crash = crash_line(stderr)
    if crash is None or crash in (line.strip() for line in last):
        return last
    return [crash, "...", *last]
