"""Text files of a log directory, read with Kafka's exact rules (docs/format.md §6.8-6.10).

=================================  =============================================
file                               content
=================================  =============================================
recovery-point-offset-checkpoint,  ``0`` / ``<count>`` / ``<topic> <partition> <offset>``
log-start-offset-checkpoint,       per line (``OffsetCheckpointFile``)
replication-offset-checkpoint,
cleaner-offset-checkpoint
leader-epoch-checkpoint            ``0`` / ``<count>`` / ``<epoch> <startOffset>``
partition.metadata                 ``version: 0`` / ``topic_id: <base64url uuid>``
meta.properties                    Java ``Properties`` (version, cluster.id,
                                   broker.id / node.id, directory.id)
=================================  =============================================
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from conformance.errors import (
    CheckpointError,
    DecodeError,
    IllegalArgumentError,
    JavaRuntimeError,
    NumberFormatError,
)
from conformance.primitives.java import java_parse_int

OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"

_WS = re.compile(r"\s+")
_LINES = re.compile(r"\r\n|\r|\n")


def java_split(pattern: re.Pattern[str], line: str) -> list[str]:
    """``Pattern.split(line)``: trailing empty strings removed."""
    parts = pattern.split(line)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def read_lines(data: bytes) -> list[str]:
    """``BufferedReader.readLine`` over UTF-8 (malformed input replaced, as Java's decoder)."""
    from conformance.primitives.java import java_utf8

    text = java_utf8(data)
    if text == "":
        return []
    lines = _LINES.split(text)
    if lines and lines[-1] == "" and (text.endswith("\n") or text.endswith("\r")):
        lines.pop()
    return lines


@dataclass(frozen=True, slots=True)
class OffsetEntry:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


def _read_checkpoint(data: bytes, location: str, parse_entry):  # type: ignore[no-untyped-def]
    """``CheckpointFile.CheckpointReadBuffer.read`` (version 0)."""
    lines = read_lines(data)

    def malformed(line: str) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{location}]: {line}")

    def to_int(line: str) -> int:
        try:
            return java_parse_int(line)
        except NumberFormatError:
            raise malformed(line) from None

    if not lines:
        return []
    version = to_int(lines[0])
    if version != 0:
        raise CheckpointError(
            f"Unrecognised version:{version}, expected version: 0 in checkpoint file at: {location}"
        )
    if len(lines) < 2:
        return []
    expected = to_int(lines[1])
    if expected < 0:
        raise IllegalArgumentError(f"Illegal Capacity: {expected}")
    entries = []
    for line in lines[2:]:
        entry = parse_entry(line)
        if entry is None:
            raise malformed(line)
        entries.append(entry)
    if len(entries) != expected:
        raise CheckpointError(
            f"Expected [{expected}] entries in checkpoint file [{location}], but found only "
            f"[{len(entries)}]"
        )
    return entries


def _offset_entry(line: str) -> OffsetEntry | None:
    parts = java_split(_WS, line)
    if len(parts) != 3:
        return None
    return OffsetEntry(parts[0], java_parse_int(parts[1]), java_parse_int(parts[2], 64))


def _epoch_entry(line: str) -> EpochEntry | None:
    parts = java_split(_WS, line)
    if len(parts) != 2:
        return None
    return EpochEntry(java_parse_int(parts[0]), java_parse_int(parts[1], 64))


def read_offset_checkpoint(data: bytes, location: str = "<checkpoint>") -> list[OffsetEntry]:
    return _read_checkpoint(data, location, _offset_entry)  # type: ignore[no-any-return]


def read_leader_epoch_checkpoint(data: bytes, location: str = "<checkpoint>") -> list[EpochEntry]:
    return _read_checkpoint(data, location, _epoch_entry)  # type: ignore[no-any-return]


def write_offset_checkpoint(entries: list[OffsetEntry]) -> bytes:
    lines = ["0", str(len(entries))] + [f"{e.topic} {e.partition} {e.offset}" for e in entries]
    return ("\n".join(lines) + "\n").encode()


def write_leader_epoch_checkpoint(entries: list[EpochEntry]) -> bytes:
    lines = ["0", str(len(entries))] + [f"{e.epoch} {e.start_offset}" for e in entries]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------------- partition.metadata

_COLON_WS = re.compile(r":\s+")


