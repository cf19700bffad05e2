"""Kafka's JSON message definitions as a typed model (sans-IO: text in, objects out).

Kafka describes every protocol message, metadata record and coordinator key/value in a JSON
file (``clients/src/main/resources/common/message/FetchRequest.json``, ...), which its build
turns into Java classes with ``generator/`` (``MessageGenerator``). The jars ship those files;
``conformance.jvm.message_defs`` reads them from a Kafka version's jars and hands the texts to
:func:`read_schemas`. Nothing of Kafka's is copied into this repository.

The model follows the generator's own classes (``MessageSpec``, ``StructSpec``, ``FieldSpec``,
``FieldType``, ``Versions``, ``StructRegistry``) in Kafka's ``generator/`` sources, including
how Jackson reads the files: ``//`` and ``/* */`` comments allowed, scalars coerced to the
strings the generator expects (``"default": -1`` is ``"-1"``, ``"default": null`` is no
default), text after the first JSON value ignored (2.8.2's ``DescribeProducersRequest.json``
has a stray ``]}``, which the 2.8 generator's Jackson did not refuse).

* :class:`Versions` -- a version range (``"3+"``, ``"0-4"``, ``"none"``) with the generator's
  ``intersect``/``subtract``;
* :class:`FieldType` -- ``bool``, ``int8/16/32/64``, ``uint16``, ``uint32``, ``float64``,
  ``string``, ``bytes``, ``records``, ``uuid``, a struct name, or ``[]T``;
* :class:`FieldSpec`, :class:`StructSpec` -- fields (versions, nullableVersions,
  taggedVersions + tag, default, ignorable, mapKey, zeroCopy, flexibleVersions) and structs
  (inline ones and ``commonStructs``, each resolved once, with the parent versions the
  generator's ``StructRegistry`` gives it);
* :class:`MessageSchema` -- one definition: name, type (``request``, ``response``, ``header``,
  ``data``, ``metadata``, ``coordinator-key``, ``coordinator-value``, ...), apiKey,
  validVersions, flexibleVersions, the top-level struct and every struct by name;
* :class:`Schemas` -- the definitions of one Kafka version, by name and by apiKey + type.
"""

from __future__ import annotations

import base64
import json
import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.messages.versions import (
    ALL_VERSIONS,
    NO_VERSIONS,
    SHORT_MAX,
    SchemaError,
    Versions,
    read_versions,
)

__all__ = [
    "ALL_VERSIONS",
    "NO_VERSIONS",
    "FieldSpec",
    "FieldType",
    "MessageSchema",
    "SchemaError",
    "Schemas",
    "StructSpec",
    "Versions",
    "kafka_uuid_string",
    "read_field_type",
    "read_kafka_uuid",
    "read_schema",
    "read_schemas",
    "read_versions",
    "scalar_default",
]

# ------------------------------------------------------------------------------ field types

#: fixed-size types and their widths (``FieldType.fixedLength``)
FIXED_LENGTHS = {
    "bool": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uuid": 16,
    "float64": 8,
}
#: the integer types: (lowest, highest) of the Java value
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_VARIABLE = ("string", "bytes", "records")


@dataclass(frozen=True, slots=True)
class FieldType:
    """``FieldType``: a primitive (``kind`` its name), a struct (``kind == "struct"``,
    ``name`` the struct's name) or an array (``kind == "array"``, ``element`` its type)."""

    kind: str
    name: str
    element: FieldType | None = None

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    @property
    def is_struct(self) -> bool:
        return self.kind == "struct"

    @property
    def is_struct_array(self) -> bool:
        return self.element is not None and self.element.is_struct

    @property
    def fixed_length(self) -> int | None:
        return FIXED_LENGTHS.get(self.kind)

    @property
    def is_variable_length(self) -> bool:
        return self.kind not in FIXED_LENGTHS

    @property
    def differs_in_flexible_versions(self) -> bool:
        """``serializationIsDifferentInFlexibleVersions``: strings, bytes, records, structs
        and arrays."""
        return self.kind in _VARIABLE or self.kind in ("struct", "array")

    @property
    def can_be_nullable(self) -> bool:
        return self.differs_in_flexible_versions

    def __str__(self) -> str:
        return self.name


