"""``kafka-conformance verify-dir``: findings in segments and log directories (``logdir.verify``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from conformance import codecs
from conformance.logdir.verify import FINDING_CODES, SEVERITY, Progress, verify_dir

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
    f"  {EXIT_FINDINGS}  at least one error or warning finding\n"
    f"  {EXIT_USAGE}  usage error (DIR does not exist, bad option)\n\n"
    "finding codes (severity):\n"
    + "\n".join(f"  {code:30} {SEVERITY[code]:8} {text}" for code, text in FINDING_CODES.items())
    + "\n\nexamples:\n"
    "  kafka-conformance verify-dir /var/lib/kafka/data/orders-0\n"
    "  kafka-conformance verify-dir /var/lib/kafka/data            # every partition + checkpoints\n"
    "  kafka-conformance verify-dir --json orders-0/00000000000000000000.log\n"
    "  kafka-conformance verify-dir --max-decompressed 268435456 orders-0\n"
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "verify-dir",
        help="verify a segment, a partition directory or a log directory",
        description="Verify Kafka log files and report findings by file, with codes and byte "
        "positions.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EPILOG,
    )
    p.add_argument("dir", metavar="DIR", help="partition directory, log directory or .log file")
    p.add_argument("--json", action="store_true", help="print one JSON document with the findings")
    p.add_argument(
        "--max-decompressed",
        type=_positive,
        default=codecs.DEFAULT_DECOMPRESSED_LIMIT,
        metavar="BYTES",
        help="limit on decompressed bytes per batch (default %(default)s); a batch over it is "
        "reported as log-decompressed-limit",
    )
    p.set_defaults(func=_cmd_verify_dir)


def _cmd_verify_dir(args: argparse.Namespace) -> int:
    def _progress(message: str) -> None:
        print(f"verify-dir: {message}", file=sys.stderr, flush=True)

    progress: Progress | None = _progress if sys.stderr.isatty() else None
    try:
        report = verify_dir(args.dir, max_decompressed=args.max_decompressed, progress=progress)
    except (OSError, ValueError) as e:
        print(f"kafka-conformance verify-dir: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True))
    else:
        print(report.format_text())
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS
