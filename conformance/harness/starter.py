"""Starter adapters: ``kafka-conformance check --init-adapter LANG DIR``.

A starter (``conformance/harness/starters/<side>/<lang>/``) is a complete adapter of one side
in one language that speaks docs/adapter-protocol.md and leaves one file, the **hook**, to the
user: the capabilities of their library and the call into it. The sides (:data:`SIDES`):
``decode`` (capabilities, one-shot decode, persistent serve, the canonical JSON), ``consume``
(``CMD consume --bootstrap ...``: the library's consumer, the consume document) and
``produce`` (``CMD produce --bootstrap ... --plan FILE`` and ``CMD encode --plan FILE``: the
library's producer and batch builder, the produce-result document). Each starter has a
``starter.toml``::

    language = "go"
    hook = "library.go"                      # the file the user edits
    toolchain = ["go"]                       # programs it needs
    build = [["go", "build", "-o", "adapter", "."]]   # run in DIR, in order
    command = ["{dir}/adapter"]              # the adapter's command line ({dir}: DIR)

:func:`init_adapter` copies a starter (without its ``starter.toml`` and build output) into a
new directory, or an existing empty one (its mode kept); :func:`target_directory` is the
directory the command line names, a symbolic link that is a loop or leads to a missing path
refused. The command line prints how to build and run it.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from conformance.harness.registry import SIDES as ALL_SIDES

__all__ = ["SIDES", "Starter", "StarterError", "init_adapter", "starters", "target_directory"]

_ROOT = Path(__file__).resolve().parent / "starters"
#: the sides a starter is written for: those of the side list with a folder of ``starters/``,
#: in its order, the first the default
SIDES = tuple(s for s in ALL_SIDES if (_ROOT / s).is_dir())
#: what a starter directory may hold after a build in place, never copied
_BUILD_OUTPUT = {"__pycache__", "target", "build", "node_modules", "adapter", ".starter"}


class StarterError(ValueError):
    """An unknown language, or a target directory that cannot be used."""


@dataclass(frozen=True)
class Starter:
    side: str
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


def starters(side: str = SIDES[0]) -> dict[str, Starter]:
    """Every starter of ``side``, by language."""
    if side not in SIDES:
        raise StarterError(f"no starters for side {side!r} (known: {', '.join(SIDES)})")
    found = {}
    for manifest in sorted((_ROOT / side).glob("*/starter.toml")):
        doc = tomllib.loads(manifest.read_text(encoding="utf-8"))
        found[doc["language"]] = Starter(
            side=side,
            language=doc["language"],
            source=manifest.parent,
            hook=doc["hook"],
            toolchain=tuple(doc.get("toolchain", [])),
            build=tuple(tuple(step) for step in doc.get("build", [])),
            command_template=tuple(doc["command"]),
        )
    return found


def _refuse_broken_link(directory: Path) -> None:
    """:class:`StarterError` when ``directory`` is a symbolic link that leads nowhere: a loop,
    or a link to a missing path (writing there would create the link's target, and its
    parents, somewhere else than the name given). A link to a directory is that directory."""
    if not directory.is_symlink():
        return
    target = os.readlink(directory)
    try:
        directory.resolve(strict=True)
    except RuntimeError:  # Python before 3.13: a loop
        why = "a loop"
    except OSError as e:
        why = "a loop" if e.errno == errno.ELOOP else "its target does not exist"
    else:
        return
    raise StarterError(
        f"{directory} is a symbolic link to {target} ({why}): give a new directory's path, "
        "or an existing empty directory"
    )


def target_directory(text: str) -> Path:
    """The absolute path of the directory ``--init-adapter LANG DIR`` names, symbolic links
    resolved; :class:`StarterError` for a link that is a loop or leads to a missing path."""
    given = Path(text)
    _refuse_broken_link(given)
    try:
        return given.resolve()
    except (RuntimeError, OSError) as e:  # a loop further up the path
        raise StarterError(f"{text}: cannot resolve the path: {e}") from None


def init_adapter(language: str, directory: Path, side: str = SIDES[0]) -> Starter:
    """Copy the ``language`` starter of ``side`` into ``directory`` (created with its parents;
    or an existing empty directory, whose mode is left as it is). A symbolic link that is a
    loop or leads to a missing path is refused. Raises :class:`StarterError`."""
    known = starters(side)
    starter = known.get(language)
    if starter is None:
        raise StarterError(
            f"no {side} starter for {language!r} (known: {', '.join(known) or 'none'})"
        )
    _refuse_broken_link(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise StarterError(f"{directory} exists and is not an empty directory")

    def ignored(_: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _BUILD_OUTPUT or n == "starter.toml"}

    directory.mkdir(parents=True, exist_ok=True)
    # each entry on its own: ``copytree`` of the whole starter would copy the starter
    # directory's mode onto an existing directory (a private 700 one would become 755)
    skip = ignored(str(starter.source), [p.name for p in starter.source.iterdir()])
    for entry in sorted(starter.source.iterdir()):
        if entry.name in skip:
            continue
        if entry.is_dir():
            shutil.copytree(entry, directory / entry.name, ignore=ignored)
        else:
            shutil.copy2(entry, directory / entry.name)
    return starter
