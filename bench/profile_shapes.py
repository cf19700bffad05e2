#!/usr/bin/env python3
"""Where a shape's decode time goes, down to the C and Rust functions: a ``perf`` profile
of the same loops ``bench/decode_shapes.py`` times, grouped by what each function does.

``decode_shapes.py``'s own profile is a ``cProfile`` one, which sees Python calls only: the
time inside the extension, the codec libraries and CPython's allocator is one lump there.
This script runs each (shape, implementation) in a fresh interpreter (the same runner as
``decode_throughput``: every record's fields touched), attaches ``perf record`` to it once
its input is built and its runner warmed, runs the loop for ``--seconds``, and files each
sampled function (``perf report --sort dso,sym``) under the first group of :data:`GROUPS`
whose pattern it matches. Each group's share of the samples times the loop's measured µs
per batch gives µs per batch.

Groups: the codec library (zlib, libzstd, liblz4 and xxHash, snap), the checks (CRC-32C,
framing, the record reader's walk), making and freeing objects (CPython's allocator, the
constructors and destructors of ints, bytes, tuples, lists and slotted instances, the
extension's code that fills their slots; not its walk that reads a record's fields before
they are made, nor memcpy), the garbage collector, CPython's interpreter (the
loops, attribute reads, calls and iteration: the benchmark's and the API's), the touch
loop's integer arithmetic, the kernel, and what matches none.

Needs ``perf`` (Debian's ``linux-perf``: ``scripts/install-perf``) and the permission to
attach to a child process (``kernel.perf_event_paranoid`` <= 2 is enough for one's own
processes). Without it the script says so and exits 2.

Usage::

    .venv/bin/python bench/profile_shapes.py                       # shapes below target
    .venv/bin/python bench/profile_shapes.py --shapes text:1:none --impls ours-native-stream
    .venv/bin/python bench/profile_shapes.py --json bench/profile_results.json \\
        --markdown docs/benchmarks-profile.md
    .venv/bin/python bench/profile_shapes.py --render bench/profile_results.json  # no profile
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import decode_shapes as ds  # noqa: E402  (this directory's sibling scripts)
import decode_throughput as dt  # noqa: E402

CODEC = "codec library"
OBJECTS = "making and freeing objects"
KERNEL = "kernel"
OTHER = "other"
#: where a sampled function is filed, first match wins: (group, regex over "dso sym")
GROUPS: tuple[tuple[str, str], ...] = (
    (KERNEL, r"\[k\]"),
    # libc's allocator (Rust's vectors, codec buffers; CPython's small objects use its own)
    (OTHER, r"libc\.so.*(malloc|free|unlink_chunk|memset|memcpy|memmove)"),
    (
        "checks (CRC-32C, framing, record walk)",
        r"crc32c|crc_u64|read_region|Header::read|read_record|decide_v2|decide_legacy"
        r"|read_legacy|control_records_ok|from_utf8|be_i\d|_read_header|_read_msg"
        r"|decode_varint|validate_crc",
    ),
    (
        CODEC,
        r"libz\.|libzstd|liblz4|\binflate|adler32|crc32_z|\bcrc32\b|LZ4|ZSTD|HUF_|FSE_"
        r"|XXH|xxh|snap::|cramjam|_lz4|zstd|crc32fast|flate2",
    ),
    ("garbage collector", r"gc_collect|visit_decref|visit_reachable|move_unreachable|deduce_unr"),
    (
        OBJECTS,
        r"Malloc|_Free\b|PyObject_Free|dealloc|GenericAlloc|FromLongLong|FromLong\b"
        r"|FromSsize|_PyLong_New|PyBytes_From|PyTuple_New|tuple_alloc|GC_Del|GC_UnTrack"
        r"|GC_Track|_Py_NewReference|GC_Link|make_untracked|Maker::make|new_int|new_bytes|new_tuple|small_int"
        r"|PyList_New|PyUnicode_New|_PyTrash|tp_new|Slots::make|PyTuple_SetItem"
        r"|PyList_SetItem|create_class_obj|Run::decoded|PyList_Append|list_resize"
        r"|allocate_from_new_pool|_Py_Dealloc",
    ),
    ("touch loop's integer arithmetic", r"x_add|_PyLong_Add|long_add|long_bitwise|PyNumber_"),
    (
        "CPython interpreter (loops, attribute reads, calls, iteration)",
        r"_PyEval|Frame|initialize_locals|GetAttr|_PyType_Lookup|getattr|slot_tp|iter"
        r"|gen_send|PyDescr|getset|PyMember_GetOne|PyObject_Size|_Py_IncRef|_Py_DecRef"
        r"|PyErr_Occurred|ectorcall|_PyObject_Call|method_|cfunction|PyMethod"
        r"|_PyArg|PyObject_RichCompare|__pyx_pw|__pyx_pf|pymethod|trampoline|len\b|dict_lookup"
        r"|lookup_unicode|insertdict|GetMethod|SetAttr|PyDict_GetItem",
    ),
)
#: functions with a smaller share (% of samples) are kept in the report as part of ``other``
MIN_SHARE = 0.02
_LINE = re.compile(r"\s*([\d.]+)%\s+(\S+)\s+(\[[.k]\])\s+(.*)")
DEFAULT_IMPLS = ("ours-native-stream", "ours-native", "aiokafka-c", "kafka-python+ccrc")


def group_of(dso: str, mark: str, sym: str) -> str:
    text = f"{dso} {mark} {sym}"
    for name, pattern in GROUPS:
        if re.search(pattern, text):
            return name
    return OTHER


def functions(report: str) -> list[tuple[float, str, str, str]]:
    """(% of samples, dso, ``[.]`` or ``[k]``, symbol) of each function ``perf report``
    lists."""
    out = []
    for line in report.splitlines():
        m = _LINE.match(line)
        if m and float(m[1]) >= MIN_SHARE:
            out.append((float(m[1]), m[2], m[3], m[4].strip()))
    return out


def groups_of(row: dict) -> dict[str, float]:  # type: ignore[type-arg]
    """µs per batch per group of one profiled loop (its functions' shares, grouped now, so
    a change to :data:`GROUPS` needs no new profile: ``--render``)."""
    us = float(row["us_per_batch"])
    out: dict[str, float] = {OTHER: us * max(0.0, 100.0 - sum(f[0] for f in row["functions"]))}
    for pct, dso, mark, sym in row["functions"]:  # the functions below MIN_SHARE are other
        g = group_of(dso, mark, sym)
        out[g] = out.get(g, 0.0) + us * pct
    return {g: v / 100.0 for g, v in out.items()}


# --------------------------------------------------------------------------- the worker


def worker(args: argparse.Namespace) -> int:
    """Build the shape, warm the runner, say ``ready``, wait for a line, loop, report."""
    values, size, codec = parse_shape(args.worker_shape)
    records = args.records
    data = dt.build_stream(dt.make_records(records, args.seed, values), codec, size)
    try:
        run, _notes = dt._setup_runner(args.worker, codec, True)
    except dt._Skip as e:
        print(json.dumps({"skipped": str(e)}), flush=True)
        return 0
    count, _acc = run(data)
    if count != records:
        raise AssertionError(f"{args.worker} read {count} records of {records}")
    print("ready", flush=True)
    sys.stdin.readline()
    loops, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        run(data)
        loops += 1
    took = time.perf_counter() - t0
    batches = -(-records // size)
    print(json.dumps({"us_per_batch": 1e6 * took / loops / batches, "loops": loops}), flush=True)
    os._exit(0)  # no interpreter teardown in the profile


# --------------------------------------------------------------------------- the parent


def profile_one(
    impl: str, shape: tuple[str, int, str], args: argparse.Namespace, tmp: Path
) -> dict[str, object]:
    values, size, codec = shape
    cmd = [sys.executable, __file__, "--worker", impl, f"{values}:{size}:{codec}"]
    cmd += ["--records", str(args.records), "--seconds", str(args.seconds)]
    cmd += ["--seed", str(args.seed)]
    env = dict(os.environ)
    env.pop("AIOKAFKA_NO_EXTENSIONS", None)
    work = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    perf: subprocess.Popen[bytes] | None = None
    try:
        assert work.stdin is not None and work.stdout is not None
        first = work.stdout.readline().strip()
        if first != "ready":
            work.wait(timeout=60)
            got = json.loads(first) if first.startswith("{") else {"error": first or "no output"}
            return got  # type: ignore[no-any-return]
        data = tmp / f"{impl}-{values}-{size}-{codec}.data"
        perf = subprocess.Popen(
            ["perf", "record", "-F", str(args.freq), "-p", str(work.pid), "-o", str(data)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # perf attached; the worker waits on stdin and takes no samples
        if perf.poll() is not None:
            return {"error": "perf record could not attach (kernel.perf_event_paranoid?)"}
        work.stdin.write("go\n")
        work.stdin.flush()
        result = json.loads(work.stdout.readline())
        work.wait(timeout=60)
        perf.wait(timeout=60)  # it ends with the process it is attached to
        report = subprocess.run(
            ["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,sym"]
            + ["--stdio", "--percent-limit", "0.01"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        result["functions"] = functions(report)
        return result  # type: ignore[no-any-return]
    finally:
        for p in (work, perf):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGINT if p is perf else signal.SIGKILL)
                p.wait(timeout=30)


def below_target(results: Path) -> list[tuple[str, int, str]]:
    """The shapes of ``decode_shapes``' last results with a ratio below its target."""
    report = json.loads(results.read_text())
    out = []
    for s in report["shapes"]:
        n = report["records"]
        if any(
            (r := ds._ratio(s, a, b, n)) is not None and r < target
            for _label, a, b, target in ds.RATIOS
        ):
            out.append((s["values"], s["batch_size"], s["codec"]))
    return out


