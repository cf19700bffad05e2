"""The requests the kit sends and what it reads of their answers, at any version the
definitions have (sans-IO: messages in, plain values out).

=====================  ==========================================================
API (key)              built / read
=====================  ==========================================================
Produce (0)            :func:`produce_request` / :func:`read_produce_request`,
                       :func:`read_produce_answer` (the broker verdict's shape)
Fetch (1)              :func:`fetch_request` / :func:`read_fetch_answer`
ListOffsets (2)        :func:`list_offsets_request` / :func:`read_list_offsets_answer`
FindCoordinator (10)   :func:`find_coordinator_request` / :func:`read_coordinator`
CreateTopics (19)      :func:`create_topics_request` / :func:`read_topic_results`
DeleteTopics (20)      :func:`delete_topics_request` / :func:`read_topic_results`
InitProducerId (22)    :func:`init_producer_id_request` / :func:`read_producer_id`
AddPartitionsToTxn     :func:`add_partitions_request` / :func:`read_partition_errors`
(24)
EndTxn (26)            :func:`end_txn_request` / :func:`read_end_txn` (v5+, transactions
                       V2: the producer id and the epoch the coordinator bumped)
AlterConfigs (33)      :func:`alter_configs_request` / :func:`read_resource_errors`
=====================  ==========================================================

Fields a version lacks are left out when building (``Protocol.new``) and read as Kafka's
defaults for them (-1 for offsets and timestamps a version does not carry).
"""

from __future__ import annotations

import uuid
from typing import Any

from conformance.broker.codes import error_name
from conformance.client.protocol import Protocol
from conformance.messages.value import Message

__all__ = [
    "END_TXN_V2",
    "FETCH_MAX_WAIT_MS",
    "TOPIC_RESOURCE",
    "TRANSACTION_KEY",
    "add_partitions_request",
    "alter_configs_request",
    "create_topics_request",
    "delete_topics_request",
    "end_txn_request",
    "fetch_request",
    "find_coordinator_request",
    "init_producer_id_request",
    "list_offsets_request",
    "produce_request",
    "read_coordinator",
    "read_end_txn",
    "read_fetch_answer",
    "read_list_offsets_answer",
    "read_partition_errors",
    "read_produce_answer",
    "read_produce_request",
    "read_producer_id",
    "read_resource_errors",
    "read_topic_results",
]

#: FindCoordinator's key type of a transactional id
TRANSACTION_KEY = 1
#: AlterConfigs' resource type of a topic
TOPIC_RESOURCE = 2
#: Produce v13+ and Fetch v13+ name topics by id
TOPIC_IDS_FROM = 13
#: EndTxn v5+ is a transactions V2 client's (KIP-890 part 2: ``KafkaApis`` takes an EndTxn
#: above v4 as TV_2): the coordinator bumps the producer epoch at every commit and abort,
#: writes the markers with the new epoch and answers it
END_TXN_V2 = 5


def _topic_key(entry: Message, version: int, name_field: str = "Name") -> str:
    """A topic of a Produce or Fetch message: its name, or (v13+) its id as text."""
    return str(entry["TopicId"]) if version >= TOPIC_IDS_FROM else str(entry[name_field])


# ------------------------------------------------------------------------------ Produce


