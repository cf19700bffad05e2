"""A KRaft cluster of several real Kafka brokers on 127.0.0.1 (``capture.jvm``'s JVMs).

Each node is a :class:`~conformance.capture.jvm.JvmBroker` of its own (its directory
``<workdir>/node-<id>``, its configuration, log and JVM options written by the same code as a
single broker's): ``process.roles=broker,controller`` with node id 1..n, all of them voters of
one controller quorum (a static ``controller.quorum.voters``, every storage formatted by
``kafka.tools.StorageTool`` with the kit's one ``CLUSTER_ID``), on free 127.0.0.1 ports. Topics
are replicated to every node up to 3 (:func:`cluster_config`: replication factor 3, min ISR 2,
also for the offsets and transaction state topics).

Every node is launched before any is waited for (a voter alone has no quorum). Ready = every
node answers a metadata request listing all n brokers. Stop = every node SIGTERMed at once
(a node stopped alone after the others would wait for a quorum that is gone), SIGKILL after
90 s (10 s while the cluster is not ready yet: a node still waiting for its quorum may not
end on SIGTERM). The cluster, not each node, is registered with
:mod:`conformance.capture.lifecycle` while it runs, so interpreter exit, SIGINT and SIGTERM
stop its nodes together too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

from conformance.capture import BrokerSpec, lifecycle
from conformance.capture.jvm import BrokerStartError, JvmBroker, java_version
from conformance.host.broker_socket import WIRE_ERRORS
from conformance.host.kafka_client import KafkaClient
from conformance.host.lifetime import Running
from conformance.host.ports import free_port
from conformance.jvm.message_defs import client_protocol

__all__ = ["JvmCluster", "cluster_config", "start_cluster"]

#: heap of each node (three of them share the machine)
NODE_HEAP = "512m"
#: seconds a node of a ready cluster has to shut down cleanly before SIGKILL
STOP_SECONDS = 90.0
#: the same before the cluster was ready: a node still waiting for its quorum can wait on
#: SIGTERM until it is killed, and nothing it wrote is wanted
STOP_STARTING_SECONDS = 10.0


def cluster_config(nodes: int) -> dict[str, str]:
    """The settings a cluster of ``nodes`` brokers adds to every node's: replication factor
    ``min(nodes, 3)`` and min.insync.replicas one less (at least 1), for the topics a run
    creates and for the offsets and transaction state topics; no controlled shutdown (the
    whole cluster stops at once: a broker whose controlled shutdown the quorum no longer
    answers, the other voters gone, waits minutes for it)."""
    rf = min(nodes, 3)
    isr = str(max(1, rf - 1))
    return {
        "default.replication.factor": str(rf),
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": str(rf),
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": isr,
        "controlled.shutdown.enable": "false",
    }


class JvmCluster(Running):
    """A running KRaft cluster started by :func:`start_cluster`; ``bootstrap`` names every
    node (``127.0.0.1:p1,127.0.0.1:p2,...``)."""

    backend = "jvm"

    def __init__(self, spec: BrokerSpec, workdir: Path, nodes: int = 3) -> None:
        if nodes < 1:
            raise ValueError(f"a cluster needs at least one node, not {nodes}")
        self.spec = spec
        self.workdir = workdir
        self.size = nodes
        self.nodes: list[JvmBroker] = []
        self.bootstrap = ""
        self.java_version = java_version()
        self.startup_seconds = 0.0
        self._ready = False
        self._stopped = False
        self._lock = threading.Lock()

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(f"=== node {n.node_id} ===\n{n.log_tail(lines)}" for n in self.nodes)

    # -- start / stop ------------------------------------------------------------------------

    def start(self, timeout: float = 180.0) -> JvmCluster:
        if self.spec.mode != "kraft":
            raise ValueError(f"{self.spec.broker_id}: a cluster is KRaft only")
        lifecycle.register(self)
        began = time.monotonic()
        deadline = began + timeout
        try:
            addresses = [(free_port(), free_port()) for _ in range(self.size)]
            voters = ",".join(f"{i}@127.0.0.1:{c}" for i, (_, c) in enumerate(addresses, 1))
            config = {**self.spec.config, **cluster_config(self.size)}
            for i, (port, controller) in enumerate(addresses, 1):
                node = JvmBroker(
                    replace(self.spec, broker_id=f"{self.spec.broker_id} node {i}", config=config),
                    self.workdir / f"node-{i}",
                    node_id=i,
                    port=port,
                    controller=f"127.0.0.1:{controller}",
                    voters=voters,
                    heap=NODE_HEAP,
                    register=False,
                )
                self.nodes.append(node)
                node.launch()
            self.bootstrap = ",".join(n.bootstrap for n in self.nodes)
            self._wait_brokers(deadline)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        self._ready = True
        return self

    def _wait_brokers(self, deadline: float) -> None:
        """Until every node answers a metadata request listing every node (by node id);
        :class:`BrokerStartError` when a node exits or at ``deadline``."""
        want = set(range(1, self.size + 1))
        protocol = client_protocol()
        seen: dict[int, str] = {}
        while True:
            for node in self.nodes:
                code = next(p for n, p in node.processes if n == "broker").poll()
                if code is not None:
                    raise BrokerStartError(
                        f"{self.spec.broker_id}: node {node.node_id} exited with status {code}"
                        f"\n{self.log_tail()}"
                    )
            seen = {}
            for node in self.nodes:
                try:
                    with KafkaClient(
                        node.bootstrap,
                        protocol,
                        client_id="conformance-cluster-ready",
                        timeout=10.0,
                    ) as client:
                        listed = set(client.metadata([]).brokers)
                except WIRE_ERRORS as exc:
                    seen[node.node_id] = repr(exc)
                    continue
                if listed != want:
                    seen[node.node_id] = f"lists brokers {sorted(listed)}"
            if not seen:
                return
            if time.monotonic() > deadline:
                what = "; ".join(f"node {i}: {why}" for i, why in sorted(seen.items()))
                raise BrokerStartError(
                    f"{self.spec.broker_id}: the cluster's metadata does not list its "
                    f"{self.size} brokers ({what})\n{self.log_tail()}"
                )
            time.sleep(0.5)

    def stop(self, timeout: float | None = None) -> None:
        """Every node stopped at once (SIGTERM, SIGKILL after ``timeout`` s, by default
        :data:`STOP_SECONDS`, or :data:`STOP_STARTING_SECONDS` before the cluster was ready);
        idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if timeout is None:
            timeout = STOP_SECONDS if self._ready else STOP_STARTING_SECONDS
        threads = [
            threading.Thread(target=n.stop, args=(timeout,), name=f"stop node {n.node_id}")
            for n in self.nodes
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lifecycle.unregister(self)


def start_cluster(
    spec: BrokerSpec, workdir: Path, nodes: int = 3, *, timeout: float = 180.0
) -> JvmCluster:
    """Start a KRaft cluster of ``nodes`` brokers of ``spec`` under ``workdir`` (created) and
    return it once every node's metadata lists them all (within ``timeout`` s)."""
    return JvmCluster(spec, Path(workdir).resolve(), nodes).start(timeout=timeout)
