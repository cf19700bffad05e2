"""kafka-conformance producer adapter for confluent-kafka (PyPI `confluent-kafka`, pinned in
requirements.txt; the wheel bundles librdkafka): the `produce` side of docs/adapter-protocol.md.

produce: `confluent_kafka.Producer` with the plan's settings as librdkafka configuration
  (compression.type, enable.idempotence, acks, linger.ms, batch.size, message.max.bytes,
  transactional.id) and the plan's budget as message.timeout.ms (at most the default
  transaction.timeout.ms of 60 s for a transactional producer, which librdkafka requires) and
  request.timeout.ms (capped at its 30 s default); everything else is librdkafka's default
  (api.version.request, retries, the consistent_random partitioner: CRC32 of the key).
  A transaction is init_transactions() / begin_transaction() / produce... / flush() /
  commit_transaction() or abort_transaction(). Each record is `produce(topic, value, key,
  partition, on_delivery, timestamp, headers=[(k, v)])`; `flush()` serves the delivery
  callbacks, whose message gives the partition and offset (or the error) librdkafka reported.
  A record `produce()` refuses (BufferError, KafkaException) gets that error.

  librdkafka has no "no timestamp" for produce(): `timestamp=0` (the binding's default) means
  "now", so a plan timestamp of 0 cannot be sent as 0 (it is passed as 0 and librdkafka
  replaces it; the kit sees what went over the wire).

librdkafka logs to stderr (its default logger); stdout carries only the result document.

Usage: producer.py capabilities | produce --bootstrap H:P --plan F
"""

import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

# the protocol plumbing shared by the Python producer adapters (stdlib only)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import confluent_kafka
import producer_protocol as pp
from confluent_kafka import Producer

VERSION = _dist_version("confluent-kafka")
LIBRDKAFKA = confluent_kafka.libversion()[0]
REQUEST_TIMEOUT_MS = 30000  # librdkafka's request.timeout.ms default
TRANSACTION_TIMEOUT_MS = 60000  # librdkafka's transaction.timeout.ms default


def capabilities():
    return pp.capabilities(
        "confluent-kafka",
        VERSION,
        produce=pp.side(
            codecs=list(pp.CODECS),
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[2],
            partitioner="librdkafka:consistent_random",
            defaults=pp.defaults(False, -1, 5, 1000000),
            batching=pp.BATCH_LINGER,
            notes=f"confluent_kafka.Producer on librdkafka {LIBRDKAFKA} (bundled in the "
            "wheel), default partitioner consistent_random (CRC32 of the key); "
            "max_request_size -> message.max.bytes, timeout_ms -> message.timeout.ms "
            "(<= transaction.timeout.ms 60000 when transactional) and request.timeout.ms = "
            "min(30000, timeout_ms); partition/offset from the on_delivery callbacks served "
            "by flush(); produce(timestamp=0) means 'now' in librdkafka, so an explicit "
            "timestamp 0 is replaced by the current time",
        ),
    )


def _config(bootstrap, plan):
    s = plan.settings
    timeout_ms = plan.timeout_ms
    txn = plan.transaction
    config = {
        "bootstrap.servers": bootstrap,
        "compression.type": s["codec"],
        "enable.idempotence": bool(s["idempotence"]),
        "acks": int(s["acks"]),
        "linger.ms": int(s["linger_ms"]),
        "batch.size": int(s["batch_size"]),
        "message.max.bytes": int(s["max_request_size"]),
        "request.timeout.ms": min(REQUEST_TIMEOUT_MS, timeout_ms),
        "message.timeout.ms": timeout_ms,
    }
    if txn is not None:
        config["transactional.id"] = txn["id"]
        config["message.timeout.ms"] = min(timeout_ms, TRANSACTION_TIMEOUT_MS)
    return config


def produce(bootstrap, plan, results, deadline):
    config = _config(bootstrap, plan)
    pp.log(f"Producer({config})")

    def on_error(err):
        pp.log(f"librdkafka error: {err}")
        if err.fatal():
            results.set_error(f"fatal: {err.str()}")

    producer = Producer({**config, "error_cb": on_error})
    txn = plan.transaction
    if txn is not None:
        producer.init_transactions(deadline.remaining())
        producer.begin_transaction()

    def reporter(index):
        def on_delivery(err, msg):
            partition = msg.partition()
            offset = msg.offset()
            if err is not None:
                results.fail(index, f"KafkaError: {err.str()} ({err.name()})", partition, offset)
            else:
                results.ok(index, partition, offset)

        return on_delivery

    for i, rec in enumerate(plan.records):
        kwargs = {
            "value": rec.value,
            "key": rec.key,
            "headers": list(rec.headers),
            "on_delivery": reporter(i),
        }
        if rec.timestamp is not None:
            kwargs["timestamp"] = int(rec.timestamp)
        if rec.partition is not None:
            kwargs["partition"] = int(rec.partition)
        try:
            producer.produce(plan.topic, **kwargs)
        except Exception as exc:  # refused before sending: the library's error
            results.fail(i, pp.error_text(exc))
        producer.poll(0)
    left = producer.flush(deadline.remaining())
    if left:
        pp.log(f"flush: {left} message(s) still in the queue at the deadline")
    if txn is not None:
        if txn["end"] == "commit":
            producer.commit_transaction(deadline.remaining())
        else:
            producer.abort_transaction(deadline.remaining())
    # the Producer has no close(): flush() above drained it; dropping it destroys the handle


if __name__ == "__main__":
    sys.exit(pp.main(sys.argv[1:], capabilities, produce))
