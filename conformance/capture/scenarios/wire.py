"""Scenarios recorded on the wire too (Fetch responses through the loopback proxy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.capture import RunningBroker
from conformance.capture.scenarios.base import (
    BASE_TOPIC_CONFIGS,
    T0,
    Scenario,
    add,
    configs_for,
    sends,
)
from conformance.capture.scenarios.producers import kafka_python_produce
from conformance.host.kafka_client import KafkaClient
from conformance.jvm.message_defs import client_protocol


def _alter_topic(broker: RunningBroker, topic: str, configs: dict[str, str]) -> None:
    """Replace the topic's configs (AlterConfigs is not incremental: pass them all)."""
    with KafkaClient(broker.bootstrap, client_protocol()) as client:
        client.alter_topic_configs(topic, configs)


def _wire_partial_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [sends(5, prefix=f"b{i}-", ts=T0 + 100 * i) for i in range(12)]
        return kafka_python_produce(broker, topic, groups, magic=magic)

    return body


def _mixed_formats_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    """magic 0, then 1, then 2 in ONE partition: the topic's message.format.version is raised
    between produce rounds (what a format upgrade leaves on disk, C42-C44)."""
    info = {}
    for magic, fmt in ((0, "0.9.0"), (1, "0.10.2"), (2, None)):
        cfg = dict(BASE_TOPIC_CONFIGS)
        if fmt is not None:
            cfg["message.format.version"] = fmt
        else:
            cfg["message.format.version"] = "0.11.0"
        _alter_topic(broker, topic, cfg)
        groups = [
            sends(3, prefix=f"m{magic}-{i}-", ts=T0 + 1000 * magic + 10 * i) for i in range(2)
        ]
        info = kafka_python_produce(broker, topic, groups, magic=magic)
    info["note"] = "topic message.format.version raised 0.9.0 -> 0.10.2 -> 0.11.0 between rounds"
    return info


add(
    Scenario(
        "wire-partial-fetch-v2",
        "12 v2 batches; Fetch responses recorded with fetch max bytes 700 "
        "(partial trailing batches)",
        "kafka-python",
        configs_for(2),
        _wire_partial_body(2),
        magic=2,
        wire={"max_bytes": 700, "fetch_version": None},
    )
)
add(
    Scenario(
        "wire-partial-fetch-v1",
        "12 v1 message sets; Fetch v3 responses (a 0.10.2 client's) with fetch max bytes 500",
        "kafka-python",
        configs_for(1),
        _wire_partial_body(1),
        magic=1,
        max_version=(4,),
        wire={"max_bytes": 500, "fetch_version": 3},
    )
)
add(
    Scenario(
        "wire-mixed-formats",
        "magic 0, 1 and 2 batches in one partition (format upgrade), "
        "on disk and in Fetch responses",
        "kafka-python",
        configs_for(0),
        _mixed_formats_body,
        magic=0,
        min_version=(0, 11),
        max_version=(4,),
        modes=("zookeeper",),
        wire={"max_bytes": 100_000, "fetch_version": None},
    )
)
