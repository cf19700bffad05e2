"""A whole run: one or more sides' parts through the run loop, then one report.

A :class:`Part` is a side (``runner.Side``) with the implementations and the chosen cases it
runs; :func:`run_parts` runs each (``runner.run_side``) and :func:`report` builds the one
report document (``harness.report.model``) of every part's runs, with the known divergences.
``check`` runs a decode part and a consume part into one report; ``check-producer`` and
``check-broker`` one part each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.harness import divergences as dv
from conformance.harness.process import ProcessTable
from conformance.harness.report import model
from conformance.harness.runner import (
    Implementation,
    ImplementationRun,
    ProgressCallback,
    Side,
    run_side,
)

__all__ = ["Part", "report", "run_parts"]


@dataclass
class Part:
    """One side's share of a run: its implementations over its chosen cases; ``every``: the
    ids of every case of the side (the run is complete when it chose them all)."""

    side: Side[Any, Any]
    impls: Sequence[Implementation]
    cases: Sequence[Any]
    every: Sequence[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.cases) == len(self.every)


def run_parts(
    parts: Sequence[Part], table: ProcessTable, progress: ProgressCallback | None = None
) -> list[ImplementationRun]:
    """Every part with implementations and cases, in order."""
    runs: list[ImplementationRun] = []
    for part in parts:
        if part.impls and part.cases:
            runs += run_side(part.side, part.impls, part.cases, table, progress)
    return runs


def report(
    parts: Sequence[Part],
    runs: Sequence[ImplementationRun],
    known: Sequence[dv.Divergence],
    *,
    globs: Sequence[str] | None = None,
    builds: dict[str, Any] | None = None,
    corpus: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of ``runs``: the cases of the parts that ran, the settings of the first,
    the level asked (a side judged at levels), complete when every part that ran chose every
    case; a known divergence is stale only over the cases of every part (run or not: an entry
    for a side not run is not stale)."""
    ran = [p for p in parts if p.impls and p.cases] or list(parts[:1])
    docs: dict[str, dict[str, Any]] = {}
    for p in ran:
        docs |= p.side.documents(p.cases)
    settings = ran[0].side.settings_doc() if ran else {}
    return model.build(
        runs,
        docs,
        settings,
        known,
        complete=all(p.complete for p in ran),
        globs=globs,
        builds=builds,
        every_case=[c for p in parts for c in p.every],
        corpus=corpus,
    )
