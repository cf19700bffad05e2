"""The coordinator decoders' text printers as data (``--offsets-decoder`` before Kafka 3.8,
``--transaction-log-decoder`` before 4.1): the values of the ``DumpFormat`` facts
``offsets_decoder_text`` / ``transaction_log_decoder_text`` (entries:
``coordinator_text.OFFSETS_KEYS`` / ``TRANSACTION_KEYS``), one dict per release that changed
them; ``formats.CHANGES`` says from which release each applies and which Kafka change made it.
Found in the source of each release (``GroupMetadataManager``, ``TransactionLog``,
``ConsumerProtocol``, ``DumpLogSegments``) and checked against the tools of 0.10.2.2, 1.1.1,
2.8.2 and 3.9.2 (tests/test_dump_coordinator_text.py).
"""

from __future__ import annotations

from typing import Any

# the hand-written Schema objects of GroupMetadataManager / TransactionLog / ConsumerProtocol
# (``coordinator_text.read_fields`` notation)
_OFFSET_KEY = "group:string,topic:string,partition:int32"
_MEMBER_V0 = (
    "member_id:string,client_id:string,client_host:string,session_timeout:int32,"
    "subscription:bytes,assignment:bytes"
)
_MEMBER_V1 = (
    "member_id:string,client_id:string,client_host:string,rebalance_timeout:int32,"
    "session_timeout:int32,subscription:bytes,assignment:bytes"
)
_MEMBER_V3 = (
    "member_id:string,group_instance_id:nullable_string,client_id:string,client_host:string,"
    "rebalance_timeout:int32,session_timeout:int32,subscription:bytes,assignment:bytes"
)
_GROUP_HEAD = (
    "protocol_type:string,generation:int32,protocol:nullable_string,leader:nullable_string"
)
_OFFSET_VALUES_0_10_2 = {
    0: "offset:int64,metadata:string,timestamp:int64",
    1: "offset:int64,metadata:string,commit_timestamp:int64,expire_timestamp:int64",
}
_GROUP_VALUES_0_10_2 = {
    0: f"{_GROUP_HEAD},members:[{_MEMBER_V0}]",
    1: f"{_GROUP_HEAD},members:[{_MEMBER_V1}]",
}
#: the Scala ``kafka.common.KafkaException`` (up to 1.1) and its Java successor (2.0+)
_SCALA_KAFKA_EXCEPTION = "kafka.common.KafkaException"
_KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
_ILLEGAL_STATE = "java.lang.IllegalStateException"
#: --offsets-decoder of 0.10.2 (``DumpLogSegments.OffsetsMessageParser``)
OFFSETS_TEXT_0_10_2: dict[str, Any] = {
    "reader": "struct",
    "keys": {0: ("offset", _OFFSET_KEY), 1: ("offset", _OFFSET_KEY), 2: ("group", "group:string")},
    "offset_values": _OFFSET_VALUES_0_10_2,
    "group_values": _GROUP_VALUES_0_10_2,
    "unknown_key": (_SCALA_KAFKA_EXCEPTION, "Unknown offset schema version {version}"),
    "unknown_offset_value": (_SCALA_KAFKA_EXCEPTION, "Unknown offset schema version {version}"),
    "unknown_group_value": (_SCALA_KAFKA_EXCEPTION, "Unknown group metadata version {version}"),
    "null_value": "hidden",
    "missing_key": (
        "Failed to decode message using offset topic decoder (message had a missing key)"
    ),
    "offset_key": "offset::{group}:{topic}:{partition}",
    "offset_value": ("{offset}", "{offset}:{metadata}"),
    "group_key": "metadata::{group}",
    "group_value": "{protocol_type}:{protocol}:{generation}:{assignment}",
    "consumer_protocol": "struct",
    "unsupported_assignment": "Unsupported subscription version: {version}",
    "null_user_data": 'Cannot invoke "java.nio.ByteBuffer.limit()" because "buffer" is null',
}
#: 0.11: ``Utils.toArray(buffer)`` reads ``remaining()`` (KAFKA-4816)
_OFFSETS_TEXT_0_11: dict[str, Any] = {
    **OFFSETS_TEXT_0_10_2,
    "null_user_data": 'Cannot invoke "java.nio.ByteBuffer.remaining()" because "buffer" is null',
}
_TXN_VALUE_V0 = (
    "producer_id:int64,producer_epoch:int16,transaction_timeout:int32,transaction_status:int8,"
    "transaction_partitions:?[topic:string,partition_ids:[int32]],"
    "transaction_entry_timestamp:int64,transaction_start_timestamp:int64"
)
#: --transaction-log-decoder of 0.11 (``DumpLogSegments.TransactionLogMessageParser``)
_TXN_TEXT_0_11: dict[str, Any] = {
    "reader": "struct",
    "key": "transactional_id:string",
    "values": {0: _TXN_VALUE_V0},
    "unknown_key": (
        _SCALA_KAFKA_EXCEPTION,
        "Unknown transaction log message key schema version {version}",
    ),
    "unknown_value": (
        _SCALA_KAFKA_EXCEPTION,
        "Unknown transaction log message value schema version {version}",
    ),
    "key_text": "transactionalId={transactional_id}",
    "value_text": (
        "producerId:{producer_id},producerEpoch:{producer_epoch},state={state},"
        "partitions={partitions},txnLastUpdateTimestamp={last_update},txnTimeoutMs={timeout}"
    ),
    "partitions": "Set",
    "null_value": "npe",
    "null_key": 'Cannot invoke "java.nio.ByteBuffer.getShort()" because "buffer" is null',
    "null_value_npe": (
        'Cannot invoke "kafka.coordinator.transaction.TransactionMetadata.producerId()" '
        'because "txnMetadata" is null'
    ),
    "null_partitions": 'Cannot read the array length because "$this" is null',
    "unknown_state": "Unknown transaction state byte {status} from the transaction status message",
    "states": {
        0: "Empty",
        1: "Ongoing",
        2: "PrepareCommit",
        3: "PrepareAbort",
        4: "CompleteCommit",
        5: "CompleteAbort",
        6: "Dead",
        7: "PrepareEpochFence",
    },
}


