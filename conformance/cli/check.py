"""``kafka-conformance check``: a third-party decoder (or the built-in adapters) against the
corpora, case by case (``conformance.harness``; docs/adapter-protocol.md, docs/adapters.md)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.cli import check_common as shared
from conformance.cli.common import non_negative_int, shown
from conformance.corpus import package
from conformance.harness import cases as case_source
from conformance.harness import consumer, registry, session, starter
from conformance.harness.consumer import ConsumeSide
from conformance.harness.decode import DecodeSide
from conformance.harness.process import ProcessTable
from conformance.harness.report import model
from conformance.harness.run import Part, report, run_parts
from conformance.harness.runner import PLUGGED, Settings, Side, select
from conformance.jvm.kafka_jars import KafkaJarsUnavailable
from conformance.jvm.runtime import ROOT_ENV, NoCheckout

_PROG = "kafka-conformance check"
_HTML = "conformance-matrix.html"

_EPILOG = f"""\
an adapter is a command speaking docs/adapter-protocol.md: `CMD decode --as memory|file`
reads one input on stdin and prints the canonical JSON document; `CMD capabilities` says what
it supports (optional); `CMD serve` decodes many inputs in one process (optional). On the
consumer side (--side consume), `CMD consume --bootstrap HOST:PORT --topic T ...` runs the
library's real consumer against the kit's fake broker and prints what it delivered; Kafka's
own KafkaConsumer's delivery is the reference (corpora/consume/).

per case: pass, fail (a field-level diff against Kafka's verdict), unsupported (outside the
declared capabilities) or error (crash, non-zero exit, timeout, output over the limit, invalid
JSON). A hung adapter's whole process group is killed; the run always goes on.

