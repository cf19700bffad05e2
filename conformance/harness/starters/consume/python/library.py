"""The hook of this kafka-conformance consumer adapter: the ONE file you edit.

Declare what your Kafka client library's consumer does (the constants below) and run it in
``consume``. ``adapter.py`` does the rest (the protocol, the consume document); see its top
comment for how to run and check the adapter. The kit starts a fake broker on 127.0.0.1 that
serves one partition, then runs ``adapter.py consume --bootstrap 127.0.0.1:PORT ...``; what your
consumer delivers is compared with what Kafka's own KafkaConsumer delivers from the same
partition. The rules (docs/adapter-protocol.md, "The consumer side"):

* Run the library's real consumer with the library's own defaults (its CRC setting, its
  fetch sizes): what users run is what is judged.
* Assign the one partition, or subscribe to the topic: the fake broker is also the group
  coordinator and serves a group of one (the member that joins leads it and assigns itself
  the partition; commits are accepted, not stored), so a consumer that always joins a group
  works too (``options.group``: the group id, when given).
* Report only what the library delivered. A record field the library does not expose is left
  at any value and its key listed in OMITS (never filled with a guess).
* Stop when the position reaches the end of the partition (the high watermark; the last
  stable offset for read_committed), when the library reports an error (return it in
  ``Consumed.error``), or at ``options.timeout_ms`` (``Error("timeout")``).
* A library that crashes or hangs gives no verdict: let the exception escape (the adapter
  then exits non-zero), never dress a crash as a clean error.
"""

from consumed import Consumed, Error, Header, Options, Record  # noqa: F401 (the example uses them)

# ------------------------------------------------------------------------------- capabilities

#: the implementation's name in reports (e.g. "my-library-consumer")
NAME: str = "my-consumer"
#: the library's version, shown in reports
VERSION: str = ""
#: message formats (magics) the consumer reads; a scenario whose partition holds a batch of
#: another magic is `unsupported`
MAGICS: list[int] = [0, 1, 2]
#: compression codecs the consumer reads, of none, gzip, snappy, lz4, zstd; a scenario whose
#: partition holds a batch of another codec is `unsupported`
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
#: whether the consumer verifies checksums with the library's defaults (librdkafka's
#: check.crcs=false: False); if False, a scenario whose only fault is a checksum error is
#: `unsupported`
CHECKS_CRC: bool = True
#: what the consumer delivers from a batch in which an error happens:
#:   "streaming": the records before the error, as Kafka's consumer does;
#:   "eager": from a compressed batch, possibly fewer of them, down to none;
#:   "atomic": from any batch, possibly fewer of them, down to none.
ERROR_SEMANTICS: str = "streaming"
#: how Error.cls is compared with Kafka's consumer's exception class: "none" (any error will
#: do: the default, libraries name their errors differently), "family", "class", "exact"
#: (docs/adapter-protocol.md); anything but "none" means Error.cls holds Kafka's class names
ERROR_CLASSES: str = "none"
#: record keys the library does not expose, of offset, timestamp, timestampType, key, value,
#: headers (e.g. ["timestampType"] for a message type without a timestamp type); not compared.
#: An object {"0": [...], "1": [...], "2": [...]} says it per magic of the record's batch
OMITS: list[str] | dict[str, list[str]] = []
#: free text for the report (e.g. "check.crcs is off by default in this library")
NOTES: str = ""

# ------------------------------------------------------------------------------------ consume


def consume(options: Options) -> Consumed:
    """Read ``options.partition`` of ``options.topic`` from ``options.bootstrap`` with your
    library's consumer, from ``options.start`` to the end offset, and return what it delivered.

    Replace the ``raise`` with your library's consumer loop, for example (kafka-python)::

        consumer = KafkaConsumer(bootstrap_servers=options.bootstrap,
                                 isolation_level=options.isolation,
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        tp = TopicPartition(options.topic, options.partition)
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        out = Consumed()
        deadline = time.monotonic() + options.timeout_ms / 1000
        try:
            while consumer.position(tp) < end:
                if time.monotonic() > deadline:
                    out.error = Error("timeout")
                    break
                for m in consumer.poll(timeout_ms=200).get(tp, []):
                    kind = {0: "CreateTime", 1: "LogAppendTime"}.get(m.timestamp_type,
                                                                     "NoTimestampType")
                    out.records.append(Record(m.offset, m.timestamp, kind, m.key, m.value,
                                              [Header(k, v) for k, v in m.headers]))
        except KafkaError as e:
            out.error = Error(type(e).__name__, str(e))
        finally:
            consumer.close()
        return out
    """
    raise NotImplementedError(
        "library.py: consume() is not implemented: run your library's consumer there"
    )
