"""conformance.messages without Java: the definitions model, the generator's version tests,
round trips (Hypothesis and seeded walks over every definition of the cached Kafka jars),
hostile bytes (typed errors only, memory bounded by the input), write errors, JSON text.

What Kafka itself does with the same bytes and messages is checked in
tests/test_messages_java.py (Kafka's generated classes run on the JVM); the expectations here
are the documented semantics (Kafka's generator sources, quoted per test), never this code's
output.
"""

from __future__ import annotations

import random
import tracemalloc
import uuid
from typing import Any

import pytest
from conftest import require_kafka_jars
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies as kst
from conformance.errors import (
    BufferUnderflowError,
    ByteArraySizeError,
    CollectionSizeError,
    DecodeError,
    EncodeError,
    FieldTooLongError,
    IllegalArgumentError,
    NegativeArraySizeError,
    NullFieldError,
    NullPointerError,
    RawTagError,
    StringLengthError,
    TagVersionError,
    UnsupportedVersionError,
)
from conformance.messages import (
    Message,
    MessageSchema,
    RawTaggedField,
    SchemaError,
    Schemas,
    Versions,
    java_double_string,
    kafka_uuid_string,
    message_json_node,
    read_kafka_uuid,
    read_message,
    read_message_at,
    read_schema,
    write_json_text,
    write_message,
    write_message_json,
)
from conformance.messages.sample import sample_message
from conformance.messages.schema import ALL_VERSIONS, NO_VERSIONS, read_field_type, read_versions
from conformance.messages.versions import branch

KAFKA_VERSIONS = ["2.8.2", "3.9.2", "4.3.1"]

LICENSE = "// Licensed to the Apache Software Foundation (ASF) ...\n//\n// (a test definition)\n\n"

#: a definition written for these tests (not one of Kafka's): every type, nullable and tagged
#: fields, a common struct, a struct array with a key, a flexibleVersions override
TOY = (
    LICENSE
    + """{
  "apiKey": 99, "type": "response", "name": "ToyResponse",
  "validVersions": "0-3", "flexibleVersions": "2+",
  "fields": [
    { "name": "Flag", "type": "bool", "versions": "0+" },
    { "name": "Small", "type": "int8", "versions": "0+", "default": "-1" },
    { "name": "Port", "type": "uint16", "versions": "1+", "default": 9092 },
    { "name": "Big", "type": "uint32", "versions": "0+", "ignorable": true },
    { "name": "Ratio", "type": "float64", "versions": "0+", "default": "1.5" },
    { "name": "Id", "type": "uuid", "versions": "0+" },
    { "name": "Name", "type": "string", "versions": "0+", "nullableVersions": "1+",
      "default": "toy" },
    /* a block comment */
    { "name": "Blob", "type": "bytes", "versions": "0+", "nullableVersions": "0+",
      "flexibleVersions": "none" },
    { "name": "Recs", "type": "records", "versions": "0+", "nullableVersions": "0+" },
    { "name": "Ids", "type": "[]int64", "versions": "0+" },
    { "name": "Labels", "type": "[]string", "versions": "0+", "nullableVersions": "2+" },
    { "name": "Parts", "type": "[]Part", "versions": "0+", "fields": [
      { "name": "Index", "type": "int32", "versions": "0+", "mapKey": true },
      { "name": "Where", "type": "Place", "versions": "0+" }
    ]},
    { "name": "Home", "type": "Place", "versions": "1+", "nullableVersions": "1+",
      "default": "null" },
    { "name": "Note", "type": "string", "versions": "2+", "taggedVersions": "2+", "tag": 0,
      "nullableVersions": "2+", "default": "null" },
    { "name": "Epoch", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 1,
      "default": -1 }
  ],
  "commonStructs": [
    { "name": "Place", "versions": "0+", "fields": [
      { "name": "Host", "type": "string", "versions": "0+" },
      { "name": "Rack", "type": "string", "versions": "0+", "nullableVersions": "0+",
        "taggedVersions": "2+", "tag": 0 }
    ]}
  ]
}
]} trailing text Jackson never reads
"""
)


@pytest.fixture(scope="module")
def toy() -> MessageSchema:
    return read_schema(TOY, "toy")


