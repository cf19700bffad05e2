"""The kit's client of a Kafka cluster: bootstrap, version negotiation per connection,
Metadata and leader routing, and the admin calls the kit needs (CreateTopics, DeleteTopics,
AlterConfigs), on :class:`~conformance.host.broker_socket.BrokerConnection` and the sans-IO
``client`` package. No third-party Kafka client is involved.

* **Bootstrap**: the addresses in order; the first that connects and negotiates is the
  bootstrap connection (:attr:`KafkaClient.versions` is what it speaks).
* **Routing**: a partition's requests go to its leader as the newest Metadata names it
  (:meth:`KafkaClient.leader`); an error whose exception is an ``InvalidMetadataException``
  (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, ...) or a lost
  connection refreshes the metadata and retries, at most :data:`ATTEMPTS` times and within
  ``deadline`` seconds, as Java's client does (:meth:`KafkaClient.leader_request`).
* **Admin**: CreateTopics and DeleteTopics go to the controller Metadata names (a KRaft
  broker forwards them); NOT_CONTROLLER refreshes and retries. A topic is created only when
  the broker answers NONE for it (TOPIC_ALREADY_EXISTS is not "created": the caller must not
  write to or delete a topic it did not make), and only once Metadata shows a leader for each
  of its partitions. Where the broker offers no CreateTopics, :meth:`auto_create` asks
  Metadata to create the topics with the broker's defaults.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.broker.codes import CODES, INVALID_METADATA, error_name
from conformance.client import calls
from conformance.client.cluster import API_METADATA, ClusterView, metadata_request, read_metadata
from conformance.client.connection import Answer, ProtocolError
from conformance.client.negotiation import BrokerVersions
from conformance.client.protocol import Protocol
from conformance.host.broker_socket import (
    CONNECT_TIMEOUT,
    WIRE_ERRORS,
    BrokerConnection,
    ConnectError,
    WireError,
    address_text,
)
from conformance.host.lifetime import Closing
from conformance.messages.schema import Versions
from conformance.messages.value import Message

__all__ = [
    "ATTEMPTS",
    "KafkaClient",
    "TopicOutcome",
    "read_bootstrap",
]

#: how often a request is tried on a stale leader or a lost connection
ATTEMPTS = 5
#: pause between two tries
BACKOFF_S = 0.2
_INVALID_METADATA_CODES = frozenset(CODES[n] for n in INVALID_METADATA)
_NOT_CONTROLLER = CODES["NOT_CONTROLLER"]
_UNKNOWN_TOPIC = CODES["UNKNOWN_TOPIC_OR_PARTITION"]
_RETRIED_ADMIN = frozenset(
    CODES[n] for n in ("NOT_CONTROLLER", "REQUEST_TIMED_OUT", "THROTTLING_QUOTA_EXCEEDED")
)


def read_bootstrap(text: str) -> list[tuple[str, int]]:
    """``HOST:PORT[,HOST:PORT...]`` -> addresses; ValueError naming what is wrong."""
    out = []
    for part in text.split(","):
        part = part.strip()
        host, sep, port = part.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isascii() or not port.isdigit():
            raise ValueError(f"not HOST:PORT: {part!r}")
        if not 0 < int(port) < 65536:
            raise ValueError(f"port out of range: {part!r}")
        out.append((host, int(port)))
    if not out:
        raise ValueError("no bootstrap address")
    return out


@dataclass(frozen=True)
class TopicOutcome:
    """What became of one topic the client was asked to create."""

    created: bool
    #: the broker's error (NONE when created)
    error: str = "NONE"
    message: str | None = None

    @property
    def reason(self) -> str:
        return self.error + (f": {self.message}" if self.message else "")


class KafkaClient(Closing):
    """A client of the cluster reached at ``bootstrap`` (see the module docstring)."""

    def __init__(
        self,
        bootstrap: str | Sequence[tuple[str, int]],
        protocol: Protocol,
        *,
        client_id: str | None = "kafka-conformance",
        timeout: float | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        deadline: float = 60.0,
    ) -> None:
        self.addresses = (
            read_bootstrap(bootstrap) if isinstance(bootstrap, str) else list(bootstrap)
        )
        self.protocol = protocol
        self.client_id = client_id
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.deadline = deadline
        self._connections: dict[tuple[str, int], BrokerConnection] = {}
        self._bootstrap: BrokerConnection | None = None
        self.view = ClusterView()

    # ------------------------------------------------------------------ connections
    def connection(self, address: tuple[str, int]) -> BrokerConnection:
        """The (negotiated) connection to ``address``, opened once."""
        address = (str(address[0]), int(address[1]))
        conn = self._connections.get(address)
        if conn is None:
            conn = BrokerConnection(
                address,
                self.protocol,
                client_id=self.client_id,
                timeout=self.timeout,
                connect_timeout=self.connect_timeout,
            )
            self._connections[address] = conn
        if not conn.is_open:
            conn.negotiate()
        return conn

    def bootstrap(self) -> BrokerConnection:
        """The first bootstrap address that connects and negotiates."""
        if self._bootstrap is not None and self._bootstrap.is_open:
            return self._bootstrap
        problems = []
        for address in self.addresses:
            try:
                self._bootstrap = self.connection(address)
                return self._bootstrap
            except WIRE_ERRORS as exc:
                problems.append(str(exc))
        raise ConnectError("; ".join(problems) if problems else "no bootstrap address")

    @property
    def versions(self) -> BrokerVersions:
        conn = self.bootstrap()
        assert conn.versions is not None
        return conn.versions

    def version(self, api: str | int, within: Versions | None = None) -> int:
        """The newest version of ``api`` the bootstrap broker and the kit both speak."""
        return self.versions.newest(self.protocol, api, within)

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
        self._bootstrap = None

    # ------------------------------------------------------------------ metadata
    def metadata(self, topics: list[str] | None = None, auto_create: bool = False) -> ClusterView:
        """A fresh view of ``topics`` (None: every topic), also kept in :attr:`view`."""
        conn = self.bootstrap()
        version = self.version(API_METADATA)
        answer = conn.request(
            API_METADATA, version, metadata_request(self.protocol, version, topics, auto_create)
        )
        view = read_metadata(answer.body, version)
        if not view.brokers:
            raise ProtocolError(f"Metadata v{version} names no broker")
        self.view = view
        return view

    def leader(
        self, topic: str, partition: int = 0, wait: float | None = None
    ) -> tuple[int, tuple[str, int]]:
        """(node id, address) of the partition's leader, refreshing the metadata until one
        is known and answers (at most ``wait`` seconds, default the client's deadline)."""
        end = time.monotonic() + (self.deadline if wait is None else wait)
        last = "no metadata"
        while True:
            view = self.metadata([topic])
            found = view.leader(topic, partition)
            if found is not None:
                try:
                    self.connection(found[1])
                    return found
                except WIRE_ERRORS as exc:
                    last = f"its leader {found[0]} at {address_text(found[1])}: {exc}"
            else:
                t = view.topics.get(topic)
                if t is None:
                    last = "Metadata does not name the topic"
                elif t.error:
                    last = f"Metadata answers {t.error_name} for the topic"
                elif partition not in t.partitions:
                    last = f"Metadata names no partition {partition}"
                else:
                    p = t.partitions[partition]
                    last = (
                        f"Metadata answers {error_name(p.error)} for partition {partition}"
                        if p.error
                        else f"its leader {p.leader} is not among the brokers Metadata names"
                    )
            if time.monotonic() + BACKOFF_S > end:
                raise ProtocolError(f"no leader of {topic}-{partition}: {last}")
            time.sleep(BACKOFF_S)

    def leader_request(
        self,
        topic: str,
        partition: int,
        api: str | int,
        version: int,
        body: Message,
        error_of: Callable[[Answer], int],
    ) -> Answer:
        """``body`` to the partition's leader; refreshed and retried on an
        invalid-metadata error or a lost connection (see the module docstring)."""
        end = time.monotonic() + self.deadline
        for attempt in range(ATTEMPTS):
            _, address = self.leader(topic, partition, wait=max(0.0, end - time.monotonic()))
            try:
                answer = self.connection(address).request(api, version, body)
            except (WireError, ProtocolError):
                if attempt + 1 == ATTEMPTS or time.monotonic() > end:
                    raise
                time.sleep(BACKOFF_S)
                continue
            if error_of(answer) not in _INVALID_METADATA_CODES:
                return answer
            if attempt + 1 == ATTEMPTS or time.monotonic() > end:
                return answer
            time.sleep(BACKOFF_S)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ admin
    def _controller(self) -> BrokerConnection:
        view = self.view if self.view.brokers else self.metadata([])
        address = view.brokers.get(view.controller)
        if address is None:
            return self.bootstrap()
        try:
            return self.connection(address)
        except WIRE_ERRORS:
            return self.bootstrap()

    def _admin(
        self, api: str, build: Callable[[int], Message], read: Callable[[Message, int], dict]
    ) -> dict:
        """One admin request to the controller, retried on NOT_CONTROLLER and timeouts."""
        version = self.version(api)
        end = time.monotonic() + self.deadline
        while True:
            answer = self._controller().request(api, version, build(version))
            results = read(answer.body, version)
            retry = [n for n, (code, _) in results.items() if code in _RETRIED_ADMIN]
            if not retry or time.monotonic() + BACKOFF_S > end:
                return results
            time.sleep(BACKOFF_S)
            self.metadata([])

    def create_topics(
        self,
        topics: dict[str, tuple[int, int, dict[str, str]]],
        timeout_ms: int = 30_000,
        wait: float | None = None,
        created: Callable[[str], None] = lambda name: None,
    ) -> dict[str, TopicOutcome]:
        """Create each topic (name -> partitions, replication factor, configuration); what
        became of each. One request per topic, so one refused configuration refuses only its
        own topic; ``created`` hears each name as soon as the broker made it (a caller
        interrupted later still knows what to delete); each created one is waited for until
        Metadata shows its leaders."""
        out: dict[str, TopicOutcome] = {}
        for name, spec in topics.items():
            results = self._admin(
                "CreateTopics",
                lambda v, n=name, s=spec: calls.create_topics_request(
                    self.protocol, v, {n: s}, timeout_ms
                ),
                calls.read_topic_results,
            )
            code, message = results.get(name, (-1, "the answer does not name the topic"))
            if code == 0:
                out[name] = TopicOutcome(True)
                created(name)
            else:
                out[name] = TopicOutcome(False, error_name(code), message)
        self._await_leaders([n for n, o in out.items() if o.created], topics, out, wait)
        return out

    def auto_create(
        self,
        names: Sequence[str],
        partitions: int = 1,
        wait: float | None = None,
        created: Callable[[str], None] = lambda name: None,
    ) -> dict[str, TopicOutcome]:
        """Create topics by asking Metadata for them with auto-creation allowed (a broker
        without CreateTopics creates them with its defaults); a topic that already existed
        is reported as TOPIC_ALREADY_EXISTS, not created."""
        before = self.metadata(list(names))
        out: dict[str, TopicOutcome] = {}
        todo = []
        for n in names:
            t = before.topics.get(n)
            if t is not None and t.error == 0:
                out[n] = TopicOutcome(False, "TOPIC_ALREADY_EXISTS", "it existed before the run")
            else:
                todo.append(n)
                out[n] = TopicOutcome(True)
        for n in todo:
            created(n)  # before asking: an interruption after it must still delete them
        if todo:
            self.metadata(todo, auto_create=True)
        specs = {n: (partitions, 1, {}) for n in todo}
        self._await_leaders(todo, specs, out, wait)
        return out

    def _await_leaders(
        self,
        names: list[str],
        specs: dict[str, tuple[int, int, dict[str, str]]],
        out: dict[str, TopicOutcome],
        wait: float | None,
    ) -> None:
        end = time.monotonic() + (self.deadline if wait is None else wait)
        pending = list(names)
        while pending:
            view = self.metadata(pending, auto_create=False)
            pending = [
                n for n in pending if not all(view.leader(n, p) for p in range(max(1, specs[n][0])))
            ]
            if not pending:
                return
            if time.monotonic() + BACKOFF_S > end:
                for n in pending:
                    out[n] = TopicOutcome(
                        True, "LEADER_NOT_AVAILABLE", "created, but Metadata shows no leader"
                    )
                return
            time.sleep(BACKOFF_S)

    def delete_topics(
        self, names: Sequence[str], timeout_ms: int = 30_000
    ) -> dict[str, str | None]:
        """Delete each of ``names`` (and no other): name -> None (deleted, or already gone)
        or why not."""
        out: dict[str, str | None] = {}
        for name in names:
            results = self._admin(
                "DeleteTopics",
                lambda v, n=name: calls.delete_topics_request(self.protocol, v, [n], timeout_ms),
                calls.read_topic_results,
            )
            code, message = results.get(name, (-1, "the answer does not name the topic"))
            if code in (0, _UNKNOWN_TOPIC):
                out[name] = None
            else:
                out[name] = error_name(code) + (f": {message}" if message else "")
        return out

    def alter_topic_configs(self, topic: str, configs: dict[str, str]) -> None:
        """Replace ``topic``'s configuration (AlterConfigs, not incremental)."""
        results = self._admin(
            "AlterConfigs",
            lambda v: calls.alter_configs_request(self.protocol, v, topic, configs),
            lambda body, v: calls.read_resource_errors(body),
        )
        code, message = results.get(topic, (-1, "the answer does not name the topic"))
        if code:
            raise ProtocolError(
                f"AlterConfigs of {topic}: {error_name(code)}" + (f": {message}" if message else "")
            )
