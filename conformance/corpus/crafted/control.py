"""Crafted cases of area ``ctl-``."""

from __future__ import annotations

from conformance.corpus.crafted._build import (
    GZIP,
    LZ4,
    Collector,
    control_batch,
    ctl_batch_kv,
    ctl_key,
    ctl_value,
    simple_records,
    v2_batch,
    v2_record,
)
from conformance.wire.layout import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK


def add_cases(add: Collector) -> None:
    add(
        "ctl-commit-c32",
        "C32/§3.7: canonical COMMIT marker (key v0 type 1, value v0 epoch 7)",
        ctl_batch_kv(ctl_key(1), ctl_value()),
    )
    add(
        "ctl-abort-c32",
        "C32/§3.7: canonical ABORT marker",
        ctl_batch_kv(ctl_key(0), ctl_value(coordinator_epoch=-1)),
    )
    add(
        "ctl-only-commit-c26",
        "C26/§3.7: input is a single COMMIT control batch, 0 data records",
        ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=41),
    )
    add(
        "ctl-key-short",
        "§3.7: control key of 3 bytes: 'Must have at least 4 bytes, but found only 3'",
        ctl_batch_kv(b"\x00\x00\x01", ctl_value()),
    )
    add("ctl-key-empty", "§3.7: empty control key", ctl_batch_kv(b"", ctl_value()))
    add(
        "ctl-key-null",
        "§3.7: null control key: NullPointerException",
        ctl_batch_kv(None, ctl_value()),
    )
    add(
        "ctl-key-version-negative",
        "§3.7: control key version -1: 'Invalid version found for control record'",
        ctl_batch_kv(ctl_key(1, version=-1), ctl_value()),
    )
    add(
        "ctl-key-version-1",
        "C32/§3.7: control key version 1 read as v0",
        ctl_batch_kv(ctl_key(0, version=1), ctl_value()),
    )
    add(
        "ctl-key-extra-bytes",
        "§3.7: control key with 4 extra bytes: ignored",
        ctl_batch_kv(ctl_key(1) + b"XXXX", ctl_value()),
    )
    add(
        "ctl-type-unknown",
        "C32/§3.7: unknown control type 99: UNKNOWN (type id -1)",
        ctl_batch_kv(ctl_key(99), b"whatever"),
    )
    add("ctl-type-negative", "§3.7: control type -5: UNKNOWN", ctl_batch_kv(ctl_key(-5), None))
    for tid, tname in (
        (2, "leader-change"),
        (3, "snapshot-header"),
        (4, "snapshot-footer"),
        (5, "kraft-version"),
        (6, "kraft-voters"),
    ):
        add(
            f"ctl-type-{tname}-c32",
            f"C32/§3.7: KRaft control type {tid} ({tname}); value not parsed",
            ctl_batch_kv(
                ctl_key(tid),
                b"\x00\x00\x00\x00\x00\x01\x00",
                attributes=CONTROL_FLAG_MASK,
                producer_id=-1,
                producer_epoch=-1,
            ),
        )
    add("ctl-value-null-c33", "C33/§3.7: COMMIT with null value", ctl_batch_kv(ctl_key(1), None))
    add("ctl-value-empty", "§3.7: ABORT with empty value", ctl_batch_kv(ctl_key(0), b""))
    add(
        "ctl-value-short",
        "§3.7: COMMIT value of 5 bytes: 'Must have at least 6 bytes, but found only 5'",
        ctl_batch_kv(ctl_key(1), b"\x00\x00\x00\x00\x07"),
    )
    add(
        "ctl-value-version-negative",
        "§3.7: end-marker value version -1",
        ctl_batch_kv(ctl_key(1), ctl_value(version=-1)),
    )
    add(
        "ctl-value-version-1",
        "§3.7: end-marker value version 1 parsed as v0",
        ctl_batch_kv(ctl_key(0), ctl_value(coordinator_epoch=3, version=1)),
    )
    add(
        "ctl-value-extra-bytes",
        "§3.7: end-marker value with 10 extra bytes: ignored",
        ctl_batch_kv(ctl_key(1), ctl_value() + bytes(10)),
    )
    add(
        "ctl-two-abort-c31",
        "C31/§3.7: control batch with two ABORT records (count 2)",
        control_batch(
            [
                v2_record(ctl_key(0), ctl_value(1)),
                v2_record(ctl_key(0), ctl_value(2), offset_delta=1),
            ]
        ),
    )
    add(
        "ctl-commit-and-data",
        "§3.7: control batch with a COMMIT record followed by a non-control-shaped record",
        control_batch([v2_record(ctl_key(1), ctl_value()), v2_record(b"k", b"v", offset_delta=1)]),
    )
    add(
        "ctl-not-transactional",
        "§3.7: control bit without the transactional bit",
        ctl_batch_kv(ctl_key(1), ctl_value(), attributes=CONTROL_FLAG_MASK),
    )
    add("ctl-empty-batch", "§3.5/§3.7: control batch with count 0", control_batch([], count=0))
    add(
        "ctl-gzip",
        "§3.7/§5.2: gzip-compressed COMMIT control batch",
        ctl_batch_kv(
            ctl_key(1), ctl_value(), attributes=TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK | GZIP
        ),
    )
    add(
        "ctl-lz4-transactional-c34",
        "C34: lz4 transactional data batch then its ABORT marker",
        v2_batch(
            simple_records(3),
            attributes=TRANSACTIONAL_FLAG_MASK | LZ4,
            producer_id=4242,
            producer_epoch=3,
            base_sequence=0,
            base_offset=7,
        )
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=10),
    )
    txn = dict(attributes=TRANSACTIONAL_FLAG_MASK, producer_id=1, producer_epoch=0)
    add(
        "ctl-txn-layout-c29",
        "C29/C30: pid 1: tx1 commit, tx2 abort, tx3 commit (read_uncommitted returns all data)",
        v2_batch(simple_records(1), base_offset=0, base_sequence=0, **txn)
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=1, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(1), base_offset=2, base_sequence=1, **txn)
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=3, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(1), base_offset=4, base_sequence=2, **txn)
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=5, producer_id=1, producer_epoch=0),
    )
    add(
        "ctl-txn-empty-abort-c27",
        "C27/C28: ABORT marker of an empty txn, then data, then another ABORT",
        ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=0, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(2), base_offset=1, base_sequence=0, **txn)
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=3, producer_id=1, producer_epoch=0),
    )