def read_field_type(text: str) -> FieldType:
    """``FieldType.parse``."""
    t = text.strip()
    if t in FIXED_LENGTHS or t in _VARIABLE:
        return FieldType(t, t)
    if t.startswith("[]"):
        inner = t[2:]
        if not inner:
            raise SchemaError(f"Can't parse array type {t}.  No element type found.")
        element = read_field_type(inner)
        if element.is_array:
            raise SchemaError(
                "Can't have an array of arrays.  Use an array of structs containing an array "
                "instead."
            )
        return FieldType("array", t, element)
    if t[:1].isupper():
        return FieldType("struct", t)
    raise SchemaError(f"Can't parse type {t}")


# ------------------------------------------------------------------------------------ uuid


def kafka_uuid_string(value: uuid.UUID) -> str:
    """``org.apache.kafka.common.Uuid.toString()``: URL-safe base64 of the 16 bytes, no
    padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def read_kafka_uuid(text: str) -> uuid.UUID:
    """``Uuid.fromString``: the 22-character URL-safe base64 form."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise SchemaError(f"not a Kafka Uuid: {text!r}") from None
    if len(raw) != 16:
        raise SchemaError(f"not a Kafka Uuid: {text!r}")
    return uuid.UUID(bytes=raw)


# ---------------------------------------------------------------------------- fields, structs

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True, eq=False, slots=True)
class FieldSpec:
    """One field of a struct (``FieldSpec``); ``struct`` is the resolved struct of a struct or
    struct-array field."""

    name: str
    type: FieldType
    versions: Versions
    nullable_versions: Versions = NO_VERSIONS
    tagged_versions: Versions = NO_VERSIONS
    tag: int | None = None
    default: str = ""
    ignorable: bool = False
    map_key: bool = False
    zero_copy: bool = False
    flexible_versions: Versions | None = None
    entity_type: str = "unknown"
    about: str = ""
    struct: StructSpec | None = None

    @property
    def camel_name(self) -> str:
        """``camelCaseName()``: the name with its first letter in lower case (the JSON key
        and the name in Kafka's error messages)."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def default_is_null(self) -> bool:
        return self.default == "null"

    def scalar_default(self) -> Any:
        """The default of a field that is not a struct (``fieldDefault``): 0, False, "", b"",
        [] (a fresh list), the zero Uuid, or None for ``"null"`` defaults and records;
        ``messages.value.default_value`` adds structs."""
        return scalar_default(self)


@dataclass(frozen=True, eq=False, slots=True)
class StructSpec:
    """A struct: the top level of a message, an inline struct or a common struct.
    ``parent_versions`` is what ``StructRegistry`` gives it (the message's validVersions for
    the top level and its direct children, narrowed by each enclosing field; a common struct's
    own versions), which the generated code's version checks depend on."""

    name: str
    versions: Versions
    fields: tuple[FieldSpec, ...]
    parent_versions: Versions
    class_name: str
    common: bool = False

    @property
    def has_keys(self) -> bool:
        return any(f.map_key for f in self.fields)

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")


def _int_default(f: FieldSpec) -> int:
    text = f.default
    if not text:
        return 0
    base = 16 if text.startswith("0x") else 10
    digits = text[2:] if base == 16 else text
    try:
        value = int(digits, base)
    except ValueError:
        raise SchemaError(f"Invalid default for {f.type} field {f.name}: {digits}") from None
    lo, hi = INT_RANGES[f.type.kind]
    if not lo <= value <= hi:
        raise SchemaError(f"Invalid default for {f.type} field {f.name}: {digits}")
    return value


def scalar_default(f: FieldSpec) -> Any:
    kind = f.type.kind
    text = f.default
    if kind == "bool":
        if text.lower() not in ("", "true", "false"):
            raise SchemaError(f"Invalid default for boolean field {f.name}: {text}")
        return text.lower() == "true"
    if kind in INT_RANGES:
        return _int_default(f)
    if kind == "uuid":
        return read_kafka_uuid(text) if text else uuid.UUID(int=0)
    if kind == "float64":
        return float(text) if text else 0.0
    if kind == "records":
        return None
    if text == "null":
        return None
    if kind == "string":
        return text
    if kind == "bytes":
        return b""
    if kind == "array":
        return []
    raise SchemaError(f"{f.name}: a struct's default is made by messages.value")


# ------------------------------------------------------------------------------------ message


