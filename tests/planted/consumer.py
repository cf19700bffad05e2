"""A planted consumer for ``fuzz --against --side consume`` (tests/test_fuzz_against.py): the
hook of the kit's Python consumer starter (``check --init-adapter python DIR --side consume``,
this file as its ``library.py``) running kafka-python's real ``KafkaConsumer``, with one bug
planted when ``PLANTED_CONSUMER_BUG`` says so:

``skip-abort``  the isolation level asked is ignored: the consumer reads uncommitted, so a
                read_committed read delivers the records of aborted transactions (the bug
                of a consumer that skips the aborted-transactions list)

Without it the consumer is kafka-python's, as its built-in adapter runs it.
"""

import os
import time

from consumed import Consumed, Error, Header, Options, Record
from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

BUG = os.environ.get("PLANTED_CONSUMER_BUG", "")
NAME: str = f"planted-consumer-{BUG}" if BUG else "planted-consumer"
VERSION: str = ""
MAGICS: list[int] = [0, 1, 2]
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
CHECKS_CRC: bool = True
ERROR_SEMANTICS: str = "streaming"
ERROR_CLASSES: str = "none"
OMITS: list[str] = []
NOTES: str = f"kafka-python's KafkaConsumer, bug planted: {BUG or 'none'}"

_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def consume(options: Options) -> Consumed:
    isolation = "read_uncommitted" if BUG == "skip-abort" else options.isolation
    consumer = KafkaConsumer(
        bootstrap_servers=options.bootstrap,
        isolation_level=isolation,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    tp = TopicPartition(options.topic, options.partition)
    out = Consumed()
    deadline = time.monotonic() + options.timeout_ms / 1000
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        # the end of what the isolation level asked may read (the last stable offset)
        end = consumer.end_offsets([tp])[tp]
        while consumer.position(tp) < end:
            if time.monotonic() > deadline:
                out.error = Error("timeout")
                break
            for m in consumer.poll(timeout_ms=200).get(tp, []):
                kind = _TYPES.get(m.timestamp_type, "NoTimestampType")
                timestamp = -1 if m.timestamp is None else m.timestamp
                headers = [Header(k, v) for k, v in m.headers]
                out.records.append(Record(m.offset, timestamp, kind, m.key, m.value, headers))
    except KafkaError as e:
        out.error = Error(type(e).__name__, str(e))
    finally:
        consumer.close()
    return out
