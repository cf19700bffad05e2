"""The text printers of ``--offsets-decoder`` (before Kafka 3.8) and
``--transaction-log-decoder`` (before 4.1): Scala code of ``DumpLogSegments`` (0.10.2 - 2.4.0)
and ``GroupMetadataManager`` / ``TransactionLog.formatRecordKeyAndValue`` (2.4.1+).

What they print is the release's facts (:attr:`DumpFormat.offsets_decoder_text` and
:attr:`DumpFormat.transaction_log_decoder_text`, dicts documented at :data:`OFFSETS_KEYS` /
:data:`TRANSACTION_KEYS`); this module never asks for a version. Unlike the JSON printers
(``decoders``), nothing is caught: any exception of the reading ends the run (exit 1).

How a release reads its records is a fact too: ``"struct"`` (hand-written
``org.apache.kafka.common.protocol.types.Schema`` objects, given as field lists in the facts,
read as ``Schema.read`` does: ``Error reading field '<name>': <message>``) or
``"generated"`` (the release's own JSON definitions, read from its jars, as the generated
classes read them; 2.8+ for the group coordinator, KAFKA-10497, and the transaction
coordinator, KAFKA-10736).

Member and partition order is that of the Scala collections holding them: a
``mutable.HashMap`` of members by id (Scala 2.11 / 2.13, as ``DumpFormat.error_maps``) and,
for transactions, a ``mutable.HashSet`` of ``TopicPartition`` (Scala 2.13's buckets, or 2.11's
``FlatHashTable``; a 2.11 set built from an immutable set of more than 4 partitions of one
topic, whose order is not reproduced, stops ``dump`` with :class:`NotReproducedError`, as
does a collection the release's generated code would read element by element).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.errors import (
    BufferUnderflowError,
    CollectionSizeError,
    DecodeError,
    IllegalStateError,
    KafkaError,
    NullPointerError,
)
from conformance.logdir.dump.javaemu import (
    Scala211HashMap,
    ScalaHashMap,
    _i32,
    java_string_hash,
)
from conformance.messages import MessageSchema, Schemas, read_message_at
from conformance.messages.json_text import write_json_text
from conformance.primitives.java import java_utf8

__all__ = [
    "OFFSETS_KEYS",
    "TRANSACTION_KEYS",
    "OffsetsTextParser",
    "SchemaError",
    "TransactionTextParser",
    "needs_definitions",
    "read_struct",
]

#: the entries of ``DumpFormat.offsets_decoder_text``
OFFSETS_KEYS = {
    "reader": '"struct" or "generated" (OffsetCommitKey, GroupMetadataKey, ... definitions)',
    "keys": 'struct: key version -> ("offset" | "group", field list)',
    "offset_values": "struct: value version -> field list (an offset commit)",
    "group_values": "struct: value version -> field list (a group's metadata)",
    "unknown_key": "(exception class, message) of an unknown key version ({version})",
    "unknown_offset_value": "(exception class, message) of an unknown offset value version",
    "unknown_group_value": "(exception class, message) of an unknown group value version",
    "null_value": '"hidden" (nothing printed, not even the key) or "delete" (<DELETE>)',
    "missing_key": "the KafkaException's message for a record without a key",
    "offset_key": "key text of an offset commit ({group}, {topic}, {partition})",
    "offset_value": "(value text without metadata, with it) ({offset}, {metadata})",
    "group_key": 'key text of group metadata ({group}); "json": {"metadata":group}',
    "group_value": 'value text of group metadata; "json": Jackson over 4 entries',
    "consumer_protocol": '"struct" or "generated": how assignments are read',
    "null_user_data": "the NullPointerException's message for a null user data (None: '')",
    "unsupported_assignment": "the SchemaException's message of a negative version",
    "subscribed_topics": '"generated": loadGroup reads subscriptions (2.7+ generated reader)',
    "collections_checked": "generated code checks collection sizes (absent: True)",
}
#: the entries of ``DumpFormat.transaction_log_decoder_text``
TRANSACTION_KEYS = {
    "reader": '"struct" or "generated" (TransactionLogKey/Value definitions)',
    "key": "struct: field list of the key (version 0)",
    "values": "struct: value version -> field list",
    "unknown_key": "(exception class, message) of an unknown key version",
    "unknown_value": "(exception class, message) of an unknown value version",
    "key_text": "key text ({transactional_id})",
    "value_text": "value text ({producer_id}, {producer_epoch}, {state}, {partitions}, ...)",
    "partitions": '"Set" (toString) or "list" (mkString("[", ",", "]"))',
    "null_value": '"npe" (NullPointerException reading it) or "delete" (<DELETE>)',
    "null_key": "the NullPointerException's message for a record without a key",
    "null_value_npe": 'the NullPointerException\'s message for a null value ("npe")',
    "states": "transaction status byte -> state name",
    "unknown_state": "the IllegalStateException's message of another status ({status})",
    "null_partitions": "the NullPointerException's message for null partitions (not Empty)",
    "collections_checked": "generated code checks collection sizes (absent: True)",
}

_SCHEMA_EXCEPTION = "org.apache.kafka.common.protocol.types.SchemaException"


def needs_definitions(facts: Mapping[str, Any]) -> bool:
    """Whether a text printer reads anything with the release's JSON definitions (2.7+)."""
    return "generated" in (
        facts.get("reader"),
        facts.get("consumer_protocol"),
        facts.get("subscribed_topics"),
    )


_KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"


class NotReproducedError(DecodeError):
    """A record whose text depends on something the kit does not reproduce: the run stops
    with this (naming the kit, not a Java class)."""

    kafka_exception = "kafka-conformance: not reproduced"


class SchemaError(DecodeError):
    """``org.apache.kafka.common.protocol.types.SchemaException``."""

    kafka_exception = _SCHEMA_EXCEPTION


def _raise(spec: tuple[str, str], **values: object) -> None:
    cls, text = spec
    raise DecodeError(text.format(**values), java_class=cls)


# ---------------------------------------------------------------------- Schema.read (Struct)

FieldList = tuple[tuple[str, Any], ...]


def read_fields(spec: str) -> FieldList:
    """``"a:int32,b:[c:string,d:bytes],e:[int32]"`` -> field list (the facts' notation of a
    hand-written ``Schema``: types int8, int16, int32, int64, string, nullable_string, bytes,
    nullable_bytes, ``[fields]`` an array of structs, ``[type]`` an array of a type,
    ``?[...]`` a nullable array)."""
    out: list[tuple[str, Any]] = []
    depth = 0
    start = 0
    parts: list[str] = []
    for i, c in enumerate(spec):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    for part in parts:
        name, _, kind = part.partition(":")
        out.append((name, _read_type(kind)))
    return tuple(out)


def _read_type(kind: str) -> Any:
    nullable = kind.startswith("?[")  # ArrayOf.nullable
    if nullable:
        kind = kind[1:]
    if kind.startswith("["):
        inner = kind[1:-1]
        element = read_fields(inner) if ":" in inner else inner
        return ("nullable_array" if nullable else "array", element)
    return kind


_FIXED = {"int8": 1, "int16": 2, "int32": 4, "int64": 8}


