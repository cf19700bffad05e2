"""kafka-conformance consumer adapter for kafka-python (PyPI `kafka-python`, pinned in
requirements.txt): the `consume` side of docs/adapter-protocol.md.

`kafka.KafkaConsumer` with its defaults (check_crcs=True, fetch sizes), no group and no
commits, the given isolation level; `assign([tp])`, `seek`/`seek_to_beginning`, then `poll()`
until `position(tp)` reaches `end_offsets` (the high watermark; the last stable offset for
read_committed) or the deadline. A delivered message becomes a record; an exception raised by
`poll()` ends the run and is reported with its class name (kafka.errors.X). kafka-python
reports "no timestamp" (magic 0) as timestamp None and timestamp_type None: Kafka's -1 and
NoTimestampType.

Usage: consumer.py capabilities | consume --bootstrap H:P --topic T --partition P --from O ...
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import consume_protocol as cp  # noqa: E402
import kafka  # noqa: E402
from kafka import KafkaConsumer, TopicPartition  # noqa: E402


def capabilities():
    return {
        "name": "kafka-python",
        "version": kafka.__version__,
        "notes": "KafkaConsumer defaults (check_crcs=True), no group",
    }


def _record(m):
    ts_type = {0: "CreateTime", 1: "LogAppendTime"}.get(m.timestamp_type, "NoTimestampType")
    timestamp = -1 if m.timestamp is None else m.timestamp
    return cp.record(m.offset, timestamp, ts_type, m.key, m.value, m.headers)


def consume(args):
    deadline = cp.Deadline(args.timeout_ms)
    records = []
    consumer = None
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=args.bootstrap,
            enable_auto_commit=False,
            isolation_level=args.isolation,
            client_id="kafka-conformance-kafka-python",
        )
        tp = TopicPartition(args.topic, args.partition)
        consumer.assign([tp])
        if args.start == "earliest":
            consumer.seek_to_beginning(tp)
        else:
            consumer.seek(tp, int(args.start))
        end = consumer.end_offsets([tp])[tp]
        while consumer.position(tp) < end:
            if deadline.passed():
                return cp.timeout_document(records, args.timeout_ms)
            polled = consumer.poll(timeout_ms=min(200, deadline.left_ms()))
            for m in polled.get(tp, []):
                records.append(_record(m))
    except Exception as e:  # noqa: BLE001 - every library error is a verdict
        return cp.document(records, f"kafka.errors.{type(e).__name__}", str(e))
    finally:
        if consumer is not None:
            consumer.close()
    return cp.document(records)


if __name__ == "__main__":
    sys.exit(cp.main(capabilities, consume))
