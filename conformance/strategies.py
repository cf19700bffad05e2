"""Hypothesis strategies for Kafka record formats — a public API.

Use them in any project's property tests::

    from hypothesis import given
    from conformance import strategies as kst

    @given(kst.batches())
    def test_my_decoder(case):
        assert my_decode(case.data) == [r.value for r in case.records]

``batches()`` draws a :class:`BatchCase`: the builder inputs and the encoded bytes (made by
the kit's encoder, which mirrors Kafka's ``MemoryRecordsBuilder``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from conformance.codecs import CODECS
from conformance.messages.sample import sample_message
from conformance.messages.schema import MessageSchema
from conformance.messages.value import Message
from conformance.wire.builder import BatchBuilder

INT64 = st.integers(-(2**63), 2**63 - 1)
TIMESTAMPS = st.one_of(st.just(-1), st.integers(0, 2**53))

#: the codecs each magic may use (``codecs.CODECS``)
CODECS_BY_MAGIC = {
    magic: [c.name for c in CODECS.values() if magic == 2 or c.legacy_magics] for magic in (0, 1, 2)
}


def nullable_bytes(max_size: int = 64) -> st.SearchStrategy[bytes | None]:
    """Null, empty, and short byte strings (null and empty are different on the wire)."""
    return st.one_of(st.none(), st.just(b""), st.binary(max_size=max_size))


def header_keys() -> st.SearchStrategy[str]:
    return st.text(max_size=12)


def headers(max_headers: int = 4) -> st.SearchStrategy[list[tuple[str, bytes | None]]]:
    return st.lists(st.tuples(header_keys(), nullable_bytes(16)), max_size=max_headers)


@dataclass
class RecordInput:
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    offset_gap: int = 0


@st.composite
def record_inputs(draw: st.DrawFn, magic: int = 2) -> RecordInput:
    return RecordInput(
        timestamp=draw(TIMESTAMPS),
        key=draw(nullable_bytes()),
        value=draw(nullable_bytes(256)),
        headers=draw(headers()) if magic >= 2 else [],
        offset_gap=draw(st.integers(0, 3)),
    )


@dataclass
class BatchCase:
    """What went into the encoder, and what came out."""

    magic: int
    compression: str
    options: dict[str, object]
    records: list[RecordInput]
    offsets: list[int]
    data: bytes


@st.composite
def batches(
    draw: st.DrawFn,
    magic: int | None = None,
    compression: str | None = None,
    max_records: int = 20,
) -> BatchCase:
    """One batch (v2) or message set (v0/v1) with random records and batch features."""
    m = draw(st.sampled_from([0, 1, 2])) if magic is None else magic
    codec = draw(st.sampled_from(CODECS_BY_MAGIC[m])) if compression is None else compression
    base_offset = draw(st.integers(0, 2**40))
    options: dict[str, object] = {"magic": m, "compression": codec, "base_offset": base_offset}
    if m >= 1 and draw(st.booleans()):
        options["timestamp_type"] = "LogAppendTime"
        options["log_append_time"] = draw(st.integers(0, 2**53))
    if m == 2:
        if draw(st.booleans()):
            options["producer_id"] = draw(st.integers(0, 2**40))
            options["producer_epoch"] = draw(st.integers(0, 32767))
            options["base_sequence"] = draw(st.integers(0, 2**31 - 1))
            options["is_transactional"] = draw(st.booleans())
        options["partition_leader_epoch"] = draw(st.integers(-1, 2**31 - 1))
        if draw(st.integers(0, 9)) == 0:
            options["delete_horizon_ms"] = draw(st.integers(0, 2**53))
    recs = draw(st.lists(record_inputs(m), min_size=1, max_size=max_records))
    builder = BatchBuilder(**options)  # type: ignore[arg-type]
    offsets = []
    offset = base_offset
    for i, r in enumerate(recs):
        if i:
            offset += 1 + r.offset_gap  # compaction leaves gaps in every format
        builder.append(r.timestamp, r.key, r.value, r.headers, offset=offset)
        offsets.append(offset)
    return BatchCase(m, codec, options, recs, offsets, builder.build())


@st.composite
def produce_batches(
    draw: st.DrawFn,
    now: int,
    compression: str | None = None,
    max_records: int = 20,
    idempotent: bool | None = None,
    keys: bool = False,
) -> BatchCase:
    """A batch as a correct producer sends it in a Produce request: magic 2, base offset 0,
    offsets 0, 1, 2, ..., CreateTime timestamps within a minute of ``now`` (every broker's
    default bounds accept them), no leader epoch (-1); ``idempotent`` (None: drawn) gives it
    a producer id, epoch and base sequence; ``keys`` makes every key non-null (a compacted
    topic's requirement)."""
    codec = draw(st.sampled_from(CODECS_BY_MAGIC[2])) if compression is None else compression
    options: dict[str, object] = {"magic": 2, "compression": codec, "base_offset": 0}
    if draw(st.booleans()) if idempotent is None else idempotent:
        options["producer_id"] = draw(st.integers(0, 2**40))
        options["producer_epoch"] = draw(st.integers(0, 32767))
        options["base_sequence"] = draw(st.integers(0, 2**31 - 1))
    key = st.binary(max_size=64) if keys else nullable_bytes()
    recs = draw(
        st.lists(
            st.builds(
                RecordInput,
                timestamp=st.integers(now - 60_000, now + 60_000),
                key=key,
                value=nullable_bytes(256),
                headers=headers(),
            ),
            min_size=1,
            max_size=max_records,
        )
    )
    builder = BatchBuilder(**options)  # type: ignore[arg-type]
    for i, r in enumerate(recs):
        builder.append(r.timestamp, r.key, r.value, r.headers, offset=i)
    return BatchCase(2, codec, options, recs, list(range(len(recs))), builder.build())


@st.composite
def record_streams(draw: st.DrawFn, max_batches: int = 4) -> list[BatchCase]:
    """Several batches, possibly of different magics, as one fetch response / segment holds."""
    return draw(st.lists(batches(max_records=6), min_size=1, max_size=max_batches))


class _DrawChoices:
    """``messages.sample.Choices`` over a Hypothesis draw."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def binary(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))

    def text(self, max_size: int) -> str:
        return self.draw(st.text(max_size=max_size))


@st.composite
def messages(draw: st.DrawFn, schema: MessageSchema, version: int, max_items: int = 3) -> Message:
    """A message of ``schema`` (``conformance.messages``) at ``version`` that Kafka's generated
    class writes and reads back unchanged: every field the version has, nulls where it allows
    them, tagged fields or their defaults, unknown tagged fields (``messages.sample``)."""
    return sample_message(schema, version, _DrawChoices(draw), max_items=max_items)


__all__ = [
    "BatchCase",
    "RecordInput",
    "batches",
    "header_keys",
    "headers",
    "messages",
    "nullable_bytes",
    "produce_batches",
    "record_inputs",
    "record_streams",
]
