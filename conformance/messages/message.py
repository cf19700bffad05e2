"""Reading and writing messages as Kafka's generated classes do, from the JSON definitions.

:func:`read_message` is ``new XData(new ByteBufferAccessor(buf), version)`` and
:func:`write_message` is ``MessageUtil.toByteBuffer(message, version)`` (``addSize`` then
``write``), interpreted from the :class:`~conformance.messages.schema.MessageSchema` with the
generator's own version tests (``messages.plan``). Sources followed: Kafka's
``generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java`` and
``clients/src/main/java/org/apache/kafka/common/protocol/{Readable,ByteBufferAccessor,
Writable,MessageUtil}.java`` and ``protocol/types/RawTaggedFieldWriter.java`` (the 4.0
development line); held to the generated classes of Kafka 3.9.2 and 4.3.1 by
``tests/test_messages_java.py``.

Encodings (big-endian; a "flexible" version is one in the message's ``flexibleVersions``, or
the field's own ``flexibleVersions`` override for strings and bytes):

==================  ===========================================  ===============================
type                non-flexible                                 flexible (compact)
==================  ===========================================  ===============================
bool                1 byte; reads ``!= 0``, writes 0/1           same
int8/16/32/64       1/2/4/8 bytes, two's complement              same
uint16, uint32      2/4 bytes unsigned                           same
float64             8 bytes IEEE 754                             same
uuid                16 bytes: msb int64, lsb int64               same
string              int16 length (-1 null) + UTF-8 bytes         uvarint length+1 (0 null) + UTF-8
bytes, records      int32 length (-1 null) + bytes               uvarint length+1 (0 null) + bytes
[]T                 int32 count (-1 null) + elements             uvarint count+1 (0 null) + elems
struct              its fields, then (flexible) its tagged       same
                    fields; a nullable struct: int8 marker
                    first (< 0 null, writes -1 / 1)
tagged fields       --                                           uvarint count, then per field
                                                                 uvarint tag, uvarint size, the
                                                                 value (a nullable struct: uvarint
                                                                 marker, <= 0 null)
==================  ===========================================  ===============================

Lengths are Java ``int``: a compact length is ``readUnsignedVarint() - 1`` in 32-bit
arithmetic, so any value that comes out negative reads as null. The checks Kafka makes before
it allocates, in the order it makes them (so memory stays bounded by the input):

* a negative length where the version does not allow null: ``non-nullable field X was
  serialized as null`` (:class:`~conformance.errors.NullFieldError`);
* a string longer than 0x7fff: ``string field X had invalid length N`` (``StringLengthError``);
* an array count above the bytes left: ``Tried to allocate a collection of size N, but there
  are only M bytes remaining.`` (``CollectionSizeError``);
* a string, bytes or unknown tagged field longer than the bytes left: ``Error reading byte
  array of N byte(s): only M byte(s) available`` (``ByteArraySizeError``); a negative unknown
  tagged field size: ``NegativeArraySizeException`` (``NegativeArraySizeError``);
* zero-copy bytes and records longer than the bytes left: ``ByteBuffer.limit``'s
  ``IllegalArgumentException: newLimit > capacity: (N > M)``;
* a fixed-size value past the end: ``java.nio.BufferUnderflowException``; a varint whose 5th
  byte has its high bit set: ``IllegalArgumentException: Varint is too long, ...``;
* a known tag outside its tagged versions: ``Tag N is not valid for version V``.

A known tagged field is read by its type whatever its size says (as Kafka does); unknown ones
are kept as :class:`~conformance.messages.value.RawTaggedField` and written back in order.
Bytes after the message are not looked at (:func:`read_message_at` says where it ended).

Writing raises what ``addSize`` raises first (a version the struct cannot size, a string over
0x7fff bytes: ``'x' field is too long to be serialized``, tagged fields at a version without
them, a null where none can be written), then the first thing ``write`` raises (a
non-default value in a field absent at the version and not ignorable: ``Attempted to write a
non-default x at version V``, unknown tags out of order). Values Java's types could not hold
(an int8 of 300, a str for a uuid) raise :class:`~conformance.errors.EncodeError`.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

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
from conformance.messages.plan import Coding, read_plan, write_plan
from conformance.messages.schema import INT_RANGES, FieldSpec, MessageSchema, StructSpec
from conformance.messages.value import Message, RawTaggedField, default_value, non_default
from conformance.primitives.java import java_utf8, wrap32
from conformance.primitives.varint import read_unsigned_varint, write_unsigned_varint

__all__ = ["read_message", "read_message_at", "write_message"]

_FIXED = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_I16 = _FIXED["int16"]
_I32 = _FIXED["int32"]
_INT_MAX = 2**31 - 1


def _check_version(version: int) -> None:
    if not isinstance(version, int) or not -0x8000 <= version <= 0x7FFF:
        raise ValueError(f"a message version is a Java short, not {version!r}")


# ------------------------------------------------------------------------------------ reading


class _Reader:
    """``ByteBufferAccessor`` over ``buf[pos:end]``."""

    __slots__ = ("schema", "version", "buf", "pos", "end")

    def __init__(
        self, schema: MessageSchema, version: int, buf: bytes | memoryview, pos: int, end: int
    ) -> None:
        self.schema = schema
        self.version = version
        self.buf = buf
        self.pos = pos
        self.end = end

    def fixed(self, kind: str) -> Any:
        s = _FIXED[kind]
        if self.end - self.pos < s.size:
            raise BufferUnderflowError()
        value = s.unpack_from(self.buf, self.pos)[0]
        self.pos += s.size
        return value

    def byte(self) -> int:
        if self.pos >= self.end:
            raise BufferUnderflowError()
        b = self.buf[self.pos]
        self.pos += 1
        return b - 256 if b > 127 else b

    def uvarint(self) -> int:
        """``readUnsignedVarint()`` as the Java ``int`` it returns."""
        value, self.pos = read_unsigned_varint(self.buf, self.pos, self.end)  # type: ignore[arg-type]
        return wrap32(value)

    def array(self, size: int) -> bytes:
        """``readArray(size)``."""
        remaining = self.end - self.pos
        if size > remaining:
            raise ByteArraySizeError(
                f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available"
            )
        if size < 0:
            raise NegativeArraySizeError(str(size))
        data = bytes(self.buf[self.pos : self.pos + size])
        self.pos += size
        return data

    def byte_buffer(self, length: int) -> bytes:
        """``readByteBuffer(length)``: ``slice().limit(length)``."""
        remaining = self.end - self.pos
        if length > remaining:
            raise IllegalArgumentError(f"newLimit > capacity: ({length} > {remaining})")
        data = bytes(self.buf[self.pos : self.pos + length])
        self.pos += length
        return data

    # ------------------------------------------------------------------------- structures

    def struct(self, s: StructSpec) -> Message:
        plan = read_plan(self.schema, s, self.version)
        if plan.error is not None:
            raise UnsupportedVersionError(plan.error)
        values: dict[str, Any] = {}
        for f, coding in plan.fields:
            values[f.name] = default_value(f) if coding is None else self.value(coding)
        unknown: list[RawTaggedField] = []
        if plan.tags is not None:
            count = self.uvarint()
            for _ in range(count):
                tag = self.uvarint()
                size = self.uvarint()
                known = plan.tags.get(tag)
                if known is None:
                    unknown.append(RawTaggedField(tag, self.array(size)))
                    continue
                f, tagged = known
                if isinstance(tagged, str):
                    raise TagVersionError(tagged)
                values[f.name] = self.value(tagged, tagged=True)
        return Message.of(s, values, unknown)

    def value(self, c: Coding, tagged: bool = False) -> Any:
        kind = c.kind
        if kind in _FIXED:
            return self.fixed(kind)
        if kind == "bool":
            return self.byte() != 0
        if kind == "uuid":
            msb = self.fixed("int64")
            lsb = self.fixed("int64")
            return uuid.UUID(int=((msb & 0xFFFFFFFFFFFFFFFF) << 64) | (lsb & 0xFFFFFFFFFFFFFFFF))
        if kind == "struct":
            assert c.struct is not None
            if c.nullable:
                if tagged:
                    if self.uvarint() <= 0:
                        return None
                elif self.byte() < 0:
                    return None
            return self.struct(c.struct)
        return self.variable(c)

    def variable(self, c: Coding) -> Any:
        """``generateVariableLengthReader``: a string, bytes, records or array."""
        if c.compact:
            length = wrap32(self.uvarint() - 1)
        elif c.kind == "string":
            length = self.fixed("int16")
        else:
            length = self.fixed("int32")
        if length < 0:
            if c.nullable:
                return None
            raise NullFieldError(f"non-nullable field {c.name} was serialized as null")
        kind = c.kind
        if kind == "string":
            if length > 0x7FFF:
                raise StringLengthError(f"string field {c.name} had invalid length {length}")
            return java_utf8(self.array(length))
        if kind == "bytes":
            return self.byte_buffer(length) if c.zero_copy else self.array(length)
        if kind == "records":
            return self.byte_buffer(length)
        remaining = self.end - self.pos
        if length > remaining:
            raise CollectionSizeError(
                f"Tried to allocate a collection of size {length}, but there are only "
                f"{remaining} bytes remaining."
            )
        element = c.element
        assert element is not None
        if element.kind in ("string", "bytes"):
            return [self.variable(element) for _ in range(length)]
        if element.kind == "struct":
            assert element.struct is not None
            return [self.struct(element.struct) for _ in range(length)]
        return [self.value(element) for _ in range(length)]


def read_message_at(
    schema: MessageSchema,
    version: int,
    data: bytes | bytearray | memoryview,
    pos: int = 0,
    end: int | None = None,
) -> tuple[Message, int]:
    """The message of ``schema`` at ``version`` starting at ``data[pos]`` (not reading past
    ``end``), and the position after it."""
    _check_version(version)
    view = data if isinstance(data, bytes) else memoryview(data).cast("B")
    limit = len(view) if end is None else min(end, len(view))
    reader = _Reader(schema, version, view, pos, limit)
    return reader.struct(schema.struct), reader.pos


def read_message(
    schema: MessageSchema, version: int, data: bytes | bytearray | memoryview
) -> Message:
    """``new XData(new ByteBufferAccessor(ByteBuffer.wrap(data)), version)``: the message of
    ``schema`` at ``version`` (bytes after it are ignored, as Kafka's reader ignores them)."""
    return read_message_at(schema, version, data)[0]


# ------------------------------------------------------------------------------------ writing


def _npe() -> NullPointerError:
    return NullPointerError()


class _Writer:
    """``addSize`` + ``write`` in one walk: what ``addSize`` would raise is raised at once,
    the first thing ``write`` would raise is kept and raised at the end."""

    __slots__ = ("schema", "version", "out", "deferred")

    def __init__(self, schema: MessageSchema, version: int) -> None:
        self.schema = schema
        self.version = version
        self.out = bytearray()
        self.deferred: DecodeError | None = None

    def defer(self, error: DecodeError) -> None:
        if self.deferred is None:
            self.deferred = error

    def nested(self, write: Any, *args: Any) -> tuple[bytes, DecodeError | None]:
        """What ``write(*args)`` writes, and the first write error it kept (not yet raised:
        Kafka writes a tagged field after the untagged ones)."""
        saved, saved_deferred = self.out, self.deferred
        self.out, self.deferred = bytearray(), None
        try:
            write(*args)
            return bytes(self.out), self.deferred
        finally:
            self.out, self.deferred = saved, saved_deferred

    # --------------------------------------------------------------------------- structures

    def struct(self, s: StructSpec, message: Any) -> None:
        if not isinstance(message, Message) or message.struct.name != s.name:
            raise EncodeError(f"expected a {s.name} message, got {message!r}")
        version = self.version
        plan = write_plan(self.schema, s, version)
        if plan.size_error is not None:
            raise UnsupportedVersionError(plan.size_error)
        if plan.write_error is not None:
            self.defer(UnsupportedVersionError(plan.write_error))
        values = message.values
        count = 0
        sized: dict[str, tuple[Coding, tuple[bytes, DecodeError | None]]] = {}
        for f, action, coding in plan.fields:
            value = values[f.name]
            if action == "value":
                assert coding is not None
                self.value(coding, value)
            elif action == "tagged":
                if non_default(f, value, not f.nullable_versions.empty):
                    count += 1
                    if coding is not None:  # sized here, in field order, as addSize does
                        sized[f.name] = (coding, self.nested(self.tagged, f, coding, value))
            elif action == "absent":
                try:
                    changed = non_default(f, value, not f.nullable_versions.empty)
                except NullPointerError as e:
                    self.defer(e)
                    continue
                if changed:
                    self.defer(
                        UnsupportedVersionError(
                            f"Attempted to write a non-default {f.camel_name} at version {version}"
                        )
                    )
        unknown = message.unknown_tagged_fields or []
        count += len(unknown)
        if not plan.flexible:
            if count > 0:
                raise UnsupportedVersionError(
                    f"Tagged fields were set, but version {version} of this message does not "
                    "support them."
                )
            return
        self.out += write_unsigned_varint(count & 0xFFFFFFFF)
        raw = _RawTags(self, unknown)
        for f, flush, coding in plan.tagged:
            assert f.tag is not None
            if flush:
                raw.write_until(f.tag)
            if coding is None:
                continue
            done = sized.get(f.name)
            data, deferred = (
                done[1]
                if done is not None and done[0] == coding
                else self.nested(self.tagged, f, coding, values[f.name])
            )
            self.out += data
            if deferred is not None:
                self.defer(deferred)
        raw.write_until(_INT_MAX)

    def tagged(self, f: FieldSpec, c: Coding, value: Any) -> None:
        """One tagged field, when it is written: tag, size, value."""
        assert f.tag is not None
        if value is None:
            if not c.null_check:
                raise _npe()
            if not f.default_is_null:
                self.out += write_unsigned_varint(f.tag) + b"\x01\x00"
            return
        if not f.default_is_null and not non_default(f, value, False):
            return
        kind = c.kind
        saved = self.out
        self.out = bytearray()
        try:
            if kind == "string":
                self.out += self.compact_bytes(_utf8(value, c.name))
            elif kind == "bytes":
                self.out += self.compact_bytes(_bytes(value, c.name))
            elif kind == "array":
                self.variable(c, value)
            elif kind == "struct":
                assert c.struct is not None
                if c.nullable:
                    self.out.append(1)
                self.struct(c.struct, value)
            else:
                self.value(c, value)
            payload = self.out
        finally:
            self.out = saved
        self.out += write_unsigned_varint(f.tag)
        self.out += write_unsigned_varint(len(payload))
        self.out += payload

    @staticmethod
    def compact_bytes(data: bytes) -> bytes:
        return write_unsigned_varint(len(data) + 1) + data

    def value(self, c: Coding, value: Any) -> None:
        kind = c.kind
        if kind in _FIXED:
            self.out += _FIXED[kind].pack(_number(kind, value, c.name))
        elif kind == "bool":
            if not isinstance(value, bool):
                raise EncodeError(f"{c.name}: expected a bool, got {value!r}")
            self.out.append(1 if value else 0)
        elif kind == "uuid":
            if not isinstance(value, uuid.UUID):
                raise EncodeError(f"{c.name}: expected a uuid.UUID, got {value!r}")
            self.out += value.bytes
        elif kind == "struct":
            assert c.struct is not None
            if value is None:
                if not c.null_check:
                    raise _npe()
                if c.nullable:
                    self.out.append(0xFF)
                else:
                    self.defer(_npe())
                return
            if c.nullable:
                self.out.append(1)
            self.struct(c.struct, value)
        else:
            self.variable(c, value)

    def variable(self, c: Coding, value: Any) -> None:
        """``generateVariableLengthWriter``."""
        kind = c.kind
        if value is None:
            if not c.null_check:
                raise _npe()
            if not c.nullable:
                self.defer(_npe())
            elif c.null_compact:
                self.out.append(0)
            else:
                self.out += b"\xff\xff" if kind == "string" else b"\xff\xff\xff\xff"
            return
        if kind == "string":
            data = _utf8(value, c.name.replace(" element", "Element"))
        elif kind in ("bytes", "records"):
            data = _bytes(value, c.name)
        elif kind == "array":
            if not isinstance(value, list | tuple):
                raise EncodeError(f"{c.name}: expected a list, got {value!r}")
            data = b""
        else:
            raise EncodeError(f"{c.name}: unknown type {kind}")
        length = len(value) if kind == "array" else len(data)
        if c.compact:
            self.out += write_unsigned_varint(length + 1)
        elif kind == "string":
            self.out += _I16.pack(length)
        else:
            self.out += _I32.pack(wrap32(length))
        if kind != "array":
            self.out += data
            return
        element = c.element
        assert element is not None
        for item in value:
            if element.kind in ("string", "bytes"):
                self.variable(element, item)
            elif element.kind == "struct":
                assert element.struct is not None
                if item is None:
                    raise _npe()
                self.struct(element.struct, item)
            else:
                self.value(element, item)


class _RawTags:
    """``RawTaggedFieldWriter``: unknown tagged fields, in list order, flushed before each
    known tag the generated writer names."""

    __slots__ = ("writer", "fields", "index", "prev")

    def __init__(self, writer: _Writer, fields: list[RawTaggedField]) -> None:
        self.writer = writer
        self.fields = fields
        self.index = 0
        self.prev = -1

    def write_until(self, next_tag: int) -> None:
        while self.index < len(self.fields):
            f = self.fields[self.index]
            if not isinstance(f, RawTaggedField):
                raise EncodeError(f"unknown tagged fields are RawTaggedField, not {f!r}")
            tag = f.tag
            if tag >= next_tag:
                if tag == next_tag:
                    self.writer.defer(
                        RawTagError(f"Attempted to use tag {tag} as an undefined tag.")
                    )
                return
            self.index += 1
            if tag <= self.prev:
                self.writer.defer(
                    RawTagError(
                        f"Invalid raw tag field list: tag {tag} comes after tag {self.prev}, "
                        "but is not higher than it."
                    )
                )
            out = self.writer.out
            out += write_unsigned_varint(tag & 0xFFFFFFFF)
            out += write_unsigned_varint(len(f.data))
            out += f.data
            self.prev = tag


def _utf8(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise EncodeError(f"{name}: expected a str, got {value!r}")
    data = value.encode("utf-8", "replace")
    if len(data) > 0x7FFF:
        raise FieldTooLongError(f"'{name}' field is too long to be serialized")
    return data


def _bytes(value: Any, name: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise EncodeError(f"{name}: expected bytes, got {value!r}")
    return bytes(value)


def _number(kind: str, value: Any, name: str) -> int | float:
    if kind == "float64":
        if isinstance(value, bool) or not isinstance(value, float | int):
            raise EncodeError(f"{name}: expected a float, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EncodeError(f"{name}: expected an int, got {value!r}")
    lo, hi = INT_RANGES[kind]
    if not lo <= value <= hi:
        raise EncodeError(f"{name}: {value} does not fit a {kind}")
    return value


def write_message(schema: MessageSchema, version: int, message: Message) -> bytes:
    """``MessageUtil.toByteBuffer(message, version)``: the bytes Kafka's generated class
    writes for ``message`` at ``version`` (errors as in the module docstring)."""
    _check_version(version)
    writer = _Writer(schema, version)
    writer.struct(schema.struct, message)
    if writer.deferred is not None:
        raise writer.deferred
    return bytes(writer.out)
