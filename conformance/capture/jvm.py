"""Backend ``jvm``: real Kafka brokers run from Maven Central jars (``conformance.jvm.kafka_jars``).

* KRaft (3.x, 4.x): ``kafka.tools.StorageTool format`` with a fixed cluster id, then
  ``kafka.Kafka`` as a combined broker+controller with a static voter set.
* ZooKeeper mode: ``org.apache.zookeeper.server.ZooKeeperServerMain`` from the same classpath
  (127.0.0.1, admin server off), then ``kafka.Kafka``.

Every port is a free one on 127.0.0.1. Readiness = the broker accepts TCP and answers a
metadata request (kafka-python). Every process started here is stopped: by
:meth:`JvmBroker.stop` / the context manager, and by :mod:`conformance.capture.lifecycle` at
interpreter exit and on SIGINT/SIGTERM. Stop = SIGTERM, wait, SIGKILL after a
timeout. Broker logs (INFO) go to ``<workdir>/logs/server.log``; stdout/stderr of each JVM to
``<workdir>/<name>.out``.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.capture import BrokerSpec, lifecycle
from conformance.host.broker_socket import WIRE_ERRORS
from conformance.host.kafka_client import KafkaClient
from conformance.host.lifetime import Running
from conformance.host.ports import accepts, free_port
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as _jvm
from conformance.jvm.message_defs import client_protocol

__all__ = [
    "CLUSTER_ID",
    "BrokerStartError",
    "COMMON_CONFIG",
    "JvmBroker",
    "broker_jvm_options",
    "java_version",
    "logging_files",
    "manifest_config",
    "properties_text",
    "server_properties",
    "start_broker",
    "stop_process",
    "wait_metadata",
    "zookeeper_properties",
]

#: Fixed KRaft cluster id (base64url of the 16 bytes b"conformance-kit!").
CLUSTER_ID = "Y29uZm9ybWFuY2Uta2l0IQ"

#: Broker settings shared by every capture broker.
COMMON_CONFIG: dict[str, str] = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "false",
    "log.cleaner.backoff.ms": "100",
    "log.cleaner.dedupe.buffer.size": "2097152",
    "log.cleaner.threads": "1",
    "log.retention.ms": "-1",
    "log.retention.check.interval.ms": "3600000",
    "log.segment.delete.delay.ms": "1000",
    # fixed (old) CreateTime timestamps must be accepted; 4.x defaults after.max to 1 h
    "log.message.timestamp.after.max.ms": "9223372036854775807",
    "log.message.timestamp.before.max.ms": "9223372036854775807",
    "message.max.bytes": "4194304",
    "replica.fetch.max.bytes": "4194304",
    "socket.request.max.bytes": "104857600",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "num.recovery.threads.per.data.dir": "1",
}

_LEGACY_JVM_OPTS = (
    # AbstractIndex.forceUnmap / MappedByteBuffers on old brokers
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
)

_LOG4J = """\
# written by conformance.capture.jvm
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={path}
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
"""

_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.zk.name = org.apache.zookeeper
logger.zk.level = WARN
"""


class BrokerStartError(RuntimeError):
    """A broker (or its ZooKeeper) did not come up; the message carries the log tail."""


# --------------------------------------------------------------------------------------------
# processes


def stop_process(proc: subprocess.Popen[Any] | None, timeout: float = 60.0) -> int | None:
    """SIGTERM ``proc``, wait up to ``timeout`` s, then SIGKILL; returns its exit status."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)
    return proc.returncode


_java_version_cache: str | None = None


def java_version() -> str:
    """``java.version`` of the JVM that runs the brokers, e.g. ``17.0.15``."""
    global _java_version_cache
    if _java_version_cache is None:
        proc = subprocess.run(
            [_jvm.java_executable(), "-XshowSettings:properties", "-version"],
            capture_output=True,
            text=True,
            check=False,
        )
        m = re.search(r"^\s*java\.version = (\S+)", proc.stderr, re.M)
        _java_version_cache = m.group(1) if m else "unknown"
    return _java_version_cache


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", version)[:3])


def properties_text(props: dict[str, str]) -> str:
    """A ``.properties`` file: one ``key=value`` per line, in ``props``' order."""
    return "".join(f"{k}={v}\n" for k, v in props.items())


