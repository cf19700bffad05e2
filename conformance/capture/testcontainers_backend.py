"""Backend ``testcontainers``: brokers in containers, started with testcontainers-python.

The engine is whatever Docker-compatible daemon answers, else Podman's socket service started
by ``scripts/container-engine`` (:mod:`conformance.capture.containers.engine`). By default the
broker runs in ``kafka-conformance/kafka:<version>``, built here from this machine's JDK and the
jars the jvm backend resolves (:mod:`conformance.capture.containers.images`), so both backends
run the same broker code with the same configuration (``conformance.capture.jvm``'s
``server_properties``, ``zookeeper_properties``, ``broker_jvm_options``):

1. the container starts (port 9092 published on a random host port) and waits;
2. once the mapped port is known, ``/opt/kafka/run/`` is copied in: ``server.properties``
   advertising ``127.0.0.1:<mapped port>``, logging files, the ZooKeeper / StorageTool /
   broker command lines, and ``ready``; the start script runs them (ZooKeeper in the same
   container for ZooKeeper mode);
3. readiness: the broker answers a metadata request from this host (as for the jvm backend);
4. :meth:`ContainerBroker.stop`: ``docker stop`` (SIGTERM, a clean broker shutdown; SIGKILL
   after 90 s), the log directory copied out of the stopped container (``get_archive``) into
   ``<workdir>/data``, the container removed with its anonymous volumes.

Every container carries the label ``org.kafka-conformance.capture=<pid>-<token>``; ``stop``
removes whatever carries its own value, also a container whose creation was interrupted.
Brokers are stopped at exit and on SIGINT/SIGTERM (:mod:`conformance.capture.lifecycle`).

``image=`` runs another image instead: an ``apache/kafka`` one (KRaft, configured through
``KAFKA_*`` variables) or a ``confluentinc/cp-kafka`` one (ZooKeeper mode, through
testcontainers' ``KafkaContainer``). Those must be pullable; this machine has no registry, so
that path is not exercised by the test suite.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import tempfile
import threading
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.capture import BrokerSpec, lifecycle
from conformance.capture.containers import engine as _engine
from conformance.capture.containers import images as _images
from conformance.capture.jvm import (
    CLUSTER_ID,
    COMMON_CONFIG,
    BrokerStartError,
    broker_jvm_options,
    java_version,
    logging_files,
    manifest_config,
    properties_text,
    server_properties,
    wait_metadata,
    zookeeper_properties,
)
from conformance.host.ports import free_port
from conformance.jvm import kafka_jars

__all__ = ["ContainerBroker", "start_broker"]

RUN_DIR = "/opt/kafka/run"
LOG_DIR = "/var/lib/kafka/data"
APACHE_LOG_DIR = "/tmp/kraft-combined-logs"
CP_LOG_DIR = "/var/lib/kafka/data"
PORT = 9092
CONTROLLER = "127.0.0.1:9093"
INTERNAL = "127.0.0.1:9094"
ZOOKEEPER_PORT = 2181


def _env_name(key: str) -> str:
    return "KAFKA_" + key.upper().replace(".", "_")


def _args_file(cmd: list[str]) -> bytes:
    if any("\n" in a for a in cmd):
        raise ValueError("a command-line argument contains a newline")
    return "".join(a + "\n" for a in cmd).encode()


def _tar(files: dict[str, bytes | None]) -> bytes:
    """A tar of ``files`` (path -> content; ``None``: a directory), in the given order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class ContainerBroker:
    """A broker in a container; same interface as :class:`conformance.capture.jvm.JvmBroker`."""

    backend = "testcontainers"

    def __init__(self, spec: BrokerSpec, workdir: Path, image: str | None = None) -> None:
        self.spec = spec
        self.workdir = workdir
        self.log_dir = workdir / "data"  # filled by stop(): copied from the container
        self.bootstrap = ""
        self.java_version = "unknown"
        self.broker_config: dict[str, str] = {}
        self.image: _images.Image | None = None
        self.exit_code: int | None = None
        self._requested_image = image
        self._token = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._container: Any = None
        self._client: Any = None
        self._remote_log_dir = LOG_DIR
        self._stopped = False
        self._lock = threading.Lock()

    # -- provenance --------------------------------------------------------------------------

    @property
    def provenance(self) -> dict[str, Any]:
        """What the manifest records about the image (tag, id, digest, where it came from)."""
        if self.image is None:
            return {}
        return {
            "image": {
                "tag": self.image.tag,
                "id": self.image.id,
                "digest": self.image.digest,
                "source": "built locally" if self._requested_image is None else "registry",
            }
        }

    # -- start -------------------------------------------------------------------------------

    def start(self, timeout: float = 180.0) -> ContainerBroker:
        lifecycle.register(self)
        try:
            try:
                self._client = _engine.docker_client(_engine.ensure_engine())
            except _engine.EngineUnavailable as exc:
                raise BrokerStartError(f"testcontainers backend unavailable: {exc}") from exc
            if self._requested_image is None:
                self.image = _images.kafka_image(self._client, self.spec.version)
                self._start_local(timeout)
            else:
                self.image = self._pull(self._requested_image)
                if "cp-kafka" in self._requested_image:
                    self._start_confluent(timeout)
                else:
                    self._start_apache(timeout)
            # the local image's JRE is this machine's JDK (its tag says which); asking a
            # container (exec) would leave Podman's exec monitor behind for minutes
            self.java_version = (
                java_version() if self._requested_image is None else self._java_version()
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _pull(self, ref: str) -> _images.Image:
        import docker  # type: ignore[import-not-found]

        try:
            image = self._client.images.get(ref)
        except docker.errors.ImageNotFound:
            try:
                image = self._client.images.pull(ref)
            except docker.errors.APIError as exc:
                raise BrokerStartError(
                    f"image {ref} is not here and cannot be pulled: {exc}"
                ) from exc
        digests = image.attrs.get("RepoDigests") or []
        return _images.Image(
            ref, image.id, digests[0].rsplit("@", 1)[-1] if digests else None, False
        )

    def _labels(self) -> dict[str, str]:
        return {_engine.LABEL: self._token}

    def _start_local(self, timeout: float) -> None:
        from testcontainers.core.container import DockerContainer  # type: ignore

        assert self.image is not None
        c = (
            DockerContainer(self.image.tag)
            .with_exposed_ports(PORT)
            .with_kwargs(labels=self._labels())
        )
        self._container = c
        c.start()
        host = c.get_container_host_ip()
        port = int(c.get_exposed_port(PORT))
        self.bootstrap = f"{host}:{port}"
        spec = self.spec
        zookeeper = None
        files: dict[str, bytes | None] = {"run": None, "run/logs": None}
        for name, text in logging_files(f"{RUN_DIR}/logs/server.log").items():
            files[f"run/{name}"] = text.encode()

        def command(main: str, args: list[str], heap: str) -> bytes:
            return _args_file(
                kafka_jars.command_line(
                    main,
                    args,
                    java="java",
                    classpath=["/opt/kafka/libs/*"],
                    jvm_opts=broker_jvm_options(spec, heap, RUN_DIR),
                )
            )

        if spec.mode == "zookeeper":
            zookeeper = f"127.0.0.1:{ZOOKEEPER_PORT}"
            files["run/zookeeper"] = None
            files["run/zookeeper.cfg"] = properties_text(
                zookeeper_properties(f"{RUN_DIR}/zookeeper", ZOOKEEPER_PORT)
            ).encode()
            files["run/zookeeper.args"] = command(
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                [f"{RUN_DIR}/zookeeper.cfg"],
                "256m",
            )
        props = server_properties(
            spec,
            listener=f"0.0.0.0:{PORT}",
            advertised=self.bootstrap,
            controller=CONTROLLER if spec.mode == "kraft" else None,
            zookeeper=zookeeper,
            log_dir=LOG_DIR,
            internal=INTERNAL,
        )
        self.broker_config = manifest_config(props)
        files["run/server.properties"] = properties_text(props).encode()
        if spec.mode == "kraft":
            files["run/format.args"] = command(
                "kafka.tools.StorageTool",
                ["format", "-t", CLUSTER_ID, "-c", f"{RUN_DIR}/server.properties"],
                "256m",
            )
        files["run/broker.args"] = command("kafka.Kafka", [f"{RUN_DIR}/server.properties"], "768m")
        files["run/ready"] = b""  # last: the start script waits for it
        wrapped = c.get_wrapped_container()
        if not wrapped.put_archive(str(PurePosixPath(RUN_DIR).parent), _tar(files)):
            raise BrokerStartError(f"{spec.broker_id}: could not copy {RUN_DIR} into the container")
        wait_metadata(
            self.bootstrap,
            self._running,
            timeout,
            f"{spec.broker_id}: broker in container {wrapped.short_id}",
            self.log_tail,
        )

    def _start_apache(self, timeout: float) -> None:
        from testcontainers.core.container import DockerContainer  # type: ignore

        assert self.image is not None
        port = free_port()
        self.bootstrap = f"127.0.0.1:{port}"
        props = server_properties(
            self.spec,
            listener=f"0.0.0.0:{PORT}",
            advertised=self.bootstrap,
            controller="localhost:9093",
            zookeeper=None,
            log_dir=APACHE_LOG_DIR,
        )
        self.broker_config = manifest_config(props)
        c = (
            DockerContainer(self.image.tag)
            .with_bind_ports(PORT, port)
            .with_kwargs(labels=self._labels())
        )
        for k, v in props.items():
            c.with_env(_env_name(k), v)
        c.with_env("CLUSTER_ID", CLUSTER_ID)
        self._container = c
        c.start()
        self._remote_log_dir = APACHE_LOG_DIR
        wait_metadata(
            self.bootstrap, self._running, timeout, f"{self.spec.broker_id}: broker", self.log_tail
        )

    def _start_confluent(self, timeout: float) -> None:
        try:
            from testcontainers.kafka import KafkaContainer  # type: ignore[import-not-found]
        except ImportError:  # pragma: no cover
            from testcontainers.community.kafka import KafkaContainer  # type: ignore

        assert self.image is not None
        c = KafkaContainer(self.image.tag).with_kwargs(labels=self._labels())
        config = {**COMMON_CONFIG, **self.spec.config}
        self.broker_config = dict(config)
        for k, v in config.items():
            c.with_env(_env_name(k), v)
        c.with_env("KAFKA_LOG_DIRS", CP_LOG_DIR)
        self._container = c
        c.start()
        self.bootstrap = c.get_bootstrap_server()
        self._remote_log_dir = CP_LOG_DIR
        wait_metadata(
            self.bootstrap, self._running, timeout, f"{self.spec.broker_id}: broker", self.log_tail
        )

    # -- looking inside ------------------------------------------------------------------------

    def _running(self) -> bool:
        try:
            wrapped = self._container.get_wrapped_container()
            wrapped.reload()
            return bool(wrapped.status == "running")
        except Exception:
            return False

    def _java_version(self) -> str:
        try:
            _rc, out = self._container.get_wrapped_container().exec_run(
                ["java", "-XshowSettings:properties", "-version"]
            )
            m = re.search(r"java\.version = (\S+)", out.decode(errors="replace"))
            return m.group(1) if m else "unknown"
        except Exception:
            return "unknown"

    def _archive(self, path: str) -> tarfile.TarFile | None:
        try:
            stream, _stat = self._container.get_wrapped_container().get_archive(path)
        except Exception:
            return None
        return tarfile.open(fileobj=io.BytesIO(b"".join(stream)))

    def read_log_file(self, rel: str) -> bytes | None:
        """Contents of ``<log dir>/rel`` inside the container (``None``: no such file)."""
        tar = self._archive(f"{self._remote_log_dir}/{rel}")
        if tar is None:
            return None
        with tar:
            for m in tar.getmembers():
                if m.isfile():
                    f = tar.extractfile(m)
                    return f.read() if f is not None else None
        return None

    def list_log_dir(self, rel: str) -> list[str]:
        """File names in ``<log dir>/rel`` inside the container (empty: no such directory)."""
        tar = self._archive(f"{self._remote_log_dir}/{rel}")
        if tar is None:
            return []
        with tar:
            return sorted(
                PurePosixPath(m.name).name
                for m in tar.getmembers()
                if m.isfile() and m.name.count("/") == 1
            )

    def log_tail(self, lines: int = 40) -> str:
        parts = []
        try:
            out = self._container.get_wrapped_container().logs(tail=lines)
            parts.append(f"--- container output (tail) ---\n{out.decode(errors='replace')}")
        except Exception:
            pass
        for name in ("logs/server.log", "zookeeper.out", "format.out"):
            tar = self._archive(f"{RUN_DIR}/{name}")
            if tar is None:
                continue
            with tar:
                for m in tar.getmembers():
                    f = tar.extractfile(m) if m.isfile() else None
                    if f is not None:
                        text = f.read().decode(errors="replace").splitlines()[-lines:]
                        parts.append(f"--- {RUN_DIR}/{name} (tail) ---\n" + "\n".join(text))
        return "\n".join(parts) or "(no log output)"

    # -- stop ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Clean broker shutdown, log directory copied out, container removed; idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        try:
            if self._container is not None and self._container._container is not None:
                wrapped = self._container.get_wrapped_container()
                try:
                    wrapped.stop(timeout=90)  # SIGTERM -> clean broker shutdown
                    wrapped.reload()
                    self.exit_code = wrapped.attrs.get("State", {}).get("ExitCode")
                    self._harvest()
                finally:
                    try:
                        self._container.stop()  # remove(force=True, v=True)
                    except Exception:
                        pass
        finally:
            self._remove_labelled()
            lifecycle.unregister(self)

    def _harvest(self) -> None:
        tar = self._archive(self._remote_log_dir)
        if tar is None:
            return
        tmp = Path(tempfile.mkdtemp(dir=self.workdir, prefix="harvest-"))
        with tar:
            tar.extractall(tmp, filter="data")
        src = tmp / PurePosixPath(self._remote_log_dir).name
        if self.log_dir.exists():
            shutil.rmtree(self.log_dir)
        shutil.move(str(src), self.log_dir)
        shutil.rmtree(tmp, ignore_errors=True)

    def _remove_labelled(self) -> None:
        if self._client is None:
            return
        try:
            for c in self._client.containers.list(
                all=True, filters={"label": f"{_engine.LABEL}={self._token}"}
            ):
                c.remove(force=True, v=True)
        except Exception:
            pass

    def __enter__(self) -> ContainerBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_broker(
    spec: BrokerSpec, workdir: Path, *, image: str | None = None, timeout: float = 180.0
) -> ContainerBroker:
    """Start ``spec`` in a container (``image``: another image than the locally built one)."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    return ContainerBroker(spec, workdir, image).start(timeout=timeout)
