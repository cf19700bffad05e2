#!/usr/bin/env python3
"""Where a small batch's decode time goes (issue 43's shapes below target): µs per batch of
each step of the kit's decode of one-record (or few-record) batches, in one process, the
same input as ``bench/decode_shapes.py`` (``decode_throughput.make_records`` and
``build_stream``), against aiokafka's C extension and kafka-python on the same bytes.

Steps (each the best of ``--repeat`` runs over the whole input, per batch):

=======================  =====================================================================
step                     what runs
=======================  =====================================================================
checks alone             the extension's ``scan_plain`` (framing, CRC-32C, every record
                         checked; no object): uncompressed shapes only
codec library            each batch's payload decompressed by the codec library the kit
                         reads with, called from Python (``decode_throughput``'s bound)
stream, no record        ``for b in StreamDecoder(data): pass``: the checks plus the objects
                         of each batch (header, record list, decoded batch) and the generator
records made             ``for b in batches: for r in b.records: pass`` over batches already
                         decoded: each ``Record`` made and the record lists' iteration
touch                    the benchmark's touch loop over ``Record`` s already made
stream + touch           what ``decode_shapes`` times as ``stream`` (``StreamDecoder``)
decode(), no record      ``decode(data)``: the stream's work plus every batch kept
decode() + touch         what ``decode_shapes`` times as ``decode()``
decode() bytes kept      bytes per batch still allocated after a ``decode()``, its result held
=======================  =====================================================================

Usage::

    .venv/bin/python bench/small_batches.py                     # 1 and 10 records, none/gzip/lz4
    .venv/bin/python bench/small_batches.py --sizes 1 --codecs none --values random
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import decode_throughput as dt  # noqa: E402


def _touch(records: Iterable) -> int:  # type: ignore[type-arg]
    acc = 0
    for r in records:  # the same reads as decode_throughput's runners
        acc += r.offset + r.timestamp + len(r.key) + len(r.value) + len(r.headers)
    return acc


def _best(f: Callable[[], object], batches: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best / batches * 1e6


def _aiokafka(data: bytes) -> Callable[[], object] | None:
    """decode_throughput's ``aiokafka-c`` runner on ``data`` (None: its C extension is not
    what ``MemoryRecords`` is here)."""
    try:
        from aiokafka.record import memory_records
    except ImportError:
        return None
    cls = memory_records.MemoryRecords
    if "_crecords" not in cls.__module__:
        return None
    run = dt._make_memory_records_runner(cls)
    return lambda: run(data)


def steps(data: bytes, batches: int, codec: str, repeat: int) -> dict[str, float | None]:
    from conformance import StreamDecoder, decode
    from conformance.primitives import native
    from conformance.wire.layout import RECORDS_OFFSET

    if native.NATIVE is None:
        raise SystemExit("the native extension is not in use: scripts/build-native first")

    def stream_touch() -> int:
        acc = 0
        for b in StreamDecoder(data):
            acc += _touch(b.records)
        return acc

    def stream_only() -> None:
        for _ in StreamDecoder(data):
            pass

    kept = decode(data)
    assert kept.outcome == "ok", kept.error
    made = list(kept.records)
    aio = _aiokafka(data)
    decompress = dt.bound_decompressors().get(kept.batches[0].header.compression_id)
    payloads = [b.header.raw[RECORDS_OFFSET:] for b in kept.batches]

    def codec_library() -> None:
        assert decompress is not None
        for payload in payloads:
            decompress(payload)

    out: dict[str, float | None] = {
        "checks alone": (
            _best(lambda: native.NATIVE.scan_plain(data, 0, len(data)), batches, repeat)
            if codec == "none"
            else None
        ),
        "codec library": (
            _best(codec_library, batches, repeat) if decompress is not None else None
        ),
        "stream, no record": _best(stream_only, batches, repeat),
        "records made": _best(
            lambda: [None for b in kept.batches for _ in b.records], batches, repeat
        ),
        "touch": _best(lambda: _touch(made), batches, repeat),
        "stream + touch": _best(stream_touch, batches, repeat),
        "decode(), no record": _best(lambda: decode(data), batches, repeat),
        "decode() + touch": _best(lambda: _touch(decode(data).records), batches, repeat),
        "aiokafka-c": _best(aio, batches, repeat) if aio is not None else None,
        "decode() bytes kept": _kept_bytes(data) / batches,
    }
    return out


def _kept_bytes(data: bytes) -> float:
    """Bytes still allocated after ``decode(data)``, its result held (``tracemalloc``)."""
    import tracemalloc

    from conformance import decode

    tracemalloc.start()
    try:
        held = decode(data)
        kept, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del held
    return float(kept)


def _cell(name: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0f}" if name.endswith("bytes kept") else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--records", type=int, default=30000)
    p.add_argument("--sizes", default="1,10", help="records per batch (default 1,10)")
    p.add_argument("--codecs", default="none,gzip,lz4")
    p.add_argument("--values", default="text", choices=dt.VALUE_KINDS)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    records = dt.make_records(args.records, args.seed, args.values)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for codec in args.codecs.split(","):
            data = dt.build_stream(records, codec, size)
            got = steps(data, -(-args.records // size), codec, args.repeat)
            rows.append((size, codec, got))
            print(
                f"# {args.values} {size} {codec}: "
                + ", ".join(f"{k} {_cell(k, v)}" for k, v in got.items()),
                flush=True,
            )
    names = list(rows[0][2])
    print()
    print("| records/batch | codec | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for size, codec, got in rows:
        cells = [_cell(n, got[n]) for n in names]
        print(f"| {size} | {codec} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
