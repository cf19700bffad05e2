"""IO at the JVM edge, shared by the oracle builder and the Kafka-distribution resolver:
where the repository is, which ``java`` to run, and running Maven with the project's own
local repository (``<repo>/.cache/m2``) under a file lock."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


class JvmToolMissing(RuntimeError):
    """``java`` or ``mvn`` is not installed."""


def repo_root(explicit: Path | None = None) -> Path:
    """``explicit``, else ``$KAFKA_CONFORMANCE_ROOT``, else the checkout holding this package."""
    if explicit is not None:
        return explicit.resolve()
    env = os.environ.get("KAFKA_CONFORMANCE_ROOT")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parents[2]


def java_executable() -> str:
    """``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    java = shutil.which("java")
    if java is None:
        raise JvmToolMissing("no java: neither $JAVA_HOME/bin/java nor java on PATH (JDK 17+ needed)")
    return java


def tail(text: str, lines: int = 40) -> str:
    """The last ``lines`` lines of a tool's output, without colour codes."""
    return "\n".join(_ANSI_RE.sub("", text).splitlines()[-lines:])


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created), so concurrent test processes wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def run_maven(
    root: Path, args: Sequence[str], *, cwd: Path, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``mvn -B`` with ``-Dmaven.repo.local=<root>/.cache/m2``; output (stdout+stderr) as text.

    Raises :class:`JvmToolMissing` without mvn; ``OSError``/``TimeoutExpired`` propagate."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JvmToolMissing("no mvn: Apache Maven is not on PATH")
    m2 = root / ".cache" / "m2"
    m2.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-B", "-Dstyle.color=never", f"-Dmaven.repo.local={m2}", *args]
    return subprocess.run(
        cmd,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )
