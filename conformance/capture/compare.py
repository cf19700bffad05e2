"""Do two captures hold the same records? (e.g. the jvm and testcontainers backends)

Two corpus roots (``<root>/<broker-id>/<scenario>/``) are compared case by case, for the
cases both have: the same partition files by name (except the ``file:`` patterns of the
scenario's ``non_deterministic`` list), and every record file (``.log``, ``.checkpoint``)
decoded (file mode) to the same canonical JSON once the keys named in ``non_deterministic``
are masked. Command line::

    python -m conformance.capture.compare CORPUS_A CORPUS_B   # exit 0 same, 1 differ, 2 usage
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance import decode
from conformance.capture.scenarios import mask, masked_keys
from conformance.corpus.golden import RECORD_SUFFIXES, find_cases, read_manifest
from conformance.fileio import read_bytes
from conformance.jsondoc import json_text
from conformance.stream import result as canonical

__all__ = ["Difference", "compare", "decoded_content", "main"]


@dataclass(frozen=True)
class Difference:
    case: str  # <broker-id>/<scenario>
    path: str  # file under the case, or "" for the case itself
    what: str

    def __str__(self) -> str:
        return f"{self.case}: {self.path + ': ' if self.path else ''}{self.what}"


def decoded_content(case: Path) -> dict[str, str]:
    """file (relative to the case) -> its canonical decode with the non-deterministic keys
    masked, for record files; ``"present"`` for the other files; ``file:`` patterns left out."""
    keys, patterns = masked_keys(read_manifest(case).get("non_deterministic", []))
    out: dict[str, str] = {}
    for f in sorted((case / "log").rglob("*")):
        if not f.is_file() or any(fnmatch.fnmatch(f.name, p) for p in patterns):
            continue
        rel = f.relative_to(case).as_posix()
        if f.name.endswith(RECORD_SUFFIXES):  # leader-epoch-checkpoint has no suffix
            doc = canonical.result_to_dict(decode(read_bytes(f), mode="file", filename=f.name))
            out[rel] = json_text(mask(doc, keys))
        else:
            out[rel] = "present"
    return out


def _first_difference(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (
        f"decoded content differs at character {n}: {a[max(0, n - 60) : n + 60]!r} vs "
        f"{b[max(0, n - 60) : n + 60]!r}"
    )


def compare(a: Path, b: Path) -> tuple[list[str], list[Difference]]:
    """(cases compared, differences) of the cases present under both corpus roots."""
    cases_a = {c.relative_to(a).as_posix(): c for c in find_cases(a)}
    cases_b = {c.relative_to(b).as_posix(): c for c in find_cases(b)}
    common = sorted(cases_a.keys() & cases_b.keys())
    diffs: list[Difference] = []
    for name in common:
        da, db = decoded_content(cases_a[name]), decoded_content(cases_b[name])
        for rel in sorted(da.keys() - db.keys()):
            diffs.append(Difference(name, rel, f"only in {a}"))
        for rel in sorted(db.keys() - da.keys()):
            diffs.append(Difference(name, rel, f"only in {b}"))
        for rel in sorted(da.keys() & db.keys()):
            if da[rel] != db[rel]:
                diffs.append(Difference(name, rel, _first_difference(da[rel], db[rel])))
    return common, diffs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.capture.compare",
        description="Compare two captures (corpus roots) case by case: same files, same "
        "decoded records apart from the fields each scenario declares non-deterministic.",
        epilog="example: python -m conformance.capture.compare /tmp/c/jvm /tmp/c/testcontainers",
    )
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    for root in (args.a, args.b):
        if not root.is_dir():
            print(f"compare: {root} is not a directory", file=sys.stderr)
            return 2
    common, diffs = compare(args.a, args.b)
    if not common:
        print(f"compare: no case is in both {args.a} and {args.b}", file=sys.stderr)
        return 1
    for d in diffs:
        print(d)
    print(f"{len(common)} case(s) in both, {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
