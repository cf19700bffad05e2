"""Scenario 2 of ``check-broker``: a real transactional producer's session on one partition,
each answer judged against Kafka's (the broker model, ``conformance.broker``, with the
coordinator's markers appended as ``PartitionLog.append_marker`` appends them).

=====  =====================================================  ==============================
step   request (the kit's writer builds every batch)          Kafka's answer
=====  =====================================================  ==============================
1      FindCoordinator, InitProducerId for a new              NONE; producer epoch 0
       transactional id (retried while the coordinator
       loads: COORDINATOR_NOT_AVAILABLE / _LOAD_IN_PROGRESS /
       NOT_COORDINATOR / CONCURRENT_TRANSACTIONS)
2      AddPartitionsToTxn, Produce A (2 records, seq 0),      NONE each; the ABORT marker
       EndTxn abort                                           after A
3      AddPartitionsToTxn, Produce B (2 records, seq 2),      NONE each; the COMMIT marker
       EndTxn commit                                          after B
4      Produce C: a plain batch (no producer id)              the model's answer
5      AddPartitionsToTxn, Produce D (1 record, seq 4):       the model's answers: D opens a
       left open; Produce E, an idempotent batch of the       transaction, E is refused
       same producer (seq 5) inside it; D again (a retry)     (INVALID_TXN_STATE), the retry
                                                              gets D's offsets
6      Fetch the partition whole (read_uncommitted)           the model's log: every batch
                                                              as Kafka stores it, markers
                                                              included
7      (after the reads of scenario 3) EndTxn abort of D      NONE
=====  =====================================================  ==============================

A transactions V2 session (Produce v12+ and EndTxn v5, ``calls.END_TXN_V2``: Kafka 4's own
client) sends no AddPartitionsToTxn (the Produce has the broker add the partition), and every
EndTxn bumps the producer epoch: Kafka answers the producer id and the epoch + 1, writes the
marker with that epoch, and the next transaction starts at sequence 0 of it (A, B and D at
sequence 0 of epochs 0, 1 and 2; E at 1).

A session that stops before its first batch (no coordinator, no producer id: a target that
lists the transaction APIs but refuses them) goes on with the plain batches A-D of a target
without transactions, so that the reads of scenario 3 have records to read.

Markers are written by the coordinator when it chooses: after each EndTxn the partition is
fetched until the marker is there (at most :data:`MARKER_WAIT_S`). Kafka's marker takes the
target's timestamp when it lies between the EndTxn and its sighting (the coordinator's clock)
and the target's coordinator epoch (its transaction log partition's leader epoch): the rest
of it is judged byte for byte. Record timestamps lie :data:`FUTURE_MS` ahead of the clock, so
every marker is older than every record (ListOffsets by timestamp then finds records, not
markers).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.codes import CODES, NONE
from conformance.broker.compare import stored_differences
from conformance.broker.exchange import Sent, model_answer
from conformance.broker.log import PartitionLog
from conformance.broker.versions import BrokerVersion
from conformance.capture.produce_wire import (
    WireClient,
    fetch_partition,
    new_produce_request,
    read_produce_response,
)
from conformance.capture.proxy import RecordingProxy
from conformance.capture.session_wire import (
    add_partition,
    end_txn,
    find_coordinator,
    init_producer_id,
)
from conformance.client.calls import END_TXN_V2
from conformance.corpus.produce.golden import stored_b64
from conformance.errors import DecodeError
from conformance.levels import DELIVERY, WIRE, Difference, Judgement
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.builder import BatchBuilder
from conformance.wire.control import read_control_key, read_end_txn_marker_value

__all__ = ["FUTURE_MS", "MARKER_WAIT_S", "Session", "run_session"]

#: how far ahead of the clock the records' timestamps are (under 4.x's one-hour default of
#: ``message.timestamp.after.max.ms``)
FUTURE_MS = 600_000
#: how long the coordinator may take to write a marker, and to load before answering
MARKER_WAIT_S = 20.0
COORDINATOR_WAIT_S = 60.0
#: the coordinator's answers a client retries
_RETRIED = {
    CODES[n]
    for n in (
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_COORDINATOR",
        "CONCURRENT_TRANSACTIONS",
    )
}
_CODE_NAMES = {v: k for k, v in CODES.items()}


def _name(code: int) -> str:
    return _CODE_NAMES.get(code, str(code))


@dataclass
class Session:
    """One session on a target: its judgement, the partition as fetched, the producer."""

    judgement: Judgement = field(default_factory=Judgement)
    log: bytes = b""
    producer_id: int = -1
    producer_epoch: int = -1
    #: each step: its answer (and Kafka's), kept as evidence with ``--keep``
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    #: ends the open transaction (step 7), once the reads are done
    close: Callable[[], None] = lambda: None
    #: the connections the session opened (the caller closes them, also after an error)
    connections: list[WireClient] = field(default_factory=list)


def _now() -> int:
    return time.time_ns() // 1_000_000


def _batch(pid: int, epoch: int, seq: int, ts: int, n: int, txn: bool, tag: str) -> bytes:
    b = BatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=txn)
    for i in range(n):
        b.append(ts + i, f"{tag}-key-{i}".encode(), f"{tag}-value-{i}".encode(), [("h", b"x")])
    return b.build()


def run_session(
    s: Session,
    proxy: RecordingProxy,
    client: WireClient,
    topic: str,
    config: dict[str, str],
    version: BrokerVersion,
    produce_version: int,
    txn_versions: dict[str, int] | None,
    topic_uuid: Any = None,
) -> Session:
    """Steps 1-6 on ``topic`` (partition 0; ``client``: a connection to its leader through
    ``proxy``, the caller's to close) into ``s``; its ``close`` then runs step 7.
    ``txn_versions`` None (a target without transactions): the batches A-D are plain ones,
    for the reads to run on; with EndTxn v5+ the session is a transactions V2 client's.
    ``topic_uuid``: the topic's id (Produce v13+ names it so)."""
    j = s.judgement
    tv2 = txn_versions is not None and txn_versions["EndTxn"] >= END_TXN_V2
    model = PartitionLog(config, version=version, topic_name=topic)
    log = bytearray()
    txn_id = topic  # the run's own, like its topics

    def diff(level: str, where: str, text: str) -> None:
        j.differences.append(Difference(level, f"{where}: {text}"))

    def retried(call: Callable[[], int], where: str) -> int:
        deadline = time.monotonic() + COORDINATOR_WAIT_S
        while True:
            code = call()
            if code not in _RETRIED or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        s.exchanges.append({"step": where, "errorCode": code, "errorName": _name(code)})
        if code != 0:
            diff(DELIVERY, where, f"kafka answers NONE; the target answered {_name(code)}")
        return code

    base_ts = _now() + FUTURE_MS
    found: dict[str, Any] = {}
    init: dict[str, Any] = {}

    def find() -> int:
        assert txn_versions is not None
        found.update(find_coordinator(client, txn_id, txn_versions["FindCoordinator"]))
        return int(found["errorCode"])

    def init_pid() -> int:
        assert txn_versions is not None
        init.update(init_producer_id(coordinator, txn_id, txn_versions["InitProducerId"]))
        return int(init["errorCode"])

    def add(where: str) -> int:
        assert txn_versions is not None
        if tv2:  # the Produce adds the partition
            return 0
        return retried(
            lambda: add_partition(
                coordinator,
                txn_id,
                s.producer_id,
                s.producer_epoch,
                topic,
                txn_versions["AddPartitionsToTxn"],
            ),
            where,
        )

    def produce(where: str, records: bytes, txn: bool) -> None:
        sent_at = _now()
        _, frame, response = client.exchange(
            new_produce_request(
                topic, records, produce_version, txn_id if txn else None, topic_uuid
            )
        )
        received_at = _now()
        answer = read_produce_response(response, produce_version) if response else None
        r = Sent(
            records, produce_version, sent_at, txn_id if txn else None, answer,
            received_at=received_at,
        )  # fmt: skip
        nonlocal model
        model, (ours, diffs) = model_answer(model, r, NONE, False, version)
        s.exchanges.append({"step": where, "target": answer, "kafka": ours["response"]})
        for d in diffs:
            diff(d.level, where, d.text)
        if ours.get("stored") and not ours.get("duplicate"):
            log.extend(base64.b64decode(ours["stored"]))

    def end(where: str, commit: bool) -> int:
        assert txn_versions is not None
        sent_at = _now()
        answered: dict[str, int] = {}

        def send() -> int:
            assert txn_versions is not None
            answered.update(end_txn(coordinator, txn_id, s.producer_id, s.producer_epoch,
                                    commit, txn_versions["EndTxn"]))  # fmt: skip
            return answered["errorCode"]

        code = retried(send, where)
        if code:
            return code
        epoch = s.producer_epoch
        if tv2:  # the coordinator bumps the epoch, writes the marker with it and answers it
            epoch = s.producer_epoch + 1
            kafka = (s.producer_id, epoch)
            target = (answered["producerId"], answered["producerEpoch"])
            if target != kafka:
                diff(WIRE, where, f"producer id and epoch: kafka={kafka[0]}/{kafka[1]} "
                                  f"target={target[0]}/{target[1]}")  # fmt: skip
        marker = _await_marker(client, proxy, topic, model.log_end_offset)
        seen_at = _now()
        written, appended, coordinator_epoch = sent_at, sent_at, 0
        if marker is not None:
            coordinator_epoch = _coordinator_epoch(marker)
            if sent_at <= marker.base_timestamp <= seen_at:
                written = marker.base_timestamp
            if sent_at <= marker.max_timestamp <= seen_at:
                appended = marker.max_timestamp
        else:
            diff(DELIVERY, where, f"no marker at offset {model.log_end_offset} after "
                                  f"{MARKER_WAIT_S:.0f} s")  # fmt: skip
        log.extend(
            model.append_marker(
                s.producer_id,
                epoch,
                commit=commit,
                coordinator_epoch=coordinator_epoch,
                timestamp=written,
                now=appended,
            )  # fmt: skip
        )
        if tv2:  # a client goes on with the epoch it was given
            s.producer_epoch = answered["producerEpoch"]
        return 0

    coordinator = WireClient(proxy, address=("", 0))

    def transactional() -> None:
        """Steps 1-5 (returns where a step fails: the session cannot go on as Kafka's)."""
        nonlocal coordinator
        if retried(find, "FindCoordinator"):
            return _stopped(s, "no transaction coordinator")
        coordinator = WireClient(proxy, address=(found["host"], found["port"]))
        s.connections.append(coordinator)
        if retried(init_pid, "InitProducerId"):
            return _stopped(s, "no producer id")
        pid, epoch = s.producer_id, s.producer_epoch = init["producerId"], init["producerEpoch"]
        if epoch != 0:
            diff(WIRE, "InitProducerId", f"producer epoch: kafka=0 target={epoch}")
        stop = "a transaction step failed"
        #: the first sequences of B, D and E (transactions V2: each epoch starts at 0)
        b_seq, d_seq = (0, 0) if tv2 else (2, 4)
        if add("AddPartitionsToTxn (A)"):
            return _stopped(s, stop)
        produce("Produce A", _batch(pid, epoch, 0, base_ts, 2, True, "a"), True)
        if end("EndTxn abort (A)", False) or add("AddPartitionsToTxn (B)"):
            return _stopped(s, stop)
        b = _batch(pid, s.producer_epoch, b_seq, base_ts + 1000, 2, True, "b")
        produce("Produce B", b, True)
        if end("EndTxn commit (B)", True):
            return _stopped(s, stop)
        produce("Produce C", _batch(-1, -1, -1, base_ts + 2000, 1, False, "c"), False)
        if add("AddPartitionsToTxn (D)"):
            return _stopped(s, stop)
        d = _batch(pid, s.producer_epoch, d_seq, base_ts + 3000, 1, True, "d")
        produce("Produce D", d, True)
        produce("Produce E (idempotent, inside D's transaction)",
                _batch(pid, s.producer_epoch, d_seq + 1, base_ts + 4000, 1, False, "e"),
                False)  # fmt: skip
        produce("Produce D again (a retry)", d, True)
        s.close = lambda: end("EndTxn abort (D)", False)
        return None

    def plain_batches() -> None:
        for i, (tag, count) in enumerate((("a", 2), ("b", 2), ("c", 1), ("d", 1))):
            plain = _batch(-1, -1, -1, base_ts + 1000 * i, count, False, tag)
            produce(f"Produce {tag.upper()} (plain)", plain, False)

    if txn_versions is None:  # no transactions: plain batches where the session has any
        plain_batches()
    else:
        transactional()
        if model.log_end_offset == 0:  # stopped before its first batch: the reads need data
            s.judgement.evidence.append("| the reads run on plain batches A-D instead")
            plain_batches()
    s.log = fetch_partition(client, topic, whole=True)
    for x in stored_differences(stored_b64(bytes(log)), stored_b64(s.log)):
        j.differences.append(Difference(x.level, f"the partition as fetched: {x.text}"))
    return s


def _stopped(s: Session, why: str) -> None:
    s.judgement.evidence.append(f"| the session stopped there: {why}")


def _await_marker(
    client: WireClient, proxy: RecordingProxy, topic: str, offset: int
) -> RecordBatchV2 | None:
    """The control batch at ``offset`` once the target serves it (None: not in time)."""
    deadline = time.monotonic() + MARKER_WAIT_S
    while True:
        data = fetch_partition(client, topic, whole=True)
        for b in Splitter(data, "memory"):
            if isinstance(b, RecordBatchV2) and b.base_offset == offset and b.is_control:
                return b
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def _coordinator_epoch(marker: RecordBatchV2) -> int:
    """The coordinator epoch of a marker's record (0 when it does not read: the marker is
    then judged byte by byte)."""
    try:
        record = next(iter(marker))
        return read_end_txn_marker_value(read_control_key(record.key), record.value)
    except (DecodeError, StopIteration):
        return 0
