"""The broker oracle (``conformance.jvm.broker_oracle``) on each supported broker version.

Every expectation comes from Kafka's own sources of that version (named at each test), never
from the oracle's output: git tags 2.8.2 / 3.9.0 of apache/kafka, and for 4.3.1 its classes
(kafka-storage-4.3.1.jar etc., read with javap). The topic-partition of every session is
``t-0``. Each test can fail: each asserts a response that another broker behaviour (or another
version's) would not give.
"""

from __future__ import annotations

import base64
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import processes

from conformance.jvm.broker_oracle import (
    MAIN_CLASS,
    SUPPORTED_VERSIONS,
    BrokerOracle,
    BrokerOracleRequestError,
    ensure_built,
)
from conformance.primitives.crc import crc32c
from conformance.wire.builder import write_batch
from conformance.wire.layout import TimestampType

pytestmark = pytest.mark.oracle

NOW = 1_700_000_000_000
#: produce v9 exists on every supported version (2.8: 0-9, 3.9: 0-11, 4.3: 3-13)
V9 = 9
RECORDS = [(NOW - 10, b"k0", b"v0"), (NOW - 5, b"k1", None)]


@pytest.fixture(scope="module", params=SUPPORTED_VERSIONS)
def oracle(request: pytest.FixtureRequest) -> Iterator[BrokerOracle]:
    with BrokerOracle(request.param) as running:
        yield running


@pytest.fixture
def session(oracle: BrokerOracle, request: pytest.FixtureRequest) -> Iterator[str]:
    name = request.node.name
    yield name
    oracle.reset(name)


def produce(oracle: BrokerOracle, records: bytes, session: str, **options: Any) -> dict[str, Any]:
    options.setdefault("produce_version", V9)
    options.setdefault("topic", {})
    options.setdefault("now", NOW)
    return oracle.produce(records, session=session, **options)


def ok(base_offset: int, log_append_time: int = -1) -> dict[str, Any]:
    return {
        "errorCode": 0,
        "errorName": "NONE",
        "errorMessage": None,
        "baseOffset": str(base_offset),
        "logAppendTimeMs": str(log_append_time),
        "logStartOffset": "0",
        "recordErrors": [],
    }


def failed(
    code: int,
    name: str,
    *,
    log_start_offset: int,
    message: str | None = None,
    record_errors: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "errorCode": code,
        "errorName": name,
        "errorMessage": message,
        "baseOffset": "-1",
        "logAppendTimeMs": "-1",
        "logStartOffset": str(log_start_offset),
        "recordErrors": record_errors or [],
    }


def stored(answer: dict[str, Any]) -> bytes | None:
    data = answer["stored"]
    return None if data is None else base64.b64decode(data)


def with_codec_id(batch: bytes, codec: int) -> bytes:
    """A v2 batch with another codec id in its attributes, its CRC (over attributes..end,
    DefaultRecordBatch) made right again."""
    data = bytearray(batch)
    data[22] = (data[22] & ~0x07) | codec  # attributes: INT16 at 21, codec in the low 3 bits
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


# ------------------------------------------------------------------------------------------
# accepted appends: what the log stores


def test_ordinary_batch_is_accepted_and_rewritten(oracle: BrokerOracle, session: str) -> None:
    """LogValidator.assignOffsetsNonCompressed rewrites an uncompressed CreateTime v2 batch in
    place: base offset (setLastOffset) and partition leader epoch; the max timestamp and so
    the CRC stay. The second append starts at the log end offset, 2."""
    batch = write_batch(RECORDS, magic=2)
    first = produce(oracle, batch, session, leader_epoch=7)
    assert first["scope"] == "partition"
    assert first["response"] == ok(0)
    assert first["exception"] is None
    assert stored(first) == write_batch(RECORDS, magic=2, partition_leader_epoch=7)

    second = produce(oracle, batch, session, leader_epoch=7)
    assert second["response"] == ok(2)
    assert stored(second) == write_batch(RECORDS, magic=2, base_offset=2, partition_leader_epoch=7)


