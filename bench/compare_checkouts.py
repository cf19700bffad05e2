#!/usr/bin/env python3
"""Same-run decode throughput of two or more checkouts of the kit (before / after a change).

Every side decodes the *same* input files, built once with this checkout's generator
(``bench/decode_throughput.py``). Each measurement runs that side's own
``bench/decode_throughput.py --worker ours`` in a fresh interpreter with the side's
directory first on ``PYTHONPATH`` (its bench script also puts its own root first), so each
side imports its own ``conformance`` package. Sides are interleaved codec by codec and their
order is rotated every round, so load drift hits all of them alike; a side's figure is its
best round (all rounds are kept in the JSON and shown in brackets).

Example (compare the commit before a refactor with the working tree)::

    mkdir -p /tmp/old-kit && git archive 3fcdaff | tar -x -C /tmp/old-kit
    .venv/bin/python bench/compare_checkouts.py old=/tmp/old-kit new=. \\
        --records 200000 --rounds 3 --repeat 3 --json /tmp/before-after.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import decode_throughput as dt  # noqa: E402  (this directory's sibling script)


def run_side(kit: Path, codec: str, path: Path, n: int, checksum: int, repeat: int) -> dict:  # type: ignore[type-arg]
    script = kit / "bench" / "decode_throughput.py"
    if not script.is_file():
        return {"error": f"{script} not found"}
    env = dict(os.environ, PYTHONPATH=str(kit))
    cmd = [
        sys.executable,
        str(script),
        "--worker",
        "ours",
        "--worker-codec",
        codec,
        "--worker-input",
        str(path),
        "--worker-expect-records",
        str(n),
        "--worker-expect-checksum",
        str(checksum),
        "--repeat",
        str(repeat),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=kit, timeout=1800)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    res: dict = json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[type-arg]
    package = res.get("package")
    if package and Path(package).resolve().parent.parent != kit.resolve():
        return {"error": f"imported {package}, not the package of {kit}"}
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Same-run, interleaved decode throughput of several checkouts of the kit.",
        epilog=__doc__.split("Example", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sides", nargs="+", metavar="NAME=DIR", help="a label and a checkout directory")
    p.add_argument("--records", type=int, default=200_000)
    p.add_argument("--codecs", default=",".join(dt.ALL_CODECS))
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--repeat", type=int, default=3, help="runs per worker, best kept (default 3)")
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--json", metavar="OUT", help="write all rounds as JSON")
    args = p.parse_args(argv)
    sides: list[tuple[str, Path]] = []
    for s in args.sides:
        name, sep, d = s.partition("=")
        if not sep or not name or not Path(d).is_dir():
            p.error(f"expected NAME=DIR with an existing directory, got {s!r}")
        sides.append((name, Path(d).resolve()))
    codecs = [c for c in args.codecs.split(",") if c]
    if any(c not in dt.ALL_CODECS for c in codecs):
        p.error(f"codecs must be among {','.join(dt.ALL_CODECS)}")

    records = dt.make_records(args.records, args.seed)
    checksum = dt.expected_checksum(records, args.batch_size)
    rates: dict[str, dict[str, list[float | None]]] = {c: {n: [] for n, _ in sides} for c in codecs}
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kc-compare-") as tmp:
        paths = {}
        for codec in codecs:
            paths[codec] = Path(tmp) / f"{codec}.bin"
            paths[codec].write_bytes(dt.build_stream(records, codec, args.batch_size))
        del records
        for rnd in range(args.rounds):
            order = sides[rnd % len(sides) :] + sides[: rnd % len(sides)]
            for codec in codecs:
                for name, kit in order:
                    res = run_side(kit, codec, paths[codec], args.records, checksum, args.repeat)
                    if "times" in res:
                        rate = args.records / min(res["times"])
                        print(
                            f"# round {rnd + 1} {codec:6} {name:8} {rate / 1e3:7.0f} krec/s",
                            flush=True,
                        )
                    else:
                        rate = None
                        errors.append(f"{name} {codec}: {res.get('error') or res.get('skipped')}")
                        print(f"# round {rnd + 1} {codec:6} {name:8} {errors[-1]}", flush=True)
                    rates[codec][name].append(rate)

    names = [n for n, _ in sides]
    first = names[0]
    head = (
        "| codec | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"{n} / {first}" for n in names[1:])
        + " |"
    )
    lines = [head, "|" + "---|" * (1 + 2 * len(names) - 1)]
    for codec in codecs:
        best = {n: max((r for r in rates[codec][n] if r), default=None) for n in names}
        cells = []
        for n in names:
            rs = ", ".join("n/a" if r is None else f"{r / 1e3:.0f}" for r in rates[codec][n])
            cells.append("n/a" if best[n] is None else f"{best[n] / 1e3:.0f} k ({rs})")
        ratios = [
            "n/a" if best[n] is None or best[first] is None else f"{best[n] / best[first]:.2f}"
            for n in names[1:]
        ]
        lines.append(f"| {codec} | " + " | ".join(cells + ratios) + " |")
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "sides": {n: str(d) for n, d in sides},
                    "records": args.records,
                    "rounds": args.rounds,
                    "repeat": args.repeat,
                    "records_per_s": rates,
                    "errors": errors,
                    "environment": dt.environment(),
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
