#!/usr/bin/env python3
"""Full-decode throughput: the reference decoder vs kafka-python vs aiokafka.

Every implementation decodes the *same* bytes: magic-2 batches built with
``conformance.wire.builder.BatchBuilder`` (500 records per batch, ~16-byte keys, ~100-byte
semi-random text values, one header per record, increasing timestamps), concatenated,
once per codec. A run is a full decode of all the bytes:

* ``ours-native``   ``conformance.decode(data)`` (CRC-32C checked inside), outcome must be
                    ``ok``; every record of ``result.records`` is touched; the native
                    extension in use (skipped when it is not installed);
* ``ours-pure``     the same with ``KAFKA_CONFORMANCE_PURE=1`` (the pure-Python path);
* ``ours-native-stream``, ``ours-pure-stream``: the kit's streaming API (``StreamDecoder``),
                    one batch decoded and handed out at a time, nothing kept: the same shape
                    of work as the ``MemoryRecords`` loops of aiokafka and kafka-python
                    (``decode()`` keeps every batch, so its memory is fresh pages);
* ``bound``         what no decoder can beat: CRC-32C of every batch plus the decompression of
                    its records with the same codec libraries, nothing else (no record read);
* ``ours``          whichever path the kit picks (``bench/compare_checkouts.py``);
* ``kafka-python``  ``kafka.record.MemoryRecords``: ``next_batch()``, ``validate_crc()``,
                    iterate and touch every record;
* ``aiokafka-py``   ``aiokafka.record.memory_records.MemoryRecords`` with
                    ``AIOKAFKA_NO_EXTENSIONS=1`` (pure Python), same loop;
* ``aiokafka-c``    the same with aiokafka's Cython extensions.

"Touch" reads offset, timestamp, key, value and headers of every record and folds them into
a checksum that must match the generator's, so no implementation can skip work lazily.

Sensitivity variants (not part of the headline ratio, on by default, see ``--impls``):

* ``kafka-python+ccrc``  kafka-python with its CRC-32C routed to google-crc32c, i.e. what a
                         user gets after ``pip install crc32c`` (kafka-python otherwise uses a
                         per-byte pure-Python CRC table);
* ``ours-purecrc``       ours-pure with the pure-Python CRC-32C of ``conformance.primitives.crc``.

Each (codec, implementation) pair runs in its own subprocess (fresh interpreter, no monkey
patch leaks, aiokafka's extension switch is an import-time environment variable); the time is
the best of ``--repeat`` runs (``time.perf_counter``). MB/s is of the encoded input
(1 MB = 10**6 bytes).

Example::

    .venv/bin/python bench/decode_throughput.py --records 200000 --repeat 5 \\
        --codecs none,gzip,snappy,lz4,zstd --json bench.json \\
        --markdown docs/benchmarks-throughput.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

from conformance.codecs import CODEC_IDS  # noqa: E402 - after the sys.path line above

ALL_CODECS = tuple(CODEC_IDS)  # every codec
HEADLINE_IMPLS = (
    "ours-native-stream",
    "ours-native",
    "ours-pure-stream",
    "ours-pure",
    "aiokafka-c",
    "kafka-python+ccrc",
    "bound",
)
VARIANT_IMPLS = ("kafka-python", "aiokafka-py", "ours-purecrc", "ours-native-validate")
#: implementations that check the bytes without reading every record (no checksum to match)
UNCHECKED_IMPLS = ("bound", "ours-native-validate")
ALL_IMPLS = HEADLINE_IMPLS + VARIANT_IMPLS + ("ours",)
#: issue 26's targets: ours-native >= 1.0x aiokafka-c and >= 5x kafka-python (C CRC)
TARGET_VS_AIOKAFKA_C = 1.0
TARGET_VS_KAFKA_PYTHON = 5.0
#: the environment variable that forces the kit's pure path (conformance.primitives.native)
PURE_ENV = "KAFKA_CONFORMANCE_PURE"

BASE_TIMESTAMP = 1_700_000_000_000
_WORDS = (
    "kafka record batch offset timestamp producer consumer partition leader epoch "
    "header value key stream topic broker replica segment index commit abort fetch "
    "produce log compaction tombstone sequence idempotent transaction marker control "
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
).split()


# ------------------------------------------------------------------------------ data


#: the kinds of values ``make_records`` writes: words (compress like text) or random bytes
VALUE_KINDS = ("text", "random")


def make_records(
    n: int, seed: int, values: str = "text"
) -> list[tuple[int, bytes, bytes, list[tuple[str, bytes]]]]:
    """Deterministic synthetic records: (timestamp, key, value, headers); ``values``:
    ``text`` (words, ~100 bytes) or ``random`` (as many random bytes: incompressible)."""
    if values not in VALUE_KINDS:
        raise ValueError(f"values must be one of {VALUE_KINDS}, not {values!r}")
    rng = random.Random(seed)
    out = []
    ts = BASE_TIMESTAMP
    words = _WORDS
    for i in range(n):
        ts += rng.randint(0, 3)
        key = f"user-{rng.randrange(10**11):011d}".encode()  # 16 bytes
        target = rng.randint(90, 110)
        parts: list[str] = []
        size = 0
        while size < target:
            w = rng.choice(words)
            parts.append(w)
            size += len(w) + 1
        text = " ".join(parts)
        value = f"{i}:{text}".encode()[:target]
        if values == "random":
            value = rng.randbytes(len(value))
        headers = [("trace-id", f"{rng.getrandbits(64):016x}".encode())]
        out.append((ts, key, value, headers))
    return out


def expected_checksum(records: list, batch_size: int) -> int:
    """What ``_touch`` folds over a correct decode (offsets are 0..n-1)."""
    acc = 0
    for offset, (ts, key, value, headers) in enumerate(records):
        acc += offset + ts + len(key) + len(value) + len(headers)
    return acc


def build_stream(records: list, codec: str, batch_size: int) -> bytes:
    from conformance.wire.builder import BatchBuilder

    parts = []
    for start in range(0, len(records), batch_size):
        b = BatchBuilder(magic=2, compression=codec, base_offset=start)
        for ts, key, value, headers in records[start : start + batch_size]:
            b.append(ts, key, value, headers)
        parts.append(b.build())
    return b"".join(parts)


# ---------------------------------------------------------------------------- workers
# Each runner decodes ``data`` fully once and returns (records seen, checksum). The touch
# loop is textually identical everywhere so its cost is the same for every implementation.


def _run_ours(data: bytes) -> tuple[int, int]:
    from conformance import decode

    result = decode(data)
    if result.outcome != "ok":
        raise AssertionError(f"decode outcome {result.outcome}: {result.error or result.tail}")
    count = 0
    acc = 0
    for r in result.records:
        o = r.offset
        t = r.timestamp
        k = r.key
        v = r.value
        h = r.headers
        acc += o + t + len(k) + len(v) + len(h)
        count += 1
    return count, acc


def _run_ours_stream(data: bytes) -> tuple[int, int]:
    """The kit's streaming API (``StreamDecoder``): one batch decoded, checked and handed out
    at a time, as aiokafka's and kafka-python's ``MemoryRecords`` do; nothing is kept."""
    from conformance import StreamDecoder

    decoder = StreamDecoder(data)
    count = 0
    acc = 0
    for batch in decoder:
        for r in batch.records:
            o = r.offset
            t = r.timestamp
            k = r.key
            v = r.value
            h = r.headers
            acc += o + t + len(k) + len(v) + len(h)
            count += 1
    if decoder.outcome != "ok":
        raise AssertionError(f"decode outcome {decoder.outcome}: {decoder.error}")
    return count, acc


def _run_ours_validate(data: bytes) -> tuple[int, int]:
    """The kit's verdict without a record object: ``StreamDecoder(keep=0)`` (every batch and
    record checked, records counted, none made)."""
    from conformance import StreamDecoder

    decoder = StreamDecoder(data, keep=0)
    count = 0
    for batch in decoder:
        count += batch.records.total
    if decoder.outcome != "ok":
        raise AssertionError(f"decode outcome {decoder.outcome}: {decoder.error}")
    return count, -1


def _make_memory_records_runner(memory_records_cls):  # type: ignore[no-untyped-def]
    def run(data: bytes) -> tuple[int, int]:
        mr = memory_records_cls(data)
        count = 0
        acc = 0
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            if not batch.validate_crc():
                raise AssertionError("CRC check failed")
            for r in batch:
                o = r.offset
                t = r.timestamp
                k = r.key
                v = r.value
                h = r.headers
                acc += o + t + len(k) + len(v) + len(h)
                count += 1
        return count, acc

    return run


def _install_snappy_shim() -> str | None:
    """kafka-python needs python-snappy (module ``snappy``) for snappy; offer cramjam's."""
    import kafka.codec

    if kafka.codec.snappy is not None:
        return None
    import types

    import cramjam

    def decompress(b: bytes) -> bytes:
        return bytes(cramjam.snappy.decompress_raw(b))

    kafka.codec.snappy = types.SimpleNamespace(decompress=decompress)
    return "python-snappy not installed: kafka-python's snappy uses a cramjam shim"


