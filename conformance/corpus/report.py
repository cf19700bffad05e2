"""Reports over golden corpora: one :class:`Check` per file and kind, a :class:`VerifiedCase` per
case, the :class:`CorpusReport` of a run, and their renderings: JSON, JUnit XML and the text
table. Two commands write them, each a :class:`ReportKind` (its JSON format, its table's
columns, which side of a mismatch is which): :data:`VERIFY`, ``kafka-conformance verify`` (the
corpora against Kafka's own verdicts, ``corpus.golden``; ``kafka-conformance/verify/1``), and
:data:`CAPTURE_COMPARE`, ``kafka-conformance capture compare`` (two captures against each
other, ``capture.compare``; ``kafka-conformance/capture-compare/1``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fileio import printable_name
from conformance.jsondoc import JsonDocument

__all__ = [
    "CAPTURE_COMPARE",
    "COMPARE_FORMAT",
    "ERROR",
    "MISMATCH",
    "OK",
    "REPORT_FORMAT",
    "PARTIES",
    "SKIPPED",
    "VERIFY",
    "VerifiedCase",
    "Check",
    "Column",
    "CorpusReport",
    "ReportKind",
    "format_table",
]

REPORT_FORMAT = "kafka-conformance/verify/1"
COMPARE_FORMAT = "kafka-conformance/capture-compare/1"

OK, MISMATCH, SKIPPED, ERROR = "ok", "mismatch", "skipped", "error"


@dataclass
class Check(JsonDocument):
    """One check of one case: ``kind`` is manifest, sha256, decode, dump or deep (verify);
    case, file or decode (capture compare). ``path``: the file under the case, or what a
    check of the case as a whole found (``only in A``)."""

    kind: str
    path: str
    status: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.kind} {self.path}" if self.path else self.kind

    @property
    def failed(self) -> bool:
        return self.status in (MISMATCH, ERROR)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.kind,
            "path": self.path,
            "status": self.status,
            "details": self.details,
            "seconds": round(self.seconds, 6),
        }


@dataclass
class VerifiedCase(JsonDocument):
    case_id: str  # "<broker-id>/<scenario>"
    directory: Path
    broker_version: str | None = None
    files: int = 0
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    dump_note: str | None = None  # "skipped (format of 1.1.1)"
    written_by: str | None = None  # not a broker capture: the manifest's writer (corpus.written)

    @property
    def broker_id(self) -> str:
        return self.case_id.split("/", 1)[0]

    @property
    def scenario(self) -> str:
        return self.case_id.split("/", 1)[1]

    @property
    def ok(self) -> bool:
        return not any(c.failed for c in self.checks)

    def counts(self, *kinds: str) -> Counter[str]:
        """Statuses of the checks of these kinds (of every check without ``kinds``)."""
        return Counter(c.status for c in self.checks if not kinds or c.kind in kinds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case_id,
            "broker_id": self.broker_id,
            "scenario": self.scenario,
            "directory": str(self.directory),
            "broker_version": self.broker_version,
            "written_by": self.written_by,
            "ok": self.ok,
            "files": self.files,
            "dump": self.dump_note or "compared",
            "seconds": round(self.seconds, 6),
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class CorpusReport(JsonDocument):
    """The report of a run: ``root`` (verify's), or ``root`` and ``compared_with`` (A and B of
    capture compare); ``kind`` says which command's report it is."""

    root: Path
    cases: list[VerifiedCase] = field(default_factory=list)
    seconds: float = 0.0
    kind: ReportKind = field(default_factory=lambda: VERIFY)
    compared_with: Path | None = None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def checks(self) -> list[tuple[VerifiedCase, Check]]:
        return [(case, c) for case in self.cases for c in case.checks]

    def counts(self) -> Counter[str]:
        return Counter(c.status for _, c in self.checks)

    def failures(self) -> list[tuple[VerifiedCase, Check]]:
        return [(case, c) for case, c in self.checks if c.failed]

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts()
        roots = (
            {"root": str(self.root)}
            if self.compared_with is None
            else {"a": str(self.root), "b": str(self.compared_with)}
        )
        return {
            "format": self.kind.format,
            **roots,
            "ok": self.ok,
            "summary": {
                "cases": len(self.cases),
                "cases_failed": sum(not c.ok for c in self.cases),
                "checks": sum(counts.values()),
                **{s: counts.get(s, 0) for s in (OK, MISMATCH, ERROR, SKIPPED)},
                "seconds": round(self.seconds, 6),
            },
            "cases": [c.to_dict() for c in self.cases],
        }

    def to_junit(self) -> str:
        """JUnit XML: one testsuite per case, one testcase per check."""
        counts = self.counts()
        suites = ET.Element(
            "testsuites",
            name=self.kind.command,
            tests=str(sum(counts.values())),
            failures=str(counts.get(MISMATCH, 0)),
            errors=str(counts.get(ERROR, 0)),
            skipped=str(counts.get(SKIPPED, 0)),
            time=f"{self.seconds:.3f}",
        )
        for case in self.cases:
            c = case.counts()
            suite = ET.SubElement(
                suites,
                "testsuite",
                name=case.case_id,
                tests=str(len(case.checks)),
                failures=str(c.get(MISMATCH, 0)),
                errors=str(c.get(ERROR, 0)),
                skipped=str(c.get(SKIPPED, 0)),
                time=f"{case.seconds:.3f}",
            )
            for check in case.checks:
                tc = ET.SubElement(
                    suite,
                    "testcase",
                    classname=case.case_id,
                    name=check.name,
                    time=f"{check.seconds:.3f}",
                )
                text = "\n".join(check.details)
                first = check.details[0] if check.details else check.status
                if check.status == MISMATCH:
                    ET.SubElement(tc, "failure", message=first[:500], type="mismatch").text = text
                elif check.status == ERROR:
                    ET.SubElement(tc, "error", message=first[:500], type="error").text = text
                elif check.status == SKIPPED:
                    ET.SubElement(tc, "skipped", message=first[:500])
        ET.indent(suites)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(suites, encoding="unicode")
            + "\n"
        )

    def format_table(self, *, quiet: bool = False) -> str:
        return format_table(self, quiet=quiet)


