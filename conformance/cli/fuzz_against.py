"""``kafka-conformance fuzz --against NAME`` / ``--cmd CMD``: other implementations' decoders
(or, ``--side consume``, their consumers) fuzzed differentially (``conformance.fuzz_check``),
reported as ``check`` reports."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.cli import check_common as shared
from conformance.cli.common import output_problem, shown
from conformance.corpus import package
from conformance.errors import CorpusError
from conformance.fileio import printable_name
from conformance.fuzz.runner import default_out
from conformance.fuzz.targets import MAX_LEN
from conformance.fuzz_check.findings import Written, kit_findings, report
from conformance.fuzz_check.hunt import ADAPTER, Hunt, HuntSettings
from conformance.fuzz_check.run import Problem, hunt_all
from conformance.harness import session
from conformance.harness.cases import read_cases
from conformance.harness.consumer import read_consume_cases
from conformance.harness.divergences import Divergence
from conformance.harness.judge import CONSUME
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Implementation
from conformance.jvm.kafka_jars import KafkaJarsUnavailable
from conformance.jvm.runtime import NoCheckout

__all__ = ["against"]

_PROG = "kafka-conformance fuzz"
_HTML = "hunt.html"


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr, flush=True)


def against(args: argparse.Namespace) -> int:
    """The command (SIGTERM unwinds it as Ctrl-C does: every adapter and JVM stopped)."""
    return shared.interruptible_command(_PROG, lambda: _against(args))


def _progress(hunt: Hunt) -> None:
    s = hunt.stats
    found = sum(1 for f in hunt.findings.values() if f.kind == ADAPTER)
    _say(
        f"{printable_name(hunt.impl.name)}: {s.inputs} inputs, {s.executions} run "
        f"({s.per_second:.0f}/s), {found} finding(s), {s.seconds:.0f} s"
    )


def _against(args: argparse.Namespace) -> int:
    if args.target:
        return shared.refuse(_PROG, "--against and --cmd take no TARGET (they fuzz adapters)")
    for out in (args.junit, args.html, args.markdown):
        problem = output_problem(out) if out else None
        if problem:
            return shared.refuse(_PROG, f"cannot write {shown(out)}: {problem}")
    names = shared.implementation_names(args.against)
    if args.against and not names:
        return shared.refuse(_PROG, "--against names no implementation (an empty variable?)")
    try:
        selection = session.implementations(names, args.cmd, log=_say, side=args.side)
        known = session.known_divergences("decode", args.known)
    except (ValueError, NoCheckout, OSError) as exc:
        return shared.refuse(_PROG, exc)
    cases = _cases(bool(known), args.side)
    if not selection.implementations:
        return shared.refuse(_PROG, "no implementation could be built (above)")
    settings = HuntSettings(
        seconds=float(args.time),
        max_inputs=args.max_inputs,
        seed=args.seed,
        max_len=args.max_len or MAX_LEN,
        timeout=float(args.timeout),
        level=args.level,
        minimize_seconds=args.minimize_seconds,
    )
    out = Path(args.out or default_out()) / "against"
    if args.side == CONSUME:  # beside the decoders' report, not over it
        out = out / CONSUME
    table = ProcessTable()
    try:
        hunts, problems = _hunt(args, selection.implementations, settings, known, out, table, cases)
    except KafkaJarsUnavailable as exc:  # the consume side's fake broker needs the definitions
        return shared.refuse(_PROG, f"Kafka's protocol definitions are needed: {exc}")
    doc = report(
        hunts,
        known,
        {"jobs": 1, "timeout": settings.timeout, "output_limit": settings.output_limit,
         "level": settings.level, "seed": settings.seed},
    )  # fmt: skip
    (out / "report.json").parent.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(_summary(hunts, settings, out))
    for name, problem in problems:
        print(f"{_PROG}: {printable_name(name)}: not fuzzed: {problem}", file=sys.stderr)
    outputs = argparse.Namespace(
        json=None, junit=args.junit, html=args.html, markdown=args.markdown
    )
    written = shared.render_reports(_PROG, doc, outputs, _HTML)
    new = [w for _, ws in hunts for w in ws if w.finding.kind == ADAPTER and not w.finding.known]
    failed = bool(new or kit_findings(hunts) or problems or selection.failures)
    code = shared.EXIT_DIVERGED if failed else shared.EXIT_OK
    return code if written else max(code, shared.EXIT_DIVERGED)


def _hunt(
    args: argparse.Namespace,
    impls: Sequence[Implementation],
    settings: HuntSettings,
    known: Sequence[Divergence],
    out: Path,
    table: ProcessTable,
    cases: list[Any],
) -> tuple[list[tuple[Hunt, list[Written]]], list[Problem]]:
    """Every implementation hunted (``fuzz_check.run.hunt_all``), interruptibly."""
    return shared.run_interruptible(
        _PROG,
        table,
        lambda: hunt_all(
            impls,
            settings,
            known,
            out,
            table,
            known_files=args.known,
            cases=cases,
            progress=_progress,
            say=_say,
            side=args.side,
        ),  # fmt: skip
    )


def _cases(wanted: bool, side: str) -> list[Any]:
    """The corpus cases of ``side`` (for the known divergences' signatures), none when there
    are no known divergences or no corpora (an installed kit without the corpora package)."""
    if not wanted:
        return []
    try:
        root = package.corpora_root()
        return list(read_consume_cases(root) if side == CONSUME else read_cases(root))
    except (CorpusError, NoCheckout, OSError) as exc:
        _say(f"the known divergences are matched by case id only: no corpora ({exc})")
        return []


def _line(w: Written) -> list[str]:
    f = w.finding
    state = "KIT" if f.kind != ADAPTER else ("known" if f.known else "NEW")
    known = f" ({', '.join(d.cls for d in f.known)}: {f.known[0].summary})" if f.known else ""
    lines = [
        f"  {state} {f.status}: {printable_name(f.signature)}{known}",
        f"      {printable_name(f.reason)[:200]}",
        f"      hits {f.hits}, input {f.size} -> {f.minimized_size} bytes, "
        f"{'confirmed by Kafka' if f.confirmed else 'NOT confirmed: ' + str(f.unconfirmed)}; "
        f"{shown(w.path)}",
    ]
    if w.reproduce:
        lines.append(f"      reproduce: {w.reproduce}")
    return lines


def _summary(hunts: list[tuple[Hunt, list[Written]]], settings: HuntSettings, out: Path) -> str:
    head = f"{'implementation':24} {'inputs':>8} {'runs':>8} {'run/s':>7} {'unsup':>7} "
    head += f"{'errors':>6} {'findings':>8} {'new':>4} {'kit':>4}"
    lines = [
        f"seed {settings.seed}, {settings.seconds:.0f} s per implementation, level "
        f"{settings.level}",
        head,
    ]
    for hunt, written in hunts:
        s = hunt.stats
        mine = [w for w in written if w.finding.kind == ADAPTER]
        new = sum(1 for w in mine if not w.finding.known)
        kit = len(written) - len(mine)
        lines.append(
            f"{printable_name(hunt.impl.name)[:24]:24} {s.inputs:8} {s.executions:8} "
            f"{s.per_second:7.0f} {s.unsupported:7} {s.errors:6} {len(mine):8} {new:4} {kit:4}"
        )
    for hunt, written in hunts:
        if written:
            lines.append(f"\n{printable_name(hunt.impl.name)}:")
            for w in written:
                lines += _line(w)
        if hunt.oracle_problem:
            lines.append(f"  the oracle failed: {hunt.oracle_problem}")
    lines.append(f"\nfindings and the report: {shown(out)}")
    return "\n".join(lines)
