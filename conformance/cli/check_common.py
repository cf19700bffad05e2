"""What ``check``, ``check-producer`` and ``check-broker`` share: the implementation and
report options, the built-in list, ``--from-json`` (a saved report of either format), the
progress display, the run under Ctrl-C/SIGTERM, and the end of every run (the summary, the
findings, the unexplained problems, the report files, the exit code).

Not a command of its own (``cli/__init__.py`` lists the commands). The run itself is the
harness's: each command builds its side (``runner.Side``) from its options and hands its
parts to ``harness.run`` (``run_parts``, ``report``); a command keeps only its options.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from conformance.cli.common import (
    add_command,
    byte_size,
    output_problem,
    positive_int,
    seconds,
    shown,
    write_text,
)
from conformance.fileio import printable_name
from conformance.harness import divergences as dv
from conformance.harness import registry
from conformance.harness.divergences import Divergence
from conformance.harness.process import ProcessTable
from conformance.harness.report import html, junit, markdown, model, terminal
from conformance.host.progress import Progress
from conformance.host.sessions import TerminatedBySignal, sigterm_guarded
from conformance.jvm import runtime
from conformance.jvm.runtime import NoCheckout
from conformance.levels import DEFAULT_LEVEL, LEVELS

__all__ = [
    "EXIT_DIVERGED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Interrupted",
    "add_command",
    "add_implementation_options",
    "add_report_options",
    "add_run_options",
    "before_run",
    "finish",
    "implementation_names",
    "interruptible_command",
    "list_adapters",
    "progress_display",
    "refuse",
    "run_interruptible",
]

EXIT_OK, EXIT_DIVERGED, EXIT_USAGE = 0, 1, 2
#: interrupted by Ctrl-C (128 + SIGINT) or by SIGTERM (128 + SIGTERM)
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

T = TypeVar("T")


def add_implementation_options(p: argparse.ArgumentParser, one: str, many: str) -> None:
    """``--impl``, ``--cmd``, ``--known`` and ``--list`` (``one``: "an adapter", ``many``:
    "adapters")."""
    repeatable = {
        "--impl": ("NAME", f"{one}, built in (repeat, or comma-separate; 'all' = every one "
                   "buildable here)"),
        "--cmd": ("CMD", f"{one}'s command line (shell-quoted; repeat for several)"),
        "--known": ("FILE", "known divergences of --cmd adapters, in the format of the "
                    "built-ins' files (docs/adapters.md): each entry's impl is the name the "
                    "adapter declares; entries that explain nothing are reported stale and "
                    "fail the run (repeatable)"),
    }  # fmt: skip
    for flag, (metavar, text) in repeatable.items():
        p.add_argument(flag, action="append", default=[], metavar=metavar, help=text)
    p.add_argument(
        "--list",
        action="store_true",
        help=f"list the built-in {many}, what each needs and whether it builds here",
    )


def add_run_options(
    p: argparse.ArgumentParser,
    *,
    jobs: int,
    jobs_help: str,
    timeout: float | None,
    timeout_help: str,
    output_limit: int,
    output_help: str,
) -> None:
    """``--jobs``, ``--timeout`` and ``--output-limit``: how adapters run."""
    p.add_argument("--jobs", "-j", type=positive_int, default=jobs, help=jobs_help)
    p.add_argument(
        "--timeout",
        type=seconds,
        default=timeout,
        metavar="S",
        help=f"{timeout_help}; then the adapter's process group is killed",
    )
    p.add_argument(
        "--output-limit", type=byte_size, default=output_limit, metavar="SIZE", help=output_help
    )


def add_level_option(p: argparse.ArgumentParser, meaning: str) -> None:
    """``--level`` (``conformance.levels``, the same on every side): what a case must reach to
    pass; ``meaning``: what each level asks on this side."""
    p.add_argument(
        "--level",
        choices=LEVELS,
        default=DEFAULT_LEVEL,
        help=f"what a case must reach to pass (default %(default)s): {meaning}; differences "
        "above the level are findings, reported and counted, not failures",
    )


def add_report_options(p: argparse.ArgumentParser, matrix: str) -> None:
    """The report outputs and ``--quiet``."""
    p.add_argument(
        "--json", metavar="OUT", help="write the JSON report (kafka-conformance/check/2)"
    )
    p.add_argument(
        "--junit", metavar="OUT", help="write JUnit XML (one testcase per implementation x case)"
    )
    p.add_argument("--html", metavar="OUT", help="write the self-contained HTML matrix")
    p.add_argument("--markdown", metavar="OUT", help=f"write the Markdown matrix ({matrix})")
    p.add_argument("--from-json", metavar="REPORT", help="render a saved JSON report (no run)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def refuse(prog: str, problem: object) -> int:
    """Say why ``prog`` does not run (``<prog>: <problem>`` on stderr): :data:`EXIT_USAGE`."""
    print(f"{prog}: {problem}", file=sys.stderr)
    return EXIT_USAGE


def implementation_names(specs: Sequence[str]) -> list[str]:
    """``--impl`` values, repeated or comma-separated, as names."""
    return [n.strip() for spec in specs for n in spec.split(",") if n.strip()]


def list_adapters(prog: str, sides: Sequence[str]) -> int:
    """``--list``: the built-in implementations of ``sides``, what each needs (a checkout,
    when an installed kit does not carry its sources; the tools of its toolchain) and whether
    it builds here."""
    try:
        found = [a for side in sides for a in registry.adapters(side=side)]
    except NoCheckout as exc:
        return refuse(prog, exc)
    rows = [["implementation", "library", "version", "registry", "sides", "needs", "status"]]
    for a in found:
        state, why = registry.availability(a)
        needs = ["a checkout"] if registry.missing_sources(a) else []
        rows.append(
            [
                a.name,
                a.library,
                a.version,
                a.registry,
                ",".join(a.sides),
                ", ".join(needs + list(a.toolchain)) or "-",
                f"{state}: {why}" if state != "built" else "built",
            ]
        )
    print("\n".join(terminal.table(rows)))
    return EXIT_OK


ProgressCallback = Callable[[str, int, int, Counter[str]], None]


def progress_display(quiet: bool, title: str | None = None) -> ProgressCallback:
    """The runs' progress callback ``(impl, done, total, counts)``: one display per
    implementation, or with ``title`` one for the whole run (``done``/``total`` counted over
    every implementation). Names are shown escaped: an adapter names itself, and its name
    must not reach the terminal as control sequences."""
    shown_bars: dict[str, Progress] = {}

    def update(impl: str, done: int, total: int, counts: Counter[str]) -> None:
        if quiet:
            return
        key = title or impl
        bar = shown_bars.get(key)
        if bar is None:
            bar = shown_bars[key] = Progress(printable_name(key), total)
        detail = "  ".join(f"{s} {counts[s]}" for s in ("pass", "fail", "unsupported", "error"))
        bar.update(done, f"{detail}  last: {printable_name(impl)}" if title else detail)
        if done >= total:
            bar.close()

    return update


class Interrupted(Exception):
    """The run was interrupted (Ctrl-C or SIGTERM) and everything it started was stopped;
    ``code`` is the command's exit code (:data:`EXIT_INTERRUPTED`, :data:`EXIT_TERMINATED`)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _interruption(exc: BaseException) -> tuple[int, str]:
    """The exit code of an interruption and what interrupted."""
    if isinstance(exc, TerminatedBySignal):
        return 128 + exc.signum, "SIGTERM"
    return EXIT_INTERRUPTED, "Ctrl-C"


