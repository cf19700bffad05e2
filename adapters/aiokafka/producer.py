"""kafka-conformance producer adapter for aiokafka (PyPI `aiokafka`, pinned in
requirements.txt): the `produce` and `encode` sides of docs/adapter-protocol.md, with the
library's default record classes (the Cython extension of the cp311 wheel; checked at start-up:
exit 3 if the pure-Python classes are in use).

produce: `aiokafka.AIOKafkaProducer` (asyncio) with the plan's settings (compression_type,
  enable_idempotence, acks, linger_ms, max_batch_size, max_request_size, transactional_id) and
  the plan's budget as request_timeout_ms (aiokafka has no delivery timeout: its batches expire
  after request_timeout_ms); everything else is the library's default (DefaultPartitioner:
  Java's murmur2 for keyed records). A transaction is start() (which initialises it) /
  begin_transaction() / send... / flush() / commit_transaction() or abort_transaction(). Each
  record is `await send(topic, value, key, partition, timestamp_ms, headers=[(k, v)])`, which
  returns the delivery future; after `flush()` each future gives the RecordMetadata's
  partition and offset (or the error). A record `send()` refuses (e.g. both key and value
  null: an AssertionError) gets that error.

encode: `aiokafka.producer.message_accumulator.BatchBuilder` (what
  `AIOKafkaProducer.create_batch()` returns and the producer's accumulator fills) with
  a batch_size larger than the plan, `is_transactional` from the plan, the producer state set
  the way the producer's sender does (`_set_producer_state(producer_id, producer_epoch,
  base_sequence)`, only for a producer id), `append(timestamp=, key=, value=, headers=)` per
  record and `_build()`. The builder has magic 2 only and no base offset or partition leader
  epoch: its header is written with baseOffset 0 and partitionLeaderEpoch 0.

Usage: producer.py capabilities | produce --bootstrap H:P --plan F | encode --plan F
"""

import asyncio
import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

# the protocol plumbing shared by the Python producer adapters (stdlib only)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import producer_protocol as pp
from aiokafka import AIOKafkaProducer
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatchBuilder

VERSION = _dist_version("aiokafka")
NO_PRODUCER_ID = -1


def _check_extension():
    """The default (C) builder must be in use, as adapter.py checks for the decoder."""
    mod = DefaultRecordBatchBuilder.__module__
    if not mod.startswith("aiokafka.record._crecords."):
        pp.log(f"the C extension is not in use (DefaultRecordBatchBuilder from {mod})")
        sys.exit(3)


def capabilities():
    codecs = list(pp.CODECS)
    return pp.capabilities(
        "aiokafka",
        VERSION,
        produce=pp.side(
            codecs=codecs,
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[2],
            partitioner="java",
            defaults=pp.defaults(False, 1, 0, 16384),
            batching=pp.BATCH_LINGER,
            notes="aiokafka.AIOKafkaProducer (C record extension; DefaultPartitioner: murmur2 "
            "as Java's for keyed records); timeout_ms -> request_timeout_ms (no delivery "
            "timeout in aiokafka); send() refuses a record with both key and value null "
            "(AssertionError): it carries the library's error; partition/offset from the "
            "delivery future after flush() (with acks=0 the future gives no metadata: both "
            "null)",
        ),
        encode=pp.side(
            codecs=codecs,
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[2],
            partitioner=None,
            defaults=None,
            notes="aiokafka BatchBuilder (AIOKafkaProducer.create_batch(); C "
            "DefaultRecordBatchBuilder) -> append(timestamp, key, value, headers) -> _build(); "
            "producer state set as the sender does (_set_producer_state) only for a producer "
            "id; no base offset, partition leader epoch or magic parameter: magic 2, header "
            "baseOffset 0 and partitionLeaderEpoch 0; without a producer id the builder keeps "
            "its own baseSequence 0; a null timestamp is the builder's choice (current time)",
        ),
    )


# -- produce ------------------------------------------------------------------------------------


