"""``--remote-log-metadata-decoder`` (Kafka 3.9+, KAFKA-16228, ``RemoteMetadataLogMessageParser``):
each record value of ``__remote_log_metadata`` read by ``RemoteLogMetadataSerde`` and printed
as the ``toString()`` of the ``RemoteLogMetadata`` it makes; the key is never printed.

The value is a frame as the cluster metadata decoder's (``BytesApiMessageSerde`` over
``AbstractApiMessageSerde.read``: frame version, apiKey, version, message; ``decoders``) of
the ``metadata`` definitions in ``kafka-storage``'s ``message/`` (read from the release's jars),
then turned into objects whose constructors check what they are given:

=====  ======================================  =============================================
apiKey record                                   printed as
=====  ======================================  =============================================
0      RemoteLogSegmentMetadataRecord           ``RemoteLogSegmentMetadata{...}`` (start and end
                                                offsets, leader epochs checked; the state of an
                                                update made of the same record)
1      RemoteLogSegmentMetadataUpdateRecord     ``RemoteLogSegmentMetadataUpdate{...}``
2      RemotePartitionDeleteMetadataRecord      ``RemotePartitionDeleteMetadata{...}``
3      RemoteLogSegmentMetadataSnapshotRecord   ``RemoteLogSegmentMetadataSnapshot{...}``
=====  ======================================  =============================================

Any exception (a null value's too) prints ``Error at offset <o>, skipping. <getMessage()>``
(the texts: :attr:`DumpFormat.remote_log_metadata_decoder
<conformance.logdir.dump.formats.DumpFormat>`).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from conformance.errors import DecodeError, IllegalArgumentError, NullPointerError
from conformance.logdir.dump.decoders import ClusterMetadataParser
from conformance.logdir.dump.javaemu import jbool
from conformance.messages import Schemas

__all__ = ["RemoteLogMetadataParser", "java_uuid"]

#: where the storage module's record definitions are in its jar
_STORAGE_ENTRY = "!message/"
SEGMENT_STATES = {
    0: "COPY_SEGMENT_STARTED",
    1: "COPY_SEGMENT_FINISHED",
    2: "DELETE_SEGMENT_STARTED",
    3: "DELETE_SEGMENT_FINISHED",
}
PARTITION_STATES = {
    0: "DELETE_PARTITION_MARKED",
    1: "DELETE_PARTITION_STARTED",
    2: "DELETE_PARTITION_FINISHED",
}


def java_uuid(u: uuid.UUID) -> str:
    """``org.apache.kafka.common.Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode("ascii")


def _topic_id_partition(tip: Any) -> str:
    """``TopicIdPartition.toString()``."""
    return f"{java_uuid(tip['Id'])}:{tip['Name']}-{tip['Partition']}"


