"""What a Metadata answer says of the cluster, sans-IO: its brokers, each partition's leader,
the topics' ids and errors (``org.apache.kafka.clients.MetadataCache``'s view).

A leader named in a partition but absent from the brokers' list is no leader
(:meth:`ClusterView.leader` gives None, and the client refreshes as for LEADER_NOT_AVAILABLE).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from conformance.broker.codes import error_name
from conformance.client.protocol import Protocol
from conformance.messages.value import Message

__all__ = [
    "ClusterView",
    "PartitionView",
    "TopicView",
    "metadata_request",
    "read_metadata",
]

API_METADATA = 3
_ZERO_UUID = uuid.UUID(int=0)


@dataclass(frozen=True)
class PartitionView:
    error: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicView:
    name: str | None
    error: int
    topic_id: uuid.UUID | None
    partitions: dict[int, PartitionView]

    @property
    def error_name(self) -> str:
        return error_name(self.error)


@dataclass
class ClusterView:
    brokers: dict[int, tuple[str, int]] = field(default_factory=dict)
    controller: int = -1
    cluster_id: str | None = None
    topics: dict[str, TopicView] = field(default_factory=dict)

    def leader(self, topic: str, partition: int) -> tuple[int, tuple[str, int]] | None:
        """(node id, address) of the partition's leader, None when the view has none."""
        t = self.topics.get(topic)
        if t is None or t.error:
            return None
        p = t.partitions.get(partition)
        if p is None or p.error or p.leader < 0 or p.leader not in self.brokers:
            return None
        return p.leader, self.brokers[p.leader]

    def topic_id(self, topic: str) -> uuid.UUID | None:
        t = self.topics.get(topic)
        return None if t is None else t.topic_id


def metadata_request(
    protocol: Protocol, version: int, topics: list[str] | None, auto_create: bool = False
) -> Message:
    """A Metadata request for ``topics`` (None: every topic; v0 has no null list and reads
    an empty one as every topic)."""
    wanted = None if topics is None else [{"Name": t} for t in topics]
    if wanted is None and version == 0:
        wanted = []
    return protocol.new(
        API_METADATA,
        version,
        Topics=wanted,
        AllowAutoTopicCreation=auto_create,
        IncludeTopicAuthorizedOperations=False,
        IncludeClusterAuthorizedOperations=False,
    )


def read_metadata(body: Message, version: int) -> ClusterView:
    """The view of a Metadata answer of ``version``."""
    view = ClusterView()
    for b in body["Brokers"] or []:
        view.brokers[int(b["NodeId"])] = (str(b["Host"]), int(b["Port"]))
    if version >= 1:
        view.controller = int(body["ControllerId"])
    if version >= 2:
        view.cluster_id = body["ClusterId"]
    for t in body["Topics"] or []:
        tid = t["TopicId"] if version >= 10 else None
        parts = {
            int(p["PartitionIndex"]): PartitionView(
                int(p["ErrorCode"]),
                int(p["LeaderId"]),
                int(p["LeaderEpoch"]) if version >= 7 else -1,
                tuple(int(x) for x in p["ReplicaNodes"] or ()),
                tuple(int(x) for x in p["IsrNodes"] or ()),
            )
            for p in t["Partitions"] or []
        }
        name = t["Name"]
        view.topics[str(name)] = TopicView(
            name, int(t["ErrorCode"]), None if tid == _ZERO_UUID else tid, parts
        )
    return view
