"""The brokers the kit captures from: one :class:`BrokerSpec` per ``corpora/<broker-id>/``.

This is the one list of broker versions and modes; both capture backends (``jvm``, a JVM
process from Maven Central jars, and ``testcontainers``, the same broker in a container
image built from this machine's JDK and the same jars) run every broker in it, and
``kafka-conformance capture --broker ID|all`` takes its ids from here. Adding a broker
version is a line here (docs/architecture.md, "Adding things").

``image`` names the public image a user may run instead with ``capture --image`` (the
version that image carries); the kit itself never pulls it.
"""

from __future__ import annotations

from conformance.capture import BrokerSpec

__all__ = ["BROKERS"]

BROKERS: dict[str, BrokerSpec] = {
    spec.broker_id: spec
    for spec in (
        BrokerSpec("kafka-3.9.2-kraft", "3.9.2", "kraft", {}, 2, "apache/kafka:3.9.2"),
        # ZooKeeper mode, inter.broker.protocol.version 2.8: topics can keep message format
        # 0.9.0 / 0.10.2 (magic 0 / 1)
        BrokerSpec(
            "kafka-3.9.2-zk-ibp2.8",
            "3.9.2",
            "zookeeper",
            {"inter.broker.protocol.version": "2.8"},
            2,
            "confluentinc/cp-kafka:7.9.2",
        ),
        BrokerSpec("kafka-4.3.1-kraft", "4.3.1", "kraft", {}, 2, "apache/kafka:4.3.1"),
        # the last 2.x release; in corpora/ as captured by the testcontainers backend
        BrokerSpec("kafka-2.8.2-zk", "2.8.2", "zookeeper", {}, 2, "confluentinc/cp-kafka:6.2.15"),
        BrokerSpec("kafka-1.1.1-zk", "1.1.1", "zookeeper", {}, 2, "confluentinc/cp-kafka:4.1.3"),
        # the last broker without magic 2 (writes v0/v1 only)
        BrokerSpec(
            "kafka-0.10.2.2-zk", "0.10.2.2", "zookeeper", {}, 1, "confluentinc/cp-kafka:3.2.2"
        ),
    )
}
