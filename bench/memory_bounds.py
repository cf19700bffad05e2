#!/usr/bin/env python3
"""Peak memory and time of every command on a record bomb (docs/memory.md).

The input is :func:`conformance.corpus.hostile.tiny_records_batch`: one ~19 KB zstd batch of
29.9 million minimal valid records (~200 MiB decompressed, under the default 256 MiB
decompressed limit), written as the only segment of a partition directory ``t-0``. Each
command runs in its own process; its peak resident set size is the ``ru_maxrss`` that
``os.wait4`` reports for that process, its time the wall-clock time. stdout goes to
``/dev/null`` (``dump --deep-iteration`` prints ~27 GB for this input, 2.7 GB per 3M records).

Example::

    .venv/bin/python bench/memory_bounds.py --records 29900000 --markdown /tmp/memory.md
    .venv/bin/python bench/memory_bounds.py --records 3000000 --only decode,verify-dir  # quick
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LOG = "00000000000000000000.log"

#: name -> argv after ``python``; {dir} is the partition directory, {log} its segment
COMMANDS: dict[str, list[str]] = {
    "decode": ["-m", "conformance.cli", "decode", "--as", "file", "{log}"],
    "decode --json": ["-m", "conformance.cli", "decode", "--json", "--as", "file", "{log}"],
    "dump": ["-m", "conformance.cli", "dump", "{log}"],
    "dump --deep-iteration": ["-m", "conformance.cli", "dump", "--deep-iteration", "{log}"],
    "dump --json": ["-m", "conformance.cli", "dump", "--json", "{log}"],
    "verify-dir": ["-m", "conformance.cli", "verify-dir", "{dir}"],
    "lookup --offset": ["-m", "conformance.cli", "lookup", "--offset", "0", "{dir}"],
    "lookup --timestamp": [
        "-m",
        "conformance.cli",
        "lookup",
        "--timestamp",
        "1700000000000",
        "{dir}",
    ],
    "library decode()": [
        "-c",
        "import sys; from conformance import decode; "
        "r = decode(open(sys.argv[1], 'rb').read(), mode='file'); "
        "print(r.outcome, len(r.records))",
        "{log}",
    ],
    "library StreamDecoder(keep=0)": [
        "-c",
        "import sys; from conformance import StreamDecoder; "
        "d = StreamDecoder(open(sys.argv[1], 'rb').read(), "
        "mode='file', keep=0); "
        "print(sum(b.records.total for b in d), d.outcome)",
        "{log}",
    ],
}


def measure(argv: list[str], timeout: float) -> dict[str, object]:
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, *argv], stdout=devnull, stderr=err, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                return {
                    "error": f"killed after {timeout:.0f} s",
                    "maxrss_mb": usage.ru_maxrss / 1024,
                }
            time.sleep(0.05)
        err.seek(0)
        tail = err.read()[-300:]
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "seconds": round(time.perf_counter() - t0, 1),
        "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
        "traceback": "Traceback" in tail,
        "stderr_tail": tail.strip().splitlines()[-1:] if tail.strip() else [],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Peak memory (max RSS) and time of each command on a record bomb.",
        epilog=__doc__.split("Example", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--records", type=int, default=29_900_000, help="records in the bomb (default 29900000)"
    )
    p.add_argument("--codec", default="zstd", choices=("gzip", "snappy", "lz4", "zstd"))
    p.add_argument("--only", help="comma-separated subset of: " + ", ".join(COMMANDS))
    p.add_argument(
        "--timeout", type=float, default=3600, help="per command, seconds (default 3600)"
    )
    p.add_argument("--markdown", metavar="OUT", help="write the table as markdown")
    args = p.parse_args(argv)
    if args.records < 1:
        p.error("--records must be >= 1")
    names = list(COMMANDS) if not args.only else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        p.error(f"unknown command(s): {', '.join(unknown)}")

    from conformance.corpus.hostile import tiny_records_batch

    rows = []
    with tempfile.TemporaryDirectory(prefix="kc-bomb-") as tmp:
        part = Path(tmp) / "t-0"
        part.mkdir()
        data = tiny_records_batch(args.records, args.codec)
        (part / LOG).write_bytes(data)
        print(f"# {args.records} records, {args.codec}, {len(data)} bytes on disk", flush=True)
        for name in names:
            cmd = [a.format(dir=part, log=part / LOG) for a in COMMANDS[name]]
            res = measure(cmd, args.timeout)
            rows.append((name, res))
            print(f"# {name:32} {res}", flush=True)
    lines = [
        f"{args.records} records in one {args.codec} batch of {len(data)} bytes "
        f"(`bench/memory_bounds.py --records {args.records} --codec {args.codec}`):",
        "",
        "| command | exit | peak RSS (MB) | seconds |",
        "|---|---|---|---|",
    ]
    for name, res in rows:
        lines.append(
            f"| `{name}` | {res.get('exit', res.get('error'))} | {res.get('maxrss_mb')} | "
            f"{res.get('seconds', '-')} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 1 if any(r.get("traceback") or "error" in r for _, r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
