"""Crafted produce cases: Produce requests for every rule of the broker's verdict.

Each case is one or more partition payloads (the ``records`` of one partition in a Produce
request) produced in order to one fresh partition of a topic with the case's configuration,
at a fixed broker clock. Expectations are **never** written here: ``scripts/make-produce-corpus``
runs the broker oracle (Kafka's own ``UnifiedLog``/``LogValidator`` of each supported broker
version, ``conformance.jvm.broker_oracle``) on these bytes and stores its answers next to them
(``corpora/produce/<name>/``: ``request-<i>.bin``, ``case.json``, ``expected.json``).

Built with the real writers and their fault knobs (``corpus.crafted._build``), like the
consumer's crafted corpus. Names: ``req-`` request-level checks, ``log-`` the log's checks
(base offset, size, CRC), ``batch-`` ``validateBatch``, ``rec-`` record checks, ``parse-``
records the validator's iterators cannot read, ``rewrite-`` what the broker changes in an
accepted batch, ``pid-`` idempotent and transactional producers, ``legacy-`` magic 0/1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.broker.versions import VERSIONS
from conformance.codecs import GZIP, LZ4, SNAPPY, ZSTD
from conformance.codecs.lz4 import Block, write_frame
from conformance.corpus.crafted._build import (
    TS,
    legacy_message,
    legacy_wrapper,
    patch,
    simple_batch,
    simple_records,
    v1_inner,
    v2_batch,
    v2_record,
)
from conformance.wire.layout import (
    CONTROL_FLAG_MASK,
    MAGIC_VALUE_V0,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = ["NOW", "ProduceCase", "cases"]

#: the broker's clock for every case: a minute after the crafted records' timestamps
NOW = TS + 60_000
ALL = tuple(VERSIONS)
LEGACY = tuple(v for v in VERSIONS if VERSIONS[v].legacy_formats)
BEFORE_AFTER = tuple(v for v in VERSIONS if VERSIONS[v].timestamp_bounds == "before-after")
#: the versions whose transactions V2 start at Produce v12 (KIP-890 part 2)
TV2 = tuple(v for v in VERSIONS if VERSIONS[v].transactions_v2_from == 12)
#: the versions that verify transactional batches with the coordinator (KIP-890)
VERIFYING = tuple(v for v in VERSIONS if VERSIONS[v].transaction_verification)
#: the versions that speak Produce v11
V11 = tuple(v for v in VERSIONS if VERSIONS[v].produce_versions[1] >= 11)


@dataclass(frozen=True)
class ProduceCase:
    name: str
    description: str
    #: the partition payloads, produced in this order to one partition
    requests: tuple[bytes, ...]
    topic: dict[str, str] = field(default_factory=dict)
    produce_version: int = 9
    now: int = NOW
    leader_epoch: int = 5
    versions: tuple[str, ...] = ALL
    inter_broker_protocol_version: str | None = None
    #: the transaction coordinator's answer to a 3.6+ broker's verification of a
    #: transactional batch (KIP-890; a Kafka ``Errors`` name, NONE: verified), every request
    coordinator: str = "NONE"


def _idem(seq: int, n: int = 2, *, epoch: int = 0, pid: int = 1000, **kw: object) -> bytes:
    return simple_batch(n, producer_id=pid, producer_epoch=epoch, base_sequence=seq, **kw)


def _keyless(n: int, every: int = 1) -> bytes:
    recs = [
        v2_record(None if i % every == 0 else b"k%d" % i, b"v%d" % i, offset_delta=i)
        for i in range(n)
    ]
    return v2_batch(recs, max_timestamp=TS)


def _ts_batch(*deltas: int, attributes: int = 0) -> bytes:
    recs = [
        v2_record(b"k%d" % i, b"v", offset_delta=i, timestamp_delta=d) for i, d in enumerate(deltas)
    ]
    return v2_batch(recs, max_timestamp=TS + max(deltas), attributes=attributes)


def _v1_topic() -> dict[str, object]:
    """A case's keywords for a magic 1 topic: ``message.format.version`` 0.10.2, which the
    2.x/3.x brokers keep at ``inter.broker.protocol.version`` 2.8."""
    return {
        "topic": {"message.format.version": "0.10.2"},
        "inter_broker_protocol_version": "2.8",
        "versions": LEGACY,
    }


def cases() -> list[ProduceCase]:
    """Every crafted produce case, in a stable order."""
    out: list[ProduceCase] = []

    def add(name: str, description: str, requests: Sequence[bytes], **kw: object) -> None:
        if any(c.name == name for c in out):
            raise ValueError(f"duplicate case {name!r}")
        out.append(ProduceCase(name, description, tuple(requests), **kw))  # type: ignore[arg-type]

    ok = simple_batch()
    # -- the request
    add("req-ok", "an ordinary batch of 3 records: accepted, offsets from 0", [ok])
    add("req-no-batch", "Produce v9 with empty records: at least one batch is required", [b""])
    add(
        "req-empty-v2",
        "Produce v2 with empty records: nothing to append",
        [b""],
        produce_version=2,
        versions=LEGACY,
    )
    add("req-legacy-in-v9", "a magic 1 message in Produce v9", [legacy_message()])
    add(
        "req-two-batches",
        "two batches in one Produce v9 partition",
        [ok + simple_batch(base_offset=0)],
    )
    add("req-zstd-v6", "zstd in Produce v6", [simple_batch(attributes=ZSTD)], produce_version=6)
    add("req-zstd-v7", "zstd in Produce v7", [simple_batch(attributes=ZSTD)], produce_version=7)
    add(
        "req-codec7-v6",
        "codec id 7 in Produce v6 (compressionType() is read)",
        [simple_batch(attributes=7)],
        produce_version=6,
    )
    add("req-codec7-v9", "codec id 7 in Produce v9", [simple_batch(attributes=7)])
    add("req-size-below-minimum", "a batch size field of 10 (< 14)", [patch(ok, 8, ">i", 10)])
    add("req-partial-tail", "a batch then 20 bytes of the next one", [ok + ok[:20]])
    add(
        "req-v2-on-4x",
        "Produce v2 (advertised by 4.x, not spoken)",
        [legacy_message()],
        produce_version=2,
    )
    add("req-v12", "Produce v12", [ok], produce_version=12)
    # -- the log
    add("log-base-offset-5", "a v2 batch with baseOffset 5", [simple_batch(base_offset=5)])
    add(
        "log-too-large",
        "a batch over max.message.bytes=50",
        [ok],
        topic={"max.message.bytes": "50"},
    )
    add("log-bad-crc", "a batch with a wrong CRC", [simple_batch(crc=12345)])
    add(
        "log-short-v2",
        "a magic 2 entry of 30 bytes (shorter than a v2 header)",
        [patch(ok[:30], 8, ">i", 18)],
    )
    add(
        "log-short-v2-not-first",
        "Produce v2: a complete batch, then a magic 2 entry of 26 bytes (every batch's "
        "lastOffsetDelta is read, past this one's end)",
        [ok + patch(ok[:26], 8, ">i", 14)],
        produce_version=2,
        versions=LEGACY,
    )
    # -- validateBatch
    add(
        "batch-delta-vs-count",
        "lastOffsetDelta 1 with 3 records",
        [simple_batch(last_offset_delta=1)],
    )
    add(
        "batch-count-0",
        "recordsCount 0 with lastOffsetDelta 0",
        [simple_batch(count=0, last_offset_delta=0)],
    )
    add("batch-delta-negative", "lastOffsetDelta -2", [simple_batch(last_offset_delta=-2)])
    #: a commit marker as a client might send one (transactional, producer 7)
    control = v2_batch(
        [v2_record(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x07")],
        attributes=CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK,
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
    )
    add(
        "batch-control",
        "a control batch from a client",
        [control],
    )
    add(
        "batch-pid-no-sequence",
        "producer id 7 with baseSequence -1",
        [simple_batch(producer_id=7, producer_epoch=0)],
    )
    # -- records
    add(
        "rec-compacted-keyless",
        "compacted topic, the 2nd of 3 records has no key",
        [_keyless(3, every=2)],
        topic={"cleanup.policy": "compact"},
    )
    add(
        "rec-compacted-five",
        "compacted topic, 5 records without keys (the message lists 3)",
        [_keyless(5)],
        topic={"cleanup.policy": "compact"},
    )
    add(
        "rec-ts-too-old",
        "a record 2 h before the clock, before.max.ms 1 h",
        [_ts_batch(0, -7_200_000 + 60_000)],
        topic={"message.timestamp.before.max.ms": "3600000"},
        versions=BEFORE_AFTER,
    )
    add(
        "rec-ts-too-new",
        "a record 2 h after the clock, after.max.ms 1 h",
        [_ts_batch(0, 7_260_000)],
        topic={"message.timestamp.after.max.ms": "3600000"},
        versions=BEFORE_AFTER,
    )
    add(
        "rec-ts-difference",
        "difference.max.ms 1000: a record a minute off",
        [_ts_batch(0, 1)],
        topic={"message.timestamp.difference.max.ms": "1000"},
        versions=tuple(v for v in ALL if VERSIONS[v].timestamp_difference),
    )
    add(
        "rec-ts-default-4x",
        "a record 2 h in the future with the topic defaults",
        [_ts_batch(0, 7_260_000)],
    )
    add(
        "rec-ts-and-key",
        "compacted, one keyless record and one out of range: INVALID_TIMESTAMP wins",
        [
            v2_batch(
                [
                    v2_record(None, b"v"),
                    v2_record(b"k", b"v", offset_delta=1, timestamp_delta=9_000_000),
                ],
                max_timestamp=TS + 9_000_000,
            )
        ],
        topic={"cleanup.policy": "compact", "message.timestamp.after.max.ms": "3600000"},
        versions=BEFORE_AFTER,
    )
    add(
        "rec-producer-log-append-time",
        "the producer sets LogAppendTime on a CreateTime topic",
        [simple_batch(attributes=TIMESTAMP_TYPE_MASK)],
    )
    add(
        "rec-log-append-time-no-ts",
        "LogAppendTime batch, a record with timestamp -1",
        [
            v2_batch(
                [v2_record(b"k", b"v")],
                base_timestamp=-1,
                max_timestamp=-1,
                attributes=TIMESTAMP_TYPE_MASK,
            )
        ],
    )
    # -- records the validator's iterators cannot read
    add(
        "parse-length-past-end",
        "uncompressed: a record length past the batch end",
        [v2_batch([v2_record(b"k", b"v", length=200)], max_timestamp=TS)],
    )
    add(
        "parse-short-record-not-last",
        "uncompressed: the first of 2 records declares 200 bytes (2.x: a null record)",
        [
            v2_batch(
                [v2_record(b"k", b"v", length=200), v2_record(b"k", b"v", offset_delta=1)],
                max_timestamp=TS,
            )
        ],
    )
    add(
        "parse-negative-length-compressed",
        "gzip: a record length of -5",
        [v2_batch([v2_record(b"k", b"v", length=-5)], attributes=GZIP, max_timestamp=TS)],
        topic={"compression.type": "zstd"},
    )
    add(
        "parse-headers-negative",
        "uncompressed: header count -3",
        [v2_batch([v2_record(b"k", b"v", header_count=-3)], max_timestamp=TS)],
    )
    add(
        "parse-records-remaining",
        "uncompressed: count 2, 3 records",
        [simple_batch(count=2, last_offset_delta=1)],
    )
    add(
        "parse-premature-eof",
        "uncompressed: count 4, 3 records",
        [simple_batch(count=4, last_offset_delta=3)],
    )
    short = v2_batch(
        [v2_record(b"key", b"value", length=4), v2_record(b"k", b"v", offset_delta=1)],
        attributes=LZ4,
        max_timestamp=TS,
    )
    add(
        "parse-lz4-length-understated-in-place",
        "lz4, first record's length 4 (body longer), stored in place: the skipping iterator "
        "never checks the length",
        [short],
    )
    add(
        "parse-lz4-length-understated-recompressed",
        "the same batch to a gzip topic: read in full, refused",
        [short],
        topic={"compression.type": "gzip"},
    )
    add(
        "parse-lz4-headers-at-end",
        "lz4 in place, the 2nd record ends after its value: the skipping iterator reads the "
        "header count at the end of the stream (-1 every time: a too-long varint)",
        [
            v2_batch(
                [v2_record(b"key", b"vAlue"), v2_record(b"k", b"v", offset_delta=1,
                                                         end_after="value")],
                attributes=LZ4,
                max_timestamp=TS,
            )
        ],
    )  # fmt: skip
    rec = v2_record(b"key", b"value")
    add(
        "parse-lz4-skip-into-bad-block",
        "lz4 in place: the key to skip runs past the 1st block into one of 0 bytes, then a block "
        "of size 2^31-1 (the skip goes to Lz4BlockInputStream.skip: 0 bytes, then one read() "
        "meets the bad block: an IOException, not the end of the stream)",
        [
            v2_batch(
                [rec],
                attributes=LZ4,
                max_timestamp=TS,
                payload=write_frame(
                    [
                        Block(rec[:5], stored=True),
                        Block(b""),  # compressed: a block of 0 bytes (not the end mark)
                        Block(rec[5:], stored=True, size=0x7FFFFFFF),
                    ]
                ),
            )
        ],
    )
    gap = v2_batch(
        [v2_record(b"k0", b"v"), v2_record(b"k1", b"v", offset_delta=2)],
        attributes=GZIP,
        last_offset_delta=1,
        max_timestamp=TS,
    )
    add(
        "parse-gzip-offset-gap-in-place",
        "gzip, offset deltas 0, 2 (lastOffsetDelta 1), same codec: rebuilt from skipped records",
        [gap],
    )
    add(
        "parse-gzip-offset-gap-recompressed",
        "the same batch to a zstd topic: rebuilt with offsets 0, 1",
        [gap],
        topic={"compression.type": "zstd"},
    )
    # -- what an accepted batch becomes
    add("rewrite-offsets-continue", "two produces: the second gets offsets from 3", [ok, ok])
    add(
        "rewrite-max-timestamp-wrong",
        "maxTimestamp 1 in the header",
        [simple_batch(max_timestamp=1)],
    )
    add(
        "rewrite-reserved-bits-kept",
        "attribute bit 7 set, maxTimestamp right: stored as sent",
        [simple_batch(attributes=0x80)],
    )
    add(
        "rewrite-reserved-bits-dropped",
        "attribute bit 7 set, maxTimestamp wrong: attributes recomputed",
        [simple_batch(attributes=0x80, max_timestamp=5)],
    )
    add(
        "rewrite-log-append-time",
        "a LogAppendTime topic: the broker's clock",
        [ok],
        topic={"message.timestamp.type": "LogAppendTime"},
    )
    add(
        "rewrite-delta-gap-uncompressed",
        "uncompressed, offset deltas 0, 5, 6 with lastOffsetDelta 2: stored as sent",
        [
            v2_batch(
                [
                    v2_record(b"k", b"v"),
                    v2_record(b"k", b"v", offset_delta=5),
                    v2_record(b"k", b"v", offset_delta=6),
                ],
                last_offset_delta=2,
                max_timestamp=TS,
            )
        ],
    )
    add(
        "rewrite-to-uncompressed",
        "a gzip batch to compression.type=uncompressed",
        [simple_batch(attributes=GZIP)],
        topic={"compression.type": "uncompressed"},
    )
    add(
        "rewrite-to-gzip",
        "an uncompressed batch to compression.type=gzip",
        [ok],
        topic={"compression.type": "gzip"},
    )
    add(
        "rewrite-snappy-kept",
        "a snappy batch to compression.type=producer",
        [simple_batch(attributes=SNAPPY)],
    )
    big = v2_batch(simple_records(40, value_size=100), attributes=ZSTD, max_timestamp=TS)
    add(
        "rewrite-too-large-after-decompression",
        "a zstd batch under max.message.bytes, over it uncompressed",
        [big],
        topic={"compression.type": "uncompressed", "max.message.bytes": str(len(big) + 10)},
    )
    add(
        "rewrite-segment-too-small",
        "a batch larger than segment.bytes=50 (4.x: at least 1 MiB)",
        [ok],
        topic={"segment.bytes": "50"},
        versions=LEGACY,
    )
    # -- producers
    add(
        "pid-duplicate",
        "idempotent: sequence 0, the same batch again, then sequence 5",
        [_idem(0), _idem(0), _idem(5)],
    )
    add("pid-in-sequence", "idempotent: sequences 0, 2, 4", [_idem(0), _idem(2), _idem(4)])
    add("pid-new-epoch-at-0", "epoch 0 then epoch 1 from sequence 0", [_idem(0), _idem(0, epoch=1)])
    add(
        "pid-new-epoch-not-0", "epoch 0 then epoch 1 from sequence 3", [_idem(0), _idem(3, epoch=1)]
    )
    add("pid-old-epoch", "epoch 2 then epoch 1", [_idem(0, epoch=2), _idem(2, epoch=1)])
    add("pid-first-sequence-any", "a new producer starting at sequence 42", [_idem(42)])
    add(
        "pid-sequence-wrap",
        "sequence Integer.MAX_VALUE, then 0",
        [_idem(0x7FFFFFFF, n=1), _idem(0, n=1)],
    )
    add(
        "pid-duplicate-too-old",
        "6 batches later, the first one again",
        [_idem(2 * i) for i in range(6)] + [_idem(0)],
    )
    add(
        "pid-txn-then-plain",
        "a transactional batch then a plain one from the same producer",
        [_idem(0, attributes=TRANSACTIONAL_FLAG_MASK), _idem(2)],
    )
    # -- transaction verification (KIP-890, 3.6+): the coordinator's answer; 2.8.2 asks no one
    txn = _idem(0, attributes=TRANSACTIONAL_FLAG_MASK)
    add(
        "verify-unavailable",
        "a transactional batch, no transaction coordinator (COORDINATOR_NOT_AVAILABLE)",
        [txn],
        coordinator="COORDINATOR_NOT_AVAILABLE",
    )
    add(
        "verify-unavailable-then-plain",
        "a transactional batch unverified (COORDINATOR_NOT_AVAILABLE), then the producer's "
        "plain batch from sequence 2: above the verification's earliest sequence",
        [txn, _idem(2)],
        coordinator="COORDINATOR_NOT_AVAILABLE",
    )
    add(
        "verify-unavailable-then-lower",
        "a transactional batch from sequence 2 unverified, then plain batches from 0 and 2 "
        "(not above 2: stored) and 4 (in sequence, but above 2: refused while the "
        "verification state stays)",
        [_idem(2, attributes=TRANSACTIONAL_FLAG_MASK), _idem(0), _idem(2), _idem(4)],
        coordinator="COORDINATOR_NOT_AVAILABLE",
    )
    add(
        "verify-unavailable-v12-then-plain",
        "Produce v12 (transactions V2): a transactional batch unverified, then a plain one from "
        "sequence 2 (4.x: a V2 verification wants sequence 0 of a producer with no batches)",
        [txn, _idem(2)],
        produce_version=12,
        coordinator="COORDINATOR_NOT_AVAILABLE",
        versions=TV2,
    )
    add(
        "verify-control-unavailable",
        "a control batch from a client, unverified: refused before the validator sees it",
        [control],
        coordinator="COORDINATOR_NOT_AVAILABLE",
    )
    add(
        "verify-not-added",
        "a transactional batch whose partition the coordinator says is not in the transaction",
        [txn, _idem(2)],
        coordinator="INVALID_TXN_STATE",
    )
    add(
        "verify-fenced",
        "a transactional batch of a fenced producer (PRODUCER_FENCED: INVALID_PRODUCER_EPOCH)",
        [txn],
        coordinator="PRODUCER_FENCED",
    )
    add(
        "verify-abortable-v9",
        "TRANSACTION_ABORTABLE to a Produce v9 client (older clients: INVALID_TXN_STATE)",
        [txn],
        coordinator="TRANSACTION_ABORTABLE",
        versions=VERIFYING,  # 2.x's Errors has no TRANSACTION_ABORTABLE (3.8)
    )
    add(
        "verify-abortable-v11",
        "TRANSACTION_ABORTABLE to a Produce v11 client (passed on)",
        [txn],
        produce_version=11,
        coordinator="TRANSACTION_ABORTABLE",
        versions=V11,
    )
    add(
        "verify-concurrent-v11",
        "CONCURRENT_TRANSACTIONS in Produce v11: NOT_ENOUGH_REPLICAS",
        [txn],
        produce_version=11,
        coordinator="CONCURRENT_TRANSACTIONS",
        versions=V11,
    )
    add(
        "verify-concurrent-v12",
        "CONCURRENT_TRANSACTIONS in Produce v12 (transactions V2): retried, then passed on",
        [txn],
        produce_version=12,
        coordinator="CONCURRENT_TRANSACTIONS",
        versions=TV2,
    )
    add(
        "verify-legacy-first",
        "Produce v2: a magic 1 message, then a transactional batch (the verification reads the "
        "first batch's baseSequence: a legacy batch has none, -1)",
        [legacy_message() + txn],
        produce_version=2,
        coordinator="COORDINATOR_NOT_AVAILABLE",
        versions=LEGACY,
    )
    add(
        "verify-short-batch",
        "a transactional batch cut to 53 bytes: its producer id and epoch are read, then its "
        "baseSequence past the end (IndexOutOfBoundsException: the request fails)",
        [patch(txn[:53], 8, ">i", 41)],
    )
    add(
        "verify-old-epoch",
        "epoch 2, then a transactional batch of epoch 1 (4.x refuses it when verification "
        "starts; 3.x verifies, then the producer state refuses it)",
        [_idem(0, epoch=2), _idem(2, epoch=1, attributes=TRANSACTIONAL_FLAG_MASK)],
    )
    # -- legacy formats (2.x/3.x topics)
    v1 = legacy_message(magic=1)
    add(
        "legacy-v1-to-v2-topic",
        "a v1 message in Produce v2 to a v2 topic: converted",
        [v1],
        produce_version=2,
        versions=LEGACY,
    )
    add(
        "legacy-v0-to-v1-topic",
        "v0 messages to a 0.10.2 topic: converted",
        [legacy_message(magic=MAGIC_VALUE_V0) + legacy_message(magic=MAGIC_VALUE_V0, offset=1)],
        produce_version=2,
        **_v1_topic(),
    )
    add(
        "legacy-v1-wrapper-bad-offsets",
        "a v1 gzip wrapper, inner offsets 0, 5",
        [legacy_wrapper(v1_inner(2, offsets=[0, 5]), offset=5)],
        produce_version=2,
        **_v1_topic(),
    )
    add(
        "legacy-v1-wrapper-inner-crc",
        "a v1 gzip wrapper whose 2nd inner message fails its CRC",
        [legacy_wrapper([v1_inner(2)[0], legacy_message(b"k1", b"v1", offset=1, crc=7)], offset=1)],
        produce_version=2,
        **_v1_topic(),
    )
    add(
        "legacy-headers-to-v1-topic",
        "a v2 batch with headers to a 0.10.2 topic",
        [v2_batch([v2_record(b"k", b"v", [("h", b"x")])], max_timestamp=TS)],
        **_v1_topic(),
    )
    add(
        "legacy-txn-to-v1-topic",
        "a transactional v2 batch to a 0.10.2 topic",
        [_idem(0, attributes=TRANSACTIONAL_FLAG_MASK)],
        **_v1_topic(),
    )
    add(
        "legacy-idempotent-to-v1-topic",
        "an idempotent v2 batch to a 0.10.2 topic",
        [_idem(0)],
        **_v1_topic(),
    )
    add(
        "legacy-v1-log-append-time",
        "a v1 message with the LogAppendTime bit in Produce v2 (the record's text names its "
        "codec: 2.x by enum name)",
        [legacy_message(magic=1, attributes=TIMESTAMP_TYPE_MASK)],
        produce_version=2,
        versions=LEGACY,
    )
    add(
        "legacy-mixed-magic",
        "a v1 then a v0 message in Produce v2",
        [legacy_message(magic=1) + legacy_message(magic=0, offset=1)],
        produce_version=2,
        versions=LEGACY,
    )
    return out
