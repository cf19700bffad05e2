"""A real Spark standalone cluster on 127.0.0.1 (one master, N workers), and ``spark-submit``.

The pip wheel of pyspark is a complete ``SPARK_HOME`` (``bin/spark-class``, ``jars/``), so
Spark's own deploy classes run the cluster: the master is ``spark-class
org.apache.spark.deploy.master.Master --host 127.0.0.1 --port P --webui-port U
--properties-file F``, each worker ``... org.apache.spark.deploy.worker.Worker --host 127.0.0.1
--cores C --memory M --work-dir W --webui-port U' --properties-file F spark://127.0.0.1:P``,
and jobs go in with ``bin/spark-submit --master spark://127.0.0.1:P ... script``.

* **Ports.** All free ports (``host.ports.free_port``). ``F`` sets ``spark.port.maxRetries=0``
  (Spark would silently move to the next port, and ``master_url`` would lie) and turns the
  master's REST server off (fixed port 6066). A daemon that loses a port race exits with a
  ``BindException`` and is started again on fresh ports (``PORT_ATTEMPTS``). The master is up
  when its web UI's JSON (``http://127.0.0.1:U/json/``, fetched without proxy) answers with
  *its* URL; the cluster is ready when that JSON lists every worker ``ALIVE``.
* **Environment** (:func:`spark_env`). The caller's ``SPARK_*``/``PYSPARK_*`` variables and
  Hadoop/YARN/Hive configuration directories are dropped (they could point Spark elsewhere);
  ``SPARK_LOCAL_IP``/``SPARK_LOCAL_HOSTNAME`` pin every address to 127.0.0.1;
  ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON`` are this interpreter, so Python workers have
  this environment's packages (pyarrow), not the system ``python3``. Scratch space
  (``SPARK_LOCAL_DIRS``, the JVMs' ``java.io.tmpdir``) is under the cluster's directory, or a
  temporary directory per ``spark-submit``: a killed driver leaves no ``/tmp/spark-*``.
* **Processes** (``host.sessions``). Each daemon and each ``spark-submit`` is a
  :class:`~conformance.host.sessions.Child`, in a session of its own that all it spawns
  inherits: ``spark-class`` execs ``java`` (same pid), executors stay in their worker's process
  group, and pyspark's Python daemon, which makes a group of its own (``os.setpgid``), stays in
  the session. Stopping (workers first, then the master) is ``sessions.terminate``: SIGTERM to
  the group, a grace period, SIGKILL to the group and to whatever still runs in the session,
  plus any ``java`` naming the cluster (its properties file in the command line, or working in
  a worker's directory) that escaped the sessions; leaders are reaped last.
* **When stop runs.** :meth:`StandaloneCluster.stop` is idempotent and runs on every exit of
  the ``with`` block, exceptions and Ctrl-C included. While a cluster or :func:`spark_submit`
  runs in the main thread, SIGTERM raises :class:`TerminatedBySignal` (``SystemExit``, status
  143) so the same path runs (``sessions.guard_sigterm``); the previous handler is restored
  when the last one ends. A signal during stop does not cut it short (it is raised again
  afterwards). Clusters never stopped are stopped at interpreter exit (``atexit``).
* **Logs.** stdout+stderr of each daemon go to ``<log_dir>/<name>.log`` (executors log in
  their worker's work directory); errors carry the tail of every log. The cluster's directory
  (temporary unless ``work_dir`` is given) is removed at stop, unless a daemon failed (the
  error says where the logs are). ``spark-submit``'s output goes to temporary files; the last
  ``OUTPUT_LIMIT`` bytes of each stream are returned.

For humans: ``kafka-conformance spark-cluster --workers 2`` (``conformance.cli.spark_cluster``)
starts a cluster, prints its URLs and keeps it up until Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from conformance.host.lifetime import Service
from conformance.host.ports import free_port
from conformance.host.sessions import (
    OUTPUT_LIMIT,
    STOP_GRACE,
    Child,
    Escaped,
    TerminatedBySignal,
    guard_sigterm,
    last_lines,
    read_tail,
    sigterm_guarded,
    terminate,
    unguard_sigterm,
    uninterrupted,
)
from conformance.jvm.runtime import CLIENT_COMPILER_ONLY, JvmToolMissing, java_executable

__all__ = [
    "HOST",
    "OUTPUT_LIMIT",
    "STOP_GRACE",
    "ClusterError",
    "ClusterStartError",
    "SparkSubmitTimeout",
    "SparkUnavailable",
    "StandaloneCluster",
    "TerminatedBySignal",
    "read_memory_mb",
    "spark_env",
    "spark_home",
    "spark_submit",
]

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
#: how many times a daemon is started on fresh ports after losing a port race
PORT_ATTEMPTS = 5
#: settings of the master and the workers (``--properties-file``)
DAEMON_CONF: dict[str, str] = {"spark.port.maxRetries": "0", "spark.master.rest.enabled": "false"}
#: settings of every :func:`spark_submit` unless the caller's ``conf`` says otherwise
SUBMIT_CONF: dict[str, str] = {"spark.ui.enabled": "false"}
#: inherited variables that could point Spark at another configuration or cluster
_DROPPED_PREFIXES = ("SPARK_", "PYSPARK_", "_SPARK_")
_DROPPED = frozenset({"HADOOP_CONF_DIR", "YARN_CONF_DIR", "HIVE_CONF_DIR", "MASTER"})
_BIND_FAILURE = re.compile(r"BindException|Address already in use|Failed to bind")


class SparkUnavailable(RuntimeError):
    """pyspark (with its jars and scripts) or Java is not installed."""


class ClusterError(RuntimeError):
    """A daemon of the cluster exited; the message holds the tail of every daemon's log."""


