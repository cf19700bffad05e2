"""The protocol's error codes a Produce response carries (and a Fetch response of the fake
broker: OFFSET_OUT_OF_RANGE 1, UNKNOWN_TOPIC_OR_PARTITION 3; its groups: ILLEGAL_GENERATION
22, INCONSISTENT_GROUP_PROTOCOL 23), and ``Errors.forException``.

==========================  ====  ==========================================================
name                        code  raised as (Java)
==========================  ====  ==========================================================
UNKNOWN_SERVER_ERROR        -1    anything that is not an ``ApiException``
NONE                        0     —
CORRUPT_MESSAGE             2     CorruptRecordException
MESSAGE_TOO_LARGE           10    RecordTooLargeException
RECORD_LIST_TOO_LARGE       18    RecordBatchTooLargeException
INVALID_TIMESTAMP           32    InvalidTimestampException
UNSUPPORTED_VERSION         35    UnsupportedVersionException
UNSUPPORTED_FOR_MESSAGE...  43    UnsupportedForMessageFormatException
OUT_OF_ORDER_SEQUENCE_...   45    OutOfOrderSequenceException
DUPLICATE_SEQUENCE_NUMBER   46    DuplicateSequenceException
INVALID_PRODUCER_EPOCH      47    InvalidProducerEpochException
INVALID_TXN_STATE           48    InvalidTxnStateException
UNSUPPORTED_COMPRESSION...  76    UnsupportedCompressionTypeException
INVALID_RECORD              87    InvalidRecordException
INVALID_REQUEST             42    InvalidRequestException (a request the broker cannot parse)
TRANSACTIONAL_ID_AUTH...    53    TransactionalIdAuthorizationException
NOT_ENOUGH_REPLICAS         19    NotEnoughReplicasException (a verification that failed
                                  with a retriable coordinator error, KIP-890)
==========================  ====  ==========================================================

The transaction coordinator's answers to a verification (``COORDINATOR_ERRORS``: NETWORK_EXCEPTION,
COORDINATOR_*, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS, PRODUCER_FENCED, ...) have their codes,
exception classes and default messages (``Errors.exception()``) here too: the broker passes some
of them on (``request.verification_failure``). They are the same in 3.9.2 and 4.3.1.

``Errors.forException`` looks the exception's class up, then its superclasses; the classes
above are all the ``ApiException`` subclasses the produce path raises, so any other class
(``KafkaException``, ``IllegalArgumentException``, ``RecordValidationException`` itself, a
codec library's error) is ``UNKNOWN_SERVER_ERROR``.
"""

from __future__ import annotations

from conformance.errors import BrokerError, DecodeError

__all__ = [
    "CODES",
    "COORDINATOR_ERRORS",
    "DEFAULT_MESSAGES",
    "NONE",
    "UNKNOWN_SERVER_ERROR",
    "error_exception",
    "error_for",
    "unknown_coordinator",
]

NONE = "NONE"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"

#: error name -> code (``org.apache.kafka.common.protocol.Errors``)
CODES: dict[str, int] = {
    UNKNOWN_SERVER_ERROR: -1,
    NONE: 0,
    "OFFSET_OUT_OF_RANGE": 1,
    "CORRUPT_MESSAGE": 2,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "MESSAGE_TOO_LARGE": 10,
    "INVALID_TOPIC_EXCEPTION": 17,
    "RECORD_LIST_TOO_LARGE": 18,
    "INVALID_REQUIRED_ACKS": 21,
    "ILLEGAL_GENERATION": 22,
    "INCONSISTENT_GROUP_PROTOCOL": 23,
    "INVALID_REQUEST": 42,
    "INVALID_TIMESTAMP": 32,
    "UNSUPPORTED_VERSION": 35,
    "UNSUPPORTED_FOR_MESSAGE_FORMAT": 43,
    "OUT_OF_ORDER_SEQUENCE_NUMBER": 45,
    "DUPLICATE_SEQUENCE_NUMBER": 46,
    "INVALID_PRODUCER_EPOCH": 47,
    "INVALID_TXN_STATE": 48,
    "INVALID_PRODUCER_ID_MAPPING": 49,
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 53,
    "UNSUPPORTED_COMPRESSION_TYPE": 76,
    "INVALID_RECORD": 87,
    "NETWORK_EXCEPTION": 13,
    "COORDINATOR_LOAD_IN_PROGRESS": 14,
    "COORDINATOR_NOT_AVAILABLE": 15,
    "NOT_COORDINATOR": 16,
    "NOT_ENOUGH_REPLICAS": 19,
    "CONCURRENT_TRANSACTIONS": 51,
    "PRODUCER_FENCED": 90,
    "TRANSACTION_ABORTABLE": 120,
}

#: what a 3.6+ broker may hear from the transaction coordinator when it asks whether a
#: transactional batch's partition is in the producer's transaction (KIP-890): NONE (it is),
#: AddPartitionsToTxnManager's own (COORDINATOR_NOT_AVAILABLE: no coordinator known;
#: NETWORK_EXCEPTION: disconnected), and the coordinator's partition errors
COORDINATOR_ERRORS: tuple[str, ...] = (
    NONE,
    "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR",
    "COORDINATOR_LOAD_IN_PROGRESS",
    "CONCURRENT_TRANSACTIONS",
    "NETWORK_EXCEPTION",
    "INVALID_TXN_STATE",
    "INVALID_PRODUCER_ID_MAPPING",
    "INVALID_PRODUCER_EPOCH",
    "PRODUCER_FENCED",
    "TRANSACTION_ABORTABLE",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    "INVALID_REQUEST",
    UNKNOWN_SERVER_ERROR,
)

