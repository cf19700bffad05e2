#!/usr/bin/env python3
"""Replay throughput: the plain single-process loop vs Spark ``local[1]`` and ``local[2]``
(docs/benchmarks-replay.md).

One synthetic corpus (``kafka-conformance synth``, cached under ``.cache/bench/``) is replayed
by each engine in its own process (``kafka-conformance replay --quiet``), one after the other,
the same inputs, the same split size, the same decoder, CRC and codec libraries. Each run's
``summary.json`` gives its timings: ``startup_seconds`` (Spark session start-up: JVM, context;
0 for the process engine) is reported apart from ``replay_seconds`` (ranges replayed, Parquet
written, range summaries collected), which the records/s and MB/s figures use. Peak memory
per Python worker is the largest ``ru_maxrss`` a task reported (Python workers are reused,
so that is the worker's peak over the whole job); for the process engine it is the one
process, Parquet writer included.

Targets (issue 11): ``local[1]`` within 1.3x of the single-process time, and a scaling
efficiency ``t(local[1]) / (2 * t(local[2]))`` of at least 85%.

``process-s3`` replays the same corpus from a real S3 server on 127.0.0.1 (versitygw,
``conformance.host.objectstore``; the corpus uploaded first), so S3 and local file input are
side by side in one run. ``--planning-files N`` (default 10,000) also replays N small
segments and reports the planning time (listing, checks, ranges) per 10k files beside
their replay time.

Example::

    .venv/bin/python bench/replay_scaling.py --size 1GB --markdown docs/benchmarks-replay.md
    .venv/bin/python bench/replay_scaling.py --size 100MB           # quick
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from conformance.cli.common import byte_size  # noqa: E402

ENGINES = {
    "process": ["--engine", "process"],
    "local[1]": ["--engine", "spark", "--master", "local[1]"],
    "local[2]": ["--engine", "spark", "--master", "local[2]"],
    # the same corpus read from a real S3 server on 127.0.0.1 (conformance.host.objectstore)
    "process-s3": ["--engine", "process"],
}
#: the bucket the S3 rows read from
BUCKET = "bench"


def _corpus(size: int, seed: int, corrupt: int) -> Path:
    path = ROOT / ".cache" / "bench" / f"synth-{size}-s{seed}-c{corrupt}"
    if (path / "planted.json").is_file():
        return path
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "synth",
            "--size",
            str(size),
            "--out",
            str(path),
            "--seed",
            str(seed),
            "--corrupt",
            str(corrupt),
        ],
        check=True,
        cwd=ROOT,
    )
    print(f"corpus: {path} written in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


def _run(
    engine: str, corpus: Path | str, split: str, out: Path, kit: Path = ROOT
) -> dict[str, Any]:
    """One replay in its own process, with the kit of checkout ``kit`` (default this one);
    ``corpus`` a directory or a URI."""
    if out.exists():
        shutil.rmtree(out)
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "replay",
        str(corpus),
        "--out",
        str(out),
        "--split-bytes",
        split,
        "--quiet",
        *ENGINES[engine],
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=kit, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{engine}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    s = json.loads((out / "summary.json").read_text())
    run = s["run"]
    t = s["totals"]
    return {
        "engine": engine,
        "wall_seconds": round(wall, 2),
        "session_seconds": run.get("session_seconds", 0.0),
        "startup_seconds": run["startup_seconds"],
        "replay_seconds": run["replay_seconds"],
        "planning_seconds": run["planning_seconds"],
        "records": t["records"],
        "bytes": t["bytes_total"],
        "ranges": s["ranges"],
        "records_per_s": round(t["records"] / run["replay_seconds"]),
        "mb_per_s": round(t["bytes_total"] / 1e6 / run["replay_seconds"], 1),
        "workers": len(s["workers"]["peak_rss_kib"]),
        "peak_rss_mib": round(s["workers"]["max_peak_rss_kib"] / 1024, 1),
        "flagged": s["flagged_count"],
        "exact": s["accounting_exact"],
    }


def _s3_corpus(on: contextlib.ExitStack, corpus: Path, tmp: Path) -> str:
    """The corpus uploaded to a real S3 server started for the benchmark (stopped by ``on``);
    its URI, with the key pair in this process's environment for the replays."""
    import pyarrow.fs as pafs

    from conformance.host.objectstore import object_store
    from conformance.replay.storage import arrow_fs

    binary = subprocess.run(
        [str(ROOT / "scripts" / "fetch-s3-server")], capture_output=True, text=True, check=True
    ).stdout.strip()
    store = on.enter_context(object_store(Path(binary), tmp / "s3"))
    os.environ.update(store.client_env())
    fs, _ = arrow_fs(store.uri(BUCKET) + "&allow_bucket_creation=true")
    fs.create_dir(BUCKET)
    t0 = time.perf_counter()
    pafs.copy_files(str(corpus), f"{BUCKET}/corpus", pafs.LocalFileSystem(), fs)
    print(f"corpus uploaded to S3 in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return store.uri(f"{BUCKET}/corpus")


def _planning(files: int, tmp: Path) -> dict[str, Any]:
    """``files`` small segments (20,000 bytes each, 100 per partition directory) replayed by
    the process engine: the planning time (listing, checks, ranges) beside the replay's."""
    root = tmp / "many"
    seed = next(iter(sorted(_corpus(64_000_000, 1, 8).rglob("*.log")))).read_bytes()[:20000]
    for i in range(files):
        d = root / f"t-{i // 100}"
        if i % 100 == 0:
            d.mkdir(parents=True)
        (d / f"{(i % 100) * 1000:020d}.log").write_bytes(seed)
    r = _run("process", root, "64MiB", tmp / "many-out")
    return {
        "files": files,
        "planning_seconds": r["planning_seconds"],
        "replay_seconds": r["replay_seconds"],
        "planning_seconds_per_10k_files": round(r["planning_seconds"] * 10000 / files, 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", default="1GB", help="corpus size (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corrupt", type=int, default=8)
    ap.add_argument("--split-bytes", default="64MiB")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--rounds", type=int, default=3, help="runs per engine; the median is reported")
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "replay_results.json")
    ap.add_argument("--markdown", type=Path)
    ap.add_argument(
        "--planning-files",
        type=int,
        default=10000,
        help="also plan and replay this many small segments (0: not)",
    )
    args = ap.parse_args()
    size = byte_size(args.size)
    corpus = _corpus(size, args.seed, args.corrupt)
    runs: dict[str, list[dict[str, Any]]] = {e: [] for e in args.engines.split(",")}
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp, contextlib.ExitStack() as on:
        uri = _s3_corpus(on, corpus, Path(tmp)) if "process-s3" in runs else None
        for n in range(args.rounds):  # engines interleaved, their order rotated per round
            engines = list(runs)
            engines = engines[n % len(engines) :] + engines[: n % len(engines)]
            for engine in engines:
                r = _run(
                    engine,
                    uri if engine.endswith("-s3") and uri else corpus,
                    args.split_bytes,
                    Path(tmp) / engine.replace("[", "").replace("]", ""),
                )
                print(json.dumps(r), file=sys.stderr)
                runs[engine].append(r)
        planning = _planning(args.planning_files, Path(tmp)) if args.planning_files else None
    # each engine's median round by replay time (rounds listed in the JSON)
    results = [sorted(rs, key=lambda r: r["replay_seconds"])[len(rs) // 2] for rs in runs.values()]
    by = {r["engine"]: r for r in results}
    derived: dict[str, Any] = {}
    if "process" in by and "local[1]" in by:
        derived["local1_over_process"] = round(
            by["local[1]"]["replay_seconds"] / by["process"]["replay_seconds"], 3
        )
    if "local[1]" in by and "local[2]" in by:
        derived["scaling_efficiency"] = round(
            by["local[1]"]["replay_seconds"] / (2 * by["local[2]"]["replay_seconds"]), 3
        )
    if "process" in by and "process-s3" in by:
        derived["s3_over_local"] = round(
            by["process-s3"]["replay_seconds"] / by["process"]["replay_seconds"], 3
        )
    doc = {
        "size": size,
        "seed": args.seed,
        "corrupt": args.corrupt,
        "split_bytes": args.split_bytes,
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
        "rounds": args.rounds,
        "results": results,
        "derived": derived,
        "planning": planning,
        "all_rounds": runs,
    }
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(_markdown(doc, " ".join(sys.argv[1:])))
    print(json.dumps(derived))
    return 0


def _markdown(doc: dict[str, Any], argv: str) -> str:
    lines = [
        "# Replay benchmark: single process vs Spark local[1] / local[2]",
        "",
        f"Command: `.venv/bin/python bench/replay_scaling.py {argv}`  ",
        f"Corpus: `kafka-conformance synth --size {doc['size']} --seed {doc['seed']} "
        f"--corrupt {doc['corrupt']}`, split {doc['split_bytes']}; {doc['machine']}.",
        "",
        "| engine | session s | start-up s (session + warm-up job) | replay s | wall s (process) | "
        "records/s | MB/s | ranges | Python workers | peak RSS per worker (MiB) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        lines.append(
            f"| {r['engine']} | {r['session_seconds']} | {r['startup_seconds']} | "
            f"{r['replay_seconds']} | {r['wall_seconds']} | "
            f"{r['records_per_s']:,} | {r['mb_per_s']} | {r['ranges']} | {r['workers']} | "
            f"{r['peak_rss_mib']} |"
        )
    d = doc["derived"]
    lines += [
        "",
        f"Median of {doc['rounds']} rounds per engine (engines interleaved); every round:",
        "",
    ]
    for engine, rs in doc["all_rounds"].items():
        lines.append(f"* {engine}: replay s " + ", ".join(str(r["replay_seconds"]) for r in rs))
    lines += [
        "",
        f"* local[1] / process (replay time): **{d.get('local1_over_process')}** (target <= 1.3)",
        f"* scaling efficiency 1 -> 2 cores: **{d.get('scaling_efficiency')}** (target >= 0.85)",
        f"* S3 / local file input (process engine, replay time): **{d.get('s3_over_local')}**",
        "",
    ]
    pl = doc.get("planning")
    if pl:
        lines += [
            f"Planning {pl['files']:,} small segments (20,000 bytes each, 100 per partition "
            f"directory; listing, checks, ranges): {pl['planning_seconds']} s, "
            f"**{pl['planning_seconds_per_10k_files']} s per 10k files**; replaying them took "
            f"{pl['replay_seconds']} s.",
            "",
        ]
    lines += NOTES.splitlines()
    return "\n".join(lines) + "\n"


NOTES = """## How to read it

* Like for like: every engine runs the same task function (`replay.task.run_task`: the
  decoder, the same CRC and codec libraries, rows written by pyarrow's Parquet writer) on the
  same files, each run in its own process, engines interleaved round by round.
* *session*: `SparkSession` start-up (JVM, context). *start-up*: session plus the warm-up job
  (`job._warm_up`: one tiny `mapInArrow` job that plans a first query and starts one Python
  worker per core, importing the kit), 3-4 s whatever the corpus size. *replay*: everything
  after (planning the job, every task, collecting the range summaries): the records/s, MB/s
  and the two target ratios use it. *wall*: the whole command, start-up included.
* Peak RSS per worker: the largest `ru_maxrss` a Python worker reported (workers are reused,
  so it is the worker's peak over the job); for `process`, the one process. About 140 MiB of
  it is the interpreter with pyarrow and the kit imported. It does not grow with segment size:
  `tests/test_replay.py::test_segment_over_2gib` replays a 2.2 GB segment (9 ranges) with every
  worker under 600 MiB.
* On 2 cores the JVM (scheduler, Arrow transfer) competes with the two Python workers of
  `local[2]`, which the single process does not have to share; the rounds above show the
  spread (local[2] varies the most). The kit starts the driver JVM of a local master with
  `-XX:TieredStopAtLevel=1 -XX:+UseSerialGC` (`job.LOCAL_JVM_OPTIONS`) for that reason.
* `process-s3` reads every file through pyarrow's S3 client, a ranged GET per MiB
  (`inputs.ArrowSource`, read ahead like a local file), from a server on the same 2 cores:
  the server's CPU and the HTTP transfer are in its time.
* The scaling efficiency fell from 0.86 to 0.74 while `local[2]` got faster (5.2 s to
  3.1 s): `local[1]` got faster still (8.9 s to 4.6 s), so the fixed costs of a Spark job on
  2 cores (about 0.1 s per task between tasks, the JVM) weigh more.

## What changed to get here (same corpus, this machine)

| design | local[1] / process | scaling |
|---|---|---|
| rows returned through `mapInArrow` and written by `DataFrame.write.parquet`, summaries from the cached result, start-up = session only (measured while another session ran Spark tests: noisy) | 1.90 | 0.64 |
| each task writes its own Parquet part, only range summaries return through Arrow | 1.54 | 0.65 |
| + start-up measured with a warm-up job (first-query planning, Python workers) | 1.15-1.19 | 0.83 |
| + largest tasks first | 1.19-1.23 | 0.84-0.86 |
| + the tasks' input from `spark.range` and a broadcast (no Python pass per task to make its input row), the warm-up of the same shape, the driver JVM with C1 only and the serial collector on a local master (JIT and GC took 2.5-3.7 s of CPU during a 4 s `local[2]` replay, 0.7-0.8 s after) | 1.15 | 0.82 (local[2] faster than one process now: 2.5-2.9 s against 3.5-4.1 s) |
"""  # noqa: E501 - Markdown table rows cannot wrap


if __name__ == "__main__":
    sys.exit(main())
