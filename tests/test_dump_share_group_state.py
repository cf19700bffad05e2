"""``kafka-conformance dump --share-group-state-decoder`` against the real tool (4.0.0, 4.3.1).

The log is written here with the kit's writer: ``__share_group_state`` records (key = int16
type + ``ShareSnapshotKey`` / ``ShareUpdateKey``, value = int16 version + the value message,
written with the release's own definitions, ``conformance.messages.write_message``): both
types, a tombstone, unknown types, truncated keys and values, garbage, a value version beyond
the definitions, and last a record without a key (which stops the tool). Each release's tool
and ``dump`` with that release's definitions must print the same stdout, stderr's first line
and exit status, with and without ``--skip-record-metadata``.
"""

from __future__ import annotations

import io
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest
from dump_tool import compare_decoder, refused_before

from conformance.logdir.dump import dump
from conformance.logdir.dump.formats import format_of

VERSIONS = ["4.0.0", "4.3.1"]
TS = 1_700_000_000_000
TOPIC_ID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def _schemas(version: str) -> Any:
    from conformance.jvm import kafka_jars
    from conformance.jvm.message_defs import message_schemas

    try:
        return message_schemas(version)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))


def _records(version: str) -> list[tuple[bytes | None, bytes | None]]:
    from conformance.messages import Message, write_message

    s = _schemas(version)

    def key(name: str, record_type: int, **values: object) -> bytes:
        k = s[name]
        read_at = 0 if k.type == "coordinator-key" else record_type
        return struct.pack(">h", record_type) + write_message(
            k, read_at, Message(k.struct, **values)
        )

    def value(name: str, **values: object) -> bytes:
        v = s[name]
        batch = v.struct.field("StateBatches").struct
        batches = [
            Message(batch, FirstOffset=0, LastOffset=9, DeliveryState=2, DeliveryCount=1),
            Message(batch, FirstOffset=10, LastOffset=10, DeliveryState=0, DeliveryCount=-1),
        ]
        fields = {f.name for f in v.struct.fields}
        given = {k: x for k, x in values.items() if k in fields}
        return struct.pack(">h", 0) + write_message(
            v, 0, Message(v.struct, StateBatches=batches, **given)
        )

    common = {
        "SnapshotEpoch": 3,
        "StateEpoch": 1,
        "LeaderEpoch": 7,
        "StartOffset": 42,
        "CreateTimestamp": TS,
        "WriteTimestamp": TS + 5,
    }
    snapshot_key = key("ShareSnapshotKey", 0, GroupId="sg", TopicId=TOPIC_ID, Partition=3)
    update_key = key("ShareUpdateKey", 1, GroupId="sg", TopicId=TOPIC_ID, Partition=3)
    snapshot = value("ShareSnapshotValue", **common)
    update = value("ShareUpdateValue", **common)
    return [
        (snapshot_key, snapshot),
        (update_key, update),
        (
            key("ShareSnapshotKey", 0, GroupId="é ✓", TopicId=uuid.UUID(int=0), Partition=0),
            snapshot,
        ),
        (snapshot_key, None),  # tombstone
        (struct.pack(">h", 9) + snapshot_key[2:], snapshot),  # unknown type
        (struct.pack(">h", -1) + snapshot_key[2:], snapshot),
        (b"\x00", snapshot),  # no type
        (snapshot_key[:-3], snapshot),  # truncated key
        (snapshot_key, snapshot[:-5]),  # truncated value
        (snapshot_key, b"\x00"),  # no value version
        (snapshot_key, struct.pack(">h", 4) + snapshot[2:]),  # a version beyond the definitions
        (update_key, snapshot),  # a snapshot value under an update key
        (snapshot_key, b"\x00\x00" + b"\xff" * 9),  # garbage
        (None, snapshot),  # no key: the run stops
        (snapshot_key, snapshot),
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
@pytest.mark.parametrize("version", VERSIONS)
def test_share_group_state_decoder(tmp_path: Path, version: str, skip: bool) -> None:
    records = _records(version)
    stdout = compare_decoder(
        tmp_path,
        version,
        "__share_group_state-0",
        records,
        TS,
        "--share-group-state-decoder",
        skip,
        share_group_state_decoder=_schemas(version),
    )
    assert "payload: <DELETE>" in stdout


def test_share_group_state_decoder_before_4_0_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused_before(tmp_path, "3.9", "--share-group-state-decoder", capsys)
    with pytest.raises(ValueError):
        dump(
            [str(tmp_path / "x-0" / "00000000000000000000.log")],
            share_group_state_decoder=object(),  # type: ignore[arg-type]
            fmt=format_of("3.9"),
            out=io.StringIO(),
            err=io.StringIO(),
        )