_OFFSETS_TEXT_2_0: dict[str, Any] = {
    **_OFFSETS_TEXT_0_11,
    "group_key": "json",
    "group_value": "json",
    "unknown_key": (_KAFKA_EXCEPTION, "Unknown offset schema version {version}"),
    "unknown_offset_value": (_KAFKA_EXCEPTION, "Unknown offset schema version {version}"),
    "unknown_group_value": (_KAFKA_EXCEPTION, "Unknown group metadata version {version}"),
}
#: a null TransactionPartitions array read by a generated TransactionLogValue
_NULL_PARTITIONS = (
    'Cannot invoke "java.util.List.forEach(java.util.function.Consumer)" because the return '
    'value of "{package}.TransactionLogValue.transactionPartitions()" is null'
)
_TXN_TEXT_2_0: dict[str, Any] = {
    **_TXN_TEXT_0_11,
    "unknown_key": (
        _KAFKA_EXCEPTION,
        "Unknown transaction log message key schema version {version}",
    ),
    "unknown_value": (
        _KAFKA_EXCEPTION,
        "Unknown transaction log message value schema version {version}",
    ),
}
_OFFSETS_TEXT_2_1: dict[str, Any] = {
    **_OFFSETS_TEXT_2_0,
    "offset_values": {
        **_OFFSET_VALUES_0_10_2,
        2: "offset:int64,metadata:string,commit_timestamp:int64",
        3: "offset:int64,leader_epoch:int32,metadata:string,commit_timestamp:int64",
    },
    "group_values": {
        **_GROUP_VALUES_0_10_2,
        2: f"{_GROUP_HEAD},current_state_timestamp:int64,members:[{_MEMBER_V1}]",
    },
}
_OFFSETS_TEXT_2_3: dict[str, Any] = {
    **_OFFSETS_TEXT_2_1,
    "group_values": {
        **_OFFSETS_TEXT_2_1["group_values"],
        3: f"{_GROUP_HEAD},current_state_timestamp:int64,members:[{_MEMBER_V3}]",
    },
}
#: 2.4.1: ``GroupMetadataManager.formatRecordKeyAndValue``
_OFFSETS_TEXT_2_4: dict[str, Any] = {
    **_OFFSETS_TEXT_2_3,
    "unknown_key": (_KAFKA_EXCEPTION, "Unknown message key schema version {version}"),
    "unsupported_assignment": "Unsupported assignment version: {version}",
}
_OFFSETS_TEXT_2_4_1: dict[str, Any] = {
    **_OFFSETS_TEXT_2_4,
    "null_value": "delete",
    "null_user_data": None,
    "offset_key": "offset_commit::group={group},partition={topic}-{partition}",
    "offset_value": ("offset={offset}", "offset={offset},metadata={metadata}"),
    "group_key": "group_metadata::group={group}",
}
_OFFSETS_TEXT_2_7: dict[str, Any] = {
    **_OFFSETS_TEXT_2_4_1,
    "consumer_protocol": "generated",
    "subscribed_topics": "generated",
    "collections_checked": False,
}
_OFFSETS_TEXT_2_8: dict[str, Any] = {
    **_OFFSETS_TEXT_2_7,
    "reader": "generated",
    "unknown_key": (_ILLEGAL_STATE, "Unknown group metadata message version: {version}"),
    "unknown_offset_value": (_ILLEGAL_STATE, "Unknown offset message version: {version}"),
    "unknown_group_value": (_ILLEGAL_STATE, "Unknown group metadata message version: {version}"),
}
_OFFSETS_TEXT_3_4_1: dict[str, Any] = {
    **_OFFSETS_TEXT_2_8,
    "collections_checked": True,
    "unknown_key": (None, "unknown::version={version}"),
}
#: the kit runs 2.4+ from Scala 2.13 builds: a ``mutable.HashSet`` prints "HashSet(...)"
_TXN_TEXT_2_4: dict[str, Any] = {**_TXN_TEXT_2_0, "partitions": "HashSet", "null_partitions": None}
_TXN_TEXT_2_4_1: dict[str, Any] = {
    **_TXN_TEXT_2_4,
    "key_text": "transaction_metadata::transactionalId={transactional_id}",
    "null_value": "delete",
}
_TXN_TEXT_2_5: dict[str, Any] = {
    **_TXN_TEXT_2_4_1,
    "partitions": "list",
    "null_partitions": 'Cannot read the array length because "topicPartitionArray" is null',
}
_TXN_TEXT_2_8: dict[str, Any] = {
    **_TXN_TEXT_2_5,
    "reader": "generated",
    "null_partitions": _NULL_PARTITIONS.format(package="kafka.internals.generated"),
    "collections_checked": False,
    "unknown_key": (_ILLEGAL_STATE, "Unknown version {version} from the transaction log message"),
    "unknown_value": (
        _ILLEGAL_STATE,
        "Unknown version {version} from the transaction log message value",
    ),
}
_TXN_TEXT_3_0: dict[str, Any] = {
    **_TXN_TEXT_2_8,
    "unknown_state": "Unknown transaction state id {status} from the transaction status message",
}
_TXN_TEXT_3_4_1: dict[str, Any] = {
    **_TXN_TEXT_3_0,
    "collections_checked": True,
    "unknown_key": (None, "unknown::version={version}"),
}
_TXN_TEXT_3_9: dict[str, Any] = {
    **_TXN_TEXT_3_4_1,
    "null_partitions": _NULL_PARTITIONS.format(
        package="org.apache.kafka.coordinator.transaction.generated"
    ),
}


