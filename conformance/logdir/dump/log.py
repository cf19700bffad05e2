"""DumpLogSegments for ``.log`` and KRaft ``.checkpoint`` files (``dumpLog``): one line per batch,
with deep iteration one ``| offset: ...`` line per record, control records as text.

=========================  ===============================================================
control type               printed (after ``headerKeys: [...]``)
=========================  ===============================================================
ABORT / COMMIT (0, 1)      `` endTxnMarker: COMMIT coordinatorEpoch: E``
SNAPSHOT_HEADER (3)        `` SnapshotHeader {json}`` (``SnapshotHeaderRecordJsonConverter``)
SNAPSHOT_FOOTER (4)        `` SnapshotFooter {json}``
KRAFT_VERSION (5)          `` KRaftVersion {json}``
KRAFT_VOTERS (6)           `` KRaftVoters {json}``
other                      `` controlType: NAME(id)``
=========================  ===============================================================

Parsing is ``wire.control``'s; this module only formats.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from conformance.errors import DecodeError, NullPointerError
from conformance.logdir.dump.files import (
    FileBatch,
    FileRecords,
    legacy_message_valid,
    start_offset,
)
from conformance.logdir.dump.javaemu import (
    INT_MAX,
    JFile,
    jbool,
    json_str,
    optional_long,
    read_snapshot_name,
)
from conformance.logdir.dump.session import DumpSession
from conformance.primitives.java import java_utf8, wrap64
from conformance.wire import control
from conformance.wire.batch import increment_sequence
from conformance.wire.legacy import LegacyMessage
from conformance.wire.record import Record


class _Fields(dict):  # type: ignore[type-arg]
    """The named fields of a line template, each computed when the template reaches it
    (``str.format_map`` asks left to right, as the JVM evaluates a concatenation)."""

    def __init__(self, getters: dict[str, Callable[[], object]]) -> None:
        super().__init__()
        self.getters = getters

    def __missing__(self, key: str) -> object:
        return self.getters[key]()


class LogDumper(DumpSession):
    """``.log`` / ``.checkpoint``."""

    # -- .log / .checkpoint -------------------------------------------------------------------
    def dump_log(self, file: JFile) -> None:
        fmt = self.fmt
        name = file.name
        if name.endswith(".log"):
            start, _ = start_offset(file)
            self.con.println(fmt.log_header.format(start=start))
        elif name.endswith(".checkpoint"):
            if name == "bootstrap.checkpoint" and fmt.bootstrap_snapshot:
                self.con.println("KRaft bootstrap snapshot")
            else:
                end_offset, epoch = read_snapshot_name(name)
                self.con.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
        opened = FileRecords.open(file, fmt)
        try:
            records = opened.slice(0, self.max_bytes) if fmt.log_slice_capped else opened
            valid_bytes = 0
            last = [-1]  # the previous record's offset
            key = file.absolute
            pairs = fmt.non_consecutive_pairs
            for batch in records.batches(self.max_message_size):
                if fmt.batch_line_when == "always" or (
                    fmt.batch_line_when == "shallow" and not self.deep
                ):
                    self._print_batch_level(batch, valid_bytes)
                if self.deep or fmt.batch_line_when == "never":

                    def on_record(
                        offset: int,
                        record: Record | None,
                        message: LegacyMessage | None,
                        batch: FileBatch = batch,
                        position: int = valid_bytes,
                    ) -> None:
                        if last[0] == -1 and fmt.non_consecutive_first == "skip":
                            pass
                        elif fmt.non_consecutive_of == "uncompressed" and (
                            message is None or self.codec(message.compression_id).id != 0
                        ):
                            pass  # 0.10.2: only uncompressed messages are checked
                        elif offset != wrap64(last[0] + 1):
                            self.add_pair(self.non_consecutive, key, (last[0], offset), pairs)
                        last[0] = offset
                        self._print_record(batch, position, offset, record, message)

                    if self.deep:
                        self.visit_records(batch, on_record)
                    else:  # 0.10.2 without deep iteration: the wrapper is the entry
                        on_record(batch.last_offset, None, batch.batch.message)  # type: ignore[union-attr]
                valid_bytes += batch.size_in_bytes
            trailing = records.size - valid_bytes
            if trailing > 0 and self.max_bytes == INT_MAX:
                self.con.println(fmt.trailing_line.format(n=trailing, name=name))
        finally:
            opened.close()

    def _batch_fields(self, batch: FileBatch, position: int) -> dict[str, Callable[[], object]]:
        """What the batch line and the record lines may print of a batch (Kafka's accessor
        names)."""
        fmt = self.fmt

        def codec_name() -> str:
            name = self.codec(batch.header().compression_id).name
            return name.upper() if fmt.codec_names == "enum" else name

        if not batch.is_v2:  # AbstractLegacyRecordBatch: the v2-only fields' "no value"s
            legacy: dict[str, Callable[[], object]] = {
                "baseOffset": lambda: next(batch.batch.read_messages())[0],  # type: ignore[union-attr]
                "count": lambda: "null",
                "baseSequence": lambda: -1,
                "lastSequence": lambda: -1,
                "producerId": lambda: -1,
                "producerEpoch": lambda: -1,
                "partitionLeaderEpoch": lambda: -1,
                "isTransactional": lambda: jbool(False),
                "isControl": lambda: jbool(False),
            }
        else:
            legacy = {}
        return {
            "baseOffset": lambda: batch.header().base_offset,
            "lastOffset": lambda: batch.last_offset,
            "count": lambda: batch.header().records_count,
            "baseSequence": lambda: batch.header().base_sequence,
            "lastSequence": lambda: batch.header().last_sequence,
            "producerId": lambda: batch.header().producer_id,
            "producerEpoch": lambda: batch.header().producer_epoch,
            "partitionLeaderEpoch": lambda: batch.header().partition_leader_epoch,
            "isTransactional": lambda: jbool(batch.header().is_transactional),
            "isControl": lambda: jbool(batch.header().is_control),
            "deleteHorizonMs": lambda: optional_long(batch.header().delete_horizon_ms),
            "position": lambda: position,
            "timestampType": lambda: batch.timestamp_type(),
            "maxTimestamp": lambda: batch.header().max_timestamp,
            "size": lambda: batch.size_in_bytes,
            "magic": lambda: batch.magic,
            "compresscodec": codec_name,
            "crc": lambda: batch.header().crc,
            "isvalid": lambda: jbool(batch.is_valid()),
        } | legacy

    def _print_batch_level(self, batch: FileBatch, accumulative: int) -> None:
        fmt = self.fmt
        fields = _Fields(self._batch_fields(batch, accumulative))
        head = fmt.batch_head_v2 if batch.is_v2 else fmt.batch_head_legacy
        self.con.print(head.format_map(fields))
        self.con.println(fmt.batch_tail.format_map(fields))

    def _print_record(
        self,
        batch: FileBatch,
        position: int,
        offset: int,
        r: Record | None,
        m: LegacyMessage | None,
    ) -> None:
        """One record line: the format's pieces whose conditions hold, in order."""
        fmt = self.fmt
        con = self.con
        is_v2 = r is not None
        control = is_v2 and batch.header().is_control
        data: dict[str, bytes | None] = {}

        def read_data() -> dict[str, bytes | None]:
            # key and value are read when the line first needs them (a legacy message's
            # accessors throw where Java's do): the value's size first for a value-gated parser
            if not data:
                if r is not None:
                    key, value = r.key, r.value
                elif fmt.data_parser == "value-gated" and m.value_size < 0:  # type: ignore[union-attr]
                    key = value = None
                else:
                    assert m is not None
                    key = m.key if m.key_size >= 0 else None
                    value = m.value if m.value_size >= 0 else None
                data["key"], data["value"] = key, value
                data["shown_key"], data["shown_payload"] = fmt_data(fmt.data_parser, key, value)
            return data

        parsed: dict[str, str | None] = {}
        record_parser = self.record_parser if self.print_data and not control else None

        def read_parsed() -> dict[str, str | None]:
            # the tool parses after printing the metadata: its exceptions end a printed line
            if record_parser is not None and not parsed:
                d = read_data()
                parsed["key"], parsed["payload"] = record_parser(offset, d["key"], d["value"])
            return parsed

        state = {"prefix": "| " if self.skip_metadata else " "}
        getters = self._batch_fields(batch, position)

        def sequence() -> int:
            h = batch.header()
            return (
                increment_sequence(h.base_sequence, r.offset_delta) if h.base_sequence >= 0 else -1
            )  # type: ignore[union-attr]

        def key_text() -> str:
            state["prefix"] = " "
            if record_parser is not None:
                return read_parsed()["key"]  # type: ignore[return-value]
            return java_utf8(read_data()["shown_key"])  # type: ignore[arg-type]

        getters.update(
            {
                "offset": lambda: offset,
                "timestamp": lambda: r.timestamp if r is not None else m.timestamp,  # type: ignore[union-attr]
                "keySize": lambda: (
                    (-1 if r.key is None else len(r.key)) if r is not None else m.key_size
                ),  # type: ignore[union-attr]
                "valueSize": lambda: (
                    (-1 if r.value is None else len(r.value)) if r is not None else m.value_size
                ),  # type: ignore[union-attr]
                "sequence": sequence,
                "headerKeys": lambda: ",".join(k for k, _ in r.headers),  # type: ignore[union-attr]
                "recordIsValid": lambda: (
                    jbool(True) if m is None else jbool(legacy_message_valid(m))
                ),
                "recordCrc": lambda: "null" if m is None else m.crc,
                "batchSize": lambda: batch.size_in_bytes,
                "recordCodec": lambda: self.codec(m.compression_id).name.upper(),  # type: ignore[union-attr]
                "recordMagic": lambda: m.magic,  # type: ignore[union-attr]
                "recordTimestampType": lambda: (
                    getters["timestampType"]() if m is None else m.timestamp_type
                ),
                "controlText": lambda: self._control_text(r),  # type: ignore[arg-type]
                "prefix": lambda: state["prefix"],
                "key": key_text,
                "payload": lambda: (
                    read_parsed()["payload"]
                    if record_parser is not None
                    else java_utf8(read_data()["shown_payload"])  # type: ignore[arg-type]
                ),
            }
        )
        fields = _Fields(getters)
        flags: dict[str, Any] = {
            "meta": not self.skip_metadata,
            "v2": is_v2,
            "legacy": not is_v2,
            "control": control,
            "data": self.print_data and not control,
            "key": lambda: (
                read_parsed()["key"] is not None
                if record_parser is not None
                else read_data()["shown_key"] is not None
            ),
            "payload": lambda: (
                read_parsed()["payload"] is not None
                if record_parser is not None
                else read_data()["shown_payload"] is not None
            ),
            "haskey": lambda: (r.key is not None) if r is not None else m.key_size >= 0,  # type: ignore[union-attr]
        }
        for condition, template in fmt.record_pieces:
            if all(_flag(flags[c]) for c in condition.split("&") if c != "always"):
                con.print(template.format_map(fields))
        con.println()

    def _control_text(self, r: Record) -> str:
        fmt = self.fmt
        if r.key is None:
            raise NullPointerError(fmt.npe_null_control_key)
        type_id = control.read_control_key(r.key, fmt.control_key_size_text)
        name = fmt.control_names.get(type_id, "UNKNOWN")
        if type_id in (control.ABORT, control.COMMIT) and name != "UNKNOWN":
            epoch = read_end_txn_marker(type_id, r.value, fmt.end_txn_marker_reader)
            return f" endTxnMarker: {name} coordinatorEpoch: {epoch}"
        label = fmt.control_json.get(type_id)
        if label is not None:
            return kraft_control_text(type_id, r.value, label)
        return f" controlType: {name}({type_id})"


