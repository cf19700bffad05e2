"""The replay's ``summary.json`` and its table: range summaries (``task``) merged.

Byte accounting: for every file ``bytes_total = bytes_decoded + bytes_corrupt +
bytes_trailing`` and ``bytes_total`` is the file's size; the regions of its ranges must also
tile it (each range starts where the previous one ended, the first at 0, the last at the
end). A file where either fails, a range that never reported, or a range that reported
twice makes ``accounting_exact`` false and is listed under ``accounting_errors``.

Offsets are followed per group (a partition directory; a raw file alone), segments in
base-offset order, ranges in position order: a batch whose first offset is above the
previous batch's last offset + 1 is a *gap* (normal after compaction, or where damaged bytes
hid batches), at or below it an *overlap*.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from conformance.replay.inputs import Inputs
from conformance.replay.plan import Range
from conformance.replay.task import part_name

__all__ = ["FORMAT", "merge", "render"]

FORMAT = "kafka-conformance/replay-1"
#: examples kept in summary.json (counts are always exact)
MAX_FLAGGED = 1000
MAX_OFFSET_EXAMPLES = 100


def _count(into: Counter[str], items: dict[str, int]) -> None:
    for k, v in items.items():
        into[k] += v


def merge(
    inputs: Inputs,
    ranges: Sequence[Range],
    range_summaries: Iterable[dict[str, Any]],
    *,
    run: dict[str, Any],
    parts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The summary document of a replay (module docstring)."""
    by_id: dict[int, dict[str, Any]] = {}
    duplicates = 0
    for s in range_summaries:
        if s["range_id"] in by_id:
            duplicates += 1
            continue
        by_id[s["range_id"]] = s
    accounting_errors: list[str] = []
    if duplicates:
        accounting_errors.append(f"{duplicates} range summaries reported twice (ignored)")
    missing = [r.range_id for r in ranges if r.range_id not in by_id]
    if missing:
        accounting_errors.append(f"ranges never reported: {missing[:20]}")
    if parts is not None:  # every task's Parquet part holds exactly the rows it reported
        expected_rows: Counter[str] = Counter()
        for s in by_id.values():
            expected_rows[part_name(s["task"])] += s["rows"]
        for name in sorted(set(expected_rows) | set(parts)):
            if parts.get(name) != expected_rows.get(name):
                accounting_errors.append(
                    f"batches/{name}: {parts.get(name)} rows written, "
                    f"{expected_rows.get(name)} reported"
                )

    verdicts: Counter[str] = Counter()
    exceptions: Counter[str] = Counter()
    codecs: Counter[str] = Counter()
    findings: Counter[str] = Counter()
    totals = {
        "bytes_total": 0,
        "bytes_decoded": 0,
        "bytes_corrupt": 0,
        "bytes_trailing": 0,
        "batches": 0,
        "records": 0,
    }
    flagged: list[dict[str, Any]] = []
    flagged_count = 0
    workers: dict[str, int] = {}
    task_seconds = 0.0
    problems = [{"path": p.path, "kind": p.kind, "message": p.message} for p in inputs.problems]
    per_file: list[dict[str, Any]] = []
    directories: dict[str, dict[str, Any]] = {}
    file_ranges: dict[str, list[Range]] = defaultdict(list)
    for r in ranges:
        file_ranges[r.file.path].append(r)

    for f in inputs.files:
        parts = sorted(
            (by_id[r.range_id] for r in file_ranges[f.path] if r.range_id in by_id),
            key=lambda s: s["start"],
        )
        b = {"decoded": 0, "corrupt": 0, "trailing": 0}
        fv: Counter[str] = Counter()
        expected = 0
        tiled = True
        for s in parts:
            for k in b:
                b[k] += s["bytes"][k]
            _count(fv, s["verdicts"])
            _count(exceptions, s["exceptions"])
            _count(codecs, s["codecs"])
            _count(findings, s["findings"])
            totals["batches"] += s["batches"]
            totals["records"] += s["records"]
            flagged_count += s["flagged_count"]
            flagged.extend(s["flagged"])
            workers[str(s["pid"])] = max(workers.get(str(s["pid"]), 0), s["peak_rss_kib"])
            task_seconds += s["seconds"]
            if s["error"]:
                problems.append(
                    {
                        "path": f.path,
                        "kind": "unreadable",
                        "message": f"{f.path}: {s['error']} (while replaying bytes "
                        f"{s['start']}..{s['end']})",
                    }
                )
            if s["tiling_errors"] or (
                s["first_position"] is not None and s["first_position"] != expected
            ):
                tiled = False
            if s["end_position"] is not None:
                expected = s["end_position"]
        if expected != f.size:
            tiled = False
        accounted = sum(b.values())
        exact = tiled and accounted == f.size and len(parts) == len(file_ranges[f.path])
        if not exact:
            accounting_errors.append(
                f"{f.path}: {accounted} bytes accounted for (decoded {b['decoded']} + corrupt "
                f"{b['corrupt']} + trailing {b['trailing']}) of {f.size}"
                + ("" if tiled else "; its ranges do not tile it")
            )
        verdicts.update(fv)
        totals["bytes_total"] += f.size
        totals["bytes_decoded"] += b["decoded"]
        totals["bytes_corrupt"] += b["corrupt"]
        totals["bytes_trailing"] += b["trailing"]
        per_file.append(
            {
                "file": f.path,
                "kind": f.kind,
                "directory": f.directory,
                "bytes_total": f.size,
                "bytes_decoded": b["decoded"],
                "bytes_corrupt": b["corrupt"],
                "bytes_trailing": b["trailing"],
                "ranges": len(file_ranges[f.path]),
                "verdicts": dict(sorted(fv.items())),
                "exact": exact,
            }
        )
        d = directories.setdefault(
            f.directory,
            {
                "files": 0,
                "bytes_total": 0,
                "bytes_decoded": 0,
                "bytes_corrupt": 0,
                "bytes_trailing": 0,
                "verdicts": Counter(),
            },
        )
        d["files"] += 1
        d["bytes_total"] += f.size
        for k in b:
            d[f"bytes_{k}"] += b[k]
        d["verdicts"].update(fv)

    for d in directories.values():
        d["verdicts"] = dict(sorted(d["verdicts"].items()))
    flagged.sort(key=lambda x: (x["file"], x["position"]))
    return {
        "format": FORMAT,
        "run": run,
        "files": {
            "count": len(inputs.files),
            "segments": sum(1 for f in inputs.files if f.kind == "segment"),
            "raw": sum(1 for f in inputs.files if f.kind == "raw"),
            "companions": inputs.companions,
        },
        "ranges": len(ranges),
        "totals": totals,
        "accounting_exact": not accounting_errors,
        "accounting_errors": accounting_errors,
        "verdicts": dict(sorted(verdicts.items())),
        "exceptions": dict(sorted(exceptions.items())),
        "codecs": dict(sorted(codecs.items())),
        "findings": dict(sorted(findings.items())),
        "directories": dict(sorted(directories.items())),
        "offsets": _offsets(inputs, file_ranges, by_id),
        "flagged_count": flagged_count,
        "flagged": flagged[:MAX_FLAGGED],
        "problems": problems,
        "files_detail": per_file,
        "workers": {
            "peak_rss_kib": workers,
            "max_peak_rss_kib": max(workers.values(), default=0),
            "range_seconds": round(task_seconds, 3),
        },
    }


