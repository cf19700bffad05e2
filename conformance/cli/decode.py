"""``kafka-conformance decode``: Kafka's verdict on record batches and message sets."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from typing import Any, TextIO

from conformance import codecs
from conformance.broker import DEFAULT_VERSION, VERSIONS, ProduceVerdict
from conformance.broker.codes import COORDINATOR_ERRORS, NONE
from conformance.broker.profile import ProduceContext, decode
from conformance.cli.common import (
    add_command,
    add_max_decompressed,
    add_profile,
    cannot_read,
    int64,
    non_negative_int,
    non_negative_int32,
    plural,
    positive_int,
    shown,
)
from conformance.codecs.zstd import LibzstdUnavailable
from conformance.fileio import FileSource, write_decode_json
from conformance.jvm.kafka_jars import KafkaJarsUnavailable, use_kafka2_zstd
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
  {EXIT_OK}  every input decoded (outcome ok or partial), no strict findings;
     profile broker: the broker accepted every input
  {EXIT_DECODE_ERROR}  at least one input has outcome "error" (Kafka would raise);
     profile broker: the broker refused at least one input (or its request)
  {EXIT_USAGE}  usage error, or an input file could not be read (missing, no permission, not
     a regular file: FIFOs, devices, directories are refused) or needs more memory than
     there is; the other files are still decoded
  {EXIT_FINDINGS}  profile strict: no errors, but findings were reported;
     profile broker: all accepted, but a consumer raises on at least one of them (the
     broker stores bytes its consumers cannot read)

outcomes:
  ok       every byte belongs to a batch that decoded completely
  partial  a truncated trailing batch / short tail was left unread (not an error, as in Kafka)
  error    Kafka raises; the JSON names its Java exception class, message and position

strict finding codes:
"""
    + "\n".join(f"  {code:32} {text}" for code, text in FINDING_CODES.items())
    + """

profile broker: each FILE is one partition's records of a Produce request, judged by a
broker as it appends them (docs/broker.md): its error code, exception and per-record errors,
and for an accepted append the offsets and what it stored (header rewrites, recompression).
The FILEs are produced in order to one partition: later ones see the log end offset and the
idempotent producers' state the earlier ones left.

examples:
  kafka-conformance decode corpora/samples/*.bin
  kafka-conformance decode --json --as file 00000000000000000000.log
  kafka-conformance decode --profile strict --json fetch-response-records.bin
  kafka-conformance decode --profile broker --broker-version 3.9.2 --produce-version 9 \\
      --topic-config cleanup.policy=compact --now 1700000000000 produce-records.bin
  kafka-conformance decode --profile broker --json first-try.bin retry.bin
  kafka-conformance decode --profile broker --broker-version 3.9.2 \\
      --coordinator COORDINATOR_NOT_AVAILABLE transactional.bin idempotent.bin
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


#: the largest input the broker profile reads: a broker refuses a request above
#: socket.request.max.bytes (default 100 MiB) before reading it
MAX_REQUEST_BYTES = 104857600


def _broker_context(args: argparse.Namespace) -> ProduceContext:
    topic = {}
    for item in args.topic_config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--topic-config takes KEY=VALUE, not {item!r}")
        topic[key.strip()] = value.strip()
    return ProduceContext(
        version=args.broker_version,
        produce_version=args.produce_version,
        topic=topic,
        now=args.now,
        leader_epoch=args.leader_epoch,
        inter_broker_protocol_version=args.inter_broker_protocol_version,
        coordinator=args.coordinator,
    )


def _write_broker(verdict: ProduceVerdict, out: TextIO) -> None:
    r = verdict.response
    head = f"  broker (Kafka {verdict.broker}, Produce v{verdict.produce_version}): {r.error}"
    if r.error != "NONE":
        out.write(f"{head} ({r.error_code}), {verdict.scope} error\n")
        if verdict.exception is not None:
            out.write(f"    {verdict.exception.java_string()}\n")
        for index, message in r.record_errors:
            out.write(f"    record {index}: {message}\n")
        return
    if verdict.duplicate:
        out.write(f"{head}, a duplicate: the original batch's base offset {r.base_offset}\n")
        return
    stored = len(verdict.stored or b"")
    lat = f", LogAppendTime {r.log_append_time}" if r.log_append_time != -1 else ""
    out.write(f"{head}, appended at base offset {r.base_offset}{lat}, {stored} bytes stored\n")
    if verdict.rebuilt:
        out.write(f"    rebuilt: {verdict.rebuilt}\n")
    for name, before, after in verdict.rewrites:
        out.write(f"    rewrote {name}: {before} -> {after}\n")


def _cmd_broker(args: argparse.Namespace) -> int:
    """``--profile broker``: the inputs produced in order to one partition."""
    if args.mode != "memory":
        print(f"{_PROG}: --profile broker judges Produce requests: --as memory", file=sys.stderr)
        return EXIT_USAGE
    try:
        ctx = _broker_context(args)
        log = ctx.log(args.max_decompressed, args.max_records)
    except ValueError as e:
        print(f"{_PROG}: {e}", file=sys.stderr)
        return EXIT_USAGE
    if VERSIONS[ctx.version].clients == "2.8":
        try:  # Kafka 2.x reads zstd with its own libzstd 1.4.9 (from its jars)
            use_kafka2_zstd()
        except KafkaJarsUnavailable as e:
            print(f"{_PROG}: warning: zstd batches cannot be judged as Kafka {ctx.version}: {e}",
                  file=sys.stderr)  # fmt: skip
    worst = EXIT_OK
    unusable = False
    for name in args.files:
        source = _open_input(name)
        if source is None:
            unusable = True
            continue
        with source:
            if len(source) > MAX_REQUEST_BYTES:
                print(
                    f"{_PROG}: {shown(name)}: {len(source)} bytes: a broker refuses a request "
                    f"over socket.request.max.bytes ({MAX_REQUEST_BYTES})",
                    file=sys.stderr,
                )
                unusable = True
                continue
            data = source[0 : len(source)]
        try:
            result = decode(
                data,
                profile="broker",
                filename=name,
                decompressed_limit=args.max_decompressed,
                max_records=args.max_records,
                produce=ctx,
                log=log,
            )
        except (ValueError, LibzstdUnavailable) as e:
            print(f"{_PROG}: {e}", file=sys.stderr)
            return EXIT_USAGE
        verdict = result.broker
        assert isinstance(verdict, ProduceVerdict)
        if args.json:
            sys.stdout.write(result.to_json() + "\n")
        else:
            counts = f"{plural(len(result.batches), 'batch', 'batches')}"
            sys.stdout.write(f"{shown(name)}: consumer {result.outcome}, {counts}\n")
            if result.error is not None:
                sys.stdout.write(f"  consumer error: {result.error.java_string()}\n")
            _write_broker(verdict, sys.stdout)
        sys.stdout.flush()
        if not verdict.accepted:
            worst = EXIT_DECODE_ERROR
        elif result.outcome == "error" and worst == EXIT_OK:
            worst = EXIT_FINDINGS
    return EXIT_USAGE if unusable else worst


def _cmd_decode(args: argparse.Namespace) -> int:
    if args.profile == "broker":
        return _cmd_broker(args)
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
    p = add_command(
        subparsers,
        "decode",
        "decode record batches / message sets and print Kafka's verdict",
        "Decode each FILE as Kafka's Java consumer would and print the verdict: "
        "a readable summary, or one canonical JSON document per file (--json).",
        _DECODE_EPILOG,
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
        "anomalies Kafka accepts silently; broker: also what a broker answers to the bytes "
        "in a Produce request (options below)",
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
    b = p.add_argument_group("profile broker (docs/broker.md)")
    b.add_argument(
        "--broker-version",
        choices=tuple(VERSIONS),
        default=DEFAULT_VERSION,
        help="the broker line that judges (default %(default)s)",
    )
    b.add_argument(
        "--produce-version",
        type=non_negative_int,
        metavar="N",
        help="the Produce API version of the request (default: the newest the broker speaks)",
    )
    b.add_argument(
        "--topic-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a topic configuration, Kafka's name (repeatable), e.g. cleanup.policy=compact, "
        "message.timestamp.type=LogAppendTime, max.message.bytes=1000, compression.type=zstd",
    )
    b.add_argument(
        "--now",
        type=int64,
        metavar="MS",
        help="the broker's clock in ms since the epoch (default: this machine's clock)",
    )
    b.add_argument(
        "--leader-epoch",
        type=non_negative_int32,
        default=0,
        metavar="N",
        help="the leader epoch the broker stamps, 0..2147483647 (default 0)",
    )
    b.add_argument(
        "--inter-broker-protocol-version",
        metavar="V",
        help="2.x/3.x brokers: inter.broker.protocol.version (bounds message.format.version; "
        "refused for 4.x, which has none)",
    )
    b.add_argument(
        "--coordinator",
        default=NONE,
        metavar="ERROR",
        help="3.6+ brokers (KIP-890): what the transaction coordinator answers when the broker "
        "asks whether a transactional batch's partition is in the producer's transaction, a "
        "Kafka error name (default %(default)s: it is; a real broker without a transaction "
        "for the batch hears COORDINATOR_NOT_AVAILABLE, INVALID_TXN_STATE, ...; one of "
        f"{', '.join(COORDINATOR_ERRORS)}); no effect on 2.8.2",
    )
    p.set_defaults(func=_cmd_decode)
