"""The spec's reference bytes (Appendix A), written by Kafka's Java builder."""

from __future__ import annotations

from pathlib import Path

from conformance import decode
from conformance.wire.builder import BatchBuilder
from conformance.wire.legacy import write_legacy_message

SAMPLES = Path(__file__).resolve().parent.parent / "corpora" / "samples"
A1 = (SAMPLES / "spec-a1-v2-three-records.bin").read_bytes()
A2_V1 = (SAMPLES / "spec-a2-v1-message.bin").read_bytes()
A2_V0 = (SAMPLES / "spec-a2-v0-message.bin").read_bytes()


def test_a1_decodes_to_the_spec_values() -> None:
    r = decode(A1)
    assert r.outcome == "ok"
    (batch,) = r.batches
    assert batch.crc == 0x57FD8BED == 1476234221
    assert (batch.base_offset, batch.last_offset, batch.records_count) == (100, 102, 3)
    assert batch.max_timestamp == 1700000000005
    recs = batch.records
    assert [x.offset for x in recs] == [100, 101, 102]
    assert recs[0].key == b"k0" and recs[0].value == b"v0"
    assert recs[0].headers == (("h1", b"x"), ("h2", None))
    assert recs[1].key is None and recs[1].value == b"v1" and recs[1].headers == ()
    assert recs[2].key == b"k2" and recs[2].value is None
    assert recs[2].timestamp == 1700000000000 - 10  # delta -10 encoded as 0x13


def test_a1_is_what_our_builder_writes() -> None:
    b = BatchBuilder(base_offset=100)
    b.append(1700000000000, b"k0", b"v0", [("h1", b"x"), ("h2", None)])
    b.append(1700000000005, None, b"v1")
    b.append(1699999999990, b"k2", None)
    assert b.build() == A1


def test_a2_legacy_messages() -> None:
    assert write_legacy_message(1, 100, 1700000000000, b"k0", b"v0") == A2_V1
    assert write_legacy_message(0, 100, -1, b"k0", b"v0") == A2_V0
    v1 = decode(A2_V1).records[0]
    assert (v1.offset, v1.timestamp, v1.key, v1.value) == (100, 1700000000000, b"k0", b"v0")
    v0 = decode(A2_V0)
    assert v0.batches[0].timestamp_type == "NoTimestampType"
    assert v0.records[0].timestamp == -1


def test_a3_compressed_prefixes() -> None:
    """Appendix A.3: the first payload bytes Java writes, per codec and magic."""
    payloads = {}
    for magic, codec in [
        (2, "gzip"),
        (2, "snappy"),
        (0, "lz4"),
        (1, "lz4"),
        (2, "lz4"),
        (2, "zstd"),
    ]:
        b = BatchBuilder(magic=magic, compression=codec)
        b.append(1700000000000 if magic else -1, b"k", b"v" * 100)
        raw = b.build()
        payloads[(magic, codec)] = (
            raw[61:] if magic == 2 else raw[12 + 4 + 1 + 1 + (8 if magic else 0) + 4 + 4 :]
        )
    assert payloads[(2, "gzip")].startswith(bytes.fromhex("1f8b08000000000000ff"))
    assert payloads[(2, "snappy")].startswith(bytes.fromhex("82534e41505059000000000100000001"))
    assert payloads[(0, "lz4")].startswith(bytes.fromhex("04224d1860401a"))
    assert payloads[(1, "lz4")].startswith(bytes.fromhex("04224d18604082"))
    assert payloads[(2, "lz4")].startswith(bytes.fromhex("04224d18604082"))
    assert payloads[(2, "lz4")].endswith(bytes.fromhex("00000000"))
    assert payloads[(2, "zstd")].startswith(bytes.fromhex("28b52ffd"))
