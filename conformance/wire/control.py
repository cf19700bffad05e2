"""Control records of control batches (attribute bit 5), docs/format.md §3.7.

Mirrors ``ControlRecordType``, ``EndTransactionMarker`` and, for the KRaft types, the generated
``SnapshotHeaderRecord`` / ``SnapshotFooterRecord`` / ``KRaftVersionRecord`` / ``VotersRecord``
readers behind ``ControlRecordUtils`` (``org.apache.kafka.common.record``/``.message``).

Key (``ControlRecordType``; at least 4 bytes, extra bytes ignored):

===  =======  =====  ========================================================================
@    field    type   notes
===  =======  =====  ========================================================================
0    version  int16  < 0: corrupt
2    type     int16  0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER, 4 SNAPSHOT_FOOTER,
                     5 KRAFT_VERSION, 6 KRAFT_VOTERS; anything else: UNKNOWN
===  =======  =====  ========================================================================

Value of ABORT/COMMIT (``EndTransactionMarker``; at least 6 bytes):

===  ================  =====  ==============
@    field             type   notes
===  ================  =====  ==============
0    version           int16  < 0: corrupt
2    coordinatorEpoch  int32
===  ================  =====  ==============

Values of the KRaft types (flexible version-0 messages; ``tags`` = tagged fields: uvarint
count, then per field uvarint tag, uvarint size, bytes; arrays and strings are compact:
uvarint length + 1):

==================  =========================================================================
type                fields, in order
==================  =========================================================================
3 SnapshotHeader    version int16 | lastContainedLogTimestamp int64 | tags
4 SnapshotFooter    version int16 | tags
5 KRaftVersion      version int16 | kRaftVersion int16 | tags
6 Voters            version int16 | voters[] | tags; a voter: voterId int32 | voterDirectoryId
                    uuid (16 bytes) | endpoints[] (name string | host string | port uint16 |
                    tags) | minSupportedVersion int16 | maxSupportedVersion int16 | tags
                    (kRaftVersionFeature) | tags
==================  =========================================================================

LEADER_CHANGE values are reported as raw bytes (not parsed).
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.errors import (
    BufferUnderflowError,
    DecodeError,
    IllegalArgumentError,
    InvalidRecordError,
    NullPointerError,
)
from conformance.primitives.java import java_utf8
from conformance.primitives.varint import read_unsigned_varint
from conformance.wire.record import Record

ABORT, COMMIT = 0, 1
LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = 2, 3, 4, 5, 6
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def _npe() -> NullPointerError:
    # message null: the kit reports JVM-raised NPEs without JDK 14+ "helpful" details
    return NullPointerError(None)


def _checked(data: bytes | None, size: int, sized: str, versioned: str) -> bytes:
    """``data`` as ``ControlRecordType`` and ``EndTransactionMarker`` check it before reading
    on: not null, at least ``size`` bytes, its ``version int16`` not negative."""
    if data is None:
        raise _npe()
    if len(data) < size:
        raise InvalidRecordError(
            f"Invalid value size found for {sized}. Must have at least {size} bytes, "
            f"but found only {len(data)}"
        )
    version = int.from_bytes(data[0:2], "big", signed=True)
    if version < 0:
        raise InvalidRecordError(
            f"Invalid version found for {versioned}: {version}. May indicate data corruption"
        )
    return data


def read_control_key(key: bytes | None, size_text: str = "end control record key") -> int:
    """``ControlRecordType.parseTypeId`` (``size_text``: what its size message names, which
    differs between Kafka releases: ``logdir.dump.formats``)."""
    key = _checked(key, 4, size_text, "control record")
    return int.from_bytes(key[2:4], "big", signed=True)


def type_name(type_id: int) -> str:
    return CONTROL_TYPES.get(type_id, "UNKNOWN")


def read_end_txn_marker_value(type_id: int, value: bytes | None) -> int:
    """``EndTransactionMarker.deserializeValue``: the coordinator epoch."""
    if type_id not in (ABORT, COMMIT):
        raise IllegalArgumentError(
            f"Invalid control record type for end transaction marker{type_name(type_id)}"
        )
    value = _checked(value, 6, "end transaction marker", "end transaction marker")
    return int.from_bytes(value[2:6], "big", signed=True)


# -- KRaft control record values (types 3-6) --------------------------------------------------
# Generated-message readers (``SnapshotHeaderRecord``, ``SnapshotFooterRecord``,
# ``KRaftVersionRecord``, ``VotersRecord``; ``ControlRecordUtils.deserialize*``), every one a
# flexible version-0 message read with ``ByteBufferAccessor``. ``LEADER_CHANGE`` (2) is not
# parsed: DumpLogSegments 3.9 prints only its type for it.

_BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"
_RUNTIME = "java.lang.RuntimeException"
#: ``Uuid``: two int64
UUID_LENGTH = 16
#: generated readers refuse longer strings (``Short.MAX_VALUE``)
MAX_STRING_LENGTH = 0x7FFF


@dataclass(frozen=True, slots=True)
class SnapshotHeader:
    """``SnapshotHeaderRecord`` (control type 3)."""

    version: int
    last_contained_log_timestamp: int


@dataclass(frozen=True, slots=True)
class SnapshotFooter:
    """``SnapshotFooterRecord`` (control type 4)."""

    version: int


@dataclass(frozen=True, slots=True)
class KRaftVersion:
    """``KRaftVersionRecord`` (control type 5)."""

    version: int
    kraft_version: int


@dataclass(frozen=True, slots=True)
class VoterEndpoint:
    """``VotersRecord.Endpoint``."""

    name: str
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class Voter:
    """``VotersRecord.Voter`` (``kRaftVersionFeature`` flattened to min/max)."""

    voter_id: int
    voter_directory_id: bytes  # the 16 bytes of the Uuid
    endpoints: tuple[VoterEndpoint, ...]
    min_supported_version: int
    max_supported_version: int


@dataclass(frozen=True, slots=True)
class Voters:
    """``VotersRecord`` (control type 6)."""

    version: int
    voters: tuple[Voter, ...]


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """``LeaderChangeMessage`` (control type 2), read at version 0 as ``ControlRecordUtils``
    reads it: ``version`` is the message's own first field."""

    version: int
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]


