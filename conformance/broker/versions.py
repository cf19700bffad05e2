"""What differs between the broker versions the kit answers for, as data.

The broker's checks are one implementation (``request``, ``log``, ``validator``,
``producers``); a :class:`BrokerVersion` holds every fact that differs between Kafka lines:
which Produce versions a broker accepts, how topic timestamps are bounded, whether it still
converts message formats, and the wording of its messages. Each difference names the Kafka
change behind it.

===========  ==============  =======================================================================
version      Produce         differences from the line before
===========  ==============  =======================================================================
2.8.2        v0-v9           ``kafka.log.LogValidator`` (Scala): one symmetric bound
                             ``message.timestamp.difference.max.ms`` (``|ts - now| > max``);
                             messages end in ``.``; "first batch'es magic byte"
3.9.2        v0-v11          transactional batches verified with the coordinator (KIP-890, 3.6);
                             ``LogValidator`` in Java (storage module, KAFKA-14477);
                             ``message.timestamp.before.max.ms`` / ``after.max.ms`` (KIP-937,
                             3.6), the deprecated difference used where they are unset; no
                             trailing ``.``; record errors listed in the exception message
                             (KIP-467 follow-up)
4.3.1        v3-v13          message formats v0/v1 gone (KIP-724): no conversion, topics are v2;
                             Produce v0-v2 advertised but refused (KIP-896, KAFKA-18659);
                             ``after.max.ms`` defaults to 1 hour (KIP-1030);
                             ``difference.max.ms`` removed; transactions V2 from Produce v12
                             (KIP-890 part 2); no ``inter.broker.protocol.version`` (KIP-500)
===========  ==============  =======================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_VERSION", "VERSIONS", "BrokerVersion", "Messages", "broker_version"]

LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class Messages:
    """The broker's message templates (``str.format`` fields: ``tp`` = topic-partition)."""

    batch_magic: str = (
        "Batch magic {magic} is not the same as the first batch's magic byte {first} in topic "
        "partition {tp}"
    )
    offset_range: str = (
        "Batch has an invalid offset range: [{base}, {last}] in topic partition {tp}"
    )
    reported_count: str = "Invalid reported count for record batch: {count} in topic partition {tp}"
    inconsistent_count: str = (
        "Inconsistent batch offset range [{base}, {last}] and count of records {count} in topic "
        "partition {tp}"
    )
    control: str = "Clients are not allowed to write control records in topic partition {tp}"
    sequence: str = (
        "Invalid sequence number {sequence} in record batch with producerId {pid} in topic "
        "partition {tp}"
    )
    record_magic: str = (
        "Record {record}'s magic does not match outer magic {magic} in topic partition {tp}"
    )
    inner_crc: str = "{message} in topic partition {tp}"
    compacted_key: str = "Compacted topic cannot accept message without key in topic partition {tp}"
    timestamp_range: str = (
        "Timestamp {ts} of message with offset {offset} is out of range. The timestamp should be "
        "within [{low}, {high}]"
    )
    log_append_time: str = (
        "Invalid timestamp type in message {record}. Producer should not set timestamp type to "
        "LogAppendTime."
    )
    no_batch: str = (
        "Produce requests with version {version} must have at least one record batch per partition"
    )
    one_batch: str = (
        "Produce requests with version {version} are only allowed to contain exactly one record "
        "batch per partition"
    )
    too_large: str = (
        "The record batch size in the append to {tp} is {size} bytes which exceeds the maximum "
        "configured value of {max}."
    )
    old_epoch: str = (
        "Epoch of producer {pid} at offset {offset} in {tp} is {epoch}, which is smaller than the "
        "last seen epoch {last}"
    )
    #: (sic: no space before "at" from 3.0)
    new_epoch_sequence: str = (
        "Invalid sequence number for new epoch of producer {pid}at offset {offset} in partition "
        "{tp}: {epoch} (request epoch), {sequence} (seq. number), {last} (current producer epoch)"
    )
    #: the JVM's message for the NullPointerException of a null record (2.x only; ``{call}``:
    #: the method called on it, e.g. ``hasMagic(byte)``)
    null_record: str | None = None
    #: ``LogOffsetMetadata.toString`` of a non-transactional batch
    offset_metadata: str = "(offset={offset}, segment=[-1:-1])"
    #: the exception of a batch whose records failed for other reasons than timestamps
    #: (``{errors}`` = Java's ``List.toString`` of the first three RecordError objects)
    record_errors: str = (
        "One or more records have been rejected due to {count} record errors in total, and only "
        "showing the first three errors at most: {errors}"
    )
    #: KIP-890 (3.6+): the verification callback's messages (``ReplicaManager``)
    not_added: str = "Partition was not added to the transaction"
    unable_to_verify: str = (
        "Unable to verify the partition has been added to the transaction. Underlying error: "
        "{error}"
    )
    #: ``ProducerAppendInfo.checkSequence`` after a verification left its state (3.6+)
    earliest_sequence: str = (
        "Out of order sequence number for producer {pid} at offset {offset} in partition {tp}: "
        "{sequence} (incoming seq. number), {lowest} (earliest seen sequence)"
    )
    #: the same, for a verification of transactions V2 (4.x, Produce v12+)
    tv2_first_sequence: str = (
        "Invalid sequence number for producer {pid} at offset {offset} in partition {tp}: "
        "{sequence} (incoming seq. number). Expected sequence 0 for transactions v2 idempotent "
        "producer with no existing state."
    )
    #: ``UnifiedLog.maybeStartTransactionVerification`` (4.x)
    verification_epoch: str = (
        "Epoch of producer {pid} is {epoch}, which is smaller than the last seen epoch {last}"
    )


