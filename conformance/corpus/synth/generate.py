"""Writing the partitions of a synthetic corpus: the plan (partitions, budgets, histories), the
record contents (pools built once) and one generator per partition, writing through the
broker-faithful ``PartitionWriter`` (the package docstring describes the corpus)."""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.codecs import CODEC_IDS, legacy_codecs
from conformance.corpus.synth.model import (
    BASE_TIMESTAMP,
    FORMAT,
    MAX_BATCH_BYTES,
    MAX_RECORDS,
    MAX_SEGMENT_BYTES,
    MIN_SEGMENT_BYTES,
    PLAIN,
    TOPICS,
    V2,
    WRAPPER,
    FileLayout,
    ProgressCallback,
)
from conformance.logdir import checkpoint
from conformance.logdir.writer import LogConfig, PartitionWriter, filename_prefix
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch
from conformance.wire.layout import NO_TIMESTAMP

__all__ = ["PartitionGen", "Plan", "partitions", "write_root_files"]

#: how often each codec is drawn, per batch (a codec not named here: 0.15)
_V2_SHARE = {"none": 0.3, "gzip": 0.15, "snappy": 0.2, "lz4": 0.2, "zstd": 0.15}
_LEGACY_SHARE = {"none": 0.35, "gzip": 0.25, "snappy": 0.2, "lz4": 0.2}
_V2_CODECS = tuple(CODEC_IDS)
_V2_WEIGHTS = tuple(_V2_SHARE.get(name, 0.15) for name in _V2_CODECS)
_LEGACY_CODECS = tuple(c.name for c in legacy_codecs())
_LEGACY_WEIGHTS = tuple(_LEGACY_SHARE.get(name, 0.15) for name in _LEGACY_CODECS)
_POOL = 8192


# ------------------------------------------------------------------------------ the plan


@dataclass(frozen=True, slots=True)
class Plan:
    topic: str
    partition: int
    budget: int  # .log bytes to write
    segment_bytes: int
    legacy: tuple[int, ...]  # magics of the history before v2, in order
    legacy_share: float  # of the budget
    keyed: bool  # orders: keys always set, compaction-like offset gaps
    topic_id: str


def _uuid(rng: random.Random) -> str:
    """A Kafka ``Uuid`` string (22 base64url characters)."""
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


def _plan(size: int, seed: int) -> list[Plan]:
    """Partitions, their byte budgets, segment sizes and histories (partition 0 of ``orders``
    has a v0 and a v1 history, partition 0 of ``events`` a v1 one, others by lot)."""
    rng = random.Random(f"{FORMAT}/{seed}/plan")
    count = max(2, min(8, 2 + int(math.log(max(size, 1) / (1 << 20), 4))))
    topic_ids = {t: _uuid(rng) for t in TOPICS}
    weights = [rng.uniform(0.7, 1.3) for _ in range(count)]
    budgets = [int(size * w / sum(weights)) for w in weights]
    budgets[-1] += size - sum(budgets)
    plans = []
    for i, budget in enumerate(budgets):
        topic = TOPICS[i % 2]
        history: tuple[int, ...] = (
            ((0, 1), (1,))[i] if i < 2 else rng.choice(((), (), (0,), (1,), (0, 1)))
        )
        segment = int(budget / rng.uniform(3.5, 7.0))
        plans.append(
            Plan(
                topic,
                i // 2,
                budget,
                max(MIN_SEGMENT_BYTES, min(MAX_SEGMENT_BYTES, segment)),
                history,
                rng.uniform(0.08, 0.25) if history else 0.0,
                topic == "orders",
                topic_ids[topic],
            )
        )
    return plans


# ------------------------------------------------------------------------------ content
_WORDS = tuple(
    "order shipped payment accepted warehouse customer invoice refund priority express "
    "standard pending delivered returned address street berlin paris lisbon oslo kafka stream "
    "retry timeout gateway session mobile browser checkout cart coupon".split()
)
_EVENTS = tuple(
    "order_created order_paid order_shipped page_view click login logout cart_add cart_remove "
    "refund_requested".split()
)
_CURRENCIES = ("EUR", "USD", "GBP", "NOK", "CHF")