def produce_request(
    protocol: Protocol,
    version: int,
    partitions: list[tuple[str, int, bytes | None]],
    *,
    acks: int = -1,
    timeout_ms: int = 30_000,
    transactional_id: str | None = None,
    topic_ids: dict[str, uuid.UUID] | None = None,
) -> Message:
    """A Produce request of ``(topic, partition, records)`` entries, one topic entry per
    topic in order of appearance (v13+: by the topic's id from ``topic_ids``)."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition, records in partitions:
        topics.setdefault(topic, []).append({"Index": partition, "Records": records})
    data = []
    for topic, parts in topics.items():
        entry: dict[str, Any] = {"Name": topic, "PartitionData": parts}
        if version >= TOPIC_IDS_FROM:
            if not topic_ids or topic not in topic_ids:
                raise ValueError(f"Produce v{version} names topics by id: no id for {topic}")
            entry["TopicId"] = topic_ids[topic]
        data.append(entry)
    return protocol.new(
        "Produce",
        version,
        TransactionalId=transactional_id,
        Acks=acks,
        TimeoutMs=timeout_ms,
        TopicData=data,
    )


def read_produce_request(
    body: Message, version: int
) -> tuple[str | None, int, list[tuple[str, int, bytes]]]:
    """The transactional id, acks and every (topic, partition, records) of a Produce
    request (the topic is its id as text from v13 on)."""
    parts = [
        (_topic_key(t, version), int(p["Index"]), bytes(p["Records"] or b""))
        for t in body["TopicData"] or []
        for p in t["PartitionData"] or []
    ]
    txn = body["TransactionalId"] if version >= 3 else None
    return txn, int(body["Acks"]), parts


def read_produce_answer(body: Message, version: int) -> dict[tuple[str, int], dict[str, Any]]:
    """Every partition answer of a Produce answer by (topic, partition), shaped like the
    broker verdict's ``response`` (64-bit numbers as decimal strings; fields the version
    lacks at their defaults; the topic is its id as text from v13 on)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for t in body["Responses"] or []:
        for p in t["PartitionResponses"] or []:
            code = int(p["ErrorCode"])
            out[(_topic_key(t, version), int(p["Index"]))] = {
                "errorCode": code,
                "errorName": error_name(code),
                "errorMessage": p["ErrorMessage"] if version >= 8 else None,
                "baseOffset": str(p["BaseOffset"]),
                "logAppendTimeMs": str(p["LogAppendTimeMs"] if version >= 2 else -1),
                "logStartOffset": str(p["LogStartOffset"] if version >= 5 else -1),
                "recordErrors": [
                    {
                        "batchIndex": int(e["BatchIndex"]),
                        "batchIndexErrorMessage": e["BatchIndexErrorMessage"],
                    }
                    for e in ((p["RecordErrors"] or []) if version >= 8 else [])
                ],
            }
    return out


# ------------------------------------------------------------------------------ Fetch

#: a Java consumer's ``fetch.max.wait.ms``: with MinBytes 0 Kafka answers at once (a
#: minimum of 0 bytes is always there); nisshi 0.8.1 answers a wait of 0 with no partition
FETCH_MAX_WAIT_MS = 500


def fetch_request(
    protocol: Protocol,
    version: int,
    topic: str,
    partition: int = 0,
    offset: int = 0,
    *,
    partition_max_bytes: int = 1 << 20,
    max_bytes: int = 1 << 20,
    isolation: int = 0,
    topic_id: uuid.UUID | None = None,
    max_wait_ms: int = FETCH_MAX_WAIT_MS,
    min_bytes: int = 0,
) -> Message:
    """A consumer's Fetch of one partition (no session; v13+ by ``topic_id``)."""
    if version >= TOPIC_IDS_FROM and topic_id is None:
        raise ValueError(f"Fetch v{version} names topics by id: no id for {topic}")
    part = {
        "Partition": partition,
        "CurrentLeaderEpoch": -1,
        "FetchOffset": offset,
        "LastFetchedEpoch": -1,
        "LogStartOffset": -1,
        "PartitionMaxBytes": partition_max_bytes,
        "HighWatermark": 2**63 - 1,
    }
    topic_entry: dict[str, Any] = {"Topic": topic, "Partitions": [part]}
    if topic_id is not None:
        topic_entry["TopicId"] = topic_id
    return protocol.new(
        "Fetch",
        version,
        ReplicaId=-1,
        ReplicaState={"ReplicaId": -1, "ReplicaEpoch": -1},
        MaxWaitMs=max_wait_ms,
        MinBytes=min_bytes,
        MaxBytes=max_bytes,
        IsolationLevel=isolation,
        SessionId=0,
        SessionEpoch=-1,
        Topics=[topic_entry],
        ForgottenTopicsData=[],
        RackId="",
    )