def _setup_runner(impl: str, codec: str, snappy_shim: bool):  # type: ignore[no-untyped-def]
    notes: list[str] = []
    if impl in ("ours-native-stream", "ours-pure-stream"):
        from conformance.primitives import native

        if (native.NATIVE is None) != (impl == "ours-pure-stream"):
            raise _Skip(native.implementation())
        notes.append(f"{impl}: {native.implementation()}")
        return _run_ours_stream, notes
    if impl == "ours-native-validate":
        from conformance.primitives import native

        if native.NATIVE is None:
            raise _Skip(native.implementation())
        return _run_ours_validate, notes
    if impl in ("ours", "ours-native", "ours-pure"):
        from conformance.primitives import native

        if impl == "ours-native" and native.NATIVE is None:
            raise _Skip(native.implementation())
        if impl == "ours-pure" and native.NATIVE is not None:
            raise RuntimeError(f"worker started without {PURE_ENV}")
        notes.append(f"{impl}: {native.implementation()}")
        return _run_ours, notes
    if impl == "ours-purecrc":
        import conformance.wire.batch
        from conformance.primitives.crc import crc32c_pure

        def crc32c(data: bytes, start: int = 0) -> int:
            return crc32c_pure(data[start:])

        conformance.wire.batch.crc32c = crc32c  # RecordBatchV2.computed_crc looks it up here
        return _run_ours, notes
    if impl == "bound":
        return _bound_runner(codec), notes
    if impl in ("kafka-python", "kafka-python+ccrc"):
        import kafka.codec
        import kafka.record.default_records as kdr
        from kafka.record import MemoryRecords

        if codec == "snappy" and not kafka.codec.has_snappy():
            if not snappy_shim:
                raise _Skip("python-snappy not installed (kafka-python needs it for snappy)")
            notes.append(_install_snappy_shim() or "")
        if impl == "kafka-python+ccrc":
            import google_crc32c

            def calc_crc32c(memview, _v=google_crc32c.value):  # type: ignore[no-untyped-def]
                return _v(bytes(memview))

            kdr.calc_crc32c = calc_crc32c  # validate_crc looks it up as a module global
        return _make_memory_records_runner(MemoryRecords), notes
    if impl in ("aiokafka-py", "aiokafka-c"):
        want_py = impl == "aiokafka-py"
        if bool(os.environ.get("AIOKAFKA_NO_EXTENSIONS")) != want_py:
            raise RuntimeError("worker started with the wrong AIOKAFKA_NO_EXTENSIONS")
        from aiokafka.record import memory_records

        cls = memory_records.MemoryRecords
        is_py = cls.__name__.startswith("_") or "_crecords" not in cls.__module__
        if is_py != want_py:
            raise _Skip(f"wanted {impl} but got {cls.__module__}.{cls.__qualname__}")
        return _make_memory_records_runner(cls), notes
    raise ValueError(f"unknown implementation {impl!r}")