# --------------------------------------------------------------------------------------------
# the two kinds of report

#: which side of a failed check's details is which: the expectation (Kafka's own tools, or the
#: manifest) and what this kit produced (``stream.compare.diff`` prints ``expected != actual``)
PARTIES: dict[str, str] = {
    "decode": "<json path>: <expected: the Java oracle's verdict, expected/<file>.decode.json> "
    "!= <actual: kafka-conformance's decoder>",
    "dump": "expected: Kafka's DumpLogSegments (expected/<file>.dump.txt/.dump.err); "
    "actual: kafka-conformance dump",
    "deep": "expected: Kafka's DumpLogSegments --deep-iteration --print-data-log "
    "(expected/<file>.deep.txt); actual: kafka-conformance dump",
    "sha256": "manifest: manifest.json; on disk: the file as it is now",
}

#: the same for capture compare: both parties are this kit's decoder, on A's file and on B's
COMPARE_PARTIES: dict[str, str] = {
    "decode": "<json path>: A=<A's file> B=<B's file>, each decoded by kafka-conformance "
    "(file mode), the keys of the manifest's non_deterministic list masked",
}


@dataclass(frozen=True)
class Column:
    """A column of the table, between the scenario and the time: its header and its cell."""

    header: str
    cell: Callable[[VerifiedCase], str]
    right: bool = False  # right-aligned (a number)


@dataclass(frozen=True)
class ReportKind:
    """What the reports of two commands do not share: the command (the JUnit XML's name), the
    JSON document's format, the table's columns, the explanation of each check kind's mismatch
    (``parties``) and the check kinds whose skipped checks are listed after the summary, like the
    failures (``listed``)."""

    command: str
    format: str
    columns: tuple[Column, ...]
    parties: Mapping[str, str]
    listed: tuple[str, ...] = ()


def _summarise(counter: Counter[str]) -> str:
    parts = []
    for status in (OK, MISMATCH, ERROR, SKIPPED):
        n = counter.get(status, 0)
        if n:
            label = status if status in (OK, SKIPPED) else status.upper()
            parts.append(f"{n} {label}")
    return ", ".join(parts) or "-"


def _sha256_cell(case: VerifiedCase) -> str:
    sha = case.counts("sha256", "manifest")
    if not (sha[MISMATCH] or sha[ERROR]):
        return "ok"
    return _summarise(Counter({k: v for k, v in sha.items() if k != OK}))