class ClusterStartError(ClusterError):
    """The cluster did not come up (same message)."""


class SparkSubmitTimeout(TimeoutError):
    """``spark-submit`` ran longer than its timeout and was killed (its whole session)."""

    def __init__(self, cmd: Sequence[str], timeout: float, stdout: str, stderr: str) -> None:
        self.cmd, self.timeout, self.stdout, self.stderr = list(cmd), timeout, stdout, stderr
        super().__init__(
            f"spark-submit did not finish within {timeout:g} s and was killed: "
            f"{' '.join(self.cmd)}\n--- stderr (tail) ---\n{last_lines(stderr, 40)}"
        )


# --------------------------------------------------------------------------------------------
# where Spark is, and its environment


def _is_spark_home(path: Path) -> bool:
    scripts = [path / "bin" / name for name in ("spark-class", "spark-submit")]
    return (path / "jars").is_dir() and all(s.is_file() and os.access(s, os.X_OK) for s in scripts)


def spark_home() -> Path:
    """The Spark distribution to run: ``$SPARK_HOME`` if it is one (``bin/spark-class``,
    ``bin/spark-submit``, ``jars/``), else the pyspark package directory (the pip wheel is a
    complete distribution). Raises :class:`SparkUnavailable` without pyspark or Java."""
    try:
        java_executable()
    except JvmToolMissing as exc:
        raise SparkUnavailable(f"Spark needs Java 17+: {exc}") from exc
    env_home = os.environ.get("SPARK_HOME")
    if env_home and _is_spark_home(Path(env_home)):
        return Path(env_home).resolve()
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SparkUnavailable("pyspark is not installed (pip install 'kafka-conformance[replay]')")
    home = Path(next(iter(spec.submodule_search_locations))).resolve()
    if not _is_spark_home(home):
        raise SparkUnavailable(
            f"{home} is not a Spark distribution (no jars/ or executable bin/spark-class, "
            "bin/spark-submit): install the pyspark wheel from PyPI, or set $SPARK_HOME"
        )
    return home


