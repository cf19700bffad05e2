"""Starter adapters: ``kafka-conformance check --init-adapter LANG DIR``.

A starter (``conformance/harness/starters/<lang>/``) is a complete adapter in one language
that speaks docs/adapter-protocol.md (capabilities, one-shot decode, persistent serve, the
canonical JSON) and leaves one file, the **hook**, to the user: the capabilities of their
library and the call that decodes. Each starter has a ``starter.toml``::

    language = "go"
    hook = "library.go"                      # the file the user edits
    toolchain = ["go"]                       # programs it needs
    build = [["go", "build", "-o", "adapter", "."]]   # run in DIR, in order
    command = ["{dir}/adapter"]              # the adapter's command line ({dir}: DIR)

:func:`init_adapter` copies a starter (without its ``starter.toml`` and build output) into a
new directory; the command line prints how to build and run it.
"""

from __future__ import annotations

import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Starter", "StarterError", "init_adapter", "starters"]

_ROOT = Path(__file__).resolve().parent / "starters"
#: what a starter directory may hold after a build in place, never copied
_BUILD_OUTPUT = {"__pycache__", "target", "build", "node_modules", "adapter", ".starter"}


class StarterError(ValueError):
    """An unknown language, or a target directory that cannot be used."""


@dataclass(frozen=True)
class Starter:
    language: str
    source: Path
    hook: str
    toolchain: tuple[str, ...]
    build: tuple[tuple[str, ...], ...]
    command_template: tuple[str, ...]

    def command(self, directory: Path) -> list[str]:
        """The adapter's command line once built in ``directory``."""
        return [a.replace("{dir}", str(directory)) for a in self.command_template]

    def command_line(self, directory: Path) -> str:
        """:meth:`command` as one shell-quoted string (what ``check --cmd`` takes)."""
        return shlex.join(self.command(directory))

    def missing_tools(self) -> list[str]:
        return [t for t in self.toolchain if shutil.which(t) is None]


def starters() -> dict[str, Starter]:
    """Every starter, by language."""
    found = {}
    for manifest in sorted(_ROOT.glob("*/starter.toml")):
        doc = tomllib.loads(manifest.read_text(encoding="utf-8"))
        found[doc["language"]] = Starter(
            language=doc["language"],
            source=manifest.parent,
            hook=doc["hook"],
            toolchain=tuple(doc.get("toolchain", [])),
            build=tuple(tuple(step) for step in doc.get("build", [])),
            command_template=tuple(doc["command"]),
        )
    return found


def init_adapter(language: str, directory: Path) -> Starter:
    """Copy the ``language`` starter into ``directory`` (created; it must not exist, or be
    empty). Raises :class:`StarterError`."""
    known = starters()
    starter = known.get(language)
    if starter is None:
        raise StarterError(f"no starter for {language!r} (known: {', '.join(known)})")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise StarterError(f"{directory} exists and is not an empty directory")

    def ignored(_: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _BUILD_OUTPUT or n == "starter.toml"}

    shutil.copytree(starter.source, directory, ignore=ignored, dirs_exist_ok=True)
    return starter
