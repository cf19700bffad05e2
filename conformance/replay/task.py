"""One replay task: a byte range of a file through ``stream.scan``, into rows and a range
summary. Spark-free: the Spark job and the plain single-process loop run the same function.

Rows (the Parquet schema, :data:`ROW_SCHEMA`), one per region of the range:

==================  =========  ==================================================================
column              type       value
==================  =========  ==================================================================
file                string     the file's path or URI
directory           string     its directory (the partition directory of a segment)
segment_base        int64      base offset in a segment's file name (null: raw file)
position, size      int64      the region's first byte in the file, its length
base_offset         int64      first offset (null when unknown: damaged bytes)
last_offset         int64      last offset
magic               int8       0, 1, 2 (null when not even a header is readable)
codec               string     none, gzip, snappy, lz4, zstd, or the unknown id as a number
record_count        int64      records Kafka hands out (before the error, in a failed batch)
verdict             string     ok, corrupt, partial, zero-tail (``stream.scan``)
kafka_exception     string     the Java exception class Kafka raises there (null: none)
message             string     its message, or what Kafka's reader does instead
findings            list       strict-profile finding codes (``--profile strict``)
range_id            int32      the task that produced the row
==================  =========  ==================================================================
"""

from __future__ import annotations

import os
import resource
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformance import codecs
from conformance.replay.inputs import open_source
from conformance.replay.plan import Range
from conformance.stream.resync import DEFAULT_MAX_BATCH_BYTES
from conformance.stream.scan import Region, scan

__all__ = ["ROW_COLUMNS", "TaskOptions", "part_name", "replay_range", "row_schema", "run_task"]

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
#: byte-accounting bucket of each verdict
BUCKETS = {"ok": "decoded", "corrupt": "corrupt", "partial": "trailing", "zero-tail": "trailing"}
#: gaps, overlaps and flagged regions listed per range (counts are always exact)
EXAMPLES_PER_RANGE = 20


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
    profile: str = "kafka"
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    rows_per_batch: int = 8192
    #: test knob: ``(range_id, marker path)``: the first attempt of that range kills its own
    #: Python worker (SIGKILL) after emitting rows, as a lost executor would; the marker file
    #: makes the retry run normally
    kill_once: tuple[int, str] | None = None


