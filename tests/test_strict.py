"""Profile strict: every finding code is reported for an input that has the anomaly,
never for what Kafka's own builder writes, and never changes the kafka-profile verdict."""

from __future__ import annotations

import pytest

from conformance import codecs, decode
from conformance.corpus import crafted as c
from conformance.primitives.varint import write_varint
from conformance.stream.findings import FINDING_CODES
from conformance.wire.record import Raw

TS = c.TS


def rec(**kw: object) -> bytes:
    return c.v2_record(**kw)  # type: ignore[arg-type]


CASES: dict[str, bytes] = {
    "varint-non-minimal": c.v2_batch(
        [rec(key=Raw(b"\x82\x00" + b"k"), value=b"v")]  # key length 1 written 82 00
    ),
    "varint-overflow-bits": c.v2_batch(
        [rec(offset_delta=Raw(b"\x80\x80\x80\x80\x70"), key=None, value=None)]
    ),
    "null-length-not-minus-one": c.v2_batch([rec(key=Raw(write_varint(-5)), value=None)]),
    "attributes-high-byte": c.v2_batch([rec()], attributes=0x0100),
    "attributes-unused-bits": c.v2_batch([rec()], attributes=0x0080),
    "record-attributes-set": c.v2_batch([rec(attributes=1)]),
    "last-offset-delta-mismatch": c.v2_batch([rec(), rec(offset_delta=1)], last_offset_delta=5),
    "max-timestamp-mismatch": c.v2_batch(
        [rec(timestamp_delta=0), rec(offset_delta=1, timestamp_delta=9)], max_timestamp=TS
    ),
    "base-timestamp-mismatch": c.v2_batch([rec(timestamp_delta=3)], max_timestamp=TS + 3),
    "offset-delta-non-monotonic": c.v2_batch(
        [rec(offset_delta=0), rec(offset_delta=0)], last_offset_delta=0
    ),
    "offset-delta-negative": c.v2_batch([rec(offset_delta=-1)], last_offset_delta=-1),
    "empty-batch-with-payload": c.v2_batch(payload=b"junk", count=0),
    "control-batch-record-count": c.control_batch(
        [
            rec(key=c.ctl_key(1), value=c.ctl_value()),
            rec(key=c.ctl_key(1), value=c.ctl_value(), offset_delta=1),
        ],
        producer_id=1,
        producer_epoch=0,
    ),
    "compressed-trailing-bytes": c.v2_batch(
        payload=codecs.gzip.write_member(rec()) + b"junk", attributes=1, count=1
    ),
    "lz4-content-checksum-mismatch": c.v2_batch(
        payload=codecs.lz4.write_frame([rec()], content_checksum=0xDEADBEEF), attributes=3, count=1
    ),
    "snappy-xerial-header-version": c.v2_batch(
        payload=codecs.snappy.write_xerial([rec()], little_endian=True), attributes=2, count=1
    ),
    "legacy-trailing-bytes": c.legacy_message(trailing=b"xx"),
    "legacy-wrapper-key": c.legacy_wrapper(c.v1_inner(2), key=b"k", offset=1),
    "legacy-inner-magic-mismatch": c.legacy_wrapper(c.v1_inner(2, magic=0), offset=1),
    "legacy-inner-offsets": c.legacy_wrapper(c.v1_inner(2, offsets=[1, 0]), offset=1),
    "legacy-wrapper-timestamp": c.legacy_wrapper(c.v1_inner(2), offset=1, timestamp=TS - 5),
}


def test_every_code_has_a_case() -> None:
    assert set(CASES) == set(FINDING_CODES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_finding_is_reported(code: str) -> None:
    data = CASES[code]
    kafka = decode(data)
    strict = decode(data, profile="strict")
    assert kafka.outcome == strict.outcome  # findings never change the verdict
    assert kafka.to_dict()["batches"] == strict.to_dict()["batches"]
    codes = {f.code for f in strict.findings or []}
    assert code in codes, (strict.outcome, strict.error, strict.findings)
    for f in strict.findings or []:
        assert 0 <= f.position < len(data)


def test_varint_finding_points_at_the_varint() -> None:
    data = CASES["varint-non-minimal"]
    (f,) = [
        f for f in decode(data, profile="strict").findings or [] if f.code == "varint-non-minimal"
    ]
    assert data[f.position : f.position + 2] == b"\x82\x00"
