"""The replay job: inputs -> ranges -> tasks -> Parquet rows + ``summary.json``.

:func:`replay` plans the ranges (``plan``) and hands them to an engine, which packs them
into tasks for its cores (:func:`pack`: about two per core, largest first) and runs them;
it fills the run information (``summary.RunInfo``) in one place from the plan and what the
engine measured (:class:`EngineRun`); then it merges the range summaries (``summary.merge``)
and writes the outputs. Each task runs ``task.run_task``: it replays its ranges and writes
their rows to its own Parquet part, renamed into place when complete. Two engines run the tasks:

* ``spark`` (default): one Spark task per task through ``mapInArrow`` over ``spark.range``:
  the task ids go in as an Arrow column made by the JVM, each task's ranges are looked up in
  a broadcast list (``plan.write_ranges`` text; no Python worker runs to make the input), the
  range summaries come back as one (``RangeSummary.to_json`` text; rows never pass through
  the JVM: docs/benchmarks-replay.md measures it against ``DataFrame.write.parquet``). On a
  local master the JVM is started with :data:`LOCAL_JVM_OPTIONS`. A task that dies is
  retried by Spark; its
  part is written whole or not at all, and the driver checks each part's row count against
  the summaries.
  Files are read by the tasks themselves (``os.pread`` or ``pyarrow.fs``), never through
  Spark's ``binaryFile`` source, so segments over 2 GiB work and no task holds more than a
  batch of its file.
* ``process``: the plain single-process loop over the same tasks, no Spark.

Progress (``host.progress.Progress``, on stderr): bytes of the tasks done for the process
engine; tasks done for Spark, polled from its status tracker.

Output directory: ``batches/`` (Parquet parts, ``task.row_schema``), ``summary.json``,
``summary.txt`` (the table printed at the end).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fileio import printable_name
from conformance.host.ports import accepts
from conformance.host.progress import Progress, Status
from conformance.jvm.runtime import CLIENT_COMPILER_ONLY
from conformance.replay.arrow import record_batch
from conformance.replay.counts import RangeSummary, read_range_summary
from conformance.replay.inputs import expand, file_uri_path
from conformance.replay.output import Output
from conformance.replay.plan import (
    DEFAULT_SPLIT_BYTES,
    MIN_SPLIT_BYTES,
    Range,
    plan,
    read_ranges,
    write_ranges,
)
from conformance.replay.storage import is_uri
from conformance.replay.summary import ReplaySummary, RunInfo, SparkRun, merge, render
from conformance.replay.task import TaskOptions, run_task

__all__ = [
    "DRIVER_LOG",
    "LOCAL_JVM_OPTIONS",
    "EngineRun",
    "ReplayOptions",
    "ReplayResult",
    "SparkFailed",
    "check_master",
    "local_master",
    "pack",
    "replay",
    "spark_conf",
]

#: the Spark driver's log in ``--out`` (Spark's own messages, kept off the terminal; written
#: again by every Spark replay into that directory, also one that failed; the JVM options of
#: ``spark_conf`` apply only to a JVM this process starts: pyspark keeps one after
#: ``spark.stop()``, and the next replay in the process reuses it)
DRIVER_LOG = "spark-driver.log"
#: the log4j2 configuration of a driver the kit starts: Spark's messages at WARN and above
#: to ``DRIVER_LOG``, none on the console (they buried the progress line)
_LOG4J2 = """\
status = error
rootLogger.level = warn
rootLogger.appenderRef.file.ref = driver
appender.driver.type = File
appender.driver.name = driver
appender.driver.fileName = {path}
appender.driver.append = true
appender.driver.layout.type = PatternLayout
appender.driver.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""

#: a task: its ranges, replayed in order
Task = list[Range]
#: tasks per core at most (:func:`pack`): two leave a core that finishes early one more task
#: to take, for corpora whose costly codecs are unevenly spread
TASKS_PER_CORE = 2
#: the fewest bytes per task before :func:`pack` gives a core a second task. A Spark task
#: costs about 30-60 ms of scheduling, JVM and Python worker time whatever its size (a warm
#: local[2] session of the 2-core benchmark machine: 80 tasks doing nothing took 2.6 s; a
#: replay of a 4 MB corpus took 0.12 s as 2 tasks, 0.20 s as 4, 0.32 s as 8), so a task
#: should hold seconds of work: 512 MiB is 0.7-2 s at the native path's speed there. The 1 GB
#: benchmark corpus on two cores is then one task per core (``local[2]``: 0.86-0.91 s against
#: 0.92-0.93 s as four tasks, interleaved; docs/benchmarks-scan.md).
MIN_TASK_BYTES = 512 << 20
#: the most bytes :func:`pack` puts in one task unless the cores ask for more tasks: a task
#: of about 3 s of work at the native path's speed, so its fixed cost stays small, while a
#: large corpus still gives Spark many tasks to spread and retry
MAX_TASK_BYTES = 1 << 30