#: --share-group-state-decoder (JSON from its start): the RuntimeException's message for a
#: record without a key (``{offset}``), and the name of the value's version in the payload
_SHARE_STATE_4_0: dict[str, Any] = {
    "missing_key": (
        "Failed to decode message at offset {offset} using share group state topic decoder "
        "(message had a missing key)"
    ),
    "value_label": "type",
}
_SHARE_STATE_4_1: dict[str, Any] = {
    "missing_key": (
        "Failed to decode message at offset {offset} using the specified decoder "
        "(message had a missing key)"
    ),
    "value_label": "version",
}

#: --remote-log-metadata-decoder (3.9+, ``remote_log``): the payload of a value it cannot
#: read (``{offset}``, ``{message}``: the exception's ``getMessage()``), and the message of the
#: NullPointerException reading a null value
_REMOTE_LOG_3_9: dict[str, Any] = {
    "error": "Error at offset {offset}, skipping. {message}",
    "null_value": (
        'Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
        '"org.apache.kafka.common.record.Record.value()" is null'
    ),
    "segment_tail": "",
}
_REMOTE_LOG_4_0: dict[str, Any] = {
    **_REMOTE_LOG_3_9,
    "segment_tail": ", txnIdxEmpty={txn_index_empty}",
}
_REMOTE_LOG_4_3: dict[str, Any] = {
    **_REMOTE_LOG_4_0,
    "null_value": (
        'Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
        '"org.apache.kafka.common.record.internal.Record.value()" is null'
    ),
}