def test_log_append_time_topic_stamps_the_batch(oracle: BrokerOracle, session: str) -> None:
    """message.timestamp.type=LogAppendTime: setMaxTimestamp(LOG_APPEND_TIME, now) sets the
    timestamp-type bit and the max timestamp (new CRC); the response carries logAppendTime."""
    topic = {"message.timestamp.type": "LogAppendTime"}
    answer = produce(oracle, write_batch(RECORDS, magic=2), session, topic=topic)
    assert answer["response"] == ok(0, log_append_time=NOW)
    assert stored(answer) == write_batch(
        RECORDS,
        magic=2,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=NOW,
        partition_leader_epoch=0,
    )


def test_stored_bytes_of_an_append_that_rolls(oracle: BrokerOracle, session: str) -> None:
    """segment.ms=10: LogSegment.shouldRoll compares the new batch's max timestamp with the
    segment's first one (timeWaitedForRoll), so a batch 105 ms later rolls a segment at
    offset 2; what the append stored is read from the new segment."""
    topic = {"segment.ms": "10"}
    produce(oracle, write_batch(RECORDS, magic=2), session, topic=topic)
    later = [(NOW + 100, b"k", b"v")]
    answer = produce(oracle, write_batch(later, magic=2), session, topic=topic, now=NOW + 100)
    assert answer["response"] == ok(2)
    assert stored(answer) == write_batch(later, magic=2, base_offset=2, partition_leader_epoch=0)
    assert oracle.log_root is not None
    logs = sorted(p.name for p in oracle.log_root.glob("session-*/t-0/*.log"))
    assert "00000000000000000002.log" in logs


# ------------------------------------------------------------------------------------------
# rejected appends


def test_base_offset_must_be_zero(oracle: BrokerOracle, session: str) -> None:
    """analyzeAndValidateRecords (Log / UnifiedLog): a client's v2 batch must start at 0. An
    InvalidRecordException is no RecordValidationException: appendToLocalLog's last clause
    (its code, no message, the log start offset)."""
    answer = produce(oracle, write_batch(RECORDS, magic=2, base_offset=5), session)
    assert answer["scope"] == "partition"
    assert answer["response"] == failed(87, "INVALID_RECORD", log_start_offset=0)
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.InvalidRecordException",
        "message": "The baseOffset of the record batch in the append to t-0 should be 0, "
        "but it is 5",
    }
    assert answer["stored"] is None


def test_bad_crc_is_corrupt_message(oracle: BrokerOracle, session: str) -> None:
    """analyzeAndValidateRecords: !batch.isValid -> CorruptRecordException, one of
    appendToLocalLog's known exceptions (UnknownLogAppendInfo: log start offset -1)."""
    batch = bytearray(write_batch(RECORDS, magic=2))
    batch[-1] ^= 0x01
    stored_crc = int.from_bytes(batch[17:21], "big")
    answer = produce(oracle, bytes(batch), session)
    assert answer["response"] == failed(2, "CORRUPT_MESSAGE", log_start_offset=-1)
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.errors.CorruptRecordException",
        "message": f"Record is corrupt (stored crc = {stored_crc}) in topic partition t-0.",
    }


def test_batch_over_max_message_bytes(oracle: BrokerOracle, session: str) -> None:
    """analyzeAndValidateRecords: batch size > max.message.bytes -> RecordTooLargeException
    (a known exception). 4.3.1's message ends in ")." (its UnifiedLog.class constant)."""
    batch = write_batch([(NOW, b"k", b"x" * 200)], magic=2)
    answer = produce(oracle, batch, session, topic={"max.message.bytes": "100"})
    assert answer["response"] == failed(10, "MESSAGE_TOO_LARGE", log_start_offset=-1)
    end = ")." if oracle.version == "4.3.1" else "."
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.errors.RecordTooLargeException",
        "message": f"The record batch size in the append to t-0 is {len(batch)} bytes which "
        f"exceeds the maximum configured value of 100{end}",
    }


