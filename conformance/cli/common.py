"""What the commands share: the parser of a subcommand (``add_command``), argument types
(argparse ``type=`` functions that reject bad numbers with a usage error, exit 2; integers
are ASCII decimal digits only), the options several commands take (``--profile``,
``--max-decompressed``, and the corpus reports' ``--only``, ``--json``, ``--junit``, ``-q`` of
``verify`` and ``capture compare``: one definition each), file names shown safely, counts
with their noun, the one-line message for a file that cannot be read, a stdout that cannot be
written (``guard_stdout``), and the writing of a corpus report."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from conformance.codecs import DEFAULT_DECOMPRESSED_LIMIT
from conformance.fileio import printable_name as shown
from conformance.stream.result import PROFILES

if TYPE_CHECKING:
    from conformance.corpus.report import CorpusReport

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "StdoutFailed",
    "add_command",
    "add_max_decompressed",
    "add_only",
    "add_profile",
    "add_report_outputs",
    "byte_size",
    "cannot_read",
    "guard_stdout",
    "int32",
    "int64",
    "non_negative_int",
    "non_negative_int32",
    "non_negative_int64",
    "output_problem",
    "plural",
    "positive_int",
    "report_outputs_ok",
    "seconds",
    "shown",
    "write_report",
    "write_text",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


INT32_MAX = (1 << 31) - 1

#: what an integer option takes: ASCII decimal digits, a leading '-' where negatives are
#: allowed (not Python's ``int()``: no spaces, '+', '_' or other scripts' digits)
_INTEGER = re.compile(r"-?[0-9]+")


def _int(text: str, *, negative: bool = True) -> int:
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (decimal digits 0-9)")
    if text.startswith("-") and not negative:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return int(text, 10)


def _at_least(value: int, minimum: int) -> int:
    if value < minimum:
        wanted = "a positive integer" if minimum == 1 else f"{minimum} or more"
        raise argparse.ArgumentTypeError(f"must be {wanted}, not {value}")
    return value


def positive_int(text: str) -> int:
    """An integer > 0 (sizes, limits, counts)."""
    return _at_least(_int(text, negative=False), 1)


def non_negative_int(text: str) -> int:
    """An integer >= 0 (``0`` usually meaning "automatic")."""
    return _int(text, negative=False)


def int32(text: str) -> int:
    """A Java ``int``: -2^31 .. 2^31-1 (a Kafka tool's integer option)."""
    value = _int(text)
    if not -INT32_MAX - 1 <= value <= INT32_MAX:
        raise argparse.ArgumentTypeError(
            f"out of range for a 32-bit integer ({-INT32_MAX - 1}..{INT32_MAX}): {text}"
        )
    return value


def non_negative_int32(text: str) -> int:
    """A Java ``int`` >= 0: 0 .. 2^31-1 (a leader epoch)."""
    value = _int(text, negative=False)
    if value > INT32_MAX:
        raise argparse.ArgumentTypeError(
            f"out of range for a 32-bit integer (0..{INT32_MAX}): {text}"
        )
    return value


def int64(text: str) -> int:
    """A Java ``long``: -2^63 .. 2^63-1."""
    value = _int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise argparse.ArgumentTypeError(
            f"out of range for a 64-bit integer ({INT64_MIN}..{INT64_MAX}): {text}"
        )
    return value


def non_negative_int64(text: str) -> int:
    """An offset: 0 .. 2^63-1."""
    if text.startswith("-"):
        _int(text, negative=False)  # the refusal
    return _at_least(int64(text), 0)


_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*", re.ASCII)
_UNITS = {"": 1, "b": 1}
for _i, _prefix in enumerate("kmgt", 1):
    _UNITS[_prefix] = _UNITS[_prefix + "b"] = 1000**_i
    _UNITS[_prefix + "ib"] = 1024**_i


#: a duration: ASCII decimal digits with an optional fraction (no spaces, '_', exponent)
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def seconds(text: str) -> float:
    """A duration in seconds > 0, finite (``20``, ``2.5``; not ``nan`` or ``inf``)."""
    if not _SECONDS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive, finite number of seconds, not {text!r}"
        )
    return value


