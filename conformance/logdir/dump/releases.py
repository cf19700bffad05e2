"""The Apache Kafka releases whose DumpLogSegments the kit prints, as data: every release from
0.10.2.0 to 4.3.x as published on Maven Central (``org.apache.kafka:kafka-clients``; 3.3.0 is
there though it was never announced), and their lines (``2.8``; ``0.10.2`` and ``0.11.0``
for the four-part 0.x numbers).

``dump --format-of`` accepts exactly these names (``formats.format_of`` folds the format
of any version number in range: the rows of ``formats.CHANGES`` are release boundaries, and
the tests fold the numbers just before them); a name that is no release is refused with
:func:`check_release`, which lists the real ones.
"""

from __future__ import annotations

from conformance.logdir.dump.versions import UnknownKafkaVersion, kafka_version

__all__ = ["LINES", "RELEASES", "check_release", "is_release", "releases_text"]

#: every release, oldest first: (line, the patch numbers it had)
_BY_LINE: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("0.10.2", (0, 1, 2)),
    ("0.11.0", (0, 1, 2, 3)),
    ("1.0", (0, 1, 2)),
    ("1.1", (0, 1)),
    ("2.0", (0, 1)),
    ("2.1", (0, 1)),
    ("2.2", (0, 1, 2)),
    ("2.3", (0, 1)),
    ("2.4", (0, 1)),
    ("2.5", (0, 1)),
    ("2.6", (0, 1, 2, 3)),
    ("2.7", (0, 1, 2)),
    ("2.8", (0, 1, 2)),
    ("3.0", (0, 1, 2)),
    ("3.1", (0, 1, 2)),
    ("3.2", (0, 1, 2, 3)),
    ("3.3", (0, 1, 2)),
    ("3.4", (0, 1)),
    ("3.5", (0, 1, 2)),
    ("3.6", (0, 1, 2)),
    ("3.7", (0, 1, 2)),
    ("3.8", (0, 1)),
    ("3.9", (0, 1, 2)),
    ("4.0", (0, 1, 2)),
    ("4.1", (0, 1, 2)),
    ("4.2", (0, 1, 2)),
    ("4.3", (0, 1)),
)

#: the release lines, as ``--format-of`` takes them (a line prints as its releases do)
LINES: tuple[str, ...] = tuple(line for line, _ in _BY_LINE)
#: every release, as Kafka numbers it ("0.10.2.2", "2.8.2")
RELEASES: tuple[str, ...] = tuple(
    f"{line}.{patch}" for line, patches in _BY_LINE for patch in patches
)
_NAMES = frozenset(LINES) | frozenset(RELEASES)


def is_release(text: str) -> bool:
    """Whether ``text`` names a release or a line of :data:`RELEASES`, exactly as written."""
    return text in _NAMES


def releases_text() -> str:
    """The releases, compactly: ``0.10.2.0-0.10.2.2, 0.11.0.0-0.11.0.3, ..., 4.3.0-4.3.1``."""
    parts = []
    for line, patches in _BY_LINE:
        first, last = patches[0], patches[-1]
        if patches == tuple(range(first, last + 1)) and first != last:
            parts.append(f"{line}.{first}-{line}.{last}")
        else:
            parts.append(", ".join(f"{line}.{p}" for p in patches))
    return ", ".join(parts)


def check_release(text: str) -> str:
    """``text`` if it names a release or a line; else :class:`UnknownKafkaVersion` saying so
    and listing the releases (``kafka_version`` first: a text that is no version number at
    all is refused as such)."""
    if is_release(text):
        return text
    kafka_version(text)  # not a version number at all: its own message
    raise UnknownKafkaVersion(
        f"Kafka has no release {text!r}: the releases are {releases_text()}, or a line of "
        f"them (e.g. 2.8, 0.10.2)"
    )
