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
transactional flag, the transactional          (a v2 batch shorter than its header:
batches' epochs, the first batch's base        IndexOutOfBoundsException); two producers:
sequence (KIP-890 verification)                INVALID_PRODUCER_ID_MAPPING for the request
=============================================  ==========================================

**Verification (KIP-890, 3.6+).** When a transactional batch comes with a transactional id,
``ReplicaManager`` starts a verification (:func:`verification_target`; the log's
``maybeStartTransactionVerification``, ``producers.py``) and, unless the producer's transaction
is ongoing, asks the transaction coordinator whether the partition is in it. The
coordinator's answer (the ``coordinator`` of ``PartitionLog.produce``) other than NONE fails
the partition before the append (:func:`verification_failure`):

=============================  ==========================================================
coordinator's answer           the partition's error (message: errorMessage; logStartOffset -1)
=============================  ==========================================================
PRODUCER_FENCED                INVALID_PRODUCER_EPOCH (``AddPartitionsToTxnManager``), no message
TRANSACTION_ABORTABLE          Produce v11+: itself, no message; below v11: as INVALID_TXN_STATE
INVALID_TXN_STATE              INVALID_TXN_STATE "Partition was not added to the transaction"
CONCURRENT_TRANSACTIONS,       NOT_ENOUGH_REPLICAS "Unable to verify the partition has been
NETWORK_EXCEPTION,             added to the transaction. Underlying error: E" (4.x Produce
COORDINATOR_LOAD_IN_PROGRESS,  v12+: CONCURRENT_TRANSACTIONS is retried until the deadline,
COORDINATOR_NOT_AVAILABLE,     then answered as itself, no message)
NOT_COORDINATOR
anything else                  itself (``Errors.exception()``), no message
=============================  ==========================================================

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

from conformance.broker.codes import (
    NONE,
    UNKNOWN_SERVER_ERROR,
    api_error_message,
    error_exception,
    error_for,
)
from conformance.broker.verdict import PartitionResponse
from conformance.broker.versions import BrokerVersion
from conformance.codecs import ZSTD, codec
from conformance.errors import (
    BrokerError,
    DecodeError,
    IndexOutOfBoundsError,
    InvalidRecordError,
    InvalidTxnStateError,
    UnsupportedCompressionTypeError,
)
from conformance.stream.splitter import Batch, Source, Splitter
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    BASE_SEQUENCE_OFFSET,
    COMPRESSION_CODEC_MASK,
    MAGIC_VALUE_V2,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = [
    "check_request",
    "coordinator_answer",
    "partition_batches",
    "verification_failure",
    "verification_target",
]

Refusal = tuple[PartitionResponse, DecodeError | None, str]
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")


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


def _header_field(b: Batch, offset: int, field: struct.Struct) -> int:
    """A v2 header field read from the batch's buffer (IndexOutOfBoundsException past its end)."""
    if len(b.raw) < offset + field.size:
        raise IndexOutOfBoundsError(None)
    return int(field.unpack_from(b.raw, offset)[0])


def _transactional_producers(data: bytes | Source) -> tuple[list[tuple[int, int]], int | None]:
    """``handleProduceAppend``'s reads: the (producer id, epoch) of the transactional batches,
    in order without repeats, and the first batch's base sequence when there are any."""
    first: Batch | None = None
    transactional: list[Batch] = []
    for b in partition_batches(data):  # Kafka filters lazily: a read fails before the next split
        first = b if first is None else first
        if _producer_id(b) > NO_PRODUCER_ID and _is_transactional(b):
            transactional.append(b)
    producers: list[tuple[int, int]] = []
    for b in transactional:
        producer = (_producer_id(b), _header_field(b, PRODUCER_EPOCH_OFFSET, _I16))
        if producer not in producers:
            producers.append(producer)
    if not producers or first is None:
        return producers, None
    if first.magic < MAGIC_VALUE_V2:  # a legacy batch has none: NO_SEQUENCE
        return producers, NO_SEQUENCE
    return producers, _header_field(first, BASE_SEQUENCE_OFFSET, _I32)


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
            producers, _ = _transactional_producers(data)
            if len(producers) > 1:
                raise BrokerError(
                    "Transactional records contained more than one producer ID",
                    java_class="org.apache.kafka.common.errors.InvalidPidMappingException",
                )
        except DecodeError as e:
            return _request_failure(e)
    return None


def verification_target(
    data: bytes | Source, version: int, v: BrokerVersion, transactional_id: str | None
) -> tuple[int, int, int] | None:
    """The (producer id, base sequence, epoch) ``ReplicaManager`` starts a transaction
    verification for (``maybeStartTransactionVerificationForPartitions``: transactional records
    and a transactional id; ``transaction.partition.verification.enable`` is taken as its
    default, true), or None; ``data`` passed :func:`check_request`."""
    if not v.transaction_verification or transactional_id is None or version < 3:
        return None
    producers, sequence = _transactional_producers(data)
    if not producers or sequence is None:
        return None
    pid, epoch = producers[0]
    return pid, sequence, epoch


def coordinator_answer(coordinator: str, version: int, v: BrokerVersion) -> str:
    """What the verification callback gets for the coordinator's partition error
    (``AddPartitionsToTxnManager``'s response handler)."""
    if coordinator == "PRODUCER_FENCED":  # producers expect INVALID_PRODUCER_EPOCH here
        return "INVALID_PRODUCER_EPOCH"
    if coordinator == "TRANSACTION_ABORTABLE" and version < v.transaction_abortable_from:
        return "INVALID_TXN_STATE"  # for clients that do not know TRANSACTION_ABORTABLE
    return coordinator


def verification_failure(
    error: str, version: int, v: BrokerVersion, cause: DecodeError | None = None
) -> tuple[PartitionResponse, DecodeError]:
    """``handleProduceAppend``'s ``postVerificationCallback`` for a partition whose verification
    failed with ``error``: the response (no offsets, logStartOffset -1) and the exception
    reported (``cause``: what the log raised, where the error is not given a message)."""
    m = v.messages
    custom: DecodeError | None = None
    if error == "INVALID_TXN_STATE":
        custom = InvalidTxnStateError(m.not_added)
    elif error in v.verification_retriable and not (
        error == "CONCURRENT_TRANSACTIONS" and v.epoch_bump(version)
    ):
        custom = BrokerError(
            m.unable_to_verify.format(error=error),
            java_class="org.apache.kafka.common.errors.NotEnoughReplicasException",
        )
    if custom is not None:
        return PartitionResponse(error_for(custom), custom.message), custom
    if error == NONE:
        raise ValueError("a verification that failed has an error")
    return PartitionResponse(error), cause if cause is not None else error_exception(error)