_E = "org.apache.kafka.common.errors."
#: the ApiException classes of the produce path -> their error
_API_EXCEPTIONS: dict[str, str] = {
    _E + "CorruptRecordException": "CORRUPT_MESSAGE",
    _E + "RecordTooLargeException": "MESSAGE_TOO_LARGE",
    _E + "InvalidTopicException": "INVALID_TOPIC_EXCEPTION",
    _E + "RecordBatchTooLargeException": "RECORD_LIST_TOO_LARGE",
    _E + "InvalidRequiredAcksException": "INVALID_REQUIRED_ACKS",
    _E + "InvalidTimestampException": "INVALID_TIMESTAMP",
    _E + "UnsupportedVersionException": "UNSUPPORTED_VERSION",
    _E + "UnsupportedForMessageFormatException": "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    _E + "OutOfOrderSequenceException": "OUT_OF_ORDER_SEQUENCE_NUMBER",
    _E + "DuplicateSequenceException": "DUPLICATE_SEQUENCE_NUMBER",
    _E + "InvalidProducerEpochException": "INVALID_PRODUCER_EPOCH",
    _E + "InvalidTxnStateException": "INVALID_TXN_STATE",
    _E + "InvalidRequestException": "INVALID_REQUEST",
    _E + "InvalidPidMappingException": "INVALID_PRODUCER_ID_MAPPING",
    _E + "TransactionalIdAuthorizationException": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    _E + "UnsupportedCompressionTypeException": "UNSUPPORTED_COMPRESSION_TYPE",
    "org.apache.kafka.common.InvalidRecordException": "INVALID_RECORD",
    _E + "UnknownServerException": UNKNOWN_SERVER_ERROR,
    _E + "NetworkException": "NETWORK_EXCEPTION",
    _E + "CoordinatorLoadInProgressException": "COORDINATOR_LOAD_IN_PROGRESS",
    _E + "CoordinatorNotAvailableException": "COORDINATOR_NOT_AVAILABLE",
    _E + "NotCoordinatorException": "NOT_COORDINATOR",
    _E + "NotEnoughReplicasException": "NOT_ENOUGH_REPLICAS",
    _E + "ConcurrentTransactionsException": "CONCURRENT_TRANSACTIONS",
    _E + "ProducerFencedException": "PRODUCER_FENCED",
    _E + "TransactionAbortableException": "TRANSACTION_ABORTABLE",
}
#: error -> the class of ``Errors.exception()``
_EXCEPTION_CLASSES: dict[str, str] = {name: cls for cls, name in _API_EXCEPTIONS.items()}


def error_for(e: DecodeError) -> str:
    """``Errors.forException``: the error name of the exception ``e`` mirrors."""
    return _API_EXCEPTIONS.get(e.kafka_exception, UNKNOWN_SERVER_ERROR)


#: ``Errors.message()`` of the errors the produce path raises with their default message
DEFAULT_MESSAGES: dict[str, str] = {
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "Transactional Id authorization failed.",
    UNKNOWN_SERVER_ERROR: "The server experienced an unexpected error when processing the request.",
    "NETWORK_EXCEPTION": "The server disconnected before a response was received.",
    "COORDINATOR_LOAD_IN_PROGRESS": "The coordinator is loading and hence can't process requests.",
    "COORDINATOR_NOT_AVAILABLE": "The coordinator is not available.",
    "NOT_COORDINATOR": "This is not the correct coordinator.",
    "CONCURRENT_TRANSACTIONS": "The producer attempted to update a transaction while another "
    "concurrent operation on the same transaction was ongoing.",
    "INVALID_TXN_STATE": "The producer attempted a transactional operation in an invalid state.",
    "INVALID_PRODUCER_ID_MAPPING": "The producer attempted to use a producer id which is not "
    "currently assigned to its transactional id.",
    "INVALID_PRODUCER_EPOCH": "Producer attempted to produce with an old epoch.",
    "PRODUCER_FENCED": "There is a newer producer with the same transactionalId which fences the "
    "current one.",
    "TRANSACTION_ABORTABLE": "The server encountered an error with the transaction. The client "
    "can abort the transaction to continue using this transactional ID.",
    "INVALID_REQUEST": "This most likely occurs because of a request being malformed by the client "
    "library or the message was sent to an incompatible broker. See the broker logs for more "
    "details.",
}


def unknown_coordinator(name: str) -> str:
    """The message refusing a coordinator answer not in ``COORDINATOR_ERRORS``."""
    return (
        f"coordinator error {name!r} is not one the transaction coordinator's verification "
        f"can answer here (known: {', '.join(COORDINATOR_ERRORS)})"
    )


def error_exception(error: str) -> BrokerError:
    """``Errors.exception()`` of ``error``: its exception class with the default message."""
    return BrokerError(DEFAULT_MESSAGES[error], java_class=_EXCEPTION_CLASSES[error])


def api_error_message(e: DecodeError) -> str | None:
    """``ApiError.fromThrowable(e).message()``: the exception's message, except for
    UNKNOWN_SERVER_ERROR and where it is the error's default message."""
    error = error_for(e)
    if error == UNKNOWN_SERVER_ERROR or DEFAULT_MESSAGES.get(error) == e.message:
        return None
    return e.message
