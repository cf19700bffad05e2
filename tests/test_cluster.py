"""``conformance.capture.cluster``: a 3-broker KRaft cluster of Kafka 4.3.1 (marked
``capture``), and Java-free tests of its configuration, its target and its stop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_kafka_jars, wait_until_gone

from conformance.capture import jvm as cjvm
from conformance.capture.brokers import BROKERS
from conformance.capture.cluster import JvmCluster, cluster_config, start_cluster
from conformance.capture.produce import produce_spec

SPEC = BROKERS["kafka-4.3.1-kraft"]

# ------------------------------------------------------------------------------------------
# Java-free


def test_cluster_config_replicates_to_three_with_min_isr_two() -> None:
    assert cluster_config(3) == {
        "default.replication.factor": "3",
        "min.insync.replicas": "2",
        "offsets.topic.replication.factor": "3",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.min.isr": "2",
        "controlled.shutdown.enable": "false",
    }
    assert cluster_config(1)["min.insync.replicas"] == "1"
    assert cluster_config(5)["default.replication.factor"] == "3"


def test_node_properties_name_the_node_and_every_voter() -> None:
    voters = "1@127.0.0.1:1001,2@127.0.0.1:1002,3@127.0.0.1:1003"
    props = cjvm.server_properties(
        SPEC,
        listener="127.0.0.1:2002",
        advertised="127.0.0.1:2002",
        controller="127.0.0.1:1002",
        zookeeper=None,
        log_dir="/x",
        node_id=2,
        voters=voters,
    )
    assert props["node.id"] == "2"
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == voters
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:2002,CONTROLLER://127.0.0.1:1002"
    # a single broker as before: node 1, voting alone
    single = cjvm.server_properties(
        SPEC, listener="a:1", advertised="a:1", controller="a:2", zookeeper=None, log_dir="/x"
    )
    assert (single["node.id"], single["controller.quorum.voters"]) == ("1", "1@a:2")


def test_cluster_target_is_known() -> None:
    from conformance.broker_check.targets import KAFKA, known_targets

    t = known_targets()["kafka-4.3.1-kraft-cluster"]
    assert (t.kind, t.kafka_version, t.replication, t.nodes) == (KAFKA, "4.3.1", 3, 3)
    assert t.broker_id in BROKERS
    assert "3 KRaft brokers" in t.description and "min.insync.replicas 2" in t.description
    assert known_targets()["kafka-4.3.1-kraft"].replication == 1


def test_cluster_stop_stops_every_node(tmp_path: Path) -> None:
    cluster = JvmCluster(SPEC, tmp_path)
    for i in (1, 2, 3):
        node = cjvm.JvmBroker(SPEC, tmp_path / f"node-{i}", node_id=i)
        node.processes.append(
            ("broker", subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        )
        cluster.nodes.append(node)
    with cluster:
        pass
    assert all(p.poll() is not None for n in cluster.nodes for _, p in n.processes)
    cluster.stop()  # idempotent


# ------------------------------------------------------------------------------------------
# a real cluster


@pytest.mark.capture
def test_three_broker_cluster_spreads_leaders(tmp_path: Path) -> None:
    """3 KRaft brokers of Kafka 4.3.1: a 6-partition topic of replication factor 3 is led by
    more than one broker, every partition on all 3; every JVM is gone after the ``with``."""
    require_kafka_jars("4.3.1")
    from conformance.host.kafka_client import KafkaClient
    from conformance.jvm.message_defs import client_protocol

    with start_cluster(produce_spec(SPEC), tmp_path / "cluster") as cluster:
        addresses = cluster.bootstrap.split(",")
        assert len(addresses) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
        with KafkaClient(cluster.bootstrap, client_protocol()) as client:
            outcome = client.create_topics({"t": (6, 3, {})})
            assert outcome["t"].created, outcome["t"].reason
            view = client.metadata(["t"])
        assert sorted(view.brokers) == [1, 2, 3]
        parts = view.topics["t"].partitions
        assert sorted(parts) == list(range(6))
        assert all(sorted(p.replicas) == [1, 2, 3] for p in parts.values())
        assert len({p.leader for p in parts.values()}) >= 2
        pids = [p.pid for n in cluster.nodes for _, p in n.processes]
        assert len(pids) == 3
    assert all(p.poll() is not None for n in cluster.nodes for _, p in n.processes)
    assert not wait_until_gone((str(tmp_path),))
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]


#: the cases run on the single broker and on the cluster: produce cases of every group, the
#: transactional session and the reads
CLUSTER_CASES = ("req-*", "pid-*", "rewrite-*", "txn/transactions", "fetch/*")


def _cluster_verdicts(path: Path) -> dict[str, tuple[str, str | None]]:
    import json

    report = json.loads(path.read_text())
    return {r["case"]: (r["status"], r.get("level")) for r in report["results"]}


@pytest.mark.capture
@pytest.mark.timeout(1200)
def test_the_cluster_gives_the_single_brokers_verdicts_by_target_and_by_bootstrap(
    tmp_path: Path,
) -> None:
    """Every case on the 3-broker cluster (replication factor 3, leaders on every broker)
    gets the single broker's verdict, started by the kit and reached at its bootstrap
    addresses alike; a topic that was there before is untouched and no run topic is left."""
    from conftest import kit_cli

    from conformance.broker_check.run import DEFAULT_PREFIX
    from conformance.host.kafka_client import KafkaClient
    from conformance.jvm.message_defs import client_protocol

    require_kafka_jars("4.3.1")
    picked = [a for c in CLUSTER_CASES for a in ("--cases", c)]
    runs = {}
    for name in ("kafka-4.3.1-kraft", "kafka-4.3.1-kraft-cluster"):
        out = tmp_path / f"{name}.json"
        proc = kit_cli("check-broker", "--target", name, *picked, "-q", "--json", str(out),
                       timeout=900)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        runs[name] = _cluster_verdicts(out)
    spec = produce_spec(BROKERS["kafka-4.3.1-kraft"])
    with start_cluster(spec, tmp_path / "cluster") as cluster:
        with KafkaClient(cluster.bootstrap, client_protocol()) as client:
            made = client.create_topics({f"{DEFAULT_PREFIX}theirs": (3, 3, {})})
            assert made[f"{DEFAULT_PREFIX}theirs"].created
            out = tmp_path / "bootstrap.json"
            proc = kit_cli("check-broker", "--bootstrap", f"staging={cluster.bootstrap}",
                           *picked, "-q", "--json", str(out), timeout=900)  # fmt: skip
            assert proc.returncode == 0, proc.stdout + proc.stderr
            runs["bootstrap"] = _cluster_verdicts(out)
            left = [t for t in client.metadata(None).topics if t.startswith(DEFAULT_PREFIX)]
            assert left == [f"{DEFAULT_PREFIX}theirs"]
    single = runs["kafka-4.3.1-kraft"]
    assert {s for s, _ in single.values()} <= {"pass", "unsupported"}
    assert runs["kafka-4.3.1-kraft-cluster"] == single
    assert runs["bootstrap"] == single
