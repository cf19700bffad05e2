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

from conformance.errors import NullPointerError
from conformance.logdir.dump.files import FileBatch, FileRecords, start_offset
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
from conformance.wire.layout import RECORD_OVERHEAD_V0
from conformance.wire.legacy import LegacyMessage
from conformance.wire.record import Record


class LogDumper(DumpSession):
    """``.log`` / ``.checkpoint``."""

    # -- .log / .checkpoint -------------------------------------------------------------------
    def dump_log(self, file: JFile) -> None:
        name = file.name
        if name.endswith(".log"):
            start, _ = start_offset(file)
            self.con.println(f"Log starting offset: {start}")
        elif name.endswith(".checkpoint"):
            if name == "bootstrap.checkpoint":
                self.con.println("KRaft bootstrap snapshot")
            else:
                end_offset, epoch = read_snapshot_name(name)
                self.con.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
        opened = FileRecords.open(file)
        try:
            records = opened.slice(0, self.max_bytes)
            valid_bytes = 0
            last = [-1]  # the previous record's offset
            key = file.absolute
            for batch in records.batches():
                self._print_batch_level(batch, valid_bytes)
                if self.deep:

                    def on_record(
                        offset: int,
                        record: Record | None,
                        message: LegacyMessage | None,
                        batch: FileBatch = batch,
                    ) -> None:
                        if last[0] == -1:
                            last[0] = offset
                        elif offset != wrap64(last[0] + 1):
                            self.prepend(self.non_consecutive, key, (last[0], offset))
                        last[0] = offset
                        if record is not None:
                            self._print_record(batch, record)
                        else:
                            self._print_legacy_record(batch, offset, message)  # type: ignore[arg-type]

                    batch.visit_records(on_record)
                valid_bytes += batch.size_in_bytes
            trailing = records.size - valid_bytes
            if trailing > 0 and self.max_bytes == INT_MAX:
                self.con.println(f"Found {trailing} invalid bytes at the end of {name}")
        finally:
            opened.close()

    def _print_batch_level(self, batch: FileBatch, accumulative: int) -> None:
        con = self.con
        if batch.is_v2:
            h = batch.header()
            con.print(
                f"baseOffset: {batch.batch.base_offset} lastOffset: {batch.last_offset} "
                f"count: {h.records_count} baseSequence: {h.base_sequence} "
                f"lastSequence: {h.last_sequence} producerId: {h.producer_id} "
                f"producerEpoch: {h.producer_epoch} "
                f"partitionLeaderEpoch: {h.partition_leader_epoch} "
                f"isTransactional: {jbool(h.is_transactional)} isControl: {jbool(h.is_control)} "
                f"deleteHorizonMs: {optional_long(h.delete_horizon_ms)}"
            )
        else:
            con.print(f"offset: {batch.last_offset}")
        h = batch.header()
        line = (
            f" position: {accumulative} {batch.timestamp_type()}: {h.max_timestamp} "
            f"size: {batch.size_in_bytes} magic: {batch.magic} "
            f"compresscodec: {batch.compression_name()} crc: {h.crc} "
        )
        con.println(line + f"isvalid: {jbool(batch.is_valid())}")

    def _print_record(self, batch: FileBatch, r: Record) -> None:
        con = self.con
        h = batch.header()
        key_size = -1 if r.key is None else len(r.key)
        value_size = -1 if r.value is None else len(r.value)
        con.print(
            f"| offset: {r.offset} {h.timestamp_type}: {r.timestamp} "
            f"keySize: {key_size} valueSize: {value_size}"
        )
        # magic >= 2 (records of v2 batches only come from v2 batches)
        seq = increment_sequence(h.base_sequence, r.offset_delta) if h.base_sequence >= 0 else -1
        con.print(f" sequence: {seq} headerKeys: [{','.join(k for k, _ in r.headers)}]")
        if h.is_control:
            con.print(self._control_text(r))
        elif self.print_data:
            prefix = " "
            if r.key is not None:
                con.print(f"{prefix}key: {java_utf8(r.key)}")
            if r.value is not None:
                con.print(f" payload: {java_utf8(r.value)}")
        con.println()

    def _control_text(self, r: Record) -> str:
        if r.key is None:
            raise NullPointerError(
                'Cannot invoke "java.nio.ByteBuffer.remaining()" because "key" is null'
            )
        type_id = control.read_control_key(r.key)
        name = control.CONTROL_TYPES.get(type_id, "UNKNOWN")
        if type_id in (control.ABORT, control.COMMIT):
            if r.value is None:
                raise NullPointerError(
                    'Cannot invoke "java.nio.ByteBuffer.remaining()" because "value" is null'
                )
            epoch = control.read_end_txn_marker_value(type_id, r.value)
            return f" endTxnMarker: {name} coordinatorEpoch: {epoch}"
        if type_id in control.KRAFT_CONTROL_TYPES:
            return kraft_control_text(type_id, r.value)
        return f" controlType: {name}({type_id})"

    def _print_legacy_record(self, batch: FileBatch, offset: int, m: LegacyMessage) -> None:
        con = self.con
        ts_type = batch.timestamp_type()
        ts = m.timestamp
        key_size = m.key_size
        value_size = m.value_size
        con.print(f"| offset: {offset} {ts_type}: {ts} keySize: {key_size} valueSize: {value_size}")
        valid = m.size >= RECORD_OVERHEAD_V0 and m.crc == m.computed_crc()
        con.print(f" isValid: {jbool(valid)} crc: {m.crc}}}")
        if self.print_data:
            key = m.key if m.key_size >= 0 else None
            value = m.value if m.value_size >= 0 else None
            if key is not None:
                con.print(f" key: {java_utf8(key)}")
            if value is not None:
                con.print(f" payload: {java_utf8(value)}")
        con.println()


def _uuid_string(raw: bytes) -> str:
    """``Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def kraft_control_text(type_id: int, value: bytes | None) -> str:
    """``SnapshotHeader {json}`` etc.: ``ControlRecordUtils.deserialize*`` (``wire.control``)
    followed by the generated ``*JsonConverter.write`` (Jackson, compact)."""
    v = control.read_kraft_control_value(type_id, value)
    if isinstance(v, control.SnapshotHeader):
        return (
            f' SnapshotHeader {{"version":{v.version},'
            f'"lastContainedLogTimestamp":{v.last_contained_log_timestamp}}}'
        )
    if isinstance(v, control.SnapshotFooter):
        return f' SnapshotFooter {{"version":{v.version}}}'
    if isinstance(v, control.KRaftVersion):
        return f' KRaftVersion {{"version":{v.version},"kRaftVersion":{v.kraft_version}}}'
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
    return f' KRaftVoters {{"version":{v.version},"voters":[{",".join(voters)}]}}'
