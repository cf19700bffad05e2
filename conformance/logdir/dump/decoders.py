"""The message parsers of DumpLogSegments' decoder options: what a record's key and value
print as.

``--cluster-metadata-decoder`` (Kafka 3.0+, ``ClusterMetadataLogMessageParser``): the value
is a metadata record frame, read by ``MetadataRecordSerde`` (``AbstractApiMessageSerde.read``)
and printed as ``{"type":"<MetadataRecordType>","version":V,"data":<JsonConverter>}``; the
key is never printed. Any exception becomes the payload text
:attr:`DumpFormat.metadata_decoder_error <conformance.logdir.dump.formats.DumpFormat>`
(``Error at <offset>, skipping. <getMessage()>``).

==========================  ==================================================================
frame                       read as (``AbstractApiMessageSerde.read``)
==========================  ==================================================================
frame version               unsigned varint, must be 1 (``DEFAULT_FRAME_VERSION``)
type (apiKey)               unsigned varint, ``MetadataRecordType.fromId``
version                     unsigned varint, the version the message is read at
message                     the generated ``read(accessor, version)``; no byte may follow it
==========================  ==================================================================

Each unsigned varint is a Java ``int``: a failure reading it is
``Error while reading <entity>``; above ``Short.MAX_VALUE`` (an int that is not negative) it is
``Value for <entity> was too large.``; otherwise it is cast to ``short``.

Which types and versions a release decodes is its own definitions' business: the parser is
built from the :class:`~conformance.messages.Schemas` of the release printed (the caller reads
them from that release's jars, ``jvm.message_defs.message_schemas``): the ``metadata``
definitions of ``kafka-metadata``'s ``common/metadata/``, the ones Kafka's
``MetadataRecordTypeGenerator`` turns into ``MetadataRecordType``.
"""

from __future__ import annotations

from conformance.errors import DecodeError
from conformance.logdir.dump.javaemu import Uncaught
from conformance.messages import MessageSchema, Schemas, message_json_node, read_message_at
from conformance.messages.json_text import write_json_text
from conformance.primitives.java import wrap32
from conformance.primitives.varint import read_unsigned_varint

__all__ = [
    "COORDINATOR_JARS",
    "ClusterMetadataParser",
    "CoordinatorRecordParser",
    "coordinator_record_types",
    "metadata_record_type_name",
]

#: ``AbstractApiMessageSerde.DEFAULT_FRAME_VERSION``
DEFAULT_FRAME_VERSION = 1
#: where the definitions of ``MetadataRecordType`` live in the jars
_METADATA_ENTRY = "!common/metadata/"
_SHORT_MAX = 0x7FFF


class MetadataParseError(DecodeError):
    """``org.apache.kafka.server.common.serialization.MetadataParseException``."""

    kafka_exception = "org.apache.kafka.server.common.serialization.MetadataParseException"


