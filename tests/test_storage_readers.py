"""Log-directory readers against the spec's Java-verified ([V]) facts, §6.3-6.10."""

from __future__ import annotations

import struct

import pytest

from conformance.errors import (
    CheckpointError,
    CorruptIndexError,
    CorruptSnapshotError,
    IllegalArgumentError,
    KafkaError,
    NumberFormatError,
)
from conformance.logdir import checkpoint as cp
from conformance.logdir import snapshot
from conformance.logdir.index import OffsetIndex, TimeIndex
from conformance.logdir.txnindex import TransactionIndex

LOC = "/d/recovery-point-offset-checkpoint"


def off(text: str) -> list[cp.OffsetEntry]:
    return cp.read_offset_checkpoint(text.encode(), LOC)


# ----------------------------------------------------------------- offset checkpoints §6.8
def test_empty_and_version_only() -> None:
    assert off("") == [] and off("0\n") == []


def test_entries_tabs_repeated_spaces_crlf_no_final_newline() -> None:
    assert off("0\r\n2\r\nt\t0   5\r\nu 1 7") == [
        cp.OffsetEntry("t", 0, 5),
        cp.OffsetEntry("u", 1, 7),
    ]


def test_wrong_version() -> None:
    with pytest.raises(CheckpointError) as e:
        off("1\n0\n")
    assert (
        e.value.message
        == f"Unrecognised version:1, expected version: 0 in checkpoint file at: {LOC}"
    )


@pytest.mark.parametrize("line", [" t 0 5", "", "t 0 5 9"])
def test_malformed_entry_lines(line: str) -> None:
    with pytest.raises(CheckpointError) as e:
        off(f"0\n1\n{line}\n")
    assert e.value.message == f"Malformed line in checkpoint file [{LOC}]: {line}"


def test_unparsable_version_and_plus_sign() -> None:
    with pytest.raises(CheckpointError, match="Malformed line"):
        off(" 0\n")
    assert off("+0\n0\n") == []  # Integer.parseInt accepts a leading sign


def test_negative_count_is_raw_iae() -> None:
    with pytest.raises(IllegalArgumentError) as e:
        off("0\n-1\n")
    assert e.value.message == "Illegal Capacity: -1"


def test_non_number_field_is_raw_nfe() -> None:
    with pytest.raises(NumberFormatError) as e:
        off("0\n1\nt x 5\n")
    assert e.value.message == 'For input string: "x"'


def test_count_mismatch() -> None:
    with pytest.raises(CheckpointError) as e:
        off("0\n2\nt 0 5\n")
    assert e.value.message == f"Expected [2] entries in checkpoint file [{LOC}], but found only [1]"


def test_roundtrip_writers() -> None:
    es = [cp.OffsetEntry("a", 3, 99)]
    assert cp.read_offset_checkpoint(cp.write_offset_checkpoint(es)) == es
    ep = [cp.EpochEntry(0, 0), cp.EpochEntry(4, 120)]
    assert cp.read_leader_epoch_checkpoint(cp.write_leader_epoch_checkpoint(ep)) == ep


