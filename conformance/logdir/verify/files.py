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

import os
import re
from pathlib import Path

from conformance.errors import DecodeError, IllegalArgumentError, NumberFormatError
from conformance.fileio import check_regular_file, read_bytes
from conformance.logdir import checkpoint, snapshot
from conformance.logdir.verify.findings import DirFinding, DirReport, Sink
from conformance.logdir.verify.segment import PARTITION_DIR

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
        data = read_bytes(path)  # a FIFO or device is refused, not read (it would block)
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    location = str(path.absolute())
    name = path.name
    try:
        if name in checkpoint.OFFSET_CHECKPOINTS:
            checkpoint.read_offset_checkpoint(data, location)
        elif name == checkpoint.LEADER_EPOCH_CHECKPOINT:
            checkpoint.read_leader_epoch_checkpoint(data, location)
        elif name == checkpoint.PARTITION_METADATA:
            checkpoint.read_partition_metadata(data, location)
        elif name == checkpoint.META_PROPERTIES:
            checkpoint.read_meta_properties(data)
    except DecodeError as e:
        if name == checkpoint.META_PROPERTIES:
            code, position = "metadata-unreadable", _properties_error_position(data, e)
        else:
            code = (
                "metadata-unreadable"
                if name == checkpoint.PARTITION_METADATA
                else "checkpoint-unreadable"
            )
            position = _checkpoint_error_position(data, e)
        sink.add(code, str(path), position, e.java_string(), e.kafka_exception)


def verify_snapshot(path: Path, sink: Sink) -> None:
    try:
        data = read_bytes(path)
    except OSError as e:
        sink.add("io-error", str(path), 0, f"cannot read: {e.strerror or e}")
        return
    try:
        snapshot.read_snapshot(data)
    except DecodeError as e:
        message = e.message or ""
        if "CRC" in message:
            position = snapshot.CRC_OFFSET
        elif "unknown file version" in message or "field 'version'" in message:
            position = snapshot.VERSION_OFFSET
        elif "field 'crc'" in message:
            position = snapshot.CRC_OFFSET
        elif (
            "Error reading field 'producer_entries'" in message
            and len(data) >= snapshot.ENTRIES_OFFSET
        ):
            position = snapshot.COUNT_OFFSET
        elif (
            "Error reading field" in message and len(data) >= snapshot.ENTRIES_OFFSET
        ):  # a partial entry
            position = (
                snapshot.ENTRIES_OFFSET
                + (len(data) - snapshot.ENTRIES_OFFSET) // snapshot.ENTRY.size * snapshot.ENTRY.size
            )
        else:
            position = 0
        sink.add("snapshot-unreadable", str(path), position, e.java_string(), e.kafka_exception)


# ------------------------------------------------- index files that are not regular files

_INDEX_FILE = re.compile(r"^(\d+)\.(index|timeindex|txnindex)$")


def _companion_findings(pdir: Path, names: list[str]) -> list[DirFinding]:
    out = []
    present = set(names)
    for name in names:
        m = _INDEX_FILE.match(name)
        if m is None or f"{m.group(1)}.log" not in present:
            continue  # an orphaned index is an unexpected-file finding already
        path = pdir / name
        try:
            check_regular_file(path)
        except FileNotFoundError:
            continue  # a dangling symbolic link reads as absent, as in Kafka
        except OSError as e:
            out.append(DirFinding("io-error", str(path), 0, f"cannot read: {e.strerror or e}"))
    return out


def non_regular_index_findings(path: str | os.PathLike[str]) -> list[DirFinding]:
    """``io-error`` findings for the ``.index``/``.timeindex``/``.txnindex`` of each segment
    under ``path`` (a ``.log``, a partition directory or a log directory, as ``verify_dir``
    walks them) that exist but are not readable regular files (a FIFO, a directory, a
    device, a symbolic link loop): the segment walk takes a non-regular index for an absent
    one, which would make the directory look clean."""
    p = Path(path)
    if p.is_file():
        pdirs, only = [p.parent], p.name.split(".")[0]
    elif p.is_dir():
        only = None
        pdirs = [p]
        try:
            pdirs += sorted(c for c in p.iterdir() if c.is_dir() and PARTITION_DIR.match(c.name))
        except OSError:
            pass
    else:
        return []
    out = []
    for pdir in pdirs:
        try:
            names = sorted(os.listdir(pdir))
        except OSError:
            continue  # reported by the walk itself
        if only is not None:
            names = [n for n in names if n.split(".")[0] == only]
        out += _companion_findings(pdir, names)
    return out


def add_non_regular_index_findings(report: DirReport) -> None:
    """Add :func:`non_regular_index_findings` of ``report.root`` to ``report``."""
    report.findings.extend(non_regular_index_findings(report.root))
