"""What Kafka's generated code does for one struct at one version, worked out once.

The plans follow the generator's nesting of ``VersionConditional``s (``messages.versions``:
which versions each clause is handed, and how each test is simplified by them), so the
interpreter is the generated class at every version a Java ``short`` can hold, inside the
definition's validVersions and outside them.

A plan is compiled per (direction, struct, version) and kept in the schema's ``plans``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from conformance.messages.schema import FieldSpec, FieldType, MessageSchema, StructSpec
from conformance.messages.versions import NO_VERSIONS, Versions, branch, emitted

__all__ = [
    "Coding",
    "JsonPlan",
    "ReadPlan",
    "WritePlan",
    "json_plan",
    "read_plan",
    "write_plan",
]


def _member(version: int, containing: Versions, possible: Versions) -> bool:
    return branch(version, containing, possible)[0]


@dataclass(frozen=True, slots=True)
class Coding:
    """How one value is laid out at one version, as the generated code decided.

    ``compact``: a length as unsigned varint + 1 (else int16 for strings, int32 otherwise);
    ``nullable``: a negative length (or marker) reads as null and null may be written;
    ``null_check``: the writer tests for null at all (else a null is a NullPointerException
    while sizing); ``null_compact``: how the writer writes null; ``name``: the field's name
    in Kafka's error messages."""

    kind: str
    name: str
    compact: bool = False
    nullable: bool = False
    null_check: bool = False
    null_compact: bool = False
    struct: StructSpec | None = None
    element: Coding | None = None
    zero_copy: bool = False


def _variable(
    schema: MessageSchema, f: FieldSpec, version: int, possible: Versions, nullable: Versions
) -> Coding:
    """``generateVariableLengthReader``/``Writer`` for a string, bytes, records or array."""
    flex = schema.field_flexible_versions(f)
    compact = _member(version, flex, possible)
    null_member, present = branch(version, nullable, possible)
    element = None
    t = f.type
    if t.is_array:
        assert t.element is not None
        element = _element(schema, f, t.element, version, possible)
    return Coding(
        t.kind,
        f.camel_name,
        compact=compact,
        nullable=null_member,
        null_check=not nullable.intersect(possible).empty,
        null_compact=_member(version, flex, present),
        struct=None,
        element=element,
        zero_copy=f.zero_copy,
    )


def _element(
    schema: MessageSchema, f: FieldSpec, t: FieldType, version: int, possible: Versions
) -> Coding:
    if t.kind in ("string", "bytes"):
        compact = _member(version, schema.field_flexible_versions(f), possible)
        return Coding(t.kind, f"{f.camel_name} element", compact=compact, null_compact=compact)
    return Coding(t.kind, f"{f.camel_name}Element", struct=f.struct if t.is_struct else None)


def _struct(f: FieldSpec, version: int, possible: Versions) -> Coding:
    nullable = _member(version, f.nullable_versions, possible)
    null_check = not f.nullable_versions.intersect(possible).empty
    return Coding("struct", f.camel_name, nullable=nullable, null_check=null_check, struct=f.struct)


def _coding(schema: MessageSchema, f: FieldSpec, version: int, possible: Versions) -> Coding:
    """The coding of an untagged field present at ``version`` (``possible``: the versions the
    generator handed that branch)."""
    t = f.type
    if t.is_struct:
        return _struct(f, version, possible)
    if not t.is_variable_length:
        return Coding(t.kind, f.camel_name)
    if t.is_array and t.element is not None and t.element.differs_in_flexible_versions:
        # the flexible-version test lifted out of the loop: two loops, each with its versions
        _, possible = branch(version, schema.field_flexible_versions(f), possible)
    return _variable(schema, f, version, possible, f.nullable_versions)


def _tagged_coding(schema: MessageSchema, f: FieldSpec, version: int, possible: Versions) -> Coding:
    """The coding of a tagged field's value (``possible``: present-and-tagged versions)."""
    t = f.type
    if t.is_struct:
        return _struct(f, version, possible)
    if not t.is_variable_length:
        return Coding(t.kind, f.camel_name)
    return _variable(schema, f, version, possible, f.nullable_versions)


def _cur(s: StructSpec) -> Versions:
    return s.parent_versions.intersect(s.versions)


_Plan = TypeVar("_Plan")


def _planned(
    schema: MessageSchema,
    direction: str,
    s: StructSpec,
    version: int,
    compile_plan: Callable[[MessageSchema, StructSpec, int], _Plan],
) -> _Plan:
    """The plan of ``s`` at ``version`` for ``direction``, compiled by ``compile_plan`` on
    first use and kept in ``schema.plans``."""
    key = (direction, s.name, version)
    plan: _Plan | None = schema.plans.get(key)
    if plan is None:
        plan = schema.plans[key] = compile_plan(schema, s, version)
    return plan


# ------------------------------------------------------------------------------------ reading


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """``read(Readable, version)`` of one struct at one version: ``error`` (the version
    check's message, or None), per field its coding (None: set to the default), and the
    known tags (None when the version has no tagged fields section): a coding, or the message
    of ``Tag N is not valid``."""

    error: str | None
    fields: tuple[tuple[FieldSpec, Coding | None], ...]
    tags: dict[int, tuple[FieldSpec, Coding | str]] | None


def read_plan(schema: MessageSchema, s: StructSpec, version: int) -> ReadPlan:
    return _planned(schema, "read", s, version, _read_plan)