def _dump_cell(case: VerifiedCase) -> str:
    if case.dump_note:
        return f"{case.counts('dump', 'deep')[SKIPPED]} {case.dump_note}"
    return _summarise(case.counts("dump", "deep"))


def _in_cell(case: VerifiedCase) -> str:
    """``both``, or the ``only in A``/``only in B`` of the case's ``case`` check."""
    return next((c.path for c in case.checks if c.kind == "case"), "both")


VERIFY = ReportKind(
    command="kafka-conformance verify",
    format=REPORT_FORMAT,
    columns=(
        Column("files", lambda case: str(case.files), right=True),
        Column("sha256", _sha256_cell),
        Column("decode", lambda case: _summarise(case.counts("decode"))),
        Column("dump", _dump_cell),
    ),
    parties=PARTIES,
)

CAPTURE_COMPARE = ReportKind(
    command="kafka-conformance capture compare",
    format=COMPARE_FORMAT,
    columns=(
        Column("in", _in_cell),
        Column("files", lambda case: str(case.files) if _in_cell(case) == "both" else "-", True),
        Column("records", lambda case: _summarise(case.counts("decode"))),
        Column("other files", lambda case: _summarise(case.counts("file"))),
    ),
    parties=COMPARE_PARTIES,
    listed=("case",),
)


# --------------------------------------------------------------------------------------------
# output


def _listing(
    report: CorpusReport, title: str, checks: list[tuple[VerifiedCase, Check]]
) -> list[str]:
    if not checks:
        return []
    lines = ["", f"{title}:"]
    for case, check in checks:
        lines.append(
            f"  {printable_name(case.case_id)}: {printable_name(check.name)} ({check.status})"
        )
        if check.status == MISMATCH and check.kind in report.kind.parties:
            lines.append(f"    [{report.kind.parties[check.kind]}]")
        lines += [f"    {printable_name(d)}" for d in check.details]
    return lines


def format_table(report: CorpusReport, *, quiet: bool) -> str:
    lines: list[str] = []
    if report.compared_with is not None:
        lines += [f"A: {printable_name(report.root)}", f"B: {printable_name(report.compared_with)}"]
    columns = report.kind.columns
    header = ("scenario", *(c.header for c in columns), "time", "")
    right = (False, *(c.right for c in columns), False, False)
    by_broker: dict[str, list[VerifiedCase]] = {}
    for case in report.cases:
        by_broker.setdefault(case.broker_id, []).append(case)
    if not quiet and report.cases:
        rows = [
            (
                "  " + printable_name(case.scenario),
                *(c.cell(case) for c in columns),
                f"{case.seconds:.2f}s",
                "" if case.ok else "FAIL",
            )
            for case in report.cases
        ]
        widths = [
            max(len(r[i]) for r in [("  " + header[0], *header[1:]), *rows])
            for i in range(len(header))
        ]

        def fmt(row: Sequence[str]) -> str:
            cells = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)]
            return "  ".join(cells).rstrip()

        lines.append(fmt(("  " + header[0], *header[1:])))
        i = 0
        for broker, cases in by_broker.items():
            version = cases[0].broker_version or "?"
            writer = cases[0].written_by
            source = (
                f"written by {writer}, dumped by Kafka {version}" if writer else f"Kafka {version}"
            )
            lines.append(f"{printable_name(broker)} ({source})")
            for _ in cases:
                lines.append(fmt(rows[i]))
                i += 1
        lines.append("")
    counts = report.counts()
    failed_cases = sum(not c.ok for c in report.cases)
    verdict = "PASS" if report.ok else f"FAIL ({failed_cases} case(s))"
    written = {case.broker_id for case in report.cases if case.written_by}
    sources = f"{len(by_broker) - len(written)} broker(s)"
    if written:
        sources += f", {len(written)} written director{'y' if len(written) == 1 else 'ies'}"
    lines.append(
        f"{len(report.cases)} case(s), {sources}, {sum(counts.values())} "
        f"checks: {_summarise(counts)} -- {verdict} in {report.seconds:.2f}s"
    )
    lines += _listing(report, "failures", report.failures())
    skipped = [
        (case, c)
        for case, c in report.checks
        if c.status == SKIPPED and c.kind in report.kind.listed
    ]
    lines += _listing(report, "skipped", skipped)
    return "\n".join(lines) + "\n"
