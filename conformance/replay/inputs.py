"""What a replay reads: input paths, globs and URIs expanded into files, and their byte sources.

==================  ============================================================================
input               becomes
==================  ============================================================================
a ``.log`` file     a segment (its ``.index`` beside it, if any, helps cut it into ranges)
another file        a raw record-set file (decoded in file semantics too)
a directory         every ``.log`` under it (recursively): log directories, partition
                    directories; Kafka's other files (indexes, snapshots, checkpoints) are
                    counted as companions; anything else is listed as skipped; a directory
                    with no ``.log`` under it is reported as ``not-kafka``
a glob              (local paths) each match, as above
``scheme://...``    the same through ``pyarrow.fs`` (``file://``, ``s3://``, ``hdfs://``, ...)
==================  ============================================================================

Files that cannot be read (permissions, not regular files, vanished) are reported as problems;
the replay goes on with the others.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.fileio import FileShrankError, FileSource, check_regular_file, printable_name
from conformance.jsondoc import JsonDocument

__all__ = ["InputFile", "Inputs", "Problem", "expand", "open_source"]

#: files Kafka keeps beside its segments (replayed by ``verify-dir``, not by ``replay``)
COMPANION_SUFFIXES = (
    ".index",
    ".timeindex",
    ".txnindex",
    ".snapshot",
    ".deleted",
    ".cleaned",
    ".swap",
    ".checkpoint",
    ".tmp",
)
COMPANION_NAMES = (
    "partition.metadata",
    "leader-epoch-checkpoint",
    "meta.properties",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "bootstrap.checkpoint",
)
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
_SEGMENT_NAME = re.compile(r"^(\d+)\.log$")


@dataclass(frozen=True, slots=True)
class InputFile(JsonDocument):
    """One file to replay."""

    path: str  # a local path, or a URI (``scheme://...``)
    kind: str  # "segment" | "raw"
    size: int
    directory: str  # the directory holding it (a partition directory for segments)
    group: str  # offsets are followed within a group: the partition directory, or the file
    segment_base: int | None  # base offset from a segment's name
    index: str | None  # the segment's offset index, when present and non-empty

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "size": self.size,
            "directory": self.directory,
            "group": self.group,
            "segment_base": self.segment_base,
            "index": self.index,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> InputFile:
        return cls(
            doc["path"],
            doc["kind"],
            doc["size"],
            doc["directory"],
            doc["group"],
            doc["segment_base"],
            doc["index"],
        )


@dataclass(frozen=True, slots=True)
class Problem(JsonDocument):
    path: str
    kind: str  # "unreadable" | "not-kafka" | "skipped" | "no-match"
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "message": self.message}


@dataclass
class Inputs:
    files: list[InputFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    companions: int = 0  # Kafka's other files found beside the segments


def _is_uri(path: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) is not None


def _arrow_fs(uri: str) -> tuple[Any, str]:
    from pyarrow import fs as pafs  # the replay extra; only remote inputs need it here

    fs, path = pafs.FileSystem.from_uri(uri)
    return fs, str(path)


def _is_companion(name: str) -> bool:
    return name in COMPANION_NAMES or name.endswith(COMPANION_SUFFIXES)


def _make(
    path: str, size: int, directory: str, index_size: int | None, index_path: str
) -> InputFile:
    name = path.rsplit("/", 1)[-1]
    m = _SEGMENT_NAME.match(name)
    if name.endswith(".log"):
        base = int(m.group(1)) if m else None
        return InputFile(
            path, "segment", size, directory, directory, base, index_path if index_size else None
        )
    return InputFile(path, "raw", size, directory, path, None, None)


def _local(path: str, out: Inputs) -> None:
    try:
        st = check_regular_file(path)
    except OSError as e:
        out.problems.append(
            Problem(path, "unreadable", f"{printable_name(path)}: {e.strerror or e}")
        )
        return
    try:
        FileSource(path).close()  # readable now (permissions)
    except OSError as e:
        out.problems.append(
            Problem(path, "unreadable", f"{printable_name(path)}: {e.strerror or e}")
        )
        return
    directory = os.path.dirname(os.path.abspath(path))
    index = os.path.splitext(path)[0] + ".index"
    try:
        index_size: int | None = (
            check_regular_file(index).st_size if path.endswith(".log") else None
        )
    except OSError:
        index_size = None
    out.files.append(
        _make(os.path.abspath(path), st.st_size, directory, index_size, os.path.abspath(index))
    )


def _walk_local(root: str, out: Inputs) -> None:
    found = 0

    def onerror(e: OSError) -> None:
        out.problems.append(
            Problem(
                e.filename or root,
                "unreadable",
                f"{printable_name(e.filename or root)}: cannot list: {e.strerror}",
            )
        )

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(".log"):
                found += 1
                _local(path, out)
            elif _is_companion(name):
                out.companions += 1
            elif name != "planted.json":
                out.problems.append(
                    Problem(
                        os.path.abspath(path),
                        "skipped",
                        f"{printable_name(path)}: not a Kafka log file",
                    )
                )
    if not found:
        out.problems.append(
            Problem(
                os.path.abspath(root),
                "not-kafka",
                f"{printable_name(root)}: no .log segment under this directory",
            )
        )


def _remote(uri: str, out: Inputs) -> None:
    try:
        fs, path = _arrow_fs(uri)
        info = fs.get_file_info(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises many kinds (OSError, ArrowInvalid)
        out.problems.append(Problem(uri, "unreadable", f"{uri}: {e}"))
        return
    from pyarrow import fs as pafs

    prefix = uri.split("://", 1)[0] + "://"
    infos = [info]
    if info.type == pafs.FileType.Directory:
        infos = sorted(
            fs.get_file_info(pafs.FileSelector(path, recursive=True)), key=lambda i: i.path
        )
    elif info.type == pafs.FileType.NotFound:
        out.problems.append(Problem(uri, "unreadable", f"{uri}: no such file or directory"))
        return
    sizes = {i.path: i.size for i in infos if i.type == pafs.FileType.File}
    found = 0
    for p, size in sizes.items():
        name = p.rsplit("/", 1)[-1]
        if info.type == pafs.FileType.Directory and not name.endswith(".log"):
            if _is_companion(name):
                out.companions += 1
            elif name != "planted.json":
                out.problems.append(
                    Problem(prefix + p, "skipped", f"{prefix + p}: not a Kafka log file")
                )
            continue
        found += 1
        index = p[: -len(".log")] + ".index" if p.endswith(".log") else ""
        directory = prefix + p.rsplit("/", 1)[0]
        out.files.append(_make(prefix + p, size, directory, sizes.get(index), prefix + index))
    if info.type == pafs.FileType.Directory and not found:
        out.problems.append(
            Problem(uri, "not-kafka", f"{uri}: no .log segment under this directory")
        )


def expand(inputs: Iterable[str]) -> Inputs:
    """The files named by ``inputs`` (module table), each once, in a stable order."""
    out = Inputs()
    for item in inputs:
        if _is_uri(item):
            _remote(item, out)
            continue
        matches = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
        if not matches:
            out.problems.append(
                Problem(item, "no-match", f"{printable_name(item)}: no file matches")
            )
        for path in matches:
            if os.path.isdir(path):
                _walk_local(path, out)
            else:
                _local(path, out)
    seen: set[str] = set()
    unique = []
    for f in out.files:
        if f.path not in seen:
            seen.add(f.path)
            unique.append(f)
    out.files = unique
    return out


class ArrowSource:
    """A ByteSource over a ``pyarrow`` random-access file (``read_at``): s3://, hdfs://, ...
    ``size`` as for ``FileSource``: a read that comes back short raises ``FileShrankError``."""

    def __init__(self, uri: str, size: int | None = None) -> None:
        fs, path = _arrow_fs(uri)
        self.uri = uri
        self._file = fs.open_input_file(path)
        self._size: int = self._file.size() if size is None else size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, item: slice) -> bytes:
        start = item.start or 0
        stop = self._size if item.stop is None else min(item.stop, self._size)
        if stop <= start:
            return b""
        data = self._file.read_at(stop - start, start)  # bytes or a pyarrow Buffer
        data = data if isinstance(data, bytes) else data.to_pybytes()
        if len(data) < stop - start:
            raise FileShrankError(self.uri, start + len(data), self._file.size())
        return data

    def close(self) -> None:
        self._file.close()


def open_source(path: str, size: int | None = None) -> FileSource | ArrowSource:
    """The byte source of an input file: ``os.pread`` for local paths, ``pyarrow.fs`` for URIs
    (``file://`` URIs are read locally too). ``size``: the size it was planned with (reads
    past the file's real end then raise ``fileio.FileShrankError``)."""
    if path.startswith("file://"):
        return FileSource(path[len("file://") :], size=size)
    if _is_uri(path):
        return ArrowSource(path, size)
    return FileSource(path, size=size)
