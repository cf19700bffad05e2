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
``file://PATH``     the local ``PATH`` (percent-escapes decoded), exactly as above
``scheme://...``    the same through ``pyarrow.fs`` (``s3://``, ``gs://``, ``hdfs://``, ...)
==================  ============================================================================

Files that cannot be read (permissions, not regular files, vanished) are reported as problems;
the replay goes on with the others. A local walk does not follow symbolic links to
directories (each is listed as ``skipped``: a link such as ``up -> ..`` would otherwise
replay a tree again, or forever); links to files are followed. A file named twice (as a
path, a ``file://`` URI, through a link, or by two overlapping inputs) is replayed once: local
files are told apart by their device and inode, remote ones by URI; every repeat is listed
as a ``duplicate`` problem (a warning: it does not change the exit code).

Paths are kept as the file system gives them (a name that is not UTF-8 keeps its bytes, as
``surrogateescape`` characters, so the file can be opened); everything written out (rows,
``summary.json``, the table) shows them through ``fileio.printable_name``: one line, control
characters and undecodable bytes escaped (``x\\xff.log``).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

from conformance.fileio import FileSource, ReadAheadSource, check_regular_file, printable_name
from conformance.jsondoc import JsonDocument
from conformance.logdir import checkpoint
from conformance.replay.storage import DEFAULT_IO_TIMEOUT, arrow_fs, is_uri, with_query

__all__ = [
    "InputFile",
    "Inputs",
    "Problem",
    "expand",
    "file_uri_path",
    "open_source",
]

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
    checkpoint.PARTITION_METADATA,
    checkpoint.LEADER_EPOCH_CHECKPOINT,
    checkpoint.META_PROPERTIES,
    *checkpoint.OFFSET_CHECKPOINTS,
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

    @property
    def name(self) -> str:
        """The path as written out (``fileio.printable_name``)."""
        return printable_name(self.path)

    @property
    def directory_name(self) -> str:
        """The directory as written out."""
        return printable_name(self.directory)

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
    """An input that is not replayed (or not wholly): written out printable, one line each."""

    path: str
    #: "unreadable" | "not-kafka" | "skipped" | "no-match" | "duplicate" (a warning only)
    kind: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": printable_name(self.path),
            "kind": self.kind,
            "message": printable_name(self.message),
        }


