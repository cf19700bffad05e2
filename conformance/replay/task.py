"""One replay task: byte ranges of files through ``stream.scan``, into Parquet rows and range
summaries. Spark-free: the Spark job and the plain single-process loop run the same function,
:func:`run_task` (a task's ranges in order, their rows into the task's own Parquet part).

The two outputs of a range stay apart: :meth:`RangeReplay.rows` yields the rows (column
chunks) and fills the range summary (``counts.RangeSummary``) as it goes; the summary is read
from :attr:`RangeReplay.summary` once the rows are exhausted.

Rows (the Parquet schema, :func:`row_schema`), one per region of the range:

==================  =========  ==================================================================
column              type       value
==================  =========  ==================================================================
file                string     the file's path or URI (``fileio.printable_name``)
directory           string     its directory (the partition directory of a segment)
segment_base        int64      base offset in a segment's file name (null: raw file)
position, size      int64      the region's first byte in the file, its length
base_offset         int64      first offset (null when unknown: damaged bytes)
last_offset         int64      last offset
magic               int8       0, 1, 2 (null when not even a header is readable)
codec               string     none, gzip, snappy, lz4, zstd, or the unknown id as a number
record_count        int64      records Kafka hands out (before the error, in a failed batch)
verdict             string     ok, corrupt, partial, zero-tail (``stream.scan``), unreadable
                               (``counts.UNREADABLE``: the task could not read these bytes)
kafka_exception     string     the Java exception class Kafka raises there (null: none)
message             string     its message, or what Kafka's reader does instead
findings            list       strict-profile finding codes (``--profile strict``)
range_id            int32      the range that produced the row
==================  =========  ==================================================================
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from conformance import codecs
from conformance.codecs import codec_name
from conformance.fileio import printable_name
from conformance.replay.arrow import record_batch
from conformance.replay.counts import UNREADABLE, RangeSummary
from conformance.replay.inputs import open_source
from conformance.replay.output import part_writer
from conformance.replay.plan import Range
from conformance.replay.storage import DEFAULT_IO_TIMEOUT
from conformance.stream.resync import DEFAULT_MAX_BATCH_BYTES
from conformance.stream.scan import PlainRun, Region, scan_runs

__all__ = [
    "ROW_COLUMNS",
    "Columns",
    "RangeReplay",
    "TaskOptions",
    "row_schema",
    "run_task",
]

ROW_COLUMNS = (
    "file",
    "directory",
    "segment_base",
    "position",
    "size",
    "base_offset",
    "last_offset",
    "magic",
    "codec",
    "record_count",
    "verdict",
    "kafka_exception",
    "message",
    "findings",
    "range_id",
)
#: rows as Arrow takes them: ``{column: values}``, every column of :data:`ROW_COLUMNS`
Columns = dict[str, list[Any]]


def row_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("file", pa.string()),
            ("directory", pa.string()),
            ("segment_base", pa.int64()),
            ("position", pa.int64()),
            ("size", pa.int64()),
            ("base_offset", pa.int64()),
            ("last_offset", pa.int64()),
            ("magic", pa.int8()),
            ("codec", pa.string()),
            ("record_count", pa.int64()),
            ("verdict", pa.string()),
            ("kafka_exception", pa.string()),
            ("message", pa.string()),
            ("findings", pa.list_(pa.string())),
            ("range_id", pa.int32()),
        ]
    )


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """How a task replays its ranges (the same in every task of a replay)."""

    #: ``kafka`` (Kafka's verdict) or ``strict`` (plus finding codes)
    profile: str = "kafka"
    #: limit on decompressed bytes per batch
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT
    #: largest batch the resynchronisation after damage takes for one
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    #: rows per column chunk (Parquet record batch)
    rows_per_batch: int = 8192
    #: seconds an object store may stay silent before a read fails (``storage.arrow_fs``)
    io_timeout: float = DEFAULT_IO_TIMEOUT
    #: False: the reference walk alone, without the native plain lane (the rows and counts
    #: are the same; tests compare the two: ``stream.scan.scan``'s ``plain_lane``)
    plain_lane: bool = True


#: the columns every row of a range shares, and the ones that differ from row to row
_RANGE_COLUMNS = ("file", "directory", "segment_base", "range_id")
_REGION_COLUMNS = tuple(c for c in ROW_COLUMNS if c not in _RANGE_COLUMNS)


#: the findings of every row of a plain run (the lane runs in the ``kafka`` profile only)
_NO_FINDINGS: list[str] = []


class _Rows:
    """A range's rows being gathered, column by column: a region at a time, or a plain run
    (``stream.scan.PlainRun``) at once."""

    __slots__ = ("cols",)

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in _REGION_COLUMNS}

    def __len__(self) -> int:
        return len(self.cols["position"])

    def add(self, g: Region) -> None:
        c = self.cols
        c["position"].append(g.position)
        c["size"].append(g.size)
        c["base_offset"].append(g.base_offset)
        c["last_offset"].append(g.last_offset)
        c["magic"].append(g.magic)
        c["codec"].append(g.codec)
        c["record_count"].append(g.record_count)
        c["verdict"].append(g.verdict)
        c["kafka_exception"].append(g.kafka_exception)
        c["message"].append(g.message)
        c["findings"].append(list(g.findings))

    def add_run(
        self,
        positions: list[int],
        run: tuple[tuple[int, ...], ...],
        codec_names: list[str],
    ) -> None:
        """The rows of a plain run: ``positions`` in the file, ``run`` its columns as the
        extension gives them (position from the origin, size, magic, base, last, records,
        codec id), ``codec_names`` its codecs' names."""
        c = self.cols
        n = len(positions)
        _, sizes, magics, bases, lasts, counts, _ = run
        c["position"] += positions
        c["size"] += sizes
        c["base_offset"] += bases
        c["last_offset"] += lasts
        c["magic"] += magics
        c["codec"] += codec_names
        c["record_count"] += counts
        c["verdict"] += repeat("ok", n)
        c["kafka_exception"] += repeat(None, n)
        c["message"] += repeat(None, n)
        c["findings"] += repeat(_NO_FINDINGS, n)  # read by Arrow, never changed

    def take(self, r: Range, n: int) -> Columns:
        """The first ``n`` rows as Arrow takes them (every column of :data:`ROW_COLUMNS`),
        removed from here."""
        f = r.file
        out: Columns = {
            "file": [f.name] * n,
            "directory": [f.directory_name] * n,
            "segment_base": [f.segment_base] * n,
        }
        for name, values in self.cols.items():
            out[name] = values[:n]
            del values[:n]
        out["range_id"] = [r.range_id] * n
        return {name: out[name] for name in ROW_COLUMNS}