def read_fetch_answer(body: Message, version: int) -> tuple[int, list[dict[str, Any]]]:
    """(the answer's own error code, 0 before v7; every partition's answer): each
    {topic (its id as text from v13), partition, errorCode, highWatermark, lastStableOffset,
    logStartOffset, abortedTransactions ([[producerId, firstOffset]...] or None), records}."""
    top = int(body["ErrorCode"]) if version >= 7 else 0
    parts = []
    for t in body["Responses"] or []:
        for p in t["Partitions"] or []:
            aborted = p["AbortedTransactions"]
            parts.append(
                {
                    "topic": _topic_key(t, version, "Topic"),
                    "partition": int(p["PartitionIndex"]),
                    "errorCode": int(p["ErrorCode"]),
                    "highWatermark": int(p["HighWatermark"]),
                    "lastStableOffset": int(p["LastStableOffset"]) if version >= 4 else -1,
                    "logStartOffset": int(p["LogStartOffset"]) if version >= 5 else -1,
                    "abortedTransactions": None
                    if aborted is None or version < 4
                    else [[int(a["ProducerId"]), int(a["FirstOffset"])] for a in aborted],
                    "records": None if p["Records"] is None else bytes(p["Records"]),
                }
            )
    return top, parts


# ------------------------------------------------------------------------------ ListOffsets


def list_offsets_request(
    protocol: Protocol,
    version: int,
    topic: str,
    partition: int,
    timestamp: int,
    isolation: int = 0,
    timeout_ms: int = 30_000,
) -> Message:
    part = {"PartitionIndex": partition, "CurrentLeaderEpoch": -1, "Timestamp": timestamp}
    return protocol.new(
        "ListOffsets",
        version,
        ReplicaId=-1,
        IsolationLevel=isolation,
        Topics=[{"Name": topic, "Partitions": [part]}],
        TimeoutMs=timeout_ms,
    )


def read_list_offsets_answer(body: Message, version: int) -> list[dict[str, Any]]:
    """Every partition's answer: {topic, partition, errorCode, timestamp, offset,
    leaderEpoch (-1 before v4)}."""
    return [
        {
            "topic": str(t["Name"]),
            "partition": int(p["PartitionIndex"]),
            "errorCode": int(p["ErrorCode"]),
            "timestamp": int(p["Timestamp"]),
            "offset": int(p["Offset"]),
            "leaderEpoch": int(p["LeaderEpoch"]) if version >= 4 else -1,
        }
        for t in body["Topics"] or []
        for p in t["Partitions"] or []
    ]


# ------------------------------------------------------------------------------ transactions


def find_coordinator_request(
    protocol: Protocol, version: int, key: str, key_type: int = TRANSACTION_KEY
) -> Message:
    return protocol.new(
        "FindCoordinator", version, Key=key, KeyType=key_type, CoordinatorKeys=[key]
    )


def read_coordinator(body: Message, version: int, key: str) -> dict[str, Any]:
    """{errorCode, nodeId, host, port} of the coordinator of ``key`` (v4+: its entry)."""
    if version < 4:
        return {
            "errorCode": int(body["ErrorCode"]),
            "nodeId": int(body["NodeId"]),
            "host": str(body["Host"]),
            "port": int(body["Port"]),
        }
    for c in body["Coordinators"] or []:
        if c["Key"] == key:
            return {
                "errorCode": int(c["ErrorCode"]),
                "nodeId": int(c["NodeId"]),
                "host": str(c["Host"]),
                "port": int(c["Port"]),
            }
    raise ValueError(f"FindCoordinator v{version} answered no coordinator of {key!r}")


def init_producer_id_request(
    protocol: Protocol,
    version: int,
    transactional_id: str | None,
    timeout_ms: int = 60_000,
    producer_id: int = -1,
    producer_epoch: int = -1,
) -> Message:
    return protocol.new(
        "InitProducerId",
        version,
        TransactionalId=transactional_id,
        TransactionTimeoutMs=timeout_ms,
        ProducerId=producer_id,
        ProducerEpoch=producer_epoch,
    )


def read_producer_id(body: Message) -> dict[str, Any]:
    return {
        "errorCode": int(body["ErrorCode"]),
        "producerId": int(body["ProducerId"]),
        "producerEpoch": int(body["ProducerEpoch"]),
    }


def add_partitions_request(
    protocol: Protocol,
    version: int,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: dict[str, list[int]],
) -> Message:
    """AddPartitionsToTxn (v0-3: the client's form; v4+: one transaction of the batched
    form brokers send each other)."""
    topics = [{"Name": t, "Partitions": list(ps)} for t, ps in partitions.items()]
    return protocol.new(
        "AddPartitionsToTxn",
        version,
        V3AndBelowTransactionalId=transactional_id,
        V3AndBelowProducerId=producer_id,
        V3AndBelowProducerEpoch=producer_epoch,
        V3AndBelowTopics=topics,
        Transactions=[
            {
                "TransactionalId": transactional_id,
                "ProducerId": producer_id,
                "ProducerEpoch": producer_epoch,
                "VerifyOnly": False,
                "Topics": topics,
            }
        ],
    )


