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

Every input is a function of the run's seed and its index (:meth:`Inputs.next`): the same
seed, corpora and kit give the same inputs, so a run can be repeated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from conformance.codecs import CODEC_IDS
from conformance.errors import DecodeError, EncodeError
from conformance.fuzz.mutator import Mutator
from conformance.fuzz.targets import MAX_LEN, get
from conformance.wire.builder import BatchBuilder, empty_batch, end_txn_marker_batch

__all__ = ["Inputs", "corpus_seeds", "writer_seeds"]

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


class Inputs:
    """The inputs of a run: ``next()`` gives the next one (the module docstring)."""

    def __init__(self, seeds: Iterable[bytes], seed: int = 0, max_len: int = MAX_LEN) -> None:
        self.seeds = [s for s in dict.fromkeys(seeds) if 0 < len(s) <= max_len]
        if not self.seeds:
            raise ValueError("no seed input (the corpora have no record stream)")
        self.max_len = max_len
        self.seed = seed
        self.index = 0
        #: inputs that showed something, mutated again more often than the seeds
        self.parents: list[bytes] = []
        self._mutate = Mutator("stream")

    def keep(self, data: bytes) -> None:
        """``data`` showed a difference: mutate it again, beside the seeds."""
        if len(self.parents) < 256:
            self.parents.append(data)

    def next(self) -> bytes:
        rng = random.Random(f"{self.seed}:{self.index}")
        self.index += 1
        pool = self.parents if self.parents and rng.random() < 0.2 else self.seeds
        data = pool[rng.randrange(len(pool))]
        if rng.random() < SEED_SHARE:
            return data
        for _ in range(rng.choice((1, 1, 1, 2, 3))):  # stacked mutations now and then
            try:
                data = self._mutate(data, self.max_len, rng.getrandbits(32))
            except (DecodeError, EncodeError, ValueError, OverflowError):
                break  # the mutator could not re-seal this one: keep what it had
        return data or b"\x00"