def byte_size(text: str) -> int:
    """A size in bytes > 0: an integer (``4096``), or a number with a unit, case-insensitive:
    ``B``, ``K``/``KB`` (1000), ``KiB`` (1024), ``M``/``MB``, ``MiB``, ``G``/``GB``, ``GiB``,
    ``T``/``TB``, ``TiB`` (``1GB``, ``64MiB``, ``1.5GiB``; a fraction of a byte is dropped)."""
    m = _SIZE.fullmatch(text)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None:
        raise argparse.ArgumentTypeError(
            f"not a size: {text!r} (an integer number of bytes, or a number with a unit: "
            "B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); "
            "e.g. 4096, 64MiB, 1.5GB)"
        )
    if unit == 1 and not m.group(1).isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number of bytes: {text!r}")
    value = int(Fraction(m.group(1)) * unit)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive size, not {text!r}")
    return value


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 batch``, ``2 batches``, ``0 records``."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {nouns if nouns is not None else noun + 's'}"


def cannot_read(prog: str, e: OSError, fallback: str | os.PathLike[str] = "") -> str:
    """``<prog>: cannot read <file>: <reason>`` for an ``OSError`` (``FileNotFoundError``,
    ``PermissionError``, ``conformance.fileio.NotRegularFileError``, a symbolic link loop...)."""
    name = e.filename if e.filename is not None else fallback
    reason = e.strerror or str(e)
    return f"{prog}: cannot read {shown(name)}: {reason}"


def output_problem(out: str) -> str | None:
    """Why a report cannot be written to ``out`` (checked before a long run), or ``None``."""
    path = Path(out)
    if path.is_dir():
        return "is a directory"
    parent = path.parent
    if not parent.is_dir():
        return f"no such directory: {shown(parent)}"
    return None


def directory_ok(prog: str, root: Path, name: str | None = None) -> bool:
    """Whether ``root`` is a directory; if not, print ``<prog>: <root>: no such directory``
    (or ``not a directory``; ``name``: the argument it was given as, ``A (<root>)``) and
    return False."""
    if root.is_dir():
        return True
    why = "not a directory" if root.exists() else "no such directory"
    where = shown(root) if name is None else f"{name} ({shown(root)})"
    print(f"{prog}: {where}: {why}", file=sys.stderr)
    return False


def write_text(prog: str, out: str, text: str) -> bool:
    """Write a report; on failure print ``<prog>: cannot write <out>: <reason>``, return False."""
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print(f"{prog}: cannot write {shown(out)}: {e.strerror or e}", file=sys.stderr)
        return False
    return True


def guard_stdout(prog: str, run: Callable[[], int], failed: int = 2) -> int:
    """``run()`` (a command's body, returning its exit code) with ``sys.stdout`` watched, then
    stdout flushed. A write to stdout that fails (``> /dev/full``: ENOSPC; EIO; EFBIG) ends
    the command with ``<prog>: cannot write to stdout: <reason>`` on stderr and exit
    ``failed`` instead of a traceback; a closed pipe (``| head``) ends it quietly, exit 0.
    Either way stdout is then pointed at /dev/null, so the interpreter's last flush says
    nothing. Errors of anything else (files, sockets) pass through unchanged; a failed stdout
    write reaches ``run``'s handlers as :class:`StdoutFailed`, which no ``except OSError``
    takes for a file's error."""
    original = sys.stdout
    watched = _WatchedStdout(original)
    sys.stdout = watched  # type: ignore[assignment]
    try:
        code = run()
        watched.flush()
        return code
    except StdoutFailed as e:
        _quiet_stdout(original)
        if e.errno == errno.EPIPE:
            return 0
        print(f"{prog}: cannot write to stdout: {e.reason}", file=sys.stderr)
        return failed
    finally:
        if sys.stdout is watched:
            sys.stdout = original


