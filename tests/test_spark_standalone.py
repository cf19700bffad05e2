"""A real Spark standalone cluster (``conformance.replay.cluster``, its processes supervised by
``conformance.host.sessions``): one master and two workers on 127.0.0.1 run a PySpark
``mapInArrow`` job submitted with ``spark-submit``, and nothing the cluster or
``spark-submit`` started survives them: not on a normal exit, not on an exception in the
``with`` body (while executors and their Python workers run), not on Ctrl-C or SIGTERM (the
``kafka-conformance spark-cluster`` command), not on a ``spark-submit`` timeout.

Leftovers are looked for in ``/proc``: the pids started, every process in their sessions
(executors and pyspark's daemon live there), and any ``java`` whose command line or working
directory names the cluster (its directory, its master URL).
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.host import ports
from conformance.jvm.runtime import java_executable
from conformance.replay import cluster as spark_cluster
from conformance.replay.cluster import (
    HOST,
    SparkSubmitTimeout,
    StandaloneCluster,
    spark_env,
    spark_submit,
)

if not Path("/proc/self/stat").exists():
    pytest.skip("the leftover checks read /proc (Linux only)", allow_module_level=True)
try:
    spark_cluster.spark_home()
except spark_cluster.SparkUnavailable as exc:
    pytest.skip(
        f"no Spark standalone cluster without pyspark and Java: {exc}", allow_module_level=True
    )
pytest.importorskip("pyarrow", reason="the job's mapInArrow needs pyarrow (extra 'replay')")
pytest.importorskip("pandas", reason="pyspark's Arrow path needs pandas (extra 'replay')")

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent

PROBE_JOB = '''
import json, os, socket, sys
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import SparkSession

def executor_pid():
    """The JVM above this Python worker (worker <- pyspark.daemon <- executor)."""
    pid = os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as f:
            ppid = int(f.read().rpartition(")")[2].split()[1])
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            if os.path.basename(f.read().split(b"\\0")[0]) == b"java":
                return ppid
        pid = ppid
    return -1

def probe(batches):
    part = TaskContext.get().partitionId()
    for batch in batches:
        n = batch.num_rows
        yield pa.RecordBatch.from_pydict({
            "id": batch.column("id"),
            "partition": pa.array([part] * n, pa.int32()),
            "pid": pa.array([os.getpid()] * n, pa.int64()),
            "executor_pid": pa.array([executor_pid()] * n, pa.int64()),
            "host": pa.array([socket.gethostname()] * n),
            "cwd": pa.array([os.getcwd()] * n),
            "python": pa.array([sys.executable] * n),
            "prefix": pa.array([sys.prefix] * n),
        })

spark = SparkSession.builder.appName("standalone-probe").getOrCreate()
schema = ("id long, partition int, pid long, executor_pid long, host string, cwd string, "
          "python string, prefix string")
rows = spark.range(0, 8, numPartitions=4).mapInArrow(probe, schema).collect()
doc = {"master": spark.sparkContext.master, "app_id": spark.sparkContext.applicationId,
       "driver_python": sys.executable, "rows": [r.asDict() for r in rows]}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f)
spark.stop()
'''

#: a driver that says it runs, starts a SparkSession and never ends
SLEEPING_DRIVER = """
import sys, time
with open(sys.argv[1], "w") as f:
    f.write("started")
from pyspark.sql import SparkSession
spark = SparkSession.builder.appName("sleeping-driver").getOrCreate()
while True:
    time.sleep(60)
"""

#: a job whose one task never ends: an executor and its Python worker stay busy
SLEEPING_TASK = """
import time
from pyspark.sql import SparkSession
spark = SparkSession.builder.appName("sleeping-task").getOrCreate()
def forever(rows):
    time.sleep(3600)
    yield from rows
spark.sparkContext.parallelize(range(2), 1).mapPartitions(forever).count()
"""


# --------------------------------------------------------------------------------------------
# /proc


def _processes() -> Iterator[tuple[int, int, int, list[str], str]]:
    """(pid, process group, session, argv, cwd) of every live process but this one (zombies
    are dead)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                cwd = ""
        except OSError:
            continue
        if fields[0] in ("Z", "X"):
            continue
        yield pid, int(fields[2]), int(fields[3]), argv, cwd


def _running(pid: int) -> bool:
    return any(p == pid for p, *_ in _processes())