KRaftControlValue = SnapshotHeader | SnapshotFooter | KRaftVersion | Voters


class _ValueReader:
    """``ByteBufferAccessor`` over a control record value."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise DecodeError(None, java_class=_BUFFER_UNDERFLOW)
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def int16(self) -> int:
        return int.from_bytes(self.take(2), "big", signed=True)

    def uint16(self) -> int:
        return int.from_bytes(self.take(2), "big")

    def int32(self) -> int:
        return int.from_bytes(self.take(4), "big", signed=True)

    def int64(self) -> int:
        return int.from_bytes(self.take(8), "big", signed=True)

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint`` (as a Java int)."""
        try:
            value, self.pos = read_unsigned_varint(self.data, self.pos, len(self.data))
        except BufferUnderflowError:
            raise DecodeError(None, java_class=_BUFFER_UNDERFLOW) from None
        return value - (1 << 32) if value >= 1 << 31 else value

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            size = self.uvarint()
            remaining = len(self.data) - self.pos
            if size > remaining:
                raise DecodeError(
                    f"Error reading byte array of {size} byte(s): "
                    f"only {remaining} byte(s) available",
                    java_class=_RUNTIME,
                )
            self.pos += size

    def string(self, field: str) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise DecodeError(
                f"non-nullable field {field} was serialized as null", java_class=_RUNTIME
            )
        if length > MAX_STRING_LENGTH:
            raise DecodeError(
                f"string field {field} had invalid length {length}", java_class=_RUNTIME
            )
        return java_utf8(self.take(length))

    def array_length(self, field: str) -> int:
        n = self.uvarint() - 1
        if n < 0:
            raise DecodeError(
                f"non-nullable field {field} was serialized as null", java_class=_RUNTIME
            )
        remaining = len(self.data) - self.pos
        if n > remaining:
            raise DecodeError(
                f"Tried to allocate a collection of size {n}, but there are only {remaining} "
                "bytes remaining.",
                java_class=_RUNTIME,
            )
        return n


