"""Runs of whole batches decided in one native call: the decoder's fast lane.

:class:`~conformance.stream.decoder.StreamDecoder` cuts a stream into batches one Python call
at a time (framing, header, CRC, record list, decoded batch): microseconds per batch, which is
the whole cost of a decode of small batches. When the native extension is there
(:mod:`conformance.primitives.native`), :func:`run` hands it the bytes from the splitter's
position and gets back every :class:`DecodedBatch` it decides in full, up to the first batch
it is not sure of; the reference decodes that one, then the lane is asked again. The batches
it takes are magic-2, checksummed, not control batches, of a known codec, with a records
region (or a payload the codecs' whole-payload fast path reads, decided by the extension
itself with the same libraries, ``native/src/whole.rs``, unless an ``errors.Allocations``
watch is on) that the extension's record reader takes; and v0/v1 entries: a message whose
CRC-32 is right, or a gzip, snappy or lz4 wrapper read the way ``LegacyBatch.read_records``
tries first (its payload by the whole-payload fast path, its inner messages by the
extension's legacy reader). Those are the batches the reference decides without a word of
its own (the table in ``native/src/run.rs``). ``tests/test_run_fast.py``
holds the lane to the reference.

The objects are the reference's own classes, made without their ``__init__`` (the
extension's ``SlotMaker``), slots filled in each class's ``__slots__`` order.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

from conformance import codecs
from conformance.errors import watching_allocations
from conformance.primitives import native as _native
from conformance.stream.result import DecodedBatch
from conformance.stream.splitter import Source
from conformance.wire import batch as _batch
from conformance.wire._record_fast import record_maker
from conformance.wire.batch import RecordBatchV2
from conformance.wire.layout import HEADER_SIZE_UP_TO_MAGIC
from conformance.wire.legacy import LegacyBatch, LegacyMessage
from conformance.wire.record import RecordList

#: the slots ``decode_run`` fills, in their classes' ``__slots__`` order (its documented
#: contract, native/src/run.rs): the header, the record list (``_items`` a ``RecordRows`` when
#: ``_rows``) and the decoded batch
HEADER_SLOTS: tuple[str, ...] = RecordBatchV2.__slots__
LIST_SLOTS: tuple[str, ...] = RecordList.__slots__
DECODED_SLOTS: tuple[str, ...] = DecodedBatch.__slots__  # type: ignore[attr-defined]
#: and those of a v0/v1 entry and its message
LEGACY_SLOTS: tuple[str, ...] = LegacyBatch.__slots__
MESSAGE_SLOTS: tuple[str, ...] = LegacyMessage.__slots__

#: input bytes decided per call at most (one batch more than this at worst): what a
#: ``StreamDecoder`` holds beyond the batch it hands out
RUN_BYTES = 1 << 16
#: the largest batch a source's window is widened for, here and in the replay's plain lane
#: (``stream.scan``): a larger one is the reference's, so a huge or lying size field never
#: costs a window and then the reference's own read of the same bytes
MAX_WINDOWED_BATCH = 8 * 1024 * 1024


@cache
def _makers(native: ModuleType) -> tuple[Any, ...]:
    return (
        native.SlotMaker(RecordBatchV2, list(HEADER_SLOTS)),
        native.SlotMaker(RecordList, list(LIST_SLOTS)),
        native.SlotMaker(DecodedBatch, list(DECODED_SLOTS)),
        record_maker(native),
        native.SlotMaker(LegacyBatch, list(LEGACY_SLOTS)),
        native.SlotMaker(LegacyMessage, list(MESSAGE_SLOTS)),
    )


def available(data: object, profile: str) -> bool:
    """Whether the lane can take part of this decode: the extension is in use, the fast
    paths are on, the profile is ``kafka``, and the data is ``bytes`` or a source that lends
    windows of itself (``fileio.FileSource.window``: verify-dir's segments)."""
    return (
        _native.NATIVE is not None
        and _batch.FAST_PATH
        and profile == "kafka"
        and (type(data) is bytes or hasattr(data, "window"))
    )


def run(
    data: Source,
    start: int,
    keep: int | None,
    limit: int | None,
    decompressed_limit: int,
) -> tuple[list[DecodedBatch], int]:
    """The batches from ``start`` that the lane decides (possibly none) and where it stopped:
    the reference decodes the batch there (if any is left). A source with windows is read
    through them; a batch running past a window gets a window that holds it (up to
    :data:`MAX_WINDOWED_BATCH`), as the replay's plain lane does."""
    native = _native.NATIVE
    if native is None:
        return [], start
    size = len(data)
    pos, need = start, HEADER_SIZE_UP_TO_MAGIC
    for _ in range(2):  # the window at hand, then (when nothing fit in it) one that holds a batch
        if type(data) is bytes:
            window, index = data, pos
        else:
            window, index = data.window(pos, need)  # type: ignore[union-attr]
        origin = pos - index
        batches, stop, need = native.decode_run(
            window,
            index,
            origin,
            keep,
            limit,
            RUN_BYTES,
            _makers(native),
            codecs.read_whole,
            decompressed_limit,
            not watching_allocations(),  # payloads read natively (native/src/whole.rs)
        )
        pos = origin + stop
        if batches or not need or need > MAX_WINDOWED_BATCH or pos + need > size:
            break
    return batches, pos
