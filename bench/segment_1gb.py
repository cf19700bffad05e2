#!/usr/bin/env python3
"""Verify + dump of a large log segment: wall time and peak memory (RSS) of each command.

Generates a partition directory whose single segment is ``--size-mb`` MB (default 1024) with
the kit's broker-faithful writer (distinct batches are built once, then re-based: baseOffset
lies outside the CRC, exactly what a leader does when it assigns offsets), then runs, each in
its own process so peak RSS is measured per command:

  kafka-conformance verify-dir DIR
  kafka-conformance dump --deep-iteration SEGMENT.log     (stdout discarded)
  kafka-conformance dump --deep-iteration --print-data-log SEGMENT.log

example:
  .venv/bin/python bench/segment_1gb.py --size-mb 1024 --markdown docs/benchmarks-segment.md
  .venv/bin/python bench/segment_1gb.py --size-mb 64          # quick
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_segment(directory: Path, size_mb: int) -> Path:
    from conformance.logdir.writer import LogConfig, PartitionWriter
    from conformance.wire.builder import BatchBuilder

    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    templates = []
    for i in range(50):
        b = BatchBuilder(compression=codecs[i % len(codecs)])
        for j in range(500):
            b.append(
                1_700_000_000_000 + i * 500 + j,
                b"key-%06d" % j,
                (b"value %d " % (i * j)) * 12,
                [("trace", b"%016x" % (i * 1000 + j))],
            )
        templates.append(b.build())
    cfg = LogConfig(segment_bytes=2**31 - 1)
    writer = PartitionWriter(directory, "bench", 0, cfg)
    target = size_mb * 1024 * 1024
    written = 0
    offset = 0
    i = 0
    last_report = time.time()
    while written < target:
        raw = bytearray(templates[i % len(templates)])
        struct.pack_into(">q", raw, 0, offset)
        # timestamps stay as built; offsets are what the leader assigns
        writer.append(bytes(raw))
        written += len(raw)
        offset += 500
        i += 1
        if time.time() - last_report > 5:
            print(f"  generated {written / 2**20:.0f} MB", file=sys.stderr)
            last_report = time.time()
    writer.close()
    return writer.dir


_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def run(cmd: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB of that command alone, exit code): a fresh wrapper process per
    command, whose RUSAGE_CHILDREN maximum is then exactly this command's peak."""
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=True
    ).stdout.split()
    elapsed = time.perf_counter() - t
    return elapsed, int(out[0]) / 1024, int(out[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--dir", type=Path, help="work directory (default: a temp dir, removed after)")
    ap.add_argument("--markdown", type=Path, help="write the results table here")
    args = ap.parse_args(argv)
    cli = [sys.executable, "-m", "conformance.cli"]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        t = time.perf_counter()
        part = make_segment(Path(tmp), args.size_mb)
        gen = time.perf_counter() - t
        log = next(part.glob("*.log"))
        size = log.stat().st_size
        print(f"segment {log.name}: {size / 2**20:.0f} MB (generated in {gen:.0f} s)")
        rows = []
        for name, cmd in [
            ("verify-dir", cli + ["verify-dir", str(part)]),
            ("dump (batches)", cli + ["dump", str(log)]),
            ("dump --deep-iteration", cli + ["dump", "--deep-iteration", str(log)]),
            ("dump --print-data-log", cli + ["dump", "--print-data-log", str(log)]),
        ]:
            secs, rss, code = run(cmd)
            rows.append((name, secs, size / 2**20 / secs, rss, code))
            print(
                f"{name:24} {secs:8.1f} s {size / 2**20 / secs:8.1f} MB/s  peak RSS "
                f"{rss:7.1f} MB  exit {code}"
            )
    table = ["| command | seconds | MB/s | peak RSS (MB) | exit |", "|---|---|---|---|---|"]
    table += [f"| {n} | {s:.1f} | {r:.1f} | {m:.0f} | {c} |" for n, s, r, m, c in rows]
    if args.markdown:
        text = (
            "# Segment benchmark\n\n`"
            f"{' '.join(['.venv/bin/python', 'bench/segment_1gb.py'] + (argv or sys.argv[1:]))}`"
            f" on {time.strftime('%Y-%m-%d')}: one {size / 2**20:.0f} MB segment (mixed codecs, "
            "500-record batches), each command in its own process; peak RSS is that process's "
            "ru_maxrss.\n\n" + "\n".join(table) + "\n"
        )
        args.markdown.write_text(text)
    print("\n".join(table))
    return 0 if all(r[4] in (0,) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