#: The driver JVM's flags on a local master, where it shares the cores with the Python
#: workers and its own work is small (scheduling, a few Arrow batches): the C1 compiler only
#: and the serial collector. With the defaults, C2 compilation and G1's concurrent marking
#: took 2.5-3.7 s of CPU during a 4 s local[2] replay of the 1 GB benchmark corpus, 0.7-0.8 s
#: with these (docs/benchmarks-replay.md). A ``spark.driver.extraJavaOptions`` given by the
#: user comes after them, so the user's flags win.
LOCAL_JVM_OPTIONS = " ".join((*CLIENT_COMPILER_ONLY, "-XX:+UseSerialGC"))
#: prefixes of the environment variables that configure object stores (credentials, region,
#: endpoint), handed to a local master's Python workers (:func:`spark_conf`); Spark redacts
#: the secret ones (``spark.redaction.regex``) wherever it shows its configuration
STORE_ENV = ("AWS_", "GOOGLE_")


@dataclass
class ReplayOptions:
    #: a local directory, or an object-store URI (``s3://bucket/prefix``): ``output.Output``
    out: Path | str
    engine: str = "spark"  # "spark" | "process"
    master: str | None = "local[*]"  # None: whatever spark-submit was given
    split_bytes: int = DEFAULT_SPLIT_BYTES
    task: TaskOptions = field(default_factory=TaskOptions)
    spark_conf: dict[str, str] = field(default_factory=dict)
    force: bool = False
    progress: bool = True


@dataclass
class ReplayResult:
    summary: ReplaySummary
    #: the table printed at the end (summary.txt)
    table: str
    out: Path | str


@dataclass(frozen=True, slots=True)
class EngineRun:
    """What an engine brings back: the range summaries, and what it measured."""

    #: ``process`` or ``spark <master>``
    engine: str
    summaries: list[RangeSummary]
    #: how many tasks the ranges were packed into (:func:`pack`, for the engine's cores)
    tasks: int
    #: before the first task could run (Spark session and warm-up job; 0 for the process)
    startup_seconds: float
    #: every task run and its range summaries collected
    replay_seconds: float
    spark: SparkRun | None = None


def local_master(master: str) -> str:
    """``local[K]`` / ``local[*]`` / ``local`` -> ``local[K,4]``: in local mode Spark retries a
    failed task only when told how many failures to allow, a cluster retries 4 times."""
    m = re.fullmatch(r"local(?:\[([0-9]+|\*)\])?", master)
    if m is None:
        return master
    return f"local[{m.group(1) or 1},4]"


def _check(inputs: Sequence[str], options: ReplayOptions) -> None:
    """Refuse what cannot give a sound replay: ranges below :data:`plan.MIN_SPLIT_BYTES`,
    ``--out`` inside an input directory (the next replay of that directory would read the
    previous one's output as input), an unreachable Spark master (:func:`check_master`)."""
    if options.split_bytes < MIN_SPLIT_BYTES:
        raise ValueError(
            f"--split-bytes {options.split_bytes} is below the smallest range, "
            f"{MIN_SPLIT_BYTES} bytes (64KiB)"
        )
    if options.engine == "spark":
        check_master(options.master)
    if isinstance(options.out, str) and is_uri(options.out):
        return
    out = os.path.realpath(options.out)
    for item in inputs:
        path = file_uri_path(item) if item.startswith("file://") else item
        if path is None or "://" in path or not os.path.isdir(path):
            continue
        root = os.path.realpath(path)
        if os.path.commonpath([root, out]) == root:
            raise ValueError(
                f"--out {printable_name(str(options.out))} is inside the input directory "
                f"{printable_name(item)}: choose an --out outside it"
            )


