"""``kafka-conformance check``: a third-party decoder (or the built-in adapters) against the
corpora, case by case (``conformance.harness``; docs/adapter-protocol.md, docs/adapters.md)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.cli.common import (
    byte_size,
    non_negative_int,
    output_problem,
    positive_int,
    seconds,
    shown,
    write_text,
)
from conformance.harness import cases as case_source
from conformance.harness import consumer, registry, session, starter
from conformance.harness.process import ProcessTable
from conformance.harness.report import html, junit, markdown, model, terminal
from conformance.harness.runner import (
    Settings,
)
from conformance.host.progress import Progress
from conformance.host.sessions import sigterm_guarded
from conformance.jvm.runtime import ROOT_ENV, NoCheckout

_PROG = "kafka-conformance check"
EXIT_OK, EXIT_DIVERGED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
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
versions, into .cache/adapters/; `--list` shows which can be built here. Their known
divergences (adapters/*/divergences.toml) are reported with their class and do not fail;
--known FILE gives an outside adapter the same (its entries' impl: the name it declares).

exit codes:
  0   every case passed, was unsupported, or is a known divergence
  1   an unexplained fail or error, a stale known divergence (one that explains nothing in a
      run over every case, or over every case it names), or a built-in adapter failed to build
  2   usage error (no --impl/--cmd, unknown implementation, no case matched, report path)
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
  {_PROG} --from-json report.json --markdown matrix.md
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "check",
        help="run third-party decoders (adapters) against the corpora",
        description="Run decoders against every case of the corpora (crafted, golden, "
        "regressions) and compare each result with Kafka's verdict.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_implementation_options(p, "an adapter", "adapters")
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
        help=f"the corpora directory (default: the checkout's corpora/; ${ROOT_ENV})",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        default=max(1, os.cpu_count() or 1),
        help="cases run at once per implementation (default: the number of CPUs)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=20.0,
        metavar="S",
        help="wall-clock seconds per case (default 20); then the adapter's process group is killed",
    )
    p.add_argument(
        "--output-limit",
        type=byte_size,
        default=64 << 20,
        metavar="SIZE",
        help="what an adapter may print for one case (default 64MiB)",
    )
    p.add_argument(
        "--side",
        choices=("decode", "consume"),
        default=None,
        help="decode: the adapters' offline decoders on the corpora (the default); consume: "
        "their real consumers reading the consume scenarios through the fake broker "
        "(docs/fake-broker.md). Without --side, a built-in that only consumes (librdkafka) "
        "runs its consumer, and --impl all runs every decoder and every consumer",
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
        "directory DIR, and say how to build and run it (docs/adapter-protocol.md, "
        '"Writing an adapter in 15 minutes")',
    )
    add_report_options(p, "docs/conformance-matrix.md")
    p.set_defaults(func=_cmd_check)


def add_implementation_options(p: argparse.ArgumentParser, one: str, many: str) -> None:
    """``--impl``, ``--cmd`` and ``--list`` of ``check`` and ``check-producer`` (``one``: "an
    adapter", ``many``: "adapters")."""
    p.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{one}, built in (repeat, or comma-separate; 'all' = every one buildable here)",
    )
    p.add_argument(
        "--cmd",
        action="append",
        default=[],
        metavar="CMD",
        help=f"{one}'s command line (shell-quoted; repeat for several)",
    )
    p.add_argument(
        "--known",
        action="append",
        default=[],
        metavar="FILE",
        help="known divergences of --cmd adapters, in the format of the built-ins' files "
        "(docs/adapters.md): each entry's impl is the name the adapter declares; entries "
        "that explain nothing are reported stale and fail the run (repeatable)",
    )
    p.add_argument(
        "--list", action="store_true", help=f"list the built-in {many} and whether they build here"
    )