def parse_shape(text: str) -> tuple[str, int, str]:
    try:
        values, size, codec = text.split(":")
        if values not in dt.VALUE_KINDS or codec not in dt.ALL_CODECS or int(size) < 1:
            raise ValueError
        return values, int(size), codec
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a shape is VALUES:RECORDS_PER_BATCH:CODEC (e.g. text:1:none), not {text!r}"
        ) from None


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def below_target_rows(report: dict) -> list[str]:  # type: ignore[type-arg]
    """For each ratio of ``decode_shapes.RATIOS`` below its target in this run: the kit's
    µs per batch, what its codec library and its objects take, the rest, and the time the
    target allows (the other implementation's µs over the target)."""
    by = {(r["shape"], r["impl"]): r for r in report["rows"] if "us_per_batch" in r}
    out = []
    for shape in dict.fromkeys(r["shape"] for r in report["rows"]):
        for label, a, b, target in ds.RATIOS:
            ra, rb = by.get((shape, a)), by.get((shape, b))
            if ra is None or rb is None:
                continue
            ours, theirs = ra["us_per_batch"], rb["us_per_batch"]
            if theirs / ours >= target:
                continue
            g = groups_of(ra)
            codec, objects, kernel = (g.get(k, 0.0) for k in (CODEC, OBJECTS, KERNEL))
            rest = ours - codec - objects
            allowed = theirs / target
            out.append(
                f"| {shape.replace(':', ' | ')} | {label} | {theirs / ours:.2f}x | {ours:.3f} | "
                f"{codec:.3f} | {objects:.3f} | {kernel:.3f} | {rest:.3f} | {allowed:.3f} | "
                f"{_yes(rest <= allowed)} | {_yes(rest - kernel <= allowed)} |"
            )
    return out


