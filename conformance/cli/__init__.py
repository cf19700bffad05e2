"""``kafka-conformance``: the command line, a thin shell over the kit's packages.

One module per command (or command group); each has ``register(subparsers)`` adding its
subcommand(s) with their own ``--help`` and examples. To add a command: write
``conformance/cli/<name>.py`` with ``register`` and list it in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from conformance import __version__
from conformance.cli import (
    capture,
    check,
    check_broker,
    check_producer,
    decode,
    dump,
    fake_broker,
    fuzz,
    lookup,
    partition,
    replay,
    spark_cluster,
    synth,
    verify,
    verify_dir,
)
from conformance.primitives import native

#: the command modules, in the order ``--help`` lists them
COMMANDS = (
    decode,
    dump,
    verify_dir,
    lookup,
    verify,
    capture,
    fuzz,
    replay,
    spark_cluster,
    synth,
    check,
    check_producer,
    check_broker,
    fake_broker,
    partition,
)

EXIT_OK = 0
#: a command ran out of memory (the message says so; no traceback)
EXIT_OUT_OF_MEMORY = 2


def build_parser() -> argparse.ArgumentParser:
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
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
