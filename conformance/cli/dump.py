"""``kafka-conformance dump``: DumpLogSegments' output, byte for byte (``logdir.dump``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from conformance.capture.brokers import BROKERS
from conformance.cli.common import add_command, cannot_read, int32
from conformance.corpus.versions import kafka_version_of
from conformance.fileio import NotRegularFileError, check_regular_file
from conformance.jvm.kafka_jars import KafkaJarsUnavailable
from conformance.jvm.message_defs import message_schemas
from conformance.logdir.dump import DEFAULT_MAX_MESSAGE_SIZE, dump, dump_json
from conformance.logdir.dump.coordinator_text import needs_definitions
from conformance.logdir.dump.formats import (
    NEWEST_LINE,
    OLDEST_LINE,
    DumpFormat,
    UnknownKafkaVersion,
    format_of,
    kafka_version,
    option_history,
)
from conformance.logdir.dump.releases import check_release
from conformance.messages import Schemas

EXIT_USAGE = 2

_EPILOG = """\
output:
  Without --json: exactly what kafka-dump-log.sh (DumpLogSegments) of the Kafka release
  --format-of names prints for the same files and options, stdout and stderr, line for line,
  including its quirks (3.0-4.2: the stray '}' after legacy record CRCs; 'Found N invalid
  bytes' only without --max-bytes; error reports on stderr at the end in the order of the
  release's Scala or Java hash map). Where the tool dies with an uncaught exception, stdout
  stops at the same byte and stderr gets the JVM's first line 'Exception in thread "main"
  <class>: <message>' (no stack trace). What changed in which release, with the Kafka change
  behind it: docs/dump.md ('python -m conformance.logdir.dump.formats' prints the table).
  An option the release does not have (e.g. --max-bytes before 3.3) is refused (exit 2).

  --cluster-metadata-decoder (3.0+; implies --print-data-log): each record value is read as
  a KRaft metadata record frame and printed as 'payload: {"type":"TOPIC_RECORD","version":0,
  "data":{...}}' (keys are not printed); a value the release cannot read prints 'payload:
  Error at <offset>, skipping. <message>'. Which record types and versions decode is the
  release's own: the definitions come from its jars (Maven, cached under .cache/kafka/;
  for a line such as 4.3, from the release of that line the kit has corpora of, else X.Y.0).

  --offsets-decoder (3.8+) and --transaction-log-decoder (4.1+; both imply --print-data-log):
  'key: {"type":"1","data":{...}} payload: {"version":"3","data":{...}}' from the release's
  coordinator definitions (its jars, as above); 'payload: <DELETE>' for a null value, 'key:
  Unknown record type T at offset O, skipping.', 'key: Error at offset O, skipping. <message>';
  a record without a key stops the run (exit 1).
  Before (offsets 0.10.2-3.7, transaction log 0.11-4.0) both print text, as the release's
  Scala code does: 'key: offset_commit::group=g,partition=t-0 payload: offset=42,metadata=m'
  (2.4.1+; 'offset::g:t:0' / '42:m' before), 'key: group_metadata::group=g payload:
  {"protocolType":"consumer",...,"assignment":"{m1=[t-0]}"}', 'key:
  transaction_metadata::transactionalId=tx payload: producerId:7,producerEpoch:2,
  state=Ongoing,partitions=[t-0],...'; records are read with the release's hand-written
  schemas (up to 2.6, no jars needed) or its definitions (2.7+, its jars); any record it
  cannot read stops the run with the tool's exception (exit 1).

  --remote-log-metadata-decoder (3.9+): each value of __remote_log_metadata as the toString()
  of the RemoteLogMetadata the release makes of it, e.g. 'payload: RemoteLogSegmentMetadata{
  remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=<id>:t-0, id=<id>}, startOffset=0,
  ...}'; a value it cannot read prints 'payload: Error at offset O, skipping. <message>'.
  --share-group-state-decoder (4.0+): __share_group_state records as the coordinator JSON
  above (4.0 names the value's version "type"). Both read the release's definitions.

  File kinds (by the suffix after the last '.'): .log and .checkpoint (record batches),
  .index, .timeindex, .txnindex, .snapshot (producer state); anything else is reported
  as 'Ignoring unknown file' on stderr. A name without any '.' stops the run, as in Kafka.

  With --json: one JSON document per line per FILE. For .log/.checkpoint it is the canonical
  decode document (docs/canonical-json.md, the consumer's verdict, mode "file"; --max-bytes
  limits the bytes decoded; the other options do not apply). For the
  others: {"file", "kind": index|timeindex|txnindex|snapshot|unknown, "baseOffset", "entries",
  "error"}, 64-bit integers as decimal strings; index entries {"offset", "position"} and
  timeindex entries {"timestamp", "offset"} up to the first zero (preallocated) entry;
  txnindex entries {"version", "producerId", "firstOffset", "lastOffset",
  "lastStableOffset"}; snapshot entries {"producerId", "producerEpoch", "coordinatorEpoch",
  "currentTxnFirstOffset", "lastTimestamp", "batch": null|{"firstSequence", "lastSequence",
  "lastOffset", "offsetDelta", "timestamp"}}; "error" null or {"kafka_exception", "message"}.

exit codes:
  0  the tool would exit normally (--json: every file read without error)
  1  the tool would die with an uncaught exception (--json: some file has an error); so for
     a missing or unreadable FILE or a directory, with Kafka's own exception
  2  usage error, or a FILE is a FIFO, socket or device (refused before anything is dumped:
     the tool would block on it or read it forever)

examples:
  kafka-conformance dump /var/lib/kafka/t-0/00000000000000000000.log
  kafka-conformance dump --print-data-log t-0/*.log
  kafka-conformance dump --verify-index-only t-0/*.index t-0/*.timeindex
  kafka-conformance dump --index-sanity-check t-0/00000000000000000000.index
  kafka-conformance dump --max-bytes 1048576 --deep-iteration t-0/00000000000000000000.log
  kafka-conformance dump --format-of 2.8.2 --deep-iteration t-0/00000000000000000000.log
  kafka-conformance dump --format-of auto corpora/kafka-1.1.1-zk/compacted-v2-java/log/*/*.log
  kafka-conformance dump --format-of 3.9.2 --cluster-metadata-decoder \\
      __cluster_metadata-0/00000000000000000000.log
  kafka-conformance dump --format-of 4.3.1 --offsets-decoder \\
      __consumer_offsets-0/00000000000000000000.log
  kafka-conformance dump --format-of 1.1.1 --offsets-decoder \\
      __consumer_offsets-0/00000000000000000000.log
  kafka-conformance dump --format-of 2.8.2 --transaction-log-decoder \\
      __transaction_state-0/00000000000000000000.log
  kafka-conformance dump --format-of 3.9.2 --remote-log-metadata-decoder \\
      __remote_log_metadata-0/00000000000000000000.log
  kafka-conformance dump --format-of 4.3.1 --share-group-state-decoder \\
      __share_group_state-0/00000000000000000000.log
  kafka-conformance dump --json t-0/*
"""


def _special_file(files: list[str]) -> str | None:
    """The refusal message for the first FILE that is a FIFO, socket or device, else ``None``.
    Missing and unreadable files and directories are left to the dump, which answers with
    DumpLogSegments' own exception for them."""
    for name in files:
        try:
            check_regular_file(name)
        except NotRegularFileError as e:
            if e.kind != "a directory":
                return cannot_read("kafka-conformance dump", e, name)
        except OSError:
            pass
    return None


#: the options of ``dump`` that are DumpLogSegments options (argparse dest -> option name)
_TOOL_OPTIONS = {
    "deep_iteration": "deep-iteration",
    "print_data_log": "print-data-log",
    "verify_index_only": "verify-index-only",
    "index_sanity_check": "index-sanity-check",
    "max_bytes": "max-bytes",
    "skip_record_metadata": "skip-record-metadata",
    "cluster_metadata_decoder": "cluster-metadata-decoder",
    "offsets_decoder": "offsets-decoder",
    "transaction_log_decoder": "transaction-log-decoder",
    "remote_log_metadata_decoder": "remote-log-metadata-decoder",
    "share_group_state_decoder": "share-group-state-decoder",
}
#: the coordinator decoders: the DumpFormat facts of their JSON and text printers
_COORDINATOR_DECODERS = {
    "offsets_decoder": ("offsets_decoder_missing_key", "offsets_decoder_text"),
    "transaction_log_decoder": (
        "transaction_log_decoder_missing_key",
        "transaction_log_decoder_text",
    ),
}


def definitions_release(version: str) -> str:
    """The release whose jars give the message definitions of ``--format-of version``: the
    version itself when it names a release (``3.9.2``); for a line (``4.3``) the release of
    that line the kit captures corpora from (``capture.brokers.BROKERS``), else its ``.0``."""
    v = kafka_version(version)
    if len(version.split("-", 1)[0].split(".")) >= 3:
        return version
    for spec in BROKERS.values():
        if kafka_version(spec.version)[:2] == v[:2]:
            return spec.version
    return f"{v[0]}.{v[1]}.0"


def _cluster_metadata(version: str, option: str = "cluster-metadata-decoder") -> Schemas | str:
    """The definitions ``--<option>`` of ``version`` decodes with, or the one-line
    refusal."""
    release = definitions_release(version)
    try:
        return message_schemas(release)
    except KafkaJarsUnavailable as e:
        return (
            f"kafka-conformance dump: --{option} needs Kafka {release}'s message definitions: {e}"
        )


def _format(args: argparse.Namespace) -> DumpFormat | str:
    """The format asked for, or the one-line refusal."""
    version = args.format_of
    if version == "auto":
        found, why = kafka_version_of(args.files)
        if found is None:
            return f"kafka-conformance dump: --format-of auto: {why}; give --format-of VERSION"
        version = found
    try:
        fmt = format_of(version)
        check_release(version)  # a number in range that no release had (3.10, 4.0.99)
    except UnknownKafkaVersion as e:
        return f"kafka-conformance dump: --format-of: {e}"
    for dest, option in _TOOL_OPTIONS.items():
        given = getattr(args, dest)
        if given not in (None, False) and not fmt.has(option):
            return (
                f"kafka-conformance dump: Kafka {version}'s DumpLogSegments has no --{option} "
                f"({option_history(option)})"
            )
    for dest, facts in _COORDINATOR_DECODERS.items():
        if getattr(args, dest) and all(getattr(fmt, fact) is None for fact in facts):
            return (
                f"kafka-conformance dump: Kafka {version}'s --{_TOOL_OPTIONS[dest]} prints a "
                "format not reproduced (docs/dump.md)"
            )
    return fmt


def _cmd_dump(args: argparse.Namespace) -> int:
    refused = _special_file(args.files)
    if refused is not None:
        print(refused, file=sys.stderr)
        return EXIT_USAGE
    fmt = _format(args) if not args.json else format_of(NEWEST_LINE)
    if isinstance(fmt, str):
        print(fmt, file=sys.stderr)
        return EXIT_USAGE
    out: TextIO = sys.stdout
    err: TextIO = sys.stderr
    for stream in (out, err):  # the tool prints UTF-8 whatever the locale
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[attr-defined]
        except (AttributeError, ValueError, OSError):  # pragma: no cover
            pass
    if args.json:
        return dump_json(args.files, max_bytes=args.max_bytes, out=out, err=err)
    decoders: dict[str, Schemas | bool] = {}
    for dest in (
        "offsets_decoder",
        "transaction_log_decoder",
        "cluster_metadata_decoder",
        "remote_log_metadata_decoder",
        "share_group_state_decoder",
    ):
        text = (
            getattr(fmt, _COORDINATOR_DECODERS[dest][1]) if dest in _COORDINATOR_DECODERS else None
        )
        if getattr(args, dest) and text is not None and not needs_definitions(text):
            decoders[dest] = True  # read with the release's hand-written schemas (its facts)
        elif getattr(args, dest):
            schemas = _cluster_metadata(fmt.version, _TOOL_OPTIONS[dest])
            if isinstance(schemas, str):
                print(schemas, file=sys.stderr)
                return EXIT_USAGE
            decoders[dest] = schemas
    return dump(
        args.files,
        deep_iteration=args.deep_iteration,
        print_data_log=args.print_data_log,
        verify_index_only=args.verify_index_only,
        index_sanity_check=args.index_sanity_check,
        max_bytes=args.max_bytes,
        max_message_size=args.max_message_size,
        skip_record_metadata=args.skip_record_metadata,
        **decoders,  # type: ignore[arg-type]
        fmt=fmt,
        out=out,
        err=err,
    )


def register(subparsers: Any) -> None:
    """Add the ``dump`` subcommand to the ``kafka-conformance`` parser."""
    p = add_command(
        subparsers,
        "dump",
        "dump log segments, indexes and snapshots exactly as kafka-dump-log.sh does "
        f"(Kafka {OLDEST_LINE} to {NEWEST_LINE})",
        "Dump each FILE of a Kafka log directory the way a Kafka release's "
        "DumpLogSegments (kafka-dump-log.sh --files FILE,...) does, byte for byte; or, with "
        "--json, as canonical JSON.",
        _EPILOG,
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--deep-iteration",
        action="store_true",
        help="print one line per record (implied by --print-data-log)",
    )
    p.add_argument(
        "--print-data-log",
        action="store_true",
        help="also print keys and payloads (UTF-8, as Kafka's StringDecoder)",
    )
    p.add_argument(
        "--verify-index-only",
        action="store_true",
        help="check .index/.timeindex entries against the log without printing them",
    )
    p.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="only run the broker's index sanityCheck() on .index/.timeindex",
    )
    p.add_argument(
        "--max-bytes",
        type=int32,
        default=None,
        metavar="N",
        help="read only the first N bytes of each .log (no 'invalid bytes' report)",
    )
    p.add_argument(
        "--max-message-size",
        type=int32,
        default=DEFAULT_MAX_MESSAGE_SIZE,
        metavar="N",
        help="bytes read at each .index entry position (default %(default)s)",
    )
    p.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="with --print-data-log: print only keys and payloads (Kafka 2.8+)",
    )
    p.add_argument(
        "--cluster-metadata-decoder",
        action="store_true",
        help='print each record\'s value as a KRaft metadata record, {"type", "version", '
        '"data"}, as the release\'s definitions (read from its jars) decode it; implies '
        "--print-data-log (Kafka 3.0+)",
    )
    p.add_argument(
        "--offsets-decoder",
        action="store_true",
        help="print __consumer_offsets records' keys and values as the release does: JSON "
        "from its group coordinator definitions (read from its jars, Kafka 3.8+) or its older "
        "text (0.10.2-3.7); implies --print-data-log",
    )
    p.add_argument(
        "--transaction-log-decoder",
        action="store_true",
        help="print __transaction_state records' keys and values as the release does: JSON "
        "(Kafka 4.1+) or its older text (0.11-4.0); implies --print-data-log",
    )
    p.add_argument(
        "--remote-log-metadata-decoder",
        action="store_true",
        help="print each __remote_log_metadata record's value as the release's "
        "RemoteLogMetadata text (RemoteLogSegmentMetadata{...}, ...), from its storage "
        "definitions (read from its jars); implies --print-data-log (Kafka 3.9+)",
    )
    p.add_argument(
        "--share-group-state-decoder",
        action="store_true",
        help="print __share_group_state records' keys and values as JSON, as the release's "
        "share coordinator definitions (read from its jars) decode them; implies "
        "--print-data-log (Kafka 4.0+)",
    )
    p.add_argument(
        "--format-of",
        default=NEWEST_LINE,
        metavar="VERSION",
        help="print what this Kafka release's DumpLogSegments prints: any release from "
        f"{OLDEST_LINE} to {NEWEST_LINE}.x, or its line (e.g. 2.8, 3.9.2, 0.10.2.2; a number "
        "no release had is refused), or 'auto': the version in the corpus manifest.json "
        "above the files (default %(default)s)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one canonical JSON document per file instead"
    )
    p.set_defaults(func=_cmd_dump)
