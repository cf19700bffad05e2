"""Scenarios of record formats: codec x magic x producer, broker recompression and up-conversion,
headers, null keys and values, large and tiny records, LogAppendTime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.capture import RunningBroker
from conformance.capture.scenarios.base import (
    KP_CODECS,
    ND_KP_GZIP,
    ND_TOPIC_ID,
    T0,
    Scenario,
    Send,
    add,
    configs_for,
    sends,
)
from conformance.capture.scenarios.producers import kafka_python_produce, produce
from conformance.codecs import CODECS, NONE


def _codec_body(codec: str, magic: int, producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [sends(3, prefix="a", ts=T0), sends(4, prefix="b", ts=T0 + 1000)]
        return produce(
            producer,
            broker,
            topic,
            groups,
            magic=magic,
            kp_config={"compression_type": None if codec == "none" else codec},
            java_config={"compression.type": codec},
        )

    return body


for _magic in (0, 1, 2):
    for _c in CODECS.values():
        _codec = _c.name
        if _magic < 2 and not _c.legacy_magics:
            continue  # zstd needs magic 2 (UNSUPPORTED_COMPRESSION_TYPE otherwise)
        for _producer in ("kafka-python", "java"):
            if _producer == "kafka-python" and _codec not in KP_CODECS:
                continue
            if _producer == "java" and _magic < 2 and _codec != "snappy":
                continue  # java writes v2: the broker down-converts; keep that for snappy
            nd: list[str] = [ND_TOPIC_ID]
            if _producer == "kafka-python" and _codec == "gzip" and _magic > 0:
                nd.append(ND_KP_GZIP)  # v0 compressed wrappers are rebuilt by the broker
            desc = f"{_codec} batches, magic {_magic}, CreateTime, 2 flushes, {_producer} producer"
            if _producer == "java" and _magic < 2:
                desc += " (v2 produce, down-converted by the broker)"
            if _magic == 0 and _codec != "none":
                desc += "; v0 compressed wrappers are rebuilt by the broker"
            add(
                Scenario(
                    name=f"codec-{_codec}-v{_magic}-{_producer}",
                    description=desc,
                    producer=_producer,
                    topic_configs=configs_for(_magic),
                    body=_codec_body(_codec, _magic, _producer),
                    magic=_magic,
                    min_version=_c.since,
                    non_deterministic=tuple(nd),
                )
            )


# -- broker-side recompression ------------------------------------------------------------------


def _recompress_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [sends(3, ts=T0), sends(2, prefix="z", ts=T0 + 5)]
        return produce("kafka-python", broker, topic, groups, magic=magic, kp_config={})

    return body


for _magic in (0, 1, 2):
    for _c in CODECS.values():
        _codec = _c.name
        if _c.id == NONE or (_magic < 2 and not _c.legacy_magics):
            continue
        add(
            Scenario(
                name=f"broker-recompress-{_codec}-v{_magic}",
                description=f"topic compression.type={_codec}: the broker compresses the "
                f"uncompressed magic {_magic} batches itself",
                producer="kafka-python",
                topic_configs=configs_for(_magic, {"compression.type": _codec}),
                body=_recompress_body(_magic),
                magic=_magic,
                min_version=_c.since,
                non_deterministic=(ND_TOPIC_ID,),
            )
        )


# -- up-conversion (old client, v2 topic) -------------------------------------------------------


def _upconvert_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [sends(3, ts=T0), sends(3, prefix="g", ts=T0 + 7)]
        info = kafka_python_produce(broker, topic, groups[:1], magic=magic, config={})
        kafka_python_produce(
            broker, topic, groups[1:], magic=magic, config={"compression_type": "gzip"}
        )
        info["config"]["compression_type"] = ["none (batch 1)", "gzip (batch 2)"]
        return info

    return body


for _magic in (0, 1):
    add(
        Scenario(
            name=f"upconvert-v{_magic}-to-v2",
            description=f"kafka-python sends magic {_magic} (plain, then gzip) into a magic 2 "
            "topic: the broker up-converts",
            producer="kafka-python",
            topic_configs=configs_for(2),
            body=_upconvert_body(_magic),
            magic=2,
            max_version=(4,),  # 4.x rejects Produce v0-v2 (KIP-896)
            non_deterministic=(ND_TOPIC_ID,),
        )
    )


# -- headers ------------------------------------------------------------------------------------


_HEADER_SENDS: list[Send] = [
    {"key": "h0", "value": "one header", "timestamp": T0, "headers": [["trace", "abc"]]},
    {
        "key": "h1",
        "value": "null header value",
        "timestamp": T0 + 1,
        "headers": [["nullable", None]],
    },
    {
        "key": "h2",
        "value": "several, repeated key, empty value, unicode key",
        "timestamp": T0 + 2,
        "headers": [["a", "1"], ["a", "2"], ["empty", ""], ["\u00e9t\u00e9-\u2603", "\u00fc"]],
    },
    {"key": "h3", "value": "no headers", "timestamp": T0 + 3},
]


def _headers_body(producer: str, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        sends = _HEADER_SENDS
        if producer == "kafka-python":  # it rejects null header values: the java case has them
            sends = [s for s in sends if all(v is not None for _, v in s.get("headers", []))]
        return produce(
            producer,
            broker,
            topic,
            [sends],
            kp_config={"compression_type": None if codec == "none" else codec},
            java_config={"compression.type": codec},
        )

    return body


for _producer in ("kafka-python", "java"):
    for _codec in ("none", "gzip"):
        add(
            Scenario(
                name=f"headers-{_codec}-v2-{_producer}",
                description="record headers: repeated keys, empty value, non-ASCII key"
                + (", null value" if _producer == "java" else ""),
                producer=_producer,
                topic_configs=configs_for(2),
                body=_headers_body(_producer, _codec),
                non_deterministic=(ND_TOPIC_ID,)
                + ((ND_KP_GZIP,) if (_producer, _codec) == ("kafka-python", "gzip") else ()),
            )
        )


# -- null keys / values -------------------------------------------------------------------------


def _nulls_body(magic: int, producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        sends: list[Send] = [
            {"key": None, "value": "null key", "timestamp": T0},
            {"key": "null-value", "value": None, "timestamp": T0 + 1},
            {"key": "", "value": "empty key", "timestamp": T0 + 2},
            {"key": "empty-value", "value": "", "timestamp": T0 + 3},
        ]
        if producer == "java":
            sends.append({"key": None, "value": None, "timestamp": T0 + 4})
        return produce(producer, broker, topic, [sends], magic=magic)

    return body


for _magic in (0, 1, 2):
    for _producer in ("kafka-python", "java"):
        if _producer == "java" and _magic < 2:
            continue
        add(
            Scenario(
                name=f"nulls-v{_magic}-{_producer}",
                description="null and empty keys/values (tombstones on a delete-policy topic)"
                + ("; also key and value both null" if _producer == "java" else ""),
                producer=_producer,
                topic_configs=configs_for(_magic),
                body=_nulls_body(_magic, _producer),
                magic=_magic,
                non_deterministic=(ND_TOPIC_ID,),
            )
        )


# -- a record over 1 MiB, many tiny records ------------------------------------------------------


def _large_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    sends = [
        {"key": "small", "value": "before", "timestamp": T0},
    ]
    big = [{"key": "big", "value_size": 1_100_000, "timestamp": T0 + 1}]
    return produce(
        "kafka-python",
        broker,
        topic,
        [sends, big],
        kp_config={"max_request_size": 4_194_304},
    )


add(
    Scenario(
        name="large-record-v2",
        description="one uncompressed record with a 1,100,000-byte value (topic "
        "max.message.bytes raised to 2 MiB)",
        producer="kafka-python",
        topic_configs=configs_for(2, {"max.message.bytes": "2097152"}),
        body=_large_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


def _tiny_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    sends = [
        {"key": None, "value": chr(97 + i % 26), "timestamp": T0 + i // 10} for i in range(600)
    ]
    return produce("kafka-python", broker, topic, [sends], kp_config={"batch_size": 1024})


add(
    Scenario(
        name="many-tiny-v2",
        description="600 one-byte records, null keys, kafka-python batch_size=1024 (several "
        "batches), index.interval.bytes=0",
        producer="kafka-python",
        topic_configs=configs_for(2, {"index.interval.bytes": "0"}),
        body=_tiny_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


# -- LogAppendTime --------------------------------------------------------------------------------


def _lat_body(magic: int, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [sends(3, ts=T0), sends(2, prefix="b", ts=T0 + 10)]
        return produce(
            "kafka-python",
            broker,
            topic,
            groups,
            magic=magic,
            kp_config={"compression_type": None if codec == "none" else codec},
        )

    return body


for _magic in (1, 2):
    for _codec in ("none", "gzip"):
        add(
            Scenario(
                name=f"log-append-time-{_codec}-v{_magic}",
                description=f"message.timestamp.type=LogAppendTime, {_codec}, magic {_magic}",
                producer="kafka-python",
                topic_configs=configs_for(_magic, {"message.timestamp.type": "LogAppendTime"}),
                body=_lat_body(_magic, _codec),
                magic=_magic,
                non_deterministic=(
                    ND_TOPIC_ID,
                    "maxTimestamp (LogAppendTime: broker clock)",
                    "timestamp (records of LogAppendTime batches: broker clock)",
                    "crc",
                    "file:*.timeindex (broker clock)",
                ),
            )
        )
