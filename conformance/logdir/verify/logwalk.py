"""The ``.log`` walk of verify-dir: batch by batch with ``StreamDecoder`` (file semantics),
resuming after a framed batch that fails; plus the small file helpers the checks share.

Mirrors how Kafka's consumer reads a segment (``FileRecords`` -> ``DefaultRecordBatch`` /
``AbstractLegacyRecordBatch``); what a walk yields per batch (:class:`BatchInfo`):

==================  ========================================================================
field               from
==================  ========================================================================
position, size      the batch's first byte in ``.log`` and ``LOG_OVERHEAD + length``
first/last offset   v2 header (``baseOffset``, ``baseOffset + lastOffsetDelta``); legacy:
                    the entry offset (inner records of a compressed wrapper)
max_timestamp       v2 ``maxTimestamp``; legacy: the message timestamp
producer_id, flags  v2 header only (``-1`` / false for v0/v1)
==================  ========================================================================
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import (
    CodecError,
    CorruptRecordError,
    DecodeError,
    DecompressionLimitError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaError,
)
from conformance.fileio import FileSource
from conformance.host.progress import Status
from conformance.logdir.verify.findings import Sink
from conformance.stream.decoder import StreamDecoder
from conformance.stream.scan import all_zero
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import RECORD_BATCH_OVERHEAD

_PROGRESS_STEP = 64 << 20

# ---------------------------------------------------------------------------- file helpers


def map_file(path: str) -> Any:
    """A read-only mapping of ``path`` (``b""`` when empty): index files are never read whole."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size == 0:
            return b""
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def close_map(buf: Any) -> None:
    if isinstance(buf, mmap.mmap):
        buf.close()


def last_nonzero(buf: Any, limit: int) -> int:
    """Index of the last non-zero byte in ``buf[:limit]``, -1 if none (64 KiB at a time)."""
    end = limit
    while end > 0:
        start = max(0, end - (1 << 16))
        stripped = bytes(buf[start:end]).rstrip(b"\0")
        if stripped:
            return start + len(stripped) - 1
        end = start
    return -1


def zero_from(path: str, position: int) -> bool:
    """True when every byte of ``path`` from ``position`` to its end is zero."""
    with FileSource(path) as source:
        return all_zero(source, position)


def absolute(path: str) -> str:
    return str(Path(path).absolute())


class Peek:
    """A one-item look-ahead over an iterator."""

    def __init__(self, it: Iterator[Any]) -> None:
        self._it = it
        self._head: Any = None
        self._done = False
        self._advance()

    def _advance(self) -> None:
        try:
            self._head = next(self._it)
        except StopIteration:
            self._head = None
            self._done = True

    @property
    def head(self) -> Any:
        return self._head

    def pop(self) -> Any:
        h = self._head
        self._advance()
        return h

    def rest(self) -> Iterator[Any]:
        while not self._done:
            yield self.pop()


# ---------------------------------------------------------------------------- the .log walk


@dataclass(slots=True)
class BatchInfo:
    position: int
    size: int
    first_offset: int | None  # None: unknown (legacy wrapper that failed, short v2 batch)
    last_offset: int | None
    max_timestamp: int | None
    producer_id: int
    is_control: bool
    is_transactional: bool
    control_type: int | None  # type id of the control record, if decoded
    failed: bool


_ERROR_CODES: tuple[tuple[type[DecodeError], str], ...] = (
    (DecompressionLimitError, "log-decompressed-limit"),
    (CorruptRecordError, "log-corrupt-record"),
    (InvalidRecordError, "log-invalid-record"),
    (KafkaError, "log-kafka-exception"),
    (CodecError, "log-codec-error"),
    (IllegalArgumentError, "log-illegal-argument"),
)


def _error_code(e: DecodeError) -> str:
    for cls, code in _ERROR_CODES:
        if isinstance(e, cls):
            return code
    return "log-runtime-exception"


def _batch_info(header: Any, records: list[Any], position: int, failed: bool) -> BatchInfo:
    if isinstance(header, RecordBatchV2):
        if len(header.raw) < RECORD_BATCH_OVERHEAD:  # framed, but too short for a v2 header
            return BatchInfo(
                position,
                header.size_in_bytes,
                header.base_offset,
                None,
                None,
                -1,
                False,
                False,
                None,
                True,
            )
        control_type = None
        if header.is_control and records and getattr(records[0], "control", None):
            control_type = records[0].control.get("typeId")
        return BatchInfo(
            position,
            header.size_in_bytes,
            header.base_offset,
            header.last_offset,
            header.max_timestamp,
            header.producer_id,
            header.is_control,
            header.is_transactional,
            control_type,
            failed,
        )
    # legacy: the first offset is only known from the records of a compressed wrapper
    if header.compression_id == 0:
        first: int | None = header.last_offset
    else:
        first = records[0].offset if records else None
    try:
        max_ts: int | None = header.max_timestamp
    except DecodeError:  # pragma: no cover - a framed legacy entry has >= RECORD_OVERHEAD_V0 bytes
        max_ts = None
    return BatchInfo(
        position,
        header.size_in_bytes,
        first,
        header.last_offset,
        max_ts,
        -1,
        False,
        False,
        None,
        failed,
    )


@dataclass
class WalkEnd:
    """How the walk over a .log ended."""

    valid_end: int = 0  # end of the last framed batch
    stopped_at: int | None = None  # an unframeable entry: nothing after it was verified


def walk_log(
    path: str, sink: Sink, limit: int, end: WalkEnd, progress: Status | None
) -> Iterator[BatchInfo]:
    size = os.path.getsize(path)
    start = 0
    next_report = _PROGRESS_STEP
    while True:
        source = FileSource(path, start=start)
        # the first record of each batch is all a check needs: the others are counted only
        decoder = StreamDecoder(
            source, mode="file", filename=path, decompressed_limit=limit, keep=1
        )
        resume: int | None = None
        try:
            for decoded in decoder:
                header = decoded.header
                position = start + header.position
                failed = decoder.error is not None  # the batch whose records failed
                if failed:
                    _decode_finding(sink, path, decoder.error, position)
                    resume = position + header.size_in_bytes
                end.valid_end = position + header.size_in_bytes
                if (
                    isinstance(header, RecordBatchV2)
                    and not failed
                    and decoded.records.total > header.last_offset_delta + 1
                ):
                    sink.add(
                        "batch-records-exceed-offsets",
                        path,
                        position,
                        f"batch at byte {position} hands out {decoded.records.total} records "
                        f"for {header.last_offset_delta + 1} offsets "
                        f"({header.base_offset}..{header.last_offset})",
                    )
                yield _batch_info(header, decoded.records, position, failed)
                if progress is not None and end.valid_end >= next_report:
                    progress(f"{path}: {end.valid_end >> 20}/{size >> 20} MiB")
                    next_report += _PROGRESS_STEP
            if decoder.error is not None and resume is None:
                error = decoder.error
                position = start + (error.position or 0)
                if start + decoder.splitter.position > position:
                    # framed (e.g. a CRC failure): report it and carry on after it
                    header = next(iter(Splitter(FileSource(path, start=position), "file", path)))
                    _decode_finding(sink, path, error, position)
                    resume = position + header.size_in_bytes
                    end.valid_end = resume
                    yield _batch_info(header, [], position, True)
                elif isinstance(error, CorruptRecordError) and zero_from(path, position):
                    sink.add(
                        "log-zero-tail",
                        path,
                        position,
                        f"{size - position} zero bytes from byte {position} to the end "
                        "(preallocated segment; Kafka's reader fails on it with "
                        f'"{error.message}", recovery truncates it)',
                    )
                    return
                else:
                    _decode_finding(sink, path, error, position)
                    end.stopped_at = position
                    return
            if resume is None:
                tail = decoder.tail
                if tail is not None:
                    position = start + tail.position
                    if zero_from(path, position):
                        sink.add(
                            "log-zero-tail",
                            path,
                            position,
                            f"{tail.bytes} zero bytes at the end (preallocated segment)",
                        )
                    else:
                        sink.add(
                            "log-truncated-tail",
                            path,
                            position,
                            f"{tail.bytes} bytes after the last complete batch do not form "
                            "a complete batch (Kafka's reader stops there)",
                        )
                return
        finally:
            source.close()
        start = resume


def _decode_finding(sink: Sink, path: str, error: DecodeError | None, position: int) -> None:
    assert error is not None
    sink.add(
        _error_code(error),
        path,
        position,
        f"batch at byte {position}: {error.java_string()}",
        error.kafka_exception,
    )
