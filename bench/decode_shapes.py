#!/usr/bin/env python3
"""Full decode by shape of data: every codec at 1, 10, 130 and 500 records per batch, with
text-like and with random values, the kit against aiokafka's C extension and kafka-python,
in one run; and where the kit's time goes in each shape.

The measurements are ``bench/decode_throughput.py``'s: the same data generator, the same
workers (each (shape, implementation) in a fresh interpreter, best of ``--repeat`` runs,
implementations interleaved for ``--rounds`` rounds, every record's offset, timestamp, key,
value and headers touched, records and checksum checked). Implementations:

* ``ours-native-stream``: ``StreamDecoder`` (a batch at a time, as aiokafka and kafka-python
  iterate); ``ours-native``: ``decode()`` (every batch kept);
* ``ours-native-validate``: ``StreamDecoder(keep=0)``: every check, no record object made;
* ``aiokafka-c``: aiokafka's C extension; ``kafka-python+ccrc``: kafka-python with a C CRC-32C;
* ``bound``: CRC-32C of each batch and the codec library's decompression of its records,
  nothing else: what no decoder can beat.

The decomposition per shape (µs per batch): ``bound`` (CRC and codec library), then
``validate - bound`` (framing, checks and the batch objects), then ``stream - validate``
(the records: reading them into ``Record`` objects and the touch loop). And a ``cProfile``
of ``ours-native-stream`` per shape, its time grouped by where it is spent.

Example::

    .venv/bin/python bench/decode_shapes.py --json bench/shapes_results.json \\
        --markdown docs/benchmarks.md
    .venv/bin/python bench/decode_shapes.py --sizes 1 --codecs none --rounds 1   # quick
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import decode_throughput as dt  # noqa: E402  (this directory's sibling script)

SIZES = (1, 10, 130, 500)
IMPLS = (
    "ours-native-stream",
    "ours-native",
    "ours-native-validate",
    "aiokafka-c",
    "kafka-python+ccrc",
    "bound",
)
#: (label, a, b, target): records/s of a over records/s of b
RATIOS = (
    ("stream / aiokafka-c", "ours-native-stream", "aiokafka-c", dt.TARGET_VS_AIOKAFKA_C),
    ("decode() / aiokafka-c", "ours-native", "aiokafka-c", dt.TARGET_VS_AIOKAFKA_C),
    ("stream / kafka-python", "ours-native-stream", "kafka-python+ccrc", dt.TARGET_VS_KAFKA_PYTHON),
    ("decode() / kafka-python", "ours-native", "kafka-python+ccrc", dt.TARGET_VS_KAFKA_PYTHON),
)

#: where a profiled function's own time is filed, first match wins: (group, substrings)
GROUPS = (
    ("kit Python: codec fast paths", ("/conformance/codecs/",)),
    ("codec library", ("zlib", "cramjam", "snappy.decompress", "lz4", "zstd", "Zstd")),
    ("native: batches (framing, CRC, checks, codecs, batch objects)", ("decode_run",)),
    ("native: Record objects", ("RecordRows", "kafka_conformance_native")),
    ("kit Python: decoder, record lists", ("/conformance/",)),
    ("benchmark touch loop", ("decode_throughput",)),
)
OTHER = "other (builtins: len, iter, ...)"


def _group(key: tuple[str, int, str]) -> str:
    text = f"{key[0]}:{key[2]}"
    for name, needles in GROUPS:
        if any(n in text for n in needles):
            return name
    return OTHER


def profile_shape(data: bytes) -> dict[str, float]:
    """Shares (%) of ``ours-native-stream``'s profiled time by group (``GROUPS``)."""
    dt._run_ours_stream(data)  # warm: imports, makers, caches
    prof = cProfile.Profile()
    prof.runcall(dt._run_ours_stream, data)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for key, (_cc, _nc, tottime, _ct, _callers) in stats.items():
        g = _group(key)
        totals[g] = totals.get(g, 0.0) + tottime
    whole = sum(totals.values()) or 1.0
    return {g: 100.0 * t / whole for g, t in sorted(totals.items(), key=lambda kv: -kv[1])}


