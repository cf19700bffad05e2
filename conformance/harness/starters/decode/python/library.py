"""The hook of this kafka-conformance adapter: the ONE file you edit.

Declare what your Kafka client library does (the constants below) and call it in ``decode``.
``adapter.py`` does the rest (the protocol, the canonical JSON); see its top comment for how to
run and check the adapter. The rules (docs/adapter-protocol.md, "Rules for adapters"):

* Report only what the library decoded. Never parse the bytes yourself to fill a field the
  library does not expose: leave it at any value, and list its key in OMITS.
  The ONE exception: you may read a batch's length field (bytes 8..11 of the batch, big-endian
  int32; size = 12 + length) to compute ``position`` / ``batch_index``: ``batch_position``
  (in decoded.py) does it.
* Declare the library's real defaults (no CRC checking by default: CHECKS_CRC = False) rather
  than configuring it to look conformant.
* Map the library's errors to the Kafka exception class they correspond to (``Error``), and put
  the library's own error text in ``message``.
"""

from decoded import (  # noqa: F401 (the commented example in decode uses them)
    Batch,
    Control,
    Decoded,
    Error,
    Header,
    Record,
    batch_position,
)

# ------------------------------------------------------------------------------- capabilities

#: the implementation's name in reports (e.g. "my-library-adapter")
NAME: str = "my-adapter"
#: the library's version, shown in reports
VERSION: str = ""
#: message formats (magics) the library decodes; a case with another magic is `unsupported`
MAGICS: list[int] = [0, 1, 2]
#: compression codecs the library decodes, of none, gzip, snappy, lz4, zstd; a case needing
#: another is `unsupported`
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
#: whether the library verifies checksums (by default); if False, a case whose verdict is a
#: checksum error is `unsupported`
CHECKS_CRC: bool = True
#: what the library delivers from a batch in which an error happens:
#:   "streaming": the records before the error, as Kafka's consumer does;
#:   "eager": from a compressed batch, possibly fewer of them, down to none;
#:   "atomic": from any batch (compressed or not), possibly fewer of them, down to none.
#: Records it does deliver must still match Kafka's.
ERROR_SEMANTICS: str = "streaming"
#: whether `--as file` input (a whole .log segment) is decoded with Kafka's FileRecords rules;
#: if False, a file case is run only where Kafka's memory-mode verdict is the same
FILE_SEMANTICS: bool = True
#: how precisely your Error.kafka_exception is compared with Kafka's:
#:   "exact" (class and message), "class" (class only), "family" (corrupt / compression /
#:   resource, docs/adapter-protocol.md), "none" (any error will do).
#: A library that only reports a bare EOF: use CorruptRecordException and "none".
ERROR_CLASSES: str = "class"
#: False if the library returns an error without the header of the batch that failed (then
#: that batch may be missing from `batches`)
LISTS_FAILING_BATCH: bool = True
#: batch or record keys (canonical JSON names, e.g. "crc", "deleteHorizonMs", "headers") the
#: library does not expose: they are left out of the document and not compared; a dotted entry
#: such as "control.coordinatorEpoch" leaves out one field of a record's `control` object
OMITS: list[str] = []
#: free text for the report (e.g. "CRC checking is off by default in this library")
NOTES: str = ""

# ------------------------------------------------------------------------------------- decode

#: Kafka exception classes to map the library's errors to (Error.kafka_exception):
CORRUPT_RECORD = "org.apache.kafka.common.errors.CorruptRecordException"  # bad CRC, bad sizes
INVALID_RECORD = "org.apache.kafka.common.InvalidRecordException"  # invalid record contents
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"  # e.g. an unknown compression id
CODEC_FAILURE = "org.apache.kafka.common.KafkaException"  # a compressed stream failed to inflate
BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"  # a field read past the end of the data


def decode(data: bytes, mode: str) -> Decoded:
    """Decode ``data`` with your library and return what it decoded.

    ``mode`` is "memory" (``data`` is a fetch response's `records` field, MemoryRecords rules)
    or "file" (a whole .log segment, FileRecords rules).

    Fill ``Decoded.batches`` in input order, including the batch during which an error happened
    (if the library lists it), and set ``Decoded.error`` if the library raised an error. Do not
    raise yourself: an exception here is reported as a crash of the adapter, not as a verdict.
    """
    raise NotImplementedError("decode is not implemented yet: call your library in library.py")
    # An example, with a made-up library `kafkalib`:
    #
    # decoded = Decoded()
    # index = 0  # the batch being split or decoded: the error's batch_index
    # try:
    #     for b in kafkalib.read_batches(data):
    #         batch = Batch(
    #             position=batch_position(data, index),
    #             size_in_bytes=b.size,
    #             magic=b.magic,
    #             crc=b.crc,
    #             attributes=b.attributes,
    #             compression=b.compression_name,  # none, gzip, snappy, lz4, zstd
    #             timestamp_type=b.timestamp_type,  # CreateTime, LogAppendTime
    #             last_offset=b.last_offset,
    #             max_timestamp=b.max_timestamp,
    #             base_offset=b.base_offset,  # this and the following: magic 2 only
    #             last_offset_delta=b.last_offset_delta,
    #             partition_leader_epoch=b.partition_leader_epoch,
    #             base_timestamp=b.first_timestamp,
    #             delete_horizon_ms=b.delete_horizon,  # None if the batch has none
    #             is_transactional=b.is_transactional,
    #             is_control=b.is_control,
    #             producer_id=b.producer_id,
    #             producer_epoch=b.producer_epoch,
    #             base_sequence=b.base_sequence,
    #             last_sequence=b.last_sequence,
    #             records_count=b.record_count,
    #         )
    #         decoded.batches.append(batch)  # before its records: an error may come in them
    #         for r in b.records():
    #             control = None
    #             if b.is_control:
    #                 control = Control(r.control_type_id, r.control_type, r.coordinator_epoch)
    #             batch.records.append(
    #                 Record(
    #                     offset=r.offset,
    #                     timestamp=r.timestamp,
    #                     key=r.key,  # bytes, or None for a null key
    #                     value=r.value,
    #                     headers=[Header(k, v) for k, v in r.headers],
    #                     control=control,
    #                 )
    #             )
    #         index += 1
    # except kafkalib.CorruptError as e:
    #     decoded.error = Error(CORRUPT_RECORD, str(e), index, batch_position(data, index))
    # return decoded