class _StructReader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def fixed(self, kind: str) -> int:
        n = _FIXED[kind]
        if self.remaining() < n:
            raise BufferUnderflowError()
        v = int.from_bytes(self.data[self.pos : self.pos + n], "big", signed=True)
        self.pos += n
        return v

    def read(self, kind: Any) -> Any:
        if isinstance(kind, tuple):
            size = self.fixed("int32")
            if size < 0 and kind[0] == "nullable_array":
                return None
            if size < 0:
                raise SchemaError(f"Array size {size} cannot be negative")
            if size > self.remaining():
                raise SchemaError(
                    f"Error reading array of size {size}, only {self.remaining()} bytes available"
                )
            element = kind[1]
            if isinstance(element, tuple):
                return [self.struct(element) for _ in range(size)]
            return [self.read(element) for _ in range(size)]
        if kind in _FIXED:
            return self.fixed(kind)
        if kind in ("string", "nullable_string"):
            length = self.fixed("int16")
            if length < 0:
                if kind == "nullable_string":
                    return None
                raise SchemaError(f"String length {length} cannot be negative")
            if length > self.remaining():
                raise SchemaError(
                    f"Error reading string of length {length}, only {self.remaining()} bytes "
                    "available"
                )
            text = java_utf8(self.data[self.pos : self.pos + length])
            self.pos += length
            return text
        # bytes, nullable_bytes
        size = self.fixed("int32")
        if size < 0:
            if kind == "nullable_bytes":
                return None
            raise SchemaError(f"Bytes size {size} cannot be negative")
        if size > self.remaining():
            raise SchemaError(
                f"Error reading bytes of size {size}, only {self.remaining()} bytes available"
            )
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        return raw

    def struct(self, fields: FieldList) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, kind in fields:
            try:
                out[name] = self.read(kind)
            except DecodeError as e:
                text = e.kafka_exception if e.message is None else e.message
                raise SchemaError(f"Error reading field '{name}': {text}") from None
        return out


def read_struct(fields: FieldList, data: bytes, pos: int) -> tuple[dict[str, Any], int]:
    """``Schema.read(buffer)`` at ``pos``: the values by field name, and the position after."""
    r = _StructReader(data, pos)
    return r.struct(fields), r.pos


# ------------------------------------------------------------------ generated (definitions)


def _snake(name: str) -> str:
    out: list[str] = []
    for c in name:
        if c.isupper():
            out.append("_" + c.lower())
        else:
            out.append(c)
    return "".join(out).lstrip("_")


def _as_dict(value: Any) -> Any:
    """A read message as the struct reader's dicts (snake_case field names)."""
    values = getattr(value, "values", None)
    if isinstance(values, dict) and hasattr(value, "struct"):
        return {_snake(k): _as_dict(v) for k, v in values.items()}
    if isinstance(value, list):
        return [_as_dict(v) for v in value]
    return value


def _generated(
    schema: MessageSchema, version: int, data: bytes, pos: int, checked: bool = True
) -> dict[str, Any]:
    """The generated ``new X(accessor, version)``; ``checked``: the release's generated code
    checks a collection's size against the bytes left (2.8.2, 3.0.2, 3.1.2, 3.2.2, 3.3+);
    without it, it reads such a collection element by element, which is not reproduced."""
    try:
        message, _ = read_message_at(schema, version, data, pos)
    except CollectionSizeError:
        if checked:
            raise
        raise NotReproducedError(
            "a collection larger than the bytes left, read element by element by this "
            "release's generated code"
        ) from None
    return _as_dict(message)  # type: ignore[no-any-return]


def _short(data: bytes) -> int:
    """``buffer.getShort`` at the start."""
    if len(data) < 2:
        raise BufferUnderflowError()
    return int.from_bytes(data[:2], "big", signed=True)


def _hex(raw: bytes) -> str:
    """``"%X".format(BigInt(1, bytes))`` ("" for no bytes)."""
    return "" if not raw else format(int.from_bytes(raw, "big"), "X")


def _topic_partitions(partitions: list[tuple[str, int]]) -> str:
    """``List<TopicPartition>.toString()``."""
    return "[" + ", ".join(f"{t}-{p}" for t, p in partitions) + "]"


# ------------------------------------------------------------------------ --offsets-decoder