def scan_plain_time(data: bytes) -> float | None:
    """Best of 7: the extension's ``scan_plain`` over uncompressed ``data``: every batch's
    framing, CRC-32C and records region checked, one small tuple per batch and no other
    object: the checks alone, in this process."""
    from conformance.primitives import native

    if native.NATIVE is None:
        return None
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        rows, stop, _reached, _need = native.NATIVE.scan_plain(data, 0, len(data))
        best = min(best, time.perf_counter() - t0)
        if stop != len(data):
            raise AssertionError(f"scan_plain stopped at {stop} of {len(data)} bytes")
    return best


def measure_shape(
    args: argparse.Namespace, path: Path, codec: str, checksum: int
) -> dict[str, float | str]:
    """The best time of each implementation on one shape's input (or why it was skipped)."""
    worker_args = SimpleNamespace(repeat=args.repeat, snappy_shim=True)
    runs: dict[str, list[dict]] = {i: [] for i in args.impl_list}  # type: ignore[type-arg]
    for _ in range(args.rounds):  # implementations interleaved, round by round
        for impl in args.impl_list:
            runs[impl].append(
                dt.run_worker(impl, codec, path, args.records, checksum, worker_args)  # type: ignore[arg-type]
            )
    best: dict[str, float | str] = {}
    for impl, got in runs.items():
        times = [t for r in got for t in r.get("times", [])]
        best[impl] = min(times) if times else str(got[0].get("skipped") or got[0].get("error"))
    return best


