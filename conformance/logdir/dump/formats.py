"""What DumpLogSegments prints, per Kafka version: the format as data.

The printer (``log``, ``entries``, ``session``, ``__init__``) never asks for a version; it
asks a :class:`DumpFormat` for a fact (a line template, a flag, a set of names).
:data:`CHANGES` is the history of those facts: each row says from which Kafka release on a
fact has a new value, and which Kafka change (commit, KAFKA- ticket, KIP) did it.
:func:`format_of` folds the rows up to a version, starting from the oldest supported
release (:data:`OLDEST`).

Templates are ``str.format`` strings over named fields that the printer computes on demand,
left to right, as the JVM evaluates a string concatenation (so a field that throws, throws
at the same point of the line; ``{{``/``}}`` are literal braces).

How the rows were found: the source of ``DumpLogSegments`` (Scala ``kafka.tools`` up to 4.2,
Java ``org.apache.kafka.tools`` from 4.3) and of the classes it prints, at each release tag;
every row is checked against the real tool of the releases the kit holds corpora of
(docs/dump.md lists which versions' tools the tests run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.logdir.dump.coordinator_facts import OFFSETS_TEXT_0_10_2
from conformance.logdir.dump.coordinator_facts import ROWS as COORDINATOR_ROWS
from conformance.logdir.dump.sanity_texts import ROWS as SANITY_ROWS
from conformance.logdir.dump.sanity_texts import SANITY_JAVA, SANITY_REQUIRE
from conformance.logdir.dump.versions import (
    UnknownKafkaVersion,
    Version,
    kafka_version,
    version_text,
)
from conformance.wire import control

__all__ = [
    "BASE",
    "CHANGES",
    "NEWEST_LINE",
    "OLDEST_LINE",
    "OPTION_ADDED",
    "NEWEST",
    "OLDEST",
    "Change",
    "DumpFormat",
    "UnknownKafkaVersion",
    "format_of",
    "option_history",
    "kafka_version",
    "same_format",
    "version_text",
]

#: the oldest and newest release lines the kit prints (any release between them is accepted)
OLDEST: Version = (0, 10, 2, 0)
NEWEST: Version = (4, 3, 99, 0)
#: the newest and oldest release lines, as users write them (``--format-of`` default: newest)
NEWEST_LINE = "4.3"
OLDEST_LINE = "0.10.2"


# ---------------------------------------------------------------------------------------------
# the facts


@dataclass(frozen=True)
class DumpFormat:
    """Every version-dependent fact of one release's DumpLogSegments. The comments say what
    the printer does with each; :data:`CHANGES` says when each changed."""

    #: the release asked for, e.g. "2.8.2"
    version: str = ""
    #: options the release's command line has (without ``--``)
    options: frozenset[str] = frozenset()
    #: file kinds dumped, by suffix (from the last '.'); others: ``unknown_file``
    kinds: frozenset[str] = frozenset()
    #: another suffix: "ignored-line" ('Dumping <f>', then 'Ignoring unknown file <f>' on
    #: stderr) or "silent" (nothing at all: 0.10.2 picks files by ``endsWith``)
    unknown_file: str = "ignored-line"
    #: a name without '.': "throws" (StringIndexOutOfBoundsException) or "unknown" (as
    #: another suffix, 4.3+)
    no_dot: str = "throws"
    #: ``bootstrap.checkpoint`` is 'KRaft bootstrap snapshot' (else parsed as a snapshot name)
    bootstrap_snapshot: bool = True
    #: first line of a .log dump
    log_header: str = "Log starting offset: {start}"
    #: the batch line: "always", or "shallow" (only without deep iteration)
    batch_line_when: str = "always"
    #: the batch line: its head for a v2 batch, for a v0/v1 one, then the tail
    batch_head_v2: str = ""
    batch_head_legacy: str = "offset: {lastOffset}"
    batch_tail: str = ""
    #: codec names: "name" (``CompressionType.name``: gzip) or "enum" (the constant: GZIP)
    codec_names: str = "name"
    #: a record line: (condition, template) pieces in order; a condition is flags joined by
    #: '&' (``always``, ``meta``: not --skip-record-metadata, ``v2``, ``legacy``, ``control``,
    #: ``data``: --print-data-log and not control, ``key``/``payload``: the parser gives one)
    record_pieces: tuple[tuple[str, str], ...] = ()
    #: the message parser of --print-data-log: "independent" or "value-gated"
    data_parser: str = "independent"
    #: ``--print-data-log`` implies deep iteration
    print_data_implies_deep: bool = True
    #: control types known by name (others print as UNKNOWN)
    control_names: Mapping[int, str] = field(default_factory=dict)
    #: control types printed as the JSON of their value: type -> text before the JSON
    control_json: Mapping[int, str] = field(default_factory=dict)
    #: the control key's size check message and the NPE of a null key
    control_key_size_text: str = "end control record key"
    npe_null_control_key: str = (
        'Cannot invoke "java.nio.ByteBuffer.remaining()" because "key" is null'
    )
    #: how an end-transaction marker value is read: "checked" or "plain" (see log.py)
    end_txn_marker_reader: str = "checked"
    #: 'Found N invalid bytes' line
    trailing_line: str = "Found {n} invalid bytes at the end of {name}"
    #: non-consecutive offsets are checked for "all" records or "uncompressed" ones (0.10.2)
    non_consecutive_of: str = "all"
    #: non-consecutive offsets: the first record of a file "skip"s the check (Scala) or is
    #: "compare"d with -1 (4.3); pairs kept "prepended" (newest first) or "ascending"
    non_consecutive_first: str = "skip"
    non_consecutive_pairs: str = "prepended"
    non_consecutive_header: str = "Non-consecutive offsets in {path}"
    #: the error maps' iteration order: "scala-2.11", "scala-2.13" or "java"
    error_maps: str = "scala-2.13"
    #: index mismatch pairs: "prepended" (newest first) or "descending" (by index offset)
    index_mismatch_pairs: str = "prepended"
    #: header of the time-index offsets not found in the log
    ts_not_found_header: str = "The following indexed offsets are not found in the log."
    #: time index: batches read "lazily" up to the match, or "eagerly" to the end of file
    ts_index_batches: str = "lazily"
    #: an index entry is checked against the "batch-last" offset of the batch at its position
    #: (2.3+) or the offset of that batch's "first-record"; the zero-entry stop (an entry of
    #: the base offset after the first) comes "first" (2.3+) or "after-check"
    index_compares: str = "batch-last"
    index_zero_stop: str = "first"
    #: a failed index sanity check: its exception class and messages (``sanity_texts``); an
    #: offset index whose last offset *equals* its base offset fails too (up to 1.1)
    index_exception: str = "org.apache.kafka.storage.internals.log.CorruptIndexException"
    index_sanity_texts: Mapping[str, str] = field(default_factory=lambda: dict(SANITY_JAVA))
    index_last_equal_fails: bool = False
    #: a .log's entries read as "batches" (0.11+, by the magic byte) or "records" (0.10.2:
    #: each one ``Record`` of magic 0/1, whatever its magic byte; ``logentry``)
    entry_reader: str = "batches"
    #: a v2 batch header cut by the end of the file: "named" ('Failed to load record batch at
    #: position P from FileRecords(...)', 2.1.1+) or "cause" (the ``EOFException``'s text)
    batch_load_error: str = "named"
    #: exception classes the release names otherwise: today's class -> the release's
    exception_names: Mapping[str, str] = field(default_factory=dict)
    #: a batch size field below the record overhead: "named" ('Found record size N smaller
    #: than ... in file F.', 2.0+) or "plain" ('Record size is smaller than ... (14).')
    short_record_message: str = "named"
    #: how ``FileRecords.open`` opens a .log: "channel" (``FileChannel.open``, 2.1+) or "raf"
    #: (``RandomAccessFile``: ``FileNotFoundException: <path> (<reason>)``)
    log_opener: str = "channel"
    #: ``FileRecords.slice``/``read``: "bounded" (2.1+: a position past the end, a negative
    #: position or size fail naming the records) or "unbounded" (a negative position or size
    #: fail, unnamed; a position past the end gives a slice without batches)
    slice_checks: str = "bounded"
    #: the ``FileRecords`` a .log is read through is a slice capped at the file size (3.3+,
    #: so messages read ``end=<size>``), else the whole channel (``end=2147483647``)
    log_slice_capped: bool = True
    #: a .index without entries prints this line (None: nothing)
    empty_index_line: str | None = "{file} is empty."
    #: --index-sanity-check of a .index whose size is not a multiple of 8 "throws", or
    #: "passes" (4.3.x)
    misaligned_index_sanity: str = "throws"
    #: the producer snapshot line (before the batch metadata, if any); optional values as
    #: "scala" Option (None/Some(n)) or "java" OptionalLong
    snapshot_head: str = (
        "producerId: {producerId} producerEpoch: {producerEpoch} "
        "coordinatorEpoch: {coordinatorEpoch} currentTxnFirstOffset: {currentTxnFirstOffset} "
        "lastTimestamp: {lastTimestamp} "
    )
    snapshot_batch: str = (
        "firstSequence: {firstSequence} lastSequence: {lastSequence} lastOffset: {lastOffset} "
        "offsetDelta: {offsetDelta} timestamp: {timestamp}"
    )
    optional_style: str = "java"
    #: the batch part of a snapshot line: printed "always" (up to 2.4.0) or when the entry
    #: "has-metadata" (its last offset >= 0, 2.4.1+, KAFKA-9144); its firstSequence is
    #: ``lastSequence - offsetDelta`` "plain" (up to 2.1.0) or "wrapping" (2.1.1+, KAFKA-7692)
    snapshot_batch_when: str = "has-metadata"
    snapshot_first_sequence: str = "wrapping"
    #: how the snapshot is read (``logdir.snapshot.SCHEMA_READERS``)
    snapshot_schema: str = "struct"
    #: --cluster-metadata-decoder: the payload text of a value it cannot read (``{offset}``:
    #: the record's, ``{message}``: the exception's ``getMessage()``); None before the option
    metadata_decoder_error: str | None = None
    #: --offsets-decoder as JSON (3.8+): the RuntimeException's message for a record without
    #: a key (``{offset}``); None: the release prints another format (not reproduced yet)
    offsets_decoder_missing_key: str | None = None
    #: --offsets-decoder: the group coordinator definitions (name prefixes) ``prepareKey``
    #: prints; other types print 'Unknown record type'; None: all of them
    offsets_decoder_types: tuple[str, ...] | None = None
    #: --transaction-log-decoder as JSON (4.1+): as ``offsets_decoder_missing_key``
    transaction_log_decoder_missing_key: str | None = None
    #: --offsets-decoder as text (before 3.8): how records are read and printed, the
    #: entries of ``coordinator_text.OFFSETS_KEYS``; None: the release prints JSON
    offsets_decoder_text: Mapping[str, Any] | None = None
    #: --transaction-log-decoder as text (0.11 - 4.0): ``coordinator_text.TRANSACTION_KEYS``
    transaction_log_decoder_text: Mapping[str, Any] | None = None
    #: --share-group-state-decoder (4.0+): "missing_key" and "value_label" (``decoders``)
    share_group_state_decoder: Mapping[str, Any] | None = None
    #: --remote-log-metadata-decoder (3.9+): "error" and "null_value" texts (``remote_log``)
    remote_log_metadata_decoder: Mapping[str, Any] | None = None
    #: the JSON coordinator decoders refuse a value version outside its definition's (4.0+)
    coordinator_value_versions_checked: bool = False

    def has(self, option: str) -> bool:
        return option in self.options

    @property
    def release(self) -> Version:
        """:attr:`version` as a 4-tuple."""
        return kafka_version(self.version)


@dataclass(frozen=True)
class Change:
    """From Kafka ``since`` on, the named facts have these values."""

    since: Version
    ticket: str  # "KAFKA-13845 (#12084)" or "commit 62860fa (#9891)"
    what: str
    facts: Mapping[str, Any]


#: the coordinator decoders' RuntimeException for a record without a key
_MISSING_KEY = (
    "Failed to decode message at offset {{offset}} using {decoder} (message had a missing key)"
)


def _v(text: str) -> Version:
    return kafka_version(text)


# ---------------------------------------------------------------------------------------------
# the history

_BATCH_HEAD_V2_2_2 = (
    "baseOffset: {baseOffset} lastOffset: {lastOffset} count: {count} "
    "baseSequence: {baseSequence} lastSequence: {lastSequence} producerId: {producerId} "
    "producerEpoch: {producerEpoch} partitionLeaderEpoch: {partitionLeaderEpoch} "
    "isTransactional: {isTransactional} isControl: {isControl}"
)
_DATA = (("data&key", " key: {key}"), ("data&payload", " payload: {payload}"))
_CONTROL = (("control", "{controlText}"),)


_RECORD_0_11_0_2 = (
    (
        "always",
        "offset: {offset} position: {position} {timestampType}: {timestamp} "
        "isvalid: {recordIsValid} keysize: {keySize} valuesize: {valueSize} "
        "magic: {magic} compresscodec: {compresscodec}",
    ),
    (
        "v2",
        " producerId: {producerId} producerEpoch: {producerEpoch} sequence: {sequence} "
        "isTransactional: {isTransactional} headerKeys: [{headerKeys}]",
    ),
    ("legacy", " crc: {recordCrc}"),
    *_CONTROL,
    *_DATA,
)


def _known_controls(n: int) -> dict[int, str]:
    """The names of control types 0 .. n-1 (``wire.control.CONTROL_TYPES``, today's names)."""
    return {t: control.CONTROL_TYPES[t] for t in range(n)}


#: the facts of :data:`OLDEST` (0.10.2: a ``LogEntry`` per line, magic 0 and 1 only)
BASE: dict[str, Any] = {
    "options": frozenset(
        {
            "print-data-log",
            "verify-index-only",
            "index-sanity-check",
            "files",
            "max-message-size",
            "deep-iteration",
            "value-decoder-class",
            "key-decoder-class",
            "offsets-decoder",
        }
    ),
    "kinds": frozenset({"log", "index", "timeindex"}),
    "unknown_file": "silent",
    "bootstrap_snapshot": False,
    "log_header": "Starting offset: {start}",
    "batch_line_when": "never",
    "codec_names": "enum",
    "record_pieces": (
        (
            "always",
            "offset: {offset} position: {position} {recordTimestampType}: {timestamp} "
            "isvalid: {recordIsValid} payloadsize: {valueSize} magic: {recordMagic} "
            "compresscodec: {recordCodec} crc: {recordCrc}",
        ),
        ("haskey", " keysize: {keySize}"),
        *_DATA,
    ),
    "data_parser": "value-gated",
    "print_data_implies_deep": False,
    "control_names": {},
    "empty_index_line": None,
    "index_compares": "first-record",
    "index_exception": "java.lang.IllegalArgumentException",
    "index_sanity_texts": SANITY_REQUIRE,
    "index_last_equal_fails": True,
    "entry_reader": "records",
    "batch_load_error": "cause",
    "exception_names": {
        "org.apache.kafka.common.InvalidRecordException": (
            "org.apache.kafka.common.record.InvalidRecordException"
        ),
    },
    "log_slice_capped": False,
    "log_opener": "raf",
    "slice_checks": "unbounded",
    "short_record_message": "plain",
    "index_zero_stop": "after-check",
    "error_maps": "scala-2.11",
    "non_consecutive_header": "Non-secutive offsets in :{path}",
    "non_consecutive_of": "uncompressed",
    "snapshot_head": "",
    "optional_style": "scala",
    "snapshot_batch_when": "always",
    "snapshot_first_sequence": "plain",
    "offsets_decoder_text": OFFSETS_TEXT_0_10_2,
}

_CORE_CHANGES: tuple[Change, ...] = (
    Change(
        _v("0.11.0"),
        "KIP-98 (KAFKA-4816, KAFKA-5108, KAFKA-5121)",
        "record batches (magic 2): a batch line without deep iteration, a record line with "
        "it; producer snapshots and transaction indexes dumped, other suffixes ignored",
        {
            "kinds": frozenset({"log", "index", "timeindex", "snapshot", "txnindex"}),
            "unknown_file": "ignored-line",
            "batch_line_when": "shallow",
            "batch_head_v2": (
                "baseOffset: {baseOffset} lastOffset: {lastOffset} "
                "baseSequence: {baseSequence} lastSequence: {lastSequence} "
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "partitionLeaderEpoch: {partitionLeaderEpoch} isTransactional: {isTransactional}"
            ),
            "batch_tail": (
                " position: {position} {timestampType}: {maxTimestamp} isvalid: {isvalid} "
                "size: {size} magic: {magic} compresscodec: {compresscodec} crc: {crc}"
            ),
            "record_pieces": (
                (
                    "always",
                    "offset: {offset} position: {position} {timestampType}: {timestamp} "
                    "isvalid: {recordIsValid} keysize: {keySize} valuesize: {valueSize} "
                    "magic: {magic} compresscodec: {compresscodec}",
                ),
                (
                    "v2",
                    " producerId: {producerId} sequence: {sequence} "
                    "isTransactional: {isTransactional} headerKeys: [{headerKeys}]",
                ),
                ("legacy", " crc: {recordCrc}"),
                *_CONTROL,
                *_DATA,
            ),
            "control_names": _known_controls(2),
            "non_consecutive_header": "Non-consecutive offsets in :{path}",
            "non_consecutive_of": "all",
            "snapshot_head": (
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "lastSequence: {lastSequence} lastOffset: {lastOffset} "
                "offsetDelta: {offsetDelta} lastTimestamp: {timestamp} "
                "coordinatorEpoch: {coordinatorEpoch} "
                "currentTxnFirstOffset: {currentTxnFirstOffset}"
            ),
            "snapshot_batch": "",
        },
    ),
    Change(
        _v("0.11.0"),
        "KIP-98 (KAFKA-4816, commit 5bd06f1)",
        "a .log read as record batches (FileLogInputStream.nextBatch, by the magic byte), no "
        "longer every entry as a magic 0/1 Record (0.10.2 prints a v2 batch as a message of "
        "garbage fields, or dies on them)",
        {"entry_reader": "batches"},
    ),
    Change(
        _v("0.11.0.2"),
        "commit 5d24222 backport (KAFKA-5494)",
        "v2 record lines print the batch's producerEpoch",
        {"record_pieces": _RECORD_0_11_0_2},
    ),
    Change(
        _v("1.0"),
        "KAFKA-5494 (commit 5d24222)",
        "producer snapshot lines print the cached batch metadata",
        {
            "snapshot_head": (
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "coordinatorEpoch: {coordinatorEpoch} "
                "currentTxnFirstOffset: {currentTxnFirstOffset} "
                "cachedMetadata: Queue(BatchMetadata(firstSeq={firstSequence}, "
                "lastSeq={lastSequence}, firstOffset={firstOffset}, lastOffset={lastOffset}, "
                "timestamp={timestamp}))"
            ),
        },
    ),
    Change(
        _v("1.0.2"),
        "KAFKA-6683 (commit 62ee1fd)",
        "producer snapshot lines: the entry, then its batch metadata",
        {
            "snapshot_head": (
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "coordinatorEpoch: {coordinatorEpoch} "
                "currentTxnFirstOffset: {currentTxnFirstOffset} "
            ),
            "snapshot_batch": (
                "firstSequence: {firstSequence} lastSequence: {lastSequence} "
                "lastOffset: {lastOffset} offsetDelta: {offsetDelta} timestamp: {timestamp}"
            ),
        },
    ),
    Change(
        _v("1.1"),
        "commit b20639d (#4396)",
        "--print-data-log implies deep iteration",
        {"print_data_implies_deep": True},
    ),
    Change(
        _v("2.0"),
        "commit f467c9c",
        "v2 batch lines print count; a record size below the overhead names the size and file",
        {
            "batch_head_v2": (
                "baseOffset: {baseOffset} lastOffset: {lastOffset} count: {count} "
                "baseSequence: {baseSequence} lastSequence: {lastSequence} "
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "partitionLeaderEpoch: {partitionLeaderEpoch} isTransactional: {isTransactional}"
            ),
            "short_record_message": "named",
        },
    ),
    Change(
        _v("2.0.1"),
        "KAFKA-7467 backport (commit 79757c9)",
        "v2 batch lines print isControl",
        {"batch_head_v2": _BATCH_HEAD_V2_2_2},
    ),
    Change(
        _v("2.1"),
        "commit 8119683 (FileRecords over FileChannel.open)",
        "a missing or directory .log: java.nio.file exceptions, no '(reason)'; a read past the "
        "end of a .log fails ('Slice from position ...') instead of finding no batch",
        {"log_opener": "channel", "slice_checks": "bounded"},
    ),
    Change(
        _v("2.1.1"),
        "KAFKA-7692 (commit a0d4731)",
        "a snapshot's firstSequence wraps as the batch's sequence does",
        {"snapshot_first_sequence": "wrapping"},
    ),
    Change(
        _v("2.1.1"),
        "commit ed08921 (#6068)",
        "a batch header cut by the end of a .log: 'Failed to load record batch at position P "
        "from FileRecords(...)' (before: the EOFException, naming the file channel)",
        {"batch_load_error": "named"},
    ),
    Change(
        _v("2.2"),
        "KAFKA-7687 (#5976)",
        "the batch line also with deep iteration (with count and isControl), records "
        "indented under it",
        {
            "batch_line_when": "always",
            "batch_head_v2": _BATCH_HEAD_V2_2_2,
            "batch_tail": (
                " position: {position} {timestampType}: {maxTimestamp} size: {size} "
                "magic: {magic} compresscodec: {compresscodec} crc: {crc} isvalid: {isvalid}"
            ),
            "record_pieces": (
                (
                    "always",
                    "| offset: {offset} {timestampType}: {timestamp} keysize: {keySize} "
                    "valuesize: {valueSize}",
                ),
                ("v2", " sequence: {sequence} headerKeys: [{headerKeys}]"),
                ("legacy", " crc: {recordCrc} isvalid: {recordIsValid}"),
                *_CONTROL,
                *_DATA,
            ),
        },
    ),
    Change(
        _v("2.3"),
        "KAFKA-7487 (#5756)",
        "index entries checked against the last offset of the batch at their position, the "
        "zero-entry stop before the check; the non-consecutive offsets header loses its ':'",
        {
            "index_compares": "batch-last",
            "index_zero_stop": "first",
            "non_consecutive_header": "Non-consecutive offsets in {path}",
        },
    ),
    Change(
        _v("2.4"),
        "KAFKA-8745 (#7152)",
        "keys printed also for records with a null value (and, as the kit runs 2.4+, Scala "
        "2.13 builds: kafka_2.13 jars, Scala 2.13 hash map order)",
        {"data_parser": "independent", "error_maps": "scala-2.13"},
    ),
    Change(
        _v("2.4"),
        "KAFKA-8729 (commit f6f24c4, #7150)",
        "InvalidRecordException moved from org.apache.kafka.common.record to "
        "org.apache.kafka.common",
        {"exception_names": {}},
    ),
    Change(
        _v("2.4.1"),
        "KAFKA-9144 (commit b13a7ff)",
        "a snapshot entry without batch metadata (last offset < 0) prints none",
        {"snapshot_batch_when": "has-metadata"},
    ),
    Change(
        _v("2.7"),
        "KIP-595 (commit b7c8490)",
        "control types 2 and 3 named QUORUM_REASSIGNMENT and LEADER_CHANGE",
        {"control_names": {**_known_controls(2), 2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}},
    ),
    Change(
        _v("2.8"),
        "KAFKA-6181 (#9204); commit 62860fa (#9891)",
        "record lines show a superset of fields, --skip-record-metadata; an empty .index says so",
        {
            "record_pieces": (
                (
                    "meta",
                    "| offset: {offset} isValid: {recordIsValid} crc: {recordCrc} "
                    "keySize: {keySize} valueSize: {valueSize} {timestampType}: {timestamp} "
                    "baseOffset: {baseOffset} lastOffset: {lastOffset} "
                    "baseSequence: {baseSequence} lastSequence: {lastSequence} "
                    "producerEpoch: {producerEpoch} "
                    "partitionLeaderEpoch: {partitionLeaderEpoch} batchSize: {batchSize} "
                    "magic: {magic} compressType: {compresscodec} position: {position}",
                ),
                ("meta&v2", " sequence: {sequence} headerKeys: [{headerKeys}]"),
                ("meta&legacy", " crc: {recordCrc} isvalid: {recordIsValid}"),
                ("meta&control", "{controlText}"),
                ("data&key", "{prefix}key: {key}"),
                ("data&payload", " payload: {payload}"),
            ),
            "empty_index_line": "{file} is empty.",
        },
    ),
    Change(
        _v("3.0"),
        "commit 937054b (#10498), commit b690277 (#11101); commit 32e6a5b (#10212)",
        "record lines trimmed (no batch fields), legacy validity after the sizes; codec "
        "names lower case; --cluster-metadata-decoder; control type 2 is LEADER_CHANGE "
        "(KAFKA-12952)",
        {
            "codec_names": "name",
            "control_names": _known_controls(3),
            "metadata_decoder_error": "Error at {offset}, skipping. {message}",
            "record_pieces": (
                (
                    "meta",
                    "| offset: {offset} {timestampType}: {timestamp} keySize: {keySize} "
                    "valueSize: {valueSize}",
                ),
                ("meta&v2", " sequence: {sequence} headerKeys: [{headerKeys}]"),
                ("meta&legacy", " isValid: {recordIsValid} crc: {recordCrc}}}"),
                ("meta&control", "{controlText}"),
                ("data&key", "{prefix}key: {key}"),
                ("data&payload", " payload: {payload}"),
            ),
        },
    ),
    Change(
        _v("3.1"),
        "commit 9abc45e (#11354)",
        "producer snapshots print lastTimestamp",
        {
            "snapshot_head": (
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "coordinatorEpoch: {coordinatorEpoch} "
                "currentTxnFirstOffset: {currentTxnFirstOffset} lastTimestamp: {lastTimestamp} "
            ),
        },
    ),
    Change(
        _v("3.2"),
        "commit 17dcb80 (#11694)",
        "v2 batch lines print deleteHorizonMs",
        {"batch_head_v2": _BATCH_HEAD_V2_2_2 + " deleteHorizonMs: {deleteHorizonMs}"},
    ),
    Change(
        _v("3.3"),
        "KAFKA-13845 (#12084), KAFKA-13687 (#11842)",
        "KRaft snapshots (.checkpoint) dumped, 'Log starting offset', snapshot header and "
        "footer records as JSON, --max-bytes (a .log read through a slice capped at its size)",
        {
            "log_slice_capped": True,
            "kinds": frozenset({"log", "index", "timeindex", "snapshot", "txnindex", "checkpoint"}),
            "log_header": "Log starting offset: {start}",
            "control_names": _known_controls(5),
            "control_json": {3: "SnapshotHeader ", 4: "SnapshotFooter "},
        },
    ),
    Change(
        _v("3.4"),
        "commit 289ab14 (#12556)",
        "bootstrap.checkpoint is 'KRaft bootstrap snapshot'",
        {"bootstrap_snapshot": True},
    ),
    Change(
        _v("3.5"),
        "KAFKA-14480 (#13040)",
        "producer state and indexes in Java (storage module): optional offsets print as "
        "OptionalLong, index sanity failures are the storage module's CorruptIndexException",
        {
            "optional_style": "java",
            "index_exception": "org.apache.kafka.storage.internals.log.CorruptIndexException",
            "index_sanity_texts": SANITY_JAVA,
        },
    ),
    Change(
        _v("3.8"),
        "KAFKA-16207 (#15671); KAFKA-16470 (#15652)",
        "KRaft version and voters control records, as JSON; --offsets-decoder prints JSON "
        "(CoordinatorRecordSerde; the consumer group records of KIP-848)",
        {
            "offsets_decoder_missing_key": _MISSING_KEY.format(decoder="offset topic decoder"),
            "offsets_decoder_text": None,
            "offsets_decoder_types": ("OffsetCommit", "GroupMetadata", "ConsumerGroup"),
            "control_names": _known_controls(7),
            "control_json": {
                3: "SnapshotHeader ",
                4: "SnapshotFooter ",
                5: "KRaftVersion ",
                6: "KRaftVoters ",
            },
        },
    ),
    Change(
        _v("4.0"),
        "KAFKA-17633 (#17467), KAFKA-17056",
        "--share-group-state-decoder; producer snapshots read with the generated message "
        "(other corruption messages); --offsets-decoder prints every group coordinator record",
        {"snapshot_schema": "generated", "offsets_decoder_types": None},
    ),
    Change(
        _v("4.1"),
        "KAFKA-19069 (#19729); EndTransactionMarker rewrite; KAFKA-18207; KAFKA-18457",
        "LEADER_CHANGE records as JSON; end-transaction markers read without a size check; "
        "--transaction-log-decoder prints JSON; one missing-key message for all decoders",
        {
            "offsets_decoder_missing_key": _MISSING_KEY.format(decoder="the specified decoder"),
            "transaction_log_decoder_missing_key": _MISSING_KEY.format(
                decoder="the specified decoder"
            ),
            "transaction_log_decoder_text": None,
            "control_json": {
                2: "LeaderChange: ",
                3: "SnapshotHeader ",
                4: "SnapshotFooter ",
                5: "KRaftVersion ",
                6: "KRaftVoters ",
            },
            "end_txn_marker_reader": "plain",
        },
    ),
    Change(
        _v("4.3"),
        "KAFKA-14579 (#21223): the tool rewritten in Java",
        "legacy records without the stray '}'; non-consecutive offsets compared from -1 and "
        "kept sorted; index mismatches sorted; java.util.HashMap order; names without '.' "
        "ignored; time index read to the end; snapshot line without trailing space; "
        "'| payload:' when skipping metadata; misaligned .index passes the sanity check",
        {
            "record_pieces": (
                (
                    "meta",
                    "| offset: {offset} {timestampType}: {timestamp} keySize: {keySize} "
                    "valueSize: {valueSize}",
                ),
                ("meta&v2", " sequence: {sequence} headerKeys: [{headerKeys}]"),
                ("meta&legacy", " isValid: {recordIsValid} crc: {recordCrc}"),
                ("meta&control", "{controlText}"),
                ("data&key", "{prefix}key: {key}"),
                ("data&payload", "{prefix}payload: {payload}"),
            ),
            "non_consecutive_first": "compare",
            "non_consecutive_pairs": "ascending",
            "index_mismatch_pairs": "descending",
            "error_maps": "java",
            "no_dot": "unknown",
            "ts_not_found_header": "The following indexed offsets are not found in :{path}",
            "ts_index_batches": "eagerly",
            "snapshot_head": (
                "producerId: {producerId} producerEpoch: {producerEpoch} "
                "coordinatorEpoch: {coordinatorEpoch} "
                "currentTxnFirstOffset: {currentTxnFirstOffset} lastTimestamp: {lastTimestamp}"
            ),
            "snapshot_batch": (
                " firstSequence: {firstSequence} lastSequence: {lastSequence} "
                "lastOffset: {lastOffset} offsetDelta: {offsetDelta} timestamp: {timestamp}"
            ),
            "control_key_size_text": "control record key",
            "npe_null_control_key": (
                'Cannot invoke "java.nio.ByteBuffer.duplicate()" because "key" is null'
            ),
            "misaligned_index_sanity": "passes",
        },
    ),
)

#: the history: the rows above, the coordinator decoders' text printers'
#: (``coordinator_facts.ROWS``) and the index sanity check's (``sanity_texts.ROWS``), in
#: release order (rows of one release: in that order)
CHANGES: tuple[Change, ...] = tuple(
    sorted(
        _CORE_CHANGES
        + tuple(Change(_v(since), *row) for since, *row in (*COORDINATOR_ROWS, *SANITY_ROWS)),
        key=lambda c: c.since,
    )
)

#: options added after 0.10.2 that are not in a row's ``options`` set above (one place:
#: the rows above replace the whole set; these extend it from their version on)
OPTION_ADDED: dict[str, tuple[Version, str]] = {
    "transaction-log-decoder": (_v("0.11.0"), "commit 4424534 (KIP-98 transactions)"),
    "skip-record-metadata": (_v("2.8"), "KAFKA-6181"),
    "cluster-metadata-decoder": (_v("3.0"), "commit 32e6a5b"),
    "max-bytes": (_v("3.3"), "KAFKA-13687"),
    "remote-log-metadata-decoder": (_v("3.9"), "KAFKA-16228"),
    "share-group-state-decoder": (_v("4.0"), "KAFKA-17633"),
}


def option_history(option: str) -> str:
    """When ``option`` came to DumpLogSegments, for a refusal message."""
    added = OPTION_ADDED.get(option)
    if added is not None:
        return f"added in Kafka {version_text(added[0])}, {added[1]}"
    for change in CHANGES:
        if option in change.facts.get("options", ()):
            return f"added in Kafka {version_text(change.since)}, {change.ticket}"
    return "not an option of any release the kit knows"


def format_of(version: str) -> DumpFormat:
    """The format Kafka ``version``'s DumpLogSegments prints. Raises
    :class:`UnknownKafkaVersion` outside :data:`OLDEST` .. :data:`NEWEST`."""
    v = kafka_version(version)
    if not OLDEST <= v <= NEWEST:
        raise UnknownKafkaVersion(
            f"the kit knows DumpLogSegments of Kafka {version_text(OLDEST)} to {NEWEST_LINE}.x, "
            f"not {version}"
        )
    facts = dict(BASE)
    for change in CHANGES:
        if change.since <= v:
            facts.update(change.facts)
    facts["options"] = frozenset(facts["options"]) | {
        option for option, (since, _) in OPTION_ADDED.items() if since <= v
    }
    return DumpFormat(version=version, **facts)


def same_format(a: DumpFormat, b: DumpFormat) -> bool:
    """Whether two releases print the same (every fact but the version equal)."""
    return dataclasses.replace(a, version="") == dataclasses.replace(b, version="")


def changes_table() -> str:
    """:data:`CHANGES` as a Markdown table (docs/dump.md holds this text; a test compares)."""
    rows = ["| from Kafka | Kafka change | what the tool prints differently |", "|---|---|---|"]
    for change in CHANGES:
        what = change.what.replace("|", "\\|")
        rows.append(f"| {version_text(change.since)} | {change.ticket} | {what} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(changes_table(), end="")