def read_partition_errors(body: Message, version: int) -> dict[tuple[str, int], int]:
    """(topic, partition) -> error code of an AddPartitionsToTxn answer."""
    if version >= 4:
        results = [t for r in body["ResultsByTransaction"] or [] for t in r["TopicResults"] or []]
        if not results and body["ErrorCode"]:
            raise ValueError(f"AddPartitionsToTxn answered {error_name(int(body['ErrorCode']))}")
    else:
        results = body["ResultsByTopicV3AndBelow"] or []
    return {
        (str(t["Name"]), int(p["PartitionIndex"])): int(p["PartitionErrorCode"])
        for t in results
        for p in t["ResultsByPartition"] or []
    }


def end_txn_request(
    protocol: Protocol,
    version: int,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
) -> Message:
    return protocol.new(
        "EndTxn",
        version,
        TransactionalId=transactional_id,
        ProducerId=producer_id,
        ProducerEpoch=producer_epoch,
        Committed=commit,
    )


def read_end_txn(body: Message, version: int) -> dict[str, int]:
    """{errorCode, producerId, producerEpoch} of an EndTxn answer (the producer's id and
    epoch from :data:`END_TXN_V2` on; -1 before)."""
    v2 = version >= END_TXN_V2
    return {
        "errorCode": int(body["ErrorCode"]),
        "producerId": int(body["ProducerId"]) if v2 else -1,
        "producerEpoch": int(body["ProducerEpoch"]) if v2 else -1,
    }


# ------------------------------------------------------------------------------ admin


def create_topics_request(
    protocol: Protocol,
    version: int,
    topics: dict[str, tuple[int, int, dict[str, str]]],
    timeout_ms: int = 30_000,
    validate_only: bool = False,
) -> Message:
    """CreateTopics of name -> (partitions, replication factor, configuration)."""
    return protocol.new(
        "CreateTopics",
        version,
        Topics=[
            {
                "Name": name,
                "NumPartitions": partitions,
                "ReplicationFactor": factor,
                "Assignments": [],
                "Configs": [{"Name": k, "Value": v} for k, v in configs.items()],
            }
            for name, (partitions, factor, configs) in topics.items()
        ],
        timeoutMs=timeout_ms,
        validateOnly=validate_only,
    )


def delete_topics_request(
    protocol: Protocol, version: int, names: list[str], timeout_ms: int = 30_000
) -> Message:
    return protocol.new(
        "DeleteTopics",
        version,
        Topics=[{"Name": n, "TopicId": uuid.UUID(int=0)} for n in names],
        TopicNames=list(names),
        TimeoutMs=timeout_ms,
    )


def read_topic_results(body: Message, version: int) -> dict[str, tuple[int, str | None]]:
    """name -> (error code, error message) of a CreateTopics or DeleteTopics answer."""
    entries = body["Topics"] if "Topics" in body.values else body["Responses"]
    out: dict[str, tuple[int, str | None]] = {}
    for t in entries or []:
        message = t["ErrorMessage"] if "ErrorMessage" in t.values else None
        out[str(t["Name"])] = (int(t["ErrorCode"]), message)
    return out


def alter_configs_request(
    protocol: Protocol, version: int, topic: str, configs: dict[str, str]
) -> Message:
    """AlterConfigs (not incremental: the topic's whole configuration) of one topic."""
    return protocol.new(
        "AlterConfigs",
        version,
        Resources=[
            {
                "ResourceType": TOPIC_RESOURCE,
                "ResourceName": topic,
                "Configs": [{"Name": k, "Value": v} for k, v in configs.items()],
            }
        ],
        ValidateOnly=False,
    )


def read_resource_errors(body: Message) -> dict[str, tuple[int, str | None]]:
    return {
        str(r["ResourceName"]): (int(r["ErrorCode"]), r["ErrorMessage"])
        for r in body["Responses"] or []
    }
