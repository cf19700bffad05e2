"""``kafka-conformance synth``: a synthetic log directory of a chosen size with planted
corruptions (``conformance.corpus.synth``)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from conformance.cli.common import byte_size, non_negative_int, plural, shown
from conformance.corpus.synth import FORMAT, SynthReport, synthesize

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
    p = subparsers.add_parser(
        "synth",
        help="write a synthetic log directory of a chosen size, with planted corruptions",
        description="Write a realistic synthetic Kafka log directory of about SIZE bytes of "
        ".log files, plant N corruptions at recorded positions (planted.json).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EPILOG,
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


class _Progress:
    """Bytes written, on stderr: one line rewritten with ``\\r`` on a terminal, else a line
    every 10%."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.next_step = 10
        self.drawn = False

    def __call__(self, written: int) -> None:
        percent = min(100, written * 100 // self.size)
        if self.tty:
            now = time.monotonic()
            if now - self.shown_at < 0.2:
                return
            self.shown_at = now
            print(f"\rsynth: {self._line(written, percent)}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif percent >= self.next_step:
            self.next_step = percent // 10 * 10 + 10
            print(f"synth: {self._line(written, percent)}", file=sys.stderr, flush=True)

    def _line(self, written: int, percent: int) -> str:
        elapsed = time.monotonic() - self.started
        rate = written / 1e6 / elapsed if elapsed > 0 else 0.0
        return f"{written / 1e6:,.1f} of {self.size / 1e6:,.1f} MB ({percent}%), {rate:.1f} MB/s"

    def done(self) -> None:
        if self.drawn:
            print(file=sys.stderr, flush=True)


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
    progress = _Progress(args.size)
    try:
        report = synthesize(
            args.out, args.size, corrupt=args.corrupt, seed=args.seed, progress=progress
        )
    except ValueError as e:
        progress.done()
        print(f"{_PROG}: {shown(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        progress.done()
        name = f" {shown(e.filename)}" if e.filename is not None else ""
        print(f"{_PROG}: cannot write{name}: {e.strerror or e}", file=sys.stderr)
        return EXIT_ERROR
    progress.done()
    print(_summary(report))
    return EXIT_OK