def metadata_record_type_name(definition_name: str) -> str:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``: the ``MetadataRecordType``
    constant (``RegisterBrokerRecord`` -> ``REGISTER_BROKER_RECORD``)."""
    out: list[str] = []
    prev_capital = True
    for c in definition_name:
        if c.isupper():
            if not prev_capital:
                out.append("_")
            out.append(c.lower())
            prev_capital = True
        else:
            out.append(c)
            prev_capital = False
    return "".join(out).upper()


def _short(data: bytes, pos: int, entity: str) -> tuple[int, int]:
    """``unsignedIntToShort(input, entity)``."""
    try:
        raw, pos = read_unsigned_varint(data, pos, len(data))
    except DecodeError as e:
        raise MetadataParseError(f"Error while reading {entity}", cause=e) from None
    val = wrap32(raw)  # readUnsignedVarint returns a Java int
    if val > _SHORT_MAX:
        raise MetadataParseError(f"Value for {entity} was too large.")
    return (val + 0x8000) % 0x10000 - 0x8000, pos


class ClusterMetadataParser:
    """``ClusterMetadataLogMessageParser`` over one release's metadata record definitions."""

    def __init__(self, schemas: Schemas, error_text: str, entry: str = _METADATA_ENTRY) -> None:
        """``entry``: where the record definitions are in the jars (``!message/``: the remote
        log metadata records of ``kafka-storage``, read by the same serde)."""
        self.types: dict[int, MessageSchema] = {}
        for name in schemas:
            s = schemas[name]
            if s.type == "metadata" and entry in s.source and s.api_key is not None:
                self.types[s.api_key] = s
        self.error_text = error_text

    def read_frame(self, value: bytes | None) -> tuple[MessageSchema, int, object]:
        """``MetadataRecordSerde.read``: the record's definition, version and message."""
        if value is None:  # readUnsignedVarint on a null buffer: a NullPointerException
            raise MetadataParseError("Error while reading frame version")
        frame, pos = _short(value, 0, "frame version")
        if frame == 0:
            raise MetadataParseError(
                "Could not deserialize metadata record with frame version 0. Note that upgrades "
                "from the preview release of KRaft in 2.8 to newer versions are not supported."
            )
        if frame != DEFAULT_FRAME_VERSION:
            raise MetadataParseError(
                "Could not deserialize metadata record due to unknown frame version "
                f"{frame}(only frame version {DEFAULT_FRAME_VERSION} is supported)"
            )
        api_key, pos = _short(value, pos, "type")
        version, pos = _short(value, pos, "version")
        schema = self.types.get(api_key)
        if schema is None:  # MetadataParseException(cause): the cause's toString()
            raise MetadataParseError(
                "org.apache.kafka.common.errors.UnsupportedVersionException: "
                f"Unknown metadata id {api_key}"
            )
        try:
            message, end = read_message_at(schema, version, value, pos)
        except DecodeError as e:
            raise MetadataParseError(
                f"Failed to deserialize record with type {api_key}", cause=e
            ) from None
        if end < len(value):
            raise MetadataParseError(f"Found {len(value) - end} byte(s) of garbage after {api_key}")
        return schema, version, message

    def payload(self, offset: int, value: bytes | None) -> str:
        """The payload text of the record at ``offset`` (never raises a Kafka exception: the
        tool catches every ``Throwable``)."""
        try:
            schema, version, message = self.read_frame(value)
            node = {
                "type": metadata_record_type_name(schema.name),
                "version": version,
                "data": message_json_node(schema, version, message),  # type: ignore[arg-type]
            }
            return write_json_text(node)
        except DecodeError as e:
            text = "null" if e.message is None else e.message
            return self.error_text.format(offset=offset, message=text)


# ------------------------------------------------------------------ coordinator record parsers
#
# ``--offsets-decoder`` (JSON from Kafka 3.8, ``OffsetsMessageParser``),
# ``--transaction-log-decoder`` (JSON from 4.1) and ``--share-group-state-decoder`` (4.0+;
# 4.0 names the value's version "type"): the key is ``int16 type`` + the key message
# read at version ``type``, the value ``int16 version`` + the value message
# (``CoordinatorRecordSerde.deserialize``); printed as
# ``key: {"type":"<type>","data":{...}} payload: {"version":"<version>","data":{...}}``,
# ``payload: <DELETE>`` for a null value. A record without a key stops the run
# (``RuntimeException``); an unknown type prints ``key: Unknown record type <t> at offset <o>,
# skipping.``, any other exception ``key: Error at offset <o>, skipping. <getMessage()>``.

#: the jar whose definitions each coordinator decoder reads
COORDINATOR_JARS = {
    "offsets": "kafka-group-coordinator-",
    "transaction-log": "kafka-transaction-coordinator-",
    "share-group-state": "kafka-share-coordinator-",
}
#: ``ConsumerProtocol.PROTOCOL_TYPE``
_CONSUMER_PROTOCOL = "consumer"


class CoordinatorRecordError(DecodeError):
    """The ``RuntimeException`` of ``CoordinatorRecordSerde``."""


class _UnknownRecordType(Exception):
    def __init__(self, record_type: int) -> None:
        super().__init__(record_type)
        self.record_type = record_type


def coordinator_record_types(
    schemas: Schemas, jar: str, prefixes: tuple[str, ...] | None = None
) -> dict[int, tuple[MessageSchema, int, MessageSchema]]:
    """Record type -> (key definition, the version the key is read at, value definition) of
    the coordinator whose jar name starts with ``jar``: before 4.0 a key's type is each of its
    valid versions (``OffsetCommitKey`` 0-1, ``GroupMetadataKey`` 2), read at that version,
    the value at any version; from 4.0 its ``apiKey`` (``coordinator-key``; the generated
    reader is given the type as version but its fields have none: read here at version 0, the
    key's only one), the value only at one of its valid versions (else ``Found an unknown
    record version``). ``prefixes``: only
    definitions whose name starts with one of them (the types the tool's ``prepareKey``
    prints; None: all)."""
    out: dict[int, tuple[MessageSchema, int, MessageSchema]] = {}
    for name in schemas:
        s = schemas[name]
        if f"{jar}" not in s.source or not name.endswith("Key"):
            continue
        if prefixes is not None and not name.startswith(prefixes):
            continue
        try:
            value = schemas[name[: -len("Key")] + "Value"]
        except KeyError:
            continue
        if s.type == "coordinator-key" and s.api_key is not None:
            out[s.api_key] = (s, 0, value)
        elif s.type == "data":
            v = s.valid_versions
            for t in range(v.lowest, v.highest + 1):
                out[t] = (s, t, value)
    return out


