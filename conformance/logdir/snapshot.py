"""Producer-state snapshot (``<offset>.snapshot``), docs/format.md §6.7 (``ProducerStateManager``).

Header: ``version int16 (=1) | crc uint32 (CRC-32C over [6, end)) | count int32``, then
``count`` entries of 46 bytes:
``producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64 | offsetDelta int32 |
timestamp int64 | coordinatorEpoch int32 | currentTxnFirstOffset int64 (-1: none)``.
The schema is read first (errors: "Snapshot failed schema validation: ..."), then the version,
then the CRC; bytes after the last entry are ignored.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from conformance.errors import CorruptSnapshotError
from conformance.fileio import read_bytes
from conformance.primitives.crc import crc32c
from conformance.primitives.java import wrap32

VERSION = 1
#: header fields' positions: version int16 | crc uint32 | count int32
VERSION_OFFSET = 0
CRC_OFFSET = VERSION_OFFSET + 2
COUNT_OFFSET = CRC_OFFSET + 4
ENTRIES_OFFSET = COUNT_OFFSET + 4
_HEADER = struct.Struct(">hIi")
assert _HEADER.size == ENTRIES_OFFSET
#: one producer entry (46 bytes)
ENTRY = struct.Struct(">qhiqiqiq")


@dataclass(frozen=True, slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1 = none

    @property
    def first_sequence(self) -> int:
        """``BatchMetadata.firstSeq`` = ``decrementSequence(lastSeq, offsetDelta)``."""
        if self.last_sequence < self.offset_delta:
            return wrap32(0x7FFFFFFF - (self.offset_delta - self.last_sequence) + 1)
        return self.last_sequence - self.offset_delta

    @property
    def has_batch_metadata(self) -> bool:
        return self.last_offset >= 0


def _schema_error(field: str, detail: str) -> CorruptSnapshotError:
    return CorruptSnapshotError(
        f"Snapshot failed schema validation: Error reading field '{field}': {detail}"
    )


#: how the snapshot's schema is read, which decides the error messages: ``struct`` (Kafka up to
#: 3.9: the ``Struct`` schema, "Error reading field '...'"), ``generated`` (4.0+, KAFKA-17056:
#: the generated ``ProducerSnapshot`` message; every error inside its read is wrapped as
#: "Snapshot failed schema validation: <message>", a buffer underflow's message being null)
SCHEMA_READERS = ("struct", "generated")


def read_snapshot(data: bytes, schema: str = "struct") -> list[ProducerStateEntry]:
    """``ProducerStateManager.readSnapshot`` (``schema``: :data:`SCHEMA_READERS`)."""
    if schema == "generated":
        return _read_generated(data)
    n = len(data)
    if n < CRC_OFFSET:
        raise _schema_error("version", "java.nio.BufferUnderflowException")
    if n < COUNT_OFFSET:
        raise _schema_error("crc", "java.nio.BufferUnderflowException")
    if n < ENTRIES_OFFSET:
        raise _schema_error("producer_entries", "java.nio.BufferUnderflowException")
    version, crc, count = _HEADER.unpack_from(data, VERSION_OFFSET)
    if count < 0:
        raise _schema_error("producer_entries", f"Array size {count} cannot be negative")
    if count > n - ENTRIES_OFFSET:
        raise _schema_error(
            "producer_entries",
            f"Error reading array of size {count}, only {n - ENTRIES_OFFSET} bytes available",
        )
    entries = []
    pos = ENTRIES_OFFSET
    for _ in range(count):
        if n - pos < ENTRY.size:
            raise _schema_error("producer_entries", _partial_entry_error(n - pos))
        entries.append(ProducerStateEntry(*ENTRY.unpack_from(data, pos)))
        pos += ENTRY.size
    if version != VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    _check_crc(data, crc)
    return entries


def _check_crc(data: bytes, crc: int) -> None:
    computed = crc32c(data[COUNT_OFFSET:])
    if crc != computed:
        raise CorruptSnapshotError(
            "Snapshot is corrupt (CRC is no longer valid). "
            f"Stored crc: {crc}. Computed crc: {computed}"
        )


def _read_generated(data: bytes) -> list[ProducerStateEntry]:
    """Kafka 4.0+: ``version`` first, then ``new ProducerSnapshot(accessor, version)``."""

    def failed(message: str | None) -> CorruptSnapshotError:
        shown = "null" if message is None else message  # Java's string of a null message
        return CorruptSnapshotError(f"Snapshot failed schema validation: {shown}")

    n = len(data)
    if n < CRC_OFFSET:
        raise failed(None)
    version = struct.unpack_from(">h", data, VERSION_OFFSET)[0]
    if version != VERSION:
        raise failed(f"Snapshot contained an unknown file version {version}")
    if n < ENTRIES_OFFSET:
        raise failed(None)
    _, crc, count = _HEADER.unpack_from(data, VERSION_OFFSET)
    if count < 0:
        raise failed("non-nullable field producerEntries was serialized as null")
    if count > n - ENTRIES_OFFSET:
        raise failed(
            f"Tried to allocate a collection of size {count}, but there are only "
            f"{n - ENTRIES_OFFSET} bytes remaining."
        )
    if n - ENTRIES_OFFSET < count * ENTRY.size:
        raise failed(None)
    entries = [
        ProducerStateEntry(*ENTRY.unpack_from(data, ENTRIES_OFFSET + i * ENTRY.size))
        for i in range(count)
    ]
    _check_crc(data, crc)
    return entries


_FIELDS = [
    ("producer_id", 8),
    ("epoch", 2),
    ("last_sequence", 4),
    ("last_offset", 8),
    ("offset_delta", 4),
    ("timestamp", 8),
    ("coordinator_epoch", 4),
    ("current_txn_first_offset", 8),
]


def _partial_entry_error(available: int) -> str:
    pos = 0
    for name, size in _FIELDS:
        if available - pos < size:
            return f"Error reading field '{name}': java.nio.BufferUnderflowException"
        pos += size
    raise AssertionError("unreachable")  # pragma: no cover


def read_snapshot_file(path: str | os.PathLike[str]) -> list[ProducerStateEntry]:
    return read_snapshot(read_bytes(path))


def write_snapshot(entries: list[ProducerStateEntry]) -> bytes:
    """``ProducerStateManager.writeSnapshot``."""
    body = struct.pack(">i", len(entries)) + b"".join(
        ENTRY.pack(
            e.producer_id,
            e.producer_epoch,
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
        for e in entries
    )
    return struct.pack(">hI", VERSION, crc32c(body)) + body
