"""The hook of this kafka-conformance producer adapter: the ONE file you edit.

Declare what your Kafka client library's producer and batch builder do (the constants below),
then send a plan in ``produce`` and build a batch in ``encode``. ``adapter.py`` does the rest
(the protocol, reading the plan, the produce-result document); see its top comment for how to
run and check the adapter. ``check-producer`` starts a real Kafka broker, creates the plan's
topic, runs ``adapter.py produce --bootstrap HOST:PORT --plan FILE``, records what crossed the
wire and judges it with the broker's verdict and Kafka's consumer (docs/producer-check.md).
The rules (docs/adapter-protocol.md, "Producer side"):

* Use the library's real producer with the plan's settings and the library's own defaults
  for everything else: what users run is what is judged.
* Send every record in plan order; wait until each is acknowledged or failed (flush); end the
  transaction if the plan has one; close the producer.
* Report per record what the library reported (partition, offset, error text). A record the
  library refused before sending keeps ``partition``/``offset`` None and its ``error`` set.
* Leave out of a capability object what the library cannot do (set the constant to False or
  leave out the codec): those scenarios are then `unsupported`, not failures.
* Either side may be absent: set PRODUCE = None (no producer) or ENCODE = None (no batch
  builder exposed), and leave its function as it is.
"""

from typing import Any

from plan import Delivery, Plan, Produced  # noqa: F401 (the examples use them)

# ------------------------------------------------------------------------------- capabilities

#: the implementation's name in reports (e.g. "my-library-producer")
NAME: str = "my-producer"
#: the library's version, shown in reports
VERSION: str = ""

#: the producer side (``produce``), or None if the library has no producer. Its keys:
#:   codecs       the compression types it can send, of none, gzip, snappy, lz4, zstd
#:   idempotence  whether it has the idempotent producer (enable.idempotence)
#:   transactions whether it has transactions (transactional.id, commit, abort)
#:   headers      whether records can carry headers
#:   magics       the message formats it writes; must hold 2
#:   partitioner  the name of its default partitioner for records without a partition, from
#:                `kafka-conformance partition --list` (e.g. "java",
#:                "librdkafka:consistent_random"), or a composition of its parts when no name
#:                fits (e.g. "murmur2|unsigned|mod")
#:   defaults     its real defaults: {"idempotence": bool, "acks": -1|0|1, "linger_ms": int,
#:                "batch_size": int}; "none" for a linger or batch size the library does not have
#:   batching     how the records of a plan group (plan.groups) go in one batch: "call" (a
#:                batch call), "linger" (sent back to back, a linger gathers them), "none" (it
#:                cannot: those scenarios are then unsupported)
#:   notes        free text for the report
PRODUCE: dict[str, Any] | None = {
    "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
    "idempotence": True,
    "transactions": True,
    "headers": True,
    "magics": [2],
    "partitioner": "java",
    "defaults": {"idempotence": True, "acks": -1, "linger_ms": 5, "batch_size": 16384},
    "batching": "linger",
    "notes": "",
}
#: the encoder side (``encode``: the library's batch builder on its own), or None. The same
#: keys as PRODUCE but partitioner and defaults
ENCODE: dict[str, Any] | None = {
    "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
    "idempotence": True,
    "transactions": True,
    "headers": True,
    "magics": [2],
    "notes": "",
}

# ------------------------------------------------------------------------------------ produce


def produce(bootstrap: str, plan: Plan) -> Produced:
    """Send every record of ``plan`` to ``bootstrap`` with your library's producer and return
    what it reported: one :class:`Delivery` per plan record, in plan order.

    Replace the ``raise`` with your library's producer, for example (kafka-python)::

        s = plan.settings
        producer = KafkaProducer(bootstrap_servers=bootstrap,
                                 compression_type=None if s.codec == "none" else s.codec,
                                 acks="all" if s.acks == -1 else s.acks,
                                 linger_ms=s.linger_ms, batch_size=s.batch_size,
                                 max_request_size=s.max_request_size,
                                 enable_idempotence=s.idempotence,
                                 transactional_id=s.transaction and s.transaction.id)
        out = Produced()
        if s.transaction:
            producer.init_transactions()
            producer.begin_transaction()
        futures = []
        for r in plan.records:
            try:
                futures.append(producer.send(plan.topic, key=r.key, value=r.value,
                                             partition=r.partition, timestamp_ms=r.timestamp,
                                             headers=[(h.key, h.value) for h in r.headers]))
            except Exception as e:       # refused before sending
                futures.append(e)
        producer.flush(timeout=s.timeout_ms / 1000)
        for f in futures:
            if isinstance(f, Exception):
                out.records.append(Delivery(error=str(f)))
                continue
            try:
                m = f.get(timeout=0)
                out.records.append(Delivery(m.partition, m.offset))
            except Exception as e:
                out.records.append(Delivery(error=str(e)))
        if s.transaction:
            (producer.commit_transaction if s.transaction.end == "commit"
             else producer.abort_transaction)()
        producer.close()
        return out
    """
    raise NotImplementedError(
        "library.py: produce() is not implemented: send the plan with your library's producer"
    )


# ------------------------------------------------------------------------------------- encode


def encode(plan: Plan) -> bytes:
    """The bytes of the ONE record batch your library's batch builder makes from the plan's
    records, with ``plan.settings.codec`` and the header fields of ``plan.batch`` (base offset,
    producer id and epoch, base sequence, transactional, partition leader epoch).

    Replace the ``raise`` with the builder call; if the library refuses the plan, raise (the
    adapter exits non-zero with the reason on stderr)."""
    raise NotImplementedError(
        "library.py: encode() is not implemented: build the batch with your library's builder"
    )