def leftovers(
    *,
    pids: Iterable[int] = (),
    needles: Iterable[str] = (),
    under: Path | None = None,
    java_only: bool = True,
) -> dict[int, str]:
    """Processes still running that belong to what a test started: one of ``pids``, in the
    session of one of them, or (``java`` only unless told) naming one of ``needles`` in the
    command line or working under ``under``; pid -> description."""
    pids, needles = set(pids), list(needles)
    found = {}
    for pid, _, sid, argv, cwd in _processes():
        is_java = bool(argv) and os.path.basename(argv[0]) == "java"
        cmdline = " ".join(argv)
        mine = pid in pids or sid in pids
        if is_java or not java_only:
            mine = mine or any(n in cmdline for n in needles)
            mine = mine or (under is not None and cwd.startswith(str(under)))
        if mine:
            found[pid] = f"pid {pid} (session {sid}, cwd {cwd}): {cmdline[:300]}"
    return found


def assert_cluster_gone(pids: list[int], work_dir: Path, master_url: str) -> None:
    assert pids and all(not _running(pid) for pid in pids), f"still running: {pids}"
    left = leftovers(pids=pids, needles=[str(work_dir), master_url], under=work_dir)
    assert left == {}, "left behind:\n" + "\n".join(left.values())


def _wait_for(what: str, condition: Any, timeout: float, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(interval)


# --------------------------------------------------------------------------------------------
# the shared cluster: 2 workers x 1 core, started while two of its ports are taken


@pytest.fixture(scope="module")
def busy_ports() -> Iterator[list[int]]:
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind((HOST, 0))
        s.listen(1)
        socks.append(s)
    yield [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()


@pytest.fixture(scope="module")
def cluster(busy_ports: list[int]) -> Iterator[StandaloneCluster]:
    """The cluster; its start-up loses two port races (the master's RPC port, the first
    worker's web-UI port: ports in use are handed out for them) and must recover."""
    real = ports.free_port
    calls = itertools.count()
    # calls: master RPC, master UI (both again after the first master exits), worker-0 UI,
    # worker-1 UI, worker-0 UI again
    racy = {0: busy_ports[0], 4: busy_ports[1]}

    def racy_free_port(host: str = HOST) -> int:
        n = next(calls)
        return racy.get(n) or real(host)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spark_cluster, "free_port", racy_free_port)  # as the cluster imported it
        c = StandaloneCluster(workers=2, cores_per_worker=1, memory_per_worker="1g").start()
    try:
        yield c
    finally:
        c.stop()
    # a normal stop leaves nothing either (reported as an error of the module's last test)
    assert_cluster_gone(c.pids, c.work_dir, c.master_url)
    assert not c.work_dir.exists()


def test_cluster_is_up_after_port_races(cluster: StandaloneCluster, busy_ports: list[int]) -> None:
    assert cluster.master_url.startswith(f"spark://{HOST}:")
    assert int(cluster.master_url.rpartition(":")[2]) not in busy_ports
    status = cluster.status()
    assert status["url"] == cluster.master_url and status["status"] == "ALIVE"
    alive = [w for w in status["workers"] if w["state"] == "ALIVE"]
    assert len(alive) == 2 and all(w["host"] == HOST and w["cores"] == 1 for w in alive)
    assert all(str(p) not in w["webuiaddress"] for w in alive for p in busy_ports)
    for log in ("master.log", "worker-0.log"):  # each lost its race once, then started again
        assert "BindException" in (cluster.log_dir / log).read_text(), log
    assert set(cluster.processes) == {"master", "worker-0", "worker-1"}
    assert all(_running(pid) for pid in cluster.pids)


def test_mapinarrow_job_runs_on_both_workers(cluster: StandaloneCluster, tmp_path: Path) -> None:
    script, out = tmp_path / "probe.py", tmp_path / "result.json"
    script.write_text(PROBE_JOB)
    done = cluster.submit(script, [str(out)], timeout=300)
    assert done.returncode == 0, done.stderr[-5000:]
    doc = json.loads(out.read_text())
    assert doc["master"] == cluster.master_url
    assert doc["driver_python"] == sys.executable
    rows = doc["rows"]
    assert sorted(r["id"] for r in rows) == list(range(8))
    assert {r["partition"] for r in rows} == {0, 1, 2, 3}
    # one executor per worker, each a JVM started by one of the cluster's workers
    executors = {r["executor_pid"] for r in rows}
    assert len(executors) == 2, rows
    assert len({r["pid"] for r in rows}) >= 2
    assert {Path(r["cwd"]).relative_to(cluster.work_dir).parts[0] for r in rows} == {
        "worker-0",
        "worker-1",
    }
    assert all(r["host"] == socket.gethostname() for r in rows)
    # the Python workers are this environment's interpreter (it has pyarrow), not python3
    assert {r["python"] for r in rows} == {sys.executable}
    assert {r["prefix"] for r in rows} == {sys.prefix}
    _wait_for(
        "the finished app leaves the master's active list",
        lambda: not cluster.status()["activeapps"],
        60,
    )


def test_submit_timeout_kills_the_driver(cluster: StandaloneCluster, tmp_path: Path) -> None:
    script, started = tmp_path / "sleeping_driver.py", tmp_path / "started"
    script.write_text(SLEEPING_DRIVER)
    began = time.monotonic()
    with pytest.raises(SparkSubmitTimeout) as info:
        spark_submit(
            cluster.master_url,
            script,
            [str(started)],
            conf={"spark.executor.memory": "512m"},
            timeout=15,
        )
    assert 15 <= time.monotonic() - began < 15 + spark_cluster.STOP_GRACE + 30
    assert "did not finish within 15 s" in str(info.value)
    assert "log4j" in info.value.stderr  # the output rides along
    assert started.exists()  # the Python driver was running when it was killed
    # the driver (spark-submit's JVM and the Python script) is gone at once
    left = leftovers(needles=[str(tmp_path)], java_only=False)
    assert left == {}, "left behind:\n" + "\n".join(left.values())
    # the master notices, the worker stops the app's executors (and their Python daemons),
    # the cluster stays usable
    _wait_for("the killed app leaves the master", lambda: not cluster.status()["activeapps"], 60)

    def executors_gone() -> bool:
        return set(leftovers(pids=cluster.pids)) == set(cluster.pids)

    _wait_for("the killed app's executors exit", executors_gone, 60)
    assert len([w for w in cluster.status()["workers"] if w["state"] == "ALIVE"]) == 2


# --------------------------------------------------------------------------------------------
# clusters of their own: stopping


class Boom(Exception):
    pass


def test_exception_in_body_stops_busy_executors(tmp_path: Path) -> None:
    """An exception in the ``with`` body while a task runs: the worker, its executor and
    pyspark's Python daemon and worker (in a process group of their own) all go."""
    script, sleeper = tmp_path / "sleeping_task.py", tmp_path / "Sleep.java"
    script.write_text(SLEEPING_TASK)
    sleeper.write_text(
        "class Sleep { public static void main(String[] a) throws Exception "
        "{ Thread.sleep(3_600_000); } }"
    )
    outcome: list[object] = []
    escaped: subprocess.Popen[bytes] | None = None

    def drive(master: str, conf: dict[str, str]) -> None:
        try:
            outcome.append(spark_submit(master, script, conf=conf, timeout=240))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome.append(exc)

    driver: threading.Thread | None = None
    try:
        with pytest.raises(Boom), StandaloneCluster(workers=1) as cluster:
            pids, work_dir, master_url = cluster.pids, cluster.work_dir, cluster.master_url
            worker_pid = cluster.processes["worker-0"]
            driver = threading.Thread(
                target=drive, args=(master_url, cluster.submit_conf()), daemon=True
            )
            driver.start()

            def python_workers() -> list[int]:
                assert not outcome, f"the job ended early: {outcome}"
                return [
                    pgid
                    for _, pgid, sid, argv, _ in _processes()
                    if sid == worker_pid and "pyspark.daemon" in argv
                ]

            # pyspark's daemon and the worker it forked, in a process group of their own
            _wait_for("a Python worker under the executor", lambda: len(python_workers()) >= 2, 120)
            assert worker_pid not in python_workers()
            # + the worker and its executor
            assert len(leftovers(pids=[worker_pid])) >= 4, leftovers(pids=[worker_pid])
            # a java that left the worker's session but works in its directory goes too
            escaped = subprocess.Popen(
                [java_executable(), str(sleeper)], cwd=work_dir / "worker-0", start_new_session=True
            )
            raise Boom
        # at once: the cluster's processes, their sessions, anything working in its directory
        assert all(not _running(pid) for pid in pids)
        left = leftovers(pids=pids, needles=[str(work_dir)], under=work_dir, java_only=False)
        assert left == {}, "left behind:\n" + "\n".join(left.values())
        assert not work_dir.exists()
        assert escaped is not None and escaped.wait(timeout=10) == -signal.SIGKILL
    finally:  # the driver (which names the master URL too) lost its cluster; end it
        if escaped is not None and escaped.poll() is None:
            escaped.kill()
            escaped.wait()
        for pid, _, _, argv, _ in _processes():
            if any(str(tmp_path) in a for a in argv):
                os.kill(pid, signal.SIGKILL)
        if driver is not None:
            driver.join(timeout=120)
    assert driver is not None and not driver.is_alive()
    assert leftovers(needles=[str(tmp_path)], java_only=False) == {}
    assert_cluster_gone(pids, work_dir, master_url)


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 0), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_signal_stops_the_command(tmp_path: Path, signum: int, status: int) -> None:
    """``kafka-conformance spark-cluster``: up until Ctrl-C / SIGTERM, then nothing survives
    (exit status 0 on Ctrl-C, 143 on SIGTERM)."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with open(out, "w") as fout, open(err, "w") as ferr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.cli", "spark-cluster", "--workers", "1"],
            stdout=fout,
            stderr=ferr,
            cwd=ROOT,
            start_new_session=True,
        )
    info: dict[str, str] = {}
    try:

        def announced() -> bool:
            assert proc.poll() is None, f"exited early ({proc.returncode}): {err.read_text()}"
            return "Ctrl-C" in out.read_text()

        _wait_for("the cluster's announcement", announced, 150)
        for line in out.read_text().splitlines():
            key, _, value = line.partition(" ")
            info[key] = value.strip()
        pids = list(ast.literal_eval(info["pids"]).values())
        work_dir = Path(info["logs"]).parent
        assert info["master"].startswith("spark://") and len(pids) == 2
        assert all(_running(pid) for pid in pids)
        proc.send_signal(signum)
        assert proc.wait(timeout=120) == status, err.read_text()
        assert_cluster_gone(pids, work_dir, info["master"])
        assert not work_dir.exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if "logs" in info:  # a failed test must not leak a cluster either
            for pid in leftovers(needles=[str(Path(info["logs"]).parent)]):
                os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# no cluster needed


GUARD_CHECK = """
import signal
from conformance.host import sessions as s

