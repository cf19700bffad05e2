"""Transaction index (``.txnindex``): aborted transactions of a segment, docs/format.md §6.6.

==  ================  =====
@   field             type
==  ================  =====
0   version           int16 (Kafka reads only the byte at @0 as the version)
2   producerId        int64
10  firstOffset       int64
18  lastOffset        int64
26  lastStableOffset  int64
==  ================  =====

34-byte entries, no header, no preallocation; a partial trailing entry is ignored.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import CorruptIndexError, KafkaError
from conformance.fileio import read_bytes

ENTRY_SIZE = 34
CURRENT_VERSION = 0
_ENTRY = struct.Struct(">hqqqq")


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    version: int  # the byte at @0, as Kafka reads it
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    position: int = 0

    def __str__(self) -> str:  # AbortedTxn.toString()
        return (
            f"AbortedTxn(version={self.version}, producerId={self.producer_id}, "
            f"firstOffset={self.first_offset}, lastOffset={self.last_offset}, "
            f"lastStableOffset={self.last_stable_offset})"
        )


def write_aborted_txn(txn: AbortedTxn) -> bytes:
    """One ``.txnindex`` entry (``AbortedTxn.writeTo``): the 34 bytes of the table above."""
    return _ENTRY.pack(
        txn.version, txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset
    )


class TransactionIndex:
    def __init__(self, data: bytes, start_offset: int, path: str = "<txnindex>") -> None:
        self.data = data
        self.start_offset = start_offset
        self.path = path

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], start_offset: int | None = None
    ) -> TransactionIndex:
        p = Path(path)
        base = int(p.name.split(".")[0]) if start_offset is None else start_offset
        return cls(read_bytes(p), base, str(p.absolute()))

    def __iter__(self) -> Iterator[AbortedTxn]:
        """``allAbortedTxns()``: raises on an entry whose version byte is > 0."""
        for pos in range(0, len(self.data) - ENTRY_SIZE + 1, ENTRY_SIZE):
            _, pid, first, last, lso = _ENTRY.unpack_from(self.data, pos)
            version = struct.unpack_from(">b", self.data, pos)[0]
            if version > CURRENT_VERSION:
                raise KafkaError(
                    f"Unexpected aborted transaction version {version} in transaction index "
                    f"{self.path}, current version is {CURRENT_VERSION}"
                )
            yield AbortedTxn(version, pid, first, last, lso, pos)

    def sanity_check(self) -> None:
        for txn in self:
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index {self.path} is less than "
                    f"start offset {self.start_offset}"
                )
