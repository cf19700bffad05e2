"""The replay's ``summary.json`` and its table: range summaries (``counts.RangeSummary``)
combined, in small typed steps, into a :class:`ReplaySummary`.

==========================  =================================================================
step                        gives
==========================  =================================================================
:class:`Reported`           each planned range's summary, once (a range reported twice, or
                            never, is an accounting error); each task's Parquet part must
                            hold exactly the rows its ranges reported
:class:`FileAccount`        per file: its ranges' counts added up (``Counts.add``), whether
                            their regions tile it, whether its bytes add up to its size
:class:`DirectoryAccount`   per directory: its files' bytes and verdicts
:func:`follow_offsets`      per group: offsets across segments and ranges (``Offsets``)
:class:`WorkerUsage`        per Python worker: its peak RSS; the tasks' time
:class:`RunInfo`            how the replay ran (filled by ``job``)
==========================  =================================================================

:meth:`ReplaySummary.to_dict` is the document of ``summary.json``
(``kafka-conformance/replay-1``); :func:`render` its table.

Byte accounting: for every file ``bytes_total = bytes_decoded + bytes_corrupt +
bytes_trailing + bytes_unread`` (``bytes_unread``: what a task could not read, the file
having vanished, shrunk or failed under it) and ``bytes_total`` is the file's size; the
regions of its ranges must also tile it (each range starts where the previous one ended,
the first at 0, the last at the end). A file where either fails, a range that never
reported, or a range that reported twice makes ``accounting_exact`` false and is listed under
``accounting_errors``.

Offsets are followed per group (a partition directory; a raw file alone), segments in
base-offset order, ranges in position order: a batch whose first offset is above the
previous batch's last offset + 1 is a *gap* (normal after compaction, or where damaged bytes
hid batches), at or below it an *overlap* (``counts.offset_step``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.fileio import printable_name
from conformance.jsondoc import JsonDocument
from conformance.replay.counts import ByteCounts, Counts, Offsets, RangeSummary
from conformance.replay.inputs import InputFile, Inputs, Problem
from conformance.replay.output import part_name
from conformance.replay.plan import Range

__all__ = [
    "FORMAT",
    "DirectoryAccount",
    "FileAccount",
    "ReplaySummary",
    "Reported",
    "RunInfo",
    "SparkRun",
    "WorkerUsage",
    "follow_offsets",
    "merge",
    "render",
]

FORMAT = "kafka-conformance/replay-1"
#: examples kept in summary.json (counts are always exact)
MAX_FLAGGED = 1000
MAX_OFFSET_EXAMPLES = 100


# --------------------------------------------------------------------------------------------
# how the replay ran


@dataclass(frozen=True, slots=True)
class SparkRun:
    """What the Spark engine adds to :class:`RunInfo`."""

    version: str
    #: SparkSession start-up alone (``startup_seconds`` adds the warm-up job)
    session_seconds: float
    #: the driver JVM's flags as it reports them (``RuntimeMXBean.getInputArguments``)
    driver_jvm_options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunInfo(JsonDocument):
    """``run`` in summary.json: the replay's settings and what the engine measured."""

    inputs: list[str]
    profile: str
    split_bytes: int
    planning_seconds: float
    #: ``process`` or ``spark <master>``
    engine: str
    tasks: int
    startup_seconds: float
    replay_seconds: float
    seconds: float
    #: None for the process engine
    spark: SparkRun | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "inputs": [printable_name(i) for i in self.inputs],
            "profile": self.profile,
            "split_bytes": self.split_bytes,
            "planning_seconds": self.planning_seconds,
            "engine": self.engine,
        }
        if self.spark is None:
            doc["tasks"] = self.tasks
            doc["startup_seconds"] = self.startup_seconds
        else:  # in the order Spark measures them
            doc["spark_version"] = self.spark.version
            doc["session_seconds"] = self.spark.session_seconds
            doc["driver_jvm_options"] = list(self.spark.driver_jvm_options)
            doc["startup_seconds"] = self.startup_seconds
            doc["tasks"] = self.tasks
        doc["replay_seconds"] = self.replay_seconds
        doc["seconds"] = self.seconds
        return doc


# --------------------------------------------------------------------------------------------
# the steps


@dataclass(slots=True)
class Reported:
    """The range summaries that came back: the first of each range (a second one is counted
    as a duplicate and ignored)."""

    by_id: dict[int, RangeSummary] = field(default_factory=dict)
    duplicates: int = 0

    @classmethod
    def collect(cls, range_summaries: Iterable[RangeSummary]) -> Reported:
        out = cls()
        for s in range_summaries:
            if s.range_id in out.by_id:
                out.duplicates += 1
            else:
                out.by_id[s.range_id] = s
        return out

    def of(self, ranges: Iterable[Range]) -> list[RangeSummary]:
        """The summaries of those of ``ranges`` that reported, in position order."""
        found = [self.by_id[r.range_id] for r in ranges if r.range_id in self.by_id]
        return sorted(found, key=lambda s: s.start)

    def errors(self, ranges: Sequence[Range], parts: Mapping[str, int] | None) -> list[str]:
        """Ranges reported twice or never; with ``parts`` (rows per Parquet part), parts that
        do not hold exactly the rows their task reported."""
        errors: list[str] = []
        if self.duplicates:
            errors.append(f"{self.duplicates} range summaries reported twice (ignored)")
        missing = [r.range_id for r in ranges if r.range_id not in self.by_id]
        if missing:
            errors.append(f"ranges never reported: {missing[:20]}")
        if parts is not None:
            expected: Counter[str] = Counter()
            for s in self.by_id.values():
                expected[part_name(s.task)] += s.rows
            for name in sorted(set(expected) | set(parts)):
                if parts.get(name) != expected.get(name):
                    errors.append(
                        f"batches/{name}: {parts.get(name)} rows written, "
                        f"{expected.get(name)} reported"
                    )
        return errors