def _read_plan(schema: MessageSchema, s: StructSpec, version: int) -> ReadPlan:
    error = None
    if not _member(version, s.parent_versions, s.versions):
        error = f"Can't read version {version} of {s.class_name}"
    cur = _cur(s)
    fields: list[tuple[FieldSpec, Coding | None]] = []
    for f in s.fields:
        mandatory = f.versions.subtract(f.tagged_versions) or f.versions
        member, present = branch(version, mandatory, cur)
        fields.append((f, _coding(schema, f, version, present) if member else None))
    tags: dict[int, tuple[FieldSpec, Coding | str]] | None = None
    flexible, cur_flexible = branch(version, schema.flexible_versions, cur)
    if flexible:
        tags = {}
        for f in s.fields:
            valid_tagged = f.versions.intersect(f.tagged_versions)
            if valid_tagged.empty or f.tag is None:
                continue
            member, present = branch(version, valid_tagged, cur_flexible)
            tags[f.tag] = (
                (f, _tagged_coding(schema, f, version, present))
                if member
                else (f, f"Tag {f.tag} is not valid for version {version}")
            )
    return ReadPlan(error, tuple(fields), tags)


# ------------------------------------------------------------------------------------ writing


@dataclass(frozen=True, slots=True)
class WritePlan:
    """``addSize`` + ``write`` of one struct at one version.

    ``size_error``/``write_error``: the version checks' messages; ``fields``: per field
    ``("value", coding)`` (written in place), ``("tagged", coding)`` (counted and sized when
    not default),
    ``("absent", None)`` (must be default: not ignorable) or ``("skip", None)``;
    ``flexible``: whether the tagged-fields section is written; ``tagged``: the fields the
    generated writer knows as tagged, in tag order, each with whether raw tags are flushed
    before it and its coding at this version (None: the generated test is false)."""

    size_error: str | None
    write_error: str | None
    fields: tuple[tuple[FieldSpec, str, Coding | None], ...]
    flexible: bool
    tagged: tuple[tuple[FieldSpec, bool, Coding | None], ...]


def write_plan(schema: MessageSchema, s: StructSpec, version: int) -> WritePlan:
    return _planned(schema, "write", s, version, _write_plan)


def _write_plan(schema: MessageSchema, s: StructSpec, version: int) -> WritePlan:
    size_error = write_error = None
    if not _member(version, s.parent_versions, s.versions):
        size_error = f"Can't size version {version} of {s.class_name}"
    if not _member(version, s.versions, s.parent_versions):
        write_error = f"Can't write version {version} of {s.class_name}"
    cur = _cur(s)
    fields: list[tuple[FieldSpec, str, Coding | None]] = []
    known: list[FieldSpec] = []
    for f in s.fields:
        member, present = branch(version, f.versions, cur)
        if emitted(f.versions, cur) and emitted(f.tagged_versions, cur.intersect(f.versions)):
            known.append(f)  # the generator's taggedFields map: its tagged branch exists
        if member:
            is_tagged, rest = branch(version, f.tagged_versions, present)
            if is_tagged:
                fields.append((f, "tagged", _tagged_coding(schema, f, version, rest)))
            else:
                fields.append((f, "value", _coding(schema, f, version, rest)))
        else:
            fields.append((f, "skip" if f.ignorable else "absent", None))
    flexible, cur_flexible = branch(version, schema.flexible_versions, cur)
    tagged: list[tuple[FieldSpec, bool, Coding | None]] = []
    prev = -1
    for f in sorted(known, key=lambda x: x.tag or 0):
        assert f.tag is not None
        member, present = branch(version, f.tagged_versions.intersect(f.versions), cur_flexible)
        coding = _tagged_coding(schema, f, version, present) if member else None
        tagged.append((f, prev + 1 != f.tag, coding))
        prev = f.tag
    return WritePlan(size_error, write_error, tuple(fields), flexible, tuple(tagged))


# --------------------------------------------------------------------------------------- JSON


@dataclass(frozen=True, slots=True)
class JsonPlan:
    """``XJsonConverter.write(object, version)`` of one struct: ``error`` (its version
    check), per field ``("value", coding)``, ``("tagged", coding)`` (written when not the
    default), ``("absent", None)`` or ``("skip", None)``. A coding's ``null_check``: the
    converter tests for null (else a null string is written as ``null`` by ``TextNode``,
    anything else is a NullPointerException)."""

    error: str | None
    fields: tuple[tuple[FieldSpec, str, Coding | None], ...]


def json_plan(schema: MessageSchema, s: StructSpec, version: int) -> JsonPlan:
    return _planned(schema, "json", s, version, _json_plan)


def _json_coding(f: FieldSpec, possible: Versions, nullable: Versions) -> Coding:
    t = f.type
    element = None
    if t.is_array:
        assert t.element is not None
        element = Coding(
            t.element.kind, f.camel_name, struct=f.struct if t.is_struct_array else None
        )
    return Coding(
        t.kind,
        f.camel_name,
        null_check=not nullable.intersect(possible).empty,
        struct=f.struct if t.is_struct else None,
        element=element,
        zero_copy=f.zero_copy,
    )


def _json_plan(schema: MessageSchema, s: StructSpec, version: int) -> JsonPlan:
    error = None
    if not _member(version, s.versions, s.parent_versions):
        error = f"Can't write version {version} of {s.class_name}"
    cur = _cur(s)
    fields: list[tuple[FieldSpec, str, Coding | None]] = []
    for f in s.fields:
        member, present = branch(version, f.versions, cur)
        if not member:
            fields.append((f, "skip" if f.ignorable else "absent", None))
            continue
        tagged, rest = branch(version, f.tagged_versions, present)
        if tagged:
            nullable = NO_VERSIONS if f.default_is_null else f.nullable_versions
            fields.append((f, "tagged", _json_coding(f, rest, nullable)))
        else:
            fields.append((f, "value", _json_coding(f, rest, f.nullable_versions)))
    return JsonPlan(error, tuple(fields))