# --------------------------------------------------------------------------------------------
# configuration (shared with the testcontainers backend: one writer for both)


def server_properties(
    spec: BrokerSpec,
    *,
    listener: str,
    advertised: str,
    controller: str | None,
    zookeeper: str | None,
    log_dir: str,
    internal: str | None = None,
    node_id: int = 1,
    voters: str | None = None,
) -> dict[str, str]:
    """``server.properties`` of a capture broker: PLAINTEXT on ``listener`` (host:port),
    advertised as ``advertised``; KRaft (combined broker + controller ``node_id``, voters
    ``voters``, by default itself alone: ``1@controller``) or ZooKeeper mode (``zookeeper`` =
    host:port); then ``log.dirs``, :data:`COMMON_CONFIG` and the spec's own settings.

    ``internal`` (host:port) adds a listener ``INTERNAL`` for the broker's own connections
    (inter-broker traffic, the ZooKeeper-mode controller talking to its broker): in a
    container the advertised address is the host's published port, which does not exist
    inside the container."""
    props: dict[str, str] = {}
    if spec.mode == "kraft":
        if controller is None:
            raise ValueError(f"{spec.broker_id}: KRaft mode needs a controller address")
        props.update(
            {
                "process.roles": "broker,controller",
                "node.id": str(node_id),
                "controller.quorum.voters": voters or f"{node_id}@{controller}",
                "listeners": f"PLAINTEXT://{listener},CONTROLLER://{controller}",
                "advertised.listeners": f"PLAINTEXT://{advertised}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            }
        )
    else:
        if zookeeper is None:
            raise ValueError(f"{spec.broker_id}: ZooKeeper mode needs a ZooKeeper address")
        props.update(
            {
                "broker.id": "0",
                "zookeeper.connect": zookeeper,
                "zookeeper.connection.timeout.ms": "30000",
                "listeners": f"PLAINTEXT://{listener}",
                "advertised.listeners": f"PLAINTEXT://{advertised}",
            }
        )
    if internal is not None:
        props["listeners"] += f",INTERNAL://{internal}"
        props["advertised.listeners"] += f",INTERNAL://{internal}"
        props["inter.broker.listener.name"] = "INTERNAL"
        props["listener.security.protocol.map"] = (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"
        )
    props["log.dirs"] = log_dir
    props.update(COMMON_CONFIG)
    props.update(spec.config)
    return props


def zookeeper_properties(data_dir: str, port: int, address: str = "127.0.0.1") -> dict[str, str]:
    """``zookeeper.cfg`` of the ZooKeeper beside a ZooKeeper-mode broker (admin server off)."""
    return {
        "tickTime": "2000",
        "dataDir": data_dir,
        "clientPort": str(port),
        "clientPortAddress": address,
        "maxClientCnxns": "0",
        "admin.enableServer": "false",
        "4lw.commands.whitelist": "*",
    }


def manifest_config(props: dict[str, str]) -> dict[str, str]:
    """The broker settings a manifest records: random ports written ``<port>``, no log.dirs."""
    return {
        k: re.sub(r"(127\.0\.0\.1|0\.0\.0\.0):[0-9]+", r"\1:<port>", v)
        for k, v in props.items()
        if k != "log.dirs"
    }


def logging_files(server_log: str) -> dict[str, str]:
    """``log4j.properties`` (log4j 1 / reload4j brokers) and ``log4j2.properties`` (4.x)
    sending the broker's INFO log to ``server_log``; written beside the broker's config."""
    return {
        "log4j.properties": _LOG4J.format(path=server_log),
        "log4j2.properties": _LOG4J2.format(path=server_log),
    }


def broker_jvm_options(spec: BrokerSpec, heap: str, config_dir: str) -> list[str]:
    """JVM options of a broker, ZooKeeper or StorageTool whose :func:`logging_files` are in
    ``config_dir`` and whose logs directory is ``config_dir/logs`` (POSIX paths: also used
    for the paths inside a container)."""
    opts = [
        f"-Xmx{heap}",
        f"-Xms{heap}" if heap != "256m" else "-Xms64m",
        f"-Dlog4j.configuration={PurePosixPath(config_dir, 'log4j.properties').as_uri()}",
        f"-Dlog4j2.configurationFile={PurePosixPath(config_dir, 'log4j2.properties')}",
        f"-Dkafka.logs.dir={PurePosixPath(config_dir, 'logs')}",
        "-Dzookeeper.admin.enableServer=false",
        "-Dzookeeper.jmx.log4j.disable=true",
        # the kit's brokers live for a capture or a check and carry little traffic
        *_jvm.CLIENT_COMPILER_ONLY,
    ]
    if _version_tuple(spec.version) < (2, 0):
        opts += list(_LEGACY_JVM_OPTS)
    return opts


def wait_metadata(
    bootstrap: str,
    alive: Callable[[], bool],
    timeout: float,
    what: str,
    log_tail: Callable[[], str],
) -> None:
    """Wait until the broker at ``bootstrap`` answers a metadata request and lists a broker;
    :class:`BrokerStartError` (with ``log_tail()``) when ``alive()`` turns false or after
    ``timeout`` s. Readiness is the same for every backend."""
    protocol = client_protocol()
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline and alive():
        try:
            with KafkaClient(
                bootstrap, protocol, client_id="conformance-capture-ready", timeout=10.0
            ) as client:
                if client.metadata([]).brokers:
                    return
        except WIRE_ERRORS as exc:  # refused, closed, not ready yet
            last = exc
        time.sleep(0.5)
    state = (
        "exited"
        if not alive()
        else f"did not answer a metadata request within {timeout:.0f} s ({last!r})"
    )
    raise BrokerStartError(f"{what} {state}\n{log_tail()}")


# --------------------------------------------------------------------------------------------
# the broker


class JvmBroker(Running):
    """A running broker (and its ZooKeeper) started by :func:`start_broker`.

    One KRaft node of a cluster (``capture.cluster``) is given its ``node_id``, its ports
    (``port``, ``controller`` = host:port) and the quorum's ``voters``; it is only
    :meth:`launch`-ed (:meth:`start` = :meth:`launch` + :meth:`wait_ready`), so that every voter
    runs before any is waited for, and with ``register=False`` it is not registered with
    :mod:`lifecycle` (the cluster is, and stops its nodes together)."""

    backend = "jvm"

    def __init__(
        self,
        spec: BrokerSpec,
        workdir: Path,
        *,
        node_id: int = 1,
        port: int = 0,
        controller: str | None = None,
        voters: str | None = None,
        heap: str = "768m",
        register: bool = True,
    ) -> None:
        self.spec = spec
        self.workdir = workdir
        self.log_dir = workdir / "data"
        self.node_id = node_id
        self.port = port
        self.bootstrap = f"127.0.0.1:{port}" if port else ""
        self.controller = controller
        self.voters = voters
        self.heap = heap
        self._register = register
        self.java_version = java_version()
        self.broker_config: dict[str, str] = {}
        self.processes: list[tuple[str, subprocess.Popen[Any]]] = []
        self._stopped = False
        self._lock = threading.Lock()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def server_log(self) -> Path:
        return self.workdir / "logs" / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        parts = []
        for path in (self.server_log, *sorted(self.workdir.glob("*.out"))):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if text.strip():
                parts.append(f"--- {path} (tail) ---\n{_jvm.tail(text, lines)}")
        return "\n".join(parts) or "(no log output)"

    def _jvm_opts(self, heap: str) -> list[str]:
        self.workdir.joinpath("logs").mkdir(parents=True, exist_ok=True)
        for name, text in logging_files(str(self.server_log)).items():
            (self.workdir / name).write_text(text, encoding="utf-8")
        return broker_jvm_options(self.spec, heap, str(self.workdir))

    def _spawn(
        self, name: str, main_class: str, args: list[str], heap: str
    ) -> subprocess.Popen[Any]:
        self._check_not_stopped(name)
        cmd = kafka_jars.java_command(
            self.spec.version, main_class, args, jvm_opts=self._jvm_opts(heap)
        )
        out = open(self.workdir / f"{name}.out", "ab")
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a terminal ^C reaches us, not the JVM: we stop it cleanly
            )
        finally:
            out.close()
        self.processes.append((name, proc))
        if self._stopped:  # stop() ran (a signal, another thread) while it was being spawned
            stop_process(proc, 30.0)
            self._check_not_stopped(name)
        return proc

    def _check_not_stopped(self, name: str) -> None:
        if self._stopped:
            raise BrokerStartError(f"{self.spec.broker_id}: stopped before its {name} started")

    def _wait_port(self, name: str, proc: subprocess.Popen[Any], port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise BrokerStartError(
                    f"{self.spec.broker_id}: {name} exited with status {proc.returncode} "
                    f"before listening on 127.0.0.1:{port}\n{self.log_tail()}"
                )
            if accepts("127.0.0.1", port):
                return
            time.sleep(0.2)
        raise BrokerStartError(
            f"{self.spec.broker_id}: {name} not listening on 127.0.0.1:{port} after {timeout:.0f} s"
            f"\n{self.log_tail()}"
        )

    def _wait_metadata(self, proc: subprocess.Popen[Any], timeout: float) -> None:
        wait_metadata(
            self.bootstrap,
            lambda: proc.poll() is None,
            timeout,
            f"{self.spec.broker_id}: broker",
            self.log_tail,
        )

    # -- start / stop ------------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> JvmBroker:
        self.launch()
        self.wait_ready(timeout)
        return self

    def launch(self) -> subprocess.Popen[Any]:
        """Write the configuration, format the storage (KRaft), start ZooKeeper (ZooKeeper
        mode) and the broker; returns the broker's process without waiting for it."""
        if self._register:
            lifecycle.register(self)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        controller = zookeeper = None
        if self.spec.mode == "kraft":
            controller = self.controller or f"127.0.0.1:{free_port()}"
        else:
            zport = free_port()
            zdata = self.workdir / "zookeeper"
            zdata.mkdir(exist_ok=True)
            zcfg = self.workdir / "zookeeper.cfg"
            zcfg.write_text(
                properties_text(zookeeper_properties(str(zdata), zport)), encoding="utf-8"
            )
            zk = self._spawn(
                "zookeeper", "org.apache.zookeeper.server.ZooKeeperServerMain", [str(zcfg)], "256m"
            )
            self._wait_port("zookeeper", zk, zport, 60)
            zookeeper = f"127.0.0.1:{zport}"
        props = server_properties(
            self.spec,
            listener=self.bootstrap,
            advertised=self.bootstrap,
            controller=controller,
            zookeeper=zookeeper,
            log_dir=str(self.log_dir),
            node_id=self.node_id,
            voters=self.voters,
        )
        self.broker_config = manifest_config(props)
        server_props = self.workdir / "server.properties"
        server_props.write_text(properties_text(props), encoding="utf-8")
        if self.spec.mode == "kraft":
            fmt = kafka_jars.run_class(
                self.spec.version,
                "kafka.tools.StorageTool",
                ["format", "-t", CLUSTER_ID, "-c", str(server_props)],
                cwd=self.workdir,
                timeout=120,
            )
            if fmt.returncode != 0:
                raise BrokerStartError(
                    f"{self.spec.broker_id}: StorageTool format failed ({fmt.returncode})\n"
                    f"{_jvm.tail(fmt.stdout + fmt.stderr)}"
                )
        return self._spawn("broker", "kafka.Kafka", [str(server_props)], self.heap)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait until the launched broker listens and answers metadata; stopped (and
        :class:`BrokerStartError`) when it does not within ``timeout`` s."""
        broker = next(p for n, p in self.processes if n == "broker")
        try:
            self._wait_port("broker", broker, self.port, timeout)
            self._wait_metadata(broker, timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 90.0) -> None:
        """Clean shutdown: broker first (SIGTERM, wait, SIGKILL after ``timeout``), then ZK."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        for name, proc in sorted(self.processes, key=lambda np: np[0] != "broker"):
            stop_process(proc, timeout if name == "broker" else 30.0)
        lifecycle.unregister(self)

    def read_log_file(self, rel: str) -> bytes | None:
        try:
            return (self.log_dir / rel).read_bytes()
        except OSError:
            return None

    def list_log_dir(self, rel: str) -> list[str]:
        try:
            return sorted(p.name for p in (self.log_dir / rel).iterdir() if p.is_file())
        except OSError:
            return []


def start_broker(spec: BrokerSpec, workdir: Path, *, timeout: float = 120.0) -> JvmBroker:
    """Start ``spec`` under ``workdir`` (created) and return it once it answers metadata."""
    return JvmBroker(spec, Path(workdir).resolve()).start(timeout=timeout)