def _offsets(
    inputs: Inputs, file_ranges: dict[str, list[Range]], by_id: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    """Gaps and overlaps per group, across segments and ranges."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for f in inputs.files:
        groups[f.group].append(f)
    out: dict[str, Any] = {}
    for group, files in sorted(groups.items()):
        files.sort(key=lambda f: (-1 if f.segment_base is None else f.segment_base, f.path))
        g: dict[str, Any] = {
            "first_offset": None,
            "last_offset": None,
            "gaps": 0,
            "overlaps": 0,
            "examples": [],
        }
        last: int | None = None
        for f in files:
            for r in sorted(file_ranges[f.path], key=lambda r: r.start):
                s = by_id.get(r.range_id)
                if s is None or s["first_offset"] is None:
                    continue
                g["gaps"] += s["gaps"]
                g["overlaps"] += s["overlaps"]
                examples = list(s["offset_examples"])
                first = s["first_offset"]
                if last is None:
                    g["first_offset"] = first
                elif first > last + 1 or first <= last:
                    kind = "gap" if first > last + 1 else "overlap"
                    g["gaps" if kind == "gap" else "overlaps"] += 1
                    examples.insert(
                        0,
                        {
                            "kind": kind,
                            "file": f.path,
                            "position": s["first_position"],
                            "previous_last": last,
                            "base": first,
                        },
                    )
                room = MAX_OFFSET_EXAMPLES - len(g["examples"])
                g["examples"].extend(examples[: max(0, room)])
                last = s["last_offset"] if last is None else max(last, s["last_offset"])
        g["last_offset"] = last
        out[group] = g
    return out


def _n(x: int) -> str:
    return f"{x:,}"


def _bytes(x: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if x >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x} B"


def render(doc: dict[str, Any], *, flagged: int = 20) -> str:
    """A readable table of a summary document."""
    t = doc["totals"]
    run = doc.get("run", {})
    lines = [
        f"replay: {doc['files']['count']} files ({doc['files']['segments']} segments, "
        f"{doc['files']['raw']} raw), {_bytes(t['bytes_total'])} in {doc['ranges']} ranges"
        + (f", {run['seconds']:.1f} s" if "seconds" in run else "")
        + (f" on {run['engine']}" if "engine" in run else ""),
        "",
        f"{'verdict':<12}{'regions':>14}",
    ]
    for v, n in doc["verdicts"].items():
        lines.append(f"{v:<12}{_n(n):>14}")
    lines += [
        "",
        f"bytes: {_n(t['bytes_total'])} total = {_n(t['bytes_decoded'])} decoded + "
        f"{_n(t['bytes_corrupt'])} corrupt + {_n(t['bytes_trailing'])} trailing "
        + ("(exact for every file)" if doc["accounting_exact"] else "(NOT EXACT: see below)"),
        f"records: {_n(t['records'])} in {_n(t['batches'])} intact batches",
    ]
    if doc["codecs"]:
        lines.append(
            "codecs (intact batches): "
            + ", ".join(f"{k} {_n(v)}" for k, v in doc["codecs"].items())
        )
    if doc["exceptions"]:
        lines.append("")
        lines.append("where Kafka's reader fails or stops:")
        for k, v in doc["exceptions"].items():
            lines.append(f"  {_n(v):>8}  {k}")
    if doc["findings"]:
        lines.append(
            "strict-profile findings: " + ", ".join(f"{k} {v}" for k, v in doc["findings"].items())
        )
    lines += ["", f"{'directory':<48}{'files':>6}{'bytes':>12}{'ok':>10}{'flagged':>9}"]
    for name, d in doc["directories"].items():
        bad = sum(n for v, n in d["verdicts"].items() if v != "ok")
        shown = name if len(name) <= 47 else "…" + name[-46:]
        lines.append(
            f"{shown:<48}{d['files']:>6}{_bytes(d['bytes_total']):>12}"
            f"{_n(d['verdicts'].get('ok', 0)):>10}{bad:>9}"
        )
    gaps = {k: g for k, g in doc["offsets"].items() if g["gaps"] or g["overlaps"]}
    if gaps:
        lines.append("")
        lines.append("offset gaps / overlaps per partition:")
        for k, g in gaps.items():
            lines.append(
                f"  {k}: {g['gaps']} gaps, {g['overlaps']} overlaps "
                f"(offsets {g['first_offset']}..{g['last_offset']})"
            )
    if doc["flagged_count"]:
        lines.append("")
        lines.append(
            f"flagged regions: {doc['flagged_count']}"
            + (f" (first {flagged})" if doc["flagged_count"] > flagged else "")
        )
        for x in doc["flagged"][:flagged]:
            what = x["kafka_exception"].rsplit(".", 1)[-1] if x["kafka_exception"] else x["verdict"]
            lines.append(
                f"  {x['file']}@{x['position']} +{x['size']} {x['verdict']}: {what}: "
                f"{(x['message'] or '')[:100]}"
            )
    if doc["problems"]:
        lines.append("")
        lines.append(f"problems: {len(doc['problems'])}")
        for p in doc["problems"][:50]:
            lines.append(f"  {p['kind']}: {p['message']}")
    if doc["accounting_errors"]:
        lines.append("")
        lines.append("ACCOUNTING ERRORS:")
        lines.extend(f"  {e}" for e in doc["accounting_errors"])
    w = doc["workers"]
    if w["peak_rss_kib"]:
        lines.append("")
        lines.append(
            f"python workers: {len(w['peak_rss_kib'])}, peak RSS "
            f"{w['max_peak_rss_kib'] / 1024:.0f} MiB (largest)"
        )
    return "\n".join(lines)
