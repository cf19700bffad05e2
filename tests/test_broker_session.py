"""The session scenarios of ``check-broker`` (transactions, Fetch and ListOffsets semantics),
offline, on what real Kafka brokers answered.

``corpora/broker-reads/<broker>/<session>/`` holds, per real broker (Apache Kafka 2.8.2,
3.9.2 and 4.3.1 started by the kit from Maven Central jars) and per session (a CreateTime and
a LogAppendTime topic), the partition as the broker stored it after the session, and each
read's answer (``reads.json``, written by ``check-broker --keep``). What is held here:

* every real answer agrees with Kafka's answer as the kit computes it from the partition
  (``broker.fetch``: the bytes served, the bounds, the aborted transactions, ListOffsets);
* the kit's coordinator markers (``PartitionLog.append_marker``) are byte for byte the ones
  the brokers stored, on both topics;
* each tampered answer (a real one with one fault) is a difference at the level it breaks.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from conformance.broker.fetch import transactions
from conformance.broker.log import PartitionLog
from conformance.broker_check.reads import READS, Answered, facts, judge_read, read_reads
from conformance.broker_check.scenarios import LOG_APPEND_TIME
from conformance.levels import DELIVERY, LEVELS, WIRE
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.control import ABORT, COMMIT, read_control_key, read_end_txn_marker_value

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpora" / "broker-reads"
SESSIONS = sorted(p.parent for p in CORPUS.glob("*/*/reads.json"))


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def test_the_corpus_has_every_kafka_line_and_both_topics() -> None:
    got = {_id(p) for p in SESSIONS}
    for broker in ("kafka-2.8.2-zk", "kafka-3.9.2-kraft", "kafka-4.3.1-kraft"):
        assert {f"{broker}/txn-transactions", f"{broker}/txn-transactions-log-append-time"} <= got


@pytest.mark.parametrize("session", SESSIONS, ids=_id)
def test_real_brokers_answer_every_read_as_the_kit_says(session: Path) -> None:
    log, answered, meta = read_reads(session)
    assert meta["judgedAs"].startswith("Apache Kafka ")
    assert {r.name for r, *_ in answered} == {r.name for r in READS}
    f = facts(log)
    for read, version, asked, answer in answered:
        assert judge_read(read, version, asked, answer, f) == [], read.name


@pytest.mark.parametrize("session", SESSIONS, ids=_id)
def test_the_kits_markers_are_the_brokers_markers(session: Path) -> None:
    """Each COMMIT/ABORT marker the broker stored, rebuilt by the model from its producer,
    coordinator epoch and the two clocks (the coordinator's, the leader's), at its offset:
    the same bytes (a LogAppendTime topic's marker carries the leader's clock as its max
    timestamp)."""
    log, _, _ = read_reads(session)
    lat = session.name.endswith("log-append-time")
    markers = [b for b in Splitter(log, "memory") if isinstance(b, RecordBatchV2) and b.is_control]
    assert len(markers) == 2  # the aborted and the committed transaction
    version = session.parent.name.split("-")[1]
    for m in markers:
        (record,) = list(m)
        kind = read_control_key(record.key)
        assert kind in (ABORT, COMMIT)
        model = PartitionLog(LOG_APPEND_TIME if lat else {}, version=version)
        model.log_end_offset = m.base_offset
        ours = model.append_marker(
            m.producer_id,
            m.producer_epoch,
            commit=kind == COMMIT,
            coordinator_epoch=read_end_txn_marker_value(kind, record.value),
            timestamp=m.base_timestamp,
            now=m.max_timestamp,
        )
        assert ours == bytes(m.raw)
        assert (m.timestamp_type == "LogAppendTime") == lat


@pytest.mark.parametrize("session", SESSIONS, ids=_id)
def test_the_aborted_transaction_and_the_last_stable_offset(session: Path) -> None:
    """The aborted transaction starts at the first transactional batch (A, offset 0) and
    ends at the first marker; the last stable offset is the open transaction's (D's) first
    offset, the base offset of the last transactional data batch."""
    log, _, _ = read_reads(session)
    batches = [b for b in Splitter(log, "memory") if isinstance(b, RecordBatchV2)]
    txn_data = [b for b in batches if b.is_transactional and not b.is_control]
    first_marker = next(b for b in batches if b.is_control)
    aborted, open_first = transactions(log)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in aborted] == [
        (txn_data[0].producer_id, txn_data[0].base_offset, first_marker.base_offset)
    ]
    assert open_first == txn_data[-1].base_offset


@pytest.mark.parametrize("session", SESSIONS, ids=_id)
def test_kafka_4_bumps_the_epoch_at_every_transaction(session: Path) -> None:
    """Kafka 4.3.1's sessions are a transactions V2 client's (Produce v13, EndTxn v5): the
    coordinator wrote each marker with the epoch after the transaction's (1, then 2), and
    the next transaction starts at sequence 0 of it; the earlier lines' sessions (V1) keep
    epoch 0, B and D at sequences 2 and 4."""
    log, _, _ = read_reads(session)
    batches = [b for b in Splitter(log, "memory") if isinstance(b, RecordBatchV2)]
    txn = [b for b in batches if b.is_transactional]
    shape = [("marker" if b.is_control else "data", b.producer_epoch, b.base_sequence)
             for b in txn]  # fmt: skip
    if session.parent.name.startswith("kafka-4."):
        assert shape == [("data", 0, 0), ("marker", 1, -1), ("data", 1, 0), ("marker", 2, -1),
                         ("data", 2, 0)]  # fmt: skip
    else:
        assert shape == [("data", 0, 0), ("marker", 0, -1), ("data", 0, 2), ("marker", 0, -1),
                         ("data", 0, 4)]  # fmt: skip


def _answered(session: str, read: str, version: int | None = None) -> Answered:
    _, answered, _ = read_reads(CORPUS / session)
    return next(a for a in answered if a[0].name == read and version in (None, a[1]))


FAULTS: list[tuple[str, str, dict[str, Any], str, str]] = [
    # (read, field, change, level, what the line says)
    ("fetch-read-uncommitted", "highWatermark", {"delta": 1}, WIRE, "highWatermark"),
    ("fetch-read-committed", "lastStableOffset", {"delta": -1}, WIRE, "lastStableOffset"),
    ("fetch-read-committed", "abortedTransactions", {"set": []}, DELIVERY, "abortedTransactions"),
    ("fetch-committed-at-lso", "abortedTransactions", {"set": None}, WIRE, "abortedTransactions"),
    ("fetch-read-uncommitted", "abortedTransactions", {"set": []}, WIRE, "abortedTransactions"),
    ("fetch-out-of-range", "errorCode", {"set": 0}, DELIVERY, "errorCode"),
    ("fetch-kip-74", "records", {"cut": 0}, DELIVERY, "records"),
    ("fetch-kip-74", "records", {"all_of": "fetch-read-uncommitted"}, WIRE, "more batches"),
    ("fetch-inside-a-batch", "records", {"drop_first": True}, DELIVERY, "records"),
    ("fetch-read-uncommitted", "records", {"epoch": 7}, WIRE, "partitionLeaderEpoch"),
    ("offsets-by-timestamp", "offset", {"delta": 1}, DELIVERY, "offset"),
    ("offsets-by-timestamp", "timestamp", {"delta": 1}, WIRE, "timestamp"),
    ("offsets-latest", "leaderEpoch", {"set": 3}, WIRE, "leaderEpoch"),
]


def _tamper(answer: dict[str, Any], field: str, change: dict[str, Any]) -> dict[str, Any]:
    out = dict(answer)
    if "delta" in change:
        out[field] = answer[field] + change["delta"]
    elif "set" in change:
        out[field] = change["set"]
    elif "cut" in change:
        out[field] = b""
    elif "drop_first" in change:
        first = next(iter(Splitter(answer[field], "memory")))
        out[field] = answer[field][first.size_in_bytes :]
    elif "all_of" in change:  # another read's records: the whole partition
        out[field] = _answered("kafka-4.3.1-kraft/txn-transactions", change["all_of"])[3][field]
    elif "epoch" in change:  # every batch's partition leader epoch (outside the CRC)
        raw = bytearray(answer[field])
        for b in Splitter(answer[field], "memory"):
            raw[b.position + 12 : b.position + 16] = change["epoch"].to_bytes(4, "big")
        out[field] = bytes(raw)
    return out


@pytest.mark.parametrize(
    "read,field,change,level,says", FAULTS, ids=[f"{f[0]}-{f[1]}-{f[3]}" for f in FAULTS]
)
def test_each_fault_is_filed_at_the_level_it_breaks(
    read: str, field: str, change: dict[str, Any], level: str, says: str
) -> None:
    session = "kafka-4.3.1-kraft/txn-transactions"
    log, _, _ = read_reads(CORPUS / session)
    f = facts(log)
    r, version, asked, answer = _answered(session, read)
    assert judge_read(r, version, asked, answer, f) == []
    found = judge_read(r, version, asked, _tamper(answer, field, change), f)
    assert found, (read, field)
    # the fault breaks ``level`` (a batch missing also shifts the batches after it: their
    # header fields differ too, at a higher level)
    assert min(LEVELS.index(d.level) for d in found) == LEVELS.index(level), found
    assert any(d.level == level and says in d.text for d in found), found
    assert all(f"v{version}" in d.text for d in found), found


def test_a_failed_request_is_a_delivery_difference() -> None:
    session = "kafka-4.3.1-kraft/txn-transactions"
    log, _, _ = read_reads(CORPUS / session)
    r, version, asked, _ = _answered(session, "fetch-read-uncommitted")
    found = judge_read(r, version, asked, {"errorCode": 35, "scope": "request"}, facts(log))
    assert [d.level for d in found] == [DELIVERY]
    assert "UNSUPPORTED_VERSION" in found[0].text


def test_reads_read_back_what_was_written(tmp_path: Path) -> None:
    """``write_reads`` and ``read_reads`` mirror each other."""
    from conformance.broker_check.reads import write_reads

    log, answered, meta = read_reads(CORPUS / "kafka-3.9.2-kraft" / "txn-transactions")
    write_reads(tmp_path, log, answered, meta)
    again = read_reads(tmp_path)
    assert again == (log, answered, meta)
    assert dataclasses.is_dataclass(answered[0][0])


def test_the_versions_a_session_uses_are_the_ones_both_sides_speak() -> None:
    """Kafka 4.3.1's own ApiVersions (as the capture test holds them): sessions at Produce
    v3-v13 (v12+ a transactions V2 client's: EndTxn v5, no AddPartitionsToTxn; below, a V1
    client's: EndTxn v4, AddPartitionsToTxn v3), Fetch v18 (v4 and up), ListOffsets v11 (v1
    and up); the produce cases again at v3-v13 but their own. A target that speaks no EndTxn
    runs its sessions without transactions; one that speaks no Fetch v4+ runs none."""
    from conformance.broker.versions import VERSIONS
    from conformance.broker_check.session_run import SessionPlan

    kafka = {0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 10: (0, 6), 22: (0, 6),
             24: (0, 5), 26: (0, 5)}  # fmt: skip
    plan = SessionPlan(kafka, VERSIONS["4.3.1"])
    assert plan.unsupported is None and plan.no_transactions is None
    assert plan.versions["Produce"] == list(range(3, 14)) and plan.left_out == {}
    assert plan.versions["Fetch"] == list(range(4, 19))
    assert plan.versions["ListOffsets"] == list(range(1, 12))
    # the line speaks v3-v13 (4.x advertises v0-v2 but refuses them: KIP-896)
    assert plan.other_produce_versions(9) == [v for v in range(3, 14) if v != 9]
    assert plan.txn_versions(11) == {
        "FindCoordinator": 3, "InitProducerId": 4, "AddPartitionsToTxn": 3, "EndTxn": 4
    }  # fmt: skip
    v2 = plan.txn_versions(12)
    assert v2 is not None and v2["EndTxn"] == 5 and "AddPartitionsToTxn" not in v2
    assert v2["FindCoordinator"] >= 4 and v2["InitProducerId"] >= 5

    # transactions V2 needs EndTxn v5, Produce v13 the topic's id (Metadata v10+)
    no_v2 = SessionPlan({**kafka, 26: (0, 4)}, VERSIONS["4.3.1"])
    assert no_v2.versions["Produce"] == list(range(3, 12))
    assert sorted(no_v2.left_out) == [12, 13] and "EndTxn v5" in no_v2.left_out[12]
    no_ids = SessionPlan({**kafka, 3: (0, 9)}, VERSIONS["4.3.1"])
    assert no_ids.versions["Produce"] == list(range(3, 13))
    assert list(no_ids.left_out) == [13] and "Metadata v10+" in no_ids.left_out[13]
    # 3.9.2 has no transactions V2: its sessions at v12+ would be V1 clients'
    plan39 = SessionPlan(kafka, VERSIONS["3.9.2"])
    assert plan39.newest("Produce") == 11 and plan39.txn_versions(11) == plan.txn_versions(11)

    no_end_txn = {k: v for k, v in kafka.items() if k != 26}
    assert "EndTxn" in (SessionPlan(no_end_txn, VERSIONS["4.3.1"]).no_transactions or "")
    assert SessionPlan(no_end_txn, VERSIONS["4.3.1"]).txn_versions(13) is None
    old_fetch = {**kafka, 1: (0, 3)}
    assert "Fetch" in (SessionPlan(old_fetch, VERSIONS["4.3.1"]).unsupported or "")
    # judged against 2.8.2: no Produce above v9, no Fetch above v12
    plan28 = SessionPlan(kafka, VERSIONS["2.8.2"])
    assert plan28.newest("Produce") == 9 and plan28.newest("Fetch") == 12