@pytest.fixture(scope="module", params=KAFKA_VERSIONS)
def kafka(request: pytest.FixtureRequest) -> Schemas:
    return _schemas(request.param)


def _schemas(version: str) -> Schemas:
    require_kafka_jars(version)
    from conformance.jvm.message_defs import message_schemas

    return message_schemas(version)


class Seeded:
    """``messages.sample.Choices`` from a seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def binary(self, max_size: int) -> bytes:
        return self.r.randbytes(self.r.randint(0, max_size))

    def text(self, max_size: int) -> str:
        planes = (lambda: self.r.randint(32, 126), lambda: self.r.randint(0xE000, 0x10FFFF))
        return "".join(chr(self.r.choice(planes)()) for _ in range(self.r.randint(0, max_size)))


# ------------------------------------------------------------------------- the definitions


def test_the_toy_definition_reads_as_the_generator_reads_it(toy: MessageSchema) -> None:
    assert (toy.name, toy.type, toy.api_key) == ("ToyResponse", "response", 99)
    assert toy.data_class_name == "ToyResponseData"
    assert toy.valid_versions == Versions(0, 3) and toy.flexible_versions == Versions(2, 0x7FFF)
    top = toy.struct
    assert [f.name for f in top.fields][:3] == ["Flag", "Small", "Port"]
    assert top.field("Port").default == "9092"  # Jackson coerces the number to a string
    assert top.field("Port").scalar_default() == 9092
    assert top.field("Small").scalar_default() == -1
    assert top.field("Ratio").scalar_default() == 1.5
    assert top.field("Id").scalar_default() == uuid.UUID(int=0)
    assert top.field("Blob").flexible_versions == NO_VERSIONS
    assert toy.field_flexible_versions(top.field("Blob")) == NO_VERSIONS
    assert toy.field_flexible_versions(top.field("Name")) == toy.flexible_versions
    assert top.field("Note").tag == 0 and top.field("Note").default_is_null
    assert top.field("Parts").type.is_struct_array
    part = toy.structs["Part"]
    assert part.has_keys and part.parent_versions == Versions(0, 3) and not part.common
    place = toy.structs["Place"]
    assert place.common and place.parent_versions == ALL_VERSIONS
    assert top.field("Home").struct is place and part.field("Where").struct is place
    assert top.field("Labels").type.element == read_field_type("string")
    # a fresh default per message: struct defaults, lists
    a, b = Message(top), Message(top)
    assert a == b and a.Ids is not b.Ids and a.Name == "toy" and a.Home is None


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        ("1", "duplicate tag ID 1"),
        ("5", "tag IDs are not contiguous"),
        ("-1", "cannot be negative"),
    ],
)
def test_tags_the_generator_refuses(tag: str, message: str) -> None:
    text = TOY.replace(
        '"tag": 0,\n      "nullableVersions"', f'"tag": {tag},\n      "nullableVersions"'
    )
    assert text != TOY
    with pytest.raises(SchemaError, match=message):
        read_schema(text)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            '{ "name": "X", "type": "int32", "versions": "0+", "nullableVersions": "0+" }',
            "cannot be nullable",
        ),
        (
            '{ "name": "X", "type": "int8", "versions": "0+", "default": "300" }',
            "Invalid default for int8 field X",
        ),
        (
            '{ "name": "X", "type": "string", "versions": "0+", "default": "null" }',
            "null cannot be the default",
        ),
        ('{ "name": "X", "type": "[][]int8", "versions": "0+" }', "array of arrays"),
        ('{ "name": "X", "type": "int32", "versions": "0+", "zeroCopy": true }', "zeroCopy"),
        (
            '{ "name": "X", "type": "int32", "versions": "0+", "tag": 0, "taggedVersions": "0-3" }',
            "not open-ended",
        ),
        ('{ "name": "x y", "type": "int32", "versions": "0+" }', "Invalid field name"),
        (
            '{ "name": "A", "type": "Foo", "versions": "0+" }, '
            '{ "name": "B", "type": "[]Foo", "versions": "0+" }',
            "Struct Foo was specified twice",
        ),
        ('{ "name": "X", "type": "int32" }', "version range is required"),
    ],
)
def test_bad_fields(field: str, message: str) -> None:
    text = (
        '{"name": "T", "type": "data", "validVersions": "0", "flexibleVersions": "0+",'
        f' "fields": [{field}]}}'
    )
    with pytest.raises(SchemaError, match=message):
        read_schema(text)


def test_versions_are_the_generators() -> None:
    assert read_versions("3+", None) == Versions(3, 0x7FFF) and str(Versions(3, 0x7FFF)) == "3+"
    assert read_versions("none", None) == NO_VERSIONS and str(NO_VERSIONS) == "none"
    assert read_versions(" 1-4 ", None) == Versions(1, 4) and str(Versions(2, 2)) == "2"
    assert read_versions(None, NO_VERSIONS) == NO_VERSIONS
    # Versions.subtract's javadoc examples
    assert Versions(1, 4).subtract(Versions(1, 2)) == Versions(3, 4)
    assert Versions(3, 0x7FFF).subtract(Versions(4, 0x7FFF)) == Versions(3, 3)
    assert Versions(4, 0x7FFF).subtract(Versions(3, 0x7FFF)) == NO_VERSIONS
    assert Versions(1, 5).subtract(Versions(2, 4)) is None
    assert Versions(0, 5).intersect(Versions(6, 9)).empty
    with pytest.raises(SchemaError):
        read_versions("x+", None)


@pytest.mark.parametrize(
    ("containing", "possible", "version", "member"),
    [
        # VersionConditional.generate: the check is simplified by what is possible
        ((3, 0x7FFF), (0, 10), 2, False),  # "if (_version >= 3)": a lower check only
        ((3, 0x7FFF), (0, 10), 99, True),  # ... so 99 is a member although outside 0-10
        ((0, 3), (0, 10), -5, True),  # "if (_version <= 3)": no lower bound
        ((0, 3), (0, 10), 4, False),
        ((2, 4), (0, 10), 5, False),  # full range check
        ((2, 4), (0, 10), 1, False),
        ((0, 0x7FFF), (0, 10), -1, True),  # always true: no check at all
        ((11, 12), (0, 10), 11, False),  # always false: never emitted
        ((0, -1), (0, 10), 3, False),  # none
    ],
)
def test_branch_evaluates_the_generated_check(
    containing: tuple[int, int], possible: tuple[int, int], version: int, member: bool
) -> None:
    assert branch(version, Versions(*containing), Versions(*possible))[0] is member


def test_every_definition_of_the_jars_reads(kafka: Schemas) -> None:
    assert len(kafka) > 150
    fetch = kafka["FetchRequest"]
    assert fetch.api_key == 1 and fetch.type == "request" and kafka.request(1) is fetch
    assert kafka.response(18).name == "ApiVersionsResponse"
    assert "kafka-clients-" in fetch.source and fetch.source.endswith("FetchRequest.json")
    for s in kafka.values():
        assert s.struct.class_name == s.data_class_name


def test_jars_without_definitions_are_a_clear_error() -> None:
    require_kafka_jars("0.10.2.2")
    from conformance.jvm.message_defs import MessageDefinitionsUnavailable, message_schemas

    with pytest.raises(MessageDefinitionsUnavailable, match="no JSON message definitions"):
        message_schemas("0.10.2.2")


def test_a_missing_jar_is_a_clear_error(tmp_path: Any) -> None:
    from conformance.jvm.message_defs import MessageDefinitionsUnavailable, definition_texts

    with pytest.raises(MessageDefinitionsUnavailable, match="jar missing"):
        definition_texts([tmp_path / "kafka-clients-9.9.9.jar"])
    (tmp_path / "kafka-clients-9.9.9.jar").write_bytes(b"not a zip")
    with pytest.raises(MessageDefinitionsUnavailable, match="cannot read"):
        definition_texts([tmp_path / "kafka-clients-9.9.9.jar"])


# ------------------------------------------------------------------------------ round trips


def _round_trip(schema: MessageSchema, version: int, message: Message) -> bytes:
    data = write_message(schema, version, message)
    back, end = read_message_at(schema, version, data + b"\xde\xad")  # trailing bytes unread
    assert end == len(data)
    assert write_message(schema, version, back) == data
    assert write_message_json(schema, version, back) == write_message_json(schema, version, message)
    return data


def test_every_definition_at_every_version_round_trips(kafka: Schemas) -> None:
    count = 0
    for schema in kafka.values():
        v = schema.valid_versions
        for version in range(v.lowest, v.highest + 1):
            for seed in range(2):
                _round_trip(schema, version, sample_message(schema, version, Seeded(seed)))
                count += 1
    assert count > 500


def test_the_toy_round_trips_with_values_from_its_definition(toy: MessageSchema) -> None:
    top = toy.struct
    place = toy.structs["Place"]
    m = Message(top, Flag=True, Port=65535, Big=2**32 - 1, Ratio=-0.0, Name=None, Blob=None)
    m.Id = uuid.UUID(int=(1 << 127) | 5)
    m.Labels = ["a", "ü"]
    m.Parts = [Message(toy.structs["Part"], Index=7, Where=Message(place, Host="h", Rack="r"))]
    m.Home = Message(place, Host="home")
    m.Note = "n"
    m.unknown_tagged_fields = [RawTaggedField(5, b"\x01\x02")]
    data = _round_trip(toy, 3, m)
    # the flexible layout: bool, int8, uint16, uint32, float64, uuid, compact null string,
    # bytes with the "none" override (int32 -1), compact null records, ...
    assert data[:20] == bytes.fromhex("01ff ffff ffffffff 8000000000000000") + m.Id.bytes[:4]
    assert data[32:38] == bytes.fromhex("00 ffffffff 00")
    # version 0 has no tagged fields: found while sizing, before any write error
    with pytest.raises(UnsupportedVersionError, match="Tagged fields were set, but version 0"):
        write_message(toy, 0, m)
    m.unknown_tagged_fields = []
    # then the first write error: no Port at 0 (Name is not nullable at 0 either)
    with pytest.raises(UnsupportedVersionError, match="non-default port at version 0"):
        write_message(toy, 0, m)
    m.Port, m.Home, m.Note = 9092, None, None
    m.unknown_tagged_fields = []
    with pytest.raises(NullPointerError):
        write_message(toy, 0, m)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_round_trips(data: st.DataObject) -> None:
    schemas = _schemas("3.9.2")
    name = data.draw(
        st.sampled_from(
            [
                "FetchRequest",
                "FetchResponse",
                "MetadataResponse",
                "ApiVersionsResponse",
                "PartitionRecord",
                "RegisterBrokerRecord",
                "GroupMetadataValue",
                "ConsumerGroupMemberMetadataValue",
            ]
        )
    )
    schema = schemas[name]
    version = data.draw(st.integers(schema.valid_versions.lowest, schema.valid_versions.highest))
    message = data.draw(kst.messages(schema, version))
    encoded = _round_trip(schema, version, message)
    assert read_message(schema, version, encoded) == message  # only fields the version has


# ---------------------------------------------------------------------------- hostile bytes


def _samples(schemas: Schemas, names: list[str]) -> list[tuple[MessageSchema, int, bytes]]:
    out = []
    for name in names:
        s = schemas[name]
        for version in (s.valid_versions.lowest, s.valid_versions.highest):
            out.append(
                (s, version, write_message(s, version, sample_message(s, version, Seeded(3))))
            )
    return out


HOSTILE_NAMES = ["FetchResponse", "MetadataResponse", "ApiVersionsResponse", "PartitionRecord"]


def test_every_truncation_is_a_typed_error() -> None:
    schemas = _schemas("3.9.2")
    for schema, version, data in _samples(schemas, HOSTILE_NAMES):
        for cut in range(len(data)):
            try:
                read_message(schema, version, data[:cut])
            except DecodeError:
                pass  # anything else (IndexError, struct.error, ...) fails the test


@settings(max_examples=300)
@given(data=st.binary(max_size=200), version=st.integers(0, 17))
def test_any_bytes_are_a_message_or_a_typed_error(data: bytes, version: int) -> None:
    schema = _schemas("3.9.2")["FetchResponse"]
    try:
        read_message(schema, version, data)
    except DecodeError:
        pass


@pytest.mark.parametrize(
    ("version", "data", "error", "message"),
    [
        # v0: ThrottleTimeMs absent; Responses int32 count
        (
            1,
            "00000000 7fffffff",
            CollectionSizeError,
            "Tried to allocate a collection of size 2147483647, but there are only 0 bytes "
            "remaining.",
        ),
        (
            1,
            "00000000 ffffffff",
            NullFieldError,
            "non-nullable field responses was serialized as null",
        ),
        (
            1,
            "00000000 00000001 7fff",
            ByteArraySizeError,
            "Error reading byte array of 32767 byte(s): only 0 byte(s) available",
        ),
        (
            1,
            "00000000 00000001 ffff",
            NullFieldError,
            "non-nullable field topic was serialized as null",
        ),
        (1, "000000", BufferUnderflowError, None),
        # v12 (flexible): compact lengths are uvarint - 1 in Java int arithmetic
        (
            12,
            "00000000 0000 00000000 ffffffff0f",
            NullFieldError,  # 2**32-1 - 1: negative
            "non-nullable field responses was serialized as null",
        ),
        (
            12,
            "00000000 0000 00000000 8080808008",
            CollectionSizeError,  # 2**31 - 1 wraps
            "Tried to allocate a collection of size 2147483647, but there are only 0 bytes "
            "remaining.",
        ),
        (
            12,
            "00000000 0000 00000000 02 ffffff7f",
            StringLengthError,
            "string field topic had invalid length 268435454",
        ),
        (
            12,
            "00000000 0000 00000000 8080808080",
            IllegalArgumentError,
            "Varint is too long, the most significant bit in the 5th byte is set, converted "
            "value: 0",
        ),
        # tagged fields: a known tag at a version without it, unknown sizes
        (
            12,
            "00000000 0000 00000000 01 01 00 00",
            TagVersionError,
            "Tag 0 is not valid for version 12",
        ),
        (
            12,
            "00000000 0000 00000000 01 01 05 7f",
            ByteArraySizeError,
            "Error reading byte array of 127 byte(s): only 0 byte(s) available",
        ),
        (12, "00000000 0000 00000000 01 01 05 ffffffff0f", NegativeArraySizeError, "-1"),
    ],
)
def test_hostile_lengths(
    version: int, data: str, error: type[DecodeError], message: str | None
) -> None:
    schema = _schemas("3.9.2")["FetchResponse"]
    tracemalloc.start()
    try:
        with pytest.raises(error) as raised:
            read_message(schema, version, bytes.fromhex(data.replace(" ", "")))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert raised.value.message == message
    assert peak < 256 * 1024  # nothing sized by the claimed length


def test_zero_copy_and_records_lengths_past_the_end() -> None:
    schema = _schemas("3.9.2")["FetchResponse"]
    # v4: topic "t", one partition, records int32 length 1000 with 3 bytes left
    data = bytes.fromhex(
        "00000000 00000001 0001 74 00000001 00000000 0000 0000000000000000"
        "0000000000000000 00000000 000003e8 010203".replace(" ", "")
    )
    with pytest.raises(IllegalArgumentError, match=r"newLimit > capacity: \(1000 > 3\)"):
        read_message(schema, 4, data)


def test_memory_follows_the_input() -> None:
    """An array of the smallest elements: objects per element, bounded by the bytes given."""
    schema = _schemas("3.9.2")["FetchRequest"]
    topic = "0001 74 00000000"  # a v4 FetchTopic: "t", no partitions (7 bytes)
    n = 20_000
    head = "ffffffff 00000000 00000000 00000000 00"  # replica, wait, min, max, isolation
    data = bytes.fromhex((head + f"{n:08x}" + topic * n).replace(" ", ""))
    tracemalloc.start()
    try:
        m = read_message(schema, 4, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(m.Topics) == n
    assert peak < 200 * len(data)


# ------------------------------------------------------------------------------ write errors


def test_write_errors_are_kafkas(toy: MessageSchema) -> None:
    top = toy.struct
    m = Message(top, Port=1)
    with pytest.raises(
        UnsupportedVersionError, match="Attempted to write a non-default port at version 0"
    ):
        write_message(toy, 0, m)
    m = Message(top, Big=5)  # ignorable: dropped silently where absent (never absent here)
    write_message(toy, 0, m)
    m = Message(top, Home=Message(toy.structs["Place"], Host="x"))
    with pytest.raises(UnsupportedVersionError, match="non-default home at version 0"):
        write_message(toy, 0, m)
    m = Message(top)
    m.unknown_tagged_fields = [RawTaggedField(9, b"")]
    with pytest.raises(UnsupportedVersionError, match="Tagged fields were set, but version 1"):
        write_message(toy, 1, m)
    m.unknown_tagged_fields = [RawTaggedField(9, b""), RawTaggedField(4, b"")]
    with pytest.raises(RawTagError, match="tag 4 comes after tag 9"):
        write_message(toy, 2, m)
    m = Message(top, Name="x" * 0x8000)
    with pytest.raises(FieldTooLongError, match="'name' field is too long to be serialized"):
        write_message(toy, 2, m)
    m = Message(top, Labels=["y" * 0x8000])
    with pytest.raises(FieldTooLongError, match="'labelsElement' field is too long"):
        write_message(toy, 2, m)
    # the sizing error comes first, though the non-default field comes first in the message
    m = Message(top, Port=1, Labels=["y" * 0x8000])
    with pytest.raises(FieldTooLongError):
        write_message(toy, 0, m)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("Small", 300),
        ("Small", True),
        ("Port", -1),
        ("Big", 2**32),
        ("Id", "x"),
        ("Name", 5),
        ("Blob", "text"),
        ("Ids", 5),
        ("Flag", 1),
        ("Ratio", "1"),
    ],
)
def test_values_java_could_not_hold(toy: MessageSchema, field: str, value: Any) -> None:
    with pytest.raises(EncodeError):
        write_message(toy, 3, Message(toy.struct, **{field: value}))


def test_message_fields_are_checked(toy: MessageSchema) -> None:
    m = Message(toy.struct)
    with pytest.raises(KeyError):
        m["Nope"] = 1
    with pytest.raises(AttributeError):
        _ = m.Nope
    with pytest.raises(EncodeError, match="expected a ToyResponse"):
        write_message(toy, 3, Message(toy.structs["Place"]))


# -------------------------------------------------------------------------------- JSON text


def test_the_toy_as_json(toy: MessageSchema) -> None:
    place = toy.structs["Place"]
    m = Message(toy.struct, Name='q"\\\n\x01\x7f/é', Blob=b"\xff\x00", Recs=b"abc", Ratio=1e7)
    m.Id = read_kafka_uuid("AAAAAAAAAAAAAAAAAAAAAQ")
    m.Parts = [Message(toy.structs["Part"], Index=1, Where=Message(place, Host="h"))]
    m.Epoch = 5
    assert write_message_json(toy, 3, m) == (
        '{"flag":false,"small":-1,"port":9092,"big":0,"ratio":1.0E7,'
        '"id":"AAAAAAAAAAAAAAAAAAAAAQ","name":"q\\"\\\\\\n\\u0001\x7f/é","blob":"/wA=",'
        '"recs":"","ids":[],"labels":[],"parts":[{"index":1,"where":{"host":"h"}}],'
        '"home":null,"epoch":5}'
    )
    node = message_json_node(toy, 3, m, serialize_records=False)
    assert node["recsSizeInBytes"] == 3 and "recs" not in node
    assert list(message_json_node(toy, 0, Message(toy.struct)))[:3] == ["flag", "small", "big"]


@pytest.mark.parametrize(
    ("value", "text"),
    # Double.toString's documented forms (java.lang.Double javadoc)
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (123.456, "123.456"),
        (-1.5e300, "-1.5E300"),
        (5e-324, "4.9E-324"),
        (1e-323, "9.9E-324"),
        (1e23, "1.0E23"),
        (2e-5, "2.0E-5"),
        (0.5, "0.5"),
        (9.5e-5, "9.5E-5"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_double_string(value: float, text: str) -> None:
    assert java_double_string(value) == text


def test_jackson_text() -> None:
    assert write_json_text({"a": [1, None, True, b"\x00", 2.5, float("nan")], "b": {}}) == (
        '{"a":[1,null,true,"AA==",2.5,"NaN"],"b":{}}'
    )
    assert write_json_text("\b\t\n\f\r\x1f\u2028") == '"\\b\\t\\n\\f\\r\\u001F\u2028"'
    u = uuid.UUID(int=1)
    assert (
        kafka_uuid_string(u) == "AAAAAAAAAAAAAAAAAAAAAQ"
        and read_kafka_uuid("AAAAAAAAAAAAAAAAAAAAAQ") == u
    )