class _Summary:
    """A range summary, built region by region (``summary.merge`` combines them)."""

    def __init__(self, r: Range) -> None:
        self.doc: dict[str, Any] = {
            "range_id": r.range_id,
            "file": r.file.path,
            "start": r.start,
            "end": r.end,
            "first_position": None,
            "end_position": None,
            "tiling_errors": 0,
            "bytes": {"decoded": 0, "corrupt": 0, "trailing": 0},
            "verdicts": Counter(),
            "exceptions": Counter(),
            "codecs": Counter(),
            "findings": Counter(),
            "records": 0,
            "batches": 0,
            "first_offset": None,
            "last_offset": None,
            "gaps": 0,
            "overlaps": 0,
            "offset_examples": [],
            "flagged": [],
            "flagged_count": 0,
            "error": None,
        }

    def add(self, region: Region) -> None:
        d = self.doc
        if d["first_position"] is None:
            d["first_position"] = region.position
        elif region.position != d["end_position"]:
            d["tiling_errors"] += 1
        d["end_position"] = region.end
        d["bytes"][BUCKETS[region.verdict]] += region.size
        d["verdicts"][region.verdict] += 1
        d["records"] += region.record_count
        for code in region.findings:
            d["findings"][code] += 1
        if region.verdict != "ok":
            d["exceptions"][region.kafka_exception or "(none)"] += 1
            d["flagged_count"] += 1
            if len(d["flagged"]) < EXAMPLES_PER_RANGE:
                d["flagged"].append(
                    {
                        "file": d["file"],
                        "position": region.position,
                        "size": region.size,
                        "verdict": region.verdict,
                        "kafka_exception": region.kafka_exception,
                        "message": region.message,
                    }
                )
            return
        d["batches"] += 1
        d["codecs"][region.codec] += 1
        if region.base_offset is None or region.last_offset is None:
            return
        last = d["last_offset"]
        if last is None:
            d["first_offset"] = region.base_offset
        elif region.base_offset > last + 1 or region.base_offset <= last:
            kind = "gap" if region.base_offset > last + 1 else "overlap"
            d["gaps" if kind == "gap" else "overlaps"] += 1
            if len(d["offset_examples"]) < EXAMPLES_PER_RANGE:
                d["offset_examples"].append(
                    {
                        "kind": kind,
                        "file": d["file"],
                        "position": region.position,
                        "previous_last": last,
                        "base": region.base_offset,
                    }
                )
        d["last_offset"] = region.last_offset if last is None else max(last, region.last_offset)

    def finish(self, seconds: float) -> dict[str, Any]:
        d = self.doc
        for key in ("verdicts", "exceptions", "codecs", "findings"):
            d[key] = dict(sorted(d[key].items()))
        d["seconds"] = round(seconds, 6)
        d["pid"] = os.getpid()
        d["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return d


def _columns(r: Range, regions: list[Region]) -> dict[str, list[Any]]:
    f = r.file
    n = len(regions)
    return {
        "file": [f.path] * n,
        "directory": [f.directory] * n,
        "segment_base": [f.segment_base] * n,
        "position": [g.position for g in regions],
        "size": [g.size for g in regions],
        "base_offset": [g.base_offset for g in regions],
        "last_offset": [g.last_offset for g in regions],
        "magic": [g.magic for g in regions],
        "codec": [g.codec for g in regions],
        "record_count": [g.record_count for g in regions],
        "verdict": [g.verdict for g in regions],
        "kafka_exception": [g.kafka_exception for g in regions],
        "message": [g.message for g in regions],
        "findings": [list(g.findings) for g in regions],
        "range_id": [r.range_id] * n,
    }


def replay_range(r: Range, options: TaskOptions) -> Iterator[dict[str, list[Any]] | dict[str, Any]]:
    """Replay ``r``: yields row chunks (``{column: values}``, at most ``rows_per_batch`` rows
    each) and, last, the range summary (a dict with ``"range_id"``). A file that cannot be
    read gives no rows and a summary with ``error`` set."""
    started = time.perf_counter()
    summary = _Summary(r)
    try:
        source = open_source(r.file.path)
    except OSError as e:
        summary.doc["error"] = f"{e.strerror or e}"
        yield summary.finish(time.perf_counter() - started)
        return
    chunk: list[Region] = []
    emitted = False
    try:
        for region in scan(
            source,
            start=r.start,
            end=r.end,
            profile=options.profile,  # type: ignore[arg-type]
            filename=r.file.path,
            decompressed_limit=options.decompressed_limit,
            max_batch_bytes=options.max_batch_bytes,
        ):
            summary.add(region)
            chunk.append(region)
            if len(chunk) >= options.rows_per_batch:
                yield _columns(r, chunk)
                emitted = True
                chunk = []
                _maybe_die(r, options)
    except OSError as e:  # the file changed or vanished under the task
        summary.doc["error"] = f"{e.strerror or e}"
    finally:
        source.close()
    if chunk:
        yield _columns(r, chunk)
        emitted = True
    if emitted:
        _maybe_die(r, options)
    yield summary.finish(time.perf_counter() - started)


def _maybe_die(r: Range, options: TaskOptions) -> None:
    if options.kill_once is None or options.kill_once[0] != r.range_id:
        return
    marker = options.kill_once[1]
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def part_name(task_id: int) -> str:
    """The Parquet part file of a task in ``batches/``."""
    return f"part-{task_id:05d}.parquet"


def run_task(
    task_id: int, ranges: list[Range], options: TaskOptions, batches_dir: str
) -> list[dict[str, Any]]:
    """One task: replay ``ranges`` in order, write their rows to ``batches_dir/part-<id>.parquet``
    and return their range summaries (each with ``rows``: the rows written for it).

    The part is written under a hidden temporary name (``.part-<id>.<pid>.<random>.tmp``,
    ignored by Parquet readers) and renamed into place when complete, so a task attempt that
    dies leaves no part, and a retry (or a speculative copy: tasks are deterministic) puts
    the same complete part in place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = row_schema()
    final = os.path.join(batches_dir, part_name(task_id))
    tmp = os.path.join(batches_dir, f".part-{task_id:05d}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    summaries: list[dict[str, Any]] = []
    try:
        with pq.ParquetWriter(tmp, schema) as writer:
            for r in ranges:
                rows = 0
                for item in replay_range(r, options):
                    if isinstance(item.get("file"), str):  # the range summary
                        item["rows"] = rows
                        item["task"] = task_id
                        summaries.append(item)
                    else:
                        writer.write_batch(pa.record_batch(item, schema=schema))
                        rows += len(item["position"])
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return summaries
