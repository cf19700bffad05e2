"""Reports of ``kafka-conformance verify`` (the golden corpora, ``corpus.golden``): one
:class:`Check` per file and kind, a :class:`CaseResult` per case, the :class:`CorpusReport` of a
run, and their renderings: JSON (``kafka-conformance/verify/1``), JUnit XML and the text table.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fileio import printable_name
from conformance.jsondoc import JsonDocument

__all__ = [
    "ERROR",
    "MISMATCH",
    "OK",
    "REPORT_FORMAT",
    "SIDES",
    "SKIPPED",
    "CaseResult",
    "Check",
    "CorpusReport",
    "format_table",
]

REPORT_FORMAT = "kafka-conformance/verify/1"

OK, MISMATCH, SKIPPED, ERROR = "ok", "mismatch", "skipped", "error"


@dataclass
class Check(JsonDocument):
    """One check of one case: ``kind`` is manifest, sha256, decode, dump or deep."""

    kind: str
    path: str
    status: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.kind} {self.path}"

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
class CaseResult(JsonDocument):
    case_id: str  # "<broker-id>/<scenario>"
    directory: Path
    broker_version: str | None = None
    files: int = 0
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    dump_note: str | None = None  # "skipped (format of 1.1.1)"

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
        return Counter(c.status for c in self.checks if c.kind in kinds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case_id,
            "broker_id": self.broker_id,
            "scenario": self.scenario,
            "directory": str(self.directory),
            "broker_version": self.broker_version,
            "ok": self.ok,
            "files": self.files,
            "dump": self.dump_note or "compared",
            "seconds": round(self.seconds, 6),
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class CorpusReport(JsonDocument):
    root: Path
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def checks(self) -> list[tuple[CaseResult, Check]]:
        return [(case, c) for case in self.cases for c in case.checks]

    def counts(self) -> Counter[str]:
        return Counter(c.status for _, c in self.checks)

    def failures(self) -> list[tuple[CaseResult, Check]]:
        return [(case, c) for case, c in self.checks if c.failed]

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "format": REPORT_FORMAT,
            "root": str(self.root),
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
            name="kafka-conformance verify",
            tests=str(sum(counts.values())),
            failures=str(counts.get(MISMATCH, 0)),
            errors=str(counts.get(ERROR, 0)),
            skipped=str(counts.get(SKIPPED, 0)),
            time=f"{self.seconds:.3f}",
        )
        for case in self.cases:
            c = case.counts("manifest", "sha256", "decode", "dump", "deep")
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
# output

#: which side of a failed check's details is which: the expectation (Kafka's own tools, or the
#: manifest) and what this kit produced (``stream.compare.diff`` prints ``expected != actual``)
SIDES: dict[str, str] = {
    "decode": "<json path>: <expected: the Java oracle's verdict, expected/<file>.decode.json> "
    "!= <actual: kafka-conformance's decoder>",
    "dump": "expected: Kafka's DumpLogSegments (expected/<file>.dump.txt/.dump.err); "
    "actual: kafka-conformance dump",
    "deep": "expected: Kafka's DumpLogSegments --deep-iteration --print-data-log "
    "(expected/<file>.deep.txt); actual: kafka-conformance dump",
    "sha256": "manifest: manifest.json; on disk: the file as it is now",
}


def _summarise(counter: Counter[str]) -> str:
    parts = []
    for status in (OK, MISMATCH, ERROR, SKIPPED):
        n = counter.get(status, 0)
        if n:
            label = status if status in (OK, SKIPPED) else status.upper()
            parts.append(f"{n} {label}")
    return ", ".join(parts) or "-"


def format_table(report: CorpusReport, *, quiet: bool) -> str:
    lines: list[str] = []
    header = ("scenario", "files", "sha256", "decode", "dump", "time", "")
    by_broker: dict[str, list[CaseResult]] = {}
    for case in report.cases:
        by_broker.setdefault(case.broker_id, []).append(case)
    if not quiet and report.cases:
        rows: list[tuple[str, ...]] = []
        for case in report.cases:
            sha = case.counts("sha256", "manifest")
            sha_text = (
                "ok"
                if not (sha[MISMATCH] or sha[ERROR])
                else _summarise(Counter({k: v for k, v in sha.items() if k != OK}))
            )
            dump_counts = case.counts("dump", "deep")
            dump_text = (
                f"{dump_counts[SKIPPED]} {case.dump_note}"
                if case.dump_note
                else _summarise(dump_counts)
            )
            rows.append(
                (
                    "  " + printable_name(case.scenario),
                    str(case.files),
                    sha_text,
                    _summarise(case.counts("decode")),
                    dump_text,
                    f"{case.seconds:.2f}s",
                    "" if case.ok else "FAIL",
                )
            )
        widths = [
            max(len(r[i]) for r in [("  " + header[0], *header[1:]), *rows])
            for i in range(len(header))
        ]

        def fmt(row: Sequence[str]) -> str:
            cells = [
                row[0].ljust(widths[0]),
                row[1].rjust(widths[1]),
                *(c.ljust(w) for c, w in zip(row[2:], widths[2:])),
            ]
            return "  ".join(cells).rstrip()

        lines.append(fmt(("  " + header[0], *header[1:])))
        i = 0
        for broker, cases in by_broker.items():
            version = cases[0].broker_version or "?"
            lines.append(f"{printable_name(broker)} (Kafka {version})")
            for _ in cases:
                lines.append(fmt(rows[i]))
                i += 1
        lines.append("")
    counts = report.counts()
    failed_cases = sum(not c.ok for c in report.cases)
    verdict = "PASS" if report.ok else f"FAIL ({failed_cases} case(s))"
    lines.append(
        f"{len(report.cases)} case(s), {len(by_broker)} broker(s), {sum(counts.values())} "
        f"checks: {_summarise(counts)} -- {verdict} in {report.seconds:.2f}s"
    )
    failures = report.failures()
    if failures:
        lines.append("")
        lines.append("failures:")
        for case, check in failures:
            lines.append(
                f"  {printable_name(case.case_id)}: {printable_name(check.name)} ({check.status})"
            )
            if check.status == MISMATCH and check.kind in SIDES:
                lines.append(f"    [{SIDES[check.kind]}]")
            lines += [f"    {printable_name(d)}" for d in check.details]
    return "\n".join(lines) + "\n"
