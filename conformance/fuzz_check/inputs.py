"""What a hunt feeds an implementation: record streams, seeded and mutated, reproducibly.

==============  ========================================================================
source          what
==============  ========================================================================
corpus seeds    every record stream of the corpora (the ``stream`` fuzz target's seeds:
                broker segments, wire captures, crafted cases, regressions; an installed
                kit without corpora: the built-in root of ``fuzz.seeds``)
writer seeds    batches the kit's writer (``wire.builder``) makes in the shapes users'
                bugs hide in (:func:`writer_seeds`): timestamp and offset spreads past 32
                bits in one batch, many records, large headers and keys (varints of
                several bytes), transactions with their markers, batches left empty by
                compaction, every codec
mutations       the structure-aware mutator (``fuzz.mutator``, shape ``stream``): fields,
                records, headers and codecs changed, then lengths, counts and CRCs
                re-sealed so the change reaches the record parsers
==============  ========================================================================

The consume side's inputs are partitions (:class:`Partition`: segments with their aborted
transactions, an isolation level, a cut Fetch response), seeded by the consume scenarios'
partitions and the writer seeds (:func:`consume_seeds`), mutated by
:class:`ConsumeInputs`: a segment's batches by the same mutator; an aborted-transactions
entry dropped, added or shifted; a marker appended with or without its entry; a compaction
gap (later offsets moved) or an empty batch left by compaction; a Fetch response cut; a
segment split in two; the isolation level flipped.

Every input is a function of the run's seed and its index (:meth:`Inputs.next`): the same
seed, corpora and kit give the same inputs, so a run can be repeated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from conformance.broker.fetch import FetchLog, Segment, transactions
from conformance.codecs import CODEC_IDS
from conformance.corpus import consume as consume_corpus
from conformance.errors import CorpusError, CorruptRecordError, DecodeError, EncodeError
from conformance.fakebroker import read_log
from conformance.fuzz.mutator import Mutator
from conformance.fuzz.targets import MAX_LEN, get
from conformance.logdir.txnindex import AbortedTxn
from conformance.stream.splitter import file_frame
from conformance.wire import layout
from conformance.wire.builder import BatchBuilder, empty_batch, end_txn_marker_batch

__all__ = [
    "ConsumeInputs",
    "Inputs",
    "Partition",
    "consume_seeds",
    "corpus_seeds",
    "partition_of",
    "writer_seeds",
]

READ_UNCOMMITTED, READ_COMMITTED = consume_corpus.ISOLATIONS

_TS = 1_700_000_000_000
#: past what a signed 32-bit integer holds: a delta read as an int is wrong beyond it
_PAST_INT32 = 2**31 + 4321
#: of the inputs, the share that is a seed as it is (the rest are mutations)
SEED_SHARE = 0.1


#: one record to write: timestamp, key, value, headers
_Record = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def _batch(
    records: Iterable[_Record],
    *,
    offsets: Iterable[int] | None = None,
    **settings: object,
) -> bytes:
    b = BatchBuilder(magic=2, **settings)  # type: ignore[arg-type]
    wanted = list(offsets) if offsets is not None else None
    for i, (ts, key, value, headers) in enumerate(records):
        b.append(ts, key, value, headers, offset=None if wanted is None else wanted[i])
    return b.build()


def writer_seeds() -> Iterator[bytes]:
    """Record streams in the shapes the bugs users filed hide in (the module docstring)."""
    spread: list[_Record] = [
        (_TS, b"k0", b"v0", []),
        (_TS + _PAST_INT32, b"k1", b"v1", []),  # > 24.8 days after the first
        (_TS + 2**40, None, b"v2", [("h", b"x")]),
    ]
    for codec in CODEC_IDS:
        yield _batch(spread, compression=codec)
    # offsets whose deltas need every bit of the int32 (the largest Kafka allows)
    base = 2**40
    yield _batch(spread, offsets=[base, base + 2**30, base + 2**31 - 1], base_offset=base)
    many: list[_Record] = [(_TS + i, b"k%d" % i, b"v" * (i % 7), []) for i in range(300)]
    yield _batch(many)
    yield _batch(many, compression="lz4")
    big_headers: list[tuple[str, bytes | None]] = [
        (f"header-{i}", b"h" * 12 * i) for i in range(40)
    ]  # header values up to 468 bytes (2-byte varints), the batch within MAX_LEN
    yield _batch([(_TS, b"K" * 300, b"V" * 1_000, big_headers)])
    yield _batch([(_TS, None, None, [("n", None)]), (-1, b"", b"", [])])  # nulls, empty, -1
    txn: dict[str, Any] = {
        "producer_id": 7,
        "producer_epoch": 2,
        "base_sequence": 0,
        "is_transactional": True,
    }
    for commit in (False, True):
        yield _batch(spread[:2], **txn) + end_txn_marker_batch(
            offset=2,
            producer_id=7,
            producer_epoch=2,
            commit=commit,
            coordinator_epoch=5,
            timestamp=_TS + 10,
        )
    # what compaction leaves: an empty batch between two that kept their records
    yield (
        _batch(spread[:1], base_offset=0)
        + empty_batch(base_offset=1, last_offset=9, producer_id=3, producer_epoch=0)
        + _batch(spread[1:2], base_offset=10)
    )
    legacy = BatchBuilder(magic=1, compression="gzip", base_offset=5)
    for i in range(3):
        legacy.append(_TS + i * _PAST_INT32, b"k", b"v%d" % i)
    yield legacy.build()


def corpus_seeds(root: Path) -> Iterator[bytes]:
    """The record streams of the corpora under ``root`` (a checkout, or ``fuzz.seeds``'s
    built-in root)."""
    yield from get("stream").seeds(root)


T = TypeVar("T")


class _Feed(Generic[T]):
    """What both sides' inputs share: the seeds, the parents (inputs that showed something,
    mutated again more often than the seeds), and each input a function of the run's seed
    and its index (``key`` tells the sides' sequences apart)."""

    def __init__(self, seeds: list[T], seed: int, key: str) -> None:
        self.seeds, self.seed, self.index, self._key = seeds, seed, 0, key
        self.parents: list[T] = []

    def keep(self, item: T) -> None:
        """``item`` showed a difference: mutate it again, beside the seeds."""
        if len(self.parents) < 256:
            self.parents.append(item)

    def next(self) -> T:
        rng = random.Random(f"{self._key}{self.seed}:{self.index}")
        self.index += 1
        pool = self.parents if self.parents and rng.random() < 0.2 else self.seeds
        item = pool[rng.randrange(len(pool))]
        if rng.random() < SEED_SHARE:
            return item
        return self._mutated(item, rng)

    def _mutated(self, item: T, rng: random.Random) -> T:
        raise NotImplementedError


class Inputs(_Feed[bytes]):
    """The inputs of a run: ``next()`` gives the next one (the module docstring)."""

    def __init__(self, seeds: Iterable[bytes], seed: int = 0, max_len: int = MAX_LEN) -> None:
        kept = [s for s in dict.fromkeys(seeds) if 0 < len(s) <= max_len]
        if not kept:
            raise ValueError("no seed input (the corpora have no record stream)")
        super().__init__(kept, seed, "")
        self.max_len = max_len
        self._mutate = Mutator("stream")

    def _mutated(self, data: bytes, rng: random.Random) -> bytes:
        for _ in range(rng.choice((1, 1, 1, 2, 3))):  # stacked mutations now and then
            try:
                data = self._mutate(data, self.max_len, rng.getrandbits(32))
            except (DecodeError, EncodeError, ValueError, OverflowError):
                break  # the mutator could not re-seal this one: keep what it had
        return data or b"\x00"


# ------------------------------------------------------------------------------------------
# the consume side: partitions served by the fake broker


@dataclass(frozen=True)
class Partition:
    """One consume input: the segments the fake broker serves (their bytes and aborted
    transactions), the consumer's isolation level, and the Fetch response it cuts
    (``Faults.cut_fetch``: ``(n, keep)``, None: none)."""

    segments: tuple[Segment, ...]
    isolation: str = READ_UNCOMMITTED
    cut_fetch: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return sum(len(s.data) for s in self.segments)

    def log(self) -> FetchLog:
        return FetchLog(list(self.segments))

    def describe(self) -> str:
        entries = sum(len(s.aborted) for s in self.segments)
        cut = (
            f", fetch {self.cut_fetch[0]} cut at {self.cut_fetch[1]} bytes"
            if self.cut_fetch
            else ""
        )
        return (
            f"{len(self.segments)} segment(s), {self.size} bytes, {entries} aborted "
            f"transaction(s), {self.isolation}{cut}"
        )


def partition_of(data: bytes, isolation: str = READ_UNCOMMITTED) -> Partition:
    """One segment of record batches ``data`` (based at its first batch's offset), with the
    aborted transactions its markers close, as a broker's ``.txnindex`` holds them."""
    base = max(0, int.from_bytes(data[:8], "big", signed=True)) if len(data) >= 8 else 0
    try:
        found, _ = transactions(data)
    except (DecodeError, ValueError):
        found = []
    aborted = tuple(
        AbortedTxn(0, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
        for t in found
    )
    return Partition((Segment(base, data, (), aborted),), isolation)


def _frames(data: bytes) -> list[tuple[int, int, int]]:
    """``(position, size, magic)`` of each entry of a segment, up to a damaged header."""
    out: list[tuple[int, int, int]] = []
    pos = 0
    while True:
        try:
            framed = file_frame(data, pos)
        except CorruptRecordError:
            return out
        if framed is None:
            return out
        size, magic = framed
        out.append((pos, size, magic))
        pos += size


def _shifted(data: bytes, start: int, by: int) -> bytes:
    """``data`` with the base offset of every entry at or after position ``start`` moved by
    ``by`` (offsets are outside every checksum: the batches stay valid)."""
    out = bytearray(data)
    for pos, _, _ in _frames(data):
        if pos >= start:
            offset = int.from_bytes(out[pos : pos + 8], "big", signed=True) + by
            out[pos : pos + 8] = max(-(2**63), min(2**63 - 1, offset)).to_bytes(
                8, "big", signed=True
            )
    return bytes(out)


def _producer_ids(data: bytes) -> list[int]:
    ids = []
    for pos, size, magic in _frames(data):
        if magic == 2 and size >= layout.RECORD_BATCH_OVERHEAD:
            at = pos + layout.PRODUCER_ID_OFFSET
            ids.append(int.from_bytes(data[at : at + 8], "big", signed=True))
    return [i for i in ids if i >= 0] or [7]


def _entry(producer_id: int, first: int, last: int, stable: int) -> AbortedTxn:
    """A ``.txnindex`` entry, its offsets held to a long (as the file holds them)."""
    lo, hi = -(2**63), 2**63 - 1
    first, last, stable = (max(lo, min(hi, x)) for x in (first, last, stable))
    return AbortedTxn(0, producer_id, first, last, stable)


#: the largest seed partition (the scenario whose batches pass the consumer's fetch size);
#: a segment is mutated record by record up to the mutator's bound (``MAX_LEN``)
CONSUME_MAX_LEN = 2 << 20
#: how far a compaction gap or a shifted entry moves offsets
_STEPS = (1, 2, 3, 10, 1000, 2**31, -1, -2)


class ConsumeInputs(_Feed[Partition]):
    """The consume side's inputs: partitions, seeded and mutated (the module docstring); the
    same seed gives the same partitions."""

    #: mutations, each as often as it is named
    KINDS = (
        "records", "records", "records", "records", "drop-entry", "add-entry", "shift-entry",
        "cut", "gap", "empty", "marker", "isolation", "split",
    )  # fmt: skip

    def __init__(
        self, seeds: Iterable[Partition], seed: int = 0, max_len: int = CONSUME_MAX_LEN
    ) -> None:
        kept = [p for p in seeds if 0 < p.size <= max_len]
        if not kept:
            raise ValueError("no seed partition")
        super().__init__(kept, seed, "consume:")
        self.max_len = max_len
        self._mutate = Mutator("stream")

    def _mutated(self, p: Partition, rng: random.Random) -> Partition:
        for _ in range(rng.choice((1, 1, 2, 3))):
            p = self._once(p, rng)
        return p

    def _once(self, p: Partition, rng: random.Random) -> Partition:
        kind = rng.choice(self.KINDS)
        i = rng.randrange(len(p.segments))
        s = p.segments[i]
        frames = _frames(s.data)

        def put(segment: Segment) -> Partition:
            segments = list(p.segments)
            segments[i] = segment
            return replace(p, segments=tuple(segments))

        if kind == "records" and len(s.data) <= MAX_LEN:  # the mutator's bound
            try:
                data = self._mutate(s.data, MAX_LEN, rng.getrandbits(32))
            except (DecodeError, EncodeError, ValueError, OverflowError):
                return p
            return put(replace(s, data=data or s.data))
        if kind == "isolation":
            other = READ_COMMITTED if p.isolation == READ_UNCOMMITTED else READ_UNCOMMITTED
            return replace(p, isolation=other)
        if kind == "cut":
            return replace(p, cut_fetch=(rng.choice((1, 1, 2)), rng.randrange(p.size + 1)))
        if kind == "drop-entry" and s.aborted:
            kept = list(s.aborted)
            del kept[rng.randrange(len(kept))]
            return put(replace(s, aborted=tuple(kept)))
        if kind == "shift-entry" and s.aborted:
            entries = list(s.aborted)
            j = rng.randrange(len(entries))
            t, by = entries[j], rng.choice(_STEPS)
            entries[j] = _entry(
                t.producer_id, t.first_offset + by * rng.randrange(2),
                t.last_offset + by, t.last_stable_offset,
            )  # fmt: skip
            return put(replace(s, aborted=tuple(entries)))
        if not frames:
            return p
        first = rng.randrange(len(frames))
        base = int.from_bytes(s.data[frames[first][0] : frames[first][0] + 8], "big", signed=True)
        end = p.log().log_end_offset
        if kind == "add-entry":
            pid = rng.choice(_producer_ids(s.data))
            last = rng.choice((end - 1, end, base + rng.randrange(4)))
            entry = _entry(pid, base, last, last + 1)
            return put(replace(s, aborted=(*s.aborted, entry)))
        if kind == "gap":
            return put(replace(s, data=_shifted(s.data, frames[first][0], rng.choice(_STEPS))))
        if kind == "empty":  # what compaction leaves: an empty batch, its offsets kept
            span = rng.choice((1, 2, 10))
            at = frames[first][0]
            hole = empty_batch(base_offset=base, last_offset=base + span - 1)
            data = s.data[:at] + hole + _shifted(s.data[at:], 0, span)
            return put(replace(s, data=data))
        if kind == "marker":  # an end-transaction marker, with or without its entry
            pid, commit = rng.choice(_producer_ids(s.data)), rng.random() < 0.5
            marker = end_txn_marker_batch(
                offset=end, producer_id=pid, producer_epoch=rng.choice((0, 2)),
                commit=commit, coordinator_epoch=0, timestamp=_TS,
            )  # fmt: skip
            s = replace(s, data=s.data + marker)
            if not commit and rng.random() < 0.5:
                s = replace(s, aborted=(*s.aborted, _entry(pid, base, end, end + 1)))
            return put(s)
        if kind == "split" and len(frames) > 1:
            at = frames[rng.randrange(1, len(frames))][0]
            head, tail = s.data[:at], s.data[at:]
            tail_base = int.from_bytes(tail[:8], "big", signed=True)
            if tail_base <= s.base_offset:
                return p
            segments = list(p.segments)
            segments[i : i + 1] = [
                replace(s, data=head, aborted=()),
                Segment(tail_base, tail, (), s.aborted),
            ]
            return replace(p, segments=tuple(segments))
        return p


def consume_seeds(root: Path | None, scratch: Path) -> Iterator[Partition]:
    """The consume side's seeds: the partition of every consume scenario (the corpora's
    under ``root``, the stored ones included; a crafted one written into ``scratch`` where
    the corpora lack it), both isolation levels for a transactional one, then each writer
    seed as one segment."""
    scenarios: list[consume_corpus.ConsumeScenario] = list(consume_corpus.SCENARIOS)
    if root is not None:
        try:  # the stored ones too: promoted findings, seeds of the next hunt
            scenarios = consume_corpus.every_scenario(root)
        except CorpusError:
            pass
    for scenario in scenarios:
        d = consume_corpus.partition_dir(root, scenario) if root is not None else None
        if d is None or not d.is_dir():
            if scenario.write is None:
                continue
            d = scratch / scenario.name / f"{consume_corpus.TOPIC}-0"
            scenario.write(d.parent)
        try:
            log = read_log(d)
        except (OSError, ValueError):
            continue
        segments = tuple(log.segments)
        isolations = {scenario.isolation}
        if any(s.aborted for s in segments):
            isolations |= {READ_COMMITTED, READ_UNCOMMITTED}
        for isolation in sorted(isolations):
            yield Partition(segments, isolation, scenario.cut_fetch)
    for data in writer_seeds():
        yield partition_of(data)
        yield partition_of(data, READ_COMMITTED)