def replay(
    inputs: Sequence[str], options: ReplayOptions, say: Status | None = None
) -> ReplayResult:
    """Replay ``inputs`` (paths, globs, URIs) into ``options.out``; a replay that fails or is
    interrupted leaves no partial output behind (``output.Output.clean_failed``)."""
    _check(inputs, options)
    out = Output(options.out, options.task.io_timeout)
    created = not out.exists()
    out.prepare(options.force)
    try:
        return _replay(inputs, options, out, say or (lambda s: None))
    except BaseException:
        out.clean_failed(created)
        raise


def _replay(
    inputs: Sequence[str], options: ReplayOptions, out: Output, say: Status
) -> ReplayResult:
    started = time.perf_counter()
    found = expand(inputs, options.task.io_timeout)
    say(
        f"replay: {len(found.files)} files, {sum(f.size for f in found.files):,} bytes; "
        "planning ranges..."
    )
    ranges = plan(
        found.files,
        options.split_bytes,
        max_batch_bytes=options.task.max_batch_bytes,
        io_timeout=options.task.io_timeout,
    )
    planned = time.perf_counter()
    if options.engine == "process":
        measured = _run_process(ranges, options, out)
    else:
        measured = _run_spark(ranges, options, out, say)
    run = RunInfo(
        inputs=list(inputs),
        profile=options.task.profile,
        split_bytes=options.split_bytes,
        planning_seconds=round(planned - started, 3),
        engine=measured.engine,
        tasks=measured.tasks,
        startup_seconds=measured.startup_seconds,
        replay_seconds=measured.replay_seconds,
        seconds=round(time.perf_counter() - started, 3),
        spark=measured.spark,
    )
    summary = merge(found, ranges, measured.summaries, run=run, parts=out.parts())
    doc = summary.to_dict()
    table = render(doc)
    out.write_text("summary.json", json.dumps(doc, indent=2, sort_keys=False) + "\n")
    out.write_text("summary.txt", table + "\n")
    return ReplayResult(summary, table, options.out)


