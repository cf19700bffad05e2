"""The replay job: inputs -> ranges -> tasks -> Parquet rows + ``summary.json``.

Ranges are packed into tasks (``pack``: a large range alone, small files together), and each
task runs ``task.run_task``: it replays its ranges and writes their rows to its own Parquet
part, renamed into place when complete. Two engines run the tasks:

* ``spark`` (default): one Spark task per task through ``mapInArrow``: the task descriptions
  go in as an Arrow column, the range summaries come back as one (rows never pass through the
  JVM: docs/benchmarks-replay.md measures it against ``DataFrame.write.parquet``). A task that
  dies is retried by Spark; its part is written whole or not at all, and the driver checks
  each part's row count against the summaries.
  Files are read by the tasks themselves (``os.pread`` or ``pyarrow.fs``), never through
  Spark's ``binaryFile`` source, so segments over 2 GiB work and no task holds more than a
  batch of its file.
* ``process``: the plain single-process loop over the same tasks, no Spark.

Output directory: ``batches/`` (Parquet parts, ``task.row_schema``), ``summary.json``,
``summary.txt`` (the table printed at the end).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.replay.inputs import expand
from conformance.replay.plan import DEFAULT_SPLIT_BYTES, Range, plan
from conformance.replay.summary import merge, render
from conformance.replay.task import TaskOptions, run_task

__all__ = ["OUTPUTS", "ReplayOptions", "ReplayResult", "replay"]

#: what a replay writes into ``--out`` (``--force`` removes exactly these first)
OUTPUTS = ("batches", "summary.json", "summary.txt")

Say = Callable[[str], None]


@dataclass
class ReplayOptions:
    out: Path
    engine: str = "spark"  # "spark" | "process"
    master: str | None = "local[*]"  # None: whatever spark-submit was given
    split_bytes: int = DEFAULT_SPLIT_BYTES
    task: TaskOptions = field(default_factory=TaskOptions)
    spark_conf: dict[str, str] = field(default_factory=dict)
    force: bool = False
    progress: bool = True


@dataclass
class ReplayResult:
    summary: dict[str, Any]
    table: str
    out: Path


class OutputExists(ValueError):
    """``--out`` holds a previous replay's output (``--force`` replaces it)."""


def _prepare_out(out: Path, force: bool) -> None:
    present = [name for name in OUTPUTS if (out / name).exists()]
    if present and not force:
        raise OutputExists(
            f"{out} already holds a replay ({', '.join(present)}); "
            "pass --force to replace it, or choose another --out"
        )
    for name in present:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    out.mkdir(parents=True, exist_ok=True)


def local_master(master: str) -> str:
    """``local[K]`` / ``local[*]`` / ``local`` -> ``local[K,4]``: in local mode Spark retries a
    failed task only when told how many failures to allow, a cluster retries 4 times."""
    m = re.fullmatch(r"local(?:\[([0-9]+|\*)\])?", master)
    if m is None:
        return master
    return f"local[{m.group(1) or 1},4]"