# ------------------------------------------------------------------ partition.metadata §6.9
def test_partition_metadata() -> None:
    md = cp.read_partition_metadata(b"version: 0\ntopic_id: " + b"AAAAAAAAAAAAAAAAAAAAAQ")
    assert md.version == 0 and md.topic_id == "AAAAAAAAAAAAAAAAAAAAAQ"
    # key names are not checked; future versions accepted
    assert cp.read_partition_metadata(b"foo: 3\nbar: AAAAAAAAAAAAAAAAAAAAAQ").version == 3
    with pytest.raises(CheckpointError, match="Malformed line"):
        cp.read_partition_metadata(b"version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    with pytest.raises(CheckpointError) as e:
        cp.read_partition_metadata(b"version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "F")
    assert e.value.message == "Unrecognized version of partition metadata file + (F): -1"
    with pytest.raises(CheckpointError, match="Invalid topic ID"):
        cp.read_partition_metadata(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")


# --------------------------------------------------------------------- meta.properties §6.10
def test_meta_properties() -> None:
    m = cp.read_meta_properties(b"#\n#Tue\nversion=1\ncluster.id=abc\nnode.id=3\n")
    assert (m.version, m.cluster_id, m.node_id) == (1, "abc", 3)
    assert cp.read_meta_properties(b"broker.id=2\n").node_id == 2  # v0, version missing
    with pytest.raises(Exception, match="Unknown meta.properties version number 2"):
        cp.read_meta_properties(b"version=2\n")
    with pytest.raises(Exception, match="Failed to find node.id"):
        cp.read_meta_properties(b"version=1\ncluster.id=x\n")
    with pytest.raises(Exception, match="cluster.id was not found."):
        cp.read_meta_properties(b"version=1\nnode.id=1\n")
    assert cp.read_meta_properties(b" version = 0 \n").version == 0  # trimmed


# ------------------------------------------------------------------- indexes §6.3 / §6.4
def test_offset_index_zero_tail_passes_sanity_and_counts_as_entries() -> None:
    data = struct.pack(">ii", 5, 0) + bytes(16)
    idx = OffsetIndex(data, 100, "i")
    assert idx.entries == 3 and idx.entry(2).offset == 100
    idx.sanity_check()


def test_offset_index_sanity_failures() -> None:
    with pytest.raises(CorruptIndexError, match="less than the base offset 100"):
        OffsetIndex(struct.pack(">ii", -1, 0), 100, "i").sanity_check()
    with pytest.raises(CorruptIndexError, match="neither positive nor a multiple of 8"):
        OffsetIndex(bytes(9), 100, "i").sanity_check()


def test_time_index_zero_tail_fails_sanity() -> None:
    data = struct.pack(">qi", 1700000000000, 3) + bytes(12)
    with pytest.raises(CorruptIndexError, match="which is less than the first timestamp"):
        TimeIndex(data, 0, "t").sanity_check()


def test_lookups_default_when_nothing_lower() -> None:
    idx = OffsetIndex(struct.pack(">ii", 5, 40) + struct.pack(">ii", 9, 80), 100, "i")
    assert (idx.lookup(99).offset, idx.lookup(99).position) == (100, 0)
    assert idx.lookup(107).position == 40 and idx.lookup(200).position == 80
    t = TimeIndex(struct.pack(">qi", 50, 1), 100, "t")
    assert (t.lookup(49).timestamp, t.lookup(49).offset) == (-1, 100)


# ------------------------------------------------------------------------ .txnindex §6.6
def _txn(version: bytes, last: int = 10) -> bytes:
    return version + struct.pack(">qqqq", 7, 3, last, 11)


def test_txnindex_version_byte_quirk_and_partial_tail() -> None:
    ok = TransactionIndex(_txn(b"\x00\x01") + _txn(b"\xff\xff") + b"\x00" * 20, 0, "x")
    assert [t.version for t in ok] == [0, -1]
    with pytest.raises(KafkaError, match="Unexpected aborted transaction version 1"):
        list(TransactionIndex(_txn(b"\x01\x00"), 0, "x"))


def test_txnindex_sanity() -> None:
    with pytest.raises(CorruptIndexError, match="is less than start offset 100"):
        TransactionIndex(_txn(b"\x00\x00", last=50), 100, "x").sanity_check()


# ------------------------------------------------------------------------- .snapshot §6.7
def test_snapshot_roundtrip_and_errors() -> None:
    e = snapshot.ProducerStateEntry(7, 1, 9, 100, 4, 1700000000000, 2, -1)
    data = snapshot.write_snapshot([e])
    assert snapshot.read_snapshot(data) == [e]
    assert e.first_sequence == 5
    bad_version = struct.pack(">h", 2) + data[2:]
    with pytest.raises(CorruptSnapshotError, match="unknown file version 2"):
        snapshot.read_snapshot(bad_version)
    flipped = data[:-1] + bytes([data[-1] ^ 1])
    with pytest.raises(CorruptSnapshotError, match="CRC is no longer valid"):
        snapshot.read_snapshot(flipped)
    with pytest.raises(CorruptSnapshotError, match="Snapshot failed schema validation"):
        snapshot.read_snapshot(data[:20])