built-in adapters (adapters/*/adapter.toml) are built on first use, with pinned library
versions, into .cache/adapters/ (an installed kit without a checkout: the user's cache; it
carries the sources of the java adapters and the kit's own, and lists the others as needing
a checkout); `--list` shows which can be built here and what each needs. Their known
divergences (adapters/*/divergences.toml) are reported with their class and do not fail;
--known FILE gives an outside adapter the same (its entries' impl: the name it declares).

exit codes:
  0   every case passed, was unsupported, or is a known divergence
  1   an unexplained fail or error, a stale known divergence (one that explains nothing in a
      run over every case, or over every case it names), or a built-in adapter failed to build
  2   usage error (no --impl/--cmd, an --impl naming nothing, unknown implementation, no
      case matched, report path, a --from-json file that is not a valid report), or
      corpora that cannot be used: a corpora package whose files do not match its recorded
      digest or of another version than the kit, a case's file missing or garbled, a FIFO
      or device in the corpora (refused before any case runs)
  130 interrupted by Ctrl-C, 143 by SIGTERM (every build step, adapter process and fake
      broker was stopped)

examples:
  {_PROG} --list
  {_PROG} --impl java
  {_PROG} --impl kafka-python --impl franz-go --cases 'crafted/v2-*' --html m.html
  {_PROG} --impl all --json report.json --junit report.xml --html report.html
  {_PROG} --cmd "python3 my_adapter.py" --timeout 5 --jobs 4
  {_PROG} --cmd "./my-adapter" --known my-adapter-divergences.toml --junit report.xml
  {_PROG} --impl librdkafka                  # a real consumer through the fake broker
  {_PROG} --impl java,kafka-python --side consume --cases 'consume/txn-*'
  {_PROG} --impl kafka-python --side consume --broker-max-version 3 --cases consume/v1-snappy
  {_PROG} --init-adapter go my-adapter
  {_PROG} --init-adapter rust my-consumer --side consume
  {_PROG} --init-adapter python my-producer --side produce
  {_PROG} --from-json report.json --markdown matrix.md
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = shared.add_command(
        sub,
        "check",
        "run third-party decoders and consumers (adapters) against the corpora",
        "Run decoders against every case of the corpora (crafted, golden, regressions), and "
        "consumers against the consume scenarios, and compare each result with Kafka's.",
        _EPILOG,
    )
    shared.add_implementation_options(p, "an adapter", "adapters")
    p.add_argument(
        "--cases",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the cases whose id matches (repeatable), e.g. 'crafted/v2-*', "
        "'kafka-3.9.2-kraft/*', '*@file'",
    )
    p.add_argument(
        "--corpora",
        metavar="DIR",
        help=f"the corpora directory (default: the checkout's corpora/ (${ROOT_ENV}), else the "
        f"installed {package.DISTRIBUTION} package: pip install 'kafka-conformance[corpora]')",
    )
    shared.add_run_options(
        p,
        jobs=max(1, os.cpu_count() or 1),
        jobs_help="cases run at once per implementation (default: the number of CPUs)",
        timeout=20.0,
        timeout_help="wall-clock seconds per case (default 20)",
        output_limit=64 << 20,
        output_help="what an adapter may print for one case (default 64MiB)",
    )
    p.add_argument(
        "--side",
        choices=[*starter.SIDES, *PLUGGED],
        default=None,
        help="decode: the adapters' offline decoders on the corpora (the default); consume: "
        "their real consumers reading the consume scenarios through the fake broker "
        "(docs/fake-broker.md). Without --side, a built-in that only consumes (librdkafka) "
        "runs its consumer, and --impl all runs every decoder and every consumer. With "
        "--init-adapter, the side of the starter (produce: a producer and encoder adapter, "
        "run by check-producer)",
    )
    shared.add_level_option(
        p,
        "delivery (what a consumer notices: the outcome, the error's class or family as "
        "declared, every batch and record delivered), wire (also every batch header field), "
        "java (also Kafka's exact error texts, where error_classes is exact)",
    )
    p.add_argument(
        "--broker-max-version",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="consumer side: the fake broker claims no API version above N (ApiVersions), "
        "so a consumer that negotiates speaks older Fetch, Metadata, ... versions; Fetch v0-v3 "
        "exist only for scenarios without magic 2 batches (default: every version of Kafka "
        "3.9's definitions)",
    )
    p.add_argument(
        "--init-adapter",
        nargs=2,
        metavar=("LANG", "DIR"),
        help=f"write a starter adapter in LANG ({', '.join(starter.starters())}) to the new "
        "directory DIR, and say how to build and run it: a decoder, or with --side consume "
        'or produce a consumer or a producer (docs/adapter-protocol.md, "Writing an adapter '
        'in 15 minutes", "A consumer adapter in 15 minutes", "A producer adapter in 15 '
        'minutes")',
    )
    shared.add_report_options(p, "docs/conformance-matrix.md")
    p.set_defaults(func=_cmd_check)


#: per starter side: what the user writes in the hook, how the adapter is then checked
#: ({cmd}: its command line, shell-quoted), and the section of docs/adapter-protocol.md
_STARTER_STEPS = {
    "decode": (
        "the call that decodes",
        "kafka-conformance check --cmd {cmd} --cases 'crafted/v2-*'",
        "Writing an adapter in 15 minutes",
    ),
    "consume": (
        "the consumer's loop",
        "kafka-conformance check --side consume --cmd {cmd} --cases 'consume/v2-*'",
        "A consumer adapter in 15 minutes",
    ),
    "produce": (
        "the producer's send loop and the batch builder",
        "kafka-conformance check-producer --cmd {cmd} --scenarios 'codec-*'",
        "A producer adapter in 15 minutes",
    ),
}


def _init_adapter(language: str, target: str, side: str) -> int:
    try:
        directory = starter.target_directory(target)
        made = starter.init_adapter(language, directory, side)
    except (starter.StarterError, OSError) as exc:
        return shared.refuse(_PROG, exc)
    where = shown(directory)
    call, check, section = _STARTER_STEPS[side]
    lines = [
        f"wrote a {language} {side} adapter to {where}",
        f"  1. edit {shown(directory / made.hook)}: your library's capabilities, and {call} "
        "(every rule is commented there)",
    ]
    step = 2
    if made.build:
        builds = " && ".join(shlex.join(s) for s in made.build)
        lines.append(f"  {step}. build: cd {shlex.quote(str(directory))} && {builds}")
        step += 1
    command = shlex.quote(made.command_line(directory))
    lines.append(f"  {step}. check: {check.format(cmd=command)}")
    lines.append(f'  the protocol: docs/adapter-protocol.md ("{section}")')
    missing = made.missing_tools()
    if missing:
        lines.append(f"  note: not on PATH here: {', '.join(missing)}")
    print("\n".join(lines))
    return shared.EXIT_OK


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)


def _cmd_check(args: argparse.Namespace) -> int:
    # SIGTERM unwinds like Ctrl-C: the build step, the adapters and the fake brokers are stopped
    return shared.interruptible_command(_PROG, lambda: _check(args))