def mine(signum, frame):
    pass

signal.signal(signal.SIGTERM, mine)
assert s.guard_sigterm() and s.guard_sigterm()
assert signal.getsignal(signal.SIGTERM) is s._raise_terminated
s.unguard_sigterm()
try:
    signal.raise_signal(signal.SIGTERM)
except s.TerminatedBySignal as exc:
    assert exc.code == 143, exc.code
else:
    raise AssertionError("SIGTERM did not raise TerminatedBySignal")
s.unguard_sigterm()
assert signal.getsignal(signal.SIGTERM) is mine
print("ok")
"""


def test_sigterm_guard_nests_and_restores() -> None:
    """In a fresh interpreter: this one's guard is held by the module's cluster."""
    done = subprocess.run(
        [sys.executable, "-c", GUARD_CHECK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


def test_spark_env_pins_python_and_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CONF_DIR", "/elsewhere/conf")
    monkeypatch.setenv("HADOOP_CONF_DIR", "/elsewhere/hadoop")
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    monkeypatch.setenv("SPARK_MASTER_HOST", "10.0.0.1")
    env = spark_env({"HADOOP_CONF_DIR": "/given"})
    assert env["PYSPARK_PYTHON"] == env["PYSPARK_DRIVER_PYTHON"] == sys.executable
    assert env["SPARK_LOCAL_IP"] == HOST and env["SPARK_HOME"] == str(spark_cluster.spark_home())
    assert "SPARK_CONF_DIR" not in env and "SPARK_MASTER_HOST" not in env
    assert env["HADOOP_CONF_DIR"] == "/given"
    assert env["PATH"] == os.environ["PATH"]


def test_memory_notation() -> None:
    assert [spark_cluster.read_memory_mb(m) for m in ("512m", "1g", "1536M", "2gb")] == [
        512,
        1024,
        1536,
        2048,
    ]
    for bad in ("lots", "2048"):  # Spark would read a bare number as bytes
        with pytest.raises(ValueError):
            StandaloneCluster(memory_per_worker=bad)
        with pytest.raises(SystemExit) as usage:  # the command says so before starting anything
            main(["spark-cluster", "--memory", bad])
        assert usage.value.code == 2
