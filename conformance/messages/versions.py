"""Version ranges as Kafka's message generator has them (``org.apache.kafka.message.Versions``),
and :func:`branch`, a ``VersionConditional`` of the generated code evaluated at run time.

Kafka's generator (``MessageDataGenerator``, ``JsonConverterGenerator``) writes each version
test as a ``VersionConditional``: a range check *simplified by the versions the code can be
reached with* (``possibleVersions``). Inside the struct's valid versions the simplified check
is the plain range test; outside them (a coordinator value newer than the reader, a version
nobody checked) it is not: ``if (_version <= 3)`` has no lower bound, and a check the
generator proved always true is not emitted at all. :func:`branch` evaluates a conditional as
the generated code does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ALL_VERSIONS",
    "NO_VERSIONS",
    "SHORT_MAX",
    "SchemaError",
    "Versions",
    "branch",
    "emitted",
    "read_versions",
]

SHORT_MAX = 0x7FFF


class SchemaError(ValueError):
    """A definition the generator would refuse (the message says what and where)."""


@dataclass(frozen=True, slots=True)
class Versions:
    """``org.apache.kafka.message.Versions``: ``lowest..highest`` inclusive; empty when
    ``lowest > highest`` (``none`` is ``0..-1``); ``N+`` ends at ``Short.MAX_VALUE``."""

    lowest: int
    highest: int

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lowest <= version <= self.highest

    def contains_range(self, other: Versions) -> bool:
        """``contains(Versions)``: every version of ``other`` is in this range."""
        if other.empty:
            return True
        return not (self.lowest > other.lowest or self.highest < other.highest)

    def intersect(self, other: Versions) -> Versions:
        lo = max(self.lowest, other.lowest)
        hi = min(self.highest, other.highest)
        return NO_VERSIONS if lo > hi else Versions(lo, hi)

    def subtract(self, other: Versions) -> Versions | None:
        """``Versions.subtract``: this range without ``other``; None when that would be two
        ranges."""
        if other.lowest <= self.lowest:
            if other.highest >= self.highest:
                return NO_VERSIONS
            if other.highest < self.lowest:
                return self
            return Versions(other.highest + 1, self.highest)
        if other.highest >= self.highest:
            new_highest = other.lowest - 1
            if new_highest < 0:
                return self
            if new_highest < self.highest:
                return Versions(self.lowest, new_highest)
            return self
        return None

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.lowest == self.highest:
            return str(self.lowest)
        if self.highest == SHORT_MAX:
            return f"{self.lowest}+"
        return f"{self.lowest}-{self.highest}"


NO_VERSIONS = Versions(0, -1)
ALL_VERSIONS = Versions(0, SHORT_MAX)


def _short(text: str, what: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise SchemaError(f"{what}: not a version: {text!r}") from None
    if not -0x8000 <= value <= SHORT_MAX or not re.fullmatch(r"[+-]?[0-9]+", text):
        raise SchemaError(f"{what}: not a version: {text!r}")
    return value


def read_versions(text: str | None, default: Versions | None, what: str = "versions") -> Versions:
    """``Versions.parse``: ``"none"``, ``"N"``, ``"N+"``, ``"N-M"``; ``default`` when absent."""
    if text is None or not text.strip():
        if default is None:
            raise SchemaError(f"{what}: a version range is required")
        return default
    t = text.strip()
    if t == "none":
        return NO_VERSIONS
    if t.endswith("+"):
        return Versions(_short(t[:-1], what), SHORT_MAX)
    dash = t.find("-")
    if dash < 0:
        v = _short(t, what)
        return Versions(v, v)
    return Versions(_short(t[:dash], what), _short(t[dash + 1 :], what))


# ----------------------------------------------------------------------- the generated tests


def _kind(containing: Versions, possible: Versions) -> str:
    """Which check ``VersionConditional.generate`` emits: ``full``, ``lower``, ``upper``,
    ``true`` (none: always a member) or ``false`` (none: never)."""
    if possible.lowest < containing.lowest:
        if possible.highest > containing.highest:
            return "full"
        if possible.highest >= containing.lowest:
            return "lower"
        return "false"
    if possible.highest >= containing.lowest and possible.lowest <= containing.highest:
        return "upper" if possible.highest > containing.highest else "true"
    return "false"


def branch(version: int, containing: Versions, possible: Versions) -> tuple[bool, Versions]:
    """``VersionConditional.forVersions(containing, possible)`` run at ``version``: whether the
    ``ifMember`` clause runs, and the versions the generator handed that clause."""
    kind = _kind(containing, possible)
    if kind == "true":
        member = True
    elif kind == "false":
        member = False
    elif kind == "lower":
        member = version >= containing.lowest
    elif kind == "upper":
        member = version <= containing.highest
    else:
        member = containing.lowest <= version <= containing.highest
    if member:
        return True, possible.intersect(containing)
    rest = possible.subtract(containing)
    return False, possible if rest is None else rest


def emitted(containing: Versions, possible: Versions) -> bool:
    """Whether the generator emitted the ``ifMember`` clause at all (not always false)."""
    return _kind(containing, possible) != "false"
