"""Synthetic Kafka log directories of a chosen size, with corruptions planted at recorded
positions (``kafka-conformance synth``): input for replay jobs, their CI tests and benchmarks.

What :func:`synthesize` writes under ``out`` (a Kafka log directory, docs/synth.md):

* 2-8 partitions (more for bigger corpora) of two topics: ``orders`` (always keyed; offset gaps
  between batches, as compaction leaves them, covered by the root ``cleaner-offset-checkpoint``)
  and ``events`` (some null keys, no gaps); each written by the broker-faithful
  :class:`~conformance.logdir.writer.PartitionWriter` (``.log``, ``.index``, ``.timeindex``,
  ``.txnindex``, ``.snapshot``, ``leader-epoch-checkpoint``, ``partition.metadata``) with a
  ``segment.bytes`` that gives each partition ~3-8 segments (at least 64 KiB);
* batches made by :class:`~conformance.wire.builder.BatchBuilder` only: some partitions start
  with a v0 and/or v1 history (a broker upgrade), then v2; a codec per batch (none, gzip,
  snappy, lz4; zstd for v2); 1-500 records of JSON-like text (a pool built once), headers on
  some v2 batches, increasing timestamps (from a fixed base, never the clock); plain,
  idempotent and transactional producers with COMMIT and ABORT markers; leader epochs;
* the root files ``meta.properties``, the four offset checkpoint files and ``planted.json``.

The same ``(size, corrupt, seed)`` gives byte-identical output; the partitions do not depend on
``corrupt`` (planting draws from its own random stream). Then ``corrupt`` corruptions are
planted in ``.log`` files (indexes stay as the broker wrote them):

===========  ======================================================================================
kind         what changes (never the first batch of a file; an intact batch between two damaged
             regions and after each one but a torn tail; at most 3 per file, spread over files)
===========  ======================================================================================
bitflip      one bit of the CRC-covered bytes: v2 from batch byte 21 (attributes), v0/v1 from
             byte 17 (after the magic); v2 batches and uncompressed v0/v1 messages only (the
             consumer never checks a compressed wrapper's own CRC, docs/format.md §4.1)
bad-length   the size field (batch bytes 8..11): below 14, shorter than the batch, longer but
             ending inside the file, or running past the end of the file (v2 and v0/v1 messages)
zero-fill    up to 4 KiB of zeros from inside a batch, over at most 4 batches
torn-tail    the file cut inside a batch, as a crash mid-write leaves it; one per file, its last
===========  ======================================================================================

Every planted corruption is checked with the kit's decoder (file semantics) before it is kept:
the batch at its position must fail, or (a torn tail, a size past the end) stop the reader.
``planted.json`` (sorted keys, indent 2):

=============  ======================================================================================
field          meaning
=============  ======================================================================================
format         ``"kafka-conformance/synth-1"``
seed, size     the seed and the requested size (the ``.log`` files total about that many bytes)
corrupt        the number of planted corruptions
files          every ``.log``, sorted: ``path`` (relative, posix), ``size`` (final), ``batches`` written
planted        sorted by (file, position); per corruption: ``kind``; ``file``; ``position``, the start
               of the first damaged batch, where a replay must flag it; ``byte_start``/``byte_end``,
               the changed bytes (end exclusive; torn-tail: the cut and the original size);
               ``expect``, what a replay that resumes at the next intact batch reports there:
               ``"partial"`` for a torn tail (the file ends inside a batch), else ``"corrupt"``
               (Kafka's reader fails there, or stops there although intact batches follow: a
               size field past the end of the file); ``resume``, the first intact batch after
               the damage (null for a torn tail); ``detail``, human-readable (which bit, old
               and new size field, ...)
=============  ======================================================================================
"""

from __future__ import annotations

import base64
import bisect
import json
import math
import os
import random
import shutil
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from conformance.fileio import FileSource
from conformance.logdir import checkpoint
from conformance.logdir.writer import LogConfig, PartitionWriter, filename_prefix
from conformance.stream.decoder import StreamDecoder
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch
from conformance.wire.layout import NO_TIMESTAMP