@dataclass(frozen=True, eq=False)
class MessageSchema:
    """One JSON definition (``MessageSpec``). ``struct`` is the top level; ``structs`` every
    struct by name (inline and common); ``source`` where the text came from."""

    name: str
    type: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    struct: StructSpec
    structs: Mapping[str, StructSpec]
    deprecated_versions: Versions = NO_VERSIONS
    latest_version_unstable: bool = False
    listeners: tuple[str, ...] = ()
    source: str = ""
    #: the codec's compiled per-version plans (``messages.plan``), filled on first use
    plans: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def data_class_name(self) -> str:
        """``dataClassName()``: ``<name>Data`` for requests, responses and headers."""
        return self.struct.class_name

    def field_flexible_versions(self, f: FieldSpec) -> Versions:
        """``fieldFlexibleVersions``: the field's override, else the message's."""
        return f.flexible_versions if f.flexible_versions is not None else self.flexible_versions

    def __repr__(self) -> str:
        return f"MessageSchema({self.name}, {self.type}, versions {self.valid_versions})"


# ----------------------------------------------------------------------------- the JSON text


def _strip_comments(text: str) -> str:
    """Jackson's ``ALLOW_COMMENTS``: ``//`` to the end of the line and ``/* */`` outside
    strings become spaces (offsets kept for error messages)."""
    out = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string(value: Any, what: str) -> str | None:
    """Jackson's coercion of a scalar to the ``String`` the generator's constructor takes."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            return repr(value)
        return str(value)
    raise SchemaError(f"{what}: expected a string, got {type(value).__name__}")


def _bool(value: Any, what: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise SchemaError(f"{what}: expected a boolean, got {value!r}")


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise SchemaError(f"{what}: expected an integer, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise SchemaError(f"{what}: expected an integer, got {value!r}") from None


@dataclass
class _RawStruct:
    name: str
    versions: Versions
    fields: list[dict[str, Any]]
    common: bool
    parent_versions: Versions


class _Builder:
    """``StructRegistry`` + the specs' constructors: raw JSON -> resolved, checked specs."""

    def __init__(self, doc: dict[str, Any], where: str) -> None:
        self.doc = doc
        self.where = where
        self.raw: dict[str, _RawStruct] = {}
        self.built: dict[str, StructSpec] = {}
        self.building: set[str] = set()

    def register(self, valid: Versions) -> None:
        for cs in self.doc.get("commonStructs") or []:
            name = _string(cs.get("name"), "commonStructs name") or ""
            if not name[:1].isupper():
                raise SchemaError(
                    f"Can't process structure {name}: the first letter of structure names "
                    "must be capitalized."
                )
            if name in self.raw:
                raise SchemaError(f"Common struct {name} was specified twice.")
            versions = read_versions(_string(cs.get("versions"), name), None, name)
            self.raw[name] = _RawStruct(name, versions, cs.get("fields") or [], True, versions)
        self._inline(valid, self.doc.get("fields") or [])

    def _inline(self, parent: Versions, fields: list[dict[str, Any]]) -> None:
        for raw in fields:
            ftype = read_field_type(_string(raw.get("type"), "type") or "")
            type_name = (
                ftype.element.name
                if ftype.element is not None and ftype.element.is_struct
                else ftype.name
                if ftype.is_struct
                else None
            )
            if type_name is None:
                continue
            versions = self._field_versions(raw)
            sub = raw.get("fields") or []
            known = self.raw.get(type_name)
            if known is not None and known.common:
                if sub:
                    raise SchemaError(
                        f"Can't re-specify the common struct {type_name} as an inline struct."
                    )
            elif known is not None:
                raise SchemaError(f"Struct {type_name} was specified twice.")
            else:
                self.raw[type_name] = _RawStruct(type_name, versions, sub, False, parent)
            self._inline(parent.intersect(versions), sub)

    @staticmethod
    def _field_versions(raw: dict[str, Any]) -> Versions:
        name = _string(raw.get("name"), "name") or "?"
        tagged = read_versions(_string(raw.get("taggedVersions"), name), NO_VERSIONS, name)
        return read_versions(
            _string(raw.get("versions"), name), None if tagged.empty else tagged, name
        )

    def struct(self, name: str) -> StructSpec:
        if name in self.built:
            return self.built[name]
        raw = self.raw.get(name)
        if raw is None:
            raise SchemaError(f"Unable to locate a specification for the structure {name}")
        if name in self.building:
            raise SchemaError(f"structure {name} contains itself")
        self.building.add(name)
        spec = StructSpec(
            name,
            raw.versions,
            self.fields(name, raw.fields),
            raw.parent_versions,
            name,
            raw.common,
        )
        self.building.discard(name)
        self.built[name] = spec
        return spec

    def fields(self, owner: str, raws: list[dict[str, Any]]) -> tuple[FieldSpec, ...]:
        out: list[FieldSpec] = []
        tags: set[int] = set()
        names: set[str] = set()
        for raw in raws:
            f = self.field(raw)
            if f.tag is not None:
                if f.tag in tags:
                    raise SchemaError(
                        f"In {owner}, field {f.name} has a duplicate tag ID {f.tag}. All tags "
                        "IDs must be unique."
                    )
                tags.add(f.tag)
            if f.name in names:
                raise SchemaError(
                    f"In {owner}, field {f.name} has a duplicate name {f.name}. All field "
                    "names must be unique."
                )
            names.add(f.name)
            out.append(f)
        for i in range(len(tags)):
            if i not in tags:
                raise SchemaError(
                    f"In {owner}, the tag IDs are not contiguous.  Make use of tag {i} before "
                    "using any higher tag IDs."
                )
        return tuple(out)

    def field(self, raw: dict[str, Any]) -> FieldSpec:
        name = _string(raw.get("name"), "field name") or ""
        if not _NAME.fullmatch(name):
            raise SchemaError(f"Invalid field name {name}")
        ftype = read_field_type(_string(raw.get("type"), name) or "")
        tagged = read_versions(_string(raw.get("taggedVersions"), name), NO_VERSIONS, name)
        versions = self._field_versions(raw)
        nullable = read_versions(_string(raw.get("nullableVersions"), name), NO_VERSIONS, name)
        if not nullable.empty and not ftype.can_be_nullable:
            raise SchemaError(f"Type {ftype} cannot be nullable.")
        flex_text = _string(raw.get("flexibleVersions"), name)
        flexible = read_versions(flex_text, None, name) if flex_text else None
        if flexible is not None and ftype.kind not in ("string", "bytes"):
            raise SchemaError(
                f"Invalid flexibleVersions override for {name}.  Only fields of type string or "
                "bytes can specify a flexibleVersions override."
            )
        tag = _int(raw.get("tag"), f"{name}.tag")
        map_key = _bool(raw.get("mapKey"), f"{name}.mapKey")
        if tag is not None:
            if map_key:
                raise SchemaError("Tagged fields cannot be used as keys.")
            if tag < 0:
                raise SchemaError(
                    f"Field {name} specifies a tag of {tag}.  Tags cannot be negative."
                )
            if tagged.empty:
                raise SchemaError(
                    f"Field {name} specifies a tag of {tag}, but has no tagged versions."
                )
            if tagged.highest < SHORT_MAX:
                raise SchemaError(
                    f"Field {name} specifies taggedVersions {tagged}, which is not open-ended."
                )
            if tagged.intersect(versions) != tagged:
                raise SchemaError(f"Field {name}: taggedVersions must be a subset of versions.")
        elif not tagged.empty:
            raise SchemaError(
                f"Field {name} does not specify a tag, but specifies tagged versions."
            )
        zero_copy = _bool(raw.get("zeroCopy"), f"{name}.zeroCopy")
        if zero_copy and ftype.kind != "bytes":
            raise SchemaError(
                f"Invalid zeroCopy value for {name}. Only fields of type bytes can use zeroCopy "
                "flag."
            )
        struct_name = (
            ftype.element.name
            if ftype.is_struct_array and ftype.element
            else (ftype.name if ftype.is_struct else None)
        )
        spec = FieldSpec(
            name=name,
            type=ftype,
            versions=versions,
            nullable_versions=nullable,
            tagged_versions=tagged,
            tag=tag,
            default=_string(raw.get("default"), f"{name}.default") or "",
            ignorable=_bool(raw.get("ignorable"), f"{name}.ignorable"),
            map_key=map_key,
            zero_copy=zero_copy,
            flexible_versions=flexible,
            entity_type=_string(raw.get("entityType"), f"{name}.entityType") or "unknown",
            about=_string(raw.get("about"), f"{name}.about") or "",
            struct=self.struct(struct_name) if struct_name is not None else None,
        )
        if spec.default_is_null and not nullable.contains_range(versions):
            raise SchemaError(
                f"null cannot be the default for field {name}, because not all versions of "
                "this field are nullable."
            )
        if ftype.kind in ("bytes", "array", "struct") and spec.default not in ("", "null"):
            raise SchemaError(f"Invalid default for {ftype.kind} field {name}: {spec.default}")
        if ftype.kind not in ("struct", "array"):
            scalar_default(spec)  # a bad default is refused here, as by the generator
        return spec