class CoordinatorRecordParser:
    """``OffsetsMessageParser`` (3.8+) / ``TransactionLogMessageParser`` (4.1+) over one
    release's coordinator record definitions."""

    def __init__(
        self,
        types: dict[int, tuple[MessageSchema, int, MessageSchema]],
        missing_key_text: str,
        schemas: Schemas | None = None,
        value_label: str = "version",
        check_value_version: bool = True,
    ) -> None:
        self.types = types
        self.missing_key_text = missing_key_text
        #: the name of the value's version in the payload ("type" in 4.0's share group state)
        self.value_label = value_label
        #: a value version outside the definition's is an error (4.0+ ``CoordinatorRecordSerde``)
        self.check_value_version = check_value_version
        #: ``ConsumerProtocolSubscription``/``Assignment`` (group metadata members), if known
        self.protocol: dict[str, MessageSchema] = {}
        if schemas is not None:
            for field, name in (
                ("subscription", "ConsumerProtocolSubscription"),
                ("assignment", "ConsumerProtocolAssignment"),
            ):
                try:
                    self.protocol[field] = schemas[name]
                except KeyError:
                    pass

    @staticmethod
    def _version(buf: bytes, name: str) -> int:
        if len(buf) < 2:
            raise CoordinatorRecordError(f"Could not read version from {name}'s buffer.")
        return int.from_bytes(buf[:2], "big", signed=True)

    @staticmethod
    def _read(
        schema: MessageSchema, buf: bytes, version: int, name: str, shown: int | None = None
    ) -> object:
        """``readMessage``; ``shown``: the version its error names, if not ``version``."""
        shown = version if shown is None else shown
        try:
            message, _ = read_message_at(schema, version, buf, 2)
        except DecodeError as e:
            text = "null" if e.message is None else e.message
            raise CoordinatorRecordError(
                f"Could not read record with version {shown} from {name}'s buffer due to: {text}."
            ) from None
        return message

    def _group_members(self, node: dict[str, object], message: object) -> None:
        """``prepareGroupMetadataValue``: a consumer group's members' subscription and
        assignment bytes replaced by their ``ConsumerProtocol*`` JSON (kept on a failure)."""
        if node.get("protocolType") != _CONSUMER_PROTOCOL:
            return
        members = node.get("members")
        if not isinstance(members, list):
            return
        for member_node, member in zip(members, message.members, strict=False):  # type: ignore[attr-defined]
            for field, schema in self.protocol.items():
                if field not in member_node:
                    continue
                raw = getattr(member, field)
                try:
                    if raw is None or len(raw) < 2:
                        raise CoordinatorRecordError("underflow")
                    version = int.from_bytes(bytes(raw[:2]), "big", signed=True)
                    data, _ = read_message_at(schema, version, bytes(raw), 2)
                    member_node[field] = message_json_node(schema, version, data)  # type: ignore[arg-type]
                except DecodeError:
                    pass  # "Swallow and keep the original bytes."

    def read_record(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> tuple[str, str | None]:
        """The key and payload texts of the record at ``offset`` (raises the tool's
        ``RuntimeException`` for a record without a key)."""
        if key is None:
            raise Uncaught(
                "java.lang.RuntimeException", self.missing_key_text.format(offset=offset)
            )
        try:
            record_type = self._version(key, "key")
            if record_type not in self.types:
                raise _UnknownRecordType(record_type)
            key_schema, key_version, value_schema = self.types[record_type]
            key_message = self._read(key_schema, key, key_version, "key", record_type)
            payload = "<DELETE>"
            if value is not None:
                version = self._version(value, "value")
                if self.check_value_version and version not in value_schema.valid_versions:
                    raise CoordinatorRecordError(
                        f"Found an unknown record version {version} for {record_type} type"
                    )
                value_message = self._read(value_schema, value, version, "value")
                data = message_json_node(value_schema, version, value_message)  # type: ignore[arg-type]
                if value_schema.name == "GroupMetadataValue":
                    self._group_members(data, value_message)
                payload = write_json_text({self.value_label: str(version), "data": data})
            key_node = {
                "type": str(record_type),
                "data": message_json_node(key_schema, key_version, key_message),  # type: ignore[arg-type]
            }
            return write_json_text(key_node), payload
        except _UnknownRecordType as e:
            return f"Unknown record type {e.record_type} at offset {offset}, skipping.", None
        except DecodeError as e:
            text = "null" if e.message is None else e.message
            return f"Error at offset {offset}, skipping. {text}", None