FORMAT = "kafka-conformance/synth-1"
KINDS = ("bitflip", "bad-length", "zero-fill", "torn-tail")
TOPICS = ("orders", "events")
MIN_SEGMENT_BYTES = 64 * 1024
MAX_SEGMENT_BYTES = 1 << 30  # log.segment.bytes default
MAX_BATCH_BYTES = 1 << 20  # about max.message.bytes
MAX_PER_FILE = 3
BASE_TIMESTAMP = 1_700_000_000_000  # 2023-11-14T22:13:20Z
MAX_RECORDS = 500

#: progress callback: ``.log`` bytes written so far
Progress = Callable[[int], None]

_V2, _PLAIN, _WRAPPER = 0, 1, 2  # batch kinds of a file layout
_V2_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
_V2_WEIGHTS = (0.3, 0.15, 0.2, 0.2, 0.15)
_LEGACY_CODECS = ("none", "gzip", "snappy", "lz4")
_LEGACY_WEIGHTS = (0.35, 0.25, 0.2, 0.2)
_POOL = 8192
_ATTEMPTS = 40


# ------------------------------------------------------------------------------ the report

@dataclass(frozen=True, slots=True)
class SynthFile:
    """One ``.log`` file of the corpus."""

    path: str  # relative to the corpus root, posix
    size: int  # final size (after planting)
    batches: int  # batches written

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "batches": self.batches}


@dataclass(frozen=True, slots=True)
class Planted:
    """One planted corruption (see the module docstring for the fields)."""

    kind: str
    file: str
    position: int
    byte_start: int
    byte_end: int
    expect: str
    detail: str
    resume: int | None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, "position": self.position,
                "byte_start": self.byte_start, "byte_end": self.byte_end,
                "expect": self.expect, "detail": self.detail, "resume": self.resume}