def _tiled(parts: Sequence[RangeSummary], size: int) -> bool:
    """Whether the regions of ``parts`` (in position order) tile ``size`` bytes: each starts
    where the previous one ended, from 0 to ``size``."""
    expected = 0
    tiled = True
    for s in parts:
        if s.tiling_errors or (s.first_position is not None and s.first_position != expected):
            tiled = False
        if s.end_position is not None:
            expected = s.end_position
    return tiled and expected == size


@dataclass(slots=True)
class FileAccount(JsonDocument):
    """One file's account: its ranges' counts added up; ``files_detail`` in summary.json."""

    file: InputFile
    #: ranges planned for it
    ranges: int
    #: those that reported
    reported: int
    counts: Counts
    tiled: bool

    @classmethod
    def of(cls, f: InputFile, ranges: int, parts: Sequence[RangeSummary]) -> FileAccount:
        counts = Counts()
        for s in parts:
            counts.add(s.counts)
        return cls(f, ranges, len(parts), counts, _tiled(parts, f.size))

    @property
    def exact(self) -> bool:
        complete = self.reported == self.ranges
        return complete and self.tiled and self.counts.bytes.total == self.file.size

    def error(self) -> str | None:
        """The accounting error of an inexact file, None when it is exact."""
        if self.exact:
            return None
        b = self.counts.bytes
        return (
            f"{self.file.name}: {b.total} bytes accounted for (decoded {b.decoded} + corrupt "
            f"{b.corrupt} + trailing {b.trailing} + unread {b.unread}) of {self.file.size}"
            + ("" if self.tiled else "; its ranges do not tile it")
        )

    def to_dict(self) -> dict[str, Any]:
        f, b = self.file, self.counts.bytes
        return {
            "file": f.name,
            "kind": f.kind,
            "directory": f.directory_name,
            "bytes_total": f.size,
            "bytes_decoded": b.decoded,
            "bytes_corrupt": b.corrupt,
            "bytes_trailing": b.trailing,
            "bytes_unread": b.unread,
            "ranges": self.ranges,
            "verdicts": dict(sorted(self.counts.verdicts.items())),
            "exact": self.exact,
        }


@dataclass(slots=True)
class DirectoryAccount(JsonDocument):
    """A directory's files, bytes and verdicts (``directories`` in summary.json)."""

    files: int = 0
    bytes_total: int = 0
    bytes: ByteCounts = field(default_factory=ByteCounts)
    verdicts: Counter[str] = field(default_factory=Counter)

    def add(self, account: FileAccount) -> None:
        self.files += 1
        self.bytes_total += account.file.size
        self.bytes.add(account.counts.bytes)
        self.verdicts.update(account.counts.verdicts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "bytes_total": self.bytes_total,
            "bytes_decoded": self.bytes.decoded,
            "bytes_corrupt": self.bytes.corrupt,
            "bytes_trailing": self.bytes.trailing,
            "bytes_unread": self.bytes.unread,
            "verdicts": dict(sorted(self.verdicts.items())),
        }


@dataclass(slots=True)
class WorkerUsage(JsonDocument):
    """Peak RSS of every Python worker that ran a range (by pid), and the ranges' time."""

    peak_rss_kib: dict[str, int] = field(default_factory=dict)
    range_seconds: float = 0.0

    def add(self, s: RangeSummary) -> None:
        pid = str(s.pid)
        self.peak_rss_kib[pid] = max(self.peak_rss_kib.get(pid, 0), s.peak_rss_kib)
        self.range_seconds += s.seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "peak_rss_kib": dict(self.peak_rss_kib),
            "max_peak_rss_kib": max(self.peak_rss_kib.values(), default=0),
            "range_seconds": round(self.range_seconds, 3),
        }


def follow_offsets(
    inputs: Inputs, ranges_of: Mapping[str, Sequence[Range]], reported: Reported
) -> dict[str, Offsets]:
    """Offsets per group (sorted by name): segments in base-offset order (raw files first, by
    path), each file's ranges in position order."""
    groups: dict[str, list[InputFile]] = defaultdict(list)
    for f in inputs.files:
        groups[f.group].append(f)
    out: dict[str, Offsets] = {}
    for group, files in sorted(groups.items()):
        files.sort(key=lambda f: (-1 if f.segment_base is None else f.segment_base, f.path))
        offsets = Offsets()
        for f in files:
            for r in sorted(ranges_of[f.path], key=lambda r: r.start):
                s = reported.by_id.get(r.range_id)
                if s is not None:
                    offsets.extend(
                        s.offsets, file=f.name, position=s.first_position, limit=MAX_OFFSET_EXAMPLES
                    )
        out[group] = offsets
    return out