_MESSAGES_2_8 = Messages(
    batch_magic="Batch magic {magic} is not the same as the first batch'es magic byte {first} in "
    "topic partition {tp}.",
    offset_range="Batch has an invalid offset range: [{base}, {last}] in topic partition {tp}.",
    reported_count="Invalid reported count for record batch: {count} in topic partition {tp}.",
    inconsistent_count="Inconsistent batch offset range [{base}, {last}] and count of records "
    "{count} in topic partition {tp}.",
    control="Clients are not allowed to write control records in topic partition {tp}.",
    sequence="Invalid sequence number {sequence} in record batch with producerId {pid} in topic "
    "partition {tp}.",
    record_magic="Record {record}'s magic does not match outer magic {magic} in topic partition "
    "{tp}.",
    inner_crc="{message} in topic partition {tp}.",
    compacted_key="Compacted topic cannot accept message without key in topic partition {tp}.",
    record_errors="One or more records have been rejected",
    no_batch="Produce requests with version {version} must have at least one record batch",
    one_batch="Produce requests with version {version} are only allowed to contain exactly one "
    "record batch",
    new_epoch_sequence="Invalid sequence number for new epoch of producer {pid} at offset "
    "{offset} in partition {tp}: {epoch} (request epoch), {sequence} (seq. number), {last} "
    "(current producer epoch)",
    offset_metadata="(offset={offset} segment=[-1:-1])",
    # Java 17's helpful NullPointerException message (the oracle's JVM, and any broker on 14+)
    null_record='Cannot invoke "org.apache.kafka.common.record.Record.{call}" because "record" '
    "is null",
)

_MESSAGES_4 = Messages(
    #: (sic: the closing parenthesis, 4.x)
    too_large="The record batch size in the append to {tp} is {size} bytes which exceeds the "
    "maximum configured value of {max}).",
    #: the transaction version of the request (KIP-890 part 2): the oracle's clients send TV 1
    old_epoch="Epoch of producer {pid} at offset {offset} in {tp} is {epoch}, which is < the last "
    "seen epoch {last} (TV-1)",
)