class RangeReplay:
    """The replay of one range, two outputs apart: :meth:`rows` yields the rows (column
    chunks of at most ``rows_per_batch`` rows) while it fills the range summary, which
    :attr:`summary` gives once the rows are exhausted. Bytes that cannot be read (the file
    cannot be opened, or it shrinks or fails while it is read) end the range as one
    ``unreadable`` row, and the summary's ``error`` says why."""

    def __init__(self, r: Range, options: TaskOptions, *, task: int = 0) -> None:
        self.range = r
        self.options = options
        self._summary = RangeSummary.of_range(r, task)
        self._started = False
        self._done = False

    @property
    def summary(self) -> RangeSummary:
        """The range summary (rows written, counts, offsets, time, memory)."""
        if not self._done:
            raise RuntimeError("the range summary is complete only after rows() is exhausted")
        return self._summary

    def rows(self) -> Iterator[Columns]:
        """The rows of the range, in position order (once: the summary counts them)."""
        if self._started:
            raise RuntimeError("a range is replayed once")
        self._started = True
        r, options, summary = self.range, self.options, self._summary
        started = time.perf_counter()
        try:
            source = open_source(r.file.path, r.file.size, options.io_timeout)
        except OSError as e:
            rows = _Rows()
            rows.add(self._unreadable(e))
            yield self._take(rows, 1)
            self._finish(started)
            return
        rows = _Rows()
        limit = options.rows_per_batch
        try:
            for item in scan_runs(
                source,
                start=r.start,
                end=r.end,
                profile=options.profile,  # type: ignore[arg-type]
                filename=r.file.path,
                decompressed_limit=options.decompressed_limit,
                max_batch_bytes=options.max_batch_bytes,
                plain_lane=options.plain_lane,
            ):
                if isinstance(item, PlainRun):
                    origin = item.origin
                    run = tuple(zip(*item.rows))
                    positions = list(map(origin.__add__, run[0]))
                    names = list(map(codec_name, run[6]))
                    summary.add_run(positions, run[1], run[3], run[4], run[5], names)
                    rows.add_run(positions, run, names)
                else:
                    summary.add(item)
                    rows.add(item)
                while len(rows) >= limit:
                    yield self._take(rows, limit)
        except OSError as e:  # the file shrank or failed under the task
            rows.add(self._unreadable(e))
        finally:
            source.close()
        while len(rows):
            yield self._take(rows, min(limit, len(rows)))
        self._finish(started)

    def _unreadable(self, e: OSError) -> Region:
        """The rest of the range, from where reading stopped, as one :data:`UNREADABLE`
        region with the error as its message; the error is also the summary's ``error``
        (a problem of the replay). Rows and bytes stay exact: those bytes count as unread."""
        r, summary = self.range, self._summary
        at = r.start if summary.end_position is None else summary.end_position
        message = f"{e.strerror or e}" if e.filename in (None, r.file.path) else str(e)
        message = printable_name(message)
        summary.error = message
        region = Region(at, r.end - at, UNREADABLE, message=message)
        summary.add(region)
        return region

    def _take(self, rows: _Rows, n: int) -> Columns:
        self._summary.rows += n
        return rows.take(self.range, n)

    def _finish(self, started: float) -> None:
        summary = self._summary
        summary.seconds = round(time.perf_counter() - started, 6)
        summary.pid = os.getpid()
        summary.peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self._done = True


def run_task(
    task_id: int,
    ranges: Sequence[Range],
    options: TaskOptions,
    batches: str,
    ranged: Callable[[RangeSummary], None] | None = None,
) -> list[RangeSummary]:
    """One task: replay ``ranges`` in order, write their rows to its part in ``batches`` (a
    directory or an object-store URI: ``output.part_writer``, whole or not at all) and return
    their range summaries (each with ``rows``: the rows written for it); ``ranged`` is called
    with each range's summary as soon as the range is done (progress)."""
    schema = row_schema()
    summaries: list[RangeSummary] = []
    with part_writer(batches, task_id, schema, options.io_timeout) as writer:
        for r in ranges:
            replay = RangeReplay(r, options, task=task_id)
            for columns in replay.rows():
                writer.write_batch(record_batch(columns, schema))
            summaries.append(replay.summary)
            if ranged is not None:
                ranged(replay.summary)
    return summaries