def add_report_options(p: argparse.ArgumentParser, matrix: str) -> None:
    """The report outputs of ``check`` and ``check-producer``, and ``--quiet``."""
    p.add_argument(
        "--json", metavar="OUT", help="write the JSON report (kafka-conformance/check/1)"
    )
    p.add_argument(
        "--junit", metavar="OUT", help="write JUnit XML (one testcase per implementation x case)"
    )
    p.add_argument("--html", metavar="OUT", help="write the self-contained HTML matrix")
    p.add_argument("--markdown", metavar="OUT", help=f"write the Markdown matrix ({matrix})")
    p.add_argument("--from-json", metavar="REPORT", help="render a saved JSON report (no run)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def list_adapters(prog: str, side: str) -> int:
    """``--list``: the built-in implementations of ``side`` and whether they build here."""
    try:
        found = registry.adapters(side=side)
    except NoCheckout as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    rows = [["implementation", "library", "version", "registry", "sides", "status"]]
    for a in found:
        state, why = registry.availability(a)
        rows.append(
            [
                a.name,
                a.library,
                a.version,
                a.registry,
                ",".join(a.sides),
                f"{state}: {why}" if state != "built" else "built",
            ]
        )
    print("\n".join(terminal.table(rows)))
    return EXIT_OK


def _progress(quiet: bool) -> Callable[[str, int, int, Any], None]:
    """The runner's progress callback: one display per implementation (``host.progress``)."""
    shown: dict[str, Progress] = {}

    def update(impl: str, done: int, total: int, counts: Any) -> None:
        if quiet:
            return
        bar = shown.get(impl)
        if bar is None:
            bar = shown[impl] = Progress(impl, total)
        bar.update(
            done,
            f"pass {counts['pass']}  fail {counts['fail']}  "
            f"unsupported {counts['unsupported']}  error {counts['error']}",
        )
        if done >= total:
            bar.close()

    return update


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)


def render_reports(
    prog: str, report: dict[str, Any], args: argparse.Namespace, html_name: str
) -> bool:
    """Write the report outputs asked for (:func:`add_report_options`); False if one failed."""
    ok = True
    if args.json:
        ok &= write_text(prog, args.json, json.dumps(report, indent=1) + "\n")
    if args.junit:
        ok &= write_text(prog, args.junit, junit.render(report).decode("utf-8"))
    if args.html:
        ok &= write_text(prog, args.html, html.render(report))
    if args.markdown:
        name = Path(args.html).name if args.html else html_name
        ok &= write_text(prog, args.markdown, markdown.render(report, html_name=name))
    return ok


def report_outputs_problem(prog: str, args: argparse.Namespace) -> bool:
    """True (after saying why) when a report output cannot be written."""
    for out in (args.json, args.junit, args.html, args.markdown):
        problem = output_problem(out) if out else None
        if problem:
            print(f"{prog}: cannot write {shown(out)}: {problem}", file=sys.stderr)
            return True
    return False


