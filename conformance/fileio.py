"""The kit's file reading: random access with ``os.pread``, whole small files, read-only maps.

The decoding core (``primitives``, ``codecs``, ``wire``, ``stream``) never opens a file: it
reads ``bytes`` or any :class:`~conformance.stream.splitter.ByteSource`. A
:class:`FileSource` is such a source over a file, so a segment of any size is decoded with
memory bounded by one batch. ``logdir`` and the shells use it; nothing in the core imports it.

Every opening goes through :func:`open_regular`: only regular files are read. A FIFO would
block the open (or the first read) forever, a character device such as ``/dev/zero`` never
ends, a directory cannot be read; each is refused with :class:`NotRegularFileError` (an
``OSError``, so ``except OSError`` handlers report it like any unreadable file) before the
open, and the open itself is non-blocking, so a FIFO swapped in after the check cannot hang.

:func:`write_decode_json` writes the canonical decode document of a
:class:`~conformance.stream.decoder.StreamDecoder` with memory bounded by one batch (batches
are spooled, to a temporary file past 8 MiB, so the document keeps its key order).
"""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import stat
import tempfile
import unicodedata
from typing import TextIO

from conformance.jsondoc import json_text
from conformance.stream.decoder import StreamDecoder
from conformance.stream.result import result_head, write_batch_json

__all__ = [
    "FileShrankError",
    "FileSource",
    "ReadAheadSource",
    "NotRegularFileError",
    "check_regular_file",
    "map_readonly",
    "open_regular",
    "printable_name",
    "read_bytes",
    "write_decode_json",
]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """``path`` is not a regular file: a directory, FIFO, socket or device.

    ``strerror`` says what it is (``"not a regular file (a FIFO)"``), ``filename`` is the path,
    ``kind`` the kind alone (``"a FIFO"``)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        code = errno.EISDIR if kind == "a directory" else errno.EINVAL
        super().__init__(code, f"not a regular file ({kind})", os.fspath(path))
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileShrankError(OSError):
    """A file read as a :class:`FileSource` is shorter than when it was opened (or than the
    size its caller planned with): it was truncated (or rewritten) under the reader.
    ``filename`` is the path, ``position`` the first byte that could not be read, ``size``
    the file's size when it was found short."""

    def __init__(self, path: str, position: int, size: int) -> None:
        super().__init__(
            errno.EIO,
            f"the file shrank to {size} bytes while it was read (no byte at {position})",
            path,
        )
        self.position = position
        self.size = size

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - S_IFWHT, door, ...