def test_timestamp_out_of_range_with_create_time(oracle: BrokerOracle, session: str) -> None:
    """LogValidator.validateTimestamp -> processRecordErrors: RecordValidationException(
    InvalidTimestampException) -> INVALID_TIMESTAMP, the inner message as errorMessage, the
    record errors. 2.8 bounds both sides with message.timestamp.difference.max.ms; 3.6+ has
    before/after, which fall back to difference while at their defaults (3.9's
    LogConfig.getMessageTimestampBeforeMaxMs); 4.0 removed difference (no such TopicConfig)."""
    difference = {"message.timestamp.difference.max.ms": "3600000"}
    if oracle.version == "4.3.1":
        with pytest.raises(BrokerOracleRequestError, match="Unknown topic config name"):
            produce(oracle, write_batch(RECORDS, magic=2), f"{session}-x", topic=difference)
        topic = {
            "message.timestamp.before.max.ms": "3600000",
            "message.timestamp.after.max.ms": "3600000",
        }
    else:
        topic = dict(difference)
    topic["message.timestamp.type"] = "CreateTime"
    old = NOW - 2 * 3600000
    answer = produce(oracle, write_batch([(old, b"k", b"v")], magic=2), session, topic=topic)
    detail = (
        f"Timestamp {old} of message with offset 0 is out of range. The timestamp should be "
        f"within [{NOW - 3600000}, {NOW + 3600000}]"
    )
    assert answer["response"] == failed(
        32,
        "INVALID_TIMESTAMP",
        log_start_offset=0,
        message="One or more records have been rejected due to invalid timestamp",
        record_errors=[{"batchIndex": 0, "batchIndexErrorMessage": detail}],
    )
    assert (
        answer["exception"]["class"] == "org.apache.kafka.common.errors.InvalidTimestampException"
    )


def test_keyless_record_on_compacted_topic(oracle: BrokerOracle, session: str) -> None:
    """LogValidator.validateKey -> RecordValidationException(InvalidRecordException): 2.8's
    texts end in "." and say only "rejected"; 3.x/4.x count the errors and list them with
    RecordError.toString."""
    batch = write_batch([(NOW, b"k", b"v"), (NOW, None, b"v")], magic=2)
    answer = produce(oracle, batch, session, topic={"cleanup.policy": "compact"})
    if oracle.version == "2.8.2":
        detail = "Compacted topic cannot accept message without key in topic partition t-0."
        message = "One or more records have been rejected"
    else:
        detail = "Compacted topic cannot accept message without key in topic partition t-0"
        message = (
            "One or more records have been rejected due to 1 record errors in total, and only "
            "showing the first three errors at most: "
            f"[RecordError(batchIndex=1, message='{detail}')]"
        )
    assert answer["response"] == failed(
        87,
        "INVALID_RECORD",
        log_start_offset=0,
        message=message,
        record_errors=[{"batchIndex": 1, "batchIndexErrorMessage": detail}],
    )
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.InvalidRecordException",
        "message": message,
    }


def test_idempotent_duplicate_then_out_of_order(oracle: BrokerOracle, session: str) -> None:
    """Producer state across requests: sequence 0 is appended; the same batch again is a
    duplicate (append's maybeDuplicate: the original offsets, logAppendTime = the batch
    metadata's timestamp, i.e. its max timestamp; nothing stored); sequence 5 after 0 is out
    of order (ProducerAppendInfo.checkSequence, at the next offset, 1)."""
    pid = {"producer_id": 1000, "producer_epoch": 0}
    first = write_batch([(NOW, b"k", b"v")], magic=2, base_sequence=0, **pid)
    answer = produce(oracle, first, session)
    assert answer["response"] == ok(0)
    assert stored(answer) == write_batch(
        [(NOW, b"k", b"v")], magic=2, base_sequence=0, partition_leader_epoch=0, **pid
    )

    again = produce(oracle, first, session)
    assert again["response"] == ok(0, log_append_time=NOW)
    assert again["stored"] is None

    gap = write_batch([(NOW, b"k", b"v")], magic=2, base_sequence=5, **pid)
    answer = produce(oracle, gap, session)
    assert answer["response"] == failed(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", log_start_offset=0)
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.errors.OutOfOrderSequenceException",
        "message": "Out of order sequence number for producer 1000 at offset 1 in partition "
        "t-0: 5 (incoming seq. number), 0 (current end sequence number)",
    }


