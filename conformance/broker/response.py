"""``ReplicaManager.appendToLocalLog``: an exception of the append as the partition's answer.

=====================================  ========================  ===============  ============
exception                              error                     logStartOffset   errorMessage
=====================================  ========================  ===============  ============
CorruptRecordException,                its own (2, 10, 18)       -1               null
RecordTooLargeException,
RecordBatchTooLargeException
RecordValidationException              its inner exception's     the log's        the inner
                                       (32 or 87), with the                       message
                                       record errors
anything else                          ``Errors.forException``   the log's        null
=====================================  ========================  ===============  ============

The base offset and LogAppendTime are -1 in every case.
"""

from __future__ import annotations

from conformance.broker.codes import error_for
from conformance.broker.verdict import PartitionResponse
from conformance.errors import (
    CorruptRecordError,
    DecodeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RecordValidationError,
)

__all__ = ["failure"]


def failure(e: DecodeError, log_start_offset: int) -> tuple[PartitionResponse, DecodeError]:
    """The partition's response to ``e`` raised while appending, and the exception it
    reports (a ``RecordValidationException``'s inner one)."""
    if isinstance(e, CorruptRecordError | RecordTooLargeError | RecordBatchTooLargeError):
        return PartitionResponse(error_for(e)), e
    if isinstance(e, RecordValidationError):
        return (
            PartitionResponse(
                error_for(e.invalid),
                e.invalid.message,
                log_start_offset=log_start_offset,
                record_errors=tuple(e.record_errors),
            ),
            e.invalid,
        )
    return PartitionResponse(error_for(e), log_start_offset=log_start_offset), e
