"""``kafka-conformance verify``: the golden corpora against Kafka's own verdicts
(``corpus.golden``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.cli.common import (
    add_command,
    add_only,
    add_report_outputs,
    directory_ok,
    non_negative_int,
    report_outputs_ok,
    shown,
    write_report,
)
from conformance.corpus.golden import default_root, verify_corpus
from conformance.jvm.runtime import ROOT_ENV, NoCheckout

_PROG = "kafka-conformance verify"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

_EPILOG = """\
checks, for every corpora/<broker-id>/<scenario>/ case (docs/corpora.md):
  sha256   every file listed in manifest.json is on disk with that sha256 and size (and
           every file under log/ and wire/ is listed)
  decode   kafka-conformance's decoder on each .log/.checkpoint (file mode) and wire/*.bin
           (memory mode) = expected/<path>.decode.json, the Java oracle's verdict
  dump     kafka-conformance dump on each .log/.index/.timeindex/.txnindex/.snapshot =
           expected/<path>.dump.txt (+ .dump.err), DumpLogSegments' output, byte for byte;
           for .log also --deep-iteration --print-data-log = expected/<path>.deep.txt;
           printed in the format of the case's broker_version (dump --format-of); a
           version the kit has no format for is reported as skipped
No Java is needed. corpora/crafted and corpora/samples have their own tests.

A directory with log/ or wire/ but no manifest.json is reported as a failed case (missing
manifest); a run that finds no case at all verifies nothing and fails (exit 2).

In the failures, each detail says which side is which: expected (the Java oracle, Kafka's
DumpLogSegments, the manifest) and actual (this kit's decoder and dump, the file on disk).

exit codes:
  0  every check passed (or was skipped)
  1  a mismatch or an error (missing file or manifest, unreadable file, size or sha256
     different from the manifest, missing expectation, ...)
  2  usage error, DIR not found, nothing to verify (no case under DIR, or --only matched
     nothing), or --json/--junit OUT cannot be written

examples:
  kafka-conformance verify
  kafka-conformance verify -q --junit verify.xml -j 4
  kafka-conformance verify --only 'kafka-3.9.2-*' --json report.json
  kafka-conformance verify --only 'kafka-*-kraft/codec-*'
  kafka-conformance verify corpora/kafka-3.9.2-kraft/codec-gzip-v2
"""


def _cmd_verify(args: argparse.Namespace) -> int:
    try:
        root = default_root() if args.dir is None else Path(args.dir)
    except NoCheckout:  # an installed package: no corpora/ to default to
        print(
            f"{_PROG}: no corpora directory: pass DIR or set {ROOT_ENV} to a checkout",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not directory_ok(_PROG, root) or not report_outputs_ok(_PROG, args):
        return EXIT_USAGE
    report = verify_corpus(root, only=args.only or None, jobs=args.jobs)
    if not report.cases:
        what = f" matching {', '.join(args.only)}" if args.only else ""
        print(
            f"{_PROG}: nothing to verify: no corpus case{what} (a directory with "
            f"manifest.json, log/ or wire/) under {shown(root)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not write_report(_PROG, report, args):
        return EXIT_USAGE
    return report.exit_code


def register(subparsers: Any) -> None:
    """Add ``verify`` to the ``kafka-conformance`` parser."""
    p = add_command(
        subparsers,
        "verify",
        "verify the golden corpora of real brokers (decode and dump vs Kafka's own tools)",
        "Check every case of the golden corpora (real brokers' log directories\n"
        "and wire captures): file hashes, the decoder against the Java oracle's verdict,\n"
        "and the dump against the broker's own DumpLogSegments output.",
        _EPILOG,
    )
    p.add_argument(
        "dir",
        nargs="?",
        default=None,
        metavar="DIR",
        help="corpora directory, a broker directory or one case "
        "(default: corpora/ of the checkout holding the package, or of "
        "$KAFKA_CONFORMANCE_ROOT; an installed package has none: pass DIR)",
    )
    add_only(p)
    add_report_outputs(p, "no table: only the summary line and the failures")
    p.add_argument(
        "-j",
        "--jobs",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="verify N cases at a time, in separate processes (default 0: one per CPU)",
    )
    p.set_defaults(func=_cmd_verify)