class OffsetsTextParser:
    """``OffsetsMessageParser`` of a release printing text (0.10.2 - 3.7)."""

    def __init__(self, facts: Mapping[str, Any], schemas: Schemas | None, scala: str) -> None:
        self.facts = facts
        self.schemas = schemas
        self.scala = scala
        self._checked: bool = facts.get("collections_checked", True)
        if needs_definitions(facts) and schemas is None:
            raise ValueError("this release reads coordinator records with its definitions")

    # -- reading

    def _definition(self, name: str) -> MessageSchema:
        assert self.schemas is not None
        return self.schemas[name]

    def _read_key(self, key: bytes) -> tuple[str, dict[str, Any]] | None:
        version = _short(key)
        f = self.facts
        if f["reader"] == "struct":
            known = f["keys"].get(version)
            if known is None:
                _raise(f["unknown_key"], version=version)
            kind, spec = known
            return kind, read_struct(read_fields(spec), key, 2)[0]
        for kind, name in (("offset", "OffsetCommitKey"), ("group", "GroupMetadataKey")):
            s = self._definition(name)
            if version in s.valid_versions:
                return kind, _generated(s, version, key, 2, self._checked)
        if f["unknown_key"][0] is None:  # UnknownKey (KIP-915)
            return None
        _raise(f["unknown_key"], version=version)
        raise AssertionError  # pragma: no cover

    def _read_value(self, kind: str, value: bytes) -> dict[str, Any]:
        version = _short(value)
        f = self.facts
        if f["reader"] == "struct":
            spec = f[f"{kind}_values"].get(version)
            if spec is None:
                _raise(f[f"unknown_{kind}_value"], version=version)
            fields, _ = read_struct(read_fields(spec), value, 2)
        else:
            s = self._definition("OffsetCommitValue" if kind == "offset" else "GroupMetadataValue")
            if version not in s.valid_versions:
                _raise(f[f"unknown_{kind}_value"], version=version)
            fields = _generated(s, version, value, 2, self._checked)
        fields["version"] = version
        return fields

    def _assignment(self, raw: bytes) -> tuple[list[tuple[str, int]], bytes | None]:
        """``ConsumerProtocol.deserializeAssignment``."""
        if self.facts["consumer_protocol"] == "struct":
            header, pos = read_struct((("version", "int16"),), raw, 0)
            if header["version"] < 0:
                raise SchemaError(
                    self.facts["unsupported_assignment"].format(version=header["version"])
                )
            spec = "topic_partitions:[topic:string,partitions:[int32]],user_data:nullable_bytes"
            data, _ = read_struct(read_fields(spec), raw, pos)
            topics = data["topic_partitions"]
        else:
            if len(raw) < 2:
                raise SchemaError("Buffer underflow while parsing consumer protocol's header")
            version = _short(raw)
            s = self._definition("ConsumerProtocolAssignment")
            if version < s.valid_versions.lowest:
                raise SchemaError(self.facts["unsupported_assignment"].format(version=version))
            version = min(version, s.valid_versions.highest)
            try:
                data = _generated(s, version, raw, 2, self._checked)
            except BufferUnderflowError:
                raise SchemaError(
                    "Buffer underflow while parsing consumer protocol's assignment"
                ) from None
            topics = data["assigned_partitions"]
        partitions = [(t["topic"], p) for t in topics for p in t["partitions"]]
        return partitions, data["user_data"]

    def _members(self, group: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``group.allMemberMetadata``: the values of a ``mutable.HashMap`` by member id."""
        table: Any = Scala211HashMap() if self.scala == "scala-2.11" else ScalaHashMap()
        for m in group["members"]:
            table.put(m["member_id"], m)
        return [m for _, m in table.items()]

    # -- printing

    def _subscribed_topics(self, group: dict[str, Any], members: list[dict[str, Any]]) -> None:
        """``GroupMetadata.computeSubscribedTopics`` (2.4+, run by ``loadGroup``): each
        member's subscription read at version 0; a ``SchemaException`` is logged (a WARN
        line on stderr, not reproduced: docs/dump.md) and swallowed, anything else escapes.
        Hand-written schemas only throw ``SchemaException``s, so only generated readers
        (``"generated"``) can end the run here."""
        if self.facts.get("subscribed_topics") != "generated":
            return
        if group["protocol_type"] != "consumer" or group["protocol"] is None or not members:
            return
        s = self._definition("ConsumerProtocolSubscription")
        for member in members:
            raw = member["subscription"]
            if len(raw) < 2:
                return  # SchemaException: Buffer underflow while parsing ... header
            try:
                _generated(s, 0, raw, 2, self._checked)
            except BufferUnderflowError:
                return  # SchemaException: Buffer underflow while parsing ... subscription

    def _group_value(self, group: dict[str, Any]) -> str:
        protocol_type = group["protocol_type"]
        self._subscribed_topics(group, self._members(group))
        assignment: list[str] = []
        for member in self._members(group):
            if protocol_type == "consumer":
                partitions, user_data = self._assignment(member["assignment"])
                if user_data is None and self.facts["null_user_data"] is not None:
                    # Utils.toArray(null) (before 2.4.1's Option)
                    raise NullPointerError(self.facts["null_user_data"])
                text = "" if user_data is None else _hex(user_data)
                shown = f"{member['member_id']}={_topic_partitions(partitions)}"
                assignment.append(shown if not text else f"{shown}:{text}")
            else:
                assignment.append(f"{member['member_id']}={_hex(member['assignment'])}")
        joined = "{" + ",".join(assignment) + "}"
        template = self.facts["group_value"]
        if template == "json":
            return write_json_text(
                {
                    "protocolType": protocol_type,
                    "protocol": group["protocol"],
                    "generationId": group["generation"],
                    "assignment": joined,
                }
            )
        protocol = "null" if group["protocol"] is None else group["protocol"]
        return template.format(
            protocol_type=protocol_type,
            protocol=protocol,
            generation=group["generation"],
            assignment=joined,
        )

    def read_record(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> tuple[str | None, str | None]:
        f = self.facts
        if value is None and f["null_value"] == "hidden":
            return None, None
        if key is None:
            raise KafkaError(f["missing_key"])
        read = self._read_key(key)
        if read is None:
            return f["unknown_key"][1].format(version=_short(key)), None
        kind, k = read
        if kind == "offset":
            key_text = f["offset_key"].format(**k)
        else:
            key_text = (
                write_json_text({"metadata": k["group"]})
                if f["group_key"] == "json"
                else f["group_key"].format(**k)
            )
        if value is None:
            return key_text, "<DELETE>"
        v = self._read_value(kind, value)
        if kind == "offset":
            plain, with_metadata = f["offset_value"]
            text = (plain if v["metadata"] == "" else with_metadata).format(
                offset=v["offset"], metadata=v["metadata"]
            )
            return key_text, text
        return key_text, self._group_value(v)


# --------------------------------------------------------------- --transaction-log-decoder


class _ScalaHashSet(ScalaHashMap):
    """A Scala 2.13 ``mutable.HashSet[TopicPartition]``: as the map, by
    ``TopicPartition.hashCode``."""

    def __init__(self) -> None:
        super().__init__()
        self._hashes: dict[Any, int] = {}

    def add(self, tp: tuple[str, int]) -> None:
        topic, partition = tp
        self._hashes[tp] = _topic_partition_hash(tp)
        self.put(tp, True)  # type: ignore[arg-type]

    def _hash(self, key: Any) -> int:  # type: ignore[override]
        h = self._hashes[key] & 0xFFFFFFFF
        return _i32(h ^ (h >> 16))


def _topic_partition_hash(tp: tuple[str, int]) -> int:
    """``TopicPartition.hashCode``."""
    return _i32(31 * (31 + tp[1]) + java_string_hash(tp[0]))


class _Scala211HashSet:
    """A Scala 2.11 ``mutable.HashSet`` (``FlatHashTable``): open addressing over 32 slots
    (load factor 0.45), index ``(improve(hash, seed) >>> (32 - bitCount(size - 1))) &
    (size - 1)`` with ``improve`` = ``byteswap32`` rotated right by the seed
    (``bitCount(size - 1)``), linear probing; growing doubles the table and re-adds the old
    slots in order; iteration runs over the slots in order."""

    def __init__(self) -> None:
        self._table: list[tuple[str, int] | None] = [None] * 32

    def _index(self, h: int) -> int:
        ones = len(self._table) - 1
        seed = bin(ones).count("1")
        hc = _i32(h * 0x9E3775CD)
        hc = _i32(int.from_bytes((hc & 0xFFFFFFFF).to_bytes(4, "big"), "little"))
        hc = _i32(hc * 0x9E3775CD) & 0xFFFFFFFF
        rotation = seed % 32
        rotated = ((hc >> rotation) | (hc << (32 - rotation))) & 0xFFFFFFFF
        return (rotated >> (32 - seed)) & ones

    def add(self, tp: tuple[str, int]) -> None:
        i = self._index(_topic_partition_hash(tp))
        while self._table[i] is not None:
            if self._table[i] == tp:
                return
            i = (i + 1) % len(self._table)
        self._table[i] = tp
        count = sum(1 for e in self._table if e is not None)
        if count >= len(self._table) * 450 // 1000:
            old = self._table
            self._table = [None] * (2 * len(old))
            for e in old:
                if e is not None:
                    self.add(e)

    def items(self) -> list[tuple[tuple[str, int], bool]]:
        return [(e, True) for e in self._table if e is not None]


class TransactionTextParser:
    """``TransactionLogMessageParser`` of a release printing text (0.11 - 4.0)."""

    def __init__(self, facts: Mapping[str, Any], schemas: Schemas | None) -> None:
        self.facts = facts
        self.schemas = schemas
        if needs_definitions(facts) and schemas is None:
            raise ValueError("this release reads coordinator records with its definitions")

    def _read(self, name: str, versions: Any, unknown: tuple[str, str], data: bytes) -> Any:
        version = _short(data)
        if unknown[0] is None:
            assert self.schemas is not None
            if version not in self.schemas[name].valid_versions:
                return None
        if self.facts["reader"] == "struct":
            spec = versions.get(version)
            if spec is None:
                _raise(unknown, version=version)
            return read_struct(read_fields(spec), data, 2)[0]
        assert self.schemas is not None
        s = self.schemas[name]
        if version not in s.valid_versions:
            _raise(unknown, version=version)
        return _generated(s, version, data, 2, self.facts.get("collections_checked", True))

    def read_record(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> tuple[str | None, str | None]:
        f = self.facts
        if key is None:
            raise NullPointerError(f["null_key"])
        k = self._read("TransactionLogKey", {0: f.get("key")}, f["unknown_key"], key)
        if k is None:  # UnknownKey (KIP-915)
            return f["unknown_key"][1].format(version=_short(key)), None
        key_text = f["key_text"].format(transactional_id=k["transactional_id"])
        if value is None:
            if f["null_value"] == "delete":
                return key_text, "<DELETE>"
            raise NullPointerError(f["null_value_npe"])  # reading a field of a null metadata
        v = self._read("TransactionLogValue", f.get("values", {}), f["unknown_value"], value)
        status = v["transaction_status"]
        timeout = v.get("transaction_timeout_ms", v.get("transaction_timeout"))
        last_update = v.get(
            "transaction_last_update_timestamp_ms", v.get("transaction_entry_timestamp")
        )
        state = f["states"].get(status)
        if state is None:
            raise IllegalStateError(f["unknown_state"].format(status=status))
        tps: Any = _ScalaHashSet() if f["partitions"] != "Set" else _Scala211HashSet()
        if state != "Empty":
            entries = v["transaction_partitions"]
            if entries is None:
                raise NullPointerError(f["null_partitions"])
            for entry in entries:
                ids = entry["partition_ids"]
                if len(set(ids)) > 4 and f["partitions"] == "Set":
                    raise NotReproducedError(
                        "the order of a Scala 2.11 immutable HashSet of more than 4 partitions "
                        "of one topic is not reproduced"
                    )
                for p in ids:
                    tps.add((entry["topic"], p))
        names = [f"{t}-{p}" for (t, p), _ in tps.items()]
        if f["partitions"] == "list":
            partitions = "[" + ",".join(names) + "]"
        else:  # Set.toString: a Scala 2.13 HashSet ("HashSet"), a 2.11 one ("Set")
            partitions = f["partitions"] + "(" + ", ".join(names) + ")"
        text = f["value_text"].format(
            producer_id=v["producer_id"],
            producer_epoch=v["producer_epoch"],
            state=state,
            partitions=partitions,
            last_update=last_update,
            timeout=timeout,
        )
        return key_text, text
