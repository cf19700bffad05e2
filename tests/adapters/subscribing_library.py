"""A hook for the Python consumer starter (tests/test_starter_sides.py) whose consumer
subscribes instead of assigning: kafka-python's real ``KafkaConsumer`` joins a group (a fresh
group id per run), is given the partition by the group's protocol (JoinGroup, SyncGroup) and
reads it to the end offset. The fake broker serves a group of one, so this works as an
assigning consumer does."""

import time
import uuid

from consumed import Consumed, Error, Header, Options, Record
from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

NAME: str = "kafka-python-subscribing"
VERSION: str = ""
MAGICS: list[int] = [0, 1, 2]
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
CHECKS_CRC: bool = True
ERROR_SEMANTICS: str = "streaming"
ERROR_CLASSES: str = "none"
OMITS: list[str] = []
NOTES: str = "subscribe(), a group of one"

_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def consume(options: Options) -> Consumed:
    consumer = KafkaConsumer(
        bootstrap_servers=options.bootstrap,
        group_id=options.group or f"kafka-conformance-{uuid.uuid4().hex}",
        isolation_level=options.isolation,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    tp = TopicPartition(options.topic, options.partition)
    out = Consumed()
    deadline = time.monotonic() + options.timeout_ms / 1000
    try:
        consumer.subscribe([options.topic])
        end = consumer.end_offsets([tp])[tp]
        while tp not in consumer.assignment() or consumer.position(tp) < end:
            if time.monotonic() > deadline:
                out.error = Error("timeout")
                break
            for m in consumer.poll(timeout_ms=200).get(tp, []):
                kind = _TYPES.get(m.timestamp_type, "NoTimestampType")
                timestamp = -1 if m.timestamp is None else m.timestamp
                headers = [Header(k, v) for k, v in m.headers]
                out.records.append(Record(m.offset, timestamp, kind, m.key, m.value, headers))
        if tp not in consumer.assignment():
            raise AssertionError(f"the group did not assign {tp}: {consumer.assignment()}")
    except KafkaError as e:
        out.error = Error(type(e).__name__, str(e))
    finally:
        consumer.close()
    return out
