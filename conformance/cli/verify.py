"""``kafka-conformance verify``: the golden corpora against Kafka's own verdicts (``corpus.golden``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.corpus.golden import default_root, verify_corpus

_EPILOG = """\
checks, for every corpora/<broker-id>/<scenario>/ case (docs/corpora.md):
  sha256   every file listed in manifest.json is on disk with that sha256 and size (and
           every file under log/ and wire/ is listed)
  decode   kafka-conformance's decoder on each .log/.checkpoint (file mode) and wire/*.bin
           (memory mode) = expected/<path>.decode.json, the Java oracle's verdict
  dump     kafka-conformance dump on each .log/.index/.timeindex/.txnindex/.snapshot =
           expected/<path>.dump.txt (+ .dump.err), DumpLogSegments' output, byte for byte;
           for .log also --deep-iteration --print-data-log = expected/<path>.deep.txt.
           Only for brokers >= 3.3 (older DumpLogSegments print another format: skipped)
No Java is needed. corpora/crafted and corpora/samples have their own tests.

exit codes:
  0  every check passed (or was skipped)
  1  a mismatch or an error (missing file, missing expectation, ...)
  2  usage error, DIR not found, or --only matched nothing

examples:
  kafka-conformance verify
  kafka-conformance verify -q --junit verify.xml -j 4
  kafka-conformance verify --only 'kafka-3.9.2-*' --json report.json
  kafka-conformance verify --only 'kafka-*-kraft/codec-*'
  kafka-conformance verify corpora/kafka-3.9.2-kraft/codec-gzip-v2
"""


def _cmd_verify(args: argparse.Namespace) -> int:
    root = default_root() if args.dir is None else Path(args.dir)
    if not root.is_dir():
        print(f"kafka-conformance verify: {root}: no such directory", file=sys.stderr)
        return 2
    report = verify_corpus(root, only=args.only or None, jobs=args.jobs)
    if not report.cases:
        what = f" matching {', '.join(args.only)}" if args.only else ""
        print(f"kafka-conformance verify: no corpus case{what} under {root}", file=sys.stderr)
        if args.only:
            return 2
    try:
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # pragma: no cover
        pass
    sys.stdout.write(report.format_table(quiet=args.quiet))
    if args.json:
        text = json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            Path(args.json).write_text(text, encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(report.to_junit(), encoding="utf-8")
    return report.exit_code


def register(subparsers: Any) -> None:
    """Add ``verify`` to the ``kafka-conformance`` parser."""
    p = subparsers.add_parser(
        "verify",
        help="verify the golden corpora of real brokers (decode and dump vs Kafka's own tools)",
        description="Check every case of the golden corpora (real brokers' log directories\n"
        "and wire captures): file hashes, the decoder against the Java oracle's verdict,\n"
        "and the dump against the broker's own DumpLogSegments output.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EPILOG,
    )
    p.add_argument("dir", nargs="?", default=None, metavar="DIR",
                   help="corpora directory, a broker directory or one case "
                   "(default: the repository's corpora/)")
    p.add_argument("--only", action="append", metavar="BROKER/SCENARIO-GLOB",
                   help="only cases whose <broker-id>/<scenario> matches (a glob without '/' "
                   "names broker ids); repeatable")
    p.add_argument("--json", metavar="OUT", help="write the report as JSON to OUT ('-': stdout)")
    p.add_argument("--junit", metavar="OUT", help="write a JUnit XML report to OUT")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                   help="verify N cases at a time, in separate processes (default 0: one per "
                   "CPU)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no table: only the summary line and the failures")
    p.set_defaults(func=_cmd_verify)
