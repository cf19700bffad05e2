"""Kafka's protocol messages, metadata records and coordinator keys/values, read, written and
printed from Kafka's own JSON definitions (docs/messages.md).

* ``versions``: version ranges and the generated code's version tests (``branch``);
* ``schema``: the definitions as a typed model (:func:`read_schema`, :class:`Schemas`);
* ``value``: :class:`Message` and :class:`RawTaggedField`;
* ``plan``: what the generated code does per struct and version, compiled once;
* ``message``: :func:`read_message` / :func:`write_message`, the generated
  ``Readable``/``Writable`` semantics;
* ``json_text``: :func:`write_message_json`, the generated ``JsonConverter`` + Jackson's text;
* ``sample``: random messages a version writes and reads back unchanged (tests, Hypothesis).

Sans-IO: the definitions' texts come from the caller (``conformance.jvm.message_defs`` reads
them from a Kafka version's jars).
"""

from __future__ import annotations

from conformance.messages.json_text import (
    java_double_string,
    message_json_node,
    write_json_text,
    write_message_json,
)
from conformance.messages.message import read_message, read_message_at, write_message
from conformance.messages.schema import (
    FieldSpec,
    FieldType,
    MessageSchema,
    SchemaError,
    Schemas,
    StructSpec,
    Versions,
    kafka_uuid_string,
    read_kafka_uuid,
    read_schema,
    read_schemas,
)
from conformance.messages.value import Message, RawTaggedField

__all__ = [
    "FieldSpec",
    "FieldType",
    "Message",
    "MessageSchema",
    "RawTaggedField",
    "SchemaError",
    "Schemas",
    "StructSpec",
    "Versions",
    "java_double_string",
    "kafka_uuid_string",
    "message_json_node",
    "read_kafka_uuid",
    "read_message",
    "read_message_at",
    "read_schema",
    "read_schemas",
    "write_json_text",
    "write_message",
    "write_message_json",
]
