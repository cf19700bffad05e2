"""IO at the JVM edge, shared by the oracle builder and the Kafka-distribution resolver:
where the repository is, where its JVM projects are, which ``java`` to run, and running Maven
with the kit's own local repository (``<cache>/m2``) under a file lock.

Where the repository is: ``$KAFKA_CONFORMANCE_ROOT`` if set, else the checkout holding this
package (an editable install: the package's parent directory has a ``pyproject.toml``
declaring this project). An installed wheel has no checkout: :func:`checkout_root` is then
None and :func:`repo_root` raises :class:`NoCheckout`, saying what to set, rather than
pointing into ``site-packages``. :func:`cache_root` is where the shells keep working files:
``<checkout>/.cache``, else the user's cache directory.

Where a JVM project is (``oracle``, ``jvm/kafka-classpath``, the ``java`` adapters:
``project_files.PROJECTS``): :func:`project_dir`, the checkout's directory when there is a
checkout, else the copy the wheel carries (``conformance/jvm/projects/``, read only: what is
built from it goes under :func:`cache_root`, see :func:`is_packaged`).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from conformance.jvm import project_files

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")

#: JVM options of a JVM that lives for seconds or serves little work: the client compiler (C1)
#: only. C2's compilations are CPU spent for nothing there, and the flag changes nothing a
#: program prints or writes. Used by Kafka's tools (DumpLogSegments on a few segments: a run
#: about a sixth faster), the oracle's one-shot commands (``oracle.main``: all but ``serve``),
#: the kit's brokers (``capture.jvm.broker_jvm_options``: a 4.3.1 broker took 12.0-12.2 s of
#: CPU to answer its first metadata request with the default tiered JIT, 6.0-6.2 s with
#: this), a local Spark master's driver (``replay.job.LOCAL_JVM_OPTIONS``) and a standalone
#: cluster's master and workers (``replay.cluster``)
CLIENT_COMPILER_ONLY: tuple[str, ...] = ("-XX:TieredStopAtLevel=1",)


class JvmToolMissing(RuntimeError):
    """``java`` or ``mvn`` is not installed."""


#: names a checkout (or a copy of its data: ``corpora/``, ``oracle/``, ``jvm/``, ``fuzz/``)
ROOT_ENV = "KAFKA_CONFORMANCE_ROOT"
#: ``[project] name`` in the checkout's pyproject.toml
PROJECT_NAME = "kafka-conformance"


class NoCheckout(RuntimeError):
    """The repository's files are needed, but the package is installed (no checkout around it)
    and ``$KAFKA_CONFORMANCE_ROOT`` is not set. The message says what to do."""


def is_checkout(path: Path) -> bool:
    """``path`` holds this project's ``pyproject.toml`` and the ``conformance`` package."""
    try:
        meta = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    project = meta.get("project")
    return (
        isinstance(project, dict)
        and project.get("name") == PROJECT_NAME
        and (path / "conformance" / "__init__.py").is_file()
    )


def checkout_root() -> Path | None:
    """``$KAFKA_CONFORMANCE_ROOT``, else the checkout holding this package, else None (an
    installed package: its parent directory is ``site-packages``, not a checkout)."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).resolve()
    candidate = Path(__file__).resolve().parents[2]
    return candidate if is_checkout(candidate) else None


def no_checkout_message(what: str | None = None) -> str:
    """The one explanation given wherever the repository's files are needed and missing."""
    package = Path(__file__).resolve().parents[1]
    return (
        f"no kafka-conformance checkout{f' for {what}' if what else ''}: the installed "
        f"package ({package}) is not inside one; set {ROOT_ENV} to a checkout (a git "
        f"clone of kafka-conformance, with its corpora/, oracle/, jvm/ and fuzz/ folders)"
    )


def repo_root(explicit: Path | None = None) -> Path:
    """``explicit``, else ``$KAFKA_CONFORMANCE_ROOT``, else the checkout holding this package.

    Raises :class:`NoCheckout` in an installed package with no checkout and no
    ``$KAFKA_CONFORMANCE_ROOT`` (never a path inside ``site-packages``)."""
    if explicit is not None:
        return explicit.resolve()
    root = checkout_root()
    if root is None:
        raise NoCheckout(no_checkout_message())
    return root


