"""The built-in adapters: ``adapters/<dir>/adapter.toml``, built on demand, cached.

The adapters are the checkout's ``adapters/``; an installed package without a checkout has
the wheel's copy (:func:`adapters_root`): every adapter's ``adapter.toml``, and the sources of
those whose build needs nothing but the kit (``jvm.project_files.PROJECTS``: the ``java``
ones, Kafka's own classes built from the JVM projects the wheel carries, and ``kit-builder``,
the kit's own encoder). The others are listed (``check --list``) but not built:
:func:`missing_sources` says why ("needs a checkout: its sources are in adapters/NAME"),
:func:`availability` reports it and :func:`require_sources` raises it as ``NoCheckout``.

Each adapter directory holds its sources, its pinned dependency files (go.sum, Cargo.lock,
package-lock.json, requirements.txt) and ``adapter.toml`` (docs/adapters.md): the library
and version under test, the toolchain it needs, the build steps and one or more
implementations (``[[impl]]``: name, command, environment). A build runs the steps in order
with the adapter directory as working directory into
``.cache/adapters/<dir>/<hash>/`` (``{out}``), where the hash covers every file of the
adapter directory (but its ``*divergences.toml``: what is known of its answers, not how it is
built) and the toolchain's version; a finished build is marked by ``.built`` and
reused while the hash holds, and older builds of the directory are removed. The build's
output goes to ``<hash>.log`` beside it.

Placeholders in steps, commands and environments: ``{src}`` (the adapter directory),
``{out}``, ``{cache}`` (the kit's cache root, shared download caches) and ``{python}`` (this
interpreter).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.host.progress import Status
from conformance.host.sessions import Child, terminate
from conformance.jvm import project_files, runtime

__all__ = [
    "SIDES",
    "Adapter",
    "AdapterBuildError",
    "Built",
    "adapters",
    "availability",
    "build",
    "fill",
    "missing_sources",
    "require_sources",
]

#: toolchains whose version goes into the build hash (a new compiler means a new build)
_TOOL_VERSION_ARGS = {
    "go": ["version"],
    "java": ["-version"],
    "node": ["--version"],
    "cargo": ["--version"],
    "rustc": ["--version"],
    "npm": ["--version"],
    "mvn": ["--version"],
    "cc": ["--version"],
    "gcc": ["--version"],
    "g++": ["--version"],
}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


#: how often a running build step is looked at, and its SIGTERM grace when it is stopped
_STEP_POLL = 0.1
_STEP_GRACE = 5.0


class AdapterBuildError(RuntimeError):
    """A built-in adapter could not be built (the message ends with the build log's tail)."""


@dataclass(frozen=True)
class Adapter:
    """One implementation of a built-in adapter directory."""

    name: str
    directory: Path
    library: str
    version: str
    registry: str
    toolchain: tuple[str, ...]
    description: str
    steps: tuple[tuple[str, ...], ...]
    build_env: tuple[tuple[str, str], ...]
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    #: other directories the adapter uses (``shared = ["../go-common"]``): part of the hash
    shared: tuple[Path, ...] = ()
    #: what the implementation does (``sides``): ``decode`` and ``consume`` (``check``),
    #: ``produce`` and/or ``encode`` (``check-producer``); an ``[[impl]]`` without ``sides``
    #: decodes
    sides: tuple[str, ...] = ("decode",)
    #: services the kit starts for the implementation (``needs = ["postgresql"]`` of a broker
    #: target: ``{postgresql}`` in its command is that server's URL)
    needs: tuple[str, ...] = ()
    #: False for an installed kit's catalogue entry: the wheel carries the manifest only, the
    #: sources are in a checkout's ``adapters/<dir>`` (:func:`missing_sources`)
    sources_here: bool = True


@dataclass(frozen=True)
class Built:
    """A built adapter, ready to run."""

    adapter: Adapter
    argv: list[str]
    env: dict[str, str]
    out: Path
    build_seconds: float | None  # None: an earlier build was reused


def adapters_root() -> Path:
    """The checkout's ``adapters/``, else the wheel's copy (``runtime.project_dir``): every
    manifest, the sources of some (``project_files.PROJECTS``)."""
    return runtime.project_dir("adapters")


def _sources_here(directory: Path) -> bool:
    """Whether the sources of the adapter ``directory`` are there: always in a checkout; in
    the wheel's copy, for the directories it carries whole."""
    return not runtime.is_packaged(directory) or project_files.carries_sources(
        f"adapters/{directory.name}"
    )


#: the sides an implementation may have (``sides`` of an ``[[impl]]``)
SIDES = ("decode", "consume", "produce", "encode", "broker")


def adapters(root: Path | None = None, side: str = "decode") -> list[Adapter]:
    """Every implementation of every ``adapters/*/adapter.toml`` that has ``side`` (for
    ``produce`` or ``encode``: either), in name order."""
    wanted = {side} if side in ("decode", "consume", "broker") else {"produce", "encode"}
    root = Path(root) if root is not None else adapters_root()
    found: list[Adapter] = []
    for manifest in sorted(root.glob("*/adapter.toml")):
        doc = tomllib.loads(manifest.read_text(encoding="utf-8"))
        build_doc = doc.get("build", {})
        for impl in doc.get("impl", []):
            sides = tuple(impl.get("sides", ["decode"]))
            if not set(sides) <= set(SIDES):
                raise ValueError(f"{manifest}: sides must be among {', '.join(SIDES)}: {sides}")
            if not wanted & set(sides):
                continue
            found.append(
                Adapter(
                    name=impl["name"],
                    directory=manifest.parent.resolve(),
                    library=doc["library"],
                    version=doc["version"],
                    registry=doc.get("registry", ""),
                    toolchain=tuple(doc.get("toolchain", [])),
                    description=doc.get("description", ""),
                    steps=tuple(tuple(step) for step in build_doc.get("steps", [])),
                    build_env=tuple(build_doc.get("env", {}).items()),
                    command=tuple(impl["command"]),
                    env=tuple(impl.get("env", {}).items()),
                    shared=tuple((manifest.parent / d).resolve() for d in doc.get("shared", [])),
                    sides=sides,
                    needs=tuple(impl.get("needs", [])),
                    sources_here=_sources_here(manifest.parent),
                )
            )
    return sorted(found, key=lambda a: a.name)


def _tool_version(tool: str) -> str | None:
    path = shutil.which(tool)
    if path is None or tool not in _TOOL_VERSION_ARGS:
        return path  # a helper tool (sh, cp, make...): being there is enough
    try:
        proc = subprocess.run(
            [path, *_TOOL_VERSION_ARGS.get(tool, ["--version"])],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = _ANSI.sub("", proc.stdout or proc.stderr).strip().splitlines()
    return text[0] if text else ""


def _toolchain(adapter: Adapter) -> dict[str, str] | str:
    """The version of each tool of the adapter's toolchain, or why one is missing."""
    versions = {}
    for tool in adapter.toolchain:
        version = _tool_version(tool)
        if version is None:
            return f"{tool} not found on PATH"
        versions[tool] = version
    return versions


def _builds(path: Path) -> bool:
    """Whether ``path`` of an adapter directory is a build input: not a cache, not a
    divergence file (what the kit knows of the adapter's answers, not how it is built)."""
    if not path.is_file() or "__pycache__" in path.parts:
        return False
    return not path.name.endswith("divergences.toml")


def _hash(adapter: Adapter, versions: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for directory in (adapter.directory, *adapter.shared):
        for path in sorted(p for p in directory.rglob("*") if _builds(p)):
            digest.update(
                f"{directory.name}/{path.relative_to(directory).as_posix()}".encode() + b"\0"
            )
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(json.dumps([versions, sys.version], sort_keys=True).encode())
    return digest.hexdigest()[:16]


def _out_base(adapter: Adapter) -> Path:
    return runtime.cache_root() / "adapters" / adapter.directory.name


def missing_sources(adapter: Adapter) -> str | None:
    """Why ``adapter`` cannot be built here for want of its sources ("needs a checkout: its
    sources are in adapters/NAME"), or None when they are here."""
    if adapter.sources_here:
        return None
    return f"needs a checkout: its sources are in adapters/{adapter.directory.name}"


def require_sources(adapter: Adapter) -> None:
    """Raise ``runtime.NoCheckout`` (the name, :func:`missing_sources` and what to set) when
    the sources of ``adapter`` are not here."""
    why = missing_sources(adapter)
    if why is not None:
        raise runtime.NoCheckout(
            f"{adapter.name} {why} (the installed package carries its adapter.toml only); set "
            f"{runtime.ROOT_ENV} to a checkout (a git clone of kafka-conformance)"
        )


def availability(adapter: Adapter) -> tuple[str, str]:
    """``("built", where)``, ``("buildable", toolchain versions)`` or ``("unavailable", why)``
    (its sources not here: :func:`missing_sources`; a tool of its toolchain missing)."""
    why = missing_sources(adapter)
    if why is not None:
        return "unavailable", why
    versions = _toolchain(adapter)
    if isinstance(versions, str):
        return "unavailable", versions
    out = _out_base(adapter) / _hash(adapter, versions)
    if (out / ".built").is_file():
        return "built", str(out)
    return "buildable", "; ".join(versions.values()) or "no toolchain needed"


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{key}`` of ``values`` replaced (others kept: a later step fills
    them, e.g. a broker target's ``{port}``)."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def build(adapter: Adapter, log: Status = lambda _: None) -> Built:
    """Build ``adapter`` unless its current build exists; return how to run it.

    Raises :class:`AdapterBuildError` (toolchain missing, a step failed: with the log's tail),
    ``runtime.NoCheckout`` when its sources are not here (:func:`require_sources`)."""
    require_sources(adapter)
    versions = _toolchain(adapter)
    if isinstance(versions, str):
        raise AdapterBuildError(f"{adapter.name}: cannot build: {versions}")
    base = _out_base(adapter)
    digest = _hash(adapter, versions)
    out = base / digest
    values = {
        "src": str(adapter.directory),
        "out": str(out),
        "cache": str(runtime.cache_root()),
        "python": sys.executable,
    }
    env = {**os.environ, **{k: fill(v, values) for k, v in adapter.env}}
    built = Built(adapter, [fill(a, values) for a in adapter.command], env, out, None)
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs (or two impls of one dir) build once
        if (out / ".built").is_file():
            return built
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        log_path = base / f"{digest}.log"
        build_env = {**os.environ, **{k: fill(v, values) for k, v in adapter.build_env}}
        started = time.monotonic()
        log(
            f"building {adapter.directory.name} "
            f"({adapter.library} {adapter.version}); log: {log_path}"
        )
        log_path.write_bytes(b"")
        for step in adapter.steps:
            argv = [fill(a, values) for a in step]
            with open(log_path, "ab") as sink:
                sink.write(("$ " + " ".join(argv) + "\n").encode())
            code = _run_step(adapter, argv, build_env, log_path)
            if code != 0:
                shutil.rmtree(out, ignore_errors=True)
                tail = log_path.read_text(errors="replace").splitlines()[-25:]
                raise AdapterBuildError(
                    f"{adapter.name}: build step failed (exit {code}): {' '.join(argv)}\n"
                    + "\n".join("  " + line for line in tail)
                )
        seconds = time.monotonic() - started
        (out / ".built").write_text(
            json.dumps({"seconds": round(seconds, 1), "toolchain": versions})
        )
        for old in base.iterdir():  # earlier builds of this directory
            if old.is_dir() and old.name != digest:
                shutil.rmtree(old, ignore_errors=True)
            elif old.suffix == ".log" and old.stem != digest:
                old.unlink(missing_ok=True)
        log(f"built {adapter.directory.name} in {seconds:.1f} s")
    return Built(adapter, built.argv, env, out, seconds)


def _run_step(adapter: Adapter, argv: list[str], env: dict[str, str], log: Path) -> int:
    """One build step in a session of its own, its output appended to ``log``; its exit code
    (-1: it could not start). Whatever the step started is stopped when it ends, and when the
    build is interrupted (Ctrl-C, SIGTERM under ``guard_sigterm``, an error): a killed
    ``check`` leaves no compiler behind."""
    try:
        child = Child(f"build {adapter.name}", argv, env, log, cwd=adapter.directory)
    except OSError as exc:
        with open(log, "ab") as sink:
            sink.write(f"cannot run: {exc}\n".encode())
        return -1
    try:
        while (code := child.exit_code()) is None:  # not reaped: its session stays ours
            time.sleep(_STEP_POLL)
    finally:
        terminate([child], grace=_STEP_GRACE)
    return code


def describe(adapter: Adapter) -> dict[str, Any]:
    """The JSON description of an adapter in reports."""
    return {
        "name": adapter.name,
        "library": adapter.library,
        "version": adapter.version,
        "registry": adapter.registry,
        "source": f"adapters/{adapter.directory.name}",
        "description": adapter.description,
        "sides": list(adapter.sides),
    }
