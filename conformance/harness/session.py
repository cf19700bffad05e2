"""What a run of any side starts from: the implementations it runs and their known
divergences.

* :func:`implementations`: built-in adapters by name (``all`` = every one buildable here),
  each built on demand (``registry.build``), and ``--cmd`` command lines; a built-in whose
  build fails is reported, not run.
* :func:`known_divergences`: every built-in adapter's ``divergences.toml`` (decoders) or
  ``producer-divergences.toml`` (producers and encoders).

Every side runs its implementations through the one run loop (``runner.run_side``).

The command line (``cli/check.py``) parses arguments and prints; the work is here.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.harness import divergences as dv
from conformance.harness import registry
from conformance.harness.runner import Implementation
from conformance.host.progress import Status
from conformance.jvm.runtime import NoCheckout

__all__ = [
    "Selection",
    "implementations",
    "known_divergences",
]


@dataclass
class Selection:
    """What :func:`implementations` found: the runnable implementations, build notes per
    built-in (``out``, ``seconds``) and the built-ins whose build failed."""

    implementations: list[Implementation] = field(default_factory=list)
    builds: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def implementations(
    names: Sequence[str],
    commands: Sequence[str],
    log: Status = lambda _: None,
    side: str = "decode",
) -> Selection:
    """The built-in adapters ``names`` of ``side`` (``decode``, ``consume``, or ``produce`` for
    producers and encoders; ``all``: every one that can be built here) and the adapter command lines
    ``commands``. ValueError for an unknown name or an empty command; ``NoCheckout`` when
    a built-in whose sources an installed kit does not carry is asked for outside a checkout
    (``registry.require_sources``)."""
    found = Selection()
    if names:
        known = {a.name: a for a in registry.adapters(side=side)}
        if "all" in names:
            names = [n for n in known if registry.availability(known[n])[0] != "unavailable"]
            for n, a in known.items():
                state, why = registry.availability(a)
                if state == "unavailable":
                    log(f"{n}: not run: {why}")
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(
                f"unknown implementation {', '.join(unknown)} (known: {', '.join(known)})"
            )
        for name in names:  # before any build: an installed kit carries some sources only
            registry.require_sources(known[name])
        for name in dict.fromkeys(names):
            adapter = known[name]
            try:
                built = registry.build(adapter, log=log)
            except registry.AdapterBuildError as exc:
                log(str(exc))
                found.failures.append(name)
                continue
            found.builds[name] = {"out": str(built.out), "seconds": built.build_seconds}
            found.implementations.append(
                Implementation(name, tuple(built.argv), built.env, registry.describe(adapter))
            )
    for cmd in commands:
        argv = shlex.split(cmd)
        if not argv:
            raise ValueError("--cmd is empty")
        found.implementations.append(Implementation("", tuple(argv), None, {"command": cmd}))
    return found


#: the known-divergence file of each side
DIVERGENCE_FILES = {
    "decode": "divergences.toml",
    "produce": "producer-divergences.toml",
    "broker": "broker-divergences.toml",
}
#: the sides whose divergence entries must name the lines they explain
_LINES_REQUIRED = ("produce", "broker")


def known_divergences(side: str = "decode", extra: Sequence[str] = ()) -> list[dv.Divergence]:
    """The built-in adapters' known divergences of ``side`` (none outside a checkout), then
    those of the files ``extra`` (``--known``: outside adapters'). ``DivergenceError`` (a
    ``ValueError``) for an invalid entry, ``OSError`` for a file that cannot be read."""
    try:
        root = registry.adapters_root()
    except NoCheckout:
        found = []
    else:
        if side not in DIVERGENCE_FILES:  # a plugged side: no built-in adapter has one
            found = []
        else:
            found = dv.read_divergences(
                root.glob(f"*/{DIVERGENCE_FILES[side]}"),
                relative_to=root.parent,
                require_lines=side in _LINES_REQUIRED,
            )
    extra_files = [Path(f) for f in extra]
    return found + dv.read_divergences(
        extra_files, ordered=True, require_lines=side in _LINES_REQUIRED
    )
