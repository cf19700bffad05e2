"""verify-dir: the other files of a directory: offset checkpoints, ``leader-epoch-checkpoint``,
``partition.metadata``, ``meta.properties`` and producer-state ``.snapshot`` files.

Mirrors ``CheckpointFile``, ``PartitionMetadataFile``, ``MetaProperties`` and
``ProducerStateManager.readSnapshot``; a snapshot finding points at its header field:

=====  ======  =======
@      field   type
=====  ======  =======
0      version int16
2      crc     uint32
6      count   int32
10     entries 46 bytes each
=====  ======  =======
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.errors import DecodeError, IllegalArgumentError, NumberFormatError
from conformance.logdir import checkpoint, snapshot
from conformance.logdir.verify.findings import Sink


# ------------------------------------------------------------------- other files of a dir

def _line_starts(data: bytes) -> list[tuple[int, str]]:
    """(byte position, text) of each line, split as ``BufferedReader.readLine`` splits."""
    out = []
    pos = 0
    for m in re.finditer(rb"\r\n|\r|\n", data):
        out.append((pos, data[pos : m.start()].decode("utf-8", "replace")))
        pos = m.end()
    if pos < len(data):
        out.append((pos, data[pos:].decode("utf-8", "replace")))
    return out


def _checkpoint_error_position(data: bytes, e: DecodeError) -> int:
    """Where in a checkpoint / partition.metadata file the error ``e`` points."""
    lines = _line_starts(data)
    message = e.message or ""

    def line(i: int) -> int:
        return lines[i][0] if i < len(lines) else len(data)

    m = re.search(r"Malformed line in checkpoint file \[.*?\]: (.*)\Z", message, re.S)
    if m is not None:
        for start, text in lines:
            if text == m.group(1):
                return start
        return 0
    if message.startswith(("Expected [", "Illegal Capacity")):
        return line(1)
    if message.startswith("Invalid topic ID") or isinstance(e, IllegalArgumentError):
        return line(1)
    if isinstance(e, NumberFormatError):
        token = re.search(r'For input string: "(.*)"\Z', message, re.S)
        for start, text in lines[2:]:
            if token is not None and token.group(1) in re.split(r"\s+", text):
                return start
        return 0
    if e.kafka_exception == "java.lang.NullPointerException":  # a missing line
        return len(data)
    return 0


def _properties_error_position(data: bytes, e: DecodeError) -> int:
    message = e.message or ""
    key = None
    if message.startswith("Unknown meta.properties version"):
        key = "version"
    else:
        m = re.match(r"Unable to read (\S+) as", message)
        if m is not None:
            key = m.group(1)
    if key is None:
        return 0
    for start, text in _line_starts(data):
        if re.match(rf"[ \t\f]*{re.escape(key)}[ \t\f]*[=: \t\f]", text + " "):
            return start
    return 0


def verify_text_file(path: Path, sink: Sink) -> None:
    try:
        data = path.read_bytes()
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    location = str(path.absolute())
    name = path.name
    try:
        if name in checkpoint.OFFSET_CHECKPOINTS:
            checkpoint.parse_offset_checkpoint(data, location)
        elif name == checkpoint.LEADER_EPOCH_CHECKPOINT:
            checkpoint.parse_leader_epoch_checkpoint(data, location)
        elif name == checkpoint.PARTITION_METADATA:
            checkpoint.parse_partition_metadata(data, location)
        elif name == checkpoint.META_PROPERTIES:
            checkpoint.parse_meta_properties(data)
    except DecodeError as e:
        if name == checkpoint.META_PROPERTIES:
            code, position = "metadata-unreadable", _properties_error_position(data, e)
        else:
            code = "metadata-unreadable" if name == checkpoint.PARTITION_METADATA else "checkpoint-unreadable"
            position = _checkpoint_error_position(data, e)
        sink.add(code, str(path), position, e.java_string(), e.kafka_exception)


def verify_snapshot(path: Path, sink: Sink) -> None:
    try:
        data = path.read_bytes()
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    try:
        snapshot.parse(data)
    except DecodeError as e:
        message = e.message or ""
        if "CRC" in message:
            position = snapshot.CRC_OFFSET
        elif "unknown file version" in message or "field 'version'" in message:
            position = snapshot.VERSION_OFFSET
        elif "field 'crc'" in message:
            position = snapshot.CRC_OFFSET
        elif "Error reading field 'producer_entries'" in message and len(data) >= snapshot.ENTRIES_OFFSET:
            position = snapshot.COUNT_OFFSET
        elif "Error reading field" in message and len(data) >= snapshot.ENTRIES_OFFSET:  # a partial entry
            position = (snapshot.ENTRIES_OFFSET + (len(data) - snapshot.ENTRIES_OFFSET)
                        // snapshot.ENTRY.size * snapshot.ENTRY.size)
        else:
            position = 0
        sink.add("snapshot-unreadable", str(path), position, e.java_string(), e.kafka_exception)


