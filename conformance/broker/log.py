"""One partition on the leader: a client's records appended as Kafka appends them.

:meth:`PartitionLog.produce` runs, in Kafka's order, for the records of one partition of a
Produce request:

1. the request-level checks of ``KafkaApis``/``ProduceRequest.validateRecords``
   (``request.py``);
1b. (3.6+, KIP-890) a transactional batch's verification: the producer's verification state
   (``producers.py``), then the transaction coordinator's answer (``coordinator``: NONE, the
   partition is in the transaction; an error fails the partition before the append);
2. ``UnifiedLog.analyzeAndValidateRecords``: per batch a base offset of 0 (v2), the size
   against ``max.message.bytes``, the CRC, the codec; then the bytes after the last complete
   batch are dropped (``trimInvalidBytes``);
3. ``LogValidator`` (``validator.py``): checks, offsets from the log end, the rewrites;
4. a rebuilt batch checked against ``max.message.bytes`` again, the append against
   ``segment.bytes``;
5. the producer state (``producers.py``): a duplicate gets the original offsets;
6. the append: the log end offset and the producer state move on.

and answers as ``ReplicaManager.appendToLocalLog`` maps exceptions to the partition's
response (``response.py`` has the map). The log is one segment starting at offset 0 (or at
``log_start_offset``); its state persists between calls, so a sequence of produces is judged
like a broker judges a sequence of requests.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance import codecs
from conformance.broker.codes import COORDINATOR_ERRORS, NONE, error_for, unknown_coordinator
from conformance.broker.config import TopicConfig
from conformance.broker.producers import ProducerStates
from conformance.broker.request import (
    check_request,
    coordinator_answer,
    partition_batches,
    verification_failure,
    verification_target,
)
from conformance.broker.response import failure
from conformance.broker.validator import stamp_log_append_time, validate
from conformance.broker.verdict import PartitionResponse, ProduceVerdict
from conformance.broker.versions import BrokerVersion, broker_version
from conformance.errors import (
    CorruptRecordError,
    DecodeError,
    IndexOutOfBoundsError,
    InvalidRecordError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from conformance.stream.decoder import DEFAULT_MAX_RECORDS
from conformance.stream.splitter import Batch, Source, Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.builder import end_txn_marker_batch
from conformance.wire.layout import (
    CRC_OFFSET,
    LAST_OFFSET_DELTA_OFFSET,
    MAGIC_VALUE_V2,
    TimestampType,
)

__all__ = ["DEFAULT_TRANSACTIONAL_ID", "PartitionLog"]

#: the transactional id of a request unless told otherwise (a correct transactional client's)
DEFAULT_TRANSACTIONAL_ID = "kafka-conformance"


class PartitionLog:
    """A leader partition of one topic (``topic``: its configuration, Kafka's names) on a
    broker of ``version``; :meth:`produce` appends."""

    def __init__(
        self,
        topic: TopicConfig | Mapping[str, str] | None = None,
        *,
        version: str | BrokerVersion | None = None,
        topic_name: str = "t",
        partition: int = 0,
        log_start_offset: int = 0,
        inter_broker_protocol_version: str | None = None,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
        max_records: int | None = DEFAULT_MAX_RECORDS,
    ) -> None:
        self.version = broker_version(version)
        #: kit resource limits (docs/memory.md): decompressed bytes per batch, and records
        #: kept per batch for a rebuild (Kafka keeps them all; the kit stops with a
        #: RecordLimitError, reported as a KafkaException)
        self.decompressed_limit = decompressed_limit
        self.max_records = max_records
        self.topic = (
            topic
            if isinstance(topic, TopicConfig)
            else TopicConfig.from_properties(
                topic, self.version, inter_broker_protocol_version=inter_broker_protocol_version
            )
        )
        self.tp = f"{topic_name}-{partition}"
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_start_offset
        self.size = 0
        self.producers = ProducerStates()

    def produce(
        self,
        data: bytes | Source,
        *,
        produce_version: int,
        now: int,
        leader_epoch: int = 0,
        transactional_id: str | None = DEFAULT_TRANSACTIONAL_ID,
        coordinator: str = NONE,
    ) -> ProduceVerdict:
        """The broker's answer to ``data`` (one partition's ``records`` of a Produce request
        of ``produce_version``) at the broker's clock ``now`` (ms), as leader in
        ``leader_epoch``; the log changes only when it is accepted. ``transactional_id`` is
        the request's (a transactional batch without one is refused). ``coordinator`` is
        what the transaction coordinator answers when a 3.6+ broker asks it whether a
        transactional batch's partition is in the producer's transaction (a Kafka ``Errors``
        name of ``codes.COORDINATOR_ERRORS``; NONE: it is; 2.x asks no one); ValueError for
        another name."""
        if coordinator not in COORDINATOR_ERRORS:
            raise ValueError(unknown_coordinator(coordinator))
        v = self.version

        def verdict(
            response: PartitionResponse,
            exception: DecodeError | None = None,
            stored: bytes | None = None,
            scope: str = "partition",
            duplicate: bool = False,
            rebuilt: str | None = None,
            rewrites: tuple[tuple[str, str, str], ...] = (),
        ) -> ProduceVerdict:
            return ProduceVerdict(
                v.version,
                produce_version,
                response,
                exception,
                stored,
                scope,
                duplicate,
                rebuilt,
                rewrites,
            )

        refused = check_request(data, produce_version, v, transactional_id)
        if refused is not None:
            response, exception, scope = refused
            return verdict(response, exception, scope=scope)
        verified = None
        target = verification_target(
            data, produce_version, v, transactional_id if produce_version >= 3 else None
        )
        if target is not None:
            pid, sequence, epoch = target
            try:
                asked = self.producers.start_verification(
                    pid,
                    sequence,
                    epoch,
                    epoch_bump=v.epoch_bump(produce_version),
                    checks_epoch=v.verification_checks_epoch,
                    messages=v.messages,
                )
            except DecodeError as e:
                return verdict(*verification_failure(error_for(e), produce_version, v, e))
            if asked and coordinator != NONE:
                error = coordinator_answer(coordinator, produce_version, v)
                return verdict(*verification_failure(error, produce_version, v))
            verified = pid if asked else None
        try:
            batches = self._analyze(data)
            if not batches:  # nothing valid: a no-op append
                return verdict(PartitionResponse(log_start_offset=self.log_start_offset))
            source = codecs.NONE
            for b in batches:
                if b.compression_id != codecs.NONE:
                    source = b.compression_id
            validated = validate(
                batches,
                source_codec=source,
                first_offset=self.log_end_offset,
                topic=self.topic,
                version=v,
                now=now,
                leader_epoch=leader_epoch,
                tp=self.tp,
                decompressed_limit=self.decompressed_limit,
                max_records=self.max_records,
            )
            stored_batches = list(Splitter(validated.stored, "memory"))
            if validated.size_may_change:
                for b in stored_batches:
                    if b.size_in_bytes > self.topic.max_message_bytes:
                        raise RecordTooLargeError(
                            f"Message batch size is {b.size_in_bytes} bytes in append to"
                            f"partition {self.tp} which exceeds the maximum configured size "
                            f"of {self.topic.max_message_bytes}."
                        )
            if len(validated.stored) > self.topic.segment_bytes:
                raise RecordBatchTooLargeError(
                    f"Message batch size is {len(validated.stored)} bytes in append to partition "
                    f"{self.tp}, which exceeds the maximum configured segment size of "
                    f"{self.topic.segment_bytes}."
                )
            v2 = [b for b in stored_batches if isinstance(b, RecordBatchV2)]
            for b in v2:
                if b.producer_id > -1:
                    dup = self.producers.find_duplicate(b)
                    if dup is not None:
                        return verdict(
                            PartitionResponse(
                                NONE,
                                None,
                                dup.first_offset,
                                dup.timestamp,
                                self.log_start_offset,
                            ),
                            duplicate=True,
                        )
            updated = self.producers.prepare(v2, self.tp, v, verified)
        except DecodeError as e:
            response, exception = failure(e, self.log_start_offset)
            return verdict(response, exception)
        first = self.log_end_offset
        self.log_end_offset = stored_batches[-1].last_offset + 1
        self.size += len(validated.stored)
        self.producers.commit(updated)
        lat = self.topic.timestamp_type == TimestampType.LOG_APPEND_TIME
        rebuilt, rewrites = describe_rewrites(batches, stored_batches, validated.size_may_change)
        return verdict(
            PartitionResponse(
                NONE, None, first, validated.log_append_time if lat else -1, self.log_start_offset
            ),
            stored=validated.stored,
            rebuilt=rebuilt,
            rewrites=rewrites,
        )

    def append_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        *,
        commit: bool,
        coordinator_epoch: int,
        timestamp: int,
        now: int,
        leader_epoch: int = 0,
    ) -> bytes:
        """The COMMIT or ABORT marker the transaction coordinator has the leader append
        (``appendAsLeader`` with origin COORDINATOR, WriteTxnMarkers): a transactional
        control batch of one record at the log end, timestamped ``timestamp`` (the
        coordinator's clock when it wrote it), on a LogAppendTime topic its max timestamp the
        leader's clock ``now``; the producer's transaction closed; the stored bytes. The
        coordinator's checks (epoch fencing) are not modelled: the marker is appended as a
        coordinator that is right writes it."""
        marker = end_txn_marker_batch(
            offset=self.log_end_offset,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            commit=commit,
            coordinator_epoch=coordinator_epoch,
            timestamp=timestamp,
            partition_leader_epoch=leader_epoch,
        )
        marker = stamp_log_append_time(marker, topic=self.topic, version=self.version, now=now)
        self.producers.end_transaction(producer_id, producer_epoch, coordinator_epoch, now)
        self.log_end_offset += 1
        self.size += len(marker)
        return marker

    def _analyze(self, data: bytes | Source) -> list[Batch]:
        """``analyzeAndValidateRecords`` and ``trimInvalidBytes``: the complete batches."""
        out = []
        for b in partition_batches(data):
            if b.magic >= MAGIC_VALUE_V2 and b.base_offset != 0:  # v2, client origin
                raise InvalidRecordError(
                    f"The baseOffset of the record batch in the append to {self.tp} should be "
                    f"0, but it is {b.base_offset}"
                )
            if b.magic >= MAGIC_VALUE_V2 and len(b.raw) < LAST_OFFSET_DELTA_OFFSET + 4:
                raise IndexOutOfBoundsError(None)  # every batch's lastOffset() is read
            if b.size_in_bytes > self.topic.max_message_bytes:
                raise RecordTooLargeError(
                    self.version.messages.too_large.format(
                        tp=self.tp, size=b.size_in_bytes, max=self.topic.max_message_bytes
                    )
                )
            if not _is_valid(b):
                crc = int.from_bytes(b.raw[CRC_OFFSET : CRC_OFFSET + 4]) if b.magic >= 2 else b.crc
                raise CorruptRecordError(
                    f"Record is corrupt (stored crc = {crc}) in topic partition {self.tp}."
                )
            codecs.codec(b.compression_id)  # CompressionType.forId: IAE for ids 5-7
            out.append(b)
        return out


def _is_valid(b: Batch) -> bool:
    if isinstance(b, RecordBatchV2):
        return b.is_valid()
    try:
        b.message.ensure_valid()
    except DecodeError:
        return False
    return True


_FIELDS = (
    ("baseOffset", "base_offset"),
    ("partitionLeaderEpoch", "partition_leader_epoch"),
    ("maxTimestamp", "max_timestamp"),
    ("timestampType", "timestamp_type"),
    ("attributes", "attributes_raw"),
    ("crc", "crc"),
)


def describe_rewrites(
    sent: list[Batch], stored: list[Batch], rebuilt: bool
) -> tuple[str | None, tuple[tuple[str, str, str], ...]]:
    """Why the stored batch was rebuilt, or the header fields an in-place append changed."""
    if rebuilt:
        a, b = sent[0], stored[0]
        reasons = []
        if a.magic != b.magic:
            reasons.append(f"converted from magic {a.magic} to {b.magic}")
        if a.compression_id != b.compression_id:
            reasons.append(
                f"recompressed {codecs.codec_name(a.compression_id)} -> "
                f"{codecs.codec_name(b.compression_id)}"
            )
        return "; ".join(reasons) or "rebuilt with offsets 0, 1, 2, ...", ()
    out = []
    for before, after in zip(sent, stored):
        for name, attr in _FIELDS:
            x, y = getattr(before, attr, None), getattr(after, attr, None)
            if attr == "base_offset" and not isinstance(before, RecordBatchV2):
                x, y = before.offset, after.offset  # type: ignore[union-attr]
                name = "offset"
            if x != y:
                out.append((name, str(x), str(y)))
    return None, tuple(out)
