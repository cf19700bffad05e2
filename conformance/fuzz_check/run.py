"""A differential fuzzing run over several implementations, one after the other.

Each implementation's capabilities are read as ``check`` reads them
(``harness.decode.capabilities_of``, decode side), it is named by the name it declares, and
it is hunted (``hunt.Hunt``) for ``seconds`` over the same sequence of inputs (the same
seed), so two implementations' findings can be compared; its findings are written
(``findings.write_finding``) as they are made, under ``out``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from conformance.fuzz.seeds import seed_root
from conformance.fuzz_check.findings import Written, write_finding
from conformance.fuzz_check.hunt import Hunt, HuntSettings
from conformance.fuzz_check.inputs import Inputs, corpus_seeds, writer_seeds
from conformance.harness import divergences as dv
from conformance.harness.cases import Case
from conformance.harness.decode import capabilities_of
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Implementation, Settings, named

__all__ = ["Problem", "hunt_all", "seeds"]

#: ``(implementation, problem)``: an implementation that could not be hunted, and why
Problem = tuple[str, str]


@contextmanager
def seeds() -> Iterator[list[bytes]]:
    """The seed inputs: the corpora's record streams (the checkout's, else the built-in
    root, written to a temporary directory removed afterwards) and the writer's shapes."""
    with tempfile.TemporaryDirectory(prefix="kafka-conformance-hunt-") as scratch:
        root, _ = seed_root(Path(scratch) / "root")
        yield [*writer_seeds(), *corpus_seeds(root)]


def hunt_all(
    impls: Sequence[Implementation],
    settings: HuntSettings,
    known: Sequence[dv.Divergence],
    out: Path,
    table: ProcessTable,
    *,
    known_files: Sequence[str] = (),
    cases: Sequence[Case] = (),
    progress: Callable[[Hunt], None] | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> tuple[list[tuple[Hunt, list[Written]]], list[Problem]]:
    """Every implementation hunted in turn; its findings written under ``out``. ``cases``: the
    corpus cases, from which the known divergences' signatures are learnt
    (``Hunt.learn_known``)."""
    done: list[tuple[Hunt, list[Written]]] = []
    problems: list[Problem] = []
    run_settings = Settings(jobs=1, timeout=settings.timeout, output_limit=settings.output_limit)
    with seeds() as inputs:
        for impl in impls:
            caps, problem = capabilities_of(table, impl, run_settings)
            impl = named(impl, caps)
            if caps.invalid:
                problems.append((impl.name, caps.invalid))
                continue
            if problem:
                say(f"{impl.name}: {problem}")
            if not caps.persistent:
                say(f"{impl.name}: not persistent: one process per input (slow)")
            feed = Inputs(inputs, settings.seed, settings.max_len)
            hunt = Hunt(impl, caps, settings, table, feed, known)
            try:
                asked = hunt.learn_known(cases) if cases else 0
                if asked:
                    say(f"{impl.name}: the known divergences' signatures, from {asked} case(s)")
                hunt.run(progress)
            finally:
                hunt.close()
            written = [
                write_finding(hunt, f, out, settings.level, known_files)
                for f in hunt.findings.values()
            ]
            done.append((hunt, written))
    return done, problems