def spark_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every Spark process started here: the caller's, minus anything that
    would redirect Spark (``SPARK_*``, ``PYSPARK_*``, ``HADOOP_CONF_DIR``, ``YARN_CONF_DIR``,
    ``HIVE_CONF_DIR``, ``MASTER``), plus ``SPARK_HOME``, this interpreter as the Python of the
    driver and the workers, and 127.0.0.1 as the only address; ``extra`` wins over all."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_DROPPED_PREFIXES) and k not in _DROPPED
    }
    java_home = env.get("JAVA_HOME")
    if java_home and not os.access(Path(java_home) / "bin" / "java", os.X_OK):
        del env["JAVA_HOME"]  # spark-class would fail on it; ``java`` on PATH instead
    env.update(
        {
            "SPARK_HOME": str(spark_home()),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOCAL_HOSTNAME": HOST,
        }
    )
    env.update(extra or {})
    return env


# --------------------------------------------------------------------------------------------
# scratch space, memory sizes


def _scratch_env(scratch: Path, given: Mapping[str, str], opts_var: str) -> dict[str, str]:
    """``SPARK_LOCAL_DIRS`` and ``java.io.tmpdir`` (through ``opts_var``) in ``scratch``, and
    the daemon's JIT (the client compiler only: a master and a worker schedule, they compute
    nothing); the caller's ``given`` variables win (their options come last)."""
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    ours = [f"-Djava.io.tmpdir={scratch / 'tmp'}", *CLIENT_COMPILER_ONLY]
    opts = " ".join([*ours, given.get(opts_var, "")]).strip()
    return {"SPARK_LOCAL_DIRS": str(scratch), **given, opts_var: opts}


