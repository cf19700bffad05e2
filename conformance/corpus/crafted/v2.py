"""Crafted cases of area ``v2-``."""

from __future__ import annotations

from typing import Any

from conformance.corpus.crafted._build import (
    BOTH,
    GZIP,
    TS,
    Collector,
    ctl_key,
    ctl_value,
    flip,
    prand,
    reseal,
    simple_batch,
    simple_records,
    text,
    v2_batch,
    v2_record,
)
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    CRC_LENGTH,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LAST_OFFSET_DELTA_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)


def stored_crc(batch: bytes) -> int:
    return int.from_bytes(batch[CRC_OFFSET : CRC_OFFSET + CRC_LENGTH], "big")


def add_cases(add: Collector) -> None:
    # docs/format.md Appendix A.1 verbatim (Java-written reference bytes, checked against the
    # writer)
    a1 = bytes.fromhex(
        "0000000000000064 00000057 ffffffff 02 57fd8bed 0000 00000002 0000018bcfe56800 "
        "0000018bcfe56805 ffffffffffffffff ffff ffffffff 00000003 "
        "26 00 00 00 04 6b30 04 7630 04 04 6831 02 78 04 6832 01 "
        "10 00 0a 02 01 04 7631 00 "
        "10 00 13 04 04 6b32 01 00".replace(" ", "")
    )
    built = v2_batch(
        [
            v2_record(b"k0", b"v0", [("h1", b"x"), ("h2", None)]),
            v2_record(None, b"v1", offset_delta=1, timestamp_delta=5),
            v2_record(b"k2", None, offset_delta=2, timestamp_delta=-10),
        ],
        base_offset=100,
        max_timestamp=TS + 5,
    )
    # guards the builders against the reference bytes of docs/format.md Appendix A.1
    if built != a1:  # pragma: no cover
        raise AssertionError("v2_batch does not reproduce docs/format.md Appendix A.1")
    add(
        "v2-appendix-a1",
        "Appendix A.1: Java-written batch, 3 records (headers, null key, null value)",
        a1,
    )
    add(
        "v2-empty-batch",
        "§3.1/§3.5: count 0, no record bytes: empty record list",
        v2_batch([], count=0),
    )
    add(
        "v2-log-append-time-c47",
        "C47/§3.3: LogAppendTime (bit 3): every record reports maxTimestamp, decoy base/deltas",
        v2_batch(
            [
                v2_record(b"a", b"1", timestamp_delta=77),
                v2_record(b"b", b"2", offset_delta=1, timestamp_delta=-9),
            ],
            attributes=TIMESTAMP_TYPE_MASK,
            base_timestamp=12345,
            max_timestamp=TS + 999,
        ),
    )
    add(
        "v2-log-append-time-base-create-c48",
        "C48/§3.1: LogAppendTime batch whose baseTimestamp stays a create time < maxTimestamp",
        simple_batch(3, attributes=TIMESTAMP_TYPE_MASK, max_timestamp=TS + 60_000),
    )
    add(
        "v2-delete-horizon-c51",
        "C51/§3.2/§3.3: bit 6 set: "
        "deleteHorizonMs = baseTimestamp, records still base+delta (tombstone)",
        v2_batch(
            [v2_record(b"gone", None), v2_record(b"k", b"v", offset_delta=1, timestamp_delta=-3)],
            attributes=DELETE_HORIZON_FLAG_MASK,
            base_timestamp=TS + 86_400_000,
        ),
    )
    add(
        "v2-delete-horizon-lat",
        "§3.2/§3.3: bits 6 and 3: delete horizon plus LogAppendTime (records report maxTimestamp)",
        simple_batch(
            2, attributes=DELETE_HORIZON_FLAG_MASK | TIMESTAMP_TYPE_MASK, max_timestamp=TS + 5
        ),
    )
    add(
        "v2-transactional",
        "§3.2: transactional bit 4 with producer id/epoch/sequence",
        simple_batch(
            3,
            attributes=TRANSACTIONAL_FLAG_MASK,
            producer_id=77,
            producer_epoch=2,
            base_sequence=10,
        ),
    )
    add(
        "v2-idempotent",
        "§3.3: producerId >= 0, baseSequence 5 -> lastSequence 7, record sequences",
        simple_batch(3, producer_id=9000, producer_epoch=0, base_sequence=5),
    )
    add(
        "v2-last-sequence-wrap",
        "§3.3: baseSequence 2^31-2 with lastOffsetDelta 4 wraps lastSequence to 2",
        simple_batch(5, producer_id=1, producer_epoch=1, base_sequence=0x7FFFFFFE),
    )
    add(
        "v2-attr-high-byte",
        "§3.2: attribute high byte 0xFF set (CRC-covered): readers ignore it",
        simple_batch(2, attributes=0xFF00),
    )
    add(
        "v2-attr-bit7",
        "C51/§3.2: reserved attribute bit 7 set: ignored",
        simple_batch(2, attributes=0x80),
    )
    add(
        "v2-attr-all-bits",
        "§3.2: attributes 0xFFF8 (every non-codec bit incl. control+txn, codec none), 1 record",
        v2_batch(
            [v2_record(ctl_key(1), ctl_value())], attributes=0xFFF8, producer_id=5, producer_epoch=1
        ),
    )
    for codec in (5, 6, 7):
        add(
            f"v2-codec-{codec}-count-0",
            f"§3.2/§3.5: codec id {codec} with count 0 (spec: count 0 never looks at the codec; "
            "true for iterator(), streamingIterator() is what the consumer uses)",
            v2_batch([], attributes=codec, count=0, payload=b"\x01\x02\x03"),
        )
        add(
            f"v2-codec-{codec}-count-1",
            f"§3.2/§4.2: codec id {codec} with count 1: IAE 'Unknown compression type id: {codec}'",
            v2_batch([], attributes=codec, count=1, payload=v2_record()),
        )
    # CRC with the high bit set (C61)
    i = 0
    while True:
        b = simple_batch(2, base_offset=0, producer_id=i)
        if stored_crc(b) & 0x80000000:
            break
        i += 1
    add("v2-crc-high-bit-c61", "C61/§3.1: stored CRC with the high bit set (uint32 compare)", b)
    add(
        "v2-crc-high-bit-wrong-c61",
        "C61/§3.1: CRC-32C with high bit set, stored value differs only in the sign bit",
        simple_batch(2, base_offset=0, producer_id=i, crc=stored_crc(b) ^ 0x80000000),
    )

    def base_with(**knobs: Any) -> bytes:
        """``base`` written with the batch writer's knobs (a field changed, a given CRC)."""
        kw: dict[str, Any] = {
            "base_offset": 50,
            "producer_id": 3,
            "producer_epoch": 1,
            "base_sequence": 0,
            "last_offset_delta": 2,
        }
        return simple_batch(3, **(kw | knobs))

    base = base_with()
    stale = stored_crc(base)
    covered = [
        ("attributes", ATTRIBUTES_OFFSET, "attributes", 0x0100),
        ("last-offset-delta", LAST_OFFSET_DELTA_OFFSET, "last_offset_delta", 5),
        ("base-timestamp", BASE_TIMESTAMP_OFFSET, "base_timestamp", TS - 1),
        ("max-timestamp", MAX_TIMESTAMP_OFFSET, "max_timestamp", TS + 100),
        ("producer-id", PRODUCER_ID_OFFSET, "producer_id", 4),
        ("producer-epoch", PRODUCER_EPOCH_OFFSET, "producer_epoch", 2),
        ("base-sequence", BASE_SEQUENCE_OFFSET, "base_sequence", 1),
        ("records-count", RECORDS_COUNT_OFFSET, "count", 2),
    ]
    for field_name, off, knob, val in covered:
        add(
            f"v2-crc-covered-{field_name}-c62",
            f"C62/§3.1: {field_name} @{off} changed without resealing: CRC mismatch",
            base_with(**{knob: val}, crc=stale),
        )
    add(
        "v2-crc-covered-records-c60",
        "C60/§3.1: one bit flipped in the first record's key, stale CRC: ensureValid fails",
        flip(base, RECORDS_OFFSET + 6, 0x01),
    )
    add(
        "v2-crc-covered-attributes-resealed-c62",
        "C62/§3.2: attribute high byte changed and CRC recomputed: accepted",
        base_with(attributes=0x0100),
    )
    uncovered = [
        ("base-offset", BASE_OFFSET_OFFSET, "base_offset", 123456),
        ("partition-leader-epoch", PARTITION_LEADER_EPOCH_OFFSET, "partition_leader_epoch", 99),
    ]
    for field_name, off, knob, val in uncovered:
        add(
            f"v2-crc-uncovered-{field_name}-c62",
            f"C62/§3.1: {field_name} @{off} changed: outside the CRC, still valid",
            base_with(**{knob: val}),
        )
    add(
        "v2-crc-uncovered-magic-c62",
        "C62/§3.1/§1.3: magic changed to 3: "
        "outside the CRC (memory rejects the magic, file reads v2)",
        base_with(magic=3),
        BOTH,
    )
    add("v2-crc-zero", "§3.1: stored CRC 0 on a valid body: mismatch", base_with(crc=0))
    add("v2-crc-bit-flipped", "§3.1: stored CRC with one bit flipped", base_with(crc=stale ^ 0x10))
    second_corrupt = flip(simple_batch(5), RECORDS_OFFSET + len(simple_records(1)[0]), 0x02)
    add(
        "v2-crc-wrong-uncompressed-corrupt-c6",
        "C6/§3.1: 5 records, 2nd corrupted (length byte), stale CRC: "
        "rejected at ensureValid, not partial",
        second_corrupt,
    )
    add(
        "v2-record-corrupt-resealed-c6",
        "C6/§3.5: 5 records, 2nd corrupted (length byte), CRC recomputed: "
        "record-level error after 1 record",
        reseal(second_corrupt),
    )
    add(
        "v2-corrupt-middle-batch-c63",
        "C63: three batches, the middle one has a bad CRC: "
        "error at batch_index 1, first batch kept",
        simple_batch(1, base_offset=0)
        + simple_batch(1, base_offset=1, crc=1)
        + simple_batch(1, base_offset=2),
    )
    add(
        "v2-count-negative-c55",
        "C55/§3.5: recordsCount -1: 'Found invalid record count'",
        simple_batch(2, count=-1),
    )
    add(
        "v2-count-min-int",
        "§3.5: recordsCount -2^31: 'Found invalid record count'",
        simple_batch(2, count=-(2**31)),
    )
    add(
        "v2-count-max-int-c55",
        "C55/§3.5: recordsCount 2^31-1 with 2 records (uncompressed): "
        "premature EOF, bounded memory",
        simple_batch(2, count=0x7FFFFFFF),
    )
    add(
        "v2-count-too-high-c58",
        "C58/§3.5: count 3 with 2 physical records: 2 records then 'premature EOF'",
        simple_batch(2, count=3),
    )
    add(
        "v2-count-too-low-c58",
        "C58/§3.5: count 2 with 3 physical records: 1 record then 'records still remaining'",
        simple_batch(3, count=2),
    )
    add(
        "v2-count-1-of-3",
        "§3.5: count 1 with 3 physical records: "
        "raises instead of returning the only declared record",
        simple_batch(3, count=1),
    )
    add(
        "v2-count-claims-no-bytes-c38",
        "C38/§3.5: CRC-valid batch claiming 5 records with zero record bytes: premature EOF",
        v2_batch([], count=5, last_offset_delta=4),
    )
    add(
        "v2-count-0-compacted-c35",
        "C35/§3.5: compacted batch base 100, lastOffsetDelta 9, count 0: "
        "no records, lastOffset 109",
        v2_batch(
            [],
            count=0,
            base_offset=100,
            last_offset_delta=9,
            producer_id=8,
            producer_epoch=0,
            base_sequence=0,
        ),
    )
    add(
        "v2-count-0-junk",
        "§3.5: count 0 followed by 40 bytes of junk: the junk is never read",
        v2_batch([], count=0, payload=prand(40, 1)),
    )
    add(
        "v2-count-0-gzip-junk",
        "§3.5: gzip codec, count 0, "
        "payload not gzip (spec: never decompressed; iterator() vs streamingIterator())",
        v2_batch([], attributes=GZIP, count=0, payload=b"not gzip at all"),
    )
    add(
        "v2-count-0-codec-7-junk",
        "§3.5: codec 7, count 0, junk payload (spec: accepted by iterator())",
        v2_batch([], attributes=7, count=0, payload=prand(10, 2)),
    )
    add(
        "v2-compacted-gaps-c37",
        "C37/§3.3: offset deltas {0,3,7} with lastOffsetDelta 9: offsets base+{0,3,7}",
        v2_batch(
            [
                v2_record(b"a", b"1"),
                v2_record(b"b", b"2", offset_delta=3),
                v2_record(b"c", b"3", offset_delta=7),
            ],
            base_offset=1000,
            last_offset_delta=9,
        ),
    )
    add(
        "v2-compacted-single-survivor-c36",
        "C36/§3.3: only surviving record has offsetDelta 0, lastOffsetDelta 49",
        v2_batch([v2_record(b"k", b"v")], last_offset_delta=49, base_offset=200),
    )
    add(
        "v2-offset-deltas-all-zero-c68",
        "C68/§3.3: three records all with offsetDelta 0 (not assigned): offsets not checked",
        v2_batch(
            [v2_record(b"a", b"1"), v2_record(b"b", b"2"), v2_record(b"c", b"3")],
            last_offset_delta=2,
        ),
    )
    add(
        "v2-offset-delta-negative",
        "§3.3: record offsetDelta -5 and one past lastOffsetDelta: reported as base+delta",
        v2_batch(
            [v2_record(offset_delta=-5), v2_record(offset_delta=10)],
            base_offset=100,
            last_offset_delta=1,
        ),
    )
    add(
        "v2-last-offset-delta-negative",
        "§3.3: lastOffsetDelta -1: lastOffset = base-1, unchecked",
        simple_batch(1, last_offset_delta=-1, base_offset=10),
    )
    add(
        "v2-base-offset-negative",
        "§3.3: baseOffset -1 (offsets not assigned) with 2 records",
        simple_batch(2, base_offset=-1),
    )
    add(
        "v2-base-offset-max",
        "§3.3: baseOffset 2^63-2 with lastOffsetDelta 3: 64-bit wrap of lastOffset",
        simple_batch(2, base_offset=2**63 - 2, last_offset_delta=3),
    )
    add(
        "v2-timestamp-wrap",
        "§3.3: baseTimestamp 2^63-1 plus delta 1 wraps to -2^63",
        v2_batch([v2_record(timestamp_delta=1)], base_timestamp=2**63 - 1),
    )
    add(
        "v2-timestamps-negative",
        "§3.3: baseTimestamp -1 (no timestamp) with deltas 0 and 5",
        v2_batch(
            [v2_record(), v2_record(offset_delta=1, timestamp_delta=5)],
            base_timestamp=-1,
            max_timestamp=-1,
        ),
    )
    add(
        "v2-max-timestamp-inconsistent",
        "§3.5: maxTimestamp smaller than every record timestamp: not checked",
        simple_batch(3, max_timestamp=0),
    )
    add(
        "v2-partition-leader-epoch",
        "§3.3: partitionLeaderEpoch 2^31-1 reported as stored",
        simple_batch(1, partition_leader_epoch=0x7FFFFFFF),
    )
    add(
        "v2-many-records-c56",
        "C56: 1500 minimal records in one batch "
        "(scaled down from 200k to keep the corpus small): must decode",
        v2_batch([v2_record(None, None, offset_delta=i) for i in range(1500)]),
    )
    for size in (63, 64, 8191, 8192):
        add(
            f"v2-value-size-{size}-c59",
            f"C59/§3.6: value of {size} bytes straddling a varint width boundary",
            v2_batch([v2_record(b"k", text(size, size))]),
        )
    add(
        "v2-record-size-16k-c59",
        "C59: records whose length varint crosses 2^14 (16383/16384 body bytes)",
        v2_batch(
            [
                v2_record(None, text(16383 - 5, 1)),
                v2_record(None, text(16384 - 5, 2), offset_delta=1),
            ]
        ),
    )
    add(
        "v2-magic-2-file-trailing",
        "§1.3: v2 batch followed by 17 bytes of a batch header (file ignores, memory: partial)",
        simple_batch(1) + simple_batch(1, base_offset=1)[:HEADER_SIZE_UP_TO_MAGIC],
        BOTH,
    )
