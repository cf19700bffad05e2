"""``kafka-conformance synth``: a synthetic log directory of a chosen size with planted
corruptions (``conformance.corpus.synth``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from conformance.cli.common import add_command, byte_size, non_negative_int, plural, shown
from conformance.corpus.synth import FORMAT, SynthReport, synthesize
from conformance.host.progress import Progress

_PROG = "kafka-conformance synth"

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

_EPILOG = f"""\
Writes a Kafka log directory into DIR (new or empty): 2-8 partitions of two topics (more
for bigger sizes), several segments each, written as a broker writes them (.log, .index,
.timeindex, .txnindex, .snapshot, checkpoints); v0/v1 history then v2, every codec, 1-500
records per batch, idempotent and transactional producers with COMMIT/ABORT markers,
compaction-like offset gaps. The .log files total about SIZE bytes. Then N corruptions are
planted in .log files (bitflip, bad-length, zero-fill, torn-tail; every kind when N >= 4) and
DIR/planted.json ({FORMAT}) records each: file, byte position of the first damaged batch
(where a replay must flag it), changed bytes, expected verdict. Same SIZE, N and seed: the
same bytes. See docs/synth.md.

exit codes:
  {EXIT_OK}  the corpus was written
  {EXIT_ERROR}  writing failed (disk full, no permission)
  {EXIT_USAGE}  usage error (bad option, DIR exists and is not empty, the corpus is too small
     for N corruptions)

examples:
  kafka-conformance synth --size 1GB --out /tmp/corpus
  kafka-conformance synth --size 64MiB --out /tmp/corpus --corrupt 12 --seed 7
  kafka-conformance replay /tmp/corpus --out /tmp/replay   # then compare with planted.json
"""


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "synth",
        "write a synthetic log directory of a chosen size, with planted corruptions",
        "Write a realistic synthetic Kafka log directory of about SIZE bytes of "
        ".log files, plant N corruptions at recorded positions (planted.json).",
        _EPILOG,
    )
    p.add_argument(
        "--size",
        required=True,
        type=byte_size,
        metavar="SIZE",
        help="total size of the .log files: bytes, or a number with a unit (KB, MB, "
        "GB, TB: powers of 1000; KiB, MiB, GiB, TiB: powers of 1024), e.g. 1GB",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output directory (created; must be empty if it exists)",
    )
    p.add_argument(
        "--corrupt",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="corruptions to plant (default %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=0, metavar="S", help="random seed (default %(default)s)"
    )
    p.set_defaults(func=_cmd_synth)


def _summary(report: SynthReport) -> str:
    counts = ", ".join(
        [
            plural(report.partitions, "partition"),
            plural(report.segments, "segment"),
            plural(report.batches, "batch", "batches"),
            plural(report.records, "record"),
        ]
    )
    planted_json = shown(str(report.root / "planted.json"))
    lines = [
        f"{shown(str(report.root))}: {counts}",
        (
            f"  .log bytes {report.total_bytes:,} (requested {report.size:,}), "
            f"{report.elapsed:.1f} s, {report.mb_per_s:.1f} MB/s, seed {report.seed}"
        ),
        f"  planted {plural(len(report.planted), 'corruption')} (recorded in {planted_json})",
    ]
    width = max((len(p.kind) for p in report.planted), default=0)
    lines += [
        f"    {p.kind:{width}}  {shown(p.file)} @{p.position}  ({p.expect})" for p in report.planted
    ]
    return "\n".join(lines)


def _cmd_synth(args: argparse.Namespace) -> int:
    with Progress("synth", args.size, unit="B") as progress:
        try:
            report = synthesize(
                args.out, args.size, corrupt=args.corrupt, seed=args.seed, progress=progress.update
            )
        except ValueError as e:
            progress.close()
            print(f"{_PROG}: {shown(str(e))}", file=sys.stderr)
            return EXIT_USAGE
        except OSError as e:
            progress.close()
            name = f" {shown(e.filename)}" if e.filename is not None else ""
            print(f"{_PROG}: cannot write{name}: {e.strerror or e}", file=sys.stderr)
            return EXIT_ERROR
    print(_summary(report))
    return EXIT_OK