@dataclass
class SynthReport:
    """What :func:`synthesize` wrote: ``planted.json`` plus counts and the time it took."""

    root: Path
    size: int  # requested
    corrupt: int
    seed: int
    files: list[SynthFile]
    planted: list[Planted]
    total_bytes: int  # .log bytes written (before planting; torn tails remove some)
    partitions: int
    segments: int  # = .log files
    batches: int
    records: int  # including control records
    elapsed: float  # seconds, planting and planted.json included

    @property
    def mb_per_s(self) -> float:
        return self.total_bytes / 1e6 / self.elapsed if self.elapsed > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``planted.json`` document."""
        return {"format": FORMAT, "seed": self.seed, "size": self.size, "corrupt": self.corrupt,
                "files": [f.to_json() for f in self.files],
                "planted": [p.to_json() for p in self.planted]}


# ------------------------------------------------------------------------------ the plan

@dataclass(frozen=True, slots=True)
class _Plan:
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


def _plan(size: int, seed: int) -> list[_Plan]:
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
        history: tuple[int, ...] = ((0, 1), (1,))[i] if i < 2 else rng.choice(
            ((), (), (0,), (1,), (0, 1)))
        segment = int(budget / rng.uniform(3.5, 7.0))
        plans.append(_Plan(topic, i // 2, budget,
                           max(MIN_SEGMENT_BYTES, min(MAX_SEGMENT_BYTES, segment)),
                           history, rng.uniform(0.08, 0.25) if history else 0.0,
                           topic == "orders", topic_ids[topic]))
    return plans


# ------------------------------------------------------------------------------ content

_WORDS = ("order", "shipped", "payment", "accepted", "warehouse", "customer", "invoice",
          "refund", "priority", "express", "standard", "pending", "delivered", "returned",
          "address", "street", "berlin", "paris", "lisbon", "oslo", "kafka", "stream", "retry",
          "timeout", "gateway", "session", "mobile", "browser", "checkout", "cart", "coupon")
_EVENTS = ("order_created", "order_paid", "order_shipped", "page_view", "click", "login",
           "logout", "cart_add", "cart_remove", "refund_requested")
_CURRENCIES = ("EUR", "USD", "GBP", "NOK", "CHF")


class _Pools:
    """Record contents built once and handed out as slices (no per-record random draws).

    Each list is doubled up to :data:`MAX_RECORDS` so that ``pool[i:i + n]`` never wraps."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(f"{FORMAT}/{seed}/pools")
        values = [self._value(rng, i) for i in range(_POOL)]
        keys: list[bytes | None] = [f"customer-{rng.randrange(10 ** 6):06d}".encode()
                                    for _ in range(_POOL)]
        nullable = [None if rng.random() < 0.2 else k for k in keys]
        headers = [(("trace-id", rng.getrandbits(64).to_bytes(8, "big").hex().encode()),
                    ("source", f"svc-{rng.randrange(12)}".encode()))
                   + ((("retry", b"1"),) if rng.random() < 0.1 else ())
                   for _ in range(_POOL)]
        self.values = values + values[:MAX_RECORDS]
        self.keys = keys + keys[:MAX_RECORDS]
        self.nullable_keys = nullable + nullable[:MAX_RECORDS]
        self.headers = headers + headers[:MAX_RECORDS]
        self.mean_value = sum(map(len, values)) / len(values)

    @staticmethod
    def _value(rng: random.Random, i: int) -> bytes:
        doc = {
            "id": f"{rng.getrandbits(64):016x}", "seq": i, "type": rng.choice(_EVENTS),
            "user": f"u{rng.randrange(10 ** 6)}", "amount": round(rng.uniform(0, 5000), 2),
            "currency": rng.choice(_CURRENCIES), "ok": rng.random() < 0.9,
            "items": [rng.randrange(10 ** 5) for _ in range(rng.randint(0, 8))],
            "note": " ".join(rng.choices(_WORDS, k=rng.randint(3, 110))),
        }
        return json.dumps(doc, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------ writing

@dataclass
class _FileLayout:
    """The batches of one ``.log`` as written: lengths and kinds (v2 / message / wrapper)."""

    path: str
    lengths: array[int] = field(default_factory=lambda: array("q"))
    kinds: bytearray = field(default_factory=bytearray)
    last_in_partition: bool = False

    def positions(self) -> list[int]:
        """Batch starts, plus the original file size at the end."""
        return [0, *accumulate(self.lengths)]


@dataclass
class _Producer:
    pid: int
    epoch: int
    transactional: bool
    coordinator_epoch: int
    seq: int = 0
    open_batches: int = 0  # data batches left in the open transaction (0: none open)


class _PartitionGen:
    """Writes one partition with its own random stream (so partitions are independent)."""

    def __init__(self, root: Path, plan: _Plan, pools: _Pools, seed: int,
                 on_bytes: Callable[[int], None]) -> None:
        self.plan, self.pools, self.on_bytes = plan, pools, on_bytes
        self.rng = rng = random.Random(f"{FORMAT}/{seed}/{plan.topic}-{plan.partition}")
        config = LogConfig(segment_bytes=plan.segment_bytes, index_interval_bytes=4096)
        self.writer = PartitionWriter(root, plan.topic, plan.partition, config,
                                      topic_id=plan.topic_id)
        self.max_batch = min(plan.segment_bytes // 4, MAX_BATCH_BYTES)
        self.offset = 0
        self.ts = BASE_TIMESTAMP + rng.randrange(3_600_000)
        self.written = self.records = 0
        self.files: list[_FileLayout] = []
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
            self.files.append(_FileLayout(f"{w.dir.name}/{filename_prefix(base)}.log"))
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
        n = rng.randint(1, 10) if r < 0.25 else rng.randint(10, 100) if r < 0.65 else \
            rng.randint(100, MAX_RECORDS)
        cap = int(min(self.max_batch, max(remaining, 1)) / self.per_record[codec])
        return max(1, min(n, cap))

    def _learn(self, codec: str, raw: bytes, n: int) -> None:
        self.per_record[codec] = 0.7 * self.per_record[codec] + 0.3 * len(raw) / n

    def _fill(self, builder: BatchBuilder, n: int, timestamps: bool, headers: bool) -> None:
        """Append ``n`` records from the pools (slices: no per-record random draws)."""
        rng, pools = self.rng, self.pools
        v, k = rng.randrange(_POOL), rng.randrange(_POOL)
        values = pools.values[v:v + n]
        keys = (pools.keys if self.plan.keyed else pools.nullable_keys)[k:k + n]
        append = builder.append
        if not timestamps:  # v0: no timestamps
            for key, value in zip(keys, values):
                append(NO_TIMESTAMP, key, value)
            return
        ts, step = self.ts, rng.randint(0, 3)
        if headers:
            h = rng.randrange(_POOL)
            for i, (key, value, hs) in enumerate(zip(keys, values, pools.headers[h:h + n])):
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
                self._append(b.build(), _PLAIN, 1)
                self.offset += 1
            return
        n = self._count(codec, end - self.written)
        b = BatchBuilder(magic=magic, compression=codec, base_offset=self.offset)
        self._fill(b, n, magic > 0, False)
        raw = b.build()
        self._learn(codec, raw, n)
        self._append(raw, _WRAPPER, n)
        self.offset += n

    def _marker(self, p: _Producer) -> None:
        commit = self.rng.random() < 0.75
        raw = end_txn_marker_batch(offset=self.offset, producer_id=p.pid,
                                   producer_epoch=p.epoch, commit=commit,
                                   coordinator_epoch=p.coordinator_epoch, timestamp=self.ts,
                                   partition_leader_epoch=self.leader_epoch)
        self._append(raw, _V2, 1)
        self.offset += 1
        self.ts += 1

    def _v2(self, end: int) -> None:
        rng = self.rng
        if rng.random() < 0.01:
            self.leader_epoch += 1  # a leader change
        r = rng.random()
        p = None if r < 0.45 else self.producers[rng.randrange(3)] if r < 0.75 else \
            self.producers[3 + rng.randrange(2)]
        if (self.written < self.gap_until and rng.random() < 0.08
                and not any(q.open_batches for q in self.producers)):
            self.offset += rng.randint(1, 300)  # records removed by compaction
            self.cleaned_upto = self.offset
        codec = rng.choices(_V2_CODECS, _V2_WEIGHTS)[0]
        n = self._count(codec, end - self.written)
        producer: dict[str, Any] = {}
        if p is not None:
            producer = {"producer_id": p.pid, "producer_epoch": p.epoch,
                        "base_sequence": p.seq, "is_transactional": p.transactional}
            if p.transactional and not p.open_batches:
                p.open_batches = rng.randint(1, 4)  # a transaction begins
            p.seq += n
        b = BatchBuilder(magic=2, compression=codec, base_offset=self.offset,
                         partition_leader_epoch=self.leader_epoch, **producer)
        self._fill(b, n, True, rng.random() < 0.4)
        raw = b.build()
        self._learn(codec, raw, n)
        self._append(raw, _V2, n)
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


def _write_root_files(out: Path, done: Sequence[tuple[_Plan, _PartitionGen]], seed: int) -> None:
    """``meta.properties`` and the offset checkpoints a clean shutdown leaves."""
    rng = random.Random(f"{FORMAT}/{seed}/root")
    (out / checkpoint.META_PROPERTIES).write_text(
        f"#\nnode.id=1\ndirectory.id={_uuid(rng)}\nversion=1\ncluster.id={_uuid(rng)}\n")
    ends = [checkpoint.OffsetEntry(p.topic, p.partition, g.writer.next_offset) for p, g in done]
    cleaned = [checkpoint.OffsetEntry(p.topic, p.partition,
                                      max(g.cleaned_upto, g.writer.active.base_offset))
               for p, g in done if g.cleaned_upto >= 0]
    for name, entries in (("recovery-point-offset-checkpoint", ends),
                          ("replication-offset-checkpoint", ends),
                          ("log-start-offset-checkpoint", []),
                          ("cleaner-offset-checkpoint", cleaned)):
        (out / name).write_bytes(checkpoint.write_offset_checkpoint(entries))


# ------------------------------------------------------------------------------ planting

def _verdict(path: Path, position: int) -> str:
    """How the kit's decoder (file semantics) reads the batch at ``position`` of ``path``:
    ``"corrupt"`` (it fails on that batch), ``"partial"`` (it stops there: the entry does not
    end inside the file) or ``"ok"`` (the batch decodes)."""
    with FileSource(path, start=position) as source:
        decoder = StreamDecoder(source, mode="file", keep=0)
        first = next(iter(decoder), None)
        if decoder.error is not None and not decoder.error.position:
            return "corrupt"
        if first is None and decoder.tail is not None and decoder.tail.position == 0:
            return "partial"
        return "ok"


def _ordered(kinds: list[str]) -> list[str]:
    """A file's corruptions in file order: a torn tail is last."""
    return [k for k in kinds if k != "torn-tail"] + [k for k in kinds if k == "torn-tail"]


def _windows(layout: _FileLayout, kinds: Sequence[str]) -> list[tuple[int, int]] | None:
    """Batch-index windows ``[lo, hi)`` splitting batches 1.. of the file, one per corruption;
    None when one does not fit. A corruption in ``[lo, hi)`` leaves batch ``hi - 1`` intact
    (a torn tail, always the last, may start anywhere in its window)."""
    n, m = len(layout.lengths), len(kinds)
    bounds = [1 + (n - 1) * j // m for j in range(m + 1)]
    out = []
    for j, kind in enumerate(kinds):
        lo, hi = bounds[j], bounds[j + 1]
        top = hi - 1 if kind == "torn-tail" else hi - 2
        if top < lo:
            return None
        if kind in ("bitflip", "bad-length") and layout.kinds.find(_V2, lo, top + 1) < 0 \
                and layout.kinds.find(_PLAIN, lo, top + 1) < 0:
            return None
        out.append((lo, hi))
    return out


def _assign(layouts: list[_FileLayout], n: int, rng: random.Random) -> list[list[str]]:
    """Which corruptions each file gets: every kind when ``n >= 4``, spread over the files
    (the least loaded first; torn tails first, preferably in a partition's last segment)."""
    order = list(KINDS)
    rng.shuffle(order)
    kinds = sorted((order[i % len(KINDS)] for i in range(n)), key=lambda k: k != "torn-tail")
    tie = [rng.random() for _ in layouts]
    assigned: list[list[str]] = [[] for _ in layouts]
    for kind in kinds:
        def load(i: int, kind: str = kind) -> tuple[int, bool, float]:
            torn_elsewhere = kind == "torn-tail" and not layouts[i].last_in_partition
            return len(assigned[i]), torn_elsewhere, tie[i]

        for i in sorted(range(len(layouts)), key=load):
            trial = _ordered(assigned[i] + [kind])
            if trial.count("torn-tail") <= 1 and len(trial) <= MAX_PER_FILE \
                    and _windows(layouts[i], trial) is not None:
                assigned[i] = trial
                break
        else:
            batches = sum(len(f.lengths) for f in layouts)
            raise ValueError(
                f"the corpus is too small to plant {n} corruptions ({len(layouts)} .log files, "
                f"{batches} batches; a corruption needs two batches of its file, the first batch "
                f"is never touched, at most {MAX_PER_FILE} per file): use a larger size or fewer "
                "corruptions")
    return assigned


class _FilePlanter:
    """Plants the corruptions of one file, each checked with :func:`_verdict`."""

    def __init__(self, root: Path, layout: _FileLayout, rng: random.Random,
                 variants: list[str]) -> None:
        self.path = root / layout.path
        self.layout, self.rng, self.variants = layout, rng, variants
        self.pos = layout.positions()
        self.size = self.pos[-1]
        self.fd = -1

    def _batch(self, a: int) -> str:
        """``"78-byte v2 control batch"``: the batch ``a`` as the detail names it."""
        head = self.pread(23, self.pos[a])
        kind = self.layout.kinds[a]
        if kind == _V2:
            name = "v2 control batch" if head[22] & 0x20 else "v2 batch"
        else:
            name = f"v{head[16]} {'message' if kind == _PLAIN else 'wrapper'}"
        return f"{self.pos[a + 1] - self.pos[a]}-byte {name}"

    def pread(self, n: int, at: int) -> bytes:
        return os.pread(self.fd, n, at)

    def plant(self, kinds: list[str], windows: list[tuple[int, int]]) -> list[Planted]:
        out = []
        self.fd = os.open(self.path, os.O_RDWR)
        try:
            # the torn tail first: the others need the final file size
            for j in sorted(range(len(kinds)), key=lambda j: kinds[j] != "torn-tail"):
                kind, (lo, hi) = kinds[j], windows[j]
                for _ in range(_ATTEMPTS):
                    made = getattr(self, "_" + kind.replace("-", "_"))(lo, hi)
                    if made is None:
                        continue
                    planted, undo = made
                    # a torn tail is where Kafka's reader stops; anything else must fail or
                    # stop it there (intact batches follow: a replay reports it as corrupt)
                    seen = _verdict(self.path, planted.position)
                    if seen == planted.expect or (kind != "torn-tail" and seen != "ok"):
                        out.append(planted)
                        break
                    if undo is None:
                        raise RuntimeError(f"{planted}: the decoder does not see it")
                    os.pwrite(self.fd, *undo)
                else:
                    raise RuntimeError(f"no detectable {kind} found in {self.layout.path}")
        finally:
            os.close(self.fd)
        return out

    def _eligible(self, lo: int, top: int) -> int:
        """A random batch in ``[lo, top]`` that is v2 or an uncompressed v0/v1 message."""
        kinds = self.layout.kinds
        for _ in range(16):
            a = self.rng.randint(lo, top)
            if kinds[a] != _WRAPPER:
                return a
        return self.rng.choice([a for a in range(lo, top + 1) if kinds[a] != _WRAPPER])

    def _make(self, kind: str, a: int, start: int, end: int, expect: str, detail: str,
              last: int | None = None) -> Planted:
        resume = None if kind == "torn-tail" else self.pos[(a if last is None else last) + 1]
        return Planted(kind, self.layout.path, self.pos[a], start, end, expect, detail, resume)

    def _bitflip(self, lo: int, hi: int) -> tuple[Planted, tuple[bytes, int]]:
        a = self._eligible(lo, hi - 2)
        first = 21 if self.layout.kinds[a] == _V2 else 17  # CRC-covered from here
        at = self.pos[a] + self.rng.randrange(first, self.pos[a + 1] - self.pos[a])
        bit = self.rng.randrange(8)
        old = self.pread(1, at)
        os.pwrite(self.fd, bytes([old[0] ^ (1 << bit)]), at)
        detail = (f"bit {bit} of byte {at - self.pos[a]} of the {self._batch(a)}: "
                  f"0x{old[0]:02x} -> 0x{old[0] ^ (1 << bit):02x}")
        return self._make("bitflip", a, at, at + 1, "corrupt", detail), (old, at)

    def _bad_length(self, lo: int, hi: int) -> tuple[Planted, tuple[bytes, int]]:
        a = self._eligible(lo, hi - 2)
        rng, true = self.rng, self.pos[a + 1] - self.pos[a] - 12
        room = self.size - self.pos[a] - 12  # the largest size that still ends inside the file
        feasible = {"below-minimum": True, "shorter": true > 14, "longer": room > true,
                    "past-end": room < 0x7FFFFFFF}
        variant = next(v for v in self.variants if feasible[v])
        self.variants.append(self.variants.pop(self.variants.index(variant)))  # cycle them
        if variant == "below-minimum":
            value, why = rng.randint(0, 13), "below the minimum 14"
        elif variant == "shorter":
            value, why = rng.randint(14, true - 1), "shorter than the batch"
        elif variant == "longer":
            value, why = rng.randint(true + 1, room), "longer, ending inside the file"
        else:
            value, why = rng.randint(room + 1, 0x7FFFFFFF), "running past the end of the file"
        at = self.pos[a] + 8
        old = self.pread(4, at)
        os.pwrite(self.fd, value.to_bytes(4, "big", signed=True), at)
        detail = f"size field of the {self._batch(a)}: {true} -> {value} ({why})"
        return self._make("bad-length", a, at, at + 4, "corrupt", detail), (old, at)

    def _zero_fill(self, lo: int, hi: int) -> tuple[Planted, tuple[bytes, int]] | None:
        pos, rng = self.pos, self.rng
        a = rng.randint(lo, hi - 2)
        start = pos[a] + rng.randrange(pos[a + 1] - pos[a])
        end = min(start + rng.randint(32, 4096), pos[min(a + 4, hi - 1)])
        old = self.pread(end - start, start)
        skip, keep = len(old) - len(old.lstrip(b"\0")), len(old.rstrip(b"\0"))
        if keep <= skip:
            return None  # nothing to change there
        start, end, old = start + skip, start + keep, old[skip:keep]
        first = bisect.bisect_right(pos, start) - 1
        last = bisect.bisect_right(pos, end - 1) - 1
        while last > first and end - pos[last] <= 21:
            # a batch whose offset / leader epoch only would change still passes its CRC:
            # the region stops before it
            old = old[: pos[last] - start].rstrip(b"\0")  # old[0] is not zero
            end = start + len(old)
            last = bisect.bisect_right(pos, end - 1) - 1
        os.pwrite(self.fd, bytes(end - start), start)
        detail = (f"{end - start} bytes zeroed from byte {start - pos[first]} of the "
                  f"{self._batch(first)}; {last - first + 1} batch(es) damaged")
        return self._make("zero-fill", first, start, end, "corrupt", detail, last), (old, start)

    def _torn_tail(self, lo: int, hi: int) -> tuple[Planted, None]:
        a = self.rng.randint(lo, hi - 1)
        length = self.pos[a + 1] - self.pos[a]
        cut = self.pos[a] + self.rng.randint(12, length - 1)  # the size field stays: not zeros
        detail = (f"file cut {cut - self.pos[a]} bytes into the {self._batch(a)} "
                  f"({self.size - cut} bytes and {len(self.layout.lengths) - a} batch(es) lost)")
        planted = self._make("torn-tail", a, cut, self.size, "partial", detail)
        os.ftruncate(self.fd, cut)
        self.size = cut
        return planted, None


def _plant(root: Path, layouts: list[_FileLayout], n: int, seed: int) -> list[Planted]:
    rng = random.Random(f"{FORMAT}/{seed}/plant")
    assigned = _assign(layouts, n, rng) if n else []
    variants = ["below-minimum", "shorter", "longer", "past-end"]
    rng.shuffle(variants)
    planted: list[Planted] = []
    for layout, kinds in zip(layouts, assigned):
        if kinds:
            windows = _windows(layout, kinds)
            assert windows is not None
            planted += _FilePlanter(root, layout, rng, variants).plant(kinds, windows)
    return sorted(planted, key=lambda p: (p.file, p.position))


# ------------------------------------------------------------------------------ entry point

def _prepare(out: Path) -> bool:
    """Create ``out``; True when it did not exist. ValueError when it is a non-empty directory
    or not a directory."""
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise ValueError(f"{out}: exists and is not a directory")
        if any(out.iterdir()):
            raise ValueError(f"{out}: exists and is not empty (synth writes a new corpus)")
        return False
    out.mkdir(parents=True)
    return True


def _remove_contents(out: Path, created: bool) -> None:
    if created:
        shutil.rmtree(out, ignore_errors=True)
        return
    for child in out.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _partitions(out: Path, size: int, seed: int,
                progress: Progress | None) -> Iterator[tuple[_Plan, _PartitionGen]]:
    pools = _Pools(seed)
    total = 0

    def on_bytes(n: int) -> None:
        nonlocal total
        total += n
        if progress is not None:
            progress(total)

    for plan in _plan(size, seed):
        gen = _PartitionGen(out, plan, pools, seed, on_bytes)
        gen.run()
        yield plan, gen


def synthesize(out: str | os.PathLike[str], size: int, *, corrupt: int = 0, seed: int = 0,
               progress: Progress | None = None) -> SynthReport:
    """Write a synthetic log directory of about ``size`` bytes of ``.log`` under ``out`` (a new
    or empty directory), plant ``corrupt`` corruptions, write ``out/planted.json``.

    Deterministic in ``(size, corrupt, seed)``. ``progress`` is called with the ``.log`` bytes
    written so far. Raises ``ValueError`` when ``out`` exists and is not an empty directory,
    for a size <= 0 or a negative ``corrupt``, and when the corpus is too small for ``corrupt``
    corruptions (what was written is removed then)."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"size must be a positive number of bytes, not {size!r}")
    if isinstance(corrupt, bool) or not isinstance(corrupt, int) or corrupt < 0:
        raise ValueError(f"corrupt must be a number >= 0, not {corrupt!r}")
    root = Path(out)
    created = _prepare(root)
    started = time.perf_counter()
    done = list(_partitions(root, size, seed, progress))
    _write_root_files(root, done, seed)
    layouts = [f for _, gen in done for f in gen.files]
    try:
        planted = _plant(root, layouts, corrupt, seed)
    except ValueError:
        _remove_contents(root, created)
        raise
    files = sorted((SynthFile(f.path, os.path.getsize(root / f.path), len(f.lengths))
                    for f in layouts), key=lambda f: f.path)
    report = SynthReport(
        root=root, size=size, corrupt=corrupt, seed=seed, files=files, planted=planted,
        total_bytes=sum(gen.written for _, gen in done), partitions=len(done),
        segments=len(layouts), batches=sum(len(f.lengths) for f in layouts),
        records=sum(gen.records for _, gen in done), elapsed=0.0,
    )
    (root / "planted.json").write_text(json.dumps(report.to_json(), sort_keys=True, indent=2)
                                       + "\n")
    report.elapsed = time.perf_counter() - started
    return report


__all__ = [
    "FORMAT",
    "KINDS",
    "Planted",
    "Progress",
    "SynthFile",
    "SynthReport",
    "synthesize",
]