# --------------------------------------------------------------------------------------------
# the summary


@dataclass(slots=True)
class ReplaySummary(JsonDocument):
    """The summary of a replay; :meth:`to_dict` is the document of summary.json."""

    run: RunInfo
    inputs: Inputs
    ranges: int
    #: every file's counts added up (``flagged``: sorted by file and position)
    counts: Counts
    accounting_errors: list[str]
    files: list[FileAccount]
    directories: dict[str, DirectoryAccount]
    offsets: dict[str, Offsets]
    #: the inputs' problems, then the ranges that could not be read
    problems: list[Problem]
    workers: WorkerUsage

    @property
    def accounting_exact(self) -> bool:
        return not self.accounting_errors

    @property
    def flagged_count(self) -> int:
        return self.counts.flagged_count

    def to_dict(self) -> dict[str, Any]:
        c, b, files = self.counts, self.counts.bytes, self.inputs.files
        return {
            "format": FORMAT,
            "run": self.run.to_dict(),
            "files": {
                "count": len(files),
                "segments": sum(1 for f in files if f.kind == "segment"),
                "raw": sum(1 for f in files if f.kind == "raw"),
                "companions": self.inputs.companions,
            },
            "ranges": self.ranges,
            "totals": {
                "bytes_total": sum(f.size for f in files),
                "bytes_decoded": b.decoded,
                "bytes_corrupt": b.corrupt,
                "bytes_trailing": b.trailing,
                "bytes_unread": b.unread,
                "batches": c.batches,
                "records": c.records,
            },
            "accounting_exact": self.accounting_exact,
            "accounting_errors": list(self.accounting_errors),
            "verdicts": dict(sorted(c.verdicts.items())),
            "exceptions": dict(sorted(c.exceptions.items())),
            "codecs": dict(sorted(c.codecs.items())),
            "findings": dict(sorted(c.findings.items())),
            "directories": {k: d.to_dict() for k, d in sorted(self.directories.items())},
            "offsets": {printable_name(k): o.to_dict() for k, o in self.offsets.items()},
            "flagged_count": c.flagged_count,
            "flagged": [x.to_dict() for x in c.flagged[:MAX_FLAGGED]],
            "problems": [p.to_dict() for p in self.problems],
            "files_detail": [a.to_dict() for a in self.files],
            "workers": self.workers.to_dict(),
        }


def _unreadable(f: InputFile, parts: Iterable[RangeSummary]) -> list[Problem]:
    """The ranges of ``f`` that could not be read (to their end)."""
    return [
        Problem(
            f.path,
            "unreadable",
            f"{f.name}: {s.error} (while replaying bytes {s.start}..{s.end})",
        )
        for s in parts
        if s.error
    ]


def merge(
    inputs: Inputs,
    ranges: Sequence[Range],
    range_summaries: Iterable[RangeSummary],
    *,
    run: RunInfo,
    parts: Mapping[str, int] | None = None,
) -> ReplaySummary:
    """The summary of a replay (module docstring); ``parts``: rows per Parquet part."""
    reported = Reported.collect(range_summaries)
    accounting_errors = reported.errors(ranges, parts)
    ranges_of: dict[str, list[Range]] = defaultdict(list)
    for r in ranges:
        ranges_of[r.file.path].append(r)

    counts = Counts()
    files: list[FileAccount] = []
    directories: dict[str, DirectoryAccount] = {}
    problems = list(inputs.problems)
    workers = WorkerUsage()
    for f in inputs.files:
        parts_of_f = reported.of(ranges_of[f.path])
        account = FileAccount.of(f, len(ranges_of[f.path]), parts_of_f)
        files.append(account)
        counts.add(account.counts)
        directories.setdefault(f.directory_name, DirectoryAccount()).add(account)
        problems.extend(_unreadable(f, parts_of_f))
        for s in parts_of_f:
            workers.add(s)
        error = account.error()
        if error is not None:
            accounting_errors.append(error)
    counts.flagged.sort(key=lambda x: (x.file, x.position))

    return ReplaySummary(
        run=run,
        inputs=inputs,
        ranges=len(ranges),
        counts=counts,
        accounting_errors=accounting_errors,
        files=files,
        directories=directories,
        offsets=follow_offsets(inputs, ranges_of, reported),
        problems=problems,
        workers=workers,
    )


def _n(x: int) -> str:
    return f"{x:,}"


def _bytes(x: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if x >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x} B"


def render(doc: Mapping[str, Any], *, flagged: int = 20) -> str:
    """A readable table of a summary document (:meth:`ReplaySummary.to_dict`, or summary.json
    read back)."""
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
        + (f"+ {_n(t['bytes_unread'])} unread " if t["bytes_unread"] else "")
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
