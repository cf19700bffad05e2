"""Backend ``testcontainers``: brokers in Docker containers (testcontainers-python).

Requires ``testcontainers>=4.8`` (not a dependency of the package) and a Docker daemon.
Images: ``apache/kafka:<v>`` (KRaft, 3.7+) and ``confluentinc/cp-kafka:<cp version>``
(ZooKeeper mode, ZooKeeper inside the same container, via testcontainers' KafkaContainer).
Partition directories are copied out of the container with ``get_archive`` after a clean stop
of the broker process (``docker stop`` sends SIGTERM; the container is kept until the copy).
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from conformance.capture import BrokerSpec
from conformance.capture.jvm import BROKERS as _JVM_BROKERS
from conformance.capture.jvm import COMMON_CONFIG

__all__ = ["BROKERS", "ContainerBroker", "docker_available", "start_broker"]

#: Same broker ids as the jvm backend, where an image exists.
BROKERS: dict[str, BrokerSpec] = {k: v for k, v in _JVM_BROKERS.items() if v.image}

APACHE_LOG_DIR = "/tmp/kraft-combined-logs"
CP_LOG_DIR = "/var/lib/kafka/data"


def docker_available() -> tuple[bool, str]:
    """Whether testcontainers is installed and a Docker daemon answers (and why not)."""
    try:
        import docker  # type: ignore[import-not-found]
    except ImportError:
        return False, "the docker / testcontainers Python packages are not installed"
    try:
        import testcontainers  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False, "testcontainers is not installed (pip install 'testcontainers>=4.8')"
    try:
        client = docker.from_env(timeout=5)
        client.ping()
    except Exception as exc:  # DockerException, connection refused, missing socket ...
        return False, f"no Docker daemon answers: {exc}"
    return True, "docker daemon answered"


def _env_name(key: str) -> str:
    return "KAFKA_" + key.upper().replace(".", "_")


class ContainerBroker:
    backend = "testcontainers"

    def __init__(self, spec: BrokerSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.log_dir = workdir / "data"  # filled by stop(): copied from the container
        self.bootstrap = ""
        self.java_version = "unknown"
        self.broker_config: dict[str, str] = {}
        self._container: Any = None
        self._stopped = False

    def start(self) -> ContainerBroker:
        ok, why = docker_available()
        if not ok:
            raise RuntimeError(f"testcontainers backend unavailable: {why}")
        config = {**COMMON_CONFIG, **self.spec.config}
        self.broker_config = dict(config)
        image = self.spec.image or f"apache/kafka:{self.spec.version}"
        if image.startswith("confluentinc/cp-kafka"):
            try:
                from testcontainers.kafka import KafkaContainer  # type: ignore[import-not-found]
            except ImportError:  # 4.15+
                from testcontainers.community.kafka import KafkaContainer  # type: ignore
            c = KafkaContainer(image)
            for k, v in config.items():
                c.with_env(_env_name(k), v)
            c.with_env("KAFKA_LOG_DIRS", CP_LOG_DIR)
            c.start()
            self.bootstrap = c.get_bootstrap_server()
            self._remote_log_dir = CP_LOG_DIR
        else:
            from testcontainers.core.container import DockerContainer  # type: ignore
            from testcontainers.core.waiting_utils import wait_for_logs  # type: ignore

            from conformance.capture.jvm import CLUSTER_ID, free_port

            host_port = free_port()
            c = DockerContainer(image).with_bind_ports(9092, host_port)
            kraft = {
                "node.id": "1",
                "process.roles": "broker,controller",
                "controller.quorum.voters": "1@localhost:9093",
                "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{host_port}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "log.dirs": APACHE_LOG_DIR,
            }
            for k, v in {**kraft, **config}.items():
                c.with_env(_env_name(k), v)
            c.with_env("CLUSTER_ID", CLUSTER_ID)
            c.start()
            wait_for_logs(c, "Kafka Server started", timeout=120)
            self.bootstrap = f"127.0.0.1:{host_port}"
            self._remote_log_dir = APACHE_LOG_DIR
        self._container = c
        try:
            rc, out = c.get_wrapped_container().exec_run(["java", "-version"])
            text = out.decode(errors="replace")
            import re

            m = re.search(r'version "([^"]+)"', text)
            self.java_version = m.group(1) if m else "unknown"
        except Exception:
            pass
        return self

    def stop(self) -> None:
        if self._stopped or self._container is None:
            return
        self._stopped = True
        wrapped = self._container.get_wrapped_container()
        try:
            wrapped.stop(timeout=60)  # SIGTERM -> clean broker shutdown
            stream, _stat = wrapped.get_archive(self._remote_log_dir)
            data = io.BytesIO(b"".join(stream))
            tmp = Path(tempfile.mkdtemp(dir=self.workdir))
            with tarfile.open(fileobj=data) as tar:
                tar.extractall(tmp, filter="data")
            src = tmp / os.path.basename(self._remote_log_dir)
            if self.log_dir.exists():
                shutil.rmtree(self.log_dir)
            shutil.move(str(src), self.log_dir)
        finally:
            try:
                self._container.stop()
            except Exception:
                pass

    def __enter__(self) -> ContainerBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_broker(spec: BrokerSpec, workdir: Path) -> ContainerBroker:
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    return ContainerBroker(spec, workdir).start()
