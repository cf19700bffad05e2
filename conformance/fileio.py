"""The kit's file reading: random access with ``os.pread``, whole small files, read-only maps.

The decoding core (``primitives``, ``codecs``, ``wire``, ``stream``) never opens a file: it
reads ``bytes`` or any :class:`~conformance.stream.splitter.ByteSource`. A
:class:`FileSource` is such a source over a file, so a segment of any size is decoded with
memory bounded by one batch. ``logdir`` and the shells use it; nothing in the core imports it.
"""

from __future__ import annotations

import mmap
import os


class FileSource:
    """Random-access reads of a file (``os.pread``): memory never grows with the file size."""

    def __init__(self, path: str | os.PathLike[str], start: int = 0, end: int | None = None) -> None:
        self._fd = -1  # set first: close() (also from __del__) works if open() fails
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_RDONLY)
        size = os.fstat(self._fd).st_size
        self.start = start
        self.end = size if end is None else min(size, end)

    def __len__(self) -> int:
        return max(0, self.end - self.start)

    def __getitem__(self, item: slice) -> bytes:
        start = self.start + (item.start or 0)
        stop = self.start + (len(self) if item.stop is None else min(item.stop, len(self)))
        if stop <= start:
            return b""
        return os.pread(self._fd, stop - start, start)

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
    """A small file's whole content (``.txnindex``, ``.snapshot``, checkpoints)."""
    with open(path, "rb") as f:
        return f.read()


def map_readonly(path: str | os.PathLike[str]) -> mmap.mmap | bytes:
    """A read-only map of a file (an index can be up to ``segment.index.bytes``, 2 GiB, and
    only the entries a lookup touches are paged in); ``b""`` for an empty file."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