def pack(ranges: Sequence[Range], cores: int, min_task_bytes: int = MIN_TASK_BYTES) -> list[Task]:
    """Ranges grouped into tasks for ``cores`` cores: one task per core, up to
    :data:`TASKS_PER_CORE` per core as long as each task keeps ``min_task_bytes`` (fewer
    when there are fewer ranges; the process engine, which pays no per-task cost, gives 0),
    more when that would make a task larger than :data:`MAX_TASK_BYTES`. Ranges go largest
    first to the task with the fewest bytes so far (longest-processing-time-first), each
    task's ranges then in plan order; tasks largest first, since Spark starts them in order
    and the last ones to finish should be small."""
    total = sum(r.size for r in ranges)
    cores = max(1, cores)
    per_cores = TASKS_PER_CORE * cores
    if min_task_bytes > 0:
        per_cores = min(per_cores, max(cores, total // min_task_bytes))
    count = max(-(-total // MAX_TASK_BYTES), min(per_cores, len(ranges)))
    count = max(1, min(count, len(ranges)))
    bins: list[tuple[int, int, list[Range]]] = [(0, i, []) for i in range(count)]
    for r in sorted(ranges, key=lambda r: (-r.size, r.range_id)):
        size, i, task = heapq.heappop(bins)
        task.append(r)
        heapq.heappush(bins, (size + r.size, i, task))
    tasks = [sorted(t, key=lambda r: r.range_id) for _, _, t in bins if t]
    tasks.sort(key=lambda t: (-sum(r.size for r in t), t[0].range_id))
    return tasks


# ----------------------------------------------------------------------------- process engine


def _run_process(ranges: Sequence[Range], options: ReplayOptions, out: Output) -> EngineRun:
    started = time.perf_counter()
    tasks = pack(ranges, 1, min_task_bytes=0)  # no Spark here: no per-task cost to spare
    batches_dir = out.batches()
    summaries: list[RangeSummary] = []
    done = 0
    total = sum(r.size for r in ranges)
    with Progress("replay", total, unit="B", enabled=options.progress) as progress:
        for task_id, task in enumerate(tasks):

            def ranged(s: RangeSummary, task_id: int = task_id) -> None:
                nonlocal done
                done += s.end - s.start
                progress.update(done, detail=f"task {task_id + 1}/{len(tasks)}")

            summaries.extend(run_task(task_id, task, options.task, batches_dir, ranged))
    return EngineRun(
        engine="process",
        summaries=summaries,
        tasks=len(tasks),
        startup_seconds=0.0,
        replay_seconds=round(time.perf_counter() - started, 3),
    )


# ------------------------------------------------------------------------------- spark engine


def spark_environment() -> None:
    """Python workers run this interpreter (with the kit and pyarrow) unless told otherwise."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def _arrow_task(
    options: TaskOptions, batches_dir: str, tasks: Any
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: task ids in (``spark.range``), each task's ranges from
    the broadcast ``tasks`` (``plan.write_ranges`` text per task id, loaded once per Python
    worker), range summaries out (``RangeSummary.to_json`` text); the rows go to the task's
    Parquet part (``task.run_task``), never through the JVM."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = pa.schema([("summary", pa.string())])
        texts = tasks.value
        for batch in batches:
            for task_id in batch.column(0).to_pylist():
                summaries = run_task(task_id, read_ranges(texts[task_id]), options, batches_dir)
                yield record_batch({"summary": [s.to_json() for s in summaries]}, schema)

    return run


def spark_conf(options: ReplayOptions, log_config: Path | None = None) -> dict[str, str]:
    """The session's configuration: the kit's defaults, then the user's (``--conf``). When
    the kit starts the driver (a master given, not ``spark-submit``), its JVM options come
    before the user's own: the log configuration ``log_config`` (:data:`DRIVER_LOG`), and on
    a local master :data:`LOCAL_JVM_OPTIONS`. On a local master the object-store settings of
    this process's environment (:data:`STORE_ENV`) are also given to the Python workers
    (``spark.executorEnv.*``, unless set): they inherit the JVM's environment, and pyspark
    keeps the JVM of an earlier replay in the process, started before they were set."""
    conf = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false"}
    conf.update(options.spark_conf)
    if options.master is None:
        return conf
    ours = [f"-Dlog4j2.configurationFile={log_config}"] if log_config is not None else []
    if options.master.startswith("local"):
        ours.append(LOCAL_JVM_OPTIONS)
        for name, value in sorted(os.environ.items()):
            if name.startswith(STORE_ENV):
                conf.setdefault(f"spark.executorEnv.{name}", value)
    if ours:
        key = "spark.driver.extraJavaOptions"
        conf[key] = " ".join(filter(None, [*ours, options.spark_conf.get(key)]))
    return conf


def check_master(master: str | None, timeout: float = 5.0) -> None:
    """A ``spark://host:port`` master that accepts no connection is refused at once
    (``ValueError``), before Spark spends a minute retrying it and ends in a Py4J traceback."""
    m = re.fullmatch(r"spark://([^:/,]+):([0-9]+)", master or "")
    if m is not None and not accepts(m.group(1), int(m.group(2)), timeout=timeout):
        raise ValueError(
            f"cannot reach the Spark master {master}: nothing accepts connections on "
            f"{m.group(1)}:{m.group(2)} (start it, or pass another --master)"
        )


class SparkFailed(RuntimeError):
    """Spark could not run the replay (its session, or a job that failed every attempt);
    the message is Spark's own first line, the driver log (:data:`DRIVER_LOG`) has the rest."""


def _spark_error(e: BaseException, log: Path | str) -> SparkFailed:
    text = str(e).strip()
    for line in text.splitlines():  # Py4J's text: the Java exception's line, then its trace
        if line.strip() and not line.startswith(("An error occurred", "\tat ", "Traceback")):
            text = line.strip()
            break
    where = "" if isinstance(log, Path) and not log.is_file() else f" (driver log: {log})"
    return SparkFailed(f"{type(e).__name__}: {text[:500]}{where}")


def _run_spark(
    ranges: Sequence[Range], options: ReplayOptions, out: Output, say: Status
) -> EngineRun:
    spark_environment()
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="kafka-conformance-log4j2-") as tmp:
        # the driver log: in a local --out; written beside the configuration and copied to
        # an object-store --out when the session has stopped
        log = (out.path if out.path is not None else Path(tmp)).absolute() / DRIVER_LOG
        log_config = Path(tmp) / "log4j2.properties"
        log_config.write_text(_LOG4J2.format(path=log))
        log.unlink(missing_ok=True)  # a previous replay's
        try:
            return _spark_session(SparkSession, ranges, options, out, say, log_config)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:
            if type(e).__module__.startswith(("py4j", "pyspark")):
                raise _spark_error(e, log if out.path is not None else out.name) from e
            raise
        finally:
            if out.path is None and log.is_file():
                with contextlib.suppress(Exception):  # noqa: BLE001 - the replay's error first
                    out.write_text(DRIVER_LOG, log.read_text(errors="replace"))


def _spark_session(
    session: Any,
    ranges: Sequence[Range],
    options: ReplayOptions,
    out: Output,
    say: Status,
    log_config: Path,
) -> EngineRun:
    t0 = time.perf_counter()
    builder = session.builder.appName("kafka-conformance replay")
    if options.master is not None:
        builder = builder.master(local_master(options.master))
    for k, v in spark_conf(options, log_config).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    try:
        sc = spark.sparkContext
        _log_to(sc, log_config)
        session_seconds = round(time.perf_counter() - t0, 3)
        _warm_up(spark, sc.defaultParallelism)
        startup_seconds = round(time.perf_counter() - t0, 3)
        t1 = time.perf_counter()
        tasks = pack(ranges, sc.defaultParallelism)
        say(
            f"replay: {len(ranges)} ranges in {len(tasks)} tasks on {sc.master} "
            f"(Spark {spark.version}, {sc.defaultParallelism} cores)"
        )
        texts = sc.broadcast([write_ranges(t) for t in tasks])
        work = spark.range(0, len(tasks), 1, max(1, len(tasks)))
        batches_dir = out.batches()
        with Progress("replay", len(tasks), unit="tasks", enabled=options.progress) as progress:
            with _tasks_done(sc, len(tasks), progress):
                collected = work.mapInArrow(
                    _arrow_task(options.task, batches_dir, texts), "summary string"
                ).collect()
            progress.update(len(tasks))  # the poller has stopped: the last word is ours
        texts.destroy()
        return EngineRun(
            engine=f"spark {sc.master}",
            summaries=[read_range_summary(row[0]) for row in collected],
            tasks=len(tasks),
            startup_seconds=startup_seconds,
            replay_seconds=round(time.perf_counter() - t1, 3),
            spark=SparkRun(
                version=spark.version,
                session_seconds=session_seconds,
                driver_jvm_options=_jvm_options(sc),
            ),
        )
    finally:
        spark.stop()


def _log_to(sc: Any, config: Path) -> None:
    """The driver's log4j2 configuration made ``config``: a JVM that an earlier replay in this
    process started (pyspark keeps it after ``spark.stop()``) still has that replay's, and
    JVM options only apply when a JVM starts."""
    jvm = sc._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(
        jvm.java.net.URI(config.as_uri())
    )


def _jvm_options(sc: Any) -> tuple[str, ...]:
    """The driver JVM's flags, as the JVM itself reports them."""
    bean = sc._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    return tuple(str(a) for a in bean.getInputArguments())


@contextlib.contextmanager
def _tasks_done(sc: Any, tasks: int, progress: Progress) -> Iterator[None]:
    """While the block runs, a thread polls Spark's status tracker (every 0.5 s) and shows the
    tasks done of the running stage with ``tasks`` tasks."""
    stop = threading.Event()

    def poll() -> None:
        tracker = sc.statusTracker()
        while not stop.wait(0.5):
            try:
                infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            except Exception:  # noqa: BLE001 - the context is stopping
                return
            infos = [i for i in infos if i is not None and i.numTasks == tasks]
            if infos:
                progress.update(max(i.numCompletedTasks for i in infos))

    thread = threading.Thread(target=poll, name="replay-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2)


def _warm_up(spark: Any, slots: int) -> None:
    """Start-up, measured apart from the replay: one tiny job of the replay's shape
    (``spark.range``, a broadcast, ``mapInArrow``: query planning, Arrow, a Python worker per
    core importing the kit), so the replay's time is the corpus's, not Spark's first-job
    costs (about 3-4 s, whatever the corpus size)."""
    sc = spark.sparkContext
    names = sc.broadcast(["warm-up"] * slots)

    def touch(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        import conformance.replay.task  # noqa: F401 - what every task imports first

        schema = pa.schema([("n", pa.int64())])
        for batch in batches:
            n = [len(names.value[i]) for i in batch.column(0).to_pylist()]
            yield record_batch({"n": n}, schema)

    spark.range(0, slots, 1, slots).mapInArrow(touch, "n long").collect()
    names.destroy()