def _config(bootstrap, plan):
    s = plan.settings
    config = {
        "bootstrap_servers": bootstrap,
        "compression_type": None if s["codec"] == "none" else s["codec"],
        "enable_idempotence": bool(s["idempotence"]),
        "acks": int(s["acks"]),
        "linger_ms": int(s["linger_ms"]),
        "max_batch_size": int(s["batch_size"]),
        "max_request_size": int(s["max_request_size"]),
        "request_timeout_ms": plan.timeout_ms,
    }
    txn = plan.transaction
    if txn is not None:
        config["transactional_id"] = txn["id"]
    return config


async def _produce(bootstrap, plan, results, deadline):
    config = _config(bootstrap, plan)
    pp.log(f"AIOKafkaProducer({config})")
    producer = AIOKafkaProducer(**config)
    txn = plan.transaction
    try:
        await asyncio.wait_for(producer.start(), deadline.remaining())
        if txn is not None:
            await producer.begin_transaction()
        futures = []
        for i, rec in enumerate(plan.records):
            try:
                fut = await asyncio.wait_for(
                    producer.send(
                        plan.topic,
                        value=rec.value,
                        key=rec.key,
                        partition=rec.partition,
                        timestamp_ms=rec.timestamp,
                        headers=list(rec.headers),
                    ),
                    deadline.remaining(),
                )
            except Exception as exc:  # refused before sending: the library's error
                results.fail(i, pp.error_text(exc))
                continue
            futures.append((i, fut))
        try:
            await asyncio.wait_for(producer.flush(), deadline.remaining())
        except Exception as exc:
            pp.log(f"flush: {pp.error_text(exc)}")
        for i, fut in futures:
            try:
                md = await asyncio.wait_for(asyncio.shield(fut), deadline.remaining())
            except Exception as exc:
                results.fail(i, pp.error_text(exc))
                continue
            if md is None:  # acks=0: the future resolves to None, no RecordMetadata
                results.ok(i, None, None)
            else:
                results.ok(i, md.partition, md.offset)
        if txn is not None:
            if txn["end"] == "commit":
                await asyncio.wait_for(producer.commit_transaction(), deadline.remaining())
            else:
                await asyncio.wait_for(producer.abort_transaction(), deadline.remaining())
    finally:
        try:
            await asyncio.wait_for(producer.stop(), min(5.0, deadline.remaining(1.0)))
        except Exception as exc:
            pp.log(f"stop: {pp.error_text(exc)}")


def produce(bootstrap, plan, results, deadline):
    asyncio.run(_produce(bootstrap, plan, results, deadline))


# -- encode -------------------------------------------------------------------------------------


def encode(plan):
    b = plan.batch
    if int(b["magic"]) != 2:
        raise ValueError(f"aiokafka's BatchBuilder writes magic 2 only, not {b['magic']}")
    size = sum(
        64
        + len(r.key or b"")
        + len(r.value or b"")
        + sum(16 + len(k.encode()) + len(v or b"") for k, v in r.headers)
        for r in plan.records
    )
    builder = BatchBuilder(
        max(1 << 20, 4 * size),
        pp.CODEC_IDS[plan.codec],
        is_transactional=bool(b["transactional"]),
    )
    producer_id = int(b["producer_id"])
    if producer_id != NO_PRODUCER_ID:
        builder._set_producer_state(producer_id, int(b["producer_epoch"]), int(b["base_sequence"]))
    elif int(b["producer_epoch"]) != -1 or int(b["base_sequence"]) not in (-1, 0):
        raise ValueError("aiokafka's BatchBuilder takes a producer epoch/sequence only with an id")
    for i, rec in enumerate(plan.records):
        md = builder.append(
            timestamp=rec.timestamp, key=rec.key, value=rec.value, headers=list(rec.headers)
        )
        if md is None:
            raise RuntimeError(f"BatchBuilder.append returned None for record {i}")
    return builder._build()


if __name__ == "__main__":
    _check_extension()
    sys.exit(pp.main(sys.argv[1:], capabilities, produce, encode))
