"""Kafka release numbers as the dump formats read and print them: ``"0.10.2.2"``, ``"2.8"``,
``"3.9.2-rc1"`` -> a 4-tuple, and back (``formats`` re-exports these names)."""

from __future__ import annotations

import re

__all__ = ["UnknownKafkaVersion", "Version", "kafka_version", "version_text"]

Version = tuple[int, int, int, int]


class UnknownKafkaVersion(ValueError):
    """A version the kit has no DumpLogSegments format for (not a Kafka release number, or
    outside :data:`formats.OLDEST` .. :data:`formats.NEWEST`)."""


def kafka_version(text: str) -> Version:
    """``"2.8"``, ``"2.8.2"``, ``"0.10.2.2"`` -> a 4-tuple (missing parts 0). A suffix after
    ``-`` (``3.9.2-rc1``) is ignored."""
    core = text.strip().split("-", 1)[0]
    if not re.fullmatch(r"\d+(\.\d+){1,3}", core):
        raise UnknownKafkaVersion(
            f"{text!r} is not a Kafka version (expected e.g. 2.8, 3.9.2 or 0.10.2.2)"
        )
    parts = [int(p) for p in core.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))  # type: ignore[return-value]


def version_text(v: Version) -> str:
    """``(2, 8, 2, 0)`` -> ``"2.8.2"`` (a 0.x version keeps four parts)."""
    parts = list(v)
    keep = 4 if parts[0] == 0 else 3
    while len(parts) > 2 and len(parts) > keep - 1 and parts[-1] == 0:
        parts.pop()
    return ".".join(str(p) for p in parts)