def uuid_from_string(s: str) -> bytes:
    """``Uuid.fromString``: 22 base64url characters without padding -> 16 bytes."""
    try:
        raw = base64.urlsafe_b64decode(s + "==")
        if base64.urlsafe_b64encode(raw).decode().rstrip("=") != s:
            raise ValueError
    except (ValueError, UnicodeError):
        raise IllegalArgumentError(f"Illegal base64 character in {s!r}") from None
    if len(raw) != 16:
        raise IllegalArgumentError(
            f"Input string with prefix `{s[:22]}` is too long to be decoded as a base64 UUID"
            if len(s) > 22
            else f"Input string `{s}` decoded as {len(raw)} bytes, which is not equal to the "
            "expected 16 bytes of a base64-encoded UUID"
        )
    return raw


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    version: int
    topic_id: str


def read_partition_metadata(
    data: bytes, location: str = "<partition.metadata>"
) -> PartitionMetadata:
    """``PartitionMetadataReadBuffer.read``."""
    lines = read_lines(data)

    def malformed(line: str | None) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{location}]: {line}")

    line = lines[0] if lines else None
    if line is None:
        raise JavaRuntimeError(None, java_class="java.lang.NullPointerException")
    parts = java_split(_COLON_WS, line)
    if len(parts) != 2:
        raise malformed(line)
    try:
        version = java_parse_int(parts[1])
    except NumberFormatError:
        raise malformed(line) from None
    if version < 0:
        raise CheckpointError(
            f"Unrecognized version of partition metadata file + ({location}): {version}"
        )
    line = lines[1] if len(lines) > 1 else None
    if line is None:
        raise JavaRuntimeError(None, java_class="java.lang.NullPointerException")
    parts = java_split(_COLON_WS, line)
    if len(parts) != 2:
        raise malformed(line)
    raw = uuid_from_string(parts[1])
    if raw == bytes(16):
        raise CheckpointError(f"Invalid topic ID in partition metadata file ({location})")
    return PartitionMetadata(version, parts[1])


def write_partition_metadata(topic_id: str) -> bytes:
    return f"version: 0\ntopic_id: {topic_id}".encode()


# ---------------------------------------------------------------------------- meta.properties


def read_java_properties(data: bytes) -> dict[str, str]:
    """``java.util.Properties.load(InputStream)``: ISO-8859-1, ``\\`` escapes, continuations."""
    text = data.decode("latin-1")
    props: dict[str, str] = {}
    logical: list[str] = []
    raw_lines = _LINES.split(text)
    i = 0
    while i < len(raw_lines):
        line = raw_lines[i].lstrip(" \t\f")
        i += 1
        if not logical and (not line or line[0] in "#!"):
            continue
        # a line ending in an odd number of backslashes continues on the next line
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            logical.append(line[:-1])
            continue
        logical.append(line)
        _property(props, "".join(logical))
        logical = []
    if logical:
        _property(props, "".join(logical))
    return props


def _property(props: dict[str, str], line: str) -> None:
    key_end = 0
    n = len(line)
    while key_end < n:
        c = line[key_end]
        if c == "\\":
            key_end += 2
            continue
        if c in "=: \t\f":
            break
        key_end += 1
    key = line[:key_end]
    rest = line[key_end:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    props[_unescape(key)] = _unescape(rest)


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt == "u":
            digits = s[i + 2 : i + 6]
            if len(digits) < 4 or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                raise IllegalArgumentError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
        i += 2
    return "".join(out)


@dataclass(frozen=True, slots=True)
class MetaProperties:
    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None


def read_meta_properties(data: bytes) -> MetaProperties:
    """``MetaProperties.Builder(Properties)`` plus ``build()`` checks."""
    props = read_java_properties(data)
    raw_version = props.get("version", "0").strip()
    if raw_version not in ("0", "1"):
        raise JavaRuntimeError(
            f"Unknown meta.properties version number {raw_version}",
            java_class="java.lang.RuntimeException",
        )
    version = int(raw_version)

    def required_int(key: str) -> int:
        value = props.get(key)
        if value is None:
            raise JavaRuntimeError(f"Failed to find {key}", java_class="java.lang.RuntimeException")
        try:
            return java_parse_int(value)
        except NumberFormatError:
            raise JavaRuntimeError(
                f"Unable to read {key} as a base-10 number.",
                java_class="java.lang.RuntimeException",
            ) from None

    node_id: int | None = None
    if version == 0:
        if "broker.id" in props:
            node_id = required_int("broker.id")
    else:
        node_id = required_int("node.id")
    cluster_id = props.get("cluster.id")
    directory_id = props.get("directory.id")
    if directory_id is not None:
        try:
            uuid_from_string(directory_id)
        except DecodeError as e:
            raise JavaRuntimeError(
                f"Unable to read directory.id as a Uuid: {e.message}",
                java_class="java.lang.RuntimeException",
            ) from None
    if version == 1 and cluster_id is None:
        raise JavaRuntimeError("cluster.id was not found.", java_class="java.lang.RuntimeException")
    return MetaProperties(version, cluster_id, node_id, directory_id)
