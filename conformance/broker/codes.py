"""The protocol's error codes a Produce response carries, and ``Errors.forException``.

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
==========================  ====  ==========================================================

``Errors.forException`` looks the exception's class up, then its superclasses; the classes
above are all the ``ApiException`` subclasses the produce path raises, so any other class
(``KafkaException``, ``IllegalArgumentException``, ``RecordValidationException`` itself, a
codec library's error) is ``UNKNOWN_SERVER_ERROR``.
"""

from __future__ import annotations

from conformance.errors import DecodeError

__all__ = ["CODES", "DEFAULT_MESSAGES", "NONE", "UNKNOWN_SERVER_ERROR", "error_for"]

NONE = "NONE"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"

#: error name -> code (``org.apache.kafka.common.protocol.Errors``)
CODES: dict[str, int] = {
    UNKNOWN_SERVER_ERROR: -1,
    NONE: 0,
    "CORRUPT_MESSAGE": 2,
    "MESSAGE_TOO_LARGE": 10,
    "INVALID_TOPIC_EXCEPTION": 17,
    "RECORD_LIST_TOO_LARGE": 18,
    "INVALID_REQUIRED_ACKS": 21,
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
}

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
}


def error_for(e: DecodeError) -> str:
    """``Errors.forException``: the error name of the exception ``e`` mirrors."""
    return _API_EXCEPTIONS.get(e.kafka_exception, UNKNOWN_SERVER_ERROR)


#: ``Errors.message()`` of the errors the produce path raises with their default message
DEFAULT_MESSAGES: dict[str, str] = {
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "Transactional Id authorization failed.",
}


def api_error_message(e: DecodeError) -> str | None:
    """``ApiError.fromThrowable(e).message()``: the exception's message, except for
    UNKNOWN_SERVER_ERROR and where it is the error's default message."""
    error = error_for(e)
    if error == UNKNOWN_SERVER_ERROR or DEFAULT_MESSAGES.get(error) == e.message:
        return None
    return e.message
