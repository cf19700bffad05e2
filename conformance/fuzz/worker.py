"""One fuzzing process: atheris/libFuzzer driving one target (started by ``harness.py``).

Usage (normally through ``kafka-conformance fuzz``, which adds corpus directories, the
dictionary, time/memory bounds and restarts after a kill)::

    python conformance/fuzz/harness.py TARGET [--differential] [--findings DIR] [flags] [CORPUS...]

Every input runs through the target; an exception outside the documented hierarchy is saved
(deduplicated by stack) and fuzzing goes on, so one bug does not end a nightly run. With
``--differential`` the input's record stream also goes to the Java oracle and kafka-python.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

from conformance.errors import DecodeError
from conformance.fuzz.store import FindingStore
from conformance.fuzz.targets import get


def build(
    target_name: str,
    findings: Path,
    differential: bool,  # type: ignore[no-untyped-def]
    stats_path: Path | None = None,
):
    """The TestOneInput callable for a target (shared with the tests).

    ``stats_path`` gets ``{"execs", "crashes", "slowest", "diffs", "seconds"}`` every couple
    of seconds (libFuzzer ends the process with a C ``exit()``: no Python exit hooks run),
    with ``"counters"`` (``Target.counters``) for a target that keeps its own. A target that
    is unavailable here (``Target.unavailable``) stops the worker with the reason."""
    target = get(target_name)
    why = target.unavailable() if target.unavailable is not None else None
    if why:
        raise SystemExit(f"fuzz target {target.name!r} cannot run: {why}")
    store = FindingStore(findings, target.name)
    if target.oracle == "broker":
        from conformance.jvm.kafka_jars import use_kafka2_zstd

        use_kafka2_zstd()  # the model of Kafka 2.x reads zstd with Kafka 2.x's libzstd
    checker = None
    if differential:
        if not target.differential:
            raise SystemExit(
                f"target {target.name!r} has no differential oracle (it is not a record stream)"
            )
        if target.oracle == "broker":
            from conformance.fuzz.produce import ProduceDifferential

            checker = ProduceDifferential()
            checker.warm()
        else:
            from conformance.fuzz.differential import Differential

            checker = Differential()
    stats: dict[str, float] = {
        "execs": 0,
        "crashes": 0,
        "slowest": 0.0,
        "diffs": 0,
        "differential_inputs": 0,
    }
    started = time.monotonic()
    last_write = [started]

    def write_stats() -> None:
        if stats_path is not None:
            now = time.monotonic()
            last_write[0] = now
            tmp = stats_path.with_suffix(".tmp")
            doc: dict[str, object] = {**stats, "seconds": now - started}
            if target.counters is not None:
                doc["counters"] = target.counters()
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, stats_path)

    def test_one_input(data: bytes) -> None:
        stats["execs"] += 1
        t0 = time.perf_counter()
        try:
            target.run(data)
        except DecodeError:
            pass
        except Exception as exc:  # noqa: BLE001 - anything else is exactly what we look for
            stats["crashes"] += 1
            store.crash(data, exc)
        if checker is not None:
            wire = target.wire_bytes(data)
            if wire is not None:
                o = checker.check(data, wire, store)
                if not o.bounded:
                    stats["differential_inputs"] += 1
                if o.differences or o.oracle_error:
                    stats["diffs"] += 1
        elapsed = time.perf_counter() - t0
        if elapsed > stats["slowest"]:
            stats["slowest"] = elapsed
        # by the clock, not by a count of inputs: a slow (differential) worker that runs few
        # inputs still reports them before libFuzzer's exit()
        if time.monotonic() - last_write[0] > 1:
            write_stats()

    test_one_input.write_stats = write_stats  # type: ignore[attr-defined]
    return test_one_input, stats, checker


def main(argv: list[str] | None = None) -> None:
    import atheris

    argv = list(sys.argv if argv is None else argv)
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("target")
    parser.add_argument("--differential", action="store_true")
    parser.add_argument("--findings", default="fuzz-findings")
    parser.add_argument("--stats", default=None, help="write execs/slowest as JSON here")
    ours, rest = parser.parse_known_args(argv[1:])
    target = get(ours.target)
    test_one_input, _stats, _checker = build(
        target.name,
        Path(ours.findings),
        ours.differential,
        Path(ours.stats) if ours.stats else None,
    )

    kwargs = {}
    if target.shape is not None:
        from conformance.fuzz.mutator import Mutator

        # looked up at call time: atheris rebinds Mutate when Fuzz() loads libFuzzer
        kwargs["custom_mutator"] = Mutator(
            target.shape, lambda data, size: atheris.Mutate(data, size), target.name
        )

    # libFuzzer re-runs argv[0] through the shell for -merge / -fork / -jobs: make it the
    # whole command (this interpreter, this harness, our own options)
    me = [sys.executable, os.path.abspath(argv[0]), target.name, "--findings", ours.findings]
    if ours.differential:
        me.append("--differential")
    atheris.Setup([" ".join(shlex.quote(x) for x in me), *rest], test_one_input, **kwargs)
    atheris.Fuzz()


__all__ = ["build", "main"]
