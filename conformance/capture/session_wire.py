"""The wire of a client session beyond Produce: transactions, Fetch and ListOffsets at a chosen
version, on the kit's own client (``conformance.client``), one request at a time over a
:class:`~conformance.capture.produce_wire.WireClient` (through the recording proxy).

=======================  ===========================================================
call                     request (answer read into a dict of the fields judged)
=======================  ===========================================================
``find_coordinator``     FindCoordinator (key type 1: a transactional id)
``init_producer_id``     InitProducerId (transactional id, timeout)
``add_partition``        AddPartitionsToTxn v0-3 (one partition)
``end_txn``              EndTxn (commit or abort; v5+: the epoch the coordinator bumped)
``fetch_read``           Fetch v4-12 by topic name, v13+ by topic id: one partition
``list_offsets``         ListOffsets v1+: one partition, one timestamp
``topic_id``             Metadata v10+: the topic's id (for Fetch v13+)
=======================  ===========================================================

A request the broker answers by closing the connection raises ``ConnectionClosedError``.
Each function returns what the response says; retrying is the caller's choice.
"""

from __future__ import annotations

import uuid
from typing import Any

from conformance.capture.produce_wire import (
    TIMEOUT_MS,
    Request,
    WireClient,
    new_fetch_request,
)
from conformance.client import calls
from conformance.client.cluster import metadata_request, read_metadata

__all__ = [
    "TRANSACTION_KEY",
    "TXN_MAX",
    "TXN_V2",
    "add_partition",
    "end_txn",
    "fetch_read",
    "find_coordinator",
    "init_producer_id",
    "list_offsets",
    "topic_id",
]

TRANSACTION_KEY = calls.TRANSACTION_KEY
#: the newest versions of the transaction APIs a transactions V1 client sends (EndTxn v5 is
#: transactions V2, ``calls.END_TXN_V2``; AddPartitionsToTxn v4+ is broker-to-broker)
TXN_MAX = {"FindCoordinator": 3, "InitProducerId": 4, "AddPartitionsToTxn": 3, "EndTxn": 4}
#: the transaction APIs a transactions V2 client sends, each at the newest both speak (no
#: AddPartitionsToTxn: a Produce of v12+ has the broker add the partition)
TXN_V2 = ("FindCoordinator", "InitProducerId", "EndTxn")


def _answer(client: WireClient, api: str, version: int, body: Any) -> Any:
    return client.answer(Request(client.protocol.key(api), version, body))


def find_coordinator(client: WireClient, txn_id: str, version: int) -> dict[str, Any]:
    """{errorCode, host, port} of the transaction coordinator of ``txn_id``."""
    p = client.protocol
    body = _answer(
        client, "FindCoordinator", version, calls.find_coordinator_request(p, version, txn_id)
    )
    found = calls.read_coordinator(body, version, txn_id)
    return {"errorCode": found["errorCode"], "host": found["host"], "port": found["port"]}


def init_producer_id(
    client: WireClient, txn_id: str, version: int, timeout_ms: int = 60_000
) -> dict[str, Any]:
    """{errorCode, producerId, producerEpoch} for a first InitProducerId of ``txn_id``."""
    p = client.protocol
    body = _answer(
        client,
        "InitProducerId",
        version,
        calls.init_producer_id_request(p, version, txn_id, timeout_ms),
    )
    return calls.read_producer_id(body)


def add_partition(
    client: WireClient, txn_id: str, pid: int, epoch: int, topic: str, version: int
) -> int:
    """The error code AddPartitionsToTxn answers for ``topic``-0."""
    p = client.protocol
    body = _answer(
        client,
        "AddPartitionsToTxn",
        version,
        calls.add_partitions_request(p, version, txn_id, pid, epoch, {topic: [0]}),
    )
    codes = list(calls.read_partition_errors(body, version).values())
    if len(codes) != 1:
        raise RuntimeError(f"AddPartitionsToTxn answered {len(codes)} partitions, not 1")
    return codes[0]


def end_txn(
    client: WireClient, txn_id: str, pid: int, epoch: int, commit: bool, version: int
) -> dict[str, int]:
    """{errorCode, producerId, producerEpoch} of EndTxn (the id and epoch -1 before v5)."""
    p = client.protocol
    body = _answer(
        client, "EndTxn", version, calls.end_txn_request(p, version, txn_id, pid, epoch, commit)
    )
    return calls.read_end_txn(body, version)


def topic_id(client: WireClient, topic: str, version: int) -> uuid.UUID:
    """The topic's id from Metadata ``version`` (10+)."""
    body = _answer(client, "Metadata", version, metadata_request(client.protocol, version, [topic]))
    t = read_metadata(body, version).topics.get(topic)
    if t is None:
        raise RuntimeError(f"Metadata v{version} does not name {topic}")
    if t.error:
        raise RuntimeError(f"Metadata v{version} of {topic}: error {t.error_name}")
    if t.topic_id is None:
        raise RuntimeError(f"Metadata v{version} gives {topic} no id")
    return t.topic_id


def _partition_0(parts: list[dict[str, Any]], api: str, version: int) -> dict[str, Any]:
    """The one partition 0 of an answer's ``parts``; RuntimeError if there is not exactly one."""
    mine = [p for p in parts if p["partition"] == 0]
    if len(mine) != 1:
        raise RuntimeError(f"{api} v{version} answered {len(mine)} partitions 0, not 1")
    return mine[0]


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
    request = new_fetch_request(
        topic, 0, offset, version=version, partition_max_bytes=partition_max_bytes,
        isolation=isolation, topic_id=topic_uuid,
    )  # fmt: skip
    top, parts = calls.read_fetch_answer(client.answer(request), version)
    if version >= 7 and top:
        return {"errorCode": top, "scope": "request"}
    p = _partition_0(parts, "Fetch", version)
    return {
        "errorCode": p["errorCode"],
        "highWatermark": p["highWatermark"],
        "lastStableOffset": p["lastStableOffset"],
        "logStartOffset": p["logStartOffset"],
        "abortedTransactions": p["abortedTransactions"],
        "records": p["records"] or b"",
    }


def list_offsets(
    client: WireClient, topic: str, version: int, timestamp: int, isolation: int
) -> dict[str, Any]:
    """``topic``-0 of a ListOffsets of ``version`` (1+; isolation from v2):
    {errorCode, timestamp, offset, leaderEpoch (-1 before v4)}."""
    body = _answer(
        client,
        "ListOffsets",
        version,
        calls.list_offsets_request(
            client.protocol, version, topic, 0, timestamp, isolation, TIMEOUT_MS
        ),
    )
    p = _partition_0(calls.read_list_offsets_answer(body, version), "ListOffsets", version)
    return {
        "errorCode": p["errorCode"],
        "timestamp": p["timestamp"],
        "offset": p["offset"],
        "leaderEpoch": p["leaderEpoch"],
    }
