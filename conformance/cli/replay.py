"""``kafka-conformance replay``: Kafka's verdict on corpora of any size, with Spark
(``conformance.replay``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.cli.common import add_command, add_max_decompressed, add_profile, byte_size, shown
from conformance.host.sessions import TerminatedBySignal, sigterm_guarded
from conformance.replay.storage import DEFAULT_IO_TIMEOUT, is_uri
from conformance.stream.result import CONSUMER_PROFILES

_PROG = "kafka-conformance replay"

EXIT_CLEAN = 0
EXIT_FLAGGED = 1
EXIT_USAGE = 2
EXIT_FAILED = 3

_EPILOG = f"""\
Replays log directories, segments and raw record-set files through the reference decoder
(file semantics, as Kafka reads a segment) on Spark: every file is cut into batch-aligned
byte ranges (at --split-bytes, from the segment's .index where present, else a header walk),
packed into one or two Spark tasks per core. Damaged bytes do not end a file's replay: it
resumes at the next intact batch, so every damaged region is reported.

Writes into DIR: batches/ (Parquet, one row per batch or damaged region: file, position,
size, offsets, magic, codec, record count, verdict, Kafka exception and message, strict
findings), summary.json (counts per verdict, exception, codec and directory, offset gaps and
overlaps per partition, byte accounting: for every file bytes_total = bytes_decoded +
bytes_corrupt + bytes_trailing + bytes_unread) and summary.txt (the table printed at the
end); with Spark, also spark-driver.log (Spark's own messages, kept off the terminal).
A replay that fails or is interrupted (Ctrl-C, SIGTERM) leaves none of these behind.

exit codes:
  {EXIT_CLEAN}  every byte decoded: no damaged region, no partial tail, nothing unreadable
  {EXIT_FLAGGED}  damaged regions, partial tails, or inputs that could not be read (see the summary)
  {EXIT_USAGE}  usage error (bad option, DIR holds a previous replay without --force, DIR
     inside an input directory), or Spark could not run (master unreachable, session failed)
  {EXIT_FAILED}  the replay did not complete or its byte accounting is not exact (a bug: report it)

examples:
  kafka-conformance replay /var/lib/kafka/data --out /tmp/replay
  kafka-conformance replay 'captures/*/orders-*' s3://bucket/tiered/ --out out --split-bytes 256MiB
  kafka-conformance replay corpus/ --out out --master spark://127.0.0.1:7077 --profile strict
  kafka-conformance replay corpus/ --out out --engine process     # no Spark: one process
  spark-submit --master yarn "$(python -m conformance.cli.replay_submit --path)" corpus/ --out out
"""


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "replay",
        "replay corpora of any size through the decoder, on Spark",
        "Replay Kafka log directories, segments and record-set files on Spark; "
        "Parquet rows per batch and a summary with exact byte accounting.",
        _EPILOG,
    )
    add_arguments(p)
    p.set_defaults(func=_cmd_replay)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``replay`` (also parsed by ``conformance.cli.replay_submit``)."""
    p.add_argument(
        "inputs",
        metavar="INPUT",
        nargs="+",
        help="log directory, partition directory, .log segment, record-set file, glob "
        "or URI (file://, s3://, hdfs://: through pyarrow.fs)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output directory, or an object-store prefix (s3://bucket/out, with the "
        "store's settings as for inputs: ?endpoint_override=HOST:PORT&scheme=http)",
    )
    p.add_argument(
        "--master",
        default="local[*]",
        metavar="URL",
        help="Spark master (default %(default)s: embedded, nothing to install; "
        "spark://HOST:PORT, yarn, k8s://...)",
    )
    p.add_argument(
        "--engine",
        choices=("spark", "process"),
        default="spark",
        help="spark (default), or process: the plain single-process loop, no Spark",
    )
    add_profile(
        p,
        "kafka: Kafka's verdict (default); strict: plus finding codes for what "
        "Kafka accepts silently",
        CONSUMER_PROFILES,
    )
    p.add_argument(
        "--split-bytes",
        type=byte_size,
        default=None,
        metavar="N",
        help="bytes per range (default 64MiB, at least 64KiB; the ranges are then packed into "
        "one or two tasks per core); units: KB, MB, GB, KiB, MiB, GiB",
    )
    add_max_decompressed(p)
    p.add_argument(
        "--io-timeout",
        type=float,
        default=DEFAULT_IO_TIMEOUT,
        metavar="SECONDS",
        help=f"object stores (s3://, gs://): seconds a request may stay silent before it "
        f"fails, tried 3 times; the file is then reported unreadable (default "
        f"{DEFAULT_IO_TIMEOUT:g})",
    )
    p.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark configuration property (repeatable)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace the output of a previous replay in DIR"
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress, no table (summary files only)"
    )


def _conf(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--conf takes KEY=VALUE, not {item!r}")
        out[key] = value
    return out


def run(args: argparse.Namespace, master: str | None) -> int:
    from conformance.replay.job import ReplayOptions, SparkFailed, replay
    from conformance.replay.output import OutputExists
    from conformance.replay.plan import DEFAULT_SPLIT_BYTES
    from conformance.replay.task import TaskOptions

    def say(message: str) -> None:
        print(shown(message), file=sys.stderr, flush=True)

    try:
        options = ReplayOptions(
            out=args.out if is_uri(args.out) else Path(args.out),
            engine=args.engine,
            master=master,
            split_bytes=args.split_bytes or DEFAULT_SPLIT_BYTES,
            task=TaskOptions(
                profile=args.profile,
                decompressed_limit=args.max_decompressed,
                io_timeout=args.io_timeout,
            ),
            spark_conf=_conf(args.conf),
            force=args.force,
            progress=not args.quiet,
        )
        with sigterm_guarded():  # SIGTERM unwinds like Ctrl-C: tasks stopped, output removed
            result = replay(args.inputs, options, say=(lambda s: None) if args.quiet else say)
    except TerminatedBySignal as e:
        print(f"\n{_PROG}: terminated (SIGTERM; Spark session stopped)", file=sys.stderr)
        return 128 + e.signum
    except (OutputExists, ValueError) as e:
        print(f"{_PROG}: {shown(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except SparkFailed as e:
        print(f"{_PROG}: Spark failed: {shown(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"{_PROG}: {shown(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"\n{_PROG}: interrupted (Spark jobs cancelled, session stopped)", file=sys.stderr)
        return 130
    except ImportError as e:
        print(
            f"{_PROG}: {e.name or e} is not installed: pip install 'kafka-conformance[replay]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not args.quiet:
        print(result.table)
        print(f"\nwritten: {shown(str(result.out))}/batches (Parquet), summary.json, summary.txt")
    s = result.summary
    if not s.accounting_exact:
        return EXIT_FAILED
    flagged = s.flagged_count or any(
        p.kind in ("unreadable", "not-kafka", "no-match") for p in s.problems
    )
    return EXIT_FLAGGED if flagged else EXIT_CLEAN


def _cmd_replay(args: argparse.Namespace) -> int:
    return run(args, args.master)