def run_interruptible(prog: str, table: ProcessTable, work: Callable[[], T]) -> T:
    """``work()``, with every adapter process of ``table`` stopped when it ends, fails or is
    interrupted. Ctrl-C, and SIGTERM (raised by :func:`interruptible_command`'s guard), unwind
    ``work`` (its ``finally`` blocks stop its brokers and remove its files) and are
    :class:`Interrupted` after saying so."""
    try:
        return work()
    except (KeyboardInterrupt, TerminatedBySignal) as exc:
        table.kill_all()
        code, what = _interruption(exc)
        print(f"\n{prog}: interrupted ({what}); every adapter process was stopped", file=sys.stderr)
        raise Interrupted(code) from None
    finally:
        table.kill_all()


def interruptible_command(prog: str, command: Callable[[], int]) -> int:
    """Run a command (``check``, ``check-producer``): SIGTERM unwinds it as Ctrl-C does
    (``host.sessions.sigterm_guarded``: raised as an exception, so every ``finally`` and
    context manager stops what it started: build steps, adapters, brokers, proxies, temporary
    directories); the exit code of an interruption is 130 (Ctrl-C) or 143 (SIGTERM), also
    outside :func:`run_interruptible` (a build step, the capabilities)."""
    with sigterm_guarded():
        try:
            return command()
        except Interrupted as exc:
            return exc.code
        except (KeyboardInterrupt, TerminatedBySignal) as exc:
            code, what = _interruption(exc)
            print(f"\n{prog}: interrupted ({what})", file=sys.stderr)
            return code


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


def _outputs_problem(prog: str, args: argparse.Namespace) -> bool:
    """True (after saying why) when a report output cannot be written."""
    for out in (args.json, args.junit, args.html, args.markdown):
        problem = output_problem(out) if out else None
        if problem:
            print(f"{prog}: cannot write {shown(out)}: {problem}", file=sys.stderr)
            return True
    return False