def read_schema(text: str, source: str = "") -> MessageSchema:
    """One JSON definition (the text of ``FetchRequest.json``, license comments and all) as a
    :class:`MessageSchema`; :class:`SchemaError` when the generator would refuse it."""
    where = source or "message definition"
    try:
        doc, _ = json.JSONDecoder().raw_decode(_strip_comments(text).strip())
    except ValueError as e:
        raise SchemaError(f"{where}: not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise SchemaError(f"{where}: not a JSON object")
    try:
        return _read_doc(doc, source)
    except SchemaError as e:
        raise SchemaError(f"{where}: {e}") from None


def _read_doc(doc: dict[str, Any], source: str) -> MessageSchema:
    name = _string(doc.get("name"), "name")
    if not name:
        raise SchemaError("the definition has no name")
    mtype = _string(doc.get("type"), "type")
    if not mtype:
        raise SchemaError(f"{name} has no type")
    valid = read_versions(_string(doc.get("validVersions"), "validVersions"), None, name)
    flexible = read_versions(
        _string(doc.get("flexibleVersions"), "flexibleVersions"), NO_VERSIONS, name
    )
    if not flexible.empty and flexible.highest < SHORT_MAX:
        raise SchemaError(
            f"Field {name} specifies flexibleVersions {flexible}, which is not open-ended."
        )
    builder = _Builder(doc, name)
    builder.register(valid)
    class_name = f"{name}Data" if mtype in ("request", "response", "header") else name
    top = StructSpec(name, valid, builder.fields(name, doc.get("fields") or []), valid, class_name)
    structs = {n: builder.struct(n) for n in builder.raw}
    listeners = doc.get("listeners") or []
    return MessageSchema(
        name=name,
        type=mtype,
        api_key=_int(doc.get("apiKey"), "apiKey"),
        valid_versions=valid,
        flexible_versions=flexible,
        struct=top,
        structs=structs,
        deprecated_versions=read_versions(
            _string(doc.get("deprecatedVersions"), "deprecatedVersions"), NO_VERSIONS, name
        ),
        latest_version_unstable=_bool(doc.get("latestVersionUnstable"), "latestVersionUnstable"),
        listeners=tuple(str(x) for x in listeners if isinstance(x, str)),
        source=source,
    )


# ------------------------------------------------------------------------------- collections


class Schemas(Mapping[str, MessageSchema]):
    """The definitions of one Kafka version, by name (``schemas["FetchRequest"]``) and by
    apiKey + type (:meth:`find`, :meth:`request`, :meth:`response`)."""

    def __init__(self, schemas: Iterable[MessageSchema], label: str = "") -> None:
        self._by_name: dict[str, MessageSchema] = {}
        for s in schemas:
            if s.name in self._by_name:
                raise SchemaError(
                    f"{s.name} is defined twice: {self._by_name[s.name].source} and {s.source}"
                )
            self._by_name[s.name] = s
        self.label = label

    def __getitem__(self, name: str) -> MessageSchema:
        try:
            return self._by_name[name]
        except KeyError:
            where = f" in {self.label}" if self.label else ""
            raise KeyError(f"no message definition {name!r}{where}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def find_all(self, api_key: int, type: str) -> list[MessageSchema]:
        """Every definition with this apiKey and type (several jars reuse numbers: metadata
        records and remote-log-metadata records, group/share/transaction coordinator keys)."""
        return [s for s in self._by_name.values() if s.api_key == api_key and s.type == type]

    def find(self, api_key: int, type: str, *, source: str | None = None) -> MessageSchema:
        """The one definition with this apiKey and type (``source``: a part of the origin,
        e.g. a jar name prefix, to choose among several); KeyError when none or several."""
        found = [s for s in self.find_all(api_key, type) if source is None or source in s.source]
        if len(found) != 1:
            names = ", ".join(f"{s.name} ({s.source})" for s in found) or "none"
            raise KeyError(f"apiKey {api_key} type {type}: {names}")
        return found[0]

    def request(self, api_key: int) -> MessageSchema:
        return self.find(api_key, "request")

    def response(self, api_key: int) -> MessageSchema:
        return self.find(api_key, "response")

    def __repr__(self) -> str:
        return f"Schemas({self.label or '?'}: {len(self)} definitions)"


def read_schemas(texts: Iterable[tuple[str, str]], label: str = "") -> Schemas:
    """``(source, text)`` pairs (e.g. jar entry and file text) -> :class:`Schemas`."""
    return Schemas((read_schema(text, source) for source, text in texts), label)
