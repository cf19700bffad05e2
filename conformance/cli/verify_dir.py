"""``kafka-conformance verify-dir``: findings in segments and log directories
(``logdir.verify``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any

from conformance.cli.common import (
    add_command,
    add_max_decompressed,
    cannot_read,
    shown,
)
from conformance.fileio import check_regular_file
from conformance.logdir.verify import FINDING_CODES, SEVERITY, Status, verify_dir
from conformance.logdir.verify.findings import DirReport

_PROG = "kafka-conformance verify-dir"

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

_EPILOG = (
    "Verifies every file of a partition directory (<topic>-<n>), of a log directory (its\n"
    "partition directories and root checkpoint files) or of a single .log segment with Kafka's\n"
    "own rules: batches decoded as the consumer decodes them, index entries checked against\n"
    "the batches they name, offsets followed across segments (gaps allowed only at or below\n"
    "the root cleaner-offset-checkpoint entry), aborted transactions matched with .txnindex.\n"
    "Each finding: file, byte position in it, code, severity, message (Java exception named).\n\n"
    "exit codes:\n"
    f"  {EXIT_CLEAN}  clean: no findings, or informational ones only\n"
    f"  {EXIT_FINDINGS}  at least one error or warning finding "
    "(a file of DIR that cannot be read,\n"
    "     or is not a regular file, is an io-error finding)\n"
    f"  {EXIT_USAGE}  usage error (DIR does not exist, is not a directory or a regular .log file,\n"
    "     cannot be listed; bad option)\n\n"
    "finding codes (severity):\n"
    + "\n".join(f"  {code:30} {SEVERITY[code]:8} {text}" for code, text in FINDING_CODES.items())
    + "\n\nexamples:\n"
    "  kafka-conformance verify-dir /var/lib/kafka/data/orders-0\n"
    "  kafka-conformance verify-dir /var/lib/kafka/data"
    "            # every partition + checkpoints\n"
    "  kafka-conformance verify-dir --json orders-0/00000000000000000000.log\n"
    "  kafka-conformance verify-dir --max-decompressed 268435456 orders-0\n"
)


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "verify-dir",
        "verify a segment, a partition directory or a log directory",
        "Verify Kafka log files and report findings by file, with codes and byte positions.",
        _EPILOG,
    )
    p.add_argument("dir", metavar="DIR", help="partition directory, log directory or .log file")
    p.add_argument("--json", action="store_true", help="print one JSON document with the findings")
    add_max_decompressed(p, "; a batch over it is reported as log-decompressed-limit")
    p.set_defaults(func=_cmd_verify_dir)


def _printable(report: DirReport) -> DirReport:
    """``report`` with control characters of file names (and messages quoting them) escaped,
    for the human-readable text."""
    findings = [
        dataclasses.replace(f, file=shown(f.file), message=shown(f.message))
        for f in report.findings
    ]
    suppressed = {
        f"{shown(k.split(chr(9))[0])}\t{k.split(chr(9))[1]}": n
        for k, n in report.suppressed.items()
    }
    return dataclasses.replace(
        report, root=shown(report.root), findings=findings, suppressed=suppressed
    )


def _cmd_verify_dir(args: argparse.Namespace) -> int:
    def _progress(message: str) -> None:
        print(f"verify-dir: {shown(message)}", file=sys.stderr, flush=True)

    try:
        if os.path.lexists(args.dir) and not os.path.isdir(args.dir):
            check_regular_file(args.dir)  # a FIFO, socket or device is refused, not opened
    except OSError as e:
        print(cannot_read(_PROG, e, args.dir), file=sys.stderr)
        return EXIT_USAGE
    progress: Status | None = _progress if sys.stderr.isatty() else None
    try:
        report = verify_dir(args.dir, max_decompressed=args.max_decompressed, progress=progress)
    except OSError as e:
        print(
            cannot_read(_PROG, e, args.dir)
            if e.filename is not None
            else f"{_PROG}: {shown(str(e))}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except ValueError as e:
        print(f"{_PROG}: {shown(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report.to_dict(), sort_keys=True))
    else:
        print(_printable(report).format_text())
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS
