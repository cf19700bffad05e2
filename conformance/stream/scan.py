"""A verdict for every byte of a segment: the replay's walk (docs/replay.md).

Kafka's consumer stops at the first failure; an operator replaying a damaged segment wants
every damaged region and every intact batch after it. :func:`scan` walks a source (file
semantics) with :class:`~conformance.stream.decoder.StreamDecoder`, the decoder of
``kafka-conformance decode``/``verify-dir``, and cuts it into consecutive :class:`Region` s:

=============  =================================================================================
verdict        region
=============  =================================================================================
``ok``         one batch Kafka's reader frames and decodes to the end
``corrupt``    where Kafka's reader fails (``kafka_exception``, ``message``) or stops although
               intact batches follow (``kafka_exception`` None); up to the next intact batch
               (``resync.find_next_batch``), or the end of the source
``partial``    the end of the source: bytes that do not form a batch, Kafka's reader skips them
``zero-tail``  the end of the source: zero bytes only (a preallocated or crashed segment)
=============  =================================================================================

After a failure at byte ``p`` the walk goes on at the first intact batch after ``p``
(``resync.find_next_batch``): right after a batch with a flipped bit, at the true next batch
when the size field itself was damaged. The regions tile the walked bytes exactly: each starts
where the previous one ends, so ``decoded + corrupt + trailing`` bytes is the source's size.

A walk may cover a byte range ``[start, end)`` of the source (one replay task): it starts at
``start``, which must be where the walk from 0 passes (a batch start on its path: an offset
index entry or a header-walk position that is intact), and yields the regions that start
before ``end``; the last one may extend past ``end`` only when ``end`` is not on the path.

:func:`scan_runs` is the same walk for a caller that counts in bulk (the replay): the batches
the native plain lane decides come as a :class:`PlainRun` (the extension's rows, one window's
worth) instead of one :class:`Region` each; :func:`scan` expands them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from conformance import codecs
from conformance.codecs import codec_name
from conformance.errors import DecodeError, watching_allocations
from conformance.primitives import native
from conformance.stream._run_fast import MAX_WINDOWED_BATCH
from conformance.stream.decoder import StreamDecoder
from conformance.stream.result import DecodedBatch, Profile
from conformance.stream.resync import DEFAULT_MAX_BATCH_BYTES, find_next_batch
from conformance.stream.splitter import Source
from conformance.wire import batch as _batch
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import (
    HEADER_SIZE_UP_TO_MAGIC,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    RECORD_BATCH_OVERHEAD,
)

__all__ = ["PlainRun", "Region", "VERDICTS", "all_zero", "scan", "scan_runs"]

VERDICTS = ("ok", "corrupt", "partial", "zero-tail")

_ZERO_CHUNK = 1 << 20


@dataclass(slots=True)
class Region:
    """A run of bytes with one verdict: a batch, a damaged region or the tail."""

    position: int
    size: int
    verdict: str
    magic: int | None = None
    codec: str | None = None
    base_offset: int | None = None  # first offset (legacy wrapper: its first inner record)
    last_offset: int | None = None
    record_count: int = 0  # records Kafka hands out (before the error, for a failed batch)
    kafka_exception: str | None = None
    message: str | None = None
    findings: tuple[str, ...] = ()  # strict-profile finding codes of the batch

    @property
    def end(self) -> int:
        return self.position + self.size


#: a row of the plain lane (the extension's ``scan_plain``): position (from the run's
#: origin), size, magic, base offset, last offset, records, codec id
PlainRow = tuple[int, int, int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class PlainRun:
    """Consecutive intact batches the plain lane decided in full: each an ``ok`` region
    (:meth:`regions`), its row's position counted from ``origin``."""

    origin: int
    rows: list[PlainRow]

    def regions(self) -> list[Region]:
        origin = self.origin
        return [
            Region(origin + at, size, "ok", magic, codec_name(codec), base, last, count)
            for at, size, magic, base, last, count, codec in self.rows
        ]


class _Window:
    """``source`` seen from byte ``start`` on (a ByteSource)."""

    __slots__ = ("source", "start", "length")

    def __init__(self, source: Source, start: int) -> None:
        self.source = source
        self.start = start
        self.length = max(0, len(source) - start)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, item: slice) -> bytes:
        lo = self.start + (item.start or 0)
        hi = self.start + (self.length if item.stop is None else min(item.stop, self.length))
        return self.source[lo:hi] if hi > lo else b""


class _Windowed(_Window):
    """A ``_Window`` over a source that lends windows of itself (``fileio.FileSource``): so
    does this one, and the decoder's native lane (``stream._run_fast``) reads through them."""

    __slots__ = ()

    def window(self, pos: int, need: int) -> tuple[bytes, int]:
        return self.source.window(self.start + pos, need)  # type: ignore[union-attr]


def all_zero(source: Source, start: int) -> bool:
    """True when every byte of ``source`` from ``start`` on is zero (a MiB at a time)."""
    total = len(source)
    pos = start
    while pos < total:
        chunk = source[pos : min(total, pos + _ZERO_CHUNK)]
        if not chunk or chunk.count(0) != len(chunk):
            return False
        pos += len(chunk)
    return True


def _batch_region(decoded: DecodedBatch, position: int, verdict: str) -> Region:
    header = decoded.header
    records = decoded.records
    base: int | None
    last: int | None
    if isinstance(header, RecordBatchV2):
        if len(header.raw) < RECORD_BATCH_OVERHEAD:
            return Region(
                position,
                header.size_in_bytes,
                verdict,
                header.magic,
                base_offset=header.base_offset,
            )
        base, last = header.base_offset, header.last_offset
    else:
        last = header.last_offset
        base = (
            last
            if header.compression_id == codecs.NONE
            else (records[0].offset if len(records) else None)
        )
    return Region(
        position,
        header.size_in_bytes,
        verdict,
        header.magic,
        codec_name(header.compression_id),
        base,
        last,
        records.total,
    )


def _failed(region: Region, error: DecodeError) -> Region:
    region.verdict = "corrupt"
    region.kafka_exception = error.kafka_exception
    region.message = error.message
    return region


class _ScanOptions(TypedDict, total=False):
    """:func:`scan_runs`'s keyword options, which :func:`scan` takes as they are."""

    start: int
    end: int | None
    profile: Profile
    filename: str
    decompressed_limit: int
    max_batch_bytes: int
    plain_lane: bool


def scan(source: Source, **options: Unpack[_ScanOptions]) -> Iterator[Region]:
    """The regions of ``source`` that start in ``[start, end)`` (module docstring), in order;
    the options and their defaults are :func:`scan_runs`'s. ``plain_lane`` False: the
    reference walk alone, without the native plain lane (the regions are the same; tests and
    the ``native`` fuzz target compare the two)."""
    return _regions(scan_runs(source, **options))


def _regions(items: Iterator[Region | PlainRun]) -> Iterator[Region]:
    for item in items:
        if isinstance(item, PlainRun):
            yield from item.regions()
        else:
            yield item


def scan_runs(
    source: Source,
    *,
    start: int = 0,
    end: int | None = None,
    profile: Profile = "kafka",
    filename: str = "<input>",
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    plain_lane: bool = True,
) -> Iterator[Region | PlainRun]:
    """:func:`scan`, the plain lane's batches as :class:`PlainRun` s (never empty)."""
    total = len(source)
    stop = total if end is None else min(end, total)
    pos = start
    keep = None if profile == "strict" else 1
    lane = _plain_lane(profile) if plain_lane else None
    windows = _Windows(source)
    view = _Windowed if hasattr(source, "window") else _Window
    # compressed batches too, their payloads read by the extension within the limit; not
    # while the allocations Kafka would make are watched (only the Python paths record them)
    lane_limit = None if watching_allocations() else decompressed_limit
    while pos < stop:
        more = lane is not None
        while more:  # a window at a time: its regions are handed out before the next is read
            run, pos, done, more = _plain_run(lane, windows, pos, stop, lane_limit)
            if run is not None:
                yield run
            if done or pos >= stop:
                return
        decoder = StreamDecoder(
            view(source, pos),
            mode="file",
            profile=profile,
            filename=filename,
            decompressed_limit=decompressed_limit,
            keep=keep,
        )
        resume: int | None = None
        seen = 0
        for decoded in decoder:
            p = pos + decoded.header.position
            region = _batch_region(decoded, p, "ok")
            if decoder.findings is not None and len(decoder.findings) > seen:
                region.findings = tuple(f.code for f in decoder.findings[seen:])
                seen = len(decoder.findings)
            if decoder.error is not None:  # the batch whose records failed
                resume = _after(source, region, max_batch_bytes)
                yield _failed(region, decoder.error)
                break
            yield region
            # (the splitter may be past this batch: the decoder's lane decides runs of them)
            if region.end >= stop:
                return
            if lane is not None and _plain_next(source, region.end):
                resume = region.end  # back to the plain lane
                break
        else:
            error = decoder.error
            if error is not None:
                p = pos + (error.position or 0)
                framed_end = pos + decoder.splitter.position
                if framed_end > p:  # framed, failed before its records (size, CRC)
                    region = Region(p, framed_end - p, "corrupt", magic=_magic(source, p))
                    resume = _after(source, region, max_batch_bytes)
                    yield _failed(region, error)
                else:  # Kafka's reader cannot frame an entry here
                    resume = find_next_batch(source, p, max_batch_bytes=max_batch_bytes)
                    yield _gap(source, p, resume, error)
            elif decoder.tail is not None:  # Kafka's reader stops here silently
                p = pos + decoder.tail.position
                resume = find_next_batch(source, p, max_batch_bytes=max_batch_bytes)
                yield _gap(source, p, resume, None)
        if resume is None:
            return
        pos = resume


