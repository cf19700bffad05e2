#!/usr/bin/env python3
"""The codec stage of a decode against the codec libraries called directly.

For each codec, the payloads of the decode benchmark's batches (``bench/decode_throughput.py``'s
generator: 200,000 records in batches of 500 by default) are decompressed

* by the kit: ``codecs.read_whole`` (the one-pass fast path), and ``codecs.read_stream`` (the
  Java model) where the fast path declines;
* by the *bound*: the library alone, as ``decode_throughput.bound_decompressors`` calls it
  (zlib, cramjam, lz4, zstandard: the libraries the kit reads with);

best of ``--repeat`` passes each, in one process, one run. The ratio kit / bound is what the
kit's Python around the library costs; it is why the codecs stay on the Python bindings (the
Rust crates wrap the same libraries: snappy is the ``snap`` crate under cramjam, zstd the
same libzstd), docs/native.md.

example:
  .venv/bin/python bench/codec_stage.py --records 200000 --repeat 7
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import decode_throughput as dt  # noqa: E402  (sibling script: data and the bound)

from conformance import StreamDecoder, codecs  # noqa: E402
from conformance.wire.layout import RECORDS_OFFSET  # noqa: E402


def best(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__[__doc__.index("example:") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--records", type=int, default=200_000)
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    records = dt.make_records(args.records, args.seed)
    bound = dt.bound_decompressors()
    print("| codec | batches | kit ms | bound ms | kit / bound | fast path taken |")
    print("|---|---|---|---|---|---|")
    for name in ("gzip", "snappy", "lz4", "zstd"):
        data = dt.build_stream(records, name, args.batch_size)
        payloads = [bytes(b.raw[RECORDS_OFFSET:]) for b in StreamDecoder(data)]
        cid = codecs.CODEC_IDS[name]
        taken = sum(codecs.read_whole(cid, p) is not None for p in payloads)

        def kit(cid: int = cid, payloads: list[bytes] = payloads) -> None:
            for payload in payloads:
                if codecs.read_whole(cid, payload) is None:
                    codecs.read_stream(cid, payload, 2).data  # noqa: B018

        def lib(
            f: Callable[[bytes], object] = bound[cid], payloads: list[bytes] = payloads
        ) -> None:
            for payload in payloads:
                f(payload)

        k, b = best(kit, args.repeat), best(lib, args.repeat)
        print(
            f"| {name} | {len(payloads)} | {k * 1e3:.1f} | {b * 1e3:.1f} | {k / b:.2f} | "
            f"{taken}/{len(payloads)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
