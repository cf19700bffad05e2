"""Planting corruptions in a written synthetic corpus, each checked with the kit's decoder
(the package docstring lists the kinds and what ``planted.json`` records)."""

from __future__ import annotations

import bisect
import os
import random
from collections.abc import Sequence
from pathlib import Path

from conformance.corpus.synth.model import (
    FORMAT,
    KINDS,
    MAX_PER_FILE,
    PLAIN,
    V2,
    WRAPPER,
    FileLayout,
    Planted,
)
from conformance.fileio import FileSource
from conformance.stream.decoder import StreamDecoder

__all__ = ["plant"]

_ATTEMPTS = 40


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


def _windows(layout: FileLayout, kinds: Sequence[str]) -> list[tuple[int, int]] | None:
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
        if (
            kind in ("bitflip", "bad-length")
            and layout.kinds.find(V2, lo, top + 1) < 0
            and layout.kinds.find(PLAIN, lo, top + 1) < 0
        ):
            return None
        out.append((lo, hi))
    return out


def _assign(layouts: list[FileLayout], n: int, rng: random.Random) -> list[list[str]]:
    """Which corruptions each file gets: every kind when ``n >= 4``, spread over the files
    (the least loaded first; torn tails first, preferably in a partition's last segment)."""
    order = list(KINDS)
    rng.shuffle(order)
    kinds = sorted((order[i % len(KINDS)] for i in range(n)), key=lambda k: k != "torn-tail")
    tie = [rng.random() for _ in layouts]
    assigned: list[list[str]] = [[] for _ in layouts]
    for kind in kinds:

        def occupancy(i: int, kind: str = kind) -> tuple[int, bool, float]:
            torn_elsewhere = kind == "torn-tail" and not layouts[i].last_in_partition
            return len(assigned[i]), torn_elsewhere, tie[i]

        for i in sorted(range(len(layouts)), key=occupancy):
            trial = _ordered(assigned[i] + [kind])
            if (
                trial.count("torn-tail") <= 1
                and len(trial) <= MAX_PER_FILE
                and _windows(layouts[i], trial) is not None
            ):
                assigned[i] = trial
                break
        else:
            batches = sum(len(f.lengths) for f in layouts)
            raise ValueError(
                f"the corpus is too small to plant {n} corruptions ({len(layouts)} .log files, "
                f"{batches} batches; a corruption needs two batches of its file, the first batch "
                f"is never touched, at most {MAX_PER_FILE} per file): use a larger size or fewer "
                "corruptions"
            )
    return assigned


class _FilePlanter:
    """Plants the corruptions of one file, each checked with :func:`_verdict`."""

    def __init__(
        self, root: Path, layout: FileLayout, rng: random.Random, variants: list[str]
    ) -> None:
        self.path = root / layout.path
        self.layout, self.rng, self.variants = layout, rng, variants
        self.pos = layout.positions()
        self.size = self.pos[-1]
        self.fd = -1

    def _batch(self, a: int) -> str:
        """``"78-byte v2 control batch"``: the batch ``a`` as the detail names it."""
        head = self.pread(23, self.pos[a])
        kind = self.layout.kinds[a]
        if kind == V2:
            name = "v2 control batch" if head[22] & 0x20 else "v2 batch"
        else:
            name = f"v{head[16]} {'message' if kind == PLAIN else 'wrapper'}"
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
            if kinds[a] != WRAPPER:
                return a
        return self.rng.choice([a for a in range(lo, top + 1) if kinds[a] != WRAPPER])

    def _make(
        self,
        kind: str,
        a: int,
        start: int,
        end: int,
        expect: str,
        detail: str,
        last: int | None = None,
    ) -> Planted:
        resume = None if kind == "torn-tail" else self.pos[(a if last is None else last) + 1]
        return Planted(kind, self.layout.path, self.pos[a], start, end, expect, detail, resume)

    def _bitflip(self, lo: int, hi: int) -> tuple[Planted, tuple[bytes, int]]:
        a = self._eligible(lo, hi - 2)
        first = 21 if self.layout.kinds[a] == V2 else 17  # CRC-covered from here
        at = self.pos[a] + self.rng.randrange(first, self.pos[a + 1] - self.pos[a])
        bit = self.rng.randrange(8)
        old = self.pread(1, at)
        os.pwrite(self.fd, bytes([old[0] ^ (1 << bit)]), at)
        detail = (
            f"bit {bit} of byte {at - self.pos[a]} of the {self._batch(a)}: "
            f"0x{old[0]:02x} -> 0x{old[0] ^ (1 << bit):02x}"
        )
        return self._make("bitflip", a, at, at + 1, "corrupt", detail), (old, at)

    def _bad_length(self, lo: int, hi: int) -> tuple[Planted, tuple[bytes, int]]:
        a = self._eligible(lo, hi - 2)
        rng, true = self.rng, self.pos[a + 1] - self.pos[a] - 12
        room = self.size - self.pos[a] - 12  # the largest size that still ends inside the file
        feasible = {
            "below-minimum": True,
            "shorter": true > 14,
            "longer": room > true,
            "past-end": room < 0x7FFFFFFF,
        }
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
        detail = (
            f"{end - start} bytes zeroed from byte {start - pos[first]} of the "
            f"{self._batch(first)}; {last - first + 1} batch(es) damaged"
        )
        return self._make("zero-fill", first, start, end, "corrupt", detail, last), (old, start)

    def _torn_tail(self, lo: int, hi: int) -> tuple[Planted, None]:
        a = self.rng.randint(lo, hi - 1)
        length = self.pos[a + 1] - self.pos[a]
        cut = self.pos[a] + self.rng.randint(12, length - 1)  # the size field stays: not zeros
        detail = (
            f"file cut {cut - self.pos[a]} bytes into the {self._batch(a)} "
            f"({self.size - cut} bytes and {len(self.layout.lengths) - a} batch(es) lost)"
        )
        planted = self._make("torn-tail", a, cut, self.size, "partial", detail)
        os.ftruncate(self.fd, cut)
        self.size = cut
        return planted, None


def plant(root: Path, layouts: list[FileLayout], n: int, seed: int) -> list[Planted]:
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
