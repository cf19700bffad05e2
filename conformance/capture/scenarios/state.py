"""Scenarios of producer state and the log cleaner: idempotent and transactional producers,
compacted topics, multi-segment logs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from conformance.capture import RunningBroker
from conformance.capture.scenarios.base import (
    ND_CONTROL,
    ND_PID,
    ND_SNAPSHOT,
    ND_TOPIC_ID,
    T0,
    Scenario,
    add,
    configs_for,
    sends,
    wait_cleaned,
)
from conformance.capture.scenarios.producers import produce

# -- idempotent / transactional ------------------------------------------------------------------


def _idem_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [
            sends(3, ts=T0),
            sends(2, prefix="b", ts=T0 + 100),
            sends(4, prefix="c", ts=T0 + 200),
        ]
        return produce(
            producer,
            broker,
            topic,
            groups,
            kp_config={"enable_idempotence": True, "acks": -1, "compression_type": "gzip"},
            java_config={"enable.idempotence": "true", "compression.type": "gzip"},
        )

    return body


for _producer in ("kafka-python", "java"):
    add(
        Scenario(
            name=f"idempotent-v2-{_producer}",
            description="idempotent producer (producerId/epoch/sequences), gzip, 3 batches",
            producer=_producer,
            topic_configs=configs_for(2),
            body=_idem_body(_producer),
            non_deterministic=(ND_TOPIC_ID, ND_PID, "crc", ND_SNAPSHOT),
        )
    )


def _txn_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [
            sends(3, prefix="c1", ts=T0),
            sends(2, prefix="a1", ts=T0 + 100),
            sends(2, prefix="c2", ts=T0 + 200),
            sends(1, prefix="a2", ts=T0 + 300),
        ]
        tx = ["commit", "abort", "commit", "abort"]
        return produce(
            producer,
            broker,
            topic,
            groups,
            kp_config={"transactional_id": f"txn-{topic}", "enable_idempotence": True, "acks": -1},
            java_config={"transactional.id": f"txn-{topic}", "enable.idempotence": "true"},
            transactions=tx,
        )

    return body


for _producer in ("kafka-python", "java"):
    add(
        Scenario(
            name=f"txn-commit-abort-v2-{_producer}",
            description="transactional producer: commit, abort, commit, abort (control batches, "
            ".txnindex)",
            producer=_producer,
            topic_configs=configs_for(2),
            body=_txn_body(_producer),
            non_deterministic=(ND_TOPIC_ID, ND_PID, ND_SNAPSHOT, *ND_CONTROL),
        )
    )


# -- compaction -----------------------------------------------------------------------------------

_COMPACT = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": str(365 * 86_400_000),
    "index.interval.bytes": "0",
}


def _compact_idem_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        kp = {"enable_idempotence": True, "acks": -1}
        jc = {"enable.idempotence": "true"}
        # producer A: its last batch will be compacted away entirely -> empty batch retained
        info = produce(
            producer,
            broker,
            topic,
            [
                [
                    {"key": "k1", "value": "a1", "timestamp": T0},
                    {"key": "k2", "value": "a2", "timestamp": T0 + 1},
                ],
            ],
            kp_config=kp,
            java_config=jc,
        )
        # producer B: overwrites k1, k2, tombstone for k3 (never written), k4 kept
        produce(
            producer,
            broker,
            topic,
            [
                [
                    {"key": "k3", "value": "b3", "timestamp": T0 + 2},
                    {"key": "k4", "value": "b4", "timestamp": T0 + 3},
                ],
                [
                    {"key": "k1", "value": "b1", "timestamp": T0 + 4},
                    {"key": "k2", "value": "b2", "timestamp": T0 + 5},
                    {"key": "k3", "value": None, "timestamp": T0 + 6},
                ],
            ],
            kp_config=kp,
            java_config=jc,
        )
        # roll (segment.ms=100 compares record timestamps), then let the cleaner run
        produce(
            producer, broker, topic, [[{"key": "k9", "value": "roll", "timestamp": T0 + 60_000}]]
        )
        info["cleaner_checkpoint"] = wait_cleaned(broker, topic)
        info["rounds"] = "A(idempotent) k1,k2 | B(idempotent) k3,k4 ; k1,k2,k3=null | C k9 @T0+60s"
        return info

    return body


for _producer in ("kafka-python", "java"):
    add(
        Scenario(
            name=f"compacted-v2-{_producer}",
            description="cleanup.policy=compact after the cleaner ran: offset gaps, a tombstone "
            "with delete horizon, an empty batch kept for an idempotent producer's last batch",
            producer=_producer,
            topic_configs=configs_for(2, _COMPACT),
            body=_compact_idem_body(_producer),
            non_deterministic=(
                ND_TOPIC_ID,
                ND_PID,
                ND_SNAPSHOT,
                "baseTimestamp (batches with a delete horizon: "
                "cleaner clock + delete.retention.ms)",
                "deleteHorizonMs (cleaner clock)",
                "crc",
                "file:cleaner-offset-checkpoint",
            ),
        )
    )


def _compact_legacy_body(magic: int, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        kp = {"compression_type": None if codec == "none" else codec}
        groups = [
            [{"key": f"k{i}", "value": f"v{i}-1", "timestamp": T0 + i} for i in range(4)],
            [
                {"key": "k0", "value": "v0-2", "timestamp": T0 + 10},
                {"key": "k2", "value": None, "timestamp": T0 + 11},
                {"key": "k5", "value": "v5-1", "timestamp": T0 + 12},
            ],
        ]
        info = produce("kafka-python", broker, topic, groups, magic=magic, kp_config=kp)
        produce(
            "kafka-python",
            broker,
            topic,
            [[{"key": "k9", "value": "roll", "timestamp": T0 + 60_000}]],
            magic=magic,
            kp_config=kp,
        )
        if magic == 0:
            # v0 has no timestamps: segment.ms rolls on the broker clock
            time.sleep(0.3)
            produce(
                "kafka-python",
                broker,
                topic,
                [[{"key": "k8", "value": "roll2"}]],
                magic=0,
                kp_config=kp,
            )
        info["cleaner_checkpoint"] = wait_cleaned(broker, topic)
        return info

    return body


for _magic in (0, 1, 2):
    for _codec in ("none", "gzip"):
        add(
            Scenario(
                name=f"compacted-{_codec}-v{_magic}",
                description=f"compacted magic {_magic} {_codec} log after the cleaner ran "
                "(offset gaps, tombstone, re-compressed wrappers)",
                producer="kafka-python",
                topic_configs=configs_for(_magic, _COMPACT),
                body=_compact_legacy_body(_magic, _codec),
                magic=_magic,
                non_deterministic=(
                    ND_TOPIC_ID,
                    "baseTimestamp (v2 batches with a delete horizon)",
                    "deleteHorizonMs (cleaner clock)",
                    "crc",
                    "file:cleaner-offset-checkpoint",
                )
                + (("file:* (v0 segment roll follows the broker clock)",) if _magic == 0 else ()),
            )
        )


# -- multi-segment --------------------------------------------------------------------------------


def _multi_bytes_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    groups = [sends(4, prefix=f"r{r}-", ts=T0 + r * 1000) for r in range(8)]
    return produce("kafka-python", broker, topic, groups)


add(
    Scenario(
        name="multi-segment-bytes-v2",
        description=(
            "segment.bytes=400: 8 batches roll into several segments, index.interval.bytes=0"
        ),
        producer="kafka-python",
        topic_configs=configs_for(2, {"segment.bytes": "400", "index.interval.bytes": "0"}),
        body=_multi_bytes_body,
        max_version=(4,),  # 4.x: segment.bytes >= 1 MiB
        non_deterministic=(ND_TOPIC_ID,),
    )
)


def _multi_time_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    # segment.ms compares the new batch's timestamp with the segment's first: fixed
    # timestamps one minute apart roll deterministically, whatever the wall clock
    groups = [sends(3, prefix=f"r{r}-", ts=T0 + r * 60_000) for r in range(4)]
    return produce("kafka-python", broker, topic, groups)


add(
    Scenario(
        name="multi-segment-time-v2",
        description="segment.ms=1000 and CreateTimes one minute apart: 4 segments, "
        "index.interval.bytes=0",
        producer="kafka-python",
        topic_configs=configs_for(2, {"segment.ms": "1000", "index.interval.bytes": "0"}),
        body=_multi_time_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


# -- KRaft metadata log ---------------------------------------------------------------------------

add(
    Scenario(
        name="kraft-cluster-metadata",
        description="the KRaft __cluster_metadata-0 log after all the other scenarios of the run",
        producer="none",
        topic_configs={},
        body=None,
        modes=("kraft",),
        source_dir="__cluster_metadata-0",
        last=True,
        non_deterministic=(
            "file:* (topic ids, incarnation ids, broker clock timestamps, the set of topics "
            "created before it)",
        ),
    )
)
