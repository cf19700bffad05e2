"""``kafka-conformance dump --offsets-decoder`` / ``--transaction-log-decoder`` against the
real tool.

The corpora have no ``__consumer_offsets`` or ``__transaction_state`` segments, so the logs
are written here: coordinator records (key = int16 type + key message, value = int16 version
+ value message, ``conformance.messages.write_message``) of several types and versions, a
tombstone, an unknown type, a truncated key and value, and last a record without a key
(which stops the tool). Each is dumped by the tool of 3.9.2, 4.0.0 and 4.3.1 and by ``dump`` with
that release's definitions (``jvm.message_defs.message_schemas``): stdout, stderr's first
line and the exit status must be equal. 3.9.2's transaction log decoder prints the older text
format (tests/test_dump_coordinator_text.py).
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from dump_tool import compare_with_tool

from conformance.logdir.dump import dump
from conformance.logdir.dump.formats import format_of
from conformance.wire.builder import BatchBuilder

VERSIONS = ["3.9.2", "4.0.0", "4.3.1"]
TS = 1_700_000_000_000


def _schemas(version: str):  # type: ignore[no-untyped-def]
    from conformance.jvm import kafka_jars
    from conformance.jvm.message_defs import message_schemas

    try:
        return message_schemas(version)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))


def _framed(schemas, name: str, version: int, **values: object) -> bytes:  # type: ignore[no-untyped-def]
    """int16 ``version`` + the message ``name`` written at ``version``."""
    from conformance.messages import Message, write_message

    s = schemas[name]
    return struct.pack(">h", version) + write_message(s, version, Message(s.struct, **values))


def _offsets_records(version: str) -> list[tuple[bytes | None, bytes | None]]:
    from conformance.messages import Message, write_message

    s = _schemas(version)
    old = s["OffsetCommitKey"].type != "coordinator-key"
    # before 4.0 the key is read at its type; from 4.0 at version 0 (the type is the apiKey)
    commit_key = {"group": "g1", "topic": "t1", "partition": 0}

    def key(name: str, record_type: int, **values: object) -> bytes:
        k = s[name]
        body = write_message(k, record_type if old else 0, Message(k.struct, **values))
        return struct.pack(">h", record_type) + body

    sub = s["ConsumerProtocolSubscription"]
    subscription = struct.pack(">h", 1) + write_message(
        sub,
        1,
        Message(sub.struct, Topics=["t1", "t2"], UserData=b"ud"),
    )
    asg = s["ConsumerProtocolAssignment"]
    partition = Message(
        asg.struct.field("AssignedPartitions").struct, Topic="t1", Partitions=[0, 1]
    )
    assignment = struct.pack(">h", 1) + write_message(
        asg, 1, Message(asg.struct, AssignedPartitions=[partition], UserData=None)
    )
    gm = s["GroupMetadataValue"]
    member_struct = gm.struct.field("members").struct

    def member(**values: object) -> object:
        return Message(member_struct, **values)

    consumer_member = member(
        memberId="m1",
        groupInstanceId="i1",
        clientId="c1",
        clientHost="/127.0.0.1",
        rebalanceTimeout=30000,
        sessionTimeout=10000,
        subscription=subscription,
        assignment=assignment,
    )
    connect_member = member(
        memberId="m2",
        clientId="c2",
        clientHost="/10.0.0.1",
        rebalanceTimeout=60000,
        sessionTimeout=45000,
        subscription=b"\x00\x01\x02",
        assignment=b"",
    )
    bad_member = member(
        memberId="m3",
        clientId="c3",
        clientHost="/10.0.0.2",
        sessionTimeout=45000,
        subscription=b"\x00",  # too short for a version: kept as bytes
        assignment=b"\x00\x00\xff",  # a truncated assignment: kept as bytes
    )
    commit = key("OffsetCommitKey", 1, **commit_key)
    value_v3 = _framed(
        s, "OffsetCommitValue", 3, offset=42, leaderEpoch=3, metadata="meta", commitTimestamp=TS
    )
    return [
        (commit, value_v3),
        (
            key("OffsetCommitKey", 0, **commit_key),
            _framed(
                s,
                "OffsetCommitValue",
                1,
                offset=7,
                metadata="",
                commitTimestamp=TS,
                expireTimestamp=TS + 1,
            ),
        ),
        (commit, _framed(s, "OffsetCommitValue", 0, offset=8, metadata="x", commitTimestamp=TS)),
        (
            key("GroupMetadataKey", 2, group="g1"),
            _framed(
                s,
                "GroupMetadataValue",
                3,
                protocolType="consumer",
                generation=5,
                protocol="range",
                leader="m1",
                currentStateTimestamp=TS,
                members=[consumer_member, bad_member],
            ),
        ),
        (
            key("GroupMetadataKey", 2, group="connect-g"),
            _framed(
                s,
                "GroupMetadataValue",
                1,
                protocolType="connect",
                generation=1,
                protocol="sessioned",
                leader="m2",
                members=[connect_member],
            ),
        ),
        (
            key("GroupMetadataKey", 2, group="empty"),
            _framed(
                s,
                "GroupMetadataValue",
                0,
                protocolType="",
                generation=0,
                protocol=None,
                leader=None,
                members=[],
            ),
        ),
        (commit, None),  # tombstone
        (struct.pack(">h", 99) + b"\x00\x01x", value_v3),  # unknown type
        (struct.pack(">h", -1), value_v3),  # type -1
        (b"\x00", value_v3),  # no type
        (commit[:-3], value_v3),  # truncated key
        (commit, value_v3[:-5]),  # truncated value
        (commit, b"\x00"),  # no value version
        (
            key("ConsumerGroupMetadataKey", 3, GroupId="cg"),
            _framed(s, "ConsumerGroupMetadataValue", 0, Epoch=4),
        ),
        (commit, struct.pack(">h", 9) + value_v3[2:]),  # a version beyond the definitions
        (key("ShareGroupMetadataKey", 11, GroupId="sg"), value_v3),  # a share group's type
        (None, value_v3),  # no key: the run stops
        (commit, value_v3),
    ]


def _transaction_records(version: str) -> list[tuple[bytes | None, bytes | None]]:
    s = _schemas(version)
    v = s["TransactionLogValue"]
    tp = v.struct.field("TransactionPartitions").struct
    from conformance.messages import Message

    partitions = [
        Message(tp, Topic="t", PartitionIds=[0, 1]),
        Message(tp, Topic="u", PartitionIds=[]),
    ]
    key = _framed(s, "TransactionLogKey", 0, TransactionalId="tx-1")
    common = {
        "ProducerId": 7,
        "ProducerEpoch": 2,
        "TransactionTimeoutMs": 60000,
        "TransactionStatus": 1,
        "TransactionPartitions": partitions,
        "TransactionLastUpdateTimestampMs": TS,
        "TransactionStartTimestampMs": TS,
    }
    v0 = _framed(s, "TransactionLogValue", 0, **common)
    v1 = _framed(s, "TransactionLogValue", 1, **common)
    return [
        (key, v0),
        (key, v1),
        (_framed(s, "TransactionLogKey", 0, TransactionalId="tx-2"), None),  # tombstone
        (struct.pack(">h", 5) + key[2:], v0),  # unknown type
        (key, v0[:-4]),  # truncated value
        (key[:1], v0),  # no type
        (key, struct.pack(">h", 9) + v0[2:]),  # a version beyond the definitions
        (None, v0),  # no key: the run stops
    ]


def _log(tmp_path: Path, topic: str, records: list[tuple[bytes | None, bytes | None]]) -> str:
    b = BatchBuilder(magic=2, base_offset=0)
    for i, (key, value) in enumerate(records):
        b.append(TS + i, key, value, [])
    part = tmp_path / f"{topic}-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b.build())
    return f"{topic}-0/00000000000000000000.log"


def _compare(version: str, case: Path, files: list[str], option: str, skip: bool) -> str:
    extra = [f"--{option}"] + (["--skip-record-metadata"] if skip else [])
    return compare_with_tool(
        version,
        case,
        files,
        extra,
        skip_record_metadata=skip,
        **{option.replace("-", "_"): _schemas(version)},
    )


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
@pytest.mark.parametrize("version", VERSIONS)
def test_offsets_decoder(tmp_path: Path, version: str, skip: bool) -> None:
    log = _log(tmp_path, "__consumer_offsets", _offsets_records(version))
    stdout = _compare(version, tmp_path, [log], "offsets-decoder", skip)
    assert 'key: {"type":"1","data":{"group":"g1","topic":"t1","partition":0}}' in stdout
    assert "payload: <DELETE>" in stdout
    assert "Unknown record type 99 at offset 7, skipping." in stdout


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
def test_transaction_log_decoder(tmp_path: Path, skip: bool) -> None:
    log = _log(tmp_path, "__transaction_state", _transaction_records("4.3.1"))
    stdout = _compare("4.3.1", tmp_path, [log], "transaction-log-decoder", skip)
    assert 'key: {"type":"0","data":{"transactionalId":"tx-1"}}' in stdout
    assert "Unknown record type 5 at offset 3, skipping." in stdout


# ------------------------------------------------------------------------------------------
# without Java


@pytest.mark.parametrize(
    "version, option",
    [("1.1.1", "--transaction-log-decoder"), ("0.10.2.2", "--offsets-decoder")],
)
def test_text_formats_need_no_definitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, option: str
) -> None:
    """Releases reading coordinator records with hand-written schemas are dumped without
    their jars (the text printers, ``coordinator_text``; checked against the tools in
    tests/test_dump_coordinator_text.py)."""
    from conformance.cli import main

    log = tmp_path / "x-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"")
    assert main(["dump", "--format-of", version, option, str(log)]) == 0
    assert capsys.readouterr().out == f"Dumping {log}\nStarting offset: 0\n"


@pytest.mark.parametrize(
    "version, option", [("2.8.2", "offsets_decoder"), ("3.9.2", "transaction_log_decoder")]
)
def test_generated_readers_need_definitions(tmp_path: Path, version: str, option: str) -> None:
    log = tmp_path / "x-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"")
    with pytest.raises(ValueError):
        dump(
            [str(log)],
            **{option: True},  # type: ignore[arg-type]
            fmt=format_of(version),
            out=io.StringIO(),
            err=io.StringIO(),
        )


def test_transaction_log_decoder_before_0_11_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.cli import main

    log = tmp_path / "x-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"")
    assert main(["dump", "--format-of", "0.10.2", "--transaction-log-decoder", str(log)]) == 2
    assert "has no --transaction-log-decoder" in capsys.readouterr().err