def bound_decompressors() -> dict[int, Callable[[bytes], object]]:
    """The bound's decompression per codec id: the codec libraries the kit reads with (zlib,
    cramjam, lz4, zstandard), called directly, nothing modelled (bench/native_scan.py too)."""
    import zlib

    import cramjam
    import lz4.frame
    import zstandard

    from conformance import codecs

    def xerial(b: bytes) -> bytes:
        if not b.startswith(b"\x82SNAPPY\x00"):
            return bytes(cramjam.snappy.decompress_raw(b))
        out, pos = [], 16  # the xerial header, then [int32 length][raw block]*
        while pos + 4 <= len(b):
            (n,) = struct.unpack_from(">i", b, pos)
            out.append(bytes(cramjam.snappy.decompress_raw(b[pos + 4 : pos + 4 + n])))
            pos += 4 + n
        return b"".join(out)

    return {
        codecs.GZIP: lambda b: zlib.decompressobj(31).decompress(b),
        codecs.SNAPPY: xerial,
        codecs.LZ4: lz4.frame.decompress,
        codecs.ZSTD: lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
    }


def _bound_runner(codec: str):  # type: ignore[no-untyped-def]
    """CRC-32C of each batch and the decompression of its records, nothing else."""
    from conformance.codecs import CODEC_IDS
    from conformance.primitives.crc import crc32c

    decompress = bound_decompressors().get(CODEC_IDS[codec])

    def run(data: bytes) -> tuple[int, int]:
        pos, count, n = 0, 0, len(data)
        while pos < n:
            (length,) = struct.unpack_from(">i", data, pos + 8)
            end = pos + 12 + length
            raw = data[pos:end]
            (stored,) = struct.unpack_from(">I", raw, 17)
            if crc32c(raw, 21) != stored:
                raise AssertionError("CRC check failed")
            count += struct.unpack_from(">i", raw, 57)[0]
            if decompress is not None:
                decompress(raw[61:])
            pos = end
        return count, -1  # no record is read: no checksum

    return run


