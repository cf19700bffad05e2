"""A container engine that answers: found, or started with ``engine.sh``.

``engine.sh env`` names a Docker-compatible daemon that already answers (``$DOCKER_HOST``,
Docker's socket, Podman's sockets, or the service an earlier ``engine.sh up`` started);
``engine.sh up`` installs Podman when it is missing and starts ``podman system service`` on a
unix socket. Both print ``export NAME=value`` lines: ``DOCKER_HOST`` and the
``TESTCONTAINERS_*`` settings (Ryuk off: the kit removes its own containers; for a local
socket, published ports on 127.0.0.1). :func:`ensure_engine` applies them to ``os.environ``
(and to testcontainers' configuration when it was imported earlier), and stops at exit the
service it started itself, never one it found.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.capture import lifecycle

__all__ = [
    "ENGINE_SCRIPT",
    "LABEL",
    "Engine",
    "EngineUnavailable",
    "docker_client",
    "ensure_engine",
    "kit_containers",
    "run_script",
]

#: the script behind ``scripts/container-engine`` (shipped in the package)
ENGINE_SCRIPT = Path(__file__).with_name("engine.sh")
#: label on every container the kit starts (value: the starting process id)
LABEL = "org.kafka-conformance.capture"

_EXPORT = re.compile(r"^export ([A-Z_][A-Z0-9_]*)=(.*)$")
_lock = threading.Lock()
_current: Engine | None = None


class EngineUnavailable(RuntimeError):
    """No container engine answers and none could be started (the message says why)."""


@dataclass
class Engine:
    """A daemon that answers at ``url``; ``started`` when this process started it."""

    url: str
    env: dict[str, str] = field(default_factory=dict)
    started: bool = False

    def stop(self) -> None:
        """Stop the socket service if this process started it (containers are not touched)."""
        global _current
        if self.started:
            run_script("down", timeout=60)
            self.started = False
        lifecycle.unregister(self)
        with _lock:
            if _current is self:
                _current = None


def run_script(command: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``engine.sh COMMAND``; its stdout (the environment) and stderr are returned."""
    return subprocess.run(
        ["bash", str(ENGINE_SCRIPT), command],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _read_env(text: str) -> dict[str, str]:
    env = {}
    for line in text.splitlines():
        m = _EXPORT.match(line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    return env


def ensure_engine(*, start: bool = True) -> Engine:
    """The engine to use: one that answers, else (``start``) one started with ``engine.sh up``.

    Raises :class:`EngineUnavailable` with the script's explanation when there is none.
    """
    global _current
    with _lock:
        if _current is not None:
            return _current
        found = run_script("env", timeout=60)
        started = False
        if found.returncode != 0:
            if not start:
                raise EngineUnavailable(
                    "no container engine answers (scripts/container-engine up starts one)"
                )
            up = run_script("up")
            if up.returncode != 0:
                raise EngineUnavailable(
                    f"scripts/container-engine up failed (exit {up.returncode}):\n"
                    f"{up.stderr.strip()}"
                )
            found, started = up, "starting podman system service" in up.stderr
        env = _read_env(found.stdout)
        if "DOCKER_HOST" not in env:
            raise EngineUnavailable(f"engine.sh printed no DOCKER_HOST:\n{found.stdout}")
        engine = Engine(env["DOCKER_HOST"], env, started)
        _apply(env)
        if started:
            lifecycle.register(engine)
        _current = engine
        return engine


def _apply(env: dict[str, str]) -> None:
    os.environ.update(env)
    import sys

    config = sys.modules.get("testcontainers.core.config")
    if config is None:  # read from os.environ when testcontainers is imported
        return
    tc = config.testcontainers_config  # imported earlier: its settings were already read
    if env.get("TESTCONTAINERS_RYUK_DISABLED") == "true":
        tc.ryuk_disabled = True
    if "TESTCONTAINERS_HOST_OVERRIDE" in env:
        tc.tc_host_override = env["TESTCONTAINERS_HOST_OVERRIDE"]
    if "TESTCONTAINERS_CONNECTION_MODE" in env:
        tc.connection_mode_override = config.ConnectionMode(env["TESTCONTAINERS_CONNECTION_MODE"])


def docker_client(engine: Engine) -> Any:
    """A ``docker.DockerClient`` for ``engine`` (the ``docker`` package testcontainers uses)."""
    import docker  # type: ignore[import-not-found]

    return docker.DockerClient(base_url=engine.url, timeout=600)


def kit_containers(engine: Engine) -> list[Any]:
    """Every container (running or not) that carries the kit's :data:`LABEL`."""
    return list(docker_client(engine).containers.list(all=True, filters={"label": LABEL}))
