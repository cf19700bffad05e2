"""A high-volume random differential run of the native path: many millions of inputs.

The atheris target ``native`` (:mod:`conformance.fuzz.native`) is coverage-guided and checks
each input three ways through whole decodes, at a few hundred inputs a second. This run
trades the guidance for volume. It is not coverage-guided: every input is a seeded random
mutation of a well-formed input, checked directly against the reference, at tens of
thousands of inputs a second, so millions of inputs take minutes.

* **v2 records regions** (three inputs in four): records written by the real writer
  (``write_record_v2``) with random keys, values, headers, deltas and attributes. Then a few
  random byte edits (flip, set, insert, delete), a count off by -1..1, random bases and
  log-append time. Each goes through :func:`conformance.fuzz.native._check_region`:
  ``read_records_v2`` (and the pure loop) must either decline or give exactly the reference
  reader's rows and ``Record`` objects.
* **compressed v0/v1 wrapper payloads** (one in four): inner messages written by the real
  writer (``write_legacy_message``), mutated the same way. ``read_legacy_records`` must
  either decline or give exactly the records that the reference's
  ``LegacyBatch.read_records`` hands out for a gzip wrapper of that payload (fast paths off),
  without error.

``python -m conformance.fuzz.native_random --inputs 10000000 --jobs 2 --seed 1`` prints the
counters as JSON. A difference stops the run with the seed and the input's index, and
:func:`replay_input` rebuilds that input.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from conformance import codecs
from conformance.errors import DecodeError
from conformance.fuzz import native as target
from conformance.primitives import native as _native
from conformance.wire import batch as _batch
from conformance.wire._record_fast import record_maker
from conformance.wire.legacy import LegacyBatch, write_legacy_message, write_legacy_wrapper
from conformance.wire.record import Record, write_record_v2

__all__ = ["main", "replay_input", "run"]

_KEYS = ["trace", "h", "\u00e9t\u00e9", "content-type", ""]


def _bytes(rng: random.Random, most: int) -> bytes | None:
    n = rng.choice((-1, 0, 1, 3, 16, rng.randrange(most + 1)))
    return None if n < 0 else rng.randbytes(n)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        if not buf:
            break
        i = rng.randrange(len(buf))
        op = rng.randrange(4)
        if op == 0:
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[i] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif op == 2:
            buf.insert(i, rng.randrange(256))
        else:
            del buf[i]
    return bytes(buf)


def _region(rng: random.Random) -> tuple[bytes, int]:
    records = []
    for i in range(rng.choice((1, 1, 2, 3, 5, 12))):
        headers = [(rng.choice(_KEYS), _bytes(rng, 20)) for _ in range(rng.choice((0, 0, 1, 2, 5)))]
        records.append(
            write_record_v2(
                i if rng.randrange(10) else rng.randrange(-(2**31), 2**31),
                rng.choice((i * 3, rng.randrange(-(2**40), 2**40))),
                _bytes(rng, 40),
                _bytes(rng, 300),
                headers,
                rng.choice((0, 0, rng.randrange(256))),
            )
        )
    return b"".join(records), len(records)


def _legacy_payload(rng: random.Random) -> tuple[bytes, int]:
    magic = rng.randrange(2)
    entries = [
        write_legacy_message(
            magic,
            rng.choice((i, rng.randrange(-5, 10_000))),
            rng.randrange(2**41),
            _bytes(rng, 30),
            _bytes(rng, 200),
            rng.choice((0, 0, 0x08)) if magic else 0,
        )
        for i in range(rng.choice((1, 2, 4, 9)))
    ]
    return b"".join(entries), magic


def _check_legacy(module: Any, rng: random.Random) -> None:
    payload, magic = _legacy_payload(rng)
    payload = _mutate(rng, payload)
    wrapper_offset = rng.choice((0, 8, 10_000, rng.randrange(2**40)))
    lat = rng.choice((None, None, 1_700_000_000_000)) if magic else None
    wrapper = write_legacy_wrapper(
        magic,
        wrapper_offset,
        lat if lat is not None else 1_600_000_000_000,
        [],
        codecs.GZIP,
        0x08 if lat is not None else 0,
        payload=codecs.write_stream(codecs.GZIP, payload, magic),
    )
    COUNTERS["legacy"] += 1
    got = module.read_legacy_records(
        payload, 0, magic, wrapper_offset, lat, 1 << 30, record_maker(module)
    )
    if got is None:
        COUNTERS["legacy_declined"] += 1
        return
    COUNTERS["legacy_accepted"] += 1
    ref: list[Record] = []
    saved = _batch.FAST_PATH
    _batch.FAST_PATH = False
    try:
        LegacyBatch(wrapper).read_records(ref)
    except DecodeError as e:
        raise target.AcceptedRefused(f"legacy payload accepted, reference: {e!r}") from None
    finally:
        _batch.FAST_PATH = saved
    count, made = got
    fields = [[getattr(r, f) for f in Record.__slots__] for r in made]
    want = [[getattr(r, f) for f in Record.__slots__] for r in ref]
    if count != len(ref) or fields != want:
        raise target.RowsDiffer(f"legacy: {fields!r:.600} != reference {want!r:.600}")


COUNTERS: dict[str, int] = {"inputs": 0, "legacy": 0, "legacy_accepted": 0, "legacy_declined": 0}


def _one(module: Any, rng: random.Random) -> None:
    COUNTERS["inputs"] += 1
    if rng.randrange(4) == 0:
        _check_legacy(module, rng)
        return
    region, count = _region(rng)
    region = _mutate(rng, region)
    count = max(0, count + rng.choice((0, 0, 0, -1, 1)))
    base_offset = rng.choice((0, 1000, rng.randrange(-(2**62) + 1, 2**62)))
    base_ts = rng.choice((1_700_000_000_000, -1, rng.randrange(-(2**62) + 1, 2**62)))
    lat = rng.choice((None, None, None, 1_700_000_000_999))
    keep = rng.choice((None, None, 0, 1, 3))
    target._check_region(module, region, 0, count, base_offset, base_ts, lat, keep)


def replay_input(seed: int, index: int) -> None:
    """Check input ``index`` of the run seeded ``seed`` again (raises what it raised)."""
    rng = random.Random(f"{seed}:{index}")
    module = target._module()
    saved = _native.NATIVE
    try:
        _one(module, rng)
    finally:
        _native.NATIVE = saved


def run(seed: int, start: int, count: int) -> dict[str, int]:
    """Inputs ``start .. start + count`` of the run seeded ``seed``: the counters."""
    module = target._module()
    saved = _native.NATIVE
    for table in (target.COUNTERS, COUNTERS):  # this chunk's counts only (workers are reused)
        for key in table:
            table[key] = 0
    try:
        for index in range(start, start + count):
            try:
                _one(module, random.Random(f"{seed}:{index}"))
            except Exception as e:
                raise RuntimeError(f"input {index} of seed {seed}: {type(e).__name__}: {e}") from e
    finally:
        _native.NATIVE = saved
    return {**target.counters(), **COUNTERS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m conformance.fuzz.native_random",
        description="Random differential run of the native path against the reference "
        "(not coverage-guided; see docs/fuzzing.md).",
        epilog="example: python -m conformance.fuzz.native_random --inputs 10000000 --jobs 2",
    )
    p.add_argument("--inputs", type=int, default=100_000, help="inputs (default 100000)")
    p.add_argument("--seed", type=int, default=1, help="run seed (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    args = p.parse_args(argv)
    why = target.unavailable()
    if why:
        print(f"native_random: cannot run: {why}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    chunk = 50_000
    starts = range(0, args.inputs, chunk)
    totals: dict[str, int] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run, args.seed, s, min(chunk, args.inputs - s)) for s in starts]
        for i, f in enumerate(futures, 1):
            try:
                part = f.result()
            except RuntimeError as e:
                print(f"native_random: DIFFERENCE: {e}", file=sys.stderr)
                pool.shutdown(cancel_futures=True)
                return 1
            for k, v in part.items():
                totals[k] = totals.get(k, 0) + v
            if i % 10 == 0 or i == len(futures):
                done = totals.get("inputs", 0)
                rate = done / (time.perf_counter() - started)
                print(f"native_random: {done} inputs, {rate:.0f}/s", file=sys.stderr)
    totals["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(totals, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
