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
from conformance.messages import MessageSchema, Schemas, message_json_node, read_message_at
from conformance.messages.json_text import write_json_text
from conformance.primitives.java import wrap32
from conformance.primitives.varint import read_unsigned_varint

__all__ = ["ClusterMetadataParser", "metadata_record_type_name"]

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

    def __init__(self, schemas: Schemas, error_text: str) -> None:
        self.types: dict[int, MessageSchema] = {}
        for name in schemas:
            s = schemas[name]
            if s.type == "metadata" and _METADATA_ENTRY in s.source and s.api_key is not None:
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