def check_regular_file(path: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(path)`` (symbolic links followed) if it is a regular file; else
    :class:`NotRegularFileError`. The ``OSError`` of the ``stat`` itself (no such file,
    permission denied, a symbolic link loop) propagates."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(path, _kind(st.st_mode))
    return st


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on the regular file ``path`` (the caller closes it).

    Checked before the open (:func:`check_regular_file`: a device is never opened), opened
    with ``O_NONBLOCK`` (a FIFO put in its place meanwhile does not block the open) and
    checked again on the descriptor."""
    check_regular_file(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, _kind(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


#: bytes a :class:`FileSource` reads ahead: a walk reads a batch's 17 header bytes, then the
#: batch, so one ``pread`` serves many batches (two calls per batch took 0.56 s of a 9.3 s
#: cProfile of a native scan of 1 GB, docs/native.md)
READ_AHEAD = 256 * 1024


class ReadAheadSource:
    """A byte source over random-access reads, read ahead: a read shorter than ``read_ahead``
    reads that much from its start on and keeps it, so the reads that follow inside it cost
    no system call (or request); memory stays bounded by that one buffer. A subclass sets
    ``path``, ``start``, ``end`` and gives :meth:`_read_at` (one read, possibly short) and
    :meth:`_size_now`. Within ``end`` a read that comes back short raises
    :class:`FileShrankError`: the file was cut under the reader, and bytes that are not there
    must not pass for a short tail."""

    path = ""
    start = 0
    end = 0
    read_ahead = READ_AHEAD
    _ahead = b""  # the bytes read ahead, from file position _ahead_at on
    _ahead_at = 0

    def _read_at(self, n: int, start: int) -> bytes:
        raise NotImplementedError

    def _size_now(self) -> int:
        raise NotImplementedError

    def __len__(self) -> int:
        return max(0, self.end - self.start)

    def __getitem__(self, item: slice) -> bytes:
        start = self.start + (item.start or 0)
        stop = self.start + (len(self) if item.stop is None else min(item.stop, len(self)))
        if stop <= start:
            return b""
        at = self._ahead_at
        if at <= start and stop <= at + len(self._ahead):
            return self._ahead[start - at : stop - at]
        n = stop - start
        if n >= self.read_ahead:
            return self._read(n, start, n)
        ahead = self._read(min(self.read_ahead, self.end - start), start, n)
        self._ahead, self._ahead_at = ahead, start
        return ahead[:n]

    def _read(self, n: int, start: int, need: int) -> bytes:
        """Up to ``n`` bytes from ``start``, at least ``need`` of them, or
        :class:`FileShrankError`."""
        data = self._read_at(n, start)
        if len(data) < need and data:  # Linux reads at most 2 GiB - 4 KiB per call
            parts = [data]
            got = len(data)
            while got < n:
                more = self._read_at(n - got, start + got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        if len(data) < need:
            raise FileShrankError(self.path, start + len(data), self._size_now())
        return data

    def window(self, pos: int, length: int) -> tuple[bytes, int]:
        """The read-ahead buffer and ``pos``'s index in it, holding at least ``length`` bytes
        from ``pos`` on (fewer at the end of the file): read without a copy by a walk that
        takes many batches from one buffer (``stream.scan``'s plain lane). A read outside it
        reads ahead from ``pos``: ``max(read_ahead, length)`` bytes."""
        start = self.start + pos
        at = self._ahead_at
        if at <= start and min(self.end, start + length) <= at + len(self._ahead):
            return self._ahead, start - at
        stop = min(self.end, start + max(self.read_ahead, length))
        need = min(length, self.end - start)
        self._ahead = self._read(stop - start, start, need) if stop > start else b""
        self._ahead_at = start
        return self._ahead, 0


class FileSource(ReadAheadSource):
    """Random-access reads of a file (``os.pread``, read ahead: :class:`ReadAheadSource`):
    memory never grows with the file size. Only regular files (:func:`open_regular`);
    ``OSError`` (including :class:`NotRegularFileError`) when the file cannot be opened,
    :class:`FileShrankError` when it is cut shorter than its size at opening (or than
    ``size``, the size the caller planned with) while it is read; bytes appended meanwhile,
    past that size, are not read."""

    _fd = -1  # a class default: close() (also from __del__) works whatever __init__ raised

    def __init__(
        self,
        path: str | os.PathLike[str],
        start: int = 0,
        end: int | None = None,
        *,
        size: int | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self._fd = open_regular(self.path)
        # ``size``: the size the caller planned with (a replay's ranges), trusted over the
        # file's own: if the file is shorter by now, reading there raises FileShrankError
        actual = os.fstat(self._fd).st_size if size is None else size
        self.start = start
        self.end = actual if end is None else min(actual, end)

    def _read_at(self, n: int, start: int) -> bytes:
        return os.pread(self._fd, n, start)

    def _size_now(self) -> int:
        return os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> FileSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A small regular file's whole content (``.txnindex``, ``.snapshot``, checkpoints)."""
    with os.fdopen(open_regular(path), "rb") as f:
        return f.read()


def map_readonly(path: str | os.PathLike[str]) -> mmap.mmap | bytes:
    """A read-only map of a regular file (an index can be up to ``segment.index.bytes``,
    2 GiB, and only the entries a lookup touches are paged in); ``b""`` for an empty file."""
    with os.fdopen(open_regular(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable_name(name: str | bytes | os.PathLike[str]) -> str:
    """A file name for human-readable output, on one line: control characters
    (C0, DEL, C1, line and paragraph separators) escaped as ``\\n``, ``\\t``, ``\\xNN``,
    ``\\uNNNN``, and bytes that are not UTF-8 (``surrogateescape``) as ``\\xNN``; every other
    character as it is (a backslash too: only control characters are escaped)."""
    out = []
    for ch in os.fsdecode(name):
        if unicodedata.category(ch) not in ("Cc", "Cs", "Zl", "Zp"):
            out.append(ch)
            continue
        code = ord(ch)
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of the name
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def write_decode_json(decoder: StreamDecoder, out: TextIO) -> None:
    """Iterate ``decoder`` and write its verdict's canonical JSON text plus a newline: what
    ``decode(...).to_json()`` returns for the same input, without holding the batches: each is
    written (a record at a time) to a spool as soon as it is decoded, and the head
    (``outcome``, ``error``, ``tail``, which are known only at the end) goes first."""
    with tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as spool:
        sep = ""
        for batch in decoder:
            spool.write(sep)
            write_batch_json(batch, spool.write)
            sep = ","
        head = result_head(decoder.mode, decoder.outcome, decoder.error, decoder.tail)
        out.write(json_text(head)[:-1] + ',"batches":[')
        spool.seek(0)
        shutil.copyfileobj(spool, out)
        out.write("]")
        if decoder.findings is not None:
            out.write(',"findings":' + json_text([f.to_dict() for f in decoder.findings]))
        out.write("}\n")
