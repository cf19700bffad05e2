"""kafka-conformance consumer adapter for librdkafka through confluent-kafka (PyPI
`confluent-kafka`, pinned in requirements.txt; the wheel bundles librdkafka): the `consume`
side of docs/adapter-protocol.md.

`confluent_kafka.Consumer` with librdkafka's defaults (check.crcs=false, fetch sizes,
api.version.request), a group.id it never joins (assign() only, enable.auto.commit=false) and
the given isolation.level; `assign([TopicPartition(topic, partition, offset)])`, then
`poll()` until `position()` reaches the high watermark `get_watermark_offsets` asks the broker for
(the last stable offset for read_committed) or the deadline. A message whose error() is set
ends the run with that error (`KafkaError.<name>`), as does a KafkaException.

librdkafka logs to stderr; stdout carries only the document.

Usage: consumer.py capabilities | consume --bootstrap H:P --topic T --partition P --from O ...
"""

import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import confluent_kafka  # noqa: E402
import consume_protocol as cp  # noqa: E402
from confluent_kafka import (  # noqa: E402
    OFFSET_BEGINNING,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaException,
    TopicPartition,
)

VERSION = _dist_version("confluent-kafka")
LIBRDKAFKA = confluent_kafka.libversion()[0]
TS_TYPES = {TIMESTAMP_CREATE_TIME: "CreateTime", TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}


def capabilities():
    return {
        "name": "librdkafka",
        "version": f"{LIBRDKAFKA} (confluent-kafka {VERSION})",
        "checks_crc": False,
        "notes": "librdkafka's defaults: check.crcs=false (a corrupt batch's records are "
        "delivered as they are), no group (assign)",
    }


def _record(m):
    ts_type, ts = m.timestamp()
    return cp.record(
        m.offset(),
        ts if ts_type in TS_TYPES else -1,
        TS_TYPES.get(ts_type, "NoTimestampType"),
        m.key(),
        m.value(),
        m.headers(),
    )


def consume(args):
    deadline = cp.Deadline(args.timeout_ms)
    records = []
    consumer = None
    try:
        consumer = Consumer(
            {
                "bootstrap.servers": args.bootstrap,
                "group.id": "kafka-conformance",
                "enable.auto.commit": False,
                "isolation.level": args.isolation,
                "client.id": "kafka-conformance-librdkafka",
            }
        )
        start = OFFSET_BEGINNING if args.start == "earliest" else int(args.start)
        tp = TopicPartition(args.topic, args.partition, start)
        consumer.assign([tp])
        _, end = consumer.get_watermark_offsets(
            TopicPartition(args.topic, args.partition),
            timeout=deadline.left_ms() / 1000,
            cached=False,
        )
        while True:
            position = consumer.position([TopicPartition(args.topic, args.partition)])[0].offset
            if position >= end:
                break
            if deadline.passed():
                return cp.timeout_document(records, args.timeout_ms)
            m = consumer.poll(min(0.2, deadline.left_ms() / 1000))
            if m is None:
                continue
            if m.error() is not None:
                e = m.error()
                return cp.document(records, f"KafkaError.{e.name()}", e.str())
            records.append(_record(m))
    except KafkaException as e:
        err = e.args[0] if e.args else None
        name = err.name() if hasattr(err, "name") else type(e).__name__
        return cp.document(records, f"KafkaError.{name}", str(err))
    finally:
        if consumer is not None:
            consumer.close()
    return cp.document(records)


if __name__ == "__main__":
    sys.exit(cp.main(capabilities, consume))