def _custom(raw: bytes | None) -> str:
    """``Optional<CustomMetadata>.toString()``."""
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _epochs(entries: list[Any]) -> str:
    """The leader epochs as a ``TreeMap<Integer, Long>`` (a ``HashMap`` first: the last entry of
    an epoch wins); empty: ``IllegalArgumentException``."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["LeaderEpoch"]] = e["Offset"]
    if not epochs:
        raise IllegalArgumentError("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _state(states: Mapping[int, str], raw: int, message: str | None) -> str:
    """``State.forId`` (null for another id) under ``Objects.requireNonNull(state, message)``."""
    state = states.get(raw)
    if state is None:
        raise NullPointerError(message)
    return state


class RemoteLogMetadataParser:
    """``RemoteMetadataLogMessageParser`` over one release's storage definitions."""

    def __init__(self, schemas: Schemas, facts: Mapping[str, Any]) -> None:
        self.frames = ClusterMetadataParser(schemas, facts["error"], _STORAGE_ENTRY)
        self.error_text: str = facts["error"]
        self.null_value: str | None = facts["null_value"]
        #: what segment metadata and snapshots print after their state
        self.segment_tail: str = facts["segment_tail"]

    def _segment(self, r: Any) -> str:
        start, end = r["StartOffset"], r["EndOffset"]
        segment_id = r["RemoteLogSegmentId"]
        shown_id = (
            f"RemoteLogSegmentId{{topicIdPartition="
            f"{_topic_id_partition(segment_id['TopicIdPartition'])}, "
            f"id={java_uuid(segment_id['Id'])}}}"
        )
        if start < 0:
            raise IllegalArgumentError(
                f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be "
                "negative"
            )
        if end < start:
            raise IllegalArgumentError(
                f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less "
                f"than startOffset = {start}"
            )
        epochs = _epochs(r["SegmentLeaderEpochs"])
        state = _state(SEGMENT_STATES, r["RemoteLogSegmentState"], "state can not be null")
        return (
            f"RemoteLogSegmentMetadata{{remoteLogSegmentId={shown_id}, startOffset={start}, "
            f"endOffset={end}, brokerId={r['BrokerId']}, maxTimestampMs={r['MaxTimestampMs']}, "
            f"eventTimestampMs={r['EventTimestampMs']}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={r['SegmentSizeInBytes']}, "
            f"customMetadata={_custom(r['CustomMetadata'])}, state={state}{self._tail(r)}}}"
        )

    def _tail(self, r: Any) -> str:
        if not self.segment_tail:
            return ""
        return self.segment_tail.format(txn_index_empty=jbool(r["TxnIndexEmpty"]))

    def _update(self, r: Any) -> str:
        segment_id = r["RemoteLogSegmentId"]
        state = _state(SEGMENT_STATES, r["RemoteLogSegmentState"], "state can not be null")
        return (
            "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=RemoteLogSegmentId{"
            f"topicIdPartition={_topic_id_partition(segment_id['TopicIdPartition'])}, "
            f"id={java_uuid(segment_id['Id'])}}}, "
            f"customMetadata={_custom(r['CustomMetadata'])}, state={state}, "
            f"eventTimestampMs={r['EventTimestampMs']}, brokerId={r['BrokerId']}}}"
        )

    def _delete(self, r: Any) -> str:
        state = _state(PARTITION_STATES, r["RemotePartitionDeleteState"], None)
        return (
            f"RemotePartitionDeleteMetadata{{topicPartition="
            f"{_topic_id_partition(r['TopicIdPartition'])}, state={state}, "
            f"eventTimestampMs={r['EventTimestampMs']}, brokerId={r['BrokerId']}}}"
        )

    def _snapshot(self, r: Any) -> str:
        state = _state(SEGMENT_STATES, r["RemoteLogSegmentState"], "state can not be null")
        epochs = _epochs(r["SegmentLeaderEpochs"])
        return (
            f"RemoteLogSegmentMetadataSnapshot{{segmentId={java_uuid(r['SegmentId'])}, "
            f"startOffset={r['StartOffset']}, endOffset={r['EndOffset']}, "
            f"maxTimestampMs={r['MaxTimestampMs']}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={r['SegmentSizeInBytes']}, "
            f"customMetadata={_custom(r['CustomMetadata'])}, state={state}{self._tail(r)}}}"
        )

    def text(self, value: bytes | None) -> str:
        """``RemoteLogMetadataSerde.deserialize(value).toString()`` (raises what it throws)."""
        if value is None:  # record.value.remaining
            raise NullPointerError(self.null_value)
        schema, _, message = self.frames.read_frame(value)
        return {
            "RemoteLogSegmentMetadataRecord": self._segment,
            "RemoteLogSegmentMetadataUpdateRecord": self._update,
            "RemotePartitionDeleteMetadataRecord": self._delete,
            "RemoteLogSegmentMetadataSnapshotRecord": self._snapshot,
        }[schema.name](message)

    def read_record(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> tuple[str | None, str | None]:
        """The payload of the record at ``offset`` (the tool catches every ``Throwable``)."""
        try:
            return None, self.text(value)
        except DecodeError as e:
            text = "null" if e.message is None else e.message
            return None, self.error_text.format(offset=offset, message=text)
