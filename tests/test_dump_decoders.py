"""``kafka-conformance dump`` with DumpLogSegments' decoder options, against the real tool.

``--cluster-metadata-decoder``: each release decodes with its own metadata record
definitions (``jvm.message_defs.message_schemas``), so Kafka 3.9.2's tool prints an error
for record types and versions only later releases know. Both KRaft corpora's
``__cluster_metadata-0`` files and a log of crafted values (every error of
``AbstractApiMessageSerde.read``) are dumped by the tool of 3.9.2 and of 4.3.1 and by ``dump``
in that release's format: stdout, stderr's first line and the exit status must be equal.
"""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest
from dump_tool import compare_with_tool

from conformance.logdir.dump import dump
from conformance.logdir.dump.decoders import metadata_record_type_name
from conformance.logdir.dump.formats import format_of
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {
    "3.9.2": ROOT / "corpora" / "kafka-3.9.2-kraft" / "kraft-cluster-metadata",
    "4.3.1": ROOT / "corpora" / "kafka-4.3.1-kraft" / "kraft-cluster-metadata",
}
VERSIONS = ["3.9.2", "4.3.1"]
PARTITION = Path("log") / "__cluster_metadata-0"
TS = 1_700_000_000_000


def _files(case: Path) -> list[str]:
    """The partition's files the tool can be given (a name without '.' stops 3.9's tool)."""
    return [str(PARTITION / p.name) for p in sorted((case / PARTITION).iterdir()) if "." in p.name]


def _compare(version: str, case: Path, files: list[str], skip: bool) -> None:
    from conformance.jvm.message_defs import message_schemas

    extra = ["--cluster-metadata-decoder"] + (["--skip-record-metadata"] if skip else [])
    compare_with_tool(
        version,
        case,
        files,
        extra,
        skip_record_metadata=skip,
        cluster_metadata_decoder=message_schemas(version),
    )


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
@pytest.mark.parametrize("corpus", list(CORPORA))
@pytest.mark.parametrize("version", VERSIONS)
def test_cluster_metadata_decoder_on_the_corpora(version: str, corpus: str, skip: bool) -> None:
    case = CORPORA[corpus]
    _compare(version, case, _files(case), skip)


def _crafted_values() -> list[tuple[bytes | None, bytes | None]]:
    """(key, value) pairs reaching every branch of ``AbstractApiMessageSerde.read``."""
    from conformance.jvm.message_defs import message_schemas
    from conformance.messages import Message, write_message

    schemas = message_schemas("3.9.2")
    topic = schemas["TopicRecord"]
    body = write_message(topic, 0, Message(topic.struct, Name="orders", TopicId=uuid.UUID(int=7)))
    feature = schemas["FeatureLevelRecord"]
    level = write_message(
        feature, 0, Message(feature.struct, Name="metadata.version", FeatureLevel=21)
    )
    return [
        (None, b"\x01\x02\x00" + body),  # valid TopicRecord v0
        (b"key", b"\x01\x0c\x00" + level),  # valid, with a key (never printed)
        (None, None),  # null value
        (None, b""),  # no frame version
        (None, b"\x00"),  # the 2.8 preview frame
        (None, b"\x05\x02\x00"),  # unknown frame version
        (None, b"\x01"),  # no type
        (None, b"\x01\x02"),  # no version
        (None, b"\x01\xff\xff\x03\x00"),  # type above Short.MAX_VALUE
        (None, b"\x01\xff\xff\xff\xff\x0f\x00"),  # type -1 (an int above 2^31)
        (None, b"\x01\xff\xff\xff\xff\xff\x00"),  # varint too long
        (None, b"\x01\x63\x00"),  # unknown type 99
        (None, b"\x01\x02\x00" + body + b"\x00\x00"),  # garbage after the message
        (None, b"\x01\x02\x00" + body[:-3]),  # truncated message
        (None, b"\x01\x02\x63" + body),  # version 99
        (None, b"\x01\x02\xff\xff\x01" + body),  # version 32767 (Short.MAX_VALUE)
        (None, b"\x01\x02\xff\xff\x03" + body),  # version above Short.MAX_VALUE
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("skip", [False, True], ids=["meta", "skip-meta"])
@pytest.mark.parametrize("version", VERSIONS)
def test_cluster_metadata_decoder_on_crafted_values(
    tmp_path: Path, version: str, skip: bool
) -> None:
    b = BatchBuilder(magic=2, base_offset=0)
    for i, (key, value) in enumerate(_crafted_values()):
        b.append(TS + i, key, value, [])
    (tmp_path / PARTITION).mkdir(parents=True)
    (tmp_path / PARTITION / "00000000000000000000.log").write_bytes(b.build())
    _compare(version, tmp_path, _files(tmp_path), skip)


# ------------------------------------------------------------------------------------------
# without Java


@pytest.mark.parametrize(
    "name, constant",
    [
        ("RegisterBrokerRecord", "REGISTER_BROKER_RECORD"),
        ("ClearElrRecord", "CLEAR_ELR_RECORD"),
        ("ZkMigrationStateRecord", "ZK_MIGRATION_STATE_RECORD"),
        ("NoOpRecord", "NO_OP_RECORD"),
        ("UserScramCredentialRecord", "USER_SCRAM_CREDENTIAL_RECORD"),
    ],
)
def test_metadata_record_type_names(name: str, constant: str) -> None:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``."""
    assert metadata_record_type_name(name) == constant


def test_cluster_metadata_decoder_before_3_0_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = str(CORPORA["3.9.2"] / PARTITION / "00000000000000000000.log")
    from conformance.cli import main

    assert main(["dump", "--format-of", "2.8.2", "--cluster-metadata-decoder", log]) == 2
    assert capsys.readouterr().err.strip() == (
        "kafka-conformance dump: Kafka 2.8.2's DumpLogSegments has no "
        "--cluster-metadata-decoder (added in Kafka 3.0, commit 32e6a5b)"
    )
    assert format_of("2.8.2").metadata_decoder_error is None
    with pytest.raises(ValueError):
        dump(
            [log],
            cluster_metadata_decoder=object(),  # type: ignore[arg-type]
            fmt=format_of("2.8.2"),
            out=io.StringIO(),
            err=io.StringIO(),
        )
