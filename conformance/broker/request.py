"""The request-level checks of a Produce request, before anything reaches the log.

In ``KafkaApis.handleProduceRequest`` / ``ReplicaManager.handleProduceAppend`` order:

=============================================  ==========================================
step                                           failure
=============================================  ==========================================
the request parser: a Produce version the      the whole request (the broker closes the
broker does not speak                          connection): ``unsupported_version`` of
                                               the broker version
``RequestUtils.hasTransactionalRecords``: the  TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the
first batch is transactional without a         whole request (below v3 the request has no
transactional id                               transactional id at all)
``ProduceRequest.validateRecords`` (v3+): a    INVALID_RECORD / UNSUPPORTED_COMPRESSION_TYPE
batch, magic 2, no zstd below v7, one batch    for the partition (messages in ``versions``)
(3.6+) every batch's producer id and           an exception reading them fails the request
transactional flag (KIP-890 verification)      (a v2 batch shorter than its header:
                                               IndexOutOfBoundsException)
=============================================  ==========================================

Cutting the records into batches (``MemoryRecords.batches()``) can raise on the way
(``CorruptRecordException`` for a size below 14): inside ``validateRecords`` it is the
partition's error, anywhere else it fails the request. An exception that fails the request is
answered for the partition as ``ProduceRequest.getErrorResponse`` does: the error of
``ApiError.fromThrowable`` and its message (none for UNKNOWN_SERVER_ERROR). Produce v0-v2 are
not checked by ``validateRecords`` (old clients sent the wrong magic).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from conformance.broker.codes import UNKNOWN_SERVER_ERROR, api_error_message, error_for
from conformance.broker.verdict import PartitionResponse
from conformance.broker.versions import BrokerVersion
from conformance.codecs import ZSTD, codec
from conformance.errors import (
    BrokerError,
    DecodeError,
    IndexOutOfBoundsError,
    InvalidRecordError,
    UnsupportedCompressionTypeError,
)
from conformance.stream.splitter import Batch, Source, Splitter
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    MAGIC_VALUE_V2,
    NO_PRODUCER_ID,
    PRODUCER_ID_OFFSET,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = ["check_request", "partition_batches"]

Refusal = tuple[PartitionResponse, DecodeError | None, str]
_I64 = struct.Struct(">q")


def partition_batches(data: bytes | Source) -> Iterator[Batch]:
    """``MemoryRecords.readableRecords(data).batches()``: the complete batches, in order (a
    trailing partial batch ends the iteration; a malformed size raises)."""
    return Splitter(data, "memory")


def _codec_id(b: Batch) -> int:
    """``batch.compressionType()`` (IAE for ids 5-7), from the raw attributes."""
    if b.magic >= MAGIC_VALUE_V2:
        return codec(b.raw[ATTRIBUTES_OFFSET + 1] & COMPRESSION_CODEC_MASK).id
    return codec(b.compression_id).id


def _is_transactional(b: Batch) -> bool:
    return b.magic >= MAGIC_VALUE_V2 and bool(
        b.raw[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK
    )


def _producer_id(b: Batch) -> int:
    """``batch.producerId()``, read from the buffer (v2: at 43, 8 bytes; the batch may be
    shorter than a v2 header); legacy batches have none."""
    if b.magic < MAGIC_VALUE_V2:
        return NO_PRODUCER_ID
    if len(b.raw) < PRODUCER_ID_OFFSET + 8:
        raise IndexOutOfBoundsError(None)
    return int(_I64.unpack_from(b.raw, PRODUCER_ID_OFFSET)[0])


def _request_failure(e: DecodeError) -> Refusal:
    return PartitionResponse(error_for(e), api_error_message(e)), e, "request"


def check_request(
    data: bytes | Source, version: int, v: BrokerVersion, transactional_id: str | None
) -> Refusal | None:
    """None when the partition's records pass the request-level checks, else the response,
    the exception and its scope (``partition`` or ``request``)."""
    low, high = v.produce_versions
    if not low <= version <= high:
        error, java_class, template = v.unsupported_version
        e = BrokerError(template.format(version=version), java_class=java_class)
        return PartitionResponse(error, e.message), e, "request"
    m = v.messages
    try:
        first = next(partition_batches(data), None)
        if first is not None and _is_transactional(first):
            if transactional_id is None or version < 3:
                return _request_failure(
                    BrokerError(
                        "Transactional Id authorization failed.",
                        java_class="org.apache.kafka.common.errors."
                        "TransactionalIdAuthorizationException",
                    )
                )
    except DecodeError as e:
        return _request_failure(e)
    if version >= 3:
        try:
            batches = partition_batches(data)
            first = next(batches, None)
            if first is None:
                raise InvalidRecordError(m.no_batch.format(version=version))
            if first.magic != MAGIC_VALUE_V2:
                raise InvalidRecordError(
                    f"Produce requests with version {version} are only allowed to contain record "
                    "batches with magic version 2"
                )
            if version < 7 and _codec_id(first) == ZSTD:
                raise UnsupportedCompressionTypeError(
                    f"Produce requests with version {version} are not allowed to use ZStandard "
                    "compression"
                )
            if next(batches, None) is not None:
                raise InvalidRecordError(m.one_batch.format(version=version))
        except DecodeError as e:
            if error_for(e) == UNKNOWN_SERVER_ERROR:  # not an ApiException: the request fails
                return _request_failure(e)
            return PartitionResponse(error_for(e)), e, "partition"
    if v.transaction_verification:
        try:
            producers = set()
            for b in partition_batches(data):
                pid = _producer_id(b)  # hasProducerId()
                if pid > NO_PRODUCER_ID and _is_transactional(b):
                    producers.add(pid)
            if len(producers) > 1:
                raise BrokerError(
                    "Transactional records contained more than one producer ID",
                    java_class="org.apache.kafka.common.errors.InvalidPidMappingException",
                )
        except DecodeError as e:
            return _request_failure(e)
    return None
