"""``kafka-conformance capture compare A B``: do two captures hold the same records?
(``capture.compare``; the report of ``verify``, ``corpus.report``)."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.capture.compare import NothingToCompare, compare_corpora
from conformance.cli.common import (
    add_command,
    add_only,
    add_report_outputs,
    directory_ok,
    report_outputs_ok,
    write_report,
)

__all__ = ["register"]

_PROG = "kafka-conformance capture compare"
EXIT_USAGE = 2

_EPILOG = """\
A and B are corpus roots, broker directories or cases; their cases are matched by
<broker-id>/<scenario> (the last two names of a case directory, as verify names them). For
every case under both, the checks are:
  file     every file under log/ is on both sides, by name, except the file: patterns of the
           scenario's non_deterministic list in manifest.json (partition.metadata, ...)
  decode   every .log and .checkpoint decodes (file mode, this kit's decoder) to the same
           canonical JSON on both sides, once the keys the manifest's non_deterministic list
           names are masked (crc, maxTimestamp, ...)
A case under only one of A and B is a check "case only in A" (or B), listed after the
summary: skipped, not a failure (A may be a whole corpus and B a few cases captured again),
unless --same-cases. wire/ captures and expected/ trees are not compared (verify checks each
capture against Kafka's own verdicts); a directory without manifest.json is not a case.
The run takes a second or two (every golden corpus against itself).

exit codes:
  0  every case under both holds the same files and records (cases in only one: skipped)
  1  a difference: a file on one side only, records that decode differently, an unreadable
     file or manifest, or (--same-cases) a case under only one of A and B
  2  usage error, A or B not found or not a directory, no case under A or B (or none
     matching --only), no case under both (nothing compared is not a pass), or --json/--junit
     OUT cannot be written

examples:
  kafka-conformance capture compare /tmp/c/jvm /tmp/c/testcontainers
  kafka-conformance capture compare -q --same-cases --junit compare.xml /tmp/c/jvm /tmp/c/tc
  kafka-conformance capture compare corpora /tmp/c --only 'kafka-3.9.2-kraft/codec-*'
  kafka-conformance capture compare corpora/kafka-3.9.2-kraft /tmp/c --json -
"""


def register(subparsers: Any, capture_options: Sequence[argparse.Action]) -> None:
    """Add ``compare`` under ``capture``; ``capture_options``: capture's own options, refused
    before ``compare`` (``capture --broker X compare A B``)."""
    p = add_command(
        subparsers,
        "compare",
        "compare two captures: same files, same decoded records (apart from the "
        "declared non-deterministic fields)",
        "Compare two captures (e.g. the jvm and testcontainers backends) case by\n"
        "case: the same partition files, and the same decoded records apart from the fields\n"
        "each scenario declares non-deterministic. Reports as kafka-conformance verify does.",
        _EPILOG,
        prog=_PROG,  # capture's usage= is its own text: argparse would prefix it to this one
    )
    p.add_argument(
        "a", metavar="A", help="the first capture: corpus root, broker directory or case"
    )
    p.add_argument("b", metavar="B", help="the second capture, compared with A")
    add_only(p)
    p.add_argument(
        "--same-cases",
        action="store_true",
        help="a case under only one of A and B is a failure (default: skipped)",
    )
    add_report_outputs(
        p, "no table: only the summary line, the failures and the cases under one side only"
    )
    p.set_defaults(func=functools.partial(_cmd_compare, capture_options=tuple(capture_options)))


def _cmd_compare(args: argparse.Namespace, *, capture_options: Sequence[argparse.Action]) -> int:
    given = [a.option_strings[-1] for a in capture_options if getattr(args, a.dest) != a.default]
    if given:
        print(
            f"{_PROG}: {', '.join(given)}: capture's own option(s), not compare's "
            "(see kafka-conformance capture compare --help)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    for name, root in (("A", args.a), ("B", args.b)):
        if not directory_ok(_PROG, Path(root), name):
            return EXIT_USAGE
    if not report_outputs_ok(_PROG, args):
        return EXIT_USAGE
    try:
        report = compare_corpora(
            Path(args.a), Path(args.b), only=args.only or None, same_cases=args.same_cases
        )
    except NothingToCompare as e:
        print(f"{_PROG}: nothing to compare: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not write_report(_PROG, report, args):
        return EXIT_USAGE
    return report.exit_code
