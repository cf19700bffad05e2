"""Messages drawn at random for a schema and version, that Kafka writes and reads back unchanged.

:func:`sample_message` fills every field the version writes (untagged fields always, tagged
ones or their defaults, nulls where the version allows them), keeps fields the version does
not have at their defaults, and adds unknown tagged fields (tags above every known one, in
order) in flexible versions. The choices come from a :class:`Choices` source, so the same
walk serves Hypothesis (``conformance.strategies.messages``) and a seeded ``random.Random``
(the Java differential tests).
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from conformance.messages.plan import Coding, write_plan
from conformance.messages.schema import INT_RANGES, MessageSchema, StructSpec
from conformance.messages.value import Message, RawTaggedField

__all__ = ["FLOATS", "Choices", "sample_message"]

#: float64 values drawn: Java 17 prints each of them with its shortest digits
FLOATS = (0.0, -0.0, 1.0, -1.5, 0.001, 1e7, 123.456, 1e-5, 2.5e20, 1e300, float("inf"))


class Choices(Protocol):
    """A source of choices."""

    def integer(self, lo: int, hi: int) -> int: ...

    def binary(self, max_size: int) -> bytes: ...

    def text(self, max_size: int) -> str: ...


class _Sampler:
    def __init__(
        self, schema: MessageSchema, version: int, choices: Choices, max_items: int
    ) -> None:
        self.schema = schema
        self.version = version
        self.c = choices
        self.max_items = max_items

    def chance(self, one_in: int) -> bool:
        return self.c.integer(0, one_in - 1) == 0

    def struct(self, s: StructSpec, depth: int = 0) -> Message:
        plan = write_plan(self.schema, s, self.version)
        m = Message(s)
        for f, action, coding in plan.fields:
            if action == "value":
                assert coding is not None
                m[f.name] = self.value(coding, depth)
        for f, _flush, coding in plan.tagged:
            if coding is not None and self.chance(2):
                m[f.name] = self.value(coding, depth)
        if plan.flexible and self.chance(4):
            top = max((f.tag for f in s.fields if f.tag is not None), default=-1)
            tags = sorted({self.c.integer(top + 1, top + 40) for _ in range(self.c.integer(1, 2))})
            m.unknown_tagged_fields = [RawTaggedField(t, self.c.binary(6)) for t in tags]
        return m

    def value(self, c: Coding, depth: int) -> Any:
        kind = c.kind
        if kind in INT_RANGES:
            lo, hi = INT_RANGES[kind]
            pick = self.c.integer(0, 5)
            return (lo, hi, 0, -1 if lo < 0 else 1, self.c.integer(lo, hi), 7)[pick]
        if kind == "bool":
            return self.chance(2)
        if kind == "float64":
            return FLOATS[self.c.integer(0, len(FLOATS) - 1)]
        if kind == "uuid":
            return uuid.UUID(int=self.c.integer(0, 2**128 - 1))
        if c.null_check and c.nullable and self.chance(5):
            return None
        if kind == "string":
            return self.c.text(12)
        if kind in ("bytes", "records"):
            return self.c.binary(12)
        if kind == "struct":
            assert c.struct is not None
            return self.struct(c.struct, depth + 1)
        element = c.element
        assert element is not None
        count = self.c.integer(0, self.max_items if depth < 3 else 1)
        if element.kind == "struct":
            assert element.struct is not None
            return [self.struct(element.struct, depth + 1) for _ in range(count)]
        return [self.value(element, depth + 1) for _ in range(count)]


def sample_message(
    schema: MessageSchema, version: int, choices: Choices, *, max_items: int = 3
) -> Message:
    """A message of ``schema`` for ``version`` with values from ``choices`` (arrays of at most
    ``max_items`` elements)."""
    return _Sampler(schema, version, choices, max_items).struct(schema.struct)
