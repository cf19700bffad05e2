"""Where a replay writes (``--out``): a local directory, or an object-store prefix
(``s3://bucket/out?endpoint_override=...``, through ``storage.arrow_fs``), the same layout:

=====================  =======================================================================
``batches/``           the Parquet parts, one per task (:func:`part_writer`)
``summary.json``       the summary document; ``summary.txt`` its table
``spark-driver.log``   Spark's own messages (a local ``--out`` only; ``job.DRIVER_LOG``)
=====================  =======================================================================

A part appears whole or not at all: locally it is written under a hidden temporary name
(``.part-<id>.<pid>.<random>.tmp``, ignored by Parquet readers) and renamed into place; in an
object store it is one upload, which becomes visible only when complete (a multipart upload
that dies is never listed). A retried task (or a speculative copy: tasks are deterministic)
puts the same complete part in place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.fileio import printable_name
from conformance.replay.storage import DEFAULT_IO_TIMEOUT, arrow_fs, is_uri, with_query

__all__ = ["OUTPUTS", "Output", "OutputExists", "part_name", "part_writer"]

#: what a replay writes into ``--out`` (``--force`` removes exactly these first)
OUTPUTS = ("batches", "summary.json", "summary.txt")


class OutputExists(ValueError):
    """``--out`` holds a previous replay's output (``--force`` replaces it)."""


def part_name(task_id: int) -> str:
    """The Parquet part file of a task in ``batches/``."""
    return f"part-{task_id:05d}.parquet"


def _join(base: str, name: str) -> str:
    """``name`` under ``base``: a local directory, or a URI whose query stays at the end."""
    if not is_uri(base):
        return os.path.join(base, name)
    path = base.partition("?")[0].split("://", 1)[1]
    return with_query(base, f"{path.rstrip('/')}/{name}")


@contextlib.contextmanager
def part_writer(
    batches: str, task_id: int, schema: Any, timeout: float = DEFAULT_IO_TIMEOUT
) -> Iterator[Any]:
    """A ``pyarrow.parquet.ParquetWriter`` of task ``task_id``'s part in ``batches`` (module
    docstring: whole or not at all); the part is in place when the block ends normally."""
    import pyarrow.parquet as pq

    if is_uri(batches):
        fs, path = arrow_fs(_join(batches, part_name(task_id)), timeout)
        with pq.ParquetWriter(path, schema, filesystem=fs) as writer:
            yield writer
        return
    final = os.path.join(batches, part_name(task_id))
    tmp = os.path.join(batches, f".part-{task_id:05d}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with pq.ParquetWriter(tmp, schema) as writer:
            yield writer
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class Output:
    """``--out``: a local directory (``Path``) or an object-store URI (``str``)."""

    def __init__(self, out: Path | str, timeout: float = DEFAULT_IO_TIMEOUT) -> None:
        self.uri = out if isinstance(out, str) and is_uri(out) else None
        self.path = None if self.uri is not None else Path(out)
        self.timeout = timeout

    @property
    def name(self) -> str:
        """``--out`` as shown."""
        return printable_name(self.uri if self.uri is not None else str(self.path))

    def _fs(self, name: str = "") -> tuple[Any, str]:
        assert self.uri is not None
        return arrow_fs(_join(self.uri, name) if name else self.uri, self.timeout)

    def batches(self) -> str:
        """Where the tasks write their parts: an absolute directory, or a URI."""
        if self.uri is not None:
            return _join(self.uri, "batches")
        assert self.path is not None
        return str((self.path / "batches").absolute())

    def exists(self) -> bool:
        if self.path is not None:
            return self.path.exists()
        from pyarrow import fs as pafs

        fs, path = self._fs()
        return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)

    def prepare(self, force: bool) -> None:
        """Ready for a replay: a previous one's outputs refused (:class:`OutputExists`), or
        removed with ``force``; ``batches/`` made."""
        present = [name for name in OUTPUTS if self._has(name)]
        if present and not force:
            raise OutputExists(
                f"{self.name} already holds a replay ({', '.join(present)}); "
                "pass --force to replace it, or choose another --out"
            )
        for name in present:
            self._remove(name)
        if self.path is not None:
            (self.path / "batches").mkdir(parents=True)
        else:
            fs, path = self._fs("batches")
            fs.create_dir(path)

    def _has(self, name: str) -> bool:
        if self.path is not None:
            return (self.path / name).exists() or (self.path / name).is_symlink()
        from pyarrow import fs as pafs

        fs, path = self._fs(name)
        return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)

    def _remove(self, name: str) -> None:
        if self.path is not None:
            target = self.path / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
            return
        from pyarrow import fs as pafs

        fs, path = self._fs(name)
        if fs.get_file_info(path).type == pafs.FileType.Directory:
            fs.delete_dir(path)
        else:
            fs.delete_file(path)

    def write_text(self, name: str, text: str) -> None:
        if self.path is not None:
            (self.path / name).write_text(text, encoding="utf-8")
            return
        fs, path = self._fs(name)
        with fs.open_output_stream(path) as f:
            f.write(text.encode("utf-8"))

    def parts(self) -> dict[str, int]:
        """Rows per Parquet part (from the footers); leftovers of dead attempts removed."""
        import pyarrow.parquet as pq

        if self.path is not None:
            batches = self.path / "batches"
            for leftover in batches.glob(".part-*.tmp"):
                leftover.unlink()
            return {
                p.name: pq.ParquetFile(p).metadata.num_rows
                for p in sorted(batches.glob("part-*.parquet"))
            }
        from pyarrow import fs as pafs

        fs, path = self._fs("batches")
        found = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        counts = {}
        for info in sorted(found, key=lambda i: i.path):
            if info.type == pafs.FileType.File and info.base_name.endswith(".parquet"):
                with fs.open_input_file(info.path) as f:
                    counts[info.base_name] = pq.ParquetFile(f).metadata.num_rows
        return counts

    def clean_failed(self, created: bool) -> None:
        """After a replay that did not finish: its ``batches/`` removed, and a local ``--out``
        too when this run created it and it is empty, so the next run needs no ``--force``."""
        if self.path is None:
            with contextlib.suppress(Exception):  # noqa: BLE001 - the first error matters
                self._remove("batches")
            return
        shutil.rmtree(self.path / "batches", ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):
                self.path.rmdir()  # only when empty
