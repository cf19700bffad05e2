"""``kafka-conformance dump --remote-log-metadata-decoder`` against the real tool (3.9.2,
4.3.1).

The log is written here with the kit's writer: ``__remote_log_metadata`` records whose values
are frames (frame version, apiKey, version as unsigned varints) around messages of the
storage module's definitions (read from each release's jars, written with
``conformance.messages.write_message``): every record type, custom metadata or none, leader
epochs out of order and repeated, each state; then values the constructors refuse (negative
start offset, end before start, no epochs, unknown states), unknown types and frame versions,
truncated frames and messages, bytes after a message, a null and an empty value, keyed records.
Each release's tool and ``dump`` with that release's definitions must print the same stdout,
stderr and exit status, with and without ``--skip-record-metadata``.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from dump_tool import compare_decoder, refused_before

VERSIONS = ["3.9.2", "4.0.0", "4.3.1"]
TS = 1_700_000_000_000
TOPIC_ID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
SEGMENT_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def _schemas(version: str) -> Any:
    from conformance.jvm import kafka_jars
    from conformance.jvm.message_defs import message_schemas

    try:
        return message_schemas(version)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _values(version: str) -> list[tuple[bytes | None, bytes | None]]:
    from conformance.messages import Message, write_message

    s = _schemas(version)

    def frame(name: str, **values: object) -> bytes:
        d = s[name]
        assert d.api_key is not None
        head = _uvarint(1) + _uvarint(d.api_key) + _uvarint(0)
        return head + write_message(d, 0, Message(d.struct, **values))

    def sub(name: str, *path: str, **values: object) -> Any:
        struct = s[name].struct
        for p in path:
            struct = struct.field(p).struct
        return Message(struct, **values)

    def tip(name: str, *path: str) -> Any:
        return sub(name, *path, Name="remote-topic", Id=TOPIC_ID, Partition=3)

    def segment(**changes: object) -> bytes:
        name = "RemoteLogSegmentMetadataRecord"
        epochs = [
            sub(name, "SegmentLeaderEpochs", LeaderEpoch=e, Offset=o)
            for e, o in ((5, 500), (1, 100), (3, 300), (1, 150))
        ]
        values: dict[str, object] = {
            "RemoteLogSegmentId": sub(
                name,
                "RemoteLogSegmentId",
                TopicIdPartition=tip(name, "RemoteLogSegmentId", "TopicIdPartition"),
                Id=SEGMENT_ID,
            ),
            "StartOffset": 100,
            "EndOffset": 599,
            "BrokerId": 1,
            "MaxTimestampMs": TS,
            "EventTimestampMs": TS + 1,
            "SegmentLeaderEpochs": epochs,
            "SegmentSizeInBytes": 1048576,
            "CustomMetadata": b"\x01\x02\x03",
            "RemoteLogSegmentState": 1,
        }
        values.update(changes)
        return frame(name, **values)

    def update(state: int, custom: bytes | None = None) -> bytes:
        name = "RemoteLogSegmentMetadataUpdateRecord"
        return frame(
            name,
            RemoteLogSegmentId=sub(
                name,
                "RemoteLogSegmentId",
                TopicIdPartition=tip(name, "RemoteLogSegmentId", "TopicIdPartition"),
                Id=SEGMENT_ID,
            ),
            BrokerId=2,
            EventTimestampMs=TS + 2,
            CustomMetadata=custom,
            RemoteLogSegmentState=state,
        )

    def delete(state: int) -> bytes:
        name = "RemotePartitionDeleteMetadataRecord"
        return frame(
            name,
            TopicIdPartition=tip(name, "TopicIdPartition"),
            BrokerId=3,
            EventTimestampMs=TS + 3,
            RemotePartitionDeleteState=state,
        )

    def snapshot(state: int = 3, epochs: tuple[tuple[int, int], ...] = ((0, 0), (2, 7))) -> bytes:
        name = "RemoteLogSegmentMetadataSnapshotRecord"
        return frame(
            name,
            SegmentId=SEGMENT_ID,
            StartOffset=-5,  # not checked by the snapshot
            EndOffset=-9,
            BrokerId=4,
            MaxTimestampMs=TS,
            EventTimestampMs=TS + 4,
            SegmentLeaderEpochs=[
                sub(name, "SegmentLeaderEpochs", LeaderEpoch=e, Offset=o) for e, o in epochs
            ],
            SegmentSizeInBytes=-1,
            CustomMetadata=None,
            RemoteLogSegmentState=state,
        )

    good = segment()
    return [
        (None, good),
        (b"key", segment(CustomMetadata=None, RemoteLogSegmentState=0)),
        (None, update(2, b"")),
        (None, update(3)),
        (None, delete(0)),
        (None, delete(2)),
        (None, snapshot()),
        (None, segment(StartOffset=-1)),
        (None, segment(EndOffset=99)),
        (None, segment(SegmentLeaderEpochs=[])),
        (None, segment(RemoteLogSegmentState=9)),
        (None, segment(StartOffset=-1, RemoteLogSegmentState=9)),
        (None, update(4)),
        (None, delete(3)),
        (None, snapshot(state=7)),
        (None, snapshot(epochs=())),
        (None, _uvarint(1) + _uvarint(9) + _uvarint(0) + b"\x00"),  # unknown apiKey
        (None, _uvarint(0) + good[1:]),  # frame version 0
        (None, _uvarint(2) + good[1:]),  # frame version 2
        (None, good[:3] + b"\x01" + good[4:]),  # version 1
        (None, good[:-4]),  # truncated
        (None, good + b"\x00\x00"),  # bytes after the message
        (None, b"\x01"),  # no type
        (None, b"\xff\xff\xff\xff\xff"),  # garbage varint
        (None, b""),
        (None, None),
        (None, good),
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
@pytest.mark.parametrize("version", VERSIONS)
def test_remote_log_metadata_decoder(tmp_path: Path, version: str, skip: bool) -> None:
    records = _values(version)
    stdout = compare_decoder(
        tmp_path,
        version,
        "__remote_log_metadata-0",
        records,
        TS,
        "--remote-log-metadata-decoder",
        skip,
        remote_log_metadata_decoder=_schemas(version),
    )
    assert "RemoteLogSegmentMetadata{" in stdout


def test_remote_log_metadata_decoder_before_3_9_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused_before(tmp_path, "3.8", "--remote-log-metadata-decoder", capsys)