def measure(args: argparse.Namespace) -> dict:  # type: ignore[type-arg]
    shapes = []
    with tempfile.TemporaryDirectory(prefix="kc-shapes-") as tmp:
        for values in args.value_list:
            records = dt.make_records(args.records, args.seed, values)
            checksum = dt.expected_checksum(records, 0)
            for size in args.size_list:
                for codec in args.codec_list:
                    data = dt.build_stream(records, codec, size)
                    path = Path(tmp) / f"{values}-{size}-{codec}.bin"
                    path.write_bytes(data)
                    shape = {
                        "values": values,
                        "batch_size": size,
                        "codec": codec,
                        "input_bytes": len(data),
                        "batches": -(-args.records // size),
                        "best_s": measure_shape(args, path, codec, checksum),
                    }
                    if codec == "none":
                        shape["scan_plain_s"] = scan_plain_time(data)
                    if args.profile:
                        shape["profile"] = profile_shape(data)
                    shapes.append(shape)
                    line = _line(shape, args.records)
                    print(f"# {values:6} {size:3} {codec:6} {line}", flush=True)
    return {"shapes": shapes}


def _rate(shape: dict, impl: str, n: int) -> float | None:  # type: ignore[type-arg]
    t = shape["best_s"].get(impl)
    return n / t if isinstance(t, float) else None


def _ratio(shape: dict, a: str, b: str, n: int) -> float | None:  # type: ignore[type-arg]
    ra, rb = _rate(shape, a, n), _rate(shape, b, n)
    return None if ra is None or rb is None else ra / rb


def _us(shape: dict, impl: str) -> float | None:  # type: ignore[type-arg]
    t = shape["best_s"].get(impl)
    return 1e6 * t / shape["batches"] if isinstance(t, float) else None


def _line(shape: dict, n: int) -> str:  # type: ignore[type-arg]
    parts = []
    for label, a, b, _ in RATIOS:
        r = _ratio(shape, a, b, n)
        parts.append(f"{label} {'n/a' if r is None else f'{r:.2f}x'}")
    return "; ".join(parts)


def _fmt(x: float | None, unit: str = "x") -> str:
    return "n/a" if x is None else f"{x:.2f}{unit}"


#: the validate-only scans' results (``bench/native_scan.py --json``), shown beside the shapes
SCAN_RESULTS = HERE / "scan_results.json"


def _scans() -> list[str]:
    """Issue 43's second goal, from ``bench/native_scan.py``'s last results (if any)."""
    if not SCAN_RESULTS.is_file():
        return []
    scan = json.loads(SCAN_RESULTS.read_text())
    when = f" on {scan['date']}" if "date" in scan else " (its date: docs/benchmarks-scan.md)"
    return [
        "## Validate-only scans against their bound",
        "",
        f"`bench/native_scan.py`{when}, from `bench/scan_results.json` "
        f"({scan['rounds']} rounds; corpus, command and rounds in docs/benchmarks-scan.md). "
        "Targets: verify-dir >= 0.80 of the bound, the replay on `local[2]` >= 1.5x the "
        "one-core bound.",
        "",
        scan["table"],
        "",
    ]


def render(report: dict) -> str:  # type: ignore[type-arg]
    n = report["records"]
    env = report["environment"]
    out = [
        "# Decode throughput by shape",
        "",
        f"Generated by `bench/decode_shapes.py` on {report['date']}: {n} records per shape "
        f"(~16-byte keys, ~100-byte values, 1 header per record) in v2 batches of each size, "
        f"every codec, text-like and random values; best of {report['repeat']} runs in each "
        f"of {report['rounds']} rounds (implementations interleaved, a fresh process each); "
        "every record's offset, timestamp, key, value and headers touched.",
        "",
        "Command:",
        "",
        "```",
        report["command"],
        "```",
        "",
        f"Machine: {env['cpu']} ({env['cpus']} CPUs), CPython {env['python']}; "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + f". Ours: {env.get('ours_native', 'n/a')}. kafka-python snappy: "
        f"{env['kafka_python_snappy']}.",
        "",
        "Codec libraries: the kit reads gzip with zlib, snappy with cramjam (the Rust `snap` "
        "crate), lz4 with python-lz4 (liblz4) and zstd with python-zstandard (libzstd); "
        "aiokafka reads snappy with python-snappy (Google's C++ libsnappy), the others with "
        "the same libraries as the kit.",
        "",
        "Validate-only scans (verify-dir and the replay against their bound, the CRC of every "
        "batch plus its decompression): docs/benchmarks-scan.md, by `bench/native_scan.py`. "
        "Where a small batch's time goes, step by step, for the shapes below target: "
        "docs/benchmarks-small-batches.md, by `bench/small_batches.py`, with a profile of "
        "those shapes down to the C and Rust functions by `bench/profile_shapes.py`.",
        "",
        "## Ratios (records/s over records/s, same run, same input)",
        "",
        "Targets: the kit >= 1.0x aiokafka-c and >= 5x kafka-python. `stream` is "
        "`StreamDecoder` (a batch at a time, like the others' iteration); `decode()` keeps "
        "every batch. A ratio below its target is in bold.",
        "",
    ]
    header = "| values | records/batch | codec | " + " | ".join(r[0] for r in RATIOS) + " |"
    out += [header, "|" + "---|" * (3 + len(RATIOS))]
    missed = []
    for s in report["shapes"]:
        cells = []
        for label, a, b, target in RATIOS:
            r = _ratio(s, a, b, n)
            cell = _fmt(r)
            if r is not None and r < target:
                cell = f"**{cell}**"
                missed.append((s, label, r))
            cells.append(cell)
        head = f"| {s['values']} | {s['batch_size']} | {s['codec']} | "
        out.append(head + " | ".join(cells) + " |")
    out += ["", f"Below target: {len(missed)} of {len(report['shapes']) * len(RATIOS)}.", ""]
    if missed:
        out += [
            "Where the time of the ratios below target goes, down to the C and Rust functions, "
            "and whether the kit's time without its codec library and the objects it returns "
            "would meet each target: docs/benchmarks-profile.md, by `bench/profile_shapes.py`.",
            "",
        ]
    out += _scans()
    out += [
        "## Where the time goes (µs per batch)",
        "",
        "`library`: the codec library's decompression of a batch (`bound` of the codec minus "
        "`bound` of the uncompressed shape: both are the same CRC loop). `validate`: "
        "`StreamDecoder(keep=0)`, every check and the batch's objects (header, record list, "
        "decoded batch), no record object. `records`: `stream - validate`, each record read "
        "into a `Record` and the benchmark's touch loop. `checks alone`: the extension's "
        "`scan_plain` over the uncompressed shape (framing, CRC-32C, every record checked, "
        "no object but a small tuple of ints per batch): what `validate` spends beyond it and "
        "the library is making objects (docs/benchmarks-profile.md separates the checks "
        "themselves from the objects, by function). "
        "`aiokafka-c` for scale.",
        "",
        "| values | records/batch | codec | library | validate | records | stream | "
        "aiokafka-c | checks alone |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by_shape = {(s["values"], s["batch_size"], s["codec"]): s for s in report["shapes"]}
    for s in report["shapes"]:
        plain = by_shape.get((s["values"], s["batch_size"], "none"))
        bound, bound0 = _us(s, "bound"), plain and _us(plain, "bound")
        library = None if bound is None or bound0 is None else max(0.0, bound - bound0)
        val, stream = _us(s, "ours-native-validate"), _us(s, "ours-native-stream")
        recs = None if val is None or stream is None else stream - val
        scan = s.get("scan_plain_s")
        checks = None if scan is None else 1e6 * scan / s["batches"]
        out.append(
            f"| {s['values']} | {s['batch_size']} | {s['codec']} | {_fmt(library, '')} | "
            f"{_fmt(val, '')} | {_fmt(recs, '')} | {_fmt(stream, '')} | "
            f"{_fmt(_us(s, 'aiokafka-c'), '')} | {_fmt(checks, '')} |"
        )
    if any("profile" in s for s in report["shapes"]):
        groups = [g for g, _ in GROUPS] + [OTHER]
        out += [
            "",
            "## Profile per shape (`ours-native-stream`, cProfile, % of its own time)",
            "",
            "cProfile adds a fixed cost per Python-level call, so the Python groups read "
            "high; the shares still show which part a shape spends its time in.",
            "",
            "| values | records/batch | codec | " + " | ".join(groups) + " |",
            "|" + "---|" * (3 + len(groups)),
        ]
        for s in report["shapes"]:
            p = s.get("profile", {})
            out.append(
                f"| {s['values']} | {s['batch_size']} | {s['codec']} | "
                + " | ".join(f"{p.get(g, 0.0):.0f}" for g in groups)
                + " |"
            )
    return "\n".join(out) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  .venv/bin/python bench/decode_shapes.py --json "
        "bench/shapes_results.json --markdown docs/benchmarks.md\n"
        "  .venv/bin/python bench/decode_shapes.py --sizes 1 --codecs none --rounds 1   # quick\n"
        "  .venv/bin/python bench/decode_shapes.py --render bench/shapes_results.json "
        "--markdown docs/benchmarks.md   # no measurement",
    )
    p.add_argument("--records", type=int, default=30000, help="records per shape (default 30000)")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="records per batch")
    p.add_argument("--values", default=",".join(dt.VALUE_KINDS), help="text,random")
    p.add_argument("--codecs", default=",".join(dt.ALL_CODECS), help="codecs to measure")
    p.add_argument("--impls", default=",".join(IMPLS), help="implementations")
    p.add_argument("--seed", type=int, default=7, help="data generator seed")
    p.add_argument("--no-profile", dest="profile", action="store_false", help="skip cProfile")
    p.add_argument("--json", type=Path, help="write the raw results as JSON")
    p.add_argument("--markdown", type=Path, help="write the markdown report")
    p.add_argument(
        "--render", type=Path, metavar="JSON", help="no measurement: render an earlier --json"
    )
    args = p.parse_args(argv)
    try:
        args.size_list = [int(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        p.error("--sizes takes integers")
    args.value_list = [v.strip() for v in args.values.split(",") if v.strip()]
    args.codec_list = [c.strip() for c in args.codecs.split(",") if c.strip()]
    args.impl_list = [i.strip() for i in args.impls.split(",") if i.strip()]
    for name, got, known in (
        ("--values", args.value_list, dt.VALUE_KINDS),
        ("--codecs", args.codec_list, dt.ALL_CODECS),
        ("--impls", args.impl_list, dt.ALL_IMPLS),
    ):
        bad = [x for x in got if x not in known]
        if bad:
            p.error(f"{name}: unknown {', '.join(bad)} (known: {', '.join(known)})")
    if args.records <= 0 or args.repeat <= 0 or args.rounds <= 0 or min(args.size_list) <= 0:
        p.error("--records, --repeat, --rounds and --sizes must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        md = render(json.loads(args.render.read_text()))
        print(md)
        if args.markdown:
            args.markdown.write_text(md)
        return 0
    env = dt.environment()
    t0 = time.perf_counter()
    report = {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(
            [".venv/bin/python bench/decode_shapes.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "records": args.records,
        "repeat": args.repeat,
        "rounds": args.rounds,
        "environment": env,
        **measure(args),
    }
    report["seconds"] = round(time.perf_counter() - t0, 1)
    md = render(report)
    print(md)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