def test_empty_records(oracle: BrokerOracle, session: str) -> None:
    """No batch: from v3 ProduceRequest.validateRecords refuses it (2.8's message has no "per
    partition"); below v3 nothing checks, and append returns early (no valid bytes) with no
    offset: NONE, base offset -1 (2.8 and 3.9; 4.3 does not serve v2)."""
    answer = produce(oracle, b"", session)
    assert answer["response"] == failed(87, "INVALID_RECORD", log_start_offset=-1)
    per = "" if oracle.version == "2.8.2" else " per partition"
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.InvalidRecordException",
        "message": f"Produce requests with version 9 must have at least one record batch{per}",
    }
    if oracle.version != "4.3.1":
        v2 = produce(oracle, b"", session, produce_version=2)
        assert v2["response"] == {**ok(0), "baseOffset": "-1"}
        assert v2["stored"] is None


def test_zstd_needs_produce_v7(oracle: BrokerOracle, session: str) -> None:
    """ProduceRequest.validateRecords: zstd below v7 -> UnsupportedCompressionTypeException,
    caught in KafkaApis.handleProduceRequest: PartitionResponse(Errors.forException(e))."""
    batch = write_batch(RECORDS, magic=2, compression="zstd")
    answer = produce(oracle, batch, session, produce_version=6)
    assert answer["scope"] == "partition"
    assert answer["response"] == failed(76, "UNSUPPORTED_COMPRESSION_TYPE", log_start_offset=-1)
    assert answer["exception"] == {
        "class": "org.apache.kafka.common.errors.UnsupportedCompressionTypeException",
        "message": "Produce requests with version 6 are not allowed to use ZStandard compression",
    }
    assert produce(oracle, batch, session, produce_version=7)["response"] == ok(0)


def test_unknown_codec_fails_the_request_below_v7(oracle: BrokerOracle, session: str) -> None:
    """Codec id 5: below v7 validateRecords calls compressionType(), whose
    IllegalArgumentException escapes KafkaApis (handleError: UNKNOWN_SERVER_ERROR, no message,
    for the whole request); from v7 on the same exception comes from the append, caught by
    appendToLocalLog's last clause (a partition error with the log start offset)."""
    batch = with_codec_id(write_batch(RECORDS, magic=2), 5)
    before = produce(oracle, batch, session, produce_version=6)
    assert before["scope"] == "request"
    assert before["response"] == failed(-1, "UNKNOWN_SERVER_ERROR", log_start_offset=-1)
    assert before["exception"]["class"] == "java.lang.IllegalArgumentException"
    after = produce(oracle, batch, session, produce_version=7)
    assert after["scope"] == "partition"
    assert after["response"] == failed(-1, "UNKNOWN_SERVER_ERROR", log_start_offset=0)
    assert after["exception"]["class"] == "java.lang.IllegalArgumentException"


def test_produce_versions(oracle: BrokerOracle, session: str) -> None:
    """A Produce version the broker does not enable fails in SocketServer before KafkaApis:
    2.8 (RequestContext.parseRequest) and 3.9 (parseRequestHeader) throw
    InvalidRequestException; 4.x's Processor.parseRequestHeader throws
    UnsupportedVersionException, also for v0-v2, which it still advertises (KIP-896,
    KAFKA-18659). ProduceRequest.json validVersions: 2.8 0-9, 3.9 0-11, 4.3 3-13."""
    batch = write_batch(RECORDS, magic=2)
    newest = {"2.8.2": 9, "3.9.2": 11, "4.3.1": 13}[oracle.version]
    assert produce(oracle, batch, session, produce_version=newest)["response"] == ok(0)
    beyond = produce(oracle, batch, session, produce_version=newest + 1)
    assert beyond["scope"] == "request"
    v2 = produce(oracle, batch, session, produce_version=2)
    if oracle.version == "4.3.1":
        for answer, version in ((beyond, 14), (v2, 2)):
            message = (
                f"Received request for api with key 0 (Produce) and unsupported version {version}"
            )
            assert answer["scope"] == "request"
            assert answer["response"] == failed(
                35, "UNSUPPORTED_VERSION", log_start_offset=-1, message=message
            )
            assert answer["exception"] == {
                "class": "org.apache.kafka.common.errors.UnsupportedVersionException",
                "message": message,
            }
    else:
        assert beyond["response"]["errorName"] == "INVALID_REQUEST"
        assert (
            beyond["exception"]["class"] == "org.apache.kafka.common.errors.InvalidRequestException"
        )
        if oracle.version == "2.8.2":
            assert beyond["exception"]["message"].startswith(
                "Error getting request for apiKey: PRODUCE, apiVersion: 10, connectionId: "
            )
        else:
            assert beyond["exception"]["message"] == (
                "Received request api key PRODUCE with version 12 which is not enabled"
            )
        # v2 is still served: validateRecords checks nothing below v3
        assert v2["response"] == ok(2)


