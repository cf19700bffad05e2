"""``kafka-conformance lookup``: the batch holding an offset, or the first record at or after a
timestamp, found with the broker's algorithms (``logdir.lookup``)."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from typing import Any

from conformance.cli.common import (
    INT64_MAX,
    add_command,
    cannot_read,
    int64,
    non_negative_int64,
    shown,
)
from conformance.errors import DecodeError
from conformance.logdir import lookup as _lookup
from conformance.logdir.lookup import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    LookupResult,
    lookup_offset,
    lookup_timestamp,
)
from conformance.wire.batch import RecordBatchV2

_PROG = "kafka-conformance lookup"
EXIT_FOUND = 0
EXIT_NOT_FOUND = 1
EXIT_USAGE = 2

_EPILOG = f"""\
--timestamp -1 and -2 mean what they mean in Kafka's ListOffsets (fetchOffsetByTimestamp):
  -1 (LATEST_TIMESTAMP)    the log end offset: the offset after the last batch of the last
                           segment (the 'record:' line, timestamp -1; no batch holds it)
  -2 (EARLIEST_TIMESTAMP)  the log start offset: the first segment's base offset, or the
                           partition's entry in <log dir>/log-start-offset-checkpoint when
                           higher (with the batch holding it, if any)
  other negative timestamps are refused.

exit codes:
  {EXIT_FOUND}  found (for -1/-2: the offset was determined)
  {EXIT_NOT_FOUND}  not found, or a corrupt file on the way (Kafka would raise; the message says)
  {EXIT_USAGE}  usage error (bad option value, DIR not a directory), or a file of DIR that
     cannot be read (no permission, not a regular file, a symbolic link loop)

examples:
  kafka-conformance lookup /var/lib/kafka/data/orders-0 --offset 123456
  kafka-conformance lookup orders-0 --timestamp 1700000000000 --json
  kafka-conformance lookup orders-0 --timestamp -1         # the log end offset
"""


def _timestamp(text: str) -> int:
    """A target timestamp: >= 0, or -1 (latest) / -2 (earliest)."""
    value = int64(text)
    if value < 0 and value not in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP):
        raise argparse.ArgumentTypeError(
            f"{value}: a timestamp is >= 0, or -1 (latest: the log end offset) or -2 "
            "(earliest: the log start offset)"
        )
    return value


def _print(result: LookupResult | None, as_json: bool, special: int | None = None) -> int:
    if as_json:
        print(json.dumps(None if result is None else result.to_dict()))
    elif result is None:
        print("not found: no segment can hold that target")
    elif special is not None:
        what = (
            "log end offset (LATEST_TIMESTAMP)"
            if special == LATEST_TIMESTAMP
            else "log start offset (EARLIEST_TIMESTAMP)"
        )
        print(f"segment: {shown(result.segment)}")
        print(f"{what}: {result.record_offset}")
        if result.batch is not None:
            b = result.batch
            print(
                f"batch: position {b.position} size {b.size_in_bytes} magic {b.magic} "
                f"lastOffset {b.last_offset}"
            )
        print(f"record: offset {result.record_offset} timestamp {result.record_timestamp}")
    else:
        print(f"segment: {shown(result.segment)}")
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
    if result is None:
        return EXIT_NOT_FOUND
    return EXIT_FOUND if result.batch is not None or special is not None else EXIT_NOT_FOUND


def _cmd(args: argparse.Namespace) -> int:
    try:
        is_dir = stat.S_ISDIR(os.stat(args.dir).st_mode)
    except OSError as e:  # missing, a symbolic link loop, a parent without permission
        print(cannot_read(_PROG, e, args.dir), file=sys.stderr)
        return EXIT_USAGE
    if not is_dir:
        print(f"{_PROG}: not a directory: {shown(args.dir)}", file=sys.stderr)
        return EXIT_USAGE
    special = args.timestamp if args.timestamp in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP) else None
    try:
        if args.offset is not None:
            result = lookup_offset(args.dir, args.offset)
        else:
            result = lookup_timestamp(args.dir, args.timestamp, args.starting_offset)
    except DecodeError as e:
        print(f"{_PROG}: {e}", file=sys.stderr)
        return EXIT_NOT_FOUND
    except OSError as e:
        print(cannot_read(_PROG, e, args.dir), file=sys.stderr)
        return EXIT_USAGE
    return _print(result, args.json, special)


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "lookup",
        "find the batch holding an offset, or the first record at/after a timestamp",
        _lookup.__doc__,
        _EPILOG,
    )
    p.add_argument("dir", metavar="DIR", help="a partition directory (<topic>-<partition>)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--offset",
        type=non_negative_int64,
        metavar="OFFSET",
        help=f"target offset (0..{INT64_MAX})",
    )
    g.add_argument(
        "--timestamp",
        type=_timestamp,
        metavar="MS",
        help="target timestamp (ms); -1: the log end offset, -2: the log start offset "
        "(as Kafka's ListOffsets)",
    )
    p.add_argument(
        "--starting-offset",
        type=non_negative_int64,
        default=0,
        metavar="OFFSET",
        help="ignore records below (default 0; not for -1/-2)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd)