@dataclass(frozen=True)
class BrokerVersion:
    """One Kafka broker line: its facts for the produce path."""

    version: str
    #: Produce versions the broker answers (others: UNSUPPORTED_VERSION for the request)
    produce_versions: tuple[int, int]
    #: Fetch and ListOffsets versions the broker advertises in ApiVersions (what
    #: ``check-broker`` sends a target judged against this line; a capture test holds them to
    #: the real brokers)
    fetch_versions: tuple[int, int] = (0, 12)
    list_offsets_versions: tuple[int, int] = (0, 6)
    #: the topic timestamp bound: "difference" (2.x: one symmetric bound) or "before-after"
    timestamp_bounds: str = "before-after"
    #: whether ``message.timestamp.difference.max.ms`` still exists (used when before/after are
    #: unset, 3.6-3.9)
    timestamp_difference: bool = True
    #: the default of ``message.timestamp.after.max.ms`` (KIP-1030: 1 hour from 4.0)
    default_after_max_ms: int = LONG_MAX
    #: whether topics may keep message format v0/v1 (``message.format.version``; KIP-724)
    legacy_formats: bool = True
    #: whether the broker has ``inter.broker.protocol.version`` (gone in 4.0 with ZooKeeper,
    #: KIP-500: KRaft brokers have ``metadata.version``)
    inter_broker_protocol: bool = True
    #: how a Produce version the broker does not speak is answered: (error, Java exception,
    #: message); the real broker closes the connection, the answer is what the request
    #: parser raised (2.x names the request context the broker oracle simulates)
    unsupported_version: tuple[str, str, str] = (
        "INVALID_REQUEST",
        "org.apache.kafka.common.errors.InvalidRequestException",
        "Received request api key PRODUCE with version {version} which is not enabled",
    )
    #: KIP-534 (3.0): ``computeAttributes`` keeps the delete-horizon bit (6) when it rewrites
    #: a batch's attributes; 2.x has no such bit and drops it with the other unknown bits
    delete_horizon_bit: bool = True
    #: KIP-890 (3.6): before the append, ``ReplicaManager`` reads every batch's producer id
    #: and transactional flag (a v2 batch too short for them fails the request there), and
    #: asks the transaction coordinator whether a transactional batch's partition is in the
    #: producer's transaction, unless one is ongoing (the log's
    #: ``maybeStartTransactionVerification`` leaves a ``VerificationStateEntry`` behind)
    transaction_verification: bool = True
    #: the coordinator's answers the verification callback turns into NOT_ENOUGH_REPLICAS
    #: "Unable to verify ..." (retriable errors older clients may not retry correctly)
    verification_retriable: tuple[str, ...] = (
        "CONCURRENT_TRANSACTIONS",
        "NETWORK_EXCEPTION",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_COORDINATOR",
    )
    #: the first Produce version whose clients handle TRANSACTION_ABORTABLE (KIP-890's
    #: ``genericError``): below it ``AddPartitionsToTxnManager`` answers INVALID_TXN_STATE
    transaction_abortable_from: int = 11
    #: KIP-890 part 2 (4.0): the first Produce version of transactions V2 (the broker adds the
    #: partition itself, ``supportsEpochBump``: verification whatever the topic setting,
    #: CONCURRENT_TRANSACTIONS retried until the request's deadline and then passed on as
    #: itself, and a producer with no state must start at sequence 0); None: none
    transactions_v2_from: int | None = None
    #: 4.x: ``maybeStartTransactionVerification`` refuses an epoch below the producer's
    #: (InvalidProducerEpochException), and a transaction is ongoing only for its own epoch
    verification_checks_epoch: bool = False
    #: the clients library line the broker reads records with (``codecs.CLIENTS``): "3.5"
    #: (ChunkedBytesStream, KIP-390; snappy-java 1.1.10, zstd-jni 1.5) or "2.8"
    #: (DataInputStream; a short uncompressed record is null; the skipping reader is bounded
    #: by the record's length; snappy-java 1.1.8, zstd-jni 1.4)
    clients: str = "3.5"
    messages: Messages = field(default_factory=Messages)

    def epoch_bump(self, produce_version: int) -> bool:
        """``TransactionSupportedOperation.supportsEpochBump``: whether a Produce of
        ``produce_version`` is a transactions V2 client's (:attr:`transactions_v2_from`)."""
        first = self.transactions_v2_from
        return first is not None and produce_version >= first


VERSIONS: dict[str, BrokerVersion] = {
    v.version: v
    for v in (
        BrokerVersion(
            "2.8.2",
            (0, 9),
            timestamp_bounds="difference",
            unsupported_version=(
                "INVALID_REQUEST",
                "org.apache.kafka.common.errors.InvalidRequestException",
                "Error getting request for apiKey: PRODUCE, apiVersion: {version}, connectionId: "
                "127.0.0.1:9092-127.0.0.1:50000-0, listenerName: ListenerName(PLAINTEXT), "
                "principal: User:ANONYMOUS",
            ),
            transaction_verification=False,
            delete_horizon_bit=False,
            clients="2.8",
            messages=_MESSAGES_2_8,
        ),
        BrokerVersion("3.9.2", (0, 11), (0, 17), (0, 9)),
        BrokerVersion(
            "4.3.1",
            (3, 13),
            (4, 18),
            (1, 11),
            timestamp_difference=False,
            default_after_max_ms=3_600_000,
            legacy_formats=False,
            inter_broker_protocol=False,
            transactions_v2_from=12,
            verification_checks_epoch=True,
            unsupported_version=(
                "UNSUPPORTED_VERSION",
                "org.apache.kafka.common.errors.UnsupportedVersionException",
                "Received request for api with key 0 (Produce) and unsupported version {version}",
            ),
            messages=_MESSAGES_4,
        ),
    )
}

#: the newest supported broker line
DEFAULT_VERSION = "4.3.1"


def broker_version(version: str | BrokerVersion | None = None) -> BrokerVersion:
    """The :class:`BrokerVersion` of ``version`` (default: the newest); ValueError names the
    supported versions."""
    if isinstance(version, BrokerVersion):
        return version
    found = VERSIONS.get(version or DEFAULT_VERSION)
    if found is None:
        raise ValueError(
            f"broker version {version!r} is not supported (supported: {', '.join(VERSIONS)})"
        )
    return found
