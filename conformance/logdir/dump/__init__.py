"""``kafka-conformance dump``: Kafka 3.9's ``kafka.tools.DumpLogSegments``, byte for byte.

Source of truth: ``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` (Kafka 3.9) and the
classes it calls (``FileRecords``, ``FileLogInputStream.FileChannelRecordBatch``,
``DefaultRecordBatch``, ``AbstractLegacyRecordBatch``, ``LegacyRecord``, ``OffsetIndex``,
``TimeIndex``, ``TransactionIndex``, ``ProducerStateManager.readSnapshot``), checked against
the real tool (``conformance.jvm.kafka_jars.dump_log_segments``). All parsing is the kit's own
(``splitter``, ``batch``, ``legacy``, ``record``, ``control``, ``index``, ``txnindex``,
``snapshot``); this module only reproduces *what the tool reads when, and what it prints*.

What the tool does, per file given (in order), after printing ``Dumping <file>``:

=================  ===========================================================================
suffix (last .)    action
=================  ===========================================================================
``.log``           ``Log starting offset: N``; one line per batch; with deep iteration (implied
                   by ``--print-data-log``) one ``| offset: ...`` line per record (the batch's
                   ``iterator()``, not the consumer's streaming iterator); then
                   ``Found N invalid bytes at the end of <name>`` unless ``--max-bytes`` given
``.checkpoint``    as ``.log`` (KRaft snapshot): ``Snapshot end offset: O, epoch: E`` or
                   ``KRaft bootstrap snapshot``
``.index``         ``offset: O position: P`` per entry (stops at the first entry i > 0 whose
                   offset is the base offset), verified against the first batch at P
``.timeindex``     ``timestamp: T offset: O`` per entry, verified against the log
``.txnindex``      one line per aborted transaction (nothing if the file does not exist)
``.snapshot``      one line per producer (a corrupt snapshot: its message on stderr)
anything else      ``Ignoring unknown file <file>`` on stderr
=================  ===========================================================================

At the end, on stderr: index mismatches, time-index errors, non-consecutive offsets (each group
in the iteration order of a Scala 2.13 ``mutable.HashMap`` keyed by absolute path).

An exception the tool does not catch ends the run: what was printed so far stays, stderr gets
``Exception in thread "main" <class>: <message>`` (the JVM then prints a stack trace, not
mirrored) and the exit status is 1.

Deliberate differences (documented, not mirrored): a missing ``.index`` / ``.timeindex`` makes
the real tool *create* an empty file before failing (``AbstractIndex`` calls
``createNewFile``); this module reports the same exception without touching the directory.
Decompression is bounded by ``codecs.DEFAULT_DECOMPRESSED_LIMIT`` per batch (Kafka has no
limit and would need the heap).

Modules: ``javaemu`` (what the JVM and Scala add: file names, exceptions, value formatting,
``mutable.HashMap`` order), ``files`` (``FileRecords`` / ``FileChannelRecordBatch``),
``logentry`` (0.10.2's reader: every entry one magic 0/1 ``Record``), ``formats`` and
``sanity_texts`` (the releases' facts), ``session`` (options and error maps), ``log``
(``.log`` / ``.checkpoint``), ``entries`` (indexes, ``.txnindex``, ``.snapshot``),
``decoders`` (the message parsers of the decoder options: ``--cluster-metadata-decoder``,
``--offsets-decoder`` and ``--transaction-log-decoder`` as JSON,
``--share-group-state-decoder``), ``coordinator_text`` (the coordinator decoders' older text
printers; their facts: ``coordinator_facts``), ``remote_log``
(``--remote-log-metadata-decoder``), ``json_doc`` (``--json``), this
module (``main``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from conformance.errors import DecodeError
from conformance.logdir.dump.coordinator_text import OffsetsTextParser, TransactionTextParser
from conformance.logdir.dump.decoders import (
    COORDINATOR_JARS,
    ClusterMetadataParser,
    CoordinatorRecordParser,
    coordinator_record_types,
)
from conformance.logdir.dump.entries import EntryDumper
from conformance.logdir.dump.formats import NEWEST_LINE, DumpFormat, format_of
from conformance.logdir.dump.javaemu import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INT_MAX,
    JFile,
    Uncaught,
    throwable_string,
    utf16_len,
)
from conformance.logdir.dump.json_doc import dump_json
from conformance.logdir.dump.log import LogDumper
from conformance.logdir.dump.remote_log import RemoteLogMetadataParser
from conformance.logdir.dump.session import RecordParser
from conformance.messages import Schemas

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "INT_MAX", "dump", "dump_json"]


class _Dumper(LogDumper, EntryDumper):
    """``DumpLogSegments.main`` over the dumpers of each file kind."""

    def run(self, files: Sequence[str]) -> None:
        for arg in files:
            file = JFile(arg)
            name = file.name
            dot = name.rfind(".")
            suffix = name[dot:] if dot >= 0 else ""
            kinds = self.fmt.kinds
            if self.fmt.unknown_file == "silent":  # 0.10.2: chosen by endsWith, no line else
                suffix = next((f".{k}" for k in sorted(kinds) if name.endswith(f".{k}")), "")
                if not suffix:
                    continue
            self.con.println(f"Dumping {file}")
            if dot < 0 and self.fmt.no_dot == "throws":
                n = utf16_len(name)
                raise Uncaught(
                    "java.lang.StringIndexOutOfBoundsException", f"begin -1, end {n}, length {n}"
                )
            if suffix[1:] not in kinds:
                self.eprintln(f"Ignoring unknown file {file}")
            elif suffix in (".log", ".checkpoint"):
                self.dump_log(file)
            elif suffix == ".index":
                self.dump_index(file)
            elif suffix == ".timeindex":
                self.dump_time_index(file)
            elif suffix == ".snapshot":
                self.dump_producer_snapshot(file)
            elif suffix == ".txnindex":
                self.dump_txn_index(file)
        self.report_errors()


def _coordinator_parser(
    fmt: DumpFormat, decoder: str, schemas: Schemas | None, missing_key: str | None
) -> RecordParser:
    if decoder == "offsets" and fmt.offsets_decoder_text is not None:
        return OffsetsTextParser(fmt.offsets_decoder_text, schemas, fmt.error_maps).read_record
    if decoder == "transaction-log" and fmt.transaction_log_decoder_text is not None:
        return TransactionTextParser(fmt.transaction_log_decoder_text, schemas).read_record
    if missing_key is None or schemas is None:
        raise ValueError(
            f"Kafka {fmt.version}'s --{decoder}-decoder prints a format not reproduced yet"
        )
    prefixes = fmt.offsets_decoder_types if decoder == "offsets" else None
    types = coordinator_record_types(schemas, COORDINATOR_JARS[decoder], prefixes)
    return CoordinatorRecordParser(
        types, missing_key, schemas, check_value_version=fmt.coordinator_value_versions_checked
    ).read_record


def dump(
    files: Sequence[str],
    *,
    deep_iteration: bool = False,
    print_data_log: bool = False,
    verify_index_only: bool = False,
    index_sanity_check: bool = False,
    max_bytes: int | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    skip_record_metadata: bool = False,
    cluster_metadata_decoder: Schemas | None = None,
    offsets_decoder: Schemas | bool | None = None,
    transaction_log_decoder: Schemas | bool | None = None,
    remote_log_metadata_decoder: Schemas | None = None,
    share_group_state_decoder: Schemas | None = None,
    fmt: DumpFormat | None = None,
    out: TextIO,
    err: TextIO,
) -> int:
    """Write exactly what ``DumpLogSegments --files <files> <flags>`` of the release ``fmt``
    describes (default: :data:`formats.NEWEST_LINE`) writes; return its exit status (0, or 1
    when an exception escapes the tool).

    ``cluster_metadata_decoder``: ``--cluster-metadata-decoder`` (which implies
    ``--print-data-log``), given as the message definitions of the release printed
    (``jvm.message_defs.message_schemas(version)``): the metadata record types and versions
    that release decodes.

    ``offsets_decoder`` / ``transaction_log_decoder``: ``--offsets-decoder`` /
    ``--transaction-log-decoder`` (both imply ``--print-data-log``), given the same way: the
    coordinator record definitions of the release printed, or ``True`` for a release that reads
    them with hand-written schemas (before 2.8: its facts hold them; the text printers of
    ``coordinator_text``: offsets before 3.8, transaction log before 4.1; ``ValueError`` when
    the release needs its definitions and gets none, or prints a format not reproduced). As in
    the tool, the offsets decoder wins over the transaction log decoder, which wins over the
    metadata decoder, which wins over the remote log metadata decoder, which wins over the share
    group state decoder.

    ``remote_log_metadata_decoder``: ``--remote-log-metadata-decoder`` (3.9+), given the same
    way (the ``kafka-storage`` definitions): each value's ``RemoteLogMetadata`` text
    (``remote_log``).

    ``share_group_state_decoder``: ``--share-group-state-decoder`` (4.0+), given the same way
    (the ``kafka-share-coordinator`` definitions): records of ``__share_group_state`` printed
    as the coordinator decoders' JSON."""
    if fmt is None:
        fmt = format_of(NEWEST_LINE)
    record_parser = None
    if offsets_decoder not in (None, False):
        record_parser = _coordinator_parser(
            fmt,
            "offsets",
            None if isinstance(offsets_decoder, bool) else offsets_decoder,
            fmt.offsets_decoder_missing_key,
        )
    elif transaction_log_decoder not in (None, False):
        record_parser = _coordinator_parser(
            fmt,
            "transaction-log",
            None if isinstance(transaction_log_decoder, bool) else transaction_log_decoder,
            fmt.transaction_log_decoder_missing_key,
        )
    elif cluster_metadata_decoder is not None:
        if fmt.metadata_decoder_error is None:
            raise ValueError(f"Kafka {fmt.version}'s DumpLogSegments has no metadata decoder")
        metadata = ClusterMetadataParser(cluster_metadata_decoder, fmt.metadata_decoder_error)
        record_parser = lambda offset, key, value: (None, metadata.payload(offset, value))  # noqa: E731
    elif remote_log_metadata_decoder is not None:
        if fmt.remote_log_metadata_decoder is None:
            raise ValueError(f"Kafka {fmt.version}'s DumpLogSegments has no remote log decoder")
        remote = RemoteLogMetadataParser(
            remote_log_metadata_decoder, fmt.remote_log_metadata_decoder
        )
        record_parser = remote.read_record
    elif share_group_state_decoder is not None:
        share = fmt.share_group_state_decoder
        if share is None:
            raise ValueError(f"Kafka {fmt.version}'s DumpLogSegments has no share group decoder")
        types = coordinator_record_types(
            share_group_state_decoder, COORDINATOR_JARS["share-group-state"]
        )
        record_parser = CoordinatorRecordParser(
            types,
            share["missing_key"],
            value_label=share["value_label"],
            check_value_version=fmt.coordinator_value_versions_checked,
        ).read_record
    if record_parser is not None:
        print_data_log = True
    d = _Dumper(
        out,
        err,
        deep=deep_iteration or (print_data_log and fmt.print_data_implies_deep),
        print_data=print_data_log,
        verify_only=verify_index_only,
        sanity_only=index_sanity_check,
        max_bytes=INT_MAX if max_bytes is None else max_bytes,
        max_message_size=max_message_size,
        skip_metadata=skip_record_metadata,
        fmt=fmt,
        record_parser=record_parser,
    )
    try:
        d.run(files)
    except (Uncaught, DecodeError) as e:
        d.con.flush_partial()
        text = throwable_string(e)
        for today, then in fmt.exception_names.items():  # classes the release names otherwise
            text = text.replace(today, then)
        err.write(f'Exception in thread "main" {text}\n')
        return 1
    return 0
