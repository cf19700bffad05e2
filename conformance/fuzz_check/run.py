"""A differential fuzzing run over several implementations, one after the other.

Each implementation's capabilities are read as ``check`` reads them
(``harness.decode.capabilities_of``, for the side hunted), it is named by the name it
declares, and it is hunted (``hunt.Hunt`` for decoders, ``consume.ConsumeHunt`` for
consumers) for ``seconds`` over the same sequence of inputs (the same seed), so two
implementations' findings can be compared; its findings are written
(``findings.write_finding``) under ``out``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from conformance.corpus import consume as consume_corpus
from conformance.fuzz.seeds import seed_root
from conformance.fuzz_check.consume import ConsumeHunt
from conformance.fuzz_check.findings import Written, write_finding
from conformance.fuzz_check.hunt import Hunt, HuntSettings
from conformance.fuzz_check.inputs import (
    ConsumeInputs,
    Inputs,
    Partition,
    consume_seeds,
    corpus_seeds,
    writer_seeds,
)
from conformance.harness import divergences as dv
from conformance.harness.decode import capabilities_of
from conformance.harness.judge import CONSUME, DECODE, Capabilities
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Implementation, Settings, named
from conformance.jvm.message_defs import message_schemas

__all__ = ["Problem", "hunt_all", "partitions", "seeds"]

#: ``(implementation, problem)``: an implementation that could not be hunted, and why
Problem = tuple[str, str]


@contextmanager
def seeds() -> Iterator[list[bytes]]:
    """The seed inputs: the corpora's record streams (the checkout's, else the built-in
    root, written to a temporary directory removed afterwards) and the writer's shapes."""
    with tempfile.TemporaryDirectory(prefix="kafka-conformance-hunt-") as scratch:
        root, _ = seed_root(Path(scratch) / "root")
        yield [*writer_seeds(), *corpus_seeds(root)]


@contextmanager
def partitions() -> Iterator[list[Partition]]:
    """The consume side's seed partitions (``inputs.consume_seeds``): the checkout's
    corpora's, the crafted ones written to a temporary directory where there are none."""
    with tempfile.TemporaryDirectory(prefix="kafka-conformance-hunt-") as scratch:
        root, _ = seed_root(Path(scratch) / "root")
        corpora = root / "corpora" if (root / "corpora").is_dir() else root
        yield list(consume_seeds(corpora, Path(scratch) / "written"))


def hunt_all(
    impls: Sequence[Implementation],
    settings: HuntSettings,
    known: Sequence[dv.Divergence],
    out: Path,
    table: ProcessTable,
    *,
    known_files: Sequence[str] = (),
    cases: Sequence[Any] = (),
    progress: Callable[[Hunt], None] | None = None,
    say: Callable[[str], None] = lambda _: None,
    side: str = DECODE,
) -> tuple[list[tuple[Hunt, list[Written]]], list[Problem]]:
    """Every implementation hunted in turn on ``side`` (decode or consume); its findings
    written under ``out``. ``cases``: the corpus cases of the side, from which the known
    divergences' signatures are learnt (``Hunt.learn_known``)."""
    done: list[tuple[Hunt, list[Written]]] = []
    problems: list[Problem] = []
    run_settings = Settings(jobs=1, timeout=settings.timeout, output_limit=settings.output_limit)
    with ExitStack() as stack:
        make = _maker(stack, side, settings, table, known)
        for impl in impls:
            caps, problem = capabilities_of(table, impl, run_settings, side)
            impl = named(impl, caps)
            if caps.invalid:
                problems.append((impl.name, caps.invalid))
                continue
            if problem:
                say(f"{impl.name}: {problem}")
            if side == DECODE and not caps.persistent:
                say(f"{impl.name}: not persistent: one process per input (slow)")
            hunt = make(impl, caps)
            try:
                asked = hunt.learn_known(cases) if cases else 0
                if asked:
                    say(f"{impl.name}: the known divergences' signatures, from {asked} case(s)")
                hunt.run(progress)
            finally:
                hunt.close()
            if hunt.ended():  # no verdict at all: the run did not do what it was asked
                problems.append((impl.name, f"the hunt could not go on: {hunt.oracle_problem}"))
            written = [
                write_finding(hunt, f, out, settings.level, known_files)
                for f in hunt.findings.values()
            ]
            done.append((hunt, written))
    return done, problems


def _maker(
    stack: ExitStack,
    side: str,
    settings: HuntSettings,
    table: ProcessTable,
    known: Sequence[dv.Divergence],
) -> Callable[[Implementation, Capabilities], Hunt]:
    """How an implementation's hunt is made on ``side``, its seeds entered in ``stack``."""
    if side == CONSUME:
        found = stack.enter_context(partitions())
        schemas = message_schemas(consume_corpus.DEFINITIONS, clients_only=True)
        return lambda impl, caps: ConsumeHunt(
            impl, caps, settings, table, ConsumeInputs(found, settings.seed), schemas, known
        )
    streams = stack.enter_context(seeds())
    return lambda impl, caps: Hunt(
        impl, caps, settings, table, Inputs(streams, settings.seed, settings.max_len), known
    )
