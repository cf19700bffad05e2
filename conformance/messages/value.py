"""The values of messages: :class:`Message` (an instance of one struct) and
:class:`RawTaggedField` (a tagged field the schema does not know, kept as bytes).

A :class:`Message` is what Kafka's generated class holds (``FetchRequestData``, its
``FetchTopic``, ...): one value per field of its :class:`~conformance.messages.schema.StructSpec`,
by the field's schema name (``message["Topics"]`` or ``message.Topics``), plus the unknown
tagged fields read with it. ``Message(struct)`` is the generated class's ``new X()``: every
field at its default. Field values:

===========================  ==================================================================
field type                   Python value
===========================  ==================================================================
bool                         ``bool``
int8/16/32/64, uint16/32     ``int`` (the Java range is checked on write)
float64                      ``float``
uuid                         ``uuid.UUID`` (Kafka's ``Uuid(msb, lsb)`` = ``UUID(int=msb<<64|lsb)``)
string                       ``str`` or None (nullable versions)
bytes                        ``bytes`` or None
records                      ``bytes`` (the raw record batches, not parsed) or None
struct                       :class:`Message` or None
``[]T``                      ``list`` of the element values, or None
===========================  ==================================================================

Equality is the generated ``equals``: every field, then the unknown tagged fields (none and an
empty list are equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.errors import NullPointerError
from conformance.messages.schema import FieldSpec, StructSpec

__all__ = ["Message", "RawTaggedField", "default_value", "non_default"]


@dataclass(frozen=True, slots=True)
class RawTaggedField:
    """``RawTaggedField``: a tag (a Java ``int``, so negative above 2**31-1) and its bytes."""

    tag: int
    data: bytes


def default_value(f: FieldSpec) -> Any:
    """A fresh default of field ``f`` (``fieldDefault``): as ``FieldSpec.scalar_default``, and
    a default :class:`Message` for a struct field whose default is not ``"null"``."""
    if f.type.is_struct and not f.default_is_null:
        assert f.struct is not None
        return Message(f.struct)
    return f.scalar_default()


class Message:
    """An instance of one struct (see the module docstring)."""

    __slots__ = ("struct", "values", "unknown_tagged_fields")

    struct: StructSpec
    values: dict[str, Any]
    unknown_tagged_fields: list[RawTaggedField]

    def __init__(self, struct: StructSpec, /, **values: Any) -> None:
        object.__setattr__(self, "struct", struct)
        object.__setattr__(self, "values", {f.name: default_value(f) for f in struct.fields})
        object.__setattr__(self, "unknown_tagged_fields", [])
        for name, value in values.items():
            self[name] = value

    @classmethod
    def of(
        cls,
        struct: StructSpec,
        values: dict[str, Any],
        unknown_tagged_fields: list[RawTaggedField] | None = None,
    ) -> Message:
        """A message holding ``values`` as they are (one per field of ``struct``, in order;
        not checked): the readers' constructor."""
        m = cls.__new__(cls)
        object.__setattr__(m, "struct", struct)
        object.__setattr__(m, "values", values)
        object.__setattr__(m, "unknown_tagged_fields", unknown_tagged_fields or [])
        return m

    def __getitem__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"{self.struct.name} has no field {name!r}") from None

    def __setitem__(self, name: str, value: Any) -> None:
        if name not in self.values:
            raise KeyError(f"{self.struct.name} has no field {name!r}")
        self.values[name] = value

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(f"{self.struct.name} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Message.__slots__:
            object.__setattr__(self, name, value)
        else:
            self[name] = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message) or other.struct.name != self.struct.name:
            return False
        return (
            self.values == other.values
            and self.unknown_tagged_fields == other.unknown_tagged_fields
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as the Java objects

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        if self.unknown_tagged_fields:
            inner += f", unknown_tagged_fields={self.unknown_tagged_fields!r}"
        return f"{self.struct.name}({inner})"


def non_default(f: FieldSpec, value: Any, nullable: bool) -> bool:
    """``generateNonDefaultValueCheck``: ``nullable`` is whether the check tests for null
    first (the field's nullableVersions are not empty); without it a null is a
    NullPointerException, as in Java."""
    kind = f.type.kind
    if kind == "records":
        return value is not None
    if f.default_is_null and kind in ("array", "bytes", "string", "struct"):
        return value is not None
    if value is None:
        if nullable and kind in ("array", "bytes", "string", "struct", "uuid"):
            return True
        raise NullPointerError()
    if kind in ("array", "bytes"):
        return len(value) != 0
    if kind == "bool":
        return bool(value) is not f.scalar_default()
    if kind == "struct":
        return bool(value != default_value(f))
    return bool(value != f.scalar_default())