def read_saved_report(prog: str, path: str, side: str) -> dict[str, Any] | None:
    """``--from-json``: a saved report of ``side`` (None, after saying why, if it is not)."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"{prog}: cannot read {shown(path)}: {exc}", file=sys.stderr)
        return None
    if report.get("format") != model.FORMAT or report.get("side", model.DECODE) != side:
        print(f"{prog}: {shown(path)} is not a {model.FORMAT} {side} report", file=sys.stderr)
        return None
    return report


def before_run(
    prog: str, args: argparse.Namespace, registry_side: str, report_side: str, html_name: str
) -> int | None:
    """What ``check`` and ``check-producer`` do before a run: ``--list``, the output paths,
    ``--from-json``, and that an implementation was given; an exit code, or None to run."""
    if args.list:
        return list_adapters(prog, registry_side)
    if report_outputs_problem(prog, args):
        return EXIT_USAGE
    if args.from_json:
        report = read_saved_report(prog, args.from_json, report_side)
        if report is None:
            return EXIT_USAGE
        print(terminal.summary(report))
        return EXIT_OK if render_reports(prog, report, args, html_name) else EXIT_DIVERGED
    if not args.impl and not args.cmd:
        print(f"{prog}: give --impl NAME or --cmd CMD (see --list and --help)", file=sys.stderr)
        return EXIT_USAGE
    return None


def finish(
    prog: str,
    report: dict[str, Any],
    args: argparse.Namespace,
    html_name: str,
    build_failures: list[str],
) -> int:
    """Print the summary and the unexplained problems, write the reports asked for; the exit
    code of ``check`` and ``check-producer``."""
    print(terminal.summary(report))
    names = {i["name"] for i in report["implementations"]}
    for known_file in getattr(args, "known", []):
        others = sorted(
            {d["impl"] for d in report["divergences"] if d["source"] == str(Path(known_file))}
            - names
        )
        if others:
            print(
                f"{prog}: {shown(known_file)}: entries for {', '.join(others)}, which this run "
                f"has no implementation of (its names: {', '.join(sorted(names))})",
                file=sys.stderr,
            )
    details = terminal.problems(report)
    if details:
        print("\n" + details)
    for name in build_failures:
        print(f"{prog}: {name}: not run (its build failed, above)", file=sys.stderr)
    written = render_reports(prog, report, args, html_name)
    code = exit_code(report, build_failures)
    return code if written else max(code, EXIT_DIVERGED)


def exit_code(report: dict[str, Any], build_failures: list[str]) -> int:
    if model.unknown_problems(report) or report["stale"] or build_failures:
        return EXIT_DIVERGED
    return EXIT_OK


def _init_adapter(language: str, target: str) -> int:
    directory = Path(target).resolve()
    try:
        made = starter.init_adapter(language, directory)
    except (starter.StarterError, OSError) as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    where = shown(directory)
    lines = [
        f"wrote a {language} adapter to {where}",
        f"  1. edit {shown(directory / made.hook)}: your library's capabilities, and the call "
        "that decodes (every rule is commented there)",
    ]
    step = 2
    if made.build:
        builds = " && ".join(shlex.join(s) for s in made.build)
        lines.append(f"  {step}. build: cd {shlex.quote(str(directory))} && {builds}")
        step += 1
    command = shlex.quote(made.command_line(directory))
    lines.append(f"  {step}. check: kafka-conformance check --cmd {command} --cases 'crafted/v2-*'")
    lines.append('  the protocol: docs/adapter-protocol.md ("Writing an adapter in 15 minutes")')
    missing = made.missing_tools()
    if missing:
        lines.append(f"  note: not on PATH here: {', '.join(missing)}")
    print("\n".join(lines))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    # SIGTERM unwinds like Ctrl-C: the build step, the adapters and the fake brokers are stopped
    with sigterm_guarded():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    if args.init_adapter:
        return _init_adapter(*args.init_adapter)
    done = before_run(_PROG, args, "decode", model.DECODE, _HTML)
    if done is not None:
        return done
    try:
        corpora = Path(args.corpora) if args.corpora else None
        names = [n.strip() for spec in args.impl for n in spec.split(",") if n.strip()]
        decoders, consumers = _sides(names, args.side)
        consume_commands = args.cmd if args.side == "consume" else []
        decode_commands = [] if args.side == "consume" else args.cmd
        selection = session.implementations(decoders, decode_commands, log=_say)
        consuming = session.implementations(consumers, consume_commands, log=_say, side="consume")
        known = session.known_divergences("decode", args.known)
        every = case_source.read_cases(corpora) if selection.implementations else []
        every_consume = consumer.read_consume_cases(corpora) if consuming.implementations else []
    except (ValueError, NoCheckout, OSError) as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    selected = case_source.select(every, args.cases)
    selected_consume = case_source.select(every_consume, args.cases)
    if not selected and not selected_consume:
        print(
            f"{_PROG}: no case matches {' '.join(args.cases) or '(the corpora are empty)'}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    settings = Settings(jobs=args.jobs, timeout=args.timeout, output_limit=args.output_limit)
    progress = _progress(args.quiet)
    table = ProcessTable()
    try:
        runs = session.run_all(selection.implementations, selected, settings, table, progress)
        if consuming.implementations and selected_consume:
            runs += session.run_consumers(
                consuming.implementations,
                selected_consume,
                settings,
                table,
                progress,
                version_cap=args.broker_max_version,
            )
    except KeyboardInterrupt:
        table.kill_all()
        print(f"\n{_PROG}: interrupted; every adapter process was stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        table.kill_all()
    report = model.build(
        runs,
        model.case_documents(selected) | consumer.consume_case_documents(selected_consume),
        settings,
        known,
        complete=len(selected) == len(every) and len(selected_consume) == len(every_consume),
        globs=args.cases,
        builds=selection.builds | consuming.builds,
        every_case=[c.id for c in every] + [c.id for c in every_consume],
    )
    return finish(_PROG, report, args, _HTML, selection.failures + consuming.failures)


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
