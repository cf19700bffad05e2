"""``kafka-conformance decode``: Kafka's verdict on record batches and message sets."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from typing import Any, TextIO

from conformance import codecs
from conformance.cli.common import (
    add_max_decompressed,
    add_profile,
    cannot_read,
    plural,
    positive_int,
    shown,
)
from conformance.fileio import FileSource, write_decode_json
from conformance.stream.decoder import DEFAULT_MAX_RECORDS, StreamDecoder
from conformance.stream.findings import FINDING_CODES
from conformance.stream.splitter import MODES

EXIT_OK = 0
EXIT_DECODE_ERROR = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3

_DECODE_EPILOG = (
    f"""\
exit codes:
  {EXIT_OK}  every input decoded (outcome ok or partial), no strict findings
  {EXIT_DECODE_ERROR}  at least one input has outcome "error" (Kafka would raise)
  {EXIT_USAGE}  usage error, or an input file could not be read (missing, no permission, not
     a regular file: FIFOs, devices, directories are refused) or needs more memory than
     there is; the other files are still decoded
  {EXIT_FINDINGS}  profile strict only: no errors, but findings were reported

outcomes:
  ok       every byte belongs to a batch that decoded completely
  partial  a truncated trailing batch / short tail was left unread (not an error, as in Kafka)
  error    Kafka raises; the JSON names its Java exception class, message and position

strict finding codes:
"""
    + "\n".join(f"  {code:32} {text}" for code, text in FINDING_CODES.items())
    + """

examples:
  kafka-conformance decode corpora/samples/*.bin
  kafka-conformance decode --json --as file 00000000000000000000.log
  kafka-conformance decode --profile strict --json fetch-response-records.bin
"""
)


def _write_summary(path: str, decoder: StreamDecoder, out: TextIO) -> None:
    """The readable verdict: a line for the file, then one per batch as it is decoded (spooled:
    the file line, which needs the totals, comes first; memory stays bounded by one batch)."""
    batches = records = 0
    with tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as spool:
        for b in decoder:
            h = b.header
            batches += 1
            records += b.records.total
            first = f"baseOffset {h.base_offset}" if h.magic >= 2 else f"offset {h.last_offset}"
            spool.write(
                f"  @{h.position} magic {h.magic} {first} lastOffset {h.last_offset} "
                f"{codecs.codec_name(h.compression_id)} {h.timestamp_type} "
                f"records {b.records.total}" + (" control" if h.is_control else "") + "\n"
            )
        counts = f"{plural(batches, 'batch', 'batches')}, {plural(records, 'record')}"
        out.write(f"{shown(path)}: {decoder.outcome}, {counts}\n")
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    if decoder.error is not None:
        e = decoder.error
        out.write(f"  error at batch {e.batch_index} (byte {e.position}): {e.java_string()}\n")
    if decoder.tail is not None:
        out.write(f"  partial tail: {decoder.tail.bytes} bytes at {decoder.tail.position}\n")
    for f in decoder.findings or []:
        out.write(f"  finding {f.code} @{f.position} (batch {f.batch_index}): {f.message}\n")


_PROG = "kafka-conformance decode"


def _open_input(name: str) -> FileSource | None:
    """The input ``name`` as a random-access source (read batch by batch, never whole), or
    ``None`` after a one-line message when it cannot be read or is not a regular file."""
    try:
        return FileSource(name)
    except OSError as e:
        print(cannot_read(_PROG, e, name), file=sys.stderr)
        return None


def _cmd_decode(args: argparse.Namespace) -> int:
    worst = EXIT_OK
    unusable = False  # an input could not be read or decoded: exit EXIT_USAGE at the end
    for name in args.files:
        source = _open_input(name)
        if source is None:
            unusable = True
            continue
        # records are kept only where the output shows them (JSON) or the checks need them
        # (strict); a summary counts them (docs/memory.md)
        keep_all = args.json or args.profile == "strict"
        decoder = StreamDecoder(
            source,
            mode=args.mode,
            profile=args.profile,
            filename=name,
            decompressed_limit=args.max_decompressed,
            keep=None if keep_all else 0,
            max_records=args.max_records,
        )
        try:
            with source:
                if args.json:
                    write_decode_json(decoder, sys.stdout)
                else:
                    _write_summary(name, decoder, sys.stdout)
        except MemoryError:
            print(f"{_PROG}: cannot decode {shown(name)}: out of memory", file=sys.stderr)
            unusable = True
            continue
        except OSError as e:  # a read error in the middle of the file (EIO, ...)
            print(cannot_read(_PROG, e, name), file=sys.stderr)
            unusable = True
            continue
        sys.stdout.flush()
        if decoder.outcome == "error":
            worst = EXIT_DECODE_ERROR
        elif decoder.findings and worst == EXIT_OK:
            worst = EXIT_FINDINGS
    return EXIT_USAGE if unusable else worst


def register(subparsers: Any) -> None:
    """Add ``decode`` to the ``kafka-conformance`` parser."""
    p = subparsers.add_parser(
        "decode",
        help="decode record batches / message sets and print Kafka's verdict",
        description="Decode each FILE as Kafka's Java consumer would and print the verdict: "
        "a readable summary, or one canonical JSON document per file (--json).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_DECODE_EPILOG,
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print canonical JSON, one line per file")
    p.add_argument(
        "--as",
        dest="mode",
        choices=MODES,
        default="memory",
        help="splitting semantics: memory (produce/fetch data, MemoryRecords; default) or file "
        "(log segment, FileRecords)",
    )
    add_profile(
        p,
        "kafka: Kafka's verdict only (default); strict: also report findings for "
        "anomalies Kafka accepts silently",
    )
    add_max_decompressed(p)
    p.add_argument(
        "--max-records",
        type=positive_int,
        default=DEFAULT_MAX_RECORDS,
        metavar="N",
        help="with --json or --profile strict: records kept per batch, beyond them the verdict "
        "is a kit resource limit (default %(default)s; a summary keeps none and has no limit)",
    )
    p.set_defaults(func=_cmd_decode)
