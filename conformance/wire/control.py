"""Control records of control batches (attribute bit 5), spec §3.7.

Key (``ControlRecordType``): ``version int16 | type int16`` (at least 4 bytes; version < 0 is
corrupt; extra bytes ignored). Value of ABORT/COMMIT (``EndTransactionMarker``):
``version int16 | coordinatorEpoch int32`` (at least 6 bytes). The KRaft types 2-6 carry
flexible-version message values, reported here as raw bytes.
"""

from __future__ import annotations

from conformance.errors import IllegalArgumentError, InvalidRecordError, NullPointerError
from conformance.wire.record import Record

ABORT, COMMIT = 0, 1
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


def parse_type_id(key: bytes | None) -> int:
    """``ControlRecordType.parseTypeId``."""
    if key is None:
        raise _npe()
    if len(key) < 4:
        raise InvalidRecordError(
            "Invalid value size found for end control record key. Must have at least 4 bytes, "
            f"but found only {len(key)}"
        )
    version = int.from_bytes(key[0:2], "big", signed=True)
    if version < 0:
        raise InvalidRecordError(
            f"Invalid version found for control record: {version}. May indicate data corruption"
        )
    return int.from_bytes(key[2:4], "big", signed=True)


def type_name(type_id: int) -> str:
    return CONTROL_TYPES.get(type_id, "UNKNOWN")


def parse_end_txn_coordinator_epoch(type_id: int, value: bytes | None) -> int:
    """``EndTransactionMarker.deserializeValue``: the coordinator epoch."""
    if type_id not in (ABORT, COMMIT):
        raise IllegalArgumentError(
            f"Invalid control record type for end transaction marker{type_name(type_id)}"
        )
    if value is None:
        raise _npe()
    if len(value) < 6:
        raise InvalidRecordError(
            "Invalid value size found for end transaction marker. Must have at least 6 bytes, "
            f"but found only {len(value)}"
        )
    version = int.from_bytes(value[0:2], "big", signed=True)
    if version < 0:
        raise InvalidRecordError(
            f"Invalid version found for end transaction marker: {version}. May indicate data "
            "corruption"
        )
    return int.from_bytes(value[2:6], "big", signed=True)


def attach_control(record: Record) -> None:
    """Parse ``record`` as a control record and store the result in ``record.control``."""
    type_id = parse_type_id(record.key)
    control: dict[str, object] = {"typeId": type_id, "type": type_name(type_id)}
    if type_id in (ABORT, COMMIT):
        control["coordinatorEpoch"] = parse_end_txn_coordinator_epoch(type_id, record.value)
    record.control = control