def test_transactional_batch(oracle: BrokerOracle, session: str) -> None:
    """A correct transactional client: its partition is in the transaction, so verification
    (3.6+, KIP-890) passes and the batch is appended. Without a transactional id the request
    fails in KafkaApis.handleProduceRequest (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the
    whole request; ApiError drops the error's default message)."""
    txn = {"producer_id": 2000, "producer_epoch": 0, "is_transactional": True}
    batch = write_batch(RECORDS, magic=2, base_sequence=0, **txn)
    refused = produce(oracle, batch, session, transactional_id=None)
    assert refused["scope"] == "request"
    assert refused["response"] == failed(
        53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", log_start_offset=-1
    )
    if oracle.version != "4.3.1":
        # produce v0-v2 carry no transactional id (ProduceRequest.json: transactionalId v3+)
        old = produce(oracle, batch, session, produce_version=2, transactional_id="txn-1")
        assert old["response"] == refused["response"]
    answer = produce(oracle, batch, session, transactional_id="txn-1")
    assert answer["response"] == ok(0)
    assert stored(answer) == write_batch(
        RECORDS, magic=2, base_sequence=0, partition_leader_epoch=0, **txn
    )


# ------------------------------------------------------------------------------------------
# the other operations and the JVM's life


def test_murmur2_vectors(oracle: BrokerOracle) -> None:
    """Kafka's UtilsTest.testMurmur2."""
    vectors = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
    }
    assert oracle.murmur2(list(vectors)) == list(vectors.values())


def test_version_names_the_jars(oracle: BrokerOracle) -> None:
    doc = oracle.describe()
    assert doc["kafka"] == oracle.version
    assert doc["produceVersions"][0] == (3 if oracle.version == "4.3.1" else 0)


def test_a_session_keeps_its_config(oracle: BrokerOracle, session: str) -> None:
    batch = write_batch(RECORDS, magic=2)
    produce(oracle, batch, session, topic={"cleanup.policy": "delete"})
    with pytest.raises(BrokerOracleRequestError, match="was created with topic config"):
        produce(oracle, batch, session, topic={"cleanup.policy": "compact"})
    with pytest.raises(BrokerOracleRequestError, match="Unknown topic config name"):
        produce(oracle, batch, f"{session}-bad", topic={"no.such.config": "1"})
    with pytest.raises(BrokerOracleRequestError, match="unknown op"):
        oracle.request({"op": "nope"})
    assert oracle.murmur2([b"21"]) == [-973932308]  # the JVM went on


def test_a_killed_jvm_is_restarted(oracle: BrokerOracle, session: str) -> None:
    batch = write_batch(RECORDS, magic=2)
    assert produce(oracle, batch, session)["response"] == ok(0)
    pid, restarts = oracle.pid, oracle.restarts
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    answer = produce(oracle, batch, session)
    # a new JVM answered, with a new (empty) log for the session
    assert answer["response"] == ok(0)
    assert oracle.pid != pid
    assert oracle.restarts == restarts + 1
    assert pid not in processes()


def test_nothing_is_left_behind(oracle: BrokerOracle) -> None:
    """The leftover guard of tests/conftest.py finds a running oracle by its command line;
    after close() the JVM and its log directory are gone."""
    other = BrokerOracle(oracle.version)
    other.produce(write_batch(RECORDS, magic=2), produce_version=V9, topic={}, now=NOW)
    pid, log_root = other.pid, other.log_root
    assert pid in processes()
    assert log_root is not None and (log_root / "session-0" / "t-0").is_dir()
    other.close()
    deadline = time.monotonic() + 10
    while pid in processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid not in processes()
    assert not log_root.exists()


def test_the_command_names_the_main_class() -> None:
    command = ensure_built(SUPPORTED_VERSIONS[0])
    assert command[-1] == MAIN_CLASS
    assert command == ensure_built(SUPPORTED_VERSIONS[0])  # built once