def _not_json(text: str) -> float:
    raise ValueError(f"{text} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _saved_report(prog: str, path: str, sides: Sequence[str]) -> dict[str, Any] | None:
    """``--from-json``: a saved report of one of ``sides``, validated before any view renders
    it (:func:`model.report_problem`); None, after saying why, if it is not one."""
    try:
        report = json.loads(
            Path(path).read_text(encoding="utf-8"),
            parse_constant=_not_json,
            parse_float=_finite,
        )
    except RecursionError:
        print(f"{prog}: cannot read {shown(path)}: nested too deeply", file=sys.stderr)
        return None
    except (OSError, ValueError) as exc:
        print(f"{prog}: cannot read {shown(path)}: {exc}", file=sys.stderr)
        return None
    if isinstance(report, dict) and report.get("format") in model.FORMATS:
        report = model.upgraded(report)
    if (
        not isinstance(report, dict)
        or report.get("format") != model.FORMAT
        or report.get("side", model.DECODE) not in sides
    ):
        print(
            f"{prog}: {shown(path)} is not a {model.FORMAT} report of {' or '.join(sides)}",
            file=sys.stderr,
        )
        return None
    problem = model.report_problem(report)
    if problem is not None:
        print(
            f"{prog}: {shown(path)} is not a valid {model.FORMAT} report: "
            f"{printable_name(problem)}",
            file=sys.stderr,
        )
        return None
    return report


#: the options naming what a run judges: built-in by name, and given by the user
IMPL_OPTIONS = (("impl", "--impl NAME"), ("cmd", "--cmd CMD"))


def _implementations_problem(
    prog: str, args: argparse.Namespace, options: Sequence[tuple[str, str]] = IMPL_OPTIONS
) -> bool:
    """True (after saying why) when no implementation is given, or a value of the first of
    ``options`` (``--impl``: (attribute, how it is written)) names none (``--impl "$IMPLS"``
    with the variable empty: a run of nothing would pass)."""
    (named, named_usage), *_ = options
    flag = named_usage.split()[0]
    empty = [value for value in getattr(args, named) if not implementation_names([value])]
    if empty:
        print(
            f"{prog}: {flag} {shlex.quote(empty[0])} names no implementation (an empty "
            "variable?); give a name, names separated by commas, or 'all' (see --list)",
            file=sys.stderr,
        )
        return True
    if not any(getattr(args, attr) for attr, _ in options):
        usage = " or ".join(u for _, u in options)
        print(f"{prog}: give {usage} (see --list and --help)", file=sys.stderr)
        return True
    return False


def before_run(
    prog: str,
    args: argparse.Namespace,
    registry_sides: Sequence[str],
    report_sides: Sequence[str],
    html_name: str,
    options: Sequence[tuple[str, str]] = IMPL_OPTIONS,
) -> int | None:
    """What runs before the work: ``--list``, the output paths, ``--from-json``, and that
    implementations were given (``options``: :data:`IMPL_OPTIONS`, or a command's own),
    each value of the first naming one at least; an exit code, or None to run."""
    if args.list:
        return list_adapters(prog, registry_sides)
    if _outputs_problem(prog, args):
        return EXIT_USAGE
    if args.from_json:
        report = _saved_report(prog, args.from_json, report_sides)
        if report is None:
            return EXIT_USAGE
        print(terminal.summary(report))
        return EXIT_OK if render_reports(prog, report, args, html_name) else EXIT_DIVERGED
    if _implementations_problem(prog, args, options):
        return EXIT_USAGE
    return None


def needs_checkout(prog: str, what: str) -> int | None:
    """None when a checkout is found; else say that ``what`` needs one (e.g. the built-in
    brokers' sources in adapters/, which the wheel does not carry: Kafka's jars, the oracles
    and the adapters of ``jvm.project_files.PROJECTS`` need none) and return the usage exit
    code."""
    try:
        runtime.repo_root()
    except runtime.NoCheckout:
        print(
            f"{prog}: {runtime.no_checkout_message(what)}; the decode and consume sides of "
            "`check` need none (docs/for-library-maintainers.md)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return None


def finish(
    prog: str,
    report: dict[str, Any],
    args: argparse.Namespace,
    html_name: str,
    build_failures: list[str],
    known: Sequence[Divergence] = (),
) -> int:
    """Print the summary, the findings and the unexplained problems, write the reports asked
    for; the exit code (0: every result passed, was unsupported or is known; 1: otherwise)."""
    print(terminal.summary(report))
    names = {i["name"] for i in report["implementations"]}
    for known_file in getattr(args, "known", []):
        mine = [d for d in known if d.source == str(Path(known_file))]
        others = sorted({d.impl for d in mine if not any(d.about(n) for n in names)})
        if others:
            print(
                f"{prog}: {shown(known_file)}: entries for {', '.join(others)}, which this run "
                f"has no implementation of (an entry names the name its adapter declares or, "
                f"for a consumer alone, the report's `<name> {dv.CONSUMER_SUFFIX}`; this run's: "
                f"{', '.join(sorted(dv.accepted_names(names)))})",
                file=sys.stderr,
            )
    for section in (terminal.findings(report), terminal.problems(report)):
        if section:
            print("\n" + section)
    for name in build_failures:
        print(f"{prog}: {name}: not run (its build failed, above)", file=sys.stderr)
    written = render_reports(prog, report, args, html_name)
    failed = model.unknown_problems(report) or report["stale"] or build_failures
    code = EXIT_DIVERGED if failed else EXIT_OK
    return code if written else max(code, EXIT_DIVERGED)