#: bytes the plain lane reads at a time from a source without a read-ahead window of its own
PLAIN_CHUNK = 256 * 1024
#: the largest batch the plain lane widens its window for: the decoder lane's limit (Kafka's
#: default max.message.bytes is about 1 MiB); a larger one is the reference walk's, so a huge
#: (or lying) size field never costs a window and then the reference's own read of the bytes
PLAIN_MAX_BATCH = MAX_WINDOWED_BATCH


def _plain_lane(profile: Profile) -> Any:
    """The native extension when the plain lane may run (the ``kafka`` profile, fast paths
    on), else None."""
    if profile != "kafka" or not _batch.FAST_PATH:
        return None
    return native.NATIVE


class _Windows:
    """Windows of a source for the plain lane, without copying what is already read: bytes
    are their own window; a ``FileSource`` lends its read-ahead buffer (``window``); any
    other source is read :data:`PLAIN_CHUNK` bytes (or one batch) at a time, the last chunk
    kept."""

    __slots__ = ("source", "buf", "at")

    def __init__(self, source: Source) -> None:
        self.source = source
        self.buf = b""
        self.at = 0

    def get(self, pos: int, length: int) -> tuple[bytes, int]:
        source = self.source
        if isinstance(source, bytes):
            return source, pos
        window = getattr(source, "window", None)
        if window is not None:
            return window(pos, length)  # type: ignore[no-any-return]
        at = self.at
        if at <= pos and min(len(source), pos + length) <= at + len(self.buf):
            return self.buf, pos - at
        self.buf = bytes(source[pos : pos + max(PLAIN_CHUNK, length)])
        self.at = pos
        return self.buf, 0


def _plain_run(
    lane: Any, windows: _Windows, pos: int, stop: int, decompressed_limit: int | None
) -> tuple[PlainRun | None, int, bool, bool]:
    """The plain lane (docs/native.md): from ``pos``, the batches the extension's
    ``scan_plain`` decides in full in one window (every check passed, a control batch's
    records parsed: what the consumer reads without error; compressed ones only with
    ``decompressed_limit``) as a run
    of ``ok`` regions (None: none), the position where it stopped, whether a region reached
    ``stop``, and whether the lane may go on from there with the next window (the caller
    hands the run out first, so a file that changes under the walk is met where it is read).
    It stops at the first batch it is not sure of, which the reference walk then decodes; a
    batch past the window's end gets a window of its own."""
    total = len(windows.source)
    need = HEADER_SIZE_UP_TO_MAGIC
    while True:
        buf, index = windows.get(pos, need)
        origin = pos - index  # the file position of buf[0]
        rows, used, done, need = lane.scan_plain(buf, index, stop - origin, decompressed_limit)
        run = PlainRun(origin, rows) if rows else None
        moved = origin + used > pos
        pos = origin + used
        if (
            done
            or not need
            or need > PLAIN_MAX_BATCH
            or pos + need > total
            or (not moved and need <= len(buf) - index)
        ):
            return run, pos, done, False
        if moved:  # the window is used up: the next one holds the batch at pos
            return run, pos, False, True
        # nothing taken: the batch at pos runs past this window; a window that holds it


def _plain_next(source: Source, p: int) -> bool:
    """Whether the batch at ``p`` is one the plain lane may take (magic 0-2): then the walk
    hands it back to the lane."""
    head = source[p + MAGIC_OFFSET : p + MAGIC_OFFSET + 1]
    return bool(head) and head[0] <= MAGIC_VALUE_V2


def _magic(source: Source, p: int) -> int | None:
    head = source[p + MAGIC_OFFSET : p + MAGIC_OFFSET + 1]
    return None if not head else (head[0] if head[0] < 128 else head[0] - 256)


def _after(source: Source, region: Region, max_batch_bytes: int) -> int | None:
    """Where the walk goes on after a failed batch: the first intact batch after its start
    (right after it, normally; earlier when its size field was damaged), the region shrunk
    or grown to end there."""
    resume = find_next_batch(source, region.position, max_batch_bytes=max_batch_bytes)
    region.size = (len(source) if resume is None else resume) - region.position
    return resume


def _gap(source: Source, p: int, resume: int | None, error: DecodeError | None) -> Region:
    """The region from ``p`` where Kafka's reader fails or stops, to ``resume`` (or the end)."""
    total = len(source)
    if resume is None:
        if all_zero(source, p):  # Kafka's message when its reader fails on the zeros
            return Region(
                p,
                total - p,
                "zero-tail",
                kafka_exception=None if error is None else error.kafka_exception,
                message=f"{total - p} zero bytes to the end" if error is None else error.message,
            )
        if error is None:
            return Region(
                p,
                total - p,
                "partial",
                message=f"{total - p} bytes after the last complete batch do not form "
                "a complete batch (Kafka's reader stops there)",
            )
        region = Region(p, total - p, "corrupt", magic=_magic(source, p))
        return _failed(region, error)
    region = Region(p, resume - p, "corrupt", magic=_magic(source, p))
    if error is not None:
        return _failed(region, error)
    region.message = (
        f"the entry at byte {p} runs past the end of the file: Kafka's reader "
        f"stops here silently and never reads the {total - p} bytes after it"
    )
    return region
