"""kafka-conformance producer adapter for kafka-python (PyPI `kafka-python`, pinned in
requirements.txt): the `produce` and `encode` sides of docs/adapter-protocol.md.

produce: `kafka.KafkaProducer` with the plan's settings (compression_type, enable_idempotence,
  acks, linger_ms, batch_size, max_request_size, transactional_id) and the plan's budget as
  request_timeout_ms (capped at the library's 30 s default), delivery_timeout_ms,
  max_block_ms and bootstrap_timeout_ms; everything else is the library's default
  (retries, api_version probing, the DefaultPartitioner: Java's murmur2 for keyed records).
  A transaction is init_transactions() / begin_transaction() / send... / flush /
  commit_transaction() or abort_transaction(). Each record is `send(topic, value, key,
  headers=[(k, v)], partition, timestamp_ms)`; after `flush()` each future's `get()` gives
  the partition and offset (or the error) the library reported. A record `send()` refuses
  (e.g. both key and value null, a header with a null value: kafka-python accepts only
  (str, bytes) headers) gets that error.

encode: `kafka.record.MemoryRecordsBuilder(magic, compression_type, batch_size, offset,
  transactional, producer_id, producer_epoch, base_sequence)` -- the class the producer's
  accumulator fills -- with a batch_size larger than the plan, `append(timestamp, key, value,
  headers)` per record, `close()`, `buffer()`. The builder has no base offset or partition
  leader epoch of its own: its `offset` argument is the first record's offset (passed the plan's
  base_offset) and the v2 header is written with baseOffset 0 and partitionLeaderEpoch 0.

Usage: producer.py capabilities | produce --bootstrap H:P --plan F | encode --plan F
"""

import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

# the protocol plumbing shared by the Python producer adapters (stdlib only)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import producer_protocol as pp
from kafka import KafkaProducer
from kafka.record.memory_records import MemoryRecordsBuilder

VERSION = _dist_version("kafka-python")
REQUEST_TIMEOUT_MS = 30000  # KafkaProducer's default request_timeout_ms


def capabilities():
    codecs = list(pp.CODECS)
    return pp.capabilities(
        "kafka-python",
        VERSION,
        produce=pp.side(
            codecs=codecs,
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[2],
            partitioner="java",
            defaults=pp.defaults(True, -1, 0, 16384),
            batching=pp.BATCH_LINGER,
            notes="kafka.KafkaProducer (DefaultPartitioner: murmur2 as Java's for keyed "
            "records); timeout_ms -> delivery_timeout_ms, max_block_ms and "
            "bootstrap_timeout_ms, request_timeout_ms = min(30000, timeout_ms); send() "
            "refuses a record with both key and value null (ValueError) and a header with a "
            "null value (TypeError: headers must be (str, bytes)): such records carry the "
            "library's error; partition/offset from future.get() after flush() (with acks=0 "
            "the library reports offsets counted from 0 in each batch, not the broker's)",
        ),
        encode=pp.side(
            codecs=codecs,
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[0, 1, 2],
            partitioner=None,
            defaults=None,
            notes="kafka.record.MemoryRecordsBuilder(magic, compression_type, batch_size, "
            "offset=base_offset, transactional, producer_id, producer_epoch, base_sequence) "
            "-> append(timestamp, key, value, headers) -> close() -> buffer(); the builder "
            "takes no partition leader epoch and no header base offset: v2 batches are "
            "written with baseOffset 0 and partitionLeaderEpoch 0, and `offset` (= the plan's "
            "base_offset) becomes the first record's offset delta; a null timestamp is the "
            "builder's own choice (the current time)",
        ),
    )


# -- produce ------------------------------------------------------------------------------------


def _config(bootstrap, plan):
    s = plan.settings
    timeout_ms = plan.timeout_ms
    request_timeout_ms = min(REQUEST_TIMEOUT_MS, timeout_ms)
    config = {
        "bootstrap_servers": bootstrap,
        "compression_type": None if s["codec"] == "none" else s["codec"],
        "enable_idempotence": bool(s["idempotence"]),
        "acks": int(s["acks"]),
        "linger_ms": int(s["linger_ms"]),
        "batch_size": int(s["batch_size"]),
        "max_request_size": int(s["max_request_size"]),
        "request_timeout_ms": request_timeout_ms,
        # the library checks delivery_timeout_ms >= linger_ms + request_timeout_ms
        "delivery_timeout_ms": max(timeout_ms, int(s["linger_ms"]) + request_timeout_ms),
        "max_block_ms": timeout_ms,
        "bootstrap_timeout_ms": timeout_ms,
    }
    txn = plan.transaction
    if txn is not None:
        config["transactional_id"] = txn["id"]
    return config


def produce(bootstrap, plan, results, deadline):
    config = _config(bootstrap, plan)
    pp.log(f"KafkaProducer({config})")
    producer = KafkaProducer(**config)
    txn = plan.transaction
    try:
        if txn is not None:
            producer.init_transactions()
            producer.begin_transaction()
        futures = []
        for i, rec in enumerate(plan.records):
            try:
                fut = producer.send(
                    plan.topic,
                    value=rec.value,
                    key=rec.key,
                    headers=list(rec.headers),
                    partition=rec.partition,
                    timestamp_ms=rec.timestamp,
                )
            except Exception as exc:  # refused before sending: the library's error
                results.fail(i, pp.error_text(exc))
                continue
            futures.append((i, fut))
        try:
            producer.flush(timeout=deadline.remaining())
        except Exception as exc:
            pp.log(f"flush: {pp.error_text(exc)}")
        for i, fut in futures:
            try:
                md = fut.get(timeout=deadline.remaining())
            except Exception as exc:
                results.fail(i, pp.error_text(exc))
                continue
            results.ok(i, md.partition, md.offset)
        if txn is not None:
            if txn["end"] == "commit":
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    finally:
        try:
            producer.close(timeout=min(5.0, deadline.remaining(1.0)))
        except Exception as exc:
            pp.log(f"close: {pp.error_text(exc)}")


# -- encode -------------------------------------------------------------------------------------


def encode(plan):
    b = plan.batch
    size = sum(
        64
        + len(r.key or b"")
        + len(r.value or b"")
        + sum(16 + len(k.encode()) + len(v or b"") for k, v in r.headers)
        for r in plan.records
    )
    builder = MemoryRecordsBuilder(
        magic=int(b["magic"]),
        compression_type=pp.CODEC_IDS[plan.codec],
        batch_size=max(1 << 20, 4 * size),
        offset=int(b["base_offset"]),
        transactional=bool(b["transactional"]),
        producer_id=int(b["producer_id"]),
        producer_epoch=int(b["producer_epoch"]),
        base_sequence=int(b["base_sequence"]),
    )
    for i, rec in enumerate(plan.records):
        md = builder.append(rec.timestamp, rec.key, rec.value, list(rec.headers))
        if md is None:
            raise RuntimeError(f"MemoryRecordsBuilder.append returned None for record {i}")
    builder.close()
    return builder.buffer()


if __name__ == "__main__":
    sys.exit(pp.main(sys.argv[1:], capabilities, produce, encode))
