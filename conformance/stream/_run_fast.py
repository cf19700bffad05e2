"""Runs of whole batches decided in one native call: the decoder's fast lane.

:class:`~conformance.stream.decoder.StreamDecoder` cuts a stream into batches one Python call
at a time (framing, header, CRC, record list, decoded batch): microseconds per batch, which is
the whole cost of a decode of small batches. When the native extension is there
(:mod:`conformance.primitives.native`), :func:`run` hands it the bytes from the splitter's
position and gets back every :class:`DecodedBatch` it decides in full, up to the first batch
it is not sure of; the reference decodes that one, then the lane is asked again. The batches
it takes are magic-2, checksummed, not control batches, of a known codec, with a records
region (or a payload the codecs' whole-payload fast path reads: snappy's by the extension
itself, ``native/src/snappy.rs``, unless an ``errors.Allocations`` watch is on) that the
extension's record reader takes: the batches the reference decides without a word of its own (the table in
``native/src/run.rs``). ``tests/test_run_fast.py`` holds the lane to the reference.

The objects are the reference's own classes, made without their ``__init__`` (the
extension's ``SlotMaker``); the field orders below are the contract with ``run.rs``.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

from conformance import codecs
from conformance.errors import watching_allocations
from conformance.primitives import native as _native
from conformance.stream.result import DecodedBatch
from conformance.wire import batch as _batch
from conformance.wire._record_fast import record_maker
from conformance.wire.batch import RecordBatchV2
from conformance.wire.record import RecordList

#: the header's slots, in the order ``decode_run`` fills them
HEADER_SLOTS = (
    "raw",
    "position",
    "base_offset",
    "batch_length",
    "partition_leader_epoch",
    "magic",
    "crc",
    "attributes_raw",
    "last_offset_delta",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records_count",
)
#: the record list's slots, in that order (``_items`` a ``RecordRows`` when ``_rows``)
LIST_SLOTS = ("_items", "_rows", "keep", "limit", "visit", "total")
#: the decoded batch's slots
DECODED_SLOTS = ("header", "records")

#: input bytes decided per call at most (one batch more than this at worst): what a
#: ``StreamDecoder`` holds beyond the batch it hands out
RUN_BYTES = 1 << 16


@cache
def _makers(native: ModuleType) -> tuple[Any, Any, Any, Any]:
    return (
        native.SlotMaker(RecordBatchV2, list(HEADER_SLOTS)),
        native.SlotMaker(RecordList, list(LIST_SLOTS)),
        native.SlotMaker(DecodedBatch, list(DECODED_SLOTS)),
        record_maker(native),
    )


def available(data: object, profile: str) -> bool:
    """Whether the lane can take part of this decode: the extension is in use, the fast
    paths are on, the profile is ``kafka`` and the data is ``bytes`` in memory."""
    return (
        _native.NATIVE is not None
        and _batch.FAST_PATH
        and profile == "kafka"
        and type(data) is bytes
    )


def run(
    data: bytes,
    start: int,
    keep: int | None,
    limit: int | None,
    decompressed_limit: int,
) -> tuple[list[DecodedBatch], int]:
    """The batches from ``start`` that the lane decides (possibly none) and where it stopped:
    the reference decodes the batch there (if any is left)."""
    native = _native.NATIVE
    if native is None:
        return [], start
    batches, stop = native.decode_run(
        data,
        start,
        keep,
        limit,
        RUN_BYTES,
        _makers(native),
        codecs.read_whole,
        decompressed_limit,
        not watching_allocations(),  # snappy read natively (native/src/snappy.rs)
    )
    return batches, stop