class _Skip(Exception):
    pass


def worker_main(args: argparse.Namespace) -> int:
    data = Path(args.worker_input).read_bytes()
    try:
        run, notes = _setup_runner(args.worker, args.worker_codec, args.snappy_shim)
    except _Skip as e:
        print(json.dumps({"skipped": str(e)}))
        return 0
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        count, acc = run(data)
        times.append(time.perf_counter() - t0)
        if count != args.worker_expect_records:
            raise AssertionError(f"{count} records, expected {args.worker_expect_records}")
        if acc != args.worker_expect_checksum and args.worker not in UNCHECKED_IMPLS:
            raise AssertionError(f"checksum {acc}, expected {args.worker_expect_checksum}")
    package = sys.modules.get("conformance")
    print(
        json.dumps(
            {
                "times": times,
                "notes": [n for n in notes if n],
                "package": getattr(package, "__file__", None),
            }
        )
    )
    return 0


# ----------------------------------------------------------------------- environment


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment() -> dict[str, object]:
    info: dict[str, object] = {
        "python": sys.version.split()[0],
        "python_impl": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "versions": {
            d: _version(d)
            for d in (
                "kafka-conformance",
                "kafka-python",
                "aiokafka",
                "google-crc32c",
                "crc32c",
                "python-snappy",
                "cramjam",
                "lz4",
                "zstandard",
                "xxhash",
            )
        },
    }
    try:
        import kafka.record.util as ku

        crc = ku._crc32c
        info["kafka_python_crc32c"] = (
            f"C (crc32c package, {crc.__module__}.{crc.__name__})"
            if ku.crc32c_c is not None
            else f"pure Python ({crc.__module__}.{crc.__name__}; `crc32c` package not installed)"
        )
    except Exception as e:  # pragma: no cover
        info["kafka_python_crc32c"] = f"unknown ({e})"
    try:
        import kafka.codec

        info["kafka_python_snappy"] = (
            "python-snappy"
            if kafka.codec.has_snappy()
            else "unavailable (python-snappy not installed)"
        )
    except Exception as e:  # pragma: no cover
        info["kafka_python_snappy"] = f"unknown ({e})"
    try:
        from conformance.primitives import crc as ccrc
        from conformance.primitives import native

        info["ours_crc32c"] = "native: the crc32c crate (SSE 4.2); pure: " + (
            "C (google-crc32c)" if ccrc._crc32c_c is not ccrc.crc32c_pure else "pure Python"
        )
        info["ours_native"] = native.implementation()
    except Exception as e:  # pragma: no cover
        info["ours_crc32c"] = f"unknown ({e})"
    return info


# ------------------------------------------------------------------------------ main