def read_end_txn_marker(type_id: int, value: bytes | None, reader: str) -> int:
    """``EndTransactionMarker.deserialize``: ``reader`` "checked" (up to 4.0: the value's size
    is checked first) or "plain" (4.1+: ``getShort``/``getInt`` on the value as it is)."""
    if value is None:
        method = "remaining" if reader == "checked" else "getShort"
        raise NullPointerError(
            f'Cannot invoke "java.nio.ByteBuffer.{method}()" because "value" is null'
        )
    if reader == "plain" and len(value) < 6:
        raise DecodeError(None, java_class="java.nio.BufferUnderflowException")
    return control.read_end_txn_marker_value(type_id, value)


def fmt_data(parser: str, key: bytes | None, value: bytes | None) -> tuple[bytes | None, ...]:
    """What the tool's message parser hands out for a record (``DecoderMessageParser``):
    ``independent`` (key and payload each when present) or ``value-gated`` (nothing at all
    for a null value, Kafka up to 2.3)."""
    if parser == "value-gated" and value is None:
        return None, None
    return key, value


def _uuid_string(raw: bytes) -> str:
    """``Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def kraft_control_text(type_id: int, value: bytes | None, label: str = "") -> str:
    """``SnapshotHeader {json}`` etc.: ``ControlRecordUtils.deserialize*`` (``wire.control``)
    followed by the generated ``*JsonConverter.write`` (Jackson, compact); ``label`` is what
    precedes the JSON (``DumpFormat.control_json``)."""
    if type_id == control.LEADER_CHANGE:
        c = control.read_leader_change(value)
        voters = ",".join(f'{{"voterId":{i}}}' for i in c.voters)
        granting = ",".join(f'{{"voterId":{i}}}' for i in c.granting_voters)
        return (
            f' {label}{{"version":{c.version},"leaderId":{c.leader_id},"voters":[{voters}],'
            f'"grantingVoters":[{granting}]}}'
        )
    v = control.read_kraft_control_value(type_id, value)
    if isinstance(v, control.SnapshotHeader):
        return (
            f' {label or "SnapshotHeader "}{{"version":{v.version},'
            f'"lastContainedLogTimestamp":{v.last_contained_log_timestamp}}}'
        )
    if isinstance(v, control.SnapshotFooter):
        return f' {label or "SnapshotFooter "}{{"version":{v.version}}}'
    if isinstance(v, control.KRaftVersion):
        return (
            f' {label or "KRaftVersion "}{{"version":{v.version},"kRaftVersion":{v.kraft_version}}}'
        )
    voters = []
    for voter in v.voters:
        endpoints = ",".join(
            f'{{"name":{json_str(e.name)},"host":{json_str(e.host)},"port":{e.port}}}'
            for e in voter.endpoints
        )
        voters.append(
            f'{{"voterId":{voter.voter_id},"voterDirectoryId":"{_uuid_string(voter.voter_directory_id)}",'
            f'"endpoints":[{endpoints}],'
            f'"kRaftVersionFeature":{{"minSupportedVersion":{voter.min_supported_version},'
            f'"maxSupportedVersion":{voter.max_supported_version}}}}}'
        )
    return f' {label or "KRaftVoters "}{{"version":{v.version},"voters":[{",".join(voters)}]}}'


def _flag(value: Any) -> bool:
    """A record piece's condition: a bool, or a callable giving it (the parser's answers are
    asked for only when the pieces before them are printed)."""
    return bool(value()) if callable(value) else bool(value)