def packaged_projects() -> Path:
    """Where an installed wheel carries the JVM projects (``conformance/jvm/projects/``; absent
    from a checkout, which has the originals)."""
    return Path(__file__).resolve().parent / project_files.PACKAGED_DIR


def project_dir(name: str, explicit: Path | None = None) -> Path:
    """The directory of the JVM project ``name`` (its place in a checkout: ``oracle``,
    ``jvm/kafka-classpath``, ``jvm/producer``, ``adapters/java``, or ``adapters``, the folder
    of the built-in adapters): under ``explicit``, else under :func:`checkout_root`, else the
    copy the wheel carries (:func:`packaged_projects`; of ``adapters``, every manifest and the
    sources of ``project_files.PROJECTS``' adapters only).

    Raises :class:`NoCheckout` with neither a checkout nor a packaged copy (a package built
    without its projects); ValueError for a name that is not a project's."""
    if not any(p == name or p.startswith(name + "/") for p in project_files.PROJECTS):
        raise ValueError(f"not a JVM project of the kit: {name!r}")
    root = explicit.resolve() if explicit is not None else checkout_root()
    if root is not None:
        return root / name
    packaged = packaged_projects() / name
    if not packaged.is_dir():
        raise NoCheckout(no_checkout_message(f"{name}/ (the installed package carries no copy)"))
    return packaged


def is_packaged(path: Path) -> bool:
    """``path`` is in the wheel's copy of the projects: read it, build elsewhere."""
    return path.resolve().is_relative_to(packaged_projects())


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/kafka-conformance``, else ``~/.cache/kafka-conformance``."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kafka-conformance"


def cache_root(explicit: Path | None = None) -> Path:
    """Working files of the shells (fuzzing runs, Kafka's jars, the oracles' builds, Maven's
    local repository): ``<explicit>/.cache``, else ``<checkout>/.cache``, else (an installed
    package) :func:`user_cache_dir`."""
    root = explicit.resolve() if explicit is not None else checkout_root()
    return root / ".cache" if root is not None else user_cache_dir()


def jdk_tool(name: str) -> str:
    """``$JAVA_HOME/bin/<name>``, else ``<name>`` on PATH (``java``, ``javac``, ...)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise JvmToolMissing(
            f"no {name}: neither $JAVA_HOME/bin/{name} nor {name} on PATH (JDK 17+ needed)"
        )
    return found


def java_executable() -> str:
    """``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    return jdk_tool("java")


def tail(text: str, lines: int = 40) -> str:
    """The last ``lines`` lines of a tool's output, without colour codes."""
    return "\n".join(_ANSI_RE.sub("", text).splitlines()[-lines:])


def file_tail(f: IO[bytes] | None, lines: int = 40) -> str:
    """:func:`tail` of what a child wrote to ``f`` (the temporary file it has as stderr):
    "" when there is none or it cannot be read."""
    if f is None:
        return ""
    try:
        f.seek(0)
        return tail(f.read().decode("utf-8", "replace"), lines)
    except OSError:
        return ""


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
    cache: Path, args: Sequence[str], *, cwd: Path, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``mvn -B`` with ``-Dmaven.repo.local=<cache>/m2`` (``cache``: a :func:`cache_root`);
    output (stdout+stderr) as text.

    Raises :class:`JvmToolMissing` without mvn; ``OSError``/``TimeoutExpired`` propagate."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JvmToolMissing("no mvn: Apache Maven is not on PATH")
    m2 = cache / "m2"
    m2.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-B", "-Dstyle.color=never", f"-Dmaven.repo.local={m2}", *args]
    # one Maven at a time per local repository (Maven 3 does not share one safely between
    # processes): the innermost lock, taken after any build or resolution lock
    with locked(m2.parent / ".m2.lock"):
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
