"""The wire of a client session beyond Produce: transactions, Fetch and ListOffsets at a chosen
version, with kafka-python's message classes, one request at a time over a
:class:`~conformance.capture.produce_wire.WireClient` (through the recording proxy).

=======================  ===========================================================
call                     request (answer read into a dict of the fields judged)
=======================  ===========================================================
``find_coordinator``     FindCoordinator v1-3 (key type 1: a transactional id)
``init_producer_id``     InitProducerId v0-4 (transactional id, timeout)
``add_partition``        AddPartitionsToTxn v0-3 (one partition)
``end_txn``              EndTxn v0-3 (commit or abort; v4+ is transactions V2)
``fetch_read``           Fetch v4-12 by topic name, v13+ by topic id: one partition
``list_offsets``         ListOffsets v1+: one partition, one timestamp
``topic_id``             Metadata v10-12: the topic's id (for Fetch v13+)
=======================  ===========================================================

A request the broker answers by closing the connection raises ``ConnectionError``. Each
function returns what the response says; retrying is the caller's choice.
"""

from __future__ import annotations

from typing import Any

from conformance.capture.produce_wire import TIMEOUT_MS, WireClient, new_fetch_request

__all__ = [
    "TRANSACTION_KEY",
    "add_partition",
    "end_txn",
    "fetch_read",
    "find_coordinator",
    "init_producer_id",
    "list_offsets",
    "topic_id",
]

#: FindCoordinator's key type of a transactional id
TRANSACTION_KEY = 1
#: the newest versions of the transaction APIs a transactions V1 client sends (EndTxn v5 and
#: AddPartitionsToTxn v4+ are transactions V2 / broker-to-broker)
TXN_MAX = {"FindCoordinator": 3, "InitProducerId": 4, "AddPartitionsToTxn": 3, "EndTxn": 4}


def _exchange(client: WireClient, message: Any, response: Any, version: int) -> Any:
    _, _, frame = client.exchange(message)
    if frame is None:
        raise ConnectionError(f"the broker closed the connection on {type(message).__name__}")
    return response.decode(frame, version=version, header=True)


def find_coordinator(client: WireClient, txn_id: str, version: int) -> dict[str, Any]:
    """{errorCode, host, port} of the transaction coordinator of ``txn_id``."""
    from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

    r = _exchange(
        client,
        FindCoordinatorRequest[version](key=txn_id, key_type=TRANSACTION_KEY),
        FindCoordinatorResponse,
        version,
    )
    return {"errorCode": int(r.error_code), "host": str(r.host), "port": int(r.port)}


def init_producer_id(
    client: WireClient, txn_id: str, version: int, timeout_ms: int = 60_000
) -> dict[str, Any]:
    """{errorCode, producerId, producerEpoch} for a first InitProducerId of ``txn_id``."""
    from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

    kwargs: dict[str, Any] = {"transactional_id": txn_id, "transaction_timeout_ms": timeout_ms}
    if version >= 3:
        kwargs.update(producer_id=-1, producer_epoch=-1)
    r = _exchange(client, InitProducerIdRequest[version](**kwargs), InitProducerIdResponse, version)
    return {
        "errorCode": int(r.error_code),
        "producerId": int(r.producer_id),
        "producerEpoch": int(r.producer_epoch),
    }


def add_partition(
    client: WireClient, txn_id: str, pid: int, epoch: int, topic: str, version: int
) -> int:
    """The error code AddPartitionsToTxn answers for ``topic``-0."""
    from kafka.protocol.producer import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

    req = AddPartitionsToTxnRequest[version]
    message = req(
        v3_and_below_transactional_id=txn_id,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[req.AddPartitionsToTxnTopic(name=topic, partitions=[0])],
    )
    r = _exchange(client, message, AddPartitionsToTxnResponse, version)
    codes = [
        int(p.partition_error_code)
        for t in r.results_by_topic_v3_and_below
        for p in t.results_by_partition
    ]
    if len(codes) != 1:
        raise RuntimeError(f"AddPartitionsToTxn answered {len(codes)} partitions, not 1")
    return codes[0]


