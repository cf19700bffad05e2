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
    "INVALID_METADATA",
    "NAMES",
    "RETRIABLE",
    "COORDINATOR_ERRORS",
    "DEFAULT_MESSAGES",
    "NONE",
    "UNKNOWN_SERVER_ERROR",
    "error_exception",
    "error_for",
    "error_name",
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

#: every error of ``org.apache.kafka.common.protocol.Errors`` by code (the protocol's error
#: table; the names above are among them): what a client names a code it reads
_ALL = (
    "UNKNOWN_SERVER_ERROR NONE OFFSET_OUT_OF_RANGE CORRUPT_MESSAGE UNKNOWN_TOPIC_OR_PARTITION "
    "INVALID_FETCH_SIZE LEADER_NOT_AVAILABLE NOT_LEADER_OR_FOLLOWER REQUEST_TIMED_OUT "
    "BROKER_NOT_AVAILABLE REPLICA_NOT_AVAILABLE MESSAGE_TOO_LARGE STALE_CONTROLLER_EPOCH "
    "OFFSET_METADATA_TOO_LARGE NETWORK_EXCEPTION COORDINATOR_LOAD_IN_PROGRESS "
    "COORDINATOR_NOT_AVAILABLE NOT_COORDINATOR INVALID_TOPIC_EXCEPTION RECORD_LIST_TOO_LARGE "
    "NOT_ENOUGH_REPLICAS NOT_ENOUGH_REPLICAS_AFTER_APPEND INVALID_REQUIRED_ACKS "
    "ILLEGAL_GENERATION INCONSISTENT_GROUP_PROTOCOL INVALID_GROUP_ID UNKNOWN_MEMBER_ID "
    "INVALID_SESSION_TIMEOUT REBALANCE_IN_PROGRESS INVALID_COMMIT_OFFSET_SIZE "
    "TOPIC_AUTHORIZATION_FAILED GROUP_AUTHORIZATION_FAILED CLUSTER_AUTHORIZATION_FAILED "
    "INVALID_TIMESTAMP UNSUPPORTED_SASL_MECHANISM ILLEGAL_SASL_STATE UNSUPPORTED_VERSION "
    "TOPIC_ALREADY_EXISTS INVALID_PARTITIONS INVALID_REPLICATION_FACTOR "
    "INVALID_REPLICA_ASSIGNMENT INVALID_CONFIG NOT_CONTROLLER INVALID_REQUEST "
    "UNSUPPORTED_FOR_MESSAGE_FORMAT POLICY_VIOLATION OUT_OF_ORDER_SEQUENCE_NUMBER "
    "DUPLICATE_SEQUENCE_NUMBER INVALID_PRODUCER_EPOCH INVALID_TXN_STATE "
    "INVALID_PRODUCER_ID_MAPPING INVALID_TRANSACTION_TIMEOUT CONCURRENT_TRANSACTIONS "
    "TRANSACTION_COORDINATOR_FENCED TRANSACTIONAL_ID_AUTHORIZATION_FAILED SECURITY_DISABLED "
    "OPERATION_NOT_ATTEMPTED KAFKA_STORAGE_ERROR LOG_DIR_NOT_FOUND SASL_AUTHENTICATION_FAILED "
    "UNKNOWN_PRODUCER_ID REASSIGNMENT_IN_PROGRESS DELEGATION_TOKEN_AUTH_DISABLED "
    "DELEGATION_TOKEN_NOT_FOUND DELEGATION_TOKEN_OWNER_MISMATCH "
    "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED DELEGATION_TOKEN_AUTHORIZATION_FAILED "
    "DELEGATION_TOKEN_EXPIRED INVALID_PRINCIPAL_TYPE NON_EMPTY_GROUP GROUP_ID_NOT_FOUND "
    "FETCH_SESSION_ID_NOT_FOUND INVALID_FETCH_SESSION_EPOCH LISTENER_NOT_FOUND "
    "TOPIC_DELETION_DISABLED FENCED_LEADER_EPOCH UNKNOWN_LEADER_EPOCH "
    "UNSUPPORTED_COMPRESSION_TYPE STALE_BROKER_EPOCH OFFSET_NOT_AVAILABLE MEMBER_ID_REQUIRED "
    "PREFERRED_LEADER_NOT_AVAILABLE GROUP_MAX_SIZE_REACHED FENCED_INSTANCE_ID "
    "ELIGIBLE_LEADERS_NOT_AVAILABLE ELECTION_NOT_NEEDED NO_REASSIGNMENT_IN_PROGRESS "
    "GROUP_SUBSCRIBED_TO_TOPIC INVALID_RECORD UNSTABLE_OFFSET_COMMIT THROTTLING_QUOTA_EXCEEDED "
    "PRODUCER_FENCED RESOURCE_NOT_FOUND DUPLICATE_RESOURCE UNACCEPTABLE_CREDENTIAL "
    "INCONSISTENT_VOTER_SET INVALID_UPDATE_VERSION FEATURE_UPDATE_FAILED "
    "PRINCIPAL_DESERIALIZATION_FAILURE SNAPSHOT_NOT_FOUND POSITION_OUT_OF_RANGE "
    "UNKNOWN_TOPIC_ID DUPLICATE_BROKER_REGISTRATION BROKER_ID_NOT_REGISTERED "
    "INCONSISTENT_TOPIC_ID INCONSISTENT_CLUSTER_ID TRANSACTIONAL_ID_NOT_FOUND "
    "FETCH_SESSION_TOPIC_ID_ERROR INELIGIBLE_REPLICA NEW_LEADER_ELECTED "
    "OFFSET_MOVED_TO_TIERED_STORAGE FENCED_MEMBER_EPOCH UNRELEASED_INSTANCE_ID "
    "UNSUPPORTED_ASSIGNOR STALE_MEMBER_EPOCH MISMATCHED_ENDPOINT_TYPE UNSUPPORTED_ENDPOINT_TYPE "
    "UNKNOWN_CONTROLLER_ID UNKNOWN_SUBSCRIPTION_ID TELEMETRY_TOO_LARGE INVALID_REGISTRATION "
    "TRANSACTION_ABORTABLE"
).split()
CODES.update({name: code for code, name in enumerate(_ALL, -1)})
#: code -> name
NAMES: dict[int, str] = {code: name for name, code in CODES.items()}
#: the errors whose exception is a ``RetriableException`` (a client retries them)
RETRIABLE: frozenset[str] = frozenset(
    "CORRUPT_MESSAGE UNKNOWN_TOPIC_OR_PARTITION LEADER_NOT_AVAILABLE NOT_LEADER_OR_FOLLOWER "
    "REQUEST_TIMED_OUT REPLICA_NOT_AVAILABLE NETWORK_EXCEPTION COORDINATOR_LOAD_IN_PROGRESS "
    "COORDINATOR_NOT_AVAILABLE NOT_COORDINATOR NOT_ENOUGH_REPLICAS "
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND NOT_CONTROLLER CONCURRENT_TRANSACTIONS "
    "KAFKA_STORAGE_ERROR FETCH_SESSION_ID_NOT_FOUND INVALID_FETCH_SESSION_EPOCH "
    "LISTENER_NOT_FOUND FENCED_LEADER_EPOCH UNKNOWN_LEADER_EPOCH OFFSET_NOT_AVAILABLE "
    "PREFERRED_LEADER_NOT_AVAILABLE ELIGIBLE_LEADERS_NOT_AVAILABLE UNSTABLE_OFFSET_COMMIT "
    "THROTTLING_QUOTA_EXCEEDED UNKNOWN_TOPIC_ID INCONSISTENT_TOPIC_ID "
    "FETCH_SESSION_TOPIC_ID_ERROR".split()
)
#: the errors whose exception is an ``InvalidMetadataException``: the client's metadata is
#: stale; it refreshes it before it retries (``NetworkClient``, ``Sender``)
INVALID_METADATA: frozenset[str] = frozenset(
    "UNKNOWN_TOPIC_OR_PARTITION LEADER_NOT_AVAILABLE NOT_LEADER_OR_FOLLOWER "
    "REPLICA_NOT_AVAILABLE NETWORK_EXCEPTION KAFKA_STORAGE_ERROR LISTENER_NOT_FOUND "
    "FENCED_LEADER_EPOCH UNKNOWN_LEADER_EPOCH PREFERRED_LEADER_NOT_AVAILABLE "
    "ELIGIBLE_LEADERS_NOT_AVAILABLE UNKNOWN_TOPIC_ID INCONSISTENT_TOPIC_ID".split()
)


def error_name(code: int) -> str:
    """The name of error ``code`` (``UNKNOWN_CODE_<n>`` for a code Kafka does not define)."""
    return NAMES.get(code, f"UNKNOWN_CODE_{code}")


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