def _reader(value: bytes | None) -> _ValueReader:
    if value is None:  # ControlRecordUtils.deserialize: data.slice()
        raise NullPointerError('Cannot invoke "java.nio.ByteBuffer.slice()" because "data" is null')
    return _ValueReader(value)


def read_snapshot_header(value: bytes | None) -> SnapshotHeader:
    """``ControlRecordUtils.deserializeSnapshotHeaderRecord``."""
    r = _reader(value)
    version = r.int16()
    ts = r.int64()
    r.tagged_fields()
    return SnapshotHeader(version, ts)


def read_snapshot_footer(value: bytes | None) -> SnapshotFooter:
    """``ControlRecordUtils.deserializeSnapshotFooterRecord``."""
    r = _reader(value)
    version = r.int16()
    r.tagged_fields()
    return SnapshotFooter(version)


def read_kraft_version(value: bytes | None) -> KRaftVersion:
    """``ControlRecordUtils.deserializeKRaftVersionRecord``."""
    r = _reader(value)
    version = r.int16()
    kraft = r.int16()
    r.tagged_fields()
    return KRaftVersion(version, kraft)


def read_voters(value: bytes | None) -> Voters:
    """``ControlRecordUtils.deserializeVotersRecord``."""
    r = _reader(value)
    version = r.int16()
    voters: list[Voter] = []
    for _ in range(r.array_length("voters")):
        voter_id = r.int32()
        directory_id = r.take(UUID_LENGTH)
        endpoints: list[VoterEndpoint] = []
        for _e in range(r.array_length("endpoints")):
            name = r.string("name")
            host = r.string("host")
            port = r.uint16()
            r.tagged_fields()
            endpoints.append(VoterEndpoint(name, host, port))
        lo = r.int16()
        hi = r.int16()
        r.tagged_fields()  # KRaftVersionFeature
        r.tagged_fields()  # Voter
        voters.append(Voter(voter_id, directory_id, tuple(endpoints), lo, hi))
    r.tagged_fields()
    return Voters(version, tuple(voters))


def read_leader_change(value: bytes | None) -> LeaderChange:
    """``ControlRecordUtils.deserializeLeaderChangeMessage`` (version 0: voters are
    ``voterId int32 | tags``)."""
    r = _reader(value)
    version = r.int16()
    leader = r.int32()
    lists: list[tuple[int, ...]] = []
    for field in ("voters", "grantingVoters"):
        ids = []
        for _ in range(r.array_length(field)):
            ids.append(r.int32())
            r.tagged_fields()
        lists.append(tuple(ids))
    r.tagged_fields()
    return LeaderChange(version, leader, lists[0], lists[1])


def read_kraft_control_value(type_id: int, value: bytes | None) -> KRaftControlValue:
    """The value of a KRaft control record of type ``type_id`` (3-6)."""
    if type_id == SNAPSHOT_HEADER:
        return read_snapshot_header(value)
    if type_id == SNAPSHOT_FOOTER:
        return read_snapshot_footer(value)
    if type_id == KRAFT_VERSION:
        return read_kraft_version(value)
    if type_id == KRAFT_VOTERS:
        return read_voters(value)
    raise IllegalArgumentError(f"Not a KRaft control record type: {type_name(type_id)}({type_id})")


def attach_control(record: Record) -> None:
    """Parse ``record`` as a control record and store the result in ``record.control``."""
    type_id = read_control_key(record.key)
    control: dict[str, object] = {"typeId": type_id, "type": type_name(type_id)}
    if type_id in (ABORT, COMMIT):
        control["coordinatorEpoch"] = read_end_txn_marker_value(type_id, record.value)
    record.control = control


# --- writer ---------------------------------------------------------------------------------
def write_control_key(type_id: int, version: int = 0) -> bytes:
    """``ControlRecordType.recordKey``: ``version int16 | type int16``."""
    return version.to_bytes(2, "big", signed=True) + type_id.to_bytes(2, "big", signed=True)


def write_end_txn_marker_value(coordinator_epoch: int, version: int = 0) -> bytes:
    """``EndTransactionMarker.serializeValue``: ``version int16 | coordinatorEpoch int32``."""
    return version.to_bytes(2, "big", signed=True) + coordinator_epoch.to_bytes(
        4, "big", signed=True
    )