def run_worker(
    impl: str, codec: str, path: Path, n: int, checksum: int, args: argparse.Namespace
) -> dict[str, object]:
    env = dict(os.environ)
    env.pop("AIOKAFKA_NO_EXTENSIONS", None)
    if impl == "aiokafka-py":
        env["AIOKAFKA_NO_EXTENSIONS"] = "1"
    env.pop(PURE_ENV, None)
    if impl in ("ours-pure", "ours-pure-stream", "ours-purecrc"):
        env[PURE_ENV] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        impl,
        "--worker-codec",
        codec,
        "--worker-input",
        str(path),
        "--worker-expect-records",
        str(n),
        "--worker-expect-checksum",
        str(checksum),
        "--repeat",
        str(args.repeat),
    ]
    if not args.snappy_shim:
        cmd.append("--no-snappy-shim")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: (key, a, b): records/s of a over records/s of b, in the report and its table
RATIOS = (
    ("native_stream_vs_aiokafka_c", "ours-native-stream", "aiokafka-c"),
    ("native_stream_vs_kafka_python_ccrc", "ours-native-stream", "kafka-python+ccrc"),
    ("native_vs_aiokafka_c", "ours-native", "aiokafka-c"),
    ("native_vs_kafka_python_ccrc", "ours-native", "kafka-python+ccrc"),
    ("pure_vs_kafka_python_ccrc", "ours-pure", "kafka-python+ccrc"),
    ("native_vs_pure", "ours-native", "ours-pure"),
    ("native_share_of_bound", "ours-native", "bound"),
    ("purecrc_vs_kafka_python", "ours-purecrc", "kafka-python"),
)
RATIO_TITLES = {
    "native_stream_vs_aiokafka_c": "native stream / aiokafka-c",
    "native_stream_vs_kafka_python_ccrc": "native stream / kafka-python+ccrc",
    "native_vs_aiokafka_c": "native / aiokafka-c",
    "native_vs_kafka_python_ccrc": "native / kafka-python+ccrc",
    "pure_vs_kafka_python_ccrc": "pure / kafka-python+ccrc",
    "native_vs_pure": "native / pure",
    "native_share_of_bound": "native / bound",
    "purecrc_vs_kafka_python": "ours-purecrc / kafka-python (both pure CRC)",
}


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "n/a"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    return f"{x / 1e3:.0f} k"


