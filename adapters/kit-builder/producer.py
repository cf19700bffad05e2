"""kafka-conformance producer adapter for the kit's own encoder: the `encode` side of
docs/adapter-protocol.md with `conformance.BatchBuilder` (conformance/wire/builder.py, the kit's
mirror of Kafka's `MemoryRecordsBuilder`). Unlike the third-party adapters this one imports the
kit: it is the kit's implementation under test, run with the kit's own interpreter.

encode: `BatchBuilder(magic, compression, base_offset, producer_id, producer_epoch,
  base_sequence, is_transactional, partition_leader_epoch)`, `append(timestamp, key, value,
  headers)` per record, `build()`. A null plan timestamp is `RecordBatch.NO_TIMESTAMP` (-1),
  what `MemoryRecordsBuilder.append` gets from a `SimpleRecord` without a timestamp (the
  builder has no clock of its own).

Usage: producer.py capabilities | encode --plan F
"""

import sys
from pathlib import Path

# the protocol plumbing shared by the Python producer adapters (stdlib only)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import producer_protocol as pp

import conformance
from conformance import BatchBuilder

NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP


def capabilities():
    return pp.capabilities(
        "kit",
        conformance.__version__,
        encode=pp.side(
            codecs=list(pp.CODECS),
            idempotence=True,
            transactions=True,
            headers=True,
            magics=[0, 1, 2],
            partitioner=None,
            defaults=None,
            notes="conformance.BatchBuilder (the kit's MemoryRecordsBuilder) -> append -> "
            "build(); every batch field of the plan is applied; a null timestamp is "
            "NO_TIMESTAMP (-1), as MemoryRecordsBuilder.append(SimpleRecord) without one",
        ),
    )


def encode(plan):
    b = plan.batch
    builder = BatchBuilder(
        magic=int(b["magic"]),
        compression=plan.codec,
        base_offset=int(b["base_offset"]),
        producer_id=int(b["producer_id"]),
        producer_epoch=int(b["producer_epoch"]),
        base_sequence=int(b["base_sequence"]),
        is_transactional=bool(b["transactional"]),
        partition_leader_epoch=int(b["partition_leader_epoch"]),
    )
    for rec in plan.records:
        ts = NO_TIMESTAMP if rec.timestamp is None else int(rec.timestamp)
        builder.append(ts, rec.key, rec.value, rec.headers)
    return builder.build()


if __name__ == "__main__":
    sys.exit(pp.main(sys.argv[1:], capabilities, encode_fn=encode))
