"""Do two captures hold the same records? (e.g. the jvm and testcontainers backends)

Two corpus roots, broker directories or cases (A and B) are compared case by case, the cases
matched by their ``<broker-id>/<scenario>`` (the last two names of the case directory, the ids
``verify`` reports). For every case under both:

* ``file``: every file under ``log/`` is on both sides, by name, except the ``file:``
  patterns of the scenario's ``non_deterministic`` list (each side's manifest.json);
* ``decode``: every record file (``.log``, ``.checkpoint``) decodes (file mode) to the same
  canonical JSON on both sides once the keys named in ``non_deterministic`` are masked.

A case under only one of A and B is one ``case`` check, ``only in A`` or ``only in B``:
skipped (A may be a whole corpus and B a few cases captured again), or a mismatch with
``same_cases``. ``wire/`` captures and the ``expected/`` trees are not compared; a directory
without manifest.json is not a case (``verify`` reports those). The result is a
:class:`~conformance.corpus.report.CorpusReport` of kind ``CAPTURE_COMPARE``, so
``kafka-conformance capture compare`` renders it as ``verify`` renders its own (table, JSON,
JUnit XML).
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance import decode
from conformance.capture.scenarios import mask, masked_keys
from conformance.corpus.golden import (
    RECORD_SUFFIXES,
    case_id,  # verify's case ids, one rule
    find_cases,
    read_manifest,
)
from conformance.corpus.report import (
    CAPTURE_COMPARE,
    ERROR,
    MISMATCH,
    OK,
    SKIPPED,
    Check,
    CorpusReport,
    VerifiedCase,
)
from conformance.fileio import printable_name, read_bytes
from conformance.jsondoc import json_text
from conformance.stream import result as canonical
from conformance.stream.compare import diff

__all__ = ["NothingToCompare", "compare_case", "compare_corpora", "decoded_content"]

#: the two parties compared, in the order of the command line
PARTIES = ("A", "B")
#: the differences listed per file
MAX_DETAILS = 5


class NothingToCompare(Exception):
    """A or B holds no case (none matching ``only``), or no case is under both: the one-line
    reason, for a usage error (nothing compared is not a pass)."""


def _case_files(case: Path, patterns: Sequence[str]) -> dict[str, Path]:
    """file under ``log/`` (relative to the case) -> its path, without the ``file:`` patterns."""
    return {
        f.relative_to(case).as_posix(): f
        for f in sorted((case / "log").rglob("*"))
        if f.is_file() and not any(fnmatch.fnmatch(f.name, p) for p in patterns)
    }


def decoded_content(path: Path, keys: set[str]) -> Any:
    """The canonical decode document (file mode) of a record file, the ``keys`` masked."""
    doc = canonical.result_to_dict(decode(read_bytes(path), mode="file", filename=path.name))
    return mask(doc, keys)


def _differences(a: Any, b: Any) -> list[str]:
    """What differs between two documents of different texts: their JSON paths with both
    values (``stream.compare.diff``, the first :data:`MAX_DETAILS`), else where the texts part."""
    lines = diff(a, b, parties=PARTIES) or [_first_difference(json_text(a), json_text(b))]
    if len(lines) > MAX_DETAILS:
        lines = lines[:MAX_DETAILS] + [f"... and {len(lines) - MAX_DETAILS} more"]
    return lines


def _first_difference(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (
        f"decoded content differs at character {n}: {a[max(0, n - 60) : n + 60]!r} vs "
        f"{b[max(0, n - 60) : n + 60]!r}"
    )


def _check_file(rel: str, paths: dict[str, Path], keys: dict[str, set[str]]) -> Check:
    """One file of a case: ``paths`` and ``keys`` by side."""
    t0 = time.perf_counter()
    kind = "decode" if rel.rsplit("/", 1)[-1].endswith(RECORD_SUFFIXES) else "file"
    missing = [s for s in PARTIES if s not in paths]
    if missing:
        (there,) = set(PARTIES) - set(missing)
        return Check(kind, rel, MISMATCH, [f"only in {there}"])
    if kind == "file":
        return Check(kind, rel, OK, seconds=time.perf_counter() - t0)
    docs = []
    for side in PARTIES:
        try:
            docs.append(decoded_content(paths[side], keys[side]))
        except OSError as e:
            why = f"{side}'s file cannot be read: {e.strerror or e}"
            return Check(kind, rel, ERROR, [why], time.perf_counter() - t0)
    if json_text(docs[0]) == json_text(docs[1]):
        return Check(kind, rel, OK, seconds=time.perf_counter() - t0)
    return Check(kind, rel, MISMATCH, _differences(*docs), time.perf_counter() - t0)


def compare_case(a: Path, b: Path) -> VerifiedCase:
    """Every check of one case, present under both roots (``a``: A's case directory)."""
    t0 = time.perf_counter()
    result = VerifiedCase(case_id(a), a)
    files: dict[str, dict[str, Path]] = {}
    keys: dict[str, set[str]] = {}
    for side, case in zip(PARTIES, (a, b)):
        try:
            manifest = read_manifest(case)
        except (OSError, ValueError) as e:
            why = f"{side}'s manifest.json is unreadable: {e}"
            result.checks.append(Check("manifest", "manifest.json", ERROR, [why]))
            continue
        if side == "A" and isinstance(manifest.get("broker_version"), str):
            result.broker_version = manifest["broker_version"]
        keys[side], patterns = masked_keys(manifest.get("non_deterministic", []))
        for rel, path in _case_files(case, patterns).items():
            files.setdefault(rel, {})[side] = path
    if not result.checks:
        result.files = len(files)
        result.checks += [_check_file(rel, files[rel], keys) for rel in sorted(files)]
    result.dump_note = "not compared"
    result.seconds = time.perf_counter() - t0
    return result


def _one_sided(side: str, case: Path, same_cases: bool) -> VerifiedCase:
    result = VerifiedCase(case_id(case), case, dump_note="not compared")
    status = MISMATCH if same_cases else SKIPPED
    result.checks.append(Check("case", f"only in {side}", status, [printable_name(case)]))
    try:
        version = read_manifest(case).get("broker_version")
    except (OSError, ValueError):
        version = None
    result.broker_version = version if isinstance(version, str) else None
    return result


def compare_corpora(
    a: Path, b: Path, *, only: str | Sequence[str] | None = None, same_cases: bool = False
) -> CorpusReport:
    """Compare the captures under ``a`` and ``b`` (see the module's docstring); ``only``:
    glob(s) on ``<broker-id>/<scenario>`` as ``verify --only``. Raises
    :class:`NothingToCompare` when a side has no case or no case is under both."""
    t0 = time.perf_counter()
    roots = dict(zip(PARTIES, (Path(a), Path(b))))
    cases: dict[str, dict[str, Path]] = {}
    for side, root in roots.items():
        found = {case_id(c): c for c in find_cases(root, only)}
        if not found:
            globs = [] if not only else [only] if isinstance(only, str) else list(only)
            matching = f" matching {', '.join(globs)}" if globs else ""
            raise NothingToCompare(
                f"{side} ({printable_name(root)}): no case{matching} under it "
                "(a <broker-id>/<scenario>/ directory with manifest.json)"
            )
        cases[side] = found
    common = cases["A"].keys() & cases["B"].keys()
    if not common:
        counts = ", ".join(f"{s} has {len(cases[s])}" for s in PARTIES)
        raise NothingToCompare(
            f"no case is under both A and B ({counts}; cases are matched by "
            f"<broker-id>/<scenario>, e.g. {min(cases['A'])} and {min(cases['B'])})"
        )
    report = CorpusReport(roots["A"], kind=CAPTURE_COMPARE, compared_with=roots["B"])
    for cid in sorted(cases["A"].keys() | cases["B"].keys()):
        if cid in common:
            report.cases.append(compare_case(cases["A"][cid], cases["B"][cid]))
        else:
            side = "A" if cid in cases["A"] else "B"
            report.cases.append(_one_sided(side, cases[side][cid], same_cases))
    report.seconds = time.perf_counter() - t0
    return report


if __name__ == "__main__":  # the retired entry point: say where it went, compare nothing
    import sys

    print(
        "python -m conformance.capture.compare is now: kafka-conformance capture compare A B "
        "(kafka-conformance capture compare --help)",
        file=sys.stderr,
    )
    sys.exit(2)