def read_memory_mb(memory: str) -> int:
    """A worker's ``--memory`` (``512m``, ``1g``, ``1536M``, ``2gb``) in MiB."""
    m = re.fullmatch(r"([0-9]+)([kmgt])b?", memory.strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"bad memory size {memory!r} (examples: 512m, 1g)")
    value, unit = int(m.group(1)), m.group(2).lower()
    return {"k": value // 1024, "m": value, "g": value << 10, "t": value << 20}[unit]


# --------------------------------------------------------------------------------------------
# the cluster

_live_clusters: weakref.WeakSet[StandaloneCluster] = weakref.WeakSet()
_atexit_registered = False


def _stop_live_clusters() -> None:
    for cluster in list(_live_clusters):
        with contextlib.suppress(BaseException):
            cluster.stop()


class StandaloneCluster(Service):
    """A Spark standalone master and ``workers`` workers on 127.0.0.1 (a context manager:
    started on entry, stopped on exit).

    ``with StandaloneCluster(workers=2) as cluster: spark_submit(cluster.master_url, ...)``
    """

    def __init__(
        self,
        workers: int = 2,
        cores_per_worker: int = 1,
        memory_per_worker: str = "1g",
        work_dir: Path | None = None,
        startup_timeout: float = 120.0,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env`` is added to :func:`spark_env` for the master and the workers (e.g.
        ``SPARK_DAEMON_MEMORY``, ``SPARK_WORKER_OPTS``)."""
        if workers < 1 or cores_per_worker < 1:
            raise ValueError("workers and cores_per_worker must be at least 1")
        self.workers = workers
        self.cores_per_worker = cores_per_worker
        self.memory_per_worker = memory_per_worker
        self.memory_mb = read_memory_mb(memory_per_worker)
        self.startup_timeout = startup_timeout
        self._given_dir = Path(work_dir).resolve() if work_dir is not None else None
        self._root: Path | None = None
        self._master: Child | None = None
        self._workers: list[Child | None] = []
        self._children: list[Child] = []
        self._rpc_port = 0
        self._ui_port = 0
        self._env = dict(env or {})
        self._state = "new"  # new -> starting -> running -> stopped
        self._guarded = False
        self._keep_dir = False  # after a ClusterError: its logs stay for inspection

    # ---------------------------------------------------------------- what callers read
    @property
    def master_url(self) -> str:
        self._need_ports()
        return f"spark://{HOST}:{self._rpc_port}"

    @property
    def ui_url(self) -> str:
        self._need_ports()
        return f"http://{HOST}:{self._ui_port}"

    @property
    def work_dir(self) -> Path:
        """The cluster's directory (logs, workers' work and scratch directories)."""
        if self._root is None:
            raise RuntimeError("the cluster has not been started")
        return self._root

    @property
    def log_dir(self) -> Path:
        return self.work_dir / "logs"

    @property
    def pids(self) -> list[int]:
        """Pids of the master and the workers (the current ones; still listed after stop)."""
        return list(self.processes.values())

    @property
    def processes(self) -> dict[str, int]:
        """``{"master": pid, "worker-0": pid, ...}``."""
        procs = [self._master, *self._workers]
        return {c.name: c.pid for c in procs if c is not None}

    def status(self) -> dict[str, Any]:
        """The master's JSON status (``/json/``): workers, apps, cores."""
        state = self._master_status(timeout=10.0)
        if state is None:
            raise RuntimeError(f"the master at {self.ui_url} does not answer")
        return state

    def submit_conf(self) -> dict[str, str]:
        """Settings that fit an application to this cluster: one executor per worker with all
        of its cores and half of its memory (at least 512 MiB, at most all of it), and the
        scheduler waiting (up to 120 s) for every executor before the first task."""
        executor_mb = min(self.memory_mb, max(512, self.memory_mb // 2))
        return {
            "spark.executor.memory": f"{executor_mb}m",
            "spark.executor.cores": str(self.cores_per_worker),
            "spark.cores.max": str(self.workers * self.cores_per_worker),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        }

    def submit(
        self,
        script: str | Path,
        args: Sequence[str] = (),
        *,
        conf: Mapping[str, str] | None = None,
        py_files: Sequence[str] = (),
        timeout: float = 600,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """:func:`spark_submit` to this cluster with :meth:`submit_conf` (``conf`` wins)."""
        return spark_submit(
            self.master_url,
            script,
            args,
            conf={**self.submit_conf(), **(conf or {})},
            py_files=py_files,
            timeout=timeout,
            env=env,
        )

    def check(self) -> None:
        """Raise :class:`ClusterError` if a daemon has exited (its logs are then kept)."""
        for child in self._children:
            if child.exited():
                self._keep_dir = True
                raise ClusterError(
                    f"{child.name} (pid {child.pid}) exited with status {child.exit_code()}"
                    + self._log_tails()
                )

    # ---------------------------------------------------------------- start
    def start(self) -> Self:
        """Start the master and the workers and wait until every worker is ALIVE."""
        global _atexit_registered
        if self._state != "new":
            raise RuntimeError(f"a cluster is started once (this one is {self._state})")
        self._state = "starting"
        self._guarded = guard_sigterm()
        _live_clusters.add(self)
        if not _atexit_registered:
            atexit.register(_stop_live_clusters)
            _atexit_registered = True
        try:
            home = spark_home()
            self._make_dirs()
            deadline = time.monotonic() + self.startup_timeout
            self._start_master(home, deadline)
            self._start_workers(home, deadline)
        except BaseException as exc:
            self._keep_dir = isinstance(exc, ClusterError)
            self.stop()
            raise
        self._state = "running"
        return self

    def _make_dirs(self) -> None:
        if self._given_dir is not None:
            self._given_dir.mkdir(parents=True, exist_ok=True)
            self._root = self._given_dir
        else:
            self._root = Path(tempfile.mkdtemp(prefix="spark-standalone-")).resolve()
        self.log_dir.mkdir(exist_ok=True)
        props = "".join(f"{k}={v}\n" for k, v in DAEMON_CONF.items())
        (self._root / "spark-daemons.conf").write_text(props, encoding="utf-8")

    def _class_cmd(self, home: Path, main_class: str, args: list[str]) -> list[str]:
        return [
            str(home / "bin" / "spark-class"),
            main_class,
            *args,
            "--properties-file",
            str(self.work_dir / "spark-daemons.conf"),
        ]

    def _start_master(self, home: Path, deadline: float) -> None:
        env = spark_env(
            _scratch_env(self.work_dir / "master-local", self._env, "SPARK_DAEMON_JAVA_OPTS")
        )
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self._rpc_port, self._ui_port = free_port(), free_port()
            args = [
                "--host",
                HOST,
                "--port",
                str(self._rpc_port),
                "--webui-port",
                str(self._ui_port),
            ]
            master = Child(
                "master",
                self._class_cmd(home, MASTER_CLASS, args),
                env,
                self.log_dir / "master.log",
                cwd=self.work_dir,
            )
            self._master = master
            self._children.append(master)
            while True:
                state = self._master_status()
                if (
                    state is not None
                    and state.get("url") == self.master_url
                    and state.get("status") == "ALIVE"
                ):
                    return
                if master.exited():
                    break
                self._before(deadline, "the master did not answer on its web UI")
                time.sleep(0.2)
            if not self._retry_port_race(master, attempt):
                raise ClusterStartError(
                    f"the master exited with status {master.exit_code()} during start-up"
                    + self._log_tails()
                )

    def _start_workers(self, home: Path, deadline: float) -> None:
        attempts = [1] * self.workers
        self._workers = [None] * self.workers
        for i in range(self.workers):
            self._spawn_worker(home, i)
        while True:
            for i, worker in enumerate(self._workers):
                assert worker is not None
                if worker.exited():
                    if not self._retry_port_race(worker, attempts[i]):
                        raise ClusterStartError(
                            f"{worker.name} exited with status {worker.exit_code()} during "
                            "start-up" + self._log_tails()
                        )
                    attempts[i] += 1
                    self._spawn_worker(home, i)
            if self._master is None or self._master.exited():
                raise ClusterStartError(
                    "the master exited while the workers started" + self._log_tails()
                )
            state = self._master_status()
            if state is not None:
                alive = sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")
                if max(alive, int(state.get("aliveworkers", 0))) >= self.workers:
                    return
            self._before(deadline, f"not all {self.workers} workers became ALIVE")
            time.sleep(0.2)

    def _spawn_worker(self, home: Path, i: int) -> None:
        name = f"worker-{i}"
        work = self.work_dir / name
        work.mkdir(exist_ok=True)
        args = [
            "--host",
            HOST,
            "--cores",
            str(self.cores_per_worker),
            "--memory",
            self.memory_per_worker,
            "--work-dir",
            str(work),
            "--webui-port",
            str(free_port()),
            self.master_url,
        ]
        env = spark_env(
            _scratch_env(self.work_dir / f"{name}-local", self._env, "SPARK_DAEMON_JAVA_OPTS")
        )
        worker = Child(
            name,
            self._class_cmd(home, WORKER_CLASS, args),
            env,
            self.log_dir / f"{name}.log",
            cwd=work,
        )
        self._workers[i] = worker
        self._children.append(worker)

    def _retry_port_race(self, child: Child, attempt: int) -> bool:
        """Reap ``child`` (exited during start-up); True if it lost a port race and may be
        started again."""
        lost_race = bool(_BIND_FAILURE.search(child.new_output()))
        if lost_race and attempt < PORT_ATTEMPTS:
            terminate([child], grace=0.0)
            self._children.remove(child)
            return True
        return False

    def _before(self, deadline: float, what: str) -> None:
        if time.monotonic() > deadline:
            raise ClusterStartError(f"{what} within {self.startup_timeout:g} s" + self._log_tails())

    def _master_status(self, timeout: float = 2.0) -> dict[str, Any] | None:
        if not self._ui_port:
            return None
        # no proxy: $http_proxy must not see a request for 127.0.0.1
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(f"{self.ui_url}/json/", timeout=timeout) as resp:
                data = json.loads(resp.read().decode("utf-8"))
        except (OSError, ValueError):  # URLError is an OSError
            return None
        return data if isinstance(data, dict) else None

    def _log_tails(self, lines: int = 30) -> str:
        parts = [f"\n(logs kept in {self.log_dir})"] if self._root is not None else []
        for child in self._children:
            text = last_lines(child.new_output(), lines)
            parts.append(f"--- {child.name} (pid {child.pid}), {child.log.name} ---\n{text}")
        return "\n".join(parts)

    def _need_ports(self) -> None:
        if not self._rpc_port:
            raise RuntimeError("the cluster has not been started")

    # ---------------------------------------------------------------- stop
    def stop(self) -> None:
        """Stop every process started (workers, then the master, then stragglers) and remove
        the cluster's directory unless the caller gave it. Idempotent; a KeyboardInterrupt or
        SIGTERM arriving meanwhile is raised again once everything is stopped."""
        if self._state in ("new", "stopped"):
            return
        try:
            uninterrupted(self._stop_once)
        finally:
            self._state = "stopped"
            _live_clusters.discard(self)
            if self._guarded:
                self._guarded = False
                unguard_sigterm()

    def _stop_once(self) -> None:
        terminate([w for w in self._workers if w is not None])
        if self._master is not None:
            terminate([self._master])
        if self._root is not None:  # java naming the cluster (even if its root is shared)
            escaped = Escaped(
                "java",
                names=[str(self._root / "spark-daemons.conf")],
                dirs=[str(self._root / f"worker-{i}") for i in range(self.workers)],
            )
            terminate(self._children, grace=0.0, escaped=escaped)
        if self._root is not None and self._given_dir is None and not self._keep_dir:
            shutil.rmtree(self._root, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# spark-submit


def spark_submit(
    master: str,
    script: str | Path,
    args: Sequence[str] = (),
    *,
    conf: Mapping[str, str] | None = None,
    py_files: Sequence[str] = (),
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``spark-submit --master master [--conf k=v ...] [--py-files ...] script args...``
    with :func:`spark_env` (``env`` added) and :data:`SUBMIT_CONF` (``conf`` wins) in a session
    of its own; return its exit status and the last :data:`OUTPUT_LIMIT` bytes of stdout and
    stderr. After ``timeout`` s the whole session is killed and :class:`SparkSubmitTimeout`
    raised; on any exit (Ctrl-C, SIGTERM) nothing it started is left running. The driver's
    scratch space (``SPARK_LOCAL_DIRS``, ``java.io.tmpdir``) is a temporary directory removed
    afterwards."""
    home = spark_home()
    cmd = [str(home / "bin" / "spark-submit"), "--master", master]
    for key, value in {**SUBMIT_CONF, **(conf or {})}.items():
        cmd += ["--conf", f"{key}={value}"]
    if py_files:
        cmd += ["--py-files", ",".join(str(p) for p in py_files)]
    cmd += [str(script), *(str(a) for a in args)]
    with sigterm_guarded(), tempfile.TemporaryDirectory(prefix="spark-submit-") as tmp_name:
        tmp = Path(tmp_name)
        environment = spark_env(_scratch_env(tmp / "local", env or {}, "SPARK_SUBMIT_OPTS"))
        out, err = tmp / "stdout", tmp / "stderr"
        child = Child("spark-submit", cmd, environment, err, stdout=out)
        try:
            deadline = time.monotonic() + timeout
            while not child.exited() and time.monotonic() < deadline:
                time.sleep(0.05)
            timed_out = not child.exited()
        finally:  # at once if it finished; else SIGTERM, grace, SIGKILL
            uninterrupted(lambda: terminate([child]))
        stdout, stderr = read_tail(out, OUTPUT_LIMIT), read_tail(err, OUTPUT_LIMIT)
        if timed_out:
            raise SparkSubmitTimeout(cmd, timeout, stdout, stderr)
        return subprocess.CompletedProcess(cmd, child.popen.returncode, stdout, stderr)