class _Pools:
    """Record contents built once and handed out as slices (no per-record random draws).

    Each list is doubled up to :data:`MAX_RECORDS` so that ``pool[i:i + n]`` never wraps."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(f"{FORMAT}/{seed}/pools")
        values = [self._value(rng, i) for i in range(_POOL)]
        keys: list[bytes | None] = [
            f"customer-{rng.randrange(10**6):06d}".encode() for _ in range(_POOL)
        ]
        nullable = [None if rng.random() < 0.2 else k for k in keys]
        headers = [
            (
                ("trace-id", rng.getrandbits(64).to_bytes(8, "big").hex().encode()),
                ("source", f"svc-{rng.randrange(12)}".encode()),
            )
            + ((("retry", b"1"),) if rng.random() < 0.1 else ())
            for _ in range(_POOL)
        ]
        self.values = values + values[:MAX_RECORDS]
        self.keys = keys + keys[:MAX_RECORDS]
        self.nullable_keys = nullable + nullable[:MAX_RECORDS]
        self.headers = headers + headers[:MAX_RECORDS]
        self.mean_value = sum(map(len, values)) / len(values)

    @staticmethod
    def _value(rng: random.Random, i: int) -> bytes:
        doc = {
            "id": f"{rng.getrandbits(64):016x}",
            "seq": i,
            "type": rng.choice(_EVENTS),
            "user": f"u{rng.randrange(10**6)}",
            "amount": round(rng.uniform(0, 5000), 2),
            "currency": rng.choice(_CURRENCIES),
            "ok": rng.random() < 0.9,
            "items": [rng.randrange(10**5) for _ in range(rng.randint(0, 8))],
            "note": " ".join(rng.choices(_WORDS, k=rng.randint(3, 110))),
        }
        return json.dumps(doc, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------ writing


@dataclass
class _Producer:
    pid: int
    epoch: int
    transactional: bool
    coordinator_epoch: int
    seq: int = 0
    open_batches: int = 0  # data batches left in the open transaction (0: none open)


class PartitionGen:
    """Writes one partition with its own random stream (so partitions are independent)."""

    def __init__(
        self, root: Path, plan: Plan, pools: _Pools, seed: int, on_bytes: Callable[[int], None]
    ) -> None:
        self.plan, self.pools, self.on_bytes = plan, pools, on_bytes
        self.rng = rng = random.Random(f"{FORMAT}/{seed}/{plan.topic}-{plan.partition}")
        config = LogConfig(segment_bytes=plan.segment_bytes, index_interval_bytes=4096)
        self.writer = PartitionWriter(
            root, plan.topic, plan.partition, config, topic_id=plan.topic_id
        )
        self.max_batch = min(plan.segment_bytes // 4, MAX_BATCH_BYTES)
        self.offset = 0
        self.ts = BASE_TIMESTAMP + rng.randrange(3_600_000)
        self.written = self.records = 0
        self.files: list[FileLayout] = []
        self.base = -1
        self.leader_epoch = rng.randint(0, 3)
        self.gap_until = int(plan.budget * 0.6) if plan.keyed else 0
        self.cleaned_upto = -1  # first offset after the last gap
        overhead = 80.0
        self.per_record = {c: pools.mean_value * 1.3 + overhead for c in _V2_CODECS}
        self.producers = [
            _Producer(rng.randrange(1000, 1 << 40), rng.randint(0, 5), i >= 3, rng.randint(0, 9))
            for i in range(5)  # 3 idempotent, 2 transactional
        ]

    # -- bookkeeping
    def _append(self, raw: bytes, kind: int, records: int) -> None:
        w = self.writer
        w.append(raw)
        base = w.active.base_offset
        if base != self.base:
            self.files.append(FileLayout(f"{w.dir.name}/{filename_prefix(base)}.log"))
            self.base = base
        layout = self.files[-1]
        layout.lengths.append(len(raw))
        layout.kinds.append(kind)
        self.written += len(raw)
        self.records += records
        self.on_bytes(len(raw))

    def _count(self, codec: str, remaining: int) -> int:
        """Records for the next batch: a skewed draw of 1-500, capped so the batch stays under
        the batch limit and about fills what is left of the budget."""
        rng = self.rng
        r = rng.random()
        n = (
            rng.randint(1, 10)
            if r < 0.25
            else rng.randint(10, 100)
            if r < 0.65
            else rng.randint(100, MAX_RECORDS)
        )
        cap = int(min(self.max_batch, max(remaining, 1)) / self.per_record[codec])
        return max(1, min(n, cap))

    def _learn(self, codec: str, raw: bytes, n: int) -> None:
        self.per_record[codec] = 0.7 * self.per_record[codec] + 0.3 * len(raw) / n

    def _fill(self, builder: BatchBuilder, n: int, timestamps: bool, headers: bool) -> None:
        """Append ``n`` records from the pools (slices: no per-record random draws)."""
        rng, pools = self.rng, self.pools
        v, k = rng.randrange(_POOL), rng.randrange(_POOL)
        values = pools.values[v : v + n]
        keys = (pools.keys if self.plan.keyed else pools.nullable_keys)[k : k + n]
        append = builder.append
        if not timestamps:  # v0: no timestamps
            for key, value in zip(keys, values):
                append(NO_TIMESTAMP, key, value)
            return
        ts, step = self.ts, rng.randint(0, 3)
        if headers:
            h = rng.randrange(_POOL)
            for i, (key, value, hs) in enumerate(zip(keys, values, pools.headers[h : h + n])):
                append(ts + i * step, key, value, hs)
        else:
            for i, (key, value) in enumerate(zip(keys, values)):
                append(ts + i * step, key, value)
        self.ts = ts + n * step + rng.randint(1, 2000)

    # -- batches
    def _legacy(self, magic: int, end: int) -> None:
        rng = self.rng
        codec = rng.choices(_LEGACY_CODECS, _LEGACY_WEIGHTS)[0]
        if codec == "none":  # uncompressed v0/v1: one message per log entry
            for _ in range(rng.randint(1, 20)):
                if self.written >= end:
                    return
                b = BatchBuilder(magic=magic, base_offset=self.offset)
                self._fill(b, 1, magic > 0, False)
                self._append(b.build(), PLAIN, 1)
                self.offset += 1
            return
        n = self._count(codec, end - self.written)
        b = BatchBuilder(magic=magic, compression=codec, base_offset=self.offset)
        self._fill(b, n, magic > 0, False)
        raw = b.build()
        self._learn(codec, raw, n)
        self._append(raw, WRAPPER, n)
        self.offset += n

    def _marker(self, p: _Producer) -> None:
        commit = self.rng.random() < 0.75
        raw = end_txn_marker_batch(
            offset=self.offset,
            producer_id=p.pid,
            producer_epoch=p.epoch,
            commit=commit,
            coordinator_epoch=p.coordinator_epoch,
            timestamp=self.ts,
            partition_leader_epoch=self.leader_epoch,
        )
        self._append(raw, V2, 1)
        self.offset += 1
        self.ts += 1

    def _v2(self, end: int) -> None:
        rng = self.rng
        if rng.random() < 0.01:
            self.leader_epoch += 1  # a leader change
        r = rng.random()
        p = (
            None
            if r < 0.45
            else self.producers[rng.randrange(3)]
            if r < 0.75
            else self.producers[3 + rng.randrange(2)]
        )
        if (
            self.written < self.gap_until
            and rng.random() < 0.08
            and not any(q.open_batches for q in self.producers)
        ):
            self.offset += rng.randint(1, 300)  # records removed by compaction
            self.cleaned_upto = self.offset
        codec = rng.choices(_V2_CODECS, _V2_WEIGHTS)[0]
        n = self._count(codec, end - self.written)
        producer: dict[str, Any] = {}
        if p is not None:
            producer = {
                "producer_id": p.pid,
                "producer_epoch": p.epoch,
                "base_sequence": p.seq,
                "is_transactional": p.transactional,
            }
            if p.transactional and not p.open_batches:
                p.open_batches = rng.randint(1, 4)  # a transaction begins
            p.seq += n
        b = BatchBuilder(
            magic=2,
            compression=codec,
            base_offset=self.offset,
            partition_leader_epoch=self.leader_epoch,
            **producer,
        )
        self._fill(b, n, True, rng.random() < 0.4)
        raw = b.build()
        self._learn(codec, raw, n)
        self._append(raw, V2, n)
        self.offset += n
        if p is not None and p.transactional:
            p.open_batches -= 1
            if not p.open_batches:
                self._marker(p)

    def run(self) -> PartitionWriter:
        plan = self.plan
        end = 0
        for magic in plan.legacy:
            end += int(plan.budget * plan.legacy_share / len(plan.legacy))
            while self.written < end:
                self._legacy(magic, end)
        while self.written < plan.budget or not self.files:
            self._v2(plan.budget)
        for p in self.producers:  # no transaction is left hanging
            if p.open_batches:
                p.open_batches = 0
                self._marker(p)
        self.writer.close()
        self.files[-1].last_in_partition = True
        return self.writer


def write_root_files(out: Path, done: Sequence[tuple[Plan, PartitionGen]], seed: int) -> None:
    """``meta.properties`` and the offset checkpoints a clean shutdown leaves."""
    rng = random.Random(f"{FORMAT}/{seed}/root")
    (out / checkpoint.META_PROPERTIES).write_text(
        f"#\nnode.id=1\ndirectory.id={_uuid(rng)}\nversion=1\ncluster.id={_uuid(rng)}\n"
    )
    ends = [checkpoint.OffsetEntry(p.topic, p.partition, g.writer.next_offset) for p, g in done]
    cleaned = [
        checkpoint.OffsetEntry(
            p.topic, p.partition, max(g.cleaned_upto, g.writer.active.base_offset)
        )
        for p, g in done
        if g.cleaned_upto >= 0
    ]
    for name, entries in (
        ("recovery-point-offset-checkpoint", ends),
        ("replication-offset-checkpoint", ends),
        ("log-start-offset-checkpoint", []),
        ("cleaner-offset-checkpoint", cleaned),
    ):
        (out / name).write_bytes(checkpoint.write_offset_checkpoint(entries))


def partitions(
    out: Path, size: int, seed: int, progress: ProgressCallback | None
) -> Iterator[tuple[Plan, PartitionGen]]:
    pools = _Pools(seed)
    total = 0

    def on_bytes(n: int) -> None:
        nonlocal total
        total += n
        if progress is not None:
            progress(total)

    for plan in _plan(size, seed):
        gen = PartitionGen(out, plan, pools, seed, on_bytes)
        gen.run()
        yield plan, gen