class StdoutFailed(Exception):
    """A write to stdout failed (inside :func:`guard_stdout`); ``errno``, ``reason``: the
    ``OSError``'s."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.errno = error.errno
        self.reason = error.strerror or str(error)


class _WatchedStdout:
    """``sys.stdout`` whose failed writes raise :class:`StdoutFailed` (everything else is the
    stream's own)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            raise StdoutFailed(e) from e

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise StdoutFailed(e) from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _quiet_stdout(stream: TextIO) -> None:
    """stdout's file descriptor onto /dev/null: what it still buffers goes nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass


def add_command(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    summary: str,
    description: str | None,
    epilog: str,
    **options: str,
) -> argparse.ArgumentParser:
    """The subcommand ``name`` with its one-line ``summary`` (in ``kafka-conformance --help``),
    its ``description`` and its ``epilog`` (the protocol, the exit codes, the examples), shown
    as written (``options``: more of ``add_parser``'s, e.g. ``usage``)."""
    return sub.add_parser(  # type: ignore[no-any-return]
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **options,
    )


def add_profile(
    p: argparse.ArgumentParser, help_text: str, choices: tuple[str, ...] = PROFILES
) -> None:
    """``--profile`` (``choices``: every profile of ``stream.result.PROFILES`` unless the
    command judges only the consumer's verdict; default ``kafka``)."""
    p.add_argument("--profile", choices=choices, default="kafka", help=help_text)


def add_max_decompressed(p: argparse.ArgumentParser, more: str = "") -> None:
    """``--max-decompressed BYTES``: the kit's bound on the decompressed bytes of a batch."""
    p.add_argument(
        "--max-decompressed",
        type=positive_int,
        default=DEFAULT_DECOMPRESSED_LIMIT,
        metavar="BYTES",
        help=f"limit on decompressed bytes per batch (default %(default)s){more}",
    )


def add_only(p: argparse.ArgumentParser) -> None:
    """``--only GLOB`` (repeatable): the corpus cases a command looks at."""
    p.add_argument(
        "--only",
        action="append",
        metavar="BROKER/SCENARIO-GLOB",
        help="only cases whose <broker-id>/<scenario> matches (a glob without '/' "
        "names broker ids); repeatable",
    )


def add_report_outputs(p: argparse.ArgumentParser, quiet_help: str) -> None:
    """``--json OUT``, ``--junit OUT`` and ``-q``: the outputs of a corpus report."""
    p.add_argument("--json", metavar="OUT", help="write the report as JSON to OUT ('-': stdout)")
    p.add_argument("--junit", metavar="OUT", help="write a JUnit XML report to OUT")
    p.add_argument("-q", "--quiet", action="store_true", help=quiet_help)


def report_outputs_ok(prog: str, args: argparse.Namespace) -> bool:
    """Whether ``--json``/``--junit`` can be written (checked before the run); if not, print
    ``<prog>: --json <out>: cannot write the report there: <why>`` and return False."""
    for option, out in (("--json", args.json), ("--junit", args.junit)):
        if out and out != "-":
            problem = output_problem(out)
            if problem is not None:
                print(
                    f"{prog}: {option} {shown(out)}: cannot write the report there: {problem}",
                    file=sys.stderr,
                )
                return False
    return True


def write_report(prog: str, report: CorpusReport, args: argparse.Namespace) -> bool:
    """The table on stdout (``-q``: the summary and the listings only), then ``--json`` (``-``:
    stdout) and ``--junit``; False when one of them could not be written (said on stderr)."""
    try:
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # pragma: no cover
        pass
    sys.stdout.write(report.format_table(quiet=args.quiet))
    written = True
    if args.json:
        text = json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            written = write_text(prog, args.json, text) and written
    if args.junit:
        written = write_text(prog, args.junit, report.to_junit()) and written
    return written