def _check(args: argparse.Namespace) -> int:
    if args.init_adapter:
        return _init_adapter(*args.init_adapter, args.side or starter.SIDES[0])
    if args.side == "produce":
        _say("--side produce is for --init-adapter; producers are run by check-producer")
        return shared.EXIT_USAGE
    if args.side in PLUGGED:
        return _check_plugged(args, PLUGGED[args.side])
    listed = (args.side,) if args.side else ("decode", "consume")
    done = shared.before_run(_PROG, args, listed, model.CHECK_SIDES, _HTML)
    if done is not None:
        return done
    try:
        corpora = Path(args.corpora) if args.corpora else package.corpora_root()
        corpus = package.identity(corpora)  # every file hashed, non-regular ones refused
        decoders, consumers = _sides(shared.implementation_names(args.impl), args.side)
        consume_commands = args.cmd if args.side == "consume" else []
        decode_commands = [] if args.side == "consume" else args.cmd
        selection = session.implementations(decoders, decode_commands, log=_say)
        consuming = session.implementations(consumers, consume_commands, log=_say, side="consume")
        known = session.known_divergences("decode", args.known)
        every = case_source.read_cases(corpora) if selection.implementations else []
        every_consume = consumer.read_consume_cases(corpora) if consuming.implementations else []
        # the ids of both sides' cases, run or not: an entry for the side that is not run (a
        # name covers an adapter's decoder and its consumer) is not stale
        decode_ids = [c.id for c in every or case_source.read_cases(corpora)]
        consume_ids = [c.id for c in every_consume or consumer.read_consume_cases(corpora)]
    except (ValueError, NoCheckout, OSError) as exc:
        return shared.refuse(_PROG, exc)
    selected = select(every, args.cases)
    selected_consume = select(every_consume, args.cases)
    try:
        case_source.check_readable([*selected, *selected_consume])
    except ValueError as exc:  # CorpusError: a damaged corpora directory, before the run
        return shared.refuse(_PROG, exc)
    if not selected and not selected_consume:
        matched = " ".join(args.cases) or "(the corpora are empty)"
        return shared.refuse(_PROG, f"no case matches {matched}")
    settings = Settings(jobs=args.jobs, timeout=args.timeout, output_limit=args.output_limit)
    parts = [
        Part(DecodeSide(settings, args.level), selection.implementations, selected, decode_ids),
        Part(
            ConsumeSide(settings, version_cap=args.broker_max_version, level=args.level),
            consuming.implementations,
            selected_consume,
            consume_ids,
        ),
    ]
    table = ProcessTable()
    progress = shared.progress_display(args.quiet)
    try:  # Interrupted: interruptible_command
        runs = shared.run_interruptible(_PROG, table, lambda: run_parts(parts, table, progress))
    except KafkaJarsUnavailable as exc:  # the consume side's definitions (kafka-clients jar)
        return shared.refuse(_PROG, exc)
    doc = report(
        parts, runs, known, globs=args.cases, builds=selection.builds | consuming.builds,
        corpus=corpus,
    )  # fmt: skip
    failures = selection.failures + consuming.failures
    return shared.finish(_PROG, doc, args, _HTML, failures, known)


def _check_plugged(args: argparse.Namespace, factory: Callable[[Settings], Side[Any, Any]]) -> int:
    """``check --side NAME`` of a side added as a plug-in (``runner.plug``): its cases
    through ``--cmd`` adapters, the same report as every side's."""
    settings = Settings(jobs=args.jobs, timeout=args.timeout, output_limit=args.output_limit)
    side = factory(settings)
    if args.list or args.impl:
        _say(f"--side {side.name} runs --cmd adapters only (it has no built-in adapters)")
        return shared.EXIT_USAGE
    done = shared.before_run(_PROG, args, (), (side.name,), _HTML)
    if done is not None:
        return done
    try:
        corpora = Path(args.corpora) if args.corpora else package.corpora_root()
        every = list(side.read_cases(corpora))
        selection = session.implementations([], args.cmd, log=_say)
        known = session.known_divergences(side.name, args.known)
    except (ValueError, NoCheckout, OSError) as exc:
        return shared.refuse(_PROG, exc)
    selected = select(every, args.cases)
    if not selected:
        return shared.refuse(_PROG, f"no case matches {' '.join(args.cases)}")
    part = Part(side, selection.implementations, selected, [c.id for c in every])
    table = ProcessTable()
    progress = shared.progress_display(args.quiet, title=side.title)
    runs = shared.run_interruptible(_PROG, table, lambda: run_parts([part], table, progress))
    doc = report([part], runs, known, globs=args.cases)
    return shared.finish(_PROG, doc, args, _HTML, [], known)


def _sides(names: list[str], side: str | None) -> tuple[list[str], list[str]]:
    """The built-in names run as decoders and as consumers: ``--side`` decides; without it a
    name with a decoder decodes, a name with only a consumer consumes, and ``all`` is every
    decoder and every consumer."""
    if side == "decode" or not names:  # --cmd only: no registry (also outside a checkout)
        return names, []
    if side == "consume":
        return [], names
    decoders = {a.name for a in registry.adapters(side="decode")} | {"all"}
    consumers = {a.name for a in registry.adapters(side="consume")} | {"all"}
    return (
        [n for n in names if n in decoders or n not in consumers],
        [n for n in names if n == "all" or (n not in decoders and n in consumers)],
    )
