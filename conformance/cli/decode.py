"""``kafka-conformance decode``: Kafka's verdict on record batches and message sets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance import codecs
from conformance.stream.decoder import decode
from conformance.stream.findings import FINDING_CODES
from conformance.stream.result import DecodeResult, dumps

EXIT_OK = 0
EXIT_DECODE_ERROR = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3

_DECODE_EPILOG = f"""\
exit codes:
  {EXIT_OK}  every input decoded (outcome ok or partial), no strict findings
  {EXIT_DECODE_ERROR}  at least one input has outcome "error" (Kafka would raise)
  {EXIT_USAGE}  usage error, or an input file could not be read
  {EXIT_FINDINGS}  profile strict only: no errors, but findings were reported

outcomes:
  ok       every byte belongs to a batch that decoded completely
  partial  a truncated trailing batch / short tail was left unread (not an error, as in Kafka)
  error    Kafka raises; the JSON names its Java exception class, message and position

strict finding codes:
""" + "\n".join(f"  {code:32} {text}" for code, text in FINDING_CODES.items()) + """

examples:
  kafka-conformance decode corpora/samples/*.bin
  kafka-conformance decode --json --as file 00000000000000000000.log
  kafka-conformance decode --profile strict --json fetch-response-records.bin
"""


def _summary(path: str, result: DecodeResult) -> str:
    lines = [f"{path}: {result.outcome}, {len(result.batches)} batches, {len(result.records)} records"]
    for b in result.batches:
        h = b.header
        first = f"baseOffset {h.base_offset}" if h.magic >= 2 else f"offset {h.last_offset}"
        lines.append(
            f"  @{h.position} magic {h.magic} {first} lastOffset {h.last_offset} "
            f"{codecs.codec_name(h.compression_id)} {h.timestamp_type} records {len(b.records)}"
            + (" control" if h.is_control else "")
        )
    if result.error is not None:
        e = result.error
        lines.append(f"  error at batch {e.batch_index} (byte {e.position}): {e.java_string()}")
    if result.tail is not None:
        lines.append(f"  partial tail: {result.tail.bytes} bytes at {result.tail.position}")
    for f in result.findings or []:
        lines.append(f"  finding {f.code} @{f.position} (batch {f.batch_index}): {f.message}")
    return "\n".join(lines)


def _cmd_decode(args: argparse.Namespace) -> int:
    worst = EXIT_OK
    for name in args.files:
        try:
            data = Path(name).read_bytes()
        except OSError as e:
            print(f"kafka-conformance: cannot read {name}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        result = decode(
            data,
            mode=args.mode,
            profile=args.profile,
            filename=name,
            decompressed_limit=args.max_decompressed,
        )
        if args.json:
            print(dumps(result.to_json()))
        else:
            print(_summary(name, result))
        if result.outcome == "error":
            worst = EXIT_DECODE_ERROR
        elif result.findings and worst == EXIT_OK:
            worst = EXIT_FINDINGS
    return worst


def register(subparsers: Any) -> None:
    """Add ``decode`` to the ``kafka-conformance`` parser."""
    p = subparsers.add_parser(
        "decode",
        help="decode record batches / message sets and print Kafka's verdict",
        description="Decode each FILE as Kafka's Java consumer would and print the verdict: "
        "a readable summary, or one canonical JSON document per file (--json).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_DECODE_EPILOG,
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print canonical JSON, one line per file")
    p.add_argument(
        "--as",
        dest="mode",
        choices=("memory", "file"),
        default="memory",
        help="splitting semantics: memory (produce/fetch data, MemoryRecords; default) or file "
        "(log segment, FileRecords)",
    )
    p.add_argument(
        "--profile",
        choices=("kafka", "strict"),
        default="kafka",
        help="kafka: Kafka's verdict only (default); strict: also report findings for "
        "anomalies Kafka accepts silently",
    )
    p.add_argument(
        "--max-decompressed",
        type=int,
        default=codecs.DEFAULT_DECOMPRESSED_LIMIT,
        metavar="BYTES",
        help="limit on decompressed bytes per batch (default %(default)s)",
    )
    p.set_defaults(func=_cmd_decode)
