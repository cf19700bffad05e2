"""``kafka-conformance lookup``: the batch holding an offset, or the first record at or after a
timestamp, found with the broker's algorithms (``logdir.lookup``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.errors import DecodeError
from conformance.logdir import lookup as _lookup
from conformance.logdir.lookup import LookupResult, lookup_offset, lookup_timestamp
from conformance.wire.batch import RecordBatchV2


def _print(result: LookupResult | None, as_json: bool) -> int:
    if as_json:
        print(json.dumps(None if result is None else result.to_json()))
    elif result is None:
        print("not found: no segment can hold that target")
    else:
        print(f"segment: {result.segment}")
        print(f"index entry used: {result.index_entry[0]} -> {result.index_entry[1]}")
        if result.batch is None:
            print("batch: none (the target is past the end of the segment)")
        else:
            b = result.batch
            first = f"baseOffset {b.base_offset} " if isinstance(b, RecordBatchV2) else ""
            print(
                f"batch: position {b.position} size {b.size_in_bytes} magic {b.magic} "
                f"{first}lastOffset {b.last_offset} maxTimestamp {b.max_timestamp}"
            )
        if result.record_offset is not None:
            print(f"record: offset {result.record_offset} timestamp {result.record_timestamp}")
    return 0 if result is not None and result.batch is not None else 1


def _cmd(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        print(f"kafka-conformance lookup: not a directory: {args.dir}", file=sys.stderr)
        return 2
    try:
        if args.offset is not None:
            result = lookup_offset(args.dir, args.offset)
        else:
            result = lookup_timestamp(args.dir, args.timestamp, args.starting_offset)
    except DecodeError as e:
        print(f"kafka-conformance lookup: {e}", file=sys.stderr)
        return 1
    return _print(result, args.json)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "lookup",
        help="find the batch holding an offset, or the first record at/after a timestamp",
        description=_lookup.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 found, 1 not found or unreadable, 2 usage error\n\n"
        "examples:\n"
        "  kafka-conformance lookup /var/lib/kafka/data/orders-0 --offset 123456\n"
        "  kafka-conformance lookup orders-0 --timestamp 1700000000000 --json\n",
    )
    p.add_argument("dir", metavar="DIR", help="a partition directory (<topic>-<partition>)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=int, help="target offset")
    g.add_argument("--timestamp", type=int, help="target timestamp (ms)")
    p.add_argument("--starting-offset", type=int, default=0, help="ignore records below (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd)