def _checked(since: str, commit: str, offsets: dict[str, Any], txn: dict[str, Any]) -> Any:
    """The row of a patch release with (or a line without) the backport of "MINOR: Add more
    validation during KRPC deserialization" (b401fda, 3.4): generated code checks a
    collection's size against the bytes left; the text printers read with generated code."""
    flag = bool(commit)
    what = "with" if flag else "without"
    return (
        since,
        f"commit {commit} (KRPC validation backport)" if flag else "the line before its backport",
        f"coordinator text decoders: generated readers {what} the collection size check",
        {
            "offsets_decoder_text": {**offsets, "collections_checked": flag},
            "transaction_log_decoder_text": {**txn, "collections_checked": flag},
        },
    )


#: the rows of ``formats.CHANGES`` these facts make: (since, Kafka change, what, facts)
ROWS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (
        "0.11.0",
        "KIP-98 (commit 4424534); KAFKA-4816 (commit 5bd06f1)",
        "--transaction-log-decoder: 'transactionalId=<id>' and the transaction's fields as "
        "text; --offsets-decoder: null user data fails reading its remaining()",
        {
            "transaction_log_decoder_text": _TXN_TEXT_0_11,
            "offsets_decoder_text": _OFFSETS_TEXT_0_11,
        },
    ),
    (
        "1.0",
        "KAFKA-4108 (commit 5663f51)",
        "--offsets-decoder prints group metadata keys and values as JSON",
        {
            "offsets_decoder_text": {
                **_OFFSETS_TEXT_0_11,
                "group_key": "json",
                "group_value": "json",
            }
        },
    ),
    (
        "2.0",
        "commit b07d67c (#5255)",
        "the coordinator decoders' unknown schema versions are org.apache.kafka.common."
        "KafkaException (was kafka.common.KafkaException)",
        {
            "offsets_decoder_text": _OFFSETS_TEXT_2_0,
            "transaction_log_decoder_text": _TXN_TEXT_2_0,
        },
    ),
    (
        "2.1",
        "KIP-211 (KAFKA-4682, commit 418a91b); KAFKA-7437 (commit 9f7267d)",
        "--offsets-decoder reads offset commit values v2 and v3 and group metadata v2",
        {"offsets_decoder_text": _OFFSETS_TEXT_2_1},
    ),
    (
        "2.3",
        "KIP-345 (KAFKA-7862, commit 0f995ba)",
        "--offsets-decoder reads group metadata v3 (static members)",
        {"offsets_decoder_text": _OFFSETS_TEXT_2_3},
    ),
    (
        "2.4",
        "commit 3750898 (#7006); KAFKA-8179 (commit 2ef02f1)",
        "--offsets-decoder: 'Unknown message key schema version', 'Unsupported assignment version'",
        {"offsets_decoder_text": _OFFSETS_TEXT_2_4},
    ),
    (
        "2.4",
        "KAFKA-8745 row: the kit runs 2.4+ from Scala 2.13 builds",
        "--transaction-log-decoder prints the partitions as a Scala 2.13 HashSet(...)",
        {"transaction_log_decoder_text": _TXN_TEXT_2_4},
    ),
    (
        "2.4.1",
        "KAFKA-9293 (commit 0e1c00f)",
        "--offsets-decoder prints 'offset_commit::group=G,partition=T-P' / "
        "'group_metadata::group=G' keys, '<DELETE>' for tombstones; --transaction-log-decoder "
        "prefixes 'transaction_metadata::' and prints '<DELETE>'",
        {
            "offsets_decoder_text": _OFFSETS_TEXT_2_4_1,
            "transaction_log_decoder_text": _TXN_TEXT_2_4_1,
        },
    ),
    (
        "2.5",
        "commit bd3bde7 (#7895)",
        "--transaction-log-decoder prints the partitions as [t-p,...]; a null partition list's "
        "NullPointerException names topicPartitionArray (the 2.5 build; none in 2.4)",
        {"transaction_log_decoder_text": _TXN_TEXT_2_5},
    ),
    (
        "2.7",
        "commit 466f8fd (#8897)",
        "--offsets-decoder reads consumer assignments with the ConsumerProtocolAssignment "
        "definition",
        {"offsets_decoder_text": _OFFSETS_TEXT_2_7},
    ),
    (
        "2.8",
        "KAFKA-10497 (commit 6bbf69f); KAFKA-10736 (commit 0a74c7d)",
        "coordinator records read with their generated classes (other error messages)",
        {"offsets_decoder_text": _OFFSETS_TEXT_2_8, "transaction_log_decoder_text": _TXN_TEXT_2_8},
    ),
    _checked("2.8.2", "14951a8", _OFFSETS_TEXT_2_8, _TXN_TEXT_2_8),
    (
        "3.0",
        "KAFKA-12369 (commit 3708a7c)",
        "--transaction-log-decoder: an unknown status is an 'Unknown transaction state id'",
        {
            "transaction_log_decoder_text": _TXN_TEXT_3_0,
            "offsets_decoder_text": _OFFSETS_TEXT_2_8,  # 3.0.0-3.0.1: no size check (below)
        },
    ),
    _checked("3.0.2", "aaceb6b", _OFFSETS_TEXT_2_8, _TXN_TEXT_3_0),
    _checked("3.1", "", _OFFSETS_TEXT_2_8, _TXN_TEXT_3_0),
    _checked("3.1.2", "c129566", _OFFSETS_TEXT_2_8, _TXN_TEXT_3_0),
    _checked("3.2", "", _OFFSETS_TEXT_2_8, _TXN_TEXT_3_0),
    _checked("3.2.2", "2bfa24b", _OFFSETS_TEXT_2_8, _TXN_TEXT_3_0),
    (
        "3.4.1",
        "KIP-915 (KAFKA-14869, commit 5115906)",
        "--offsets-decoder and --transaction-log-decoder print an unknown key version as "
        "'unknown::version=V' (no payload)",
        {
            "offsets_decoder_text": _OFFSETS_TEXT_3_4_1,
            "transaction_log_decoder_text": _TXN_TEXT_3_4_1,
        },
    ),
    (
        "3.9",
        "KAFKA-16666 (commit ee68f32)",
        "--transaction-log-decoder reads with the transaction coordinator's generated classes "
        "(their package in NullPointerException messages)",
        {"transaction_log_decoder_text": _TXN_TEXT_3_9},
    ),
    (
        "4.0",
        "KAFKA-17633 (#17467)",
        '--share-group-state-decoder: key {"type","data"}, value {"type":<version>,'
        '"data"} as JSON (ShareGroupStateMessageParser)',
        {"share_group_state_decoder": _SHARE_STATE_4_0},
    ),
    (
        "4.0",
        "the 4.0 CoordinatorRecordSerde (coordinator-common; checked with javap and the tool)",
        "the JSON coordinator decoders print 'Found an unknown record version V for T type' "
        "for a value version outside the definition's",
        {"coordinator_value_versions_checked": True},
    ),
    (
        "4.1",
        "the 4.1 CoordinatorRecordMessageParser (row above)",
        "--share-group-state-decoder prints as the other coordinator decoders: value "
        '{"version","data"}, the common missing-key message',
        {"share_group_state_decoder": _SHARE_STATE_4_1},
    ),
    (
        "3.9",
        "KAFKA-16228 (#16134)",
        "--remote-log-metadata-decoder: each value as the toString() of its RemoteLogMetadata",
        {"remote_log_metadata_decoder": _REMOTE_LOG_3_9},
    ),
    (
        "4.0",
        "KIP-1058 (the TxnIndexEmpty field; checked with the 4.0.0 jars and tool)",
        "--remote-log-metadata-decoder: segment metadata and snapshots end with txnIdxEmpty",
        {"remote_log_metadata_decoder": _REMOTE_LOG_4_0},
    ),
    (
        "4.3",
        "the record classes moved to org.apache.kafka.common.record.internal (4.2.0 and "
        "4.3.1 jars compared)",
        "--remote-log-metadata-decoder: a null value's NullPointerException names "
        "record.internal.Record",
        {"remote_log_metadata_decoder": _REMOTE_LOG_4_3},
    ),
)
