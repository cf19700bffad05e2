"""Idempotent and transactional producers on one partition: ``ProducerStateManager``,
``ProducerStateEntry`` and ``ProducerAppendInfo`` (client appends).

Per producer id the partition remembers the epoch, the current transaction's first offset
and the last ``NUM_BATCHES_TO_RETAIN`` (5) batches (their sequence range, last offset and
timestamp). For each stored batch with a producer id, in this order:

==============================  ==========================================================
check                           broker answer
==============================  ==========================================================
same epoch and the exact        a *duplicate*: NONE with the original batch's offsets,
sequence range of a retained    nothing stored
batch
epoch below the last seen       INVALID_PRODUCER_EPOCH "Epoch of producer P at offset O in
                                TP is E, which is smaller than the last seen epoch L"
a new epoch not starting at 0   OUT_OF_ORDER_SEQUENCE_NUMBER "Invalid sequence number for
(once an epoch was seen)        new epoch of producer P..."
same epoch, first sequence not  OUT_OF_ORDER_SEQUENCE_NUMBER "Out of order sequence number
last + 1 (or 0 after            for producer P at offset O in partition TP: S (incoming seq.
Integer.MAX_VALUE)              number), L (current end sequence number)"
a non-transactional batch       INVALID_TXN_STATE "Expected transactional write from
while a transaction is open     producer P at offset (offset=O, segment=[-1:-1]) ..."
==============================  ==========================================================

A producer whose epoch was never seen may start at any sequence. A transactional batch
opens a transaction; the coordinator's marker closes it (:meth:`ProducerStates.end_transaction`,
``ProducerAppendInfo.appendEndTxnMarker`` on the happy path: the coordinator itself is not
modelled).

**Verification state (KIP-890, 3.6+).** Before a transactional batch is appended, the broker
starts a verification for its producer unless a transaction of the producer is ongoing
(4.x: for the batch's epoch; 4.x also refuses an epoch below the producer's:
INVALID_PRODUCER_EPOCH "Epoch of producer P is E, which is smaller than the last seen epoch
L"): ``ProducerStateManager.maybeCreateVerificationStateEntry`` keeps per producer the lowest
sequence and the epoch it was started with (a lower sequence of the same epoch, or a higher
epoch, replaces them; 4.x: whether it was a transactions V2 request). The entry stays until a
transactional batch of the producer is appended (``UnifiedLog.updateProducers``), whether the
coordinator's answer was NONE or an error, or the append failed. While it stays, every batch of
the producer (idempotent ones too) is checked against it first (``checkSequence``):

=====================================  ==================================================
check                                  broker answer
=====================================  ==================================================
(before the checks above, 3.9.2/4.x)  INVALID_PRODUCER_EPOCH "Epoch of producer P is E,
a transactional batch without an       which is smaller than the last seen epoch L"
ongoing transaction, epoch below the
producer's
... and not verified in this request   INVALID_TXN_STATE "Record was not part of an ongoing
(``batchMissingRequiredVerification``) transaction"
4.x, a V2 entry, the producer has no   OUT_OF_ORDER_SEQUENCE_NUMBER "Invalid sequence
batches, first sequence not 0          number for producer P ... Expected sequence 0 ..."
first sequence above the entry's       OUT_OF_ORDER_SEQUENCE_NUMBER "Out of order sequence
lowest                                 number ...: S (incoming seq. number), L (earliest
                                       seen sequence)"
=====================================  ==================================================
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from conformance.broker.versions import BrokerVersion, Messages
from conformance.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
)
from conformance.primitives.java import wrap32
from conformance.wire.batch import RecordBatchV2

__all__ = ["NUM_BATCHES_TO_RETAIN", "Duplicate", "ProducerStates", "VerificationState"]

NUM_BATCHES_TO_RETAIN = 5
_INT_MAX = 0x7FFFFFFF


def _decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return wrap32(_INT_MAX - (decrement - sequence) + 1)
    return sequence - decrement


@dataclass(frozen=True)
class _BatchMetadata:
    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(frozen=True)
class Duplicate:
    """A retried batch the partition already holds: the offsets and timestamp it got."""

    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class _Entry:
    """``ProducerStateEntry``."""

    epoch: int = -1
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    txn_first_offset: int | None = None
    batches: deque[_BatchMetadata] = field(default_factory=deque)

    def copy_without_batches(self) -> _Entry:
        return _Entry(
            self.epoch, self.coordinator_epoch, self.last_timestamp, self.txn_first_offset
        )

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def update_epoch(self, epoch: int) -> None:
        if self.epoch != epoch:
            self.batches.clear()
            self.epoch = epoch

    def add(self, batch: _BatchMetadata) -> None:
        if len(self.batches) == NUM_BATCHES_TO_RETAIN:
            self.batches.popleft()
        self.batches.append(batch)


@dataclass
class VerificationState:
    """``VerificationStateEntry``: a verification started for a producer, not yet followed by
    an append of its transactional batch."""

    lowest_sequence: int
    epoch: int
    #: 4.x: started by a transactions V2 request (``supportsEpochBump``)
    epoch_bump: bool = False

    def update(self, sequence: int, epoch: int) -> None:
        """``maybeUpdateLowestSequenceAndEpoch``."""
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:
            self.epoch = epoch
            self.lowest_sequence = sequence


class ProducerStates:
    """The producer state of one partition (``ProducerStateManager``), fed batch by batch."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}
        #: ``verificationStates``: producer id -> its verification state
        self.verifications: dict[int, VerificationState] = {}

    def start_verification(
        self,
        pid: int,
        sequence: int,
        epoch: int,
        *,
        epoch_bump: bool,
        checks_epoch: bool,
        messages: Messages,
    ) -> bool:
        """``UnifiedLog.maybeStartTransactionVerification``: False when the producer's
        transaction is ongoing (nothing to verify), else the verification state is created or
        updated and True (the coordinator is asked); ``checks_epoch`` (4.x): an epoch below the
        producer's raises, and a transaction is ongoing only for its own epoch."""
        if checks_epoch:
            self._check_epoch(pid, epoch, messages)
        if self._ongoing(pid, epoch, checks_epoch):
            return False
        state = self.verifications.get(pid)
        if state is None:
            state = self.verifications[pid] = VerificationState(sequence, epoch, epoch_bump)
        state.update(sequence, epoch)
        return True

    def find_duplicate(self, b: RecordBatchV2) -> Duplicate | None:
        """``lastEntry(pid).findDuplicateBatch(batch)``."""
        entry = self._entries.get(b.producer_id)
        if entry is None or b.producer_epoch != entry.epoch:
            return None
        for m in entry.batches:
            if m.first_seq == b.base_sequence and m.last_seq == b.last_sequence:
                return Duplicate(m.first_offset, m.last_offset, m.timestamp)
        return None

    def _ongoing(self, pid: int, epoch: int, checks_epoch: bool) -> bool:
        """``UnifiedLog.hasOngoingTransaction`` (4.x: for ``epoch``)."""
        entry = self._entries.get(pid)
        return (
            entry is not None
            and entry.txn_first_offset is not None
            and (not checks_epoch or entry.epoch == epoch)
        )

    def _check_epoch(self, pid: int, epoch: int, messages: Messages) -> None:
        """A transactional batch whose epoch is below the producer's (3.9.2/4.x, before the
        verification guard is checked)."""
        entry = self._entries.get(pid)
        if entry is not None and epoch < entry.epoch:
            raise InvalidProducerEpochError(
                messages.verification_epoch.format(pid=pid, epoch=epoch, last=entry.epoch)
            )

    def prepare(
        self,
        batches: list[RecordBatchV2],
        tp: str,
        v: BrokerVersion,
        verified: int | None = None,
    ) -> dict[int, _Entry]:
        """``analyzeAndValidateProducerState`` and ``updateProducers`` for the stored
        ``batches`` (offsets assigned): the updated entries, or the exception the broker
        raises. ``verified``: the producer whose verification this request started and the
        coordinator confirmed (its ``VerificationGuard``)."""
        messages = v.messages
        updated: dict[int, tuple[_Entry, _Entry]] = {}
        #: the verification state each producer's ``ProducerAppendInfo`` was made with
        verifying: dict[int, VerificationState | None] = {}
        for b in batches:
            if b.producer_id <= -1:
                continue
            pid = b.producer_id
            if pid not in updated:
                current = self._entries.get(pid) or _Entry()
                updated[pid] = (current, current.copy_without_batches())
                verifying[pid] = self.verifications.get(pid)
            current, entry = updated[pid]
            first_offset = b.base_offset
            if (
                v.transaction_verification
                and b.is_transactional
                and not self._ongoing(pid, b.producer_epoch, v.verification_checks_epoch)
            ):
                self._check_epoch(pid, b.producer_epoch, messages)
                guarded = verified == pid and pid in self.verifications
                if not b.is_control and not guarded:  # batchMissingRequiredVerification
                    raise InvalidTxnStateError("Record was not part of an ongoing transaction")
            # checkProducerEpoch
            if b.producer_epoch < entry.epoch:
                raise InvalidProducerEpochError(
                    messages.old_epoch.format(
                        pid=pid,
                        offset=first_offset,
                        tp=tp,
                        epoch=b.producer_epoch,
                        last=entry.epoch,
                    )
                )
            self._check_sequence(verifying[pid], current, entry, b, pid, first_offset, tp, messages)
            last_offset = b.last_offset
            entry.update_epoch(b.producer_epoch)
            entry.add(
                _BatchMetadata(
                    b.last_sequence,
                    last_offset,
                    wrap32(last_offset - first_offset),
                    b.max_timestamp,
                )
            )
            entry.last_timestamp = b.max_timestamp
            if entry.txn_first_offset is not None and not b.is_transactional:
                # a non-transactional batch's LogOffsetMetadata has no segment position
                metadata = messages.offset_metadata.format(offset=first_offset)
                raise InvalidTxnStateError(
                    f"Expected transactional write from producer {pid} at offset {metadata} in "
                    f"partition {tp}"
                )
            if entry.txn_first_offset is None and b.is_transactional:
                entry.txn_first_offset = first_offset
            if b.is_transactional:  # the transaction has a first offset: verification done
                self.verifications.pop(pid, None)
        return {pid: entry for pid, (_, entry) in updated.items()}

    @staticmethod
    def _check_sequence(
        state: VerificationState | None,
        current: _Entry,
        entry: _Entry,
        b: RecordBatchV2,
        pid: int,
        offset: int,
        tp: str,
        messages: Messages,
    ) -> None:
        """``checkSequence``: first against a verification state left for the producer."""
        first = b.base_sequence
        if state is not None:
            if state.epoch_bump and first != 0 and not current.batches:
                raise OutOfOrderSequenceError(
                    messages.tv2_first_sequence.format(
                        pid=pid, offset=offset, tp=tp, sequence=first
                    )
                )
            if first > state.lowest_sequence:
                raise OutOfOrderSequenceError(
                    messages.earliest_sequence.format(
                        pid=pid, offset=offset, tp=tp, sequence=first, lowest=state.lowest_sequence
                    )
                )
        epoch = b.producer_epoch
        if epoch != entry.epoch:
            if first != 0 and entry.epoch != -1:
                raise OutOfOrderSequenceError(
                    messages.new_epoch_sequence.format(
                        pid=pid, offset=offset, tp=tp, epoch=epoch, sequence=first, last=entry.epoch
                    )
                )
            return
        if entry.batches:
            last = entry.last_seq
        elif epoch == current.epoch:
            last = current.last_seq
        else:
            last = -1
        in_sequence = first == last + 1 or (first == 0 and last == _INT_MAX)
        if not (current.epoch == -1 or in_sequence):
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for producer {pid} at offset {offset} in "
                f"partition {tp}: {first} (incoming seq. number), {last} (current end "
                "sequence number)"
            )

    def end_transaction(
        self, pid: int, epoch: int, coordinator_epoch: int, timestamp: int
    ) -> int | None:
        """A COMMIT or ABORT marker of ``pid`` appended (``appendEndTxnMarker``): the
        transaction's first offset (None: none was open), which is no longer open."""
        entry = self._entries.setdefault(pid, _Entry())
        entry.update_epoch(epoch)
        first, entry.txn_first_offset = entry.txn_first_offset, None
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        return first

    def commit(self, updated: dict[int, _Entry]) -> None:
        """``producerStateManager.update``: the appended batches' state becomes current."""
        for pid, entry in updated.items():
            current = self._entries.get(pid)
            if current is None:
                self._entries[pid] = entry
                continue
            current.update_epoch(entry.epoch)
            for m in entry.batches:
                current.add(m)
            current.coordinator_epoch = entry.coordinator_epoch
            current.txn_first_offset = entry.txn_first_offset
            current.last_timestamp = entry.last_timestamp