@dataclass
class Inputs:
    files: list[InputFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    companions: int = 0  # Kafka's other files found beside the segments
    #: what identifies each file found so far (device and inode, or the URI), and its path
    seen: dict[tuple[int, int] | str, str] = field(default_factory=dict)

    def first(self, identity: tuple[int, int] | str, path: str) -> bool:
        """Whether ``path`` (identified by ``identity``) is new; a repeat is a ``duplicate``."""
        earlier = self.seen.get(identity)
        if earlier is None:
            self.seen[identity] = path
            return True
        self.problems.append(
            Problem(
                path,
                "duplicate",
                f"{printable_name(path)}: the same file as {printable_name(earlier)} "
                "(replayed once)",
            )
        )
        return False


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


def _unreadable(path: str, e: OSError, out: Inputs, what: str = "") -> None:
    out.problems.append(
        Problem(path, "unreadable", f"{printable_name(path)}: {what}{e.strerror or e}")
    )


def _local(path: str, out: Inputs) -> None:
    try:
        st = check_regular_file(path)
        FileSource(path).close()  # readable now (permissions)
    except OSError as e:
        _unreadable(path, e, out)
        return
    full = os.path.abspath(path)
    if not out.first((st.st_dev, st.st_ino), full):
        return
    directory = os.path.dirname(full)
    index = os.path.splitext(full)[0] + ".index"
    try:
        index_size: int | None = (
            check_regular_file(index).st_size if path.endswith(".log") else None
        )
    except OSError:
        index_size = None
    out.files.append(_make(full, st.st_size, directory, index_size, index))


def _walk_local(root: str, out: Inputs) -> None:
    found = 0

    def onerror(e: OSError) -> None:
        _unreadable(e.filename or root, e, out, "cannot list: ")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames.sort()
        for name in [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            link = os.path.abspath(os.path.join(dirpath, name))
            out.problems.append(
                Problem(
                    link,
                    "skipped",
                    f"{printable_name(link)}: a symbolic link to a directory, not followed "
                    "(name its target to replay it)",
                )
            )
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


def _local_input(item: str, out: Inputs) -> None:
    """A local path or glob (module table)."""
    matches = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
    if not matches:
        out.problems.append(Problem(item, "no-match", f"{printable_name(item)}: no file matches"))
    for path in matches:
        if os.path.isdir(path):
            _walk_local(path, out)
        else:
            _local(path, out)


def file_uri_path(uri: str) -> str | None:
    """The local path of a ``file://`` URI (``file:///abs/path``; percent-escapes decoded to
    the bytes the file system takes), or None when it names another host."""
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        return None
    return os.fsdecode(unquote_to_bytes(parts.path))


def _remote(uri: str, out: Inputs, timeout: float) -> None:
    from pyarrow import fs as pafs

    try:
        fs, path = arrow_fs(uri, timeout)
        if not path.strip("/"):
            raise ValueError("no bucket or path in the URI")
        info = fs.get_file_info(path)
        infos = [info]
        if info.type == pafs.FileType.Directory:
            infos = sorted(
                fs.get_file_info(pafs.FileSelector(path, recursive=True)), key=lambda i: i.path
            )
    except Exception as e:  # noqa: BLE001 - pyarrow raises many kinds (OSError, ArrowInvalid)
        out.problems.append(Problem(uri, "unreadable", f"{uri}: {e}"))
        return
    if info.type == pafs.FileType.NotFound:
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
                    Problem(with_query(uri, p), "skipped", f"{p}: not a Kafka log file")
                )
            continue
        found += 1
        full = with_query(uri, p)
        if not out.first(full, full):
            continue
        index = p[: -len(".log")] + ".index" if p.endswith(".log") else ""
        directory = with_query(uri, p.rsplit("/", 1)[0])
        out.files.append(_make(full, size, directory, sizes.get(index), with_query(uri, index)))
    if info.type == pafs.FileType.Directory and not found:
        out.problems.append(
            Problem(uri, "not-kafka", f"{uri}: no .log segment under this directory")
        )


def expand(inputs: Iterable[str], io_timeout: float = DEFAULT_IO_TIMEOUT) -> Inputs:
    """The files named by ``inputs`` (module table), each once, in a stable order;
    ``io_timeout``: for object stores (``storage.arrow_fs``)."""
    out = Inputs()
    for item in inputs:
        if item.startswith("file://"):
            path = file_uri_path(item)
            if path is None:
                out.problems.append(
                    Problem(item, "unreadable", f"{printable_name(item)}: not a local file URI")
                )
            else:
                _local_input(path, out)
        elif is_uri(item):
            _remote(item, out, io_timeout)
        else:
            _local_input(item, out)
    return out


#: bytes an ``ArrowSource`` reads ahead: one request per MiB of a walk
REMOTE_READ_AHEAD = 1 << 20


class ArrowSource(ReadAheadSource):
    """A byte source over a ``pyarrow`` random-access file (``read_at``: a ranged GET on S3):
    s3://, gs://, hdfs://, ... Read ahead as a ``FileSource`` is (``fileio.ReadAheadSource``),
    :data:`REMOTE_READ_AHEAD` at a time: a walk's 17-byte header peeks would otherwise be a
    request each. ``size`` as for ``FileSource``: a read that comes back short raises
    ``FileShrankError``."""

    read_ahead = REMOTE_READ_AHEAD

    def __init__(
        self, uri: str, size: int | None = None, timeout: float = DEFAULT_IO_TIMEOUT
    ) -> None:
        fs, path = arrow_fs(uri, timeout)
        self.path = uri
        self._file = fs.open_input_file(path)
        self.end = self._file.size() if size is None else size

    def _read_at(self, n: int, start: int) -> bytes:
        data = self._file.read_at(n, start)  # bytes or a pyarrow Buffer
        return data if isinstance(data, bytes) else data.to_pybytes()

    def _size_now(self) -> int:
        return int(self._file.size())

    def close(self) -> None:
        self._file.close()


def open_source(
    path: str, size: int | None = None, timeout: float = DEFAULT_IO_TIMEOUT
) -> FileSource | ArrowSource:
    """The byte source of an input file: ``os.pread`` for local paths, ``pyarrow.fs`` for URIs
    (``expand`` has made ``file://`` URIs local paths). ``size``: the size it was planned
    with (reads past the file's real end then raise ``fileio.FileShrankError``)."""
    if is_uri(path):
        return ArrowSource(path, size, timeout)
    return FileSource(path, size=size)