def render_markdown(report: dict, command: str) -> str:  # type: ignore[type-arg]
    env = report["environment"]
    impls = report["impls"]
    lines = []
    lines.append("# Decode throughput")
    lines.append("")
    lines.append(
        f"Generated by `bench/decode_throughput.py` on {report['date']}. "
        f"{report['records']} records per codec in v2 batches of {report['batch_size']} "
        "(~16-byte keys, ~100-byte text values, 1 header per record); full decode incl. CRC "
        "check, every record's offset/timestamp/key/value/headers touched; best of "
        f"{report['repeat']} runs in each of {report.get('rounds', 1)} rounds (implementations "
        "interleaved); MB/s of the encoded input (1 MB = 10^6 bytes)."
    )
    lines.append("")
    lines.append(
        "Before/after comparisons of checkouts (`bench/compare_checkouts.py`) and the garbage "
        "collector's share of a decode: docs/benchmarks-before-after.md. Validate-only scans "
        "(`verify-dir`, the replay) against the same kind of bound: docs/benchmarks-scan.md "
        "(`bench/native_scan.py`). The native path: docs/native.md."
    )
    lines.append("")
    lines.append("Command:")
    lines.append("")
    lines.append("```")
    lines.append(command)
    lines.append("```")
    lines.append("")
    lines.append("## Machine")
    lines.append("")
    lines.append(f"* CPU: {env['cpu']} ({env['cpus']} logical CPUs)")
    lines.append(f"* OS: {env['platform']}")
    lines.append(f"* Python: {env['python_impl']} {env['python']}")
    vs = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
    lines.append(f"* Libraries: {vs}")
    lines.append(f"* kafka-python CRC-32C: {env['kafka_python_crc32c']}")
    lines.append(f"* kafka-python snappy: {env['kafka_python_snappy']}")
    lines.append(f"* ours CRC-32C: {env['ours_crc32c']}")
    lines.append(f"* ours native: {env.get('ours_native', 'n/a')}")
    lines.append("")
    lines.append("## Records/s (MB/s)")
    lines.append("")
    header = "| codec | input MB | " + " | ".join(impls) + " |"
    lines.append(header)
    lines.append("|" + "---|" * (len(impls) + 2))
    for codec, row in report["results"].items():
        cells = []
        for impl in impls:
            r = row["impls"].get(impl, {})
            if "records_per_s" in r:
                cells.append(f"{fmt_rate(r['records_per_s'])} ({r['mb_per_s']:.1f})")
            else:
                cells.append(r.get("skipped") or r.get("error") or "n/a")
        lines.append(f"| {codec} | {row['input_bytes'] / 1e6:.2f} | " + " | ".join(cells) + " |")
    lines.append("")
    keys = [k for k, _, _ in RATIOS if any(k in row for row in report["results"].values())]
    if keys:
        lines.append("## Ratios (records/s over records/s, same run, same input)")
        lines.append("")
        lines.append("| codec | " + " | ".join(RATIO_TITLES[k] for k in keys) + " |")
        lines.append("|---|" + "---|" * len(keys))
        for codec, row in report["results"].items():
            cells = ["n/a" if row.get(k) is None else f"{row[k]:.2f}x" for k in keys]
            lines.append(f"| {codec} | " + " | ".join(cells) + " |")
        lines.append("")
    notes = sorted(
        {
            n
            for row in report["results"].values()
            for r in row["impls"].values()
            for n in r.get("notes", [])
        }
    )
    if notes:
        lines.append("Notes: " + "; ".join(notes) + ".")
        lines.append("")
    for key, verdict in report.get("targets", {}).items():
        lines.append(
            f"Target: {RATIO_TITLES[key]} >= {verdict['ratio']:g}x on every codec: "
            f"**{'met' if verdict['met'] else 'NOT met'}**"
            + ("" if verdict["met"] else f" (below on: {', '.join(verdict['below'])})")
            + "."
        )
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=(
            "Full-decode throughput (records/s, MB/s) of the reference decoder vs kafka-python "
            "and aiokafka (pure Python and C), on the same v2 batches for each codec."
        ),
        epilog=(
            "example:\n"
            "  .venv/bin/python bench/decode_throughput.py --records 200000 --repeat 5 \\\n"
            "      --codecs none,gzip,snappy,lz4,zstd --json bench.json "
            "--markdown docs/benchmarks-throughput.md\n"
            "  .venv/bin/python bench/decode_throughput.py --records 20000 --repeat 2 "
            "--impls ours,kafka-python   # quick"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--records", type=int, default=200_000, help="records per codec (default 200000)"
    )
    p.add_argument(
        "--repeat", type=int, default=5, help="runs per measurement, best is kept (default 5)"
    )
    p.add_argument(
        "--codecs",
        default=",".join(ALL_CODECS),
        help=f"comma-separated subset of {','.join(ALL_CODECS)} (default: all)",
    )
    p.add_argument(
        "--impls",
        default=",".join(HEADLINE_IMPLS + VARIANT_IMPLS),
        help=f"comma-separated subset of {','.join(ALL_IMPLS)} (default: all but ours)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every implementation this many times, interleaved (a fresh process "
        "each; the best of all rounds counts): robust against a noisy machine (default 1)",
    )
    p.add_argument("--batch-size", type=int, default=500, help="records per batch (default 500)")
    p.add_argument("--seed", type=int, default=20240601, help="data generator seed")
    p.add_argument("--json", metavar="OUT", help="write the raw results as JSON")
    p.add_argument("--markdown", metavar="OUT", help="write the markdown report")
    p.add_argument(
        "--no-snappy-shim",
        dest="snappy_shim",
        action="store_false",
        help="without python-snappy, report kafka-python snappy as n/a instead of using cramjam",
    )
    # internal: one measurement in a fresh interpreter
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--worker-codec", help=argparse.SUPPRESS)
    p.add_argument("--worker-input", help=argparse.SUPPRESS)
    p.add_argument("--worker-expect-records", type=int, help=argparse.SUPPRESS)
    p.add_argument("--worker-expect-checksum", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.records <= 0 or args.repeat <= 0 or args.batch_size <= 0 or args.rounds <= 0:
        p.error("--records, --repeat, --rounds and --batch-size must be positive")
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    bad = [c for c in codecs if c not in ALL_CODECS]
    if bad:
        p.error(f"unknown codec(s): {', '.join(bad)}")
    impls = [c.strip() for c in args.impls.split(",") if c.strip()]
    bad = [c for c in impls if c not in ALL_IMPLS]
    if bad:
        p.error(f"unknown implementation(s): {', '.join(bad)}")
    args.codec_list = codecs
    args.impl_list = impls
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)

    exe = Path(sys.executable)
    in_root = Path.cwd() == ROOT
    python = os.path.relpath(exe, ROOT) if in_root and ROOT in exe.parents else "python"
    script = os.path.relpath(__file__, ROOT) if in_root else __file__
    command = " ".join([python, script] + (sys.argv[1:] if argv is None else argv))
    env = environment()
    print(f"# Python {env['python']} on {env['cpu']} ({env['cpus']} CPUs), {env['platform']}")
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    print(f"# kafka-python CRC-32C: {env['kafka_python_crc32c']}")
    print(f"# kafka-python snappy: {env['kafka_python_snappy']}")
    print(f"# ours CRC-32C: {env['ours_crc32c']}")

    t0 = time.perf_counter()
    records = make_records(args.records, args.seed)
    checksum = expected_checksum(records, args.batch_size)
    print(f"# generated {len(records)} records in {time.perf_counter() - t0:.1f}s", flush=True)

    report: dict = {  # type: ignore[type-arg]
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "records": args.records,
        "repeat": args.repeat,
        "rounds": args.rounds,
        "batch_size": args.batch_size,
        "seed": args.seed,
        "environment": env,
        "impls": args.impl_list,
        "results": {},
    }
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        for codec in args.codec_list:
            data = build_stream(records, codec, args.batch_size)
            path = Path(tmp) / f"{codec}.bin"
            path.write_bytes(data)
            row: dict = {"input_bytes": len(data), "impls": {}}  # type: ignore[type-arg]
            report["results"][codec] = row
            runs: dict[str, list[dict]] = {impl: [] for impl in args.impl_list}  # type: ignore[type-arg]
            for _ in range(args.rounds):  # implementations interleaved, round by round
                for impl in args.impl_list:
                    runs[impl].append(run_worker(impl, codec, path, args.records, checksum, args))
            for impl in args.impl_list:
                timed = [r for r in runs[impl] if "times" in r]
                res = timed[0] if timed else runs[impl][0]
                if timed:
                    res["times"] = [t for r in timed for t in r["times"]]  # type: ignore[misc]
                    best = min(res["times"])  # type: ignore[type-var]
                    res["best_s"] = best
                    res["records_per_s"] = args.records / best
                    res["mb_per_s"] = len(data) / best / 1e6
                    msg = f"{res['records_per_s'] / 1e3:9.0f} krec/s {res['mb_per_s']:7.1f} MB/s"
                    if res.get("package"):  # which checkout was measured (before/after runs)
                        msg += f"  [{Path(str(res['package'])).parent.parent}]"
                else:
                    msg = "skipped: " + str(res.get("skipped") or res.get("error"))
                row["impls"][impl] = res
                print(f"# {codec:6} {impl:18} {msg}", flush=True)

            def rate(impl: str, row: dict = row) -> float | None:  # type: ignore[type-arg]
                return row["impls"].get(impl, {}).get("records_per_s")

            def ratio(a: str, b: str) -> float | None:
                ra, rb = rate(a), rate(b)
                return None if ra is None or rb is None else ra / rb

            for key, a, b in RATIOS:
                v = ratio(a, b)
                if v is not None:
                    row[key] = v

    targets = {}
    for key, wanted in (
        ("native_stream_vs_aiokafka_c", TARGET_VS_AIOKAFKA_C),
        ("native_stream_vs_kafka_python_ccrc", TARGET_VS_KAFKA_PYTHON),
        ("native_vs_aiokafka_c", TARGET_VS_AIOKAFKA_C),
        ("native_vs_kafka_python_ccrc", TARGET_VS_KAFKA_PYTHON),
    ):
        got = {c: r.get(key) for c, r in report["results"].items()}
        if got and all(v is not None for v in got.values()):
            below = [c for c, v in got.items() if v < wanted]
            targets[key] = {"ratio": wanted, "met": not below, "below": below}
    report["targets"] = targets

    md = render_markdown(report, command)
    print()
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
