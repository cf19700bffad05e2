"""What the fake broker answers, per API: one broker (node 1, the controller, the group
coordinator) leading one partition of one topic, whose log is a
:class:`~conformance.broker.fetch.FetchLog`.

=====================  ===================================================================
API (key)              answer
=====================  ===================================================================
Produce (0)            every partition INVALID_REQUEST (the log is fixed); claimed because
                       clients derive features from it (librdkafka: magic 2 needs
                       Produce v3+)
ApiVersions (18)       the APIs below with the versions of the definitions (Fetch from v4
                       when the log holds magic 2 batches: no down-conversion); a version
                       it does not know: v0 with UNSUPPORTED_VERSION (35)
Metadata (3)           this broker; the topic with its id and one partition led by it (all
                       topics: v0 an empty list, v1+ a null one; else the ones asked for:
                       other names UNKNOWN_TOPIC_OR_PARTITION, other ids UNKNOWN_TOPIC_ID)
ListOffsets (2)        -2 earliest: the log start offset; -1 latest: the high watermark
                       (the last stable offset for read_committed); other timestamps: -1
Fetch (1)              ``FetchLog.read`` (KIP-74 ``min_one_message`` from v3), each partition
                       once however often it is named (Kafka keys them in a map), the
                       response bounded by ``fetch.max.bytes`` (:attr:`Served.fetch_max_bytes`);
                       an unknown topic id UNKNOWN_TOPIC_ID; an IsolationLevel other than 0
                       or 1 UNKNOWN_SERVER_ERROR (``IsolationLevel.forId``); no fetch
                       sessions (SessionId 0: every fetch is full); an empty answer waits
                       ``MaxWaitMs`` (at most :attr:`Served.max_wait_cap_ms`)
FindCoordinator (10)   this broker
OffsetFetch (9)        no committed offset (-1)
OffsetCommit (8)       accepted, not stored
JoinGroup (11)         a group of one: the joining member (a new id when it has none) is
                       the leader, gets its own protocol metadata back and the first
                       protocol it offers (none: INCONSISTENT_GROUP_PROTOCOL); each join
                       starts a new generation
SyncGroup (14)         the assignment the leader sent for itself (empty for a follower)
Heartbeat (12),        accepted
LeaveGroup (13)
=====================  ===================================================================

:attr:`Served.version_cap` caps every claimed range (``max`` at most the cap; an API whose
lowest version is above it is not claimed): clients that negotiate then speak
``min(cap, their highest)`` of each API, which is how ``tests/test_consumer_versions.py`` runs
each real consumer at every version the broker claims.

The faults of :class:`Faults` change Fetch answers (a connection dropped mid-response): the
cut is decided per request, so it reaches only the connection whose response it cuts.

:meth:`Handlers.entries` is what a request costs to answer (the distinct partitions of a
Fetch, the array entries of any other request): the server refuses a request over
``MAX_REQUEST_ENTRIES``.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.codes import CODES
from conformance.broker.fetch import READ_COMMITTED, FetchLog, FetchRead
from conformance.client.protocol import build
from conformance.messages.protocol import API_VERSIONS, Request
from conformance.messages.schema import MessageSchema, Schemas, StructSpec
from conformance.messages.value import Message

__all__ = ["APIS", "FETCH_MAX_BYTES", "Faults", "Handlers", "Served", "topic_problem"]

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 8, 9, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14
#: every API the fake broker answers
APIS = (
    PRODUCE,
    FETCH,
    LIST_OFFSETS,
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    FIND_COORDINATOR,
    JOIN_GROUP,
    HEARTBEAT,
    LEAVE_GROUP,
    SYNC_GROUP,
    API_VERSIONS,
)
UNKNOWN_TOPIC_OR_PARTITION = CODES["UNKNOWN_TOPIC_OR_PARTITION"]
UNSUPPORTED_VERSION = CODES["UNSUPPORTED_VERSION"]
ILLEGAL_GENERATION = CODES["ILLEGAL_GENERATION"]
INCONSISTENT_GROUP_PROTOCOL = CODES["INCONSISTENT_GROUP_PROTOCOL"]
#: what a Produce gets: the fake broker serves a fixed log
READ_ONLY = CODES["INVALID_REQUEST"]
UNKNOWN_SERVER_ERROR = CODES["UNKNOWN_SERVER_ERROR"]
#: ``Errors.UNKNOWN_TOPIC_ID`` (not in ``broker.codes.CODES``, which holds the codes of the
#: Produce path)
UNKNOWN_TOPIC_ID = 100
#: ``fetch.max.bytes``, Kafka's default (55 MiB): the most a Fetch response carries
FETCH_MAX_BYTES = 55 * 1024 * 1024
#: the isolation levels ``IsolationLevel.forId`` knows
ISOLATION_LEVELS = (0, 1)
#: Kafka's topic names (``Topic.validate``): legal characters and the longest name
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_LENGTH = 249
INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EARLIEST, LATEST = -2, -1
#: the first Fetch version that gets KIP-74's "at least one batch" (``hardMaxBytesLimit``)
MIN_ONE_MESSAGE_FETCH = 3
#: the first Fetch version a broker serves each magic to unchanged (v2 announced message
#: format v1, v4 v2; a real broker down-converts for older fetchers, the fake one does not)
FIRST_FETCH_OF_MAGIC = {0: 0, 1: 2, 2: 4}


def topic_problem(name: str) -> str | None:
    """Why Kafka refuses ``name`` as a topic (``Topic.validate``), or None."""
    if not name:
        return "a topic name cannot be empty"
    if name in (".", ".."):
        return "a topic name cannot be '.' or '..'"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"a topic name is at most {MAX_TOPIC_LENGTH} characters, not {len(name)}"
    if not _LEGAL_TOPIC.fullmatch(name):
        return "a topic name holds only ASCII letters, digits, '.', '_' and '-'"
    return None


@dataclass(frozen=True)
class Faults:
    """``cut_fetch``: ``(n, keep)`` sends only the first ``keep`` bytes of the n-th Fetch
    response holding records (1-based), then closes the connection."""

    cut_fetch: tuple[int, int] | None = None


@dataclass
class Served:
    """What the fake broker serves: the protocol definitions it speaks, one topic partition
    and its log."""

    schemas: Schemas
    topic: str
    partition: int
    log: FetchLog
    max_magic: int = 2
    topic_id: uuid.UUID = field(default=uuid.UUID(int=0))
    node_id: int = 1
    cluster_id: str = "kafka-conformance-fake-broker"
    faults: Faults = field(default_factory=Faults)
    max_wait_cap_ms: int = 500
    #: no API is claimed above this version (None: every version of the definitions)
    version_cap: int | None = None
    #: ``fetch.max.bytes``: the most a Fetch response carries, whatever its MaxBytes says
    fetch_max_bytes: int = FETCH_MAX_BYTES

    def __post_init__(self) -> None:
        problem = topic_problem(self.topic)
        if problem is not None:
            raise ValueError(f"topic {ascii(self.topic)[:80]}: {problem}")
        if not 0 <= self.partition <= INT32_MAX:
            raise ValueError(f"partition {self.partition}: not in 0..{INT32_MAX}")
        if self.topic_id.int == 0:
            self.topic_id = uuid.uuid5(uuid.NAMESPACE_URL, f"kafka-conformance:{self.topic}")
        log = self.log
        offsets = {
            "log end offset": log.log_end_offset,
            "high watermark": log.high_watermark,
            "last stable offset": log.last_stable_offset,
            "log start offset": log.log_start_offset,
        }
        for what, offset in offsets.items():  # what ListOffsets and Fetch answer: a long
            if offset is not None and not INT64_MIN <= offset <= INT64_MAX:
                raise ValueError(f"the {what} {offset} is not a long: no broker holds this log")


def _build(struct: StructSpec, version: int, **values: Any) -> Message:
    """A message of ``struct`` with ``values`` for the fields ``version`` has (others keep
    their defaults, which every version writes or leaves out): ``client.protocol.build``."""
    return build(struct, version, values)


def _each_partition(
    schema: MessageSchema,
    version: int,
    topics: list[Message] | None,
    topic: tuple[str, str],
    partition: tuple[str, str],
    indexes: Callable[[Message], Iterable[int]],
    **answer: Any,
) -> list[Message]:
    """The same ``answer`` for every partition a request names: per topic of ``topics``, a
    ``topic`` = (struct, field of its partitions) with the topic's ``Name``, holding per
    index of ``indexes(topic)`` a ``partition`` = (struct, field of the index)."""
    topic_struct, partitions_field = topic
    partition_struct, index_field = partition
    return [
        _build(
            schema.structs[topic_struct],
            version,
            Name=t["Name"],
            **{
                partitions_field: [
                    _build(schema.structs[partition_struct], version, **{index_field: i}, **answer)
                    for i in indexes(t)
                ]
            },
        )
        for t in topics or []
    ]


def _entries(message: Message) -> int:
    """The entries of every array of ``message``, at every depth."""
    n = 0
    for value in message.values.values():
        if isinstance(value, list):
            n += len(value)
            n += sum(_entries(v) for v in value if isinstance(v, Message))
        elif isinstance(value, Message):
            n += _entries(value)
    return n


class Handlers:
    def __init__(self, served: Served, host: str, port: int, stopping: threading.Event) -> None:
        self.served = served
        self.host = host
        self.port = port
        self.stopping = stopping
        self._fetches_with_records = 0
        self._lock = threading.Lock()
        self._answer: dict[int, Callable[[Request, MessageSchema, int], Message]] = {
            API_VERSIONS: self.api_versions,
            PRODUCE: self.produce,
            METADATA: self.metadata,
            LIST_OFFSETS: self.list_offsets,
            FETCH: self.fetch,
            FIND_COORDINATOR: self.find_coordinator,
            OFFSET_FETCH: self.offset_fetch,
            OFFSET_COMMIT: self.offset_commit,
            JOIN_GROUP: self.join_group,
            SYNC_GROUP: self.sync_group,
            HEARTBEAT: self.plain,
            LEAVE_GROUP: self.leave_group,
        }
        #: the cut of the request being answered, per connection thread
        self._call = threading.local()
        #: per group: the generation and the leader's assignments (member id -> bytes)
        self._groups: dict[str, tuple[int, dict[str, bytes]]] = {}
        self._members = 0

    def versions(self, api_key: int) -> tuple[int, int] | None:
        """The (min, max) version claimed for ``api_key``, None when none is."""
        valid = self.served.schemas.request(api_key).valid_versions
        low, high = valid.lowest, valid.highest
        if api_key == FETCH:
            low = max(low, FIRST_FETCH_OF_MAGIC[min(self.served.max_magic, 2)])
        if self.served.version_cap is not None:
            high = min(high, self.served.version_cap)
        return (low, high) if low <= high else None

    def answer(self, request: Request) -> tuple[int, Message, int | None] | None:
        """``(response version, body, cut)`` or None (close the connection)."""
        self._call.cut = None
        handler = self._answer.get(request.api_key)
        if request.api_key == API_VERSIONS and request.body is None:
            schema = self.served.schemas.response(API_VERSIONS)
            return 0, self._api_versions_body(schema, 0, UNSUPPORTED_VERSION), None
        claimed = self.versions(request.api_key) if handler is not None else None
        if claimed is None or request.body is None:
            return None
        low, high = claimed
        if request.api_key == API_VERSIONS and request.api_version > high:
            schema = self.served.schemas.response(API_VERSIONS)
            return 0, self._api_versions_body(schema, 0, UNSUPPORTED_VERSION), None
        if not low <= request.api_version <= high:
            return None
        schema = self.served.schemas.response(request.api_key)
        body = handler(request, schema, request.api_version)
        return request.api_version, body, self._call.cut

    def entries(self, request: Request) -> int:
        """What ``request`` names: the distinct partitions of a Fetch (a repeated one is
        answered once), else the entries of its arrays at every depth."""
        body = request.body
        if body is None:
            return 0
        if request.api_key == FETCH:
            by_id = request.api_version >= 13
            topics = {t["TopicId"] if by_id else t["Topic"] for t in body["Topics"]}
            partitions = {
                (t["TopicId"] if by_id else t["Topic"], p["Partition"])
                for t in body["Topics"]
                for p in t["Partitions"]
            }
            return len(topics) + len(partitions)
        return _entries(body)

    # -- the APIs -----------------------------------------------------------------------------
    def _api_versions_body(self, schema: MessageSchema, version: int, error: int) -> Message:
        keys = [
            _build(schema.structs["ApiVersion"], version, ApiKey=k, MinVersion=lo, MaxVersion=hi)
            for k in sorted(APIS)
            for claimed in [self.versions(k)]
            if claimed is not None
            for lo, hi in [claimed]
        ]
        return _build(schema.struct, version, ErrorCode=error, ApiKeys=keys)

    def api_versions(self, request: Request, schema: MessageSchema, version: int) -> Message:
        return self._api_versions_body(schema, version, 0)

    def metadata(self, request: Request, schema: MessageSchema, version: int) -> Message:
        s = self.served
        assert request.body is not None
        asked = request.body["Topics"]
        every = asked is None or (version == 0 and not asked)  # v1+: empty is none
        wanted: list[tuple[str | None, uuid.UUID]] = (
            [(s.topic, s.topic_id)] if every else [(t["Name"], t["TopicId"]) for t in asked]
        )
        broker = _build(
            schema.structs["MetadataResponseBroker"],
            version,
            NodeId=s.node_id,
            Host=self.host,
            Port=self.port,
        )
        topics = []
        zero = uuid.UUID(int=0)
        answered: set[tuple[str | None, uuid.UUID]] = set()
        for name, topic_id in wanted:
            if (name, topic_id) in answered:  # Kafka answers a set of topics
                continue
            answered.add((name, topic_id))
            by_id = topic_id is not None and topic_id != zero
            known = topic_id == s.topic_id if by_id else name == s.topic
            if by_id and known:
                name = s.topic
            error = 0 if known else (UNKNOWN_TOPIC_ID if by_id else UNKNOWN_TOPIC_OR_PARTITION)
            partitions = []
            if known:
                partitions.append(
                    _build(
                        schema.structs["MetadataResponsePartition"],
                        version,
                        PartitionIndex=s.partition,
                        LeaderId=s.node_id,
                        LeaderEpoch=0,
                        ReplicaNodes=[s.node_id],
                        IsrNodes=[s.node_id],
                    )
                )
            topics.append(
                _build(
                    schema.structs["MetadataResponseTopic"],
                    version,
                    ErrorCode=error,
                    Name=None if by_id and not known else name,
                    TopicId=s.topic_id if known else (topic_id if by_id else zero),
                    Partitions=partitions,
                )
            )
        return _build(
            schema.struct,
            version,
            Brokers=[broker],
            ClusterId=s.cluster_id,
            ControllerId=s.node_id,
            Topics=topics,
        )

    def list_offsets(self, request: Request, schema: MessageSchema, version: int) -> Message:
        s = self.served
        assert request.body is not None
        committed = request.body["IsolationLevel"] == READ_COMMITTED
        topics = []
        for t in request.body["Topics"]:
            parts = []
            for p in t["Partitions"]:
                ours = t["Name"] == s.topic and p["PartitionIndex"] == s.partition
                ts = p["Timestamp"]
                offset = -1
                if ours and ts == EARLIEST:
                    offset = s.log.log_start_offset or 0
                elif ours and ts == LATEST:
                    bound = s.log.last_stable_offset if committed else s.log.high_watermark
                    offset = bound if bound is not None else -1
                parts.append(
                    _build(
                        schema.structs["ListOffsetsPartitionResponse"],
                        version,
                        PartitionIndex=p["PartitionIndex"],
                        ErrorCode=0 if ours else UNKNOWN_TOPIC_OR_PARTITION,
                        OldStyleOffsets=[offset] if offset >= 0 else [],
                        Timestamp=-1,
                        Offset=offset,
                        LeaderEpoch=0 if offset >= 0 else -1,
                    )
                )
            topics.append(
                _build(
                    schema.structs["ListOffsetsTopicResponse"],
                    version,
                    Name=t["Name"],
                    Partitions=parts,
                )
            )
        return _build(schema.struct, version, Topics=topics)

    def fetch(self, request: Request, schema: MessageSchema, version: int) -> Message:
        s = self.served
        body = request.body
        assert body is not None
        isolation = body["IsolationLevel"]
        if isolation not in ISOLATION_LEVELS:  # IsolationLevel.forId: IllegalArgumentException
            return self._fetch_error(schema, version, body, UNKNOWN_SERVER_ERROR)
        requested = body["MaxBytes"] if version >= MIN_ONE_MESSAGE_FETCH else 2**31 - 1
        limit = min(requested, s.fetch_max_bytes)
        min_one = version >= MIN_ONE_MESSAGE_FETCH
        by_id = version >= 13
        # FetchRequest.fetchData: a map keyed by topic partition, so a partition named twice
        # is answered once, where it was first named, with what it was last asked
        wanted: dict[tuple[Any, int], tuple[Message, Message]] = {}
        for t in body["Topics"]:
            for p in t["Partitions"]:
                wanted[(t["TopicId"] if by_id else t["Topic"], p["Partition"])] = (t, p)
        topics: list[Message] = []
        last_key: Any = object()
        total = 0
        for (key, index), (t, p) in wanted.items():
            ours_topic = key == (s.topic_id if by_id else s.topic)
            if ours_topic and index == s.partition:
                read = s.log.read(
                    p["FetchOffset"],
                    min(p["PartitionMaxBytes"], limit),
                    min_one_message=min_one,
                    isolation=isolation,
                    hard_max_bytes_limit=not min_one,
                )
                if read.records:
                    min_one = False
                    limit = max(0, limit - len(read.records))
            else:
                unknown = (
                    UNKNOWN_TOPIC_ID if by_id and not ours_topic else UNKNOWN_TOPIC_OR_PARTITION
                )
                read = FetchRead(unknown, b"", -1, -1, -1)
            total += len(read.records)
            if key != last_key:  # FetchResponse: consecutive partitions of a topic together
                topics.append(
                    _build(
                        schema.structs["FetchableTopicResponse"],
                        version,
                        Topic=t["Topic"],
                        TopicId=t["TopicId"],
                        Partitions=[],
                    )
                )
                last_key = key
            topics[-1]["Partitions"].append(self._partition(schema, version, index, read))
        if total == 0:  # nothing to return: wait as long as the client allows
            self.stopping.wait(max(0, min(body["MaxWaitMs"], s.max_wait_cap_ms)) / 1000)
        else:
            self._maybe_cut(total)
        return _build(schema.struct, version, ErrorCode=0, SessionId=0, Responses=topics)

    def _fetch_error(
        self, schema: MessageSchema, version: int, body: Message, error: int
    ) -> Message:
        """``FetchRequest.getErrorResponse``: the error at the top and, below v13, on every
        partition named (as named)."""
        topics = []
        if version < 13:
            failed = FetchRead(error, b"", -1, -1, -1)
            topics = [
                _build(
                    schema.structs["FetchableTopicResponse"],
                    version,
                    Topic=t["Topic"],
                    TopicId=t["TopicId"],
                    Partitions=[
                        self._partition(schema, version, p["Partition"], failed)
                        for p in t["Partitions"]
                    ],
                )
                for t in body["Topics"]
            ]
        return _build(
            schema.struct, version, ErrorCode=error, SessionId=body["SessionId"], Responses=topics
        )

    def _partition(self, schema: MessageSchema, version: int, index: int, r: FetchRead) -> Message:
        aborted = None
        if r.aborted is not None:
            aborted = [
                _build(
                    schema.structs["AbortedTransaction"],
                    version,
                    ProducerId=a.producer_id,
                    FirstOffset=a.first_offset,
                )
                for a in r.aborted
            ]
        return _build(
            schema.structs["PartitionData"],
            version,
            PartitionIndex=index,
            ErrorCode=r.error,
            HighWatermark=r.high_watermark,
            LastStableOffset=r.last_stable_offset,
            LogStartOffset=r.log_start_offset,
            AbortedTransactions=aborted,
            Records=r.records,
        )

    def _maybe_cut(self, total: int) -> None:
        cut = self.served.faults.cut_fetch
        with self._lock:
            self._fetches_with_records += 1
            n = self._fetches_with_records
        if cut is not None and cut[0] == n:
            self._call.cut = cut[1]

    def produce(self, request: Request, schema: MessageSchema, version: int) -> Message:
        """Every partition refused (INVALID_REQUEST): the log is fixed. Produce is claimed
        because clients derive their features from it (librdkafka enables magic 2, and so
        Fetch v4+, only when Produce v3+ is there)."""
        assert request.body is not None
        topics = _each_partition(
            schema,
            version,
            request.body["TopicData"],
            ("TopicProduceResponse", "PartitionResponses"),
            ("PartitionProduceResponse", "Index"),
            lambda t: [p["Index"] for p in t["PartitionData"]],
            ErrorCode=READ_ONLY,
            BaseOffset=-1,
            ErrorMessage="the fake broker serves a fixed log",
        )
        return _build(schema.struct, version, Responses=topics)

    def find_coordinator(self, request: Request, schema: MessageSchema, version: int) -> Message:
        s = self.served
        assert request.body is not None
        coordinators = [
            _build(
                schema.structs["Coordinator"],
                version,
                Key=key,
                NodeId=s.node_id,
                Host=self.host,
                Port=self.port,
            )
            for key in request.body["CoordinatorKeys"]
        ]
        return _build(
            schema.struct,
            version,
            NodeId=s.node_id,
            Host=self.host,
            Port=self.port,
            Coordinators=coordinators,
        )

    def offset_fetch(self, request: Request, schema: MessageSchema, version: int) -> Message:
        body = request.body
        assert body is not None

        def partitions(struct: str, topics: list[Message] | None) -> list[Message]:
            return _each_partition(
                schema,
                version,
                topics,
                (struct, "Partitions"),
                (struct.replace("Topic", "Partition"), "PartitionIndex"),
                lambda t: t["PartitionIndexes"],
                CommittedOffset=-1,
                CommittedLeaderEpoch=-1,
                Metadata="",
            )

        groups = [
            _build(
                schema.structs["OffsetFetchResponseGroup"],
                version,
                GroupId=g["GroupId"],
                Topics=partitions("OffsetFetchResponseTopics", g["Topics"]),
            )
            for g in body["Groups"]
        ]
        return _build(
            schema.struct,
            version,
            Topics=partitions("OffsetFetchResponseTopic", body["Topics"]),
            Groups=groups,
        )

    def offset_commit(self, request: Request, schema: MessageSchema, version: int) -> Message:
        assert request.body is not None
        topics = _each_partition(
            schema,
            version,
            request.body["Topics"],
            ("OffsetCommitResponseTopic", "Partitions"),
            ("OffsetCommitResponsePartition", "PartitionIndex"),
            lambda t: [p["PartitionIndex"] for p in t["Partitions"]],
        )
        return _build(schema.struct, version, Topics=topics)

    def join_group(self, request: Request, schema: MessageSchema, version: int) -> Message:
        body = request.body
        assert body is not None
        member = body["MemberId"]
        with self._lock:
            if not member:
                self._members += 1
                member = f"{request.client_id or 'member'}-{self._members}"
            generation = self._groups.get(body["GroupId"], (0, {}))[0] + 1
            self._groups[body["GroupId"]] = (generation, {})
        protocols = body["Protocols"]
        if not protocols:  # GroupCoordinator: no protocol in common
            return _build(
                schema.struct,
                version,
                ErrorCode=INCONSISTENT_GROUP_PROTOCOL,
                ProtocolName="",
                Leader="",
                MemberId=member,
            )
        first = protocols[0]
        members = [
            _build(
                schema.structs["JoinGroupResponseMember"],
                version,
                MemberId=member,
                GroupInstanceId=body["GroupInstanceId"],
                Metadata=first["Metadata"],
            )
        ]
        return _build(
            schema.struct,
            version,
            ErrorCode=0,
            GenerationId=generation,
            ProtocolType=body["ProtocolType"],
            ProtocolName=first["Name"],
            Leader=member,
            MemberId=member,
            Members=members,
        )

    def sync_group(self, request: Request, schema: MessageSchema, version: int) -> Message:
        body = request.body
        assert body is not None
        member = body["MemberId"]
        with self._lock:
            generation, assignments = self._groups.get(body["GroupId"], (0, {}))
            for a in body["Assignments"]:
                assignments[a["MemberId"]] = a["Assignment"]
        known = generation == body["GenerationId"]
        return _build(
            schema.struct,
            version,
            ErrorCode=0 if known else ILLEGAL_GENERATION,
            ProtocolType=body["ProtocolType"],
            ProtocolName=body["ProtocolName"],
            Assignment=assignments.get(member, b"") if known else b"",
        )

    def leave_group(self, request: Request, schema: MessageSchema, version: int) -> Message:
        assert request.body is not None
        members = [
            _build(
                schema.structs["MemberResponse"],
                version,
                MemberId=m["MemberId"],
                GroupInstanceId=m["GroupInstanceId"],
            )
            for m in request.body["Members"]
        ]
        return _build(schema.struct, version, Members=members)

    def plain(self, request: Request, schema: MessageSchema, version: int) -> Message:
        return Message(schema.struct)
