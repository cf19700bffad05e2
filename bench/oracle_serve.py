"""Throughput of the Java oracle's framed serve protocol and of one differential step.

    .venv/bin/python bench/oracle_serve.py [--inputs DIR] [--seconds 20]

Inputs: every file under DIR (default: the batch and stream fuzz corpora in fuzz/corpus/).
Measures, after a warm-up pass (JIT): oracle decodes/s in memory and file mode alone, and the
whole differential step (oracle in flight while the kit and kafka-python decode) per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.fuzz.differential import Differential  # noqa: E402
from conformance.jvm.oracle import OracleServer  # noqa: E402


def _inputs(dirs: list[Path]) -> list[bytes]:
    out = []
    for d in dirs:
        out += [f.read_bytes() for f in sorted(d.iterdir()) if f.is_file()]
    return out


def _rate(fn, inputs: list[bytes], seconds: float) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for data in inputs:
            fn(data)
            n += 1
    return n / (time.perf_counter() - start), n


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--inputs", type=Path, action="append")
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    dirs = args.inputs or [ROOT / "fuzz" / "corpus" / "batch", ROOT / "fuzz" / "corpus" / "stream"]
    inputs = _inputs([d for d in dirs if d.is_dir()])
    if not inputs:
        print("no inputs (merge a fuzz corpus first, or pass --inputs)", file=sys.stderr)
        return 2
    mean = sum(map(len, inputs)) / len(inputs)
    print(f"{len(inputs)} inputs, mean {mean:.0f} bytes")
    with OracleServer() as oracle:
        for data in inputs:  # warm-up
            oracle.decode(data, "memory")
        for mode in ("memory", "file"):
            rate, n = _rate(lambda d, m=mode: oracle.decode(d, m), inputs, args.seconds)
            print(f"oracle serve, {mode:6} mode: {rate:8.0f} inputs/s ({n} inputs)")
    d = Differential()
    try:
        for data in inputs[:200]:
            d.run(data)
        rate, n = _rate(d.run, inputs, args.seconds)
        print(f"differential step (kit + oracle + kafka-python): {rate:8.0f} inputs/s ({n} inputs)")
    finally:
        d.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