def end_txn(
    client: WireClient, txn_id: str, pid: int, epoch: int, commit: bool, version: int
) -> int:
    """The error code EndTxn answers."""
    from kafka.protocol.producer import EndTxnRequest, EndTxnResponse

    message = EndTxnRequest[version](
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit
    )
    return int(_exchange(client, message, EndTxnResponse, version).error_code)


def topic_id(client: WireClient, topic: str, version: int) -> Any:
    """The topic's id from Metadata ``version`` (10+), as kafka-python holds it."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    req = MetadataRequest[version]
    message = req(
        topics=[req.MetadataRequestTopic(name=topic)],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    r = _exchange(client, message, MetadataResponse, version)
    for t in r.topics:
        if t.name == topic:
            if t.error_code:
                raise RuntimeError(f"Metadata v{version} of {topic}: error {t.error_code}")
            return t.topic_id
    raise RuntimeError(f"Metadata v{version} does not name {topic}")


def fetch_read(
    client: WireClient,
    topic: str,
    version: int,
    offset: int,
    partition_max_bytes: int,
    isolation: int,
    topic_uuid: Any = None,
) -> dict[str, Any]:
    """One partition (``topic``-0) of a Fetch of ``version`` (4+; 13+ needs ``topic_uuid``):
    {errorCode, highWatermark, lastStableOffset, logStartOffset (-1 before v5),
    abortedTransactions ([[producerId, firstOffset]...] or None), records (bytes)}."""
    from kafka.protocol.consumer import FetchResponse

    message = new_fetch_request(
        topic, 0, offset, version=version, partition_max_bytes=partition_max_bytes,
        isolation=isolation, topic_id=topic_uuid,
    )  # fmt: skip
    r = _exchange(client, message, FetchResponse, version)
    if version >= 7 and r.error_code:
        return {"errorCode": int(r.error_code), "scope": "request"}
    parts = [p for t in r.responses for p in t.partitions if p.partition_index == 0]
    if len(parts) != 1:
        raise RuntimeError(f"Fetch v{version} answered {len(parts)} partitions 0, not 1")
    p = parts[0]
    aborted = p.aborted_transactions
    return {
        "errorCode": int(p.error_code),
        "highWatermark": int(p.high_watermark),
        "lastStableOffset": int(p.last_stable_offset),
        "logStartOffset": int(p.log_start_offset) if version >= 5 else -1,
        "abortedTransactions": None
        if aborted is None
        else [[int(a.producer_id), int(a.first_offset)] for a in aborted],
        "records": bytes(p.records or b""),
    }


def list_offsets(
    client: WireClient, topic: str, version: int, timestamp: int, isolation: int
) -> dict[str, Any]:
    """``topic``-0 of a ListOffsets of ``version`` (1+; isolation from v2):
    {errorCode, timestamp, offset, leaderEpoch (-1 before v4)}."""
    from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

    req = ListOffsetsRequest[version]
    part = req.ListOffsetsTopic.ListOffsetsPartition(
        partition_index=0, current_leader_epoch=-1, timestamp=timestamp
    )
    message = req(
        replica_id=-1,
        isolation_level=isolation,
        topics=[req.ListOffsetsTopic(name=topic, partitions=[part])],
        timeout_ms=TIMEOUT_MS,
    )
    r = _exchange(client, message, ListOffsetsResponse, version)
    parts = [p for t in r.topics for p in t.partitions if p.partition_index == 0]
    if len(parts) != 1:
        raise RuntimeError(f"ListOffsets v{version} answered {len(parts)} partitions 0, not 1")
    p = parts[0]
    return {
        "errorCode": int(p.error_code),
        "timestamp": int(p.timestamp),
        "offset": int(p.offset),
        "leaderEpoch": int(p.leader_epoch) if version >= 4 else -1,
    }