def render(report: dict) -> str:  # type: ignore[type-arg]
    names = list(dict.fromkeys(g for g, _ in GROUPS if g not in (KERNEL, OTHER)))
    names += [KERNEL, OTHER]
    lines = [
        "# Where the time of the shapes below target goes, by function",
        "",
        f"Generated by `bench/profile_shapes.py` on {report['date']} ({report['cpu']}): "
        f"`perf record` at {report['freq']} Hz of each implementation's loop over "
        f"{report['records']} records of each shape (the input and the touch loop of "
        f"`bench/decode_shapes.py`, a fresh process each, {report['seconds']} s of loops), "
        "every sampled function filed under the first group whose pattern it matches "
        "(`GROUPS` in the script). A group's µs per batch is its share of the samples times "
        "the loop's µs per batch, measured in the same run.",
        "",
        f"Command: `{report['command']}`",
        "",
        "Groups: *checks*: CRC-32C, framing, the record reader's walk; *codec library*: zlib "
        "(and the gzip trailer's CRC-32), libzstd, liblz4 and xxHash, snap; *making and "
        "freeing objects*: CPython's allocator, the constructors and destructors of ints, "
        "bytes, tuples, lists and slotted instances, and the extension's code that fills "
        "their slots (not its walk that reads a record's fields, nor memcpy: those are "
        "*other*); *CPython interpreter*: the loops, attribute reads, calls and iteration "
        "(the benchmark's own and the API's: the decoder's generator, the record list's "
        "`__iter__`; for kafka-python, whose reader is Python, its checks too); *touch "
        "loop's integer arithmetic*: the benchmark's sums; *kernel*: mostly page faults "
        "and unmapping as the heap grows and shrinks (the memory `decode()` keeps); "
        "*other*: the rest (the extension's loop glue and its walk that reads a record's "
        "fields before they are made, pyo3's calls, memcpy).",
        "",
        "## µs per batch by group",
        "",
        "| values | records/batch | codec | implementation | µs/batch | "
        + " | ".join(names)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(names),
    ]
    for row in report["rows"]:
        v, size, codec = row["shape"].split(":")
        if "functions" not in row:
            why = row.get("skipped") or row.get("error")
            lines.append(f"| {v} | {size} | {codec} | {row['impl']} | {why} |")
            continue
        g = groups_of(row)
        cells = " | ".join(f"{g.get(name, 0.0):.3f}" for name in names)
        lines.append(
            f"| {v} | {size} | {codec} | {row['impl']} | {row['us_per_batch']:.3f} | {cells} |"
        )
    missed = below_target_rows(report)
    lines += [
        "",
        "## The ratios below target in this run",
        "",
        "The kit's µs per batch; what its codec library and its objects take of it; the "
        "kernel's time (in the rest: mostly the page faults of the memory `decode()` keeps); "
        "the rest (checks, interpreter, arithmetic, kernel, other); and the µs per batch the "
        "target allows (the other implementation's, over the target). *rest within target*: "
        "without its codec library and its objects, the kit's time would meet the target, so "
        "the time that misses it is in those two. *without the kernel too*: the same with the "
        "kernel's time counted as the objects' (the memory they are made in).",
        "",
    ]
    if missed:
        lines += [
            "| values | records/batch | codec | ratio | in this run | kit µs | codec library "
            "| objects | kernel | rest | target allows | rest within target "
            "| without the kernel too |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            *missed,
        ]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("Usage::")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--shapes",
        type=lambda s: [parse_shape(x) for x in s.split(",")],
        help="VALUES:RECORDS_PER_BATCH:CODEC,... (default: the shapes below target in --results)",
    )
    p.add_argument("--results", type=Path, default=HERE / "shapes_results.json")
    p.add_argument("--impls", default=",".join(DEFAULT_IMPLS))
    p.add_argument("--records", type=int, default=30000)
    p.add_argument("--seconds", type=float, default=4.0, help="of loops per profile (default 4)")
    p.add_argument(
        "--seed", type=int, default=7, help="data generator seed (7: decode_shapes' default)"
    )
    p.add_argument("--freq", type=int, default=2999, help="perf's sampling rate (Hz)")
    p.add_argument("--json", type=Path, help="write the report (its sampled functions) as JSON")
    p.add_argument("--markdown", type=Path, help="write the markdown report")
    p.add_argument(
        "--render", type=Path, metavar="JSON", help="no profile: render an earlier --json report"
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("worker_shape", nargs="?", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    if args.render:
        report = json.loads(args.render.read_text())
    else:
        report = measure(args, argv)
        if report is None:
            return 2
    text = render(report)
    print(text)
    if args.json and not args.render:
        rows = ",\n".join(json.dumps(r) for r in report["rows"])  # a line per loop profiled
        head = json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1)
        args.json.write_text(f'{head[:-2]},\n "rows": [\n{rows}\n]\n}}\n')
    if args.markdown:
        args.markdown.write_text(text)
    return 0


def measure(args: argparse.Namespace, argv: list[str] | None) -> dict | None:  # type: ignore[type-arg]
    if shutil.which("perf") is None:
        print("profile_shapes: perf is not installed: scripts/install-perf", file=sys.stderr)
        return None
    shapes = args.shapes or below_target(args.results)
    rows = []
    with tempfile.TemporaryDirectory(prefix="profile-shapes-") as tmp:
        for shape in shapes:
            for impl in args.impls.split(","):
                got = profile_one(impl, shape, args, Path(tmp))
                got.update(impl=impl, shape=":".join(map(str, shape)))
                rows.append(got)
                if "functions" not in got:
                    print(f"# {got['shape']} {impl}: {got.get('skipped') or got}", flush=True)
                    continue
                top = sorted(groups_of(got).items(), key=lambda kv: -kv[1])[:3]
                print(
                    f"# {got['shape']} {impl}: {got['us_per_batch']:.3f} µs/batch; "
                    + ", ".join(f"{k} {v:.3f}" for k, v in top),
                    flush=True,
                )
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(
            [".venv/bin/python bench/profile_shapes.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "cpu": dt._cpu_model(),
        "records": args.records,
        "freq": args.freq,
        "seconds": args.seconds,
        "rows": rows,
    }


if __name__ == "__main__":
    raise SystemExit(main())
