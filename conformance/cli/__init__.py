"""``kafka-conformance``: the command line, a thin shell over the kit's packages.

One module per command (or command group); each has ``register(subparsers)`` adding its
subcommand(s) with their own ``--help`` and examples. To add a command: write
``conformance/cli/<name>.py`` with ``register`` and list it in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType

from conformance import __version__
from conformance.primitives import native

#: the command modules (``conformance.cli.<name>``), in the order ``--help`` lists them; a
#: module named as its command (``-`` as ``_``) is all a run of that command imports
COMMANDS = (
    "decode",
    "dump",
    "verify_dir",
    "lookup",
    "verify",
    "capture",
    "fuzz",
    "replay",
    "spark_cluster",
    "synth",
    "check",
    "check_producer",
    "check_broker",
    "fake_broker",
    "partition",
)


def _module(name: str) -> ModuleType:
    return import_module(f"conformance.cli.{name}")


EXIT_OK = 0
#: a command ran out of memory (the message says so; no traceback)
EXIT_OUT_OF_MEMORY = 2


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or only the one of ``COMMANDS`` named."""
    parser = argparse.ArgumentParser(
        prog="kafka-conformance",
        description="Reference decoder and conformance kit for Apache Kafka record formats.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: see each command's --help; every command that runs out of memory "
        "stops\nwith a one-line message and exit code 2.\n\n"
        "examples:\n  kafka-conformance decode corpora/samples/*.bin\n"
        "  kafka-conformance verify\n"
        "  kafka-conformance decode --help",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}, {native.implementation()}",
        help="show the version and the decoding path in use (native or pure, and why)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            _module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    named = argv[0].replace("-", "_") if argv else ""
    parser = build_parser(named if named in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return EXIT_OK
    except MemoryError:
        print(f"kafka-conformance {args.command}: out of memory", file=sys.stderr)
        return EXIT_OUT_OF_MEMORY


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