def replay(inputs: Sequence[str], options: ReplayOptions, say: Say | None = None) -> ReplayResult:
    """Replay ``inputs`` (paths, globs, URIs) into ``options.out``."""
    say = say or (lambda s: None)
    started = time.perf_counter()
    _prepare_out(options.out, options.force)
    found = expand(inputs)
    say(
        f"replay: {len(found.files)} files, {sum(f.size for f in found.files):,} bytes; "
        "planning ranges..."
    )
    ranges = plan(found.files, options.split_bytes, max_batch_bytes=options.task.max_batch_bytes)
    (options.out / "batches").mkdir()
    planned = time.perf_counter()
    run: dict[str, Any] = {
        "inputs": list(inputs),
        "profile": options.task.profile,
        "split_bytes": options.split_bytes,
        "planning_seconds": round(planned - started, 3),
    }
    if options.engine == "process":
        summaries = _run_process(ranges, options, say)
        run["engine"] = "process"
        run["tasks"] = len(pack(ranges, options.split_bytes))
        run["startup_seconds"] = 0.0
        run["replay_seconds"] = round(time.perf_counter() - planned, 3)
    else:
        summaries = _run_spark(ranges, options, say, run)
    run["seconds"] = round(time.perf_counter() - started, 3)
    summary = merge(found, ranges, summaries, run=run, parts=_parts(options.out / "batches"))
    table = render(summary)
    (options.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    (options.out / "summary.txt").write_text(table + "\n")
    return ReplayResult(summary, table, options.out)


def _parts(batches: Path) -> dict[str, int]:
    """Rows per Parquet part (from the footers); leftovers of dead task attempts removed."""
    import pyarrow.parquet as pq

    for leftover in batches.glob(".part-*.tmp"):
        leftover.unlink()
    return {
        p.name: pq.ParquetFile(p).metadata.num_rows for p in sorted(batches.glob("part-*.parquet"))
    }


# ----------------------------------------------------------------------------- process engine


def _run_process(ranges: list[Range], options: ReplayOptions, say: Say) -> list[dict[str, Any]]:
    tasks = pack(ranges, options.split_bytes)
    summaries: list[dict[str, Any]] = []
    total = sum(r.end - r.start for r in ranges)
    done = 0
    progress = _Progress(say, enabled=options.progress)
    for task_id, task in enumerate(tasks):
        summaries.extend(run_task(task_id, task, options.task, str(options.out / "batches")))
        done += sum(r.end - r.start for r in task)
        progress.update(task_id + 1, len(tasks), done, total)
    progress.close()
    return summaries


# ------------------------------------------------------------------------------- spark engine


def spark_environment() -> None:
    """Python workers run this interpreter (with the kit and pyarrow) unless told otherwise."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def pack(ranges: Sequence[Range], split_bytes: int) -> list[list[Range]]:
    """Ranges grouped into tasks: a large range alone, small ones (small files) together up to
    ``split_bytes``, so a corpus of many small files is not one task per file."""
    tasks: list[list[Range]] = []
    size = 0
    for r in ranges:
        n = r.end - r.start
        if not tasks or size + n > split_bytes:
            tasks.append([])
            size = 0
        tasks[-1].append(r)
        size += n
    # largest first: Spark starts tasks in order, so the last ones to finish are small
    # (longest-processing-time-first; docs/benchmarks-replay.md: scaling 0.83 -> 0.86)
    tasks.sort(key=lambda t: -sum(r.end - r.start for r in t))
    return tasks


def _arrow_task(options: TaskOptions, batches_dir: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: tasks in (task id and a JSON list of its ranges, so a
    task receives only its own), range summaries out; the rows go to the task's Parquet part
    (``task.run_task``), never through the JVM."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            ids = batch.column(0).to_pylist()
            for task_id, task in zip(ids, batch.column(1).to_pylist()):
                ranges = [Range.from_json(doc) for doc in json.loads(task)]
                summaries = run_task(task_id, ranges, options, batches_dir)
                yield pa.record_batch(
                    {"summary": [json.dumps(s) for s in summaries]},
                    schema=pa.schema([("summary", pa.string())]),
                )

    return run


def _run_spark(
    ranges: list[Range], options: ReplayOptions, say: Say, run: dict[str, Any]
) -> list[dict[str, Any]]:
    spark_environment()
    from pyspark.sql import SparkSession

    t0 = time.perf_counter()
    builder = SparkSession.builder.appName("kafka-conformance replay")
    if options.master is not None:
        builder = builder.master(local_master(options.master))
    conf = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false"}
    conf.update(options.spark_conf)
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    try:
        spark.sparkContext.setLogLevel("ERROR")
        sc = spark.sparkContext
        run["engine"] = f"spark {sc.master}"
        run["spark_version"] = spark.version
        run["session_seconds"] = round(time.perf_counter() - t0, 3)
        _warm_up(spark, sc.defaultParallelism)
        run["startup_seconds"] = round(time.perf_counter() - t0, 3)
        t1 = time.perf_counter()
        tasks = pack(ranges, options.split_bytes)
        run["tasks"] = len(tasks)
        say(
            f"replay: {len(ranges)} ranges in {len(tasks)} tasks on {sc.master} "
            f"(Spark {spark.version}, {sc.defaultParallelism} cores)"
        )
        work = spark.createDataFrame(
            sc.parallelize(
                [(i, json.dumps([r.to_json() for r in t])) for i, t in enumerate(tasks)],
                max(1, len(tasks)),
            ),
            "task_id int, ranges string",
        )
        batches_dir = str((options.out / "batches").absolute())
        watcher = _SparkProgress(sc, say, len(tasks), enabled=options.progress)
        try:
            collected = work.mapInArrow(
                _arrow_task(options.task, batches_dir), "summary string"
            ).collect()
        finally:
            watcher.stop()
        run["replay_seconds"] = round(time.perf_counter() - t1, 3)
        return [json.loads(r[0]) for r in collected]
    finally:
        spark.stop()


def _warm_up(spark: Any, slots: int) -> None:
    """Start-up, measured apart from the replay: one tiny job through the same path (query
    planning, Arrow, a Python worker per core importing the kit), so the replay's time is
    the corpus's, not Spark's first-job costs (about 3-4 s, whatever the corpus size)."""

    def touch(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        import conformance.replay.task  # noqa: F401 - what every task imports first

        for batch in batches:
            yield pa.record_batch({"n": [batch.num_rows]}, schema=pa.schema([("n", pa.int64())]))

    sc = spark.sparkContext
    (
        spark.createDataFrame(sc.parallelize([(i,) for i in range(slots)], slots), "i int")
        .mapInArrow(touch, "n long")
        .collect()
    )


class _Progress:
    """One status line on stderr: rewritten in place on a terminal, every 10% otherwise."""

    def __init__(self, say: Say, *, enabled: bool, noun: str = "ranges") -> None:
        self.say = say
        self.noun = noun
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.next_tenth = 1
        self.last = 0.0

    def update(self, ranges_done: int, ranges: int, done: int = 0, total: int = 0) -> None:
        if not self.enabled or ranges == 0:
            return
        text = f"replay: {ranges_done}/{ranges} {self.noun}"
        if total:
            text += f", {done / 1e6:,.1f}/{total / 1e6:,.1f} MB"
        if self.tty:
            now = time.monotonic()
            if now - self.last > 0.2 or ranges_done == ranges:
                sys.stderr.write("\r" + text + "\x1b[K")
                sys.stderr.flush()
                self.last = now
        elif ranges_done * 10 >= self.next_tenth * ranges:
            self.say(text)
            self.next_tenth = ranges_done * 10 // ranges + 1

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")


class _SparkProgress:
    """Polls Spark's status tracker: tasks done of the running stages."""

    def __init__(self, sc: Any, say: Say, ranges: int, *, enabled: bool) -> None:
        self.sc = sc
        self.ranges = ranges
        self.progress = _Progress(say, enabled=enabled, noun="tasks")
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        tracker = self.sc.statusTracker()
        while not self.done.wait(0.5):
            try:
                infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            except Exception:  # noqa: BLE001 - the context is stopping
                return
            infos = [i for i in infos if i is not None and i.numTasks == self.ranges]
            if infos:
                self.progress.update(max(i.numCompletedTasks for i in infos), self.ranges)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=2)
        self.progress.close()
