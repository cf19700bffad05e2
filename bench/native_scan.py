#!/usr/bin/env python3
"""Validate-only scans against their bound: ``verify-dir`` and the replay, native vs pure.

One run, one corpus (the synthetic partitions of ``kafka-conformance synth``, built once into
``.cache/bench/``, the corpus of bench/replay_scaling.py), each command in its own process:

* ``bound``: what no validator can beat, measured in this process (best of three): every
  batch's checksum (CRC-32C for v2 with the native extension's ``crc32c``, CRC-32 for v0/v1
  with zlib) and the decompression of its records with the codec libraries the kit reads
  with (zlib, cramjam, lz4, zstandard), called directly; batches are found by a header walk,
  damaged bytes skipped with the kit's resynchronisation (``stream.resync``), nothing else
  is read;
* ``verify-dir`` on the whole corpus, native and pure (``KAFKA_CONFORMANCE_PURE=1``);
* ``replay --engine process`` and ``replay --engine spark --master local[2]``, native and
  pure (each worker process inherits the choice).

Every figure is a ratio in this run: the bound's seconds over the command's seconds (the
share of the bound reached) and native over pure.

example:
  .venv/bin/python bench/native_scan.py --size 1GB --rounds 2 --markdown docs/benchmarks-scan.md \
      --before /tmp/kit-before      # git worktree add /tmp/kit-before <commit before>
  .venv/bin/python bench/native_scan.py --size 64MB --skip-spark      # quick
"""

from __future__ import annotations

import argparse
import compileall
import json
import mmap
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import decode_throughput  # noqa: E402  (sibling script: the bound's decompressors)
import replay_scaling  # noqa: E402  (sibling script: corpus + replay runs)

from conformance.cli.common import byte_size  # noqa: E402
from conformance.stream.resync import find_next_batch  # noqa: E402

PURE_ENV = "KAFKA_CONFORMANCE_PURE"


def bound(corpus: Path) -> dict[str, Any]:
    """CRC + decompression of every batch of every .log file, nothing else."""
    import kafka_conformance_native as ext

    dec = decode_throughput.bound_decompressors()
    files = sorted(corpus.rglob("*.log"))
    total = batches = skipped = failed = 0
    t0 = time.perf_counter()
    for f in files:
        with f.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                continue
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            total += size
            pos = 0
            while pos + 17 <= size:
                (length,) = struct.unpack_from(">i", data, pos + 8)
                end = pos + 12 + length
                magic = data[pos + 16]
                if length < 14 or end > size or magic > 2:
                    nxt = find_next_batch(data, pos)
                    skipped += 1
                    if nxt is None:
                        break
                    pos = nxt
                    continue
                raw = data[pos:end]
                batches += 1
                try:
                    if magic == 2:
                        ext.crc32c(raw, 21)
                        codec = raw[22] & 7
                        if codec:
                            dec[codec](raw[61:])
                    else:
                        zlib.crc32(raw[16:])
                        codec = raw[17] & 7
                        if codec:
                            key_at = 18 if magic == 0 else 26
                            (klen,) = struct.unpack_from(">i", raw, key_at)
                            vat = key_at + 4 + max(klen, 0)
                            dec[codec](raw[vat + 4 :])
                except Exception:
                    failed += 1  # a damaged payload (or Kafka's magic-0 lz4 quirk)
                pos = end
            data.close()
    seconds = time.perf_counter() - t0
    return {
        "seconds": round(seconds, 3),
        "bytes": total,
        "batches": batches,
        "resyncs": skipped,
        "decompress_errors": failed,
    }


def verify_dir(corpus: Path, pure: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop(PURE_ENV, None)
    if pure:
        env[PURE_ENV] = "1"
    cmd = [sys.executable, "-m", "conformance.cli", "verify-dir", "--json", str(corpus)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"verify-dir: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    findings = len(json.loads(proc.stdout).get("findings", []))
    return {"seconds": round(seconds, 3), "exit": proc.returncode, "findings": findings}


def replay(corpus: Path, engine: str, pure: bool, out: Path, kit: Path = ROOT) -> dict[str, Any]:
    saved = os.environ.pop(PURE_ENV, None)
    if pure:
        os.environ[PURE_ENV] = "1"  # inherited by the replay process and its workers
    try:
        return replay_scaling._run(engine, corpus, "64MiB", out, kit)
    finally:
        os.environ.pop(PURE_ENV, None)
        if saved is not None:
            os.environ[PURE_ENV] = saved


def _seconds(r: dict[str, Any]) -> float:
    """A command's seconds: the replay's own ``replay_seconds``, verify-dir's whole process."""
    return float(r.get("replay_seconds", r.get("seconds", 0.0)))


def _replay(corpus: Path, engine: str, pure: bool, kit: Path = ROOT) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kc-scan-") as tmp:
        return replay(corpus, engine, pure, Path(tmp) / "out", kit)


def _markdown(results: dict[str, Any], table: str, command: str) -> str:
    b = results["bound"]
    stamp = results["date"]  # the run's, as in its JSON
    commit = results.get("before_commit")
    before = f" (`--before`: commit {commit})" if commit else ""
    lines = [
        "# Validate-only scans against their bound",
        "",
        f"Generated by `bench/native_scan.py` on {stamp}; command: `{command}`{before}.",
        "",
        f"Corpus: `{results['corpus']}` ({b['bytes'] / 1e6:.0f} MB of .log files, "
        f"{b['batches']} batches; `kafka-conformance synth`, mixed magics and codecs, planted "
        "corruptions). Each command runs in its own process; replay seconds exclude Spark's "
        "start-up (the replay's own `replay_seconds`), verify-dir seconds are the whole "
        "process (interpreter start-up included); every kit runs from compiled bytecode, as "
        f"installed code does. {results['rounds']} round(s): every command once per round, "
        "rounds interleaved, the best round counts (the bound: the best of three per round); "
        "all rounds are in the JSON.",
        "",
        "*bound*: CRC of every batch plus the decompression of its records with the codec "
        "libraries the kit reads with, called directly, nothing else read (the batches found "
        f"by a header walk; {b['resyncs']} resynchronisations after damage, "
        f"{b['decompress_errors']} payloads that do not decompress). *share of the bound*: the "
        "bound's seconds over the command's (1.00 would be as fast as the bound). *native / "
        "pure*: the same command with `KAFKA_CONFORMANCE_PURE=1`, in this run. *(before)*: "
        "the replay with the kit of the checkout given by `--before` (the code before the "
        "native path), in this run.",
        "",
        table,
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__[__doc__.index("example:") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--size", default="1GB", help="corpus size (default 1GB)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corrupt", type=int, default=8)
    p.add_argument("--skip-spark", action="store_true", help="no local[2] replay")
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every command this many times, interleaved; the best counts (default 1)",
    )
    p.add_argument(
        "--before",
        metavar="CHECKOUT",
        type=Path,
        help="also replay with the kit of this checkout (e.g. a git worktree of the commit "
        "before the native path): the 'before' rows",
    )
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--markdown", metavar="OUT")
    args = p.parse_args(argv)
    # the commands run as installed code runs: from compiled bytecode (with
    # PYTHONDONTWRITEBYTECODE set and no .pyc, every process would compile the kit again,
    # measured: 0.25 s per process)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for kit in (ROOT, args.before):
        if kit is not None:
            compileall.compile_dir(str(Path(kit) / "conformance"), quiet=1)
    corpus = replay_scaling._corpus(byte_size(args.size), args.seed, args.corrupt)
    results: dict[str, Any] = {"corpus": str(corpus.relative_to(ROOT))}
    engines = ["process"] + ([] if args.skip_spark else ["local[2]"])
    # every command once per round, rounds interleaved (a noisy stretch of the machine hits
    # them alike); a command's figure is its best round, all rounds kept in the JSON
    commands: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    for pure in (False, True):
        name = "pure" if pure else "native"
        commands.append((f"verify-dir ({name})", lambda pure=pure: verify_dir(corpus, pure)))
        for engine in engines:
            commands.append(
                (f"replay {engine} ({name})", lambda e=engine, pure=pure: _replay(corpus, e, pure))
            )
    if args.before is not None:
        head = subprocess.run(
            ["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        )
        results["before_commit"] = head.stdout.strip() or "unknown"
        kit = args.before.resolve()
        for engine in engines:
            commands.append(
                (f"replay {engine} (before)", lambda e=engine: _replay(corpus, e, False, kit))
            )
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in commands}
    bounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        # the bound is cheap: its best of three per round, so a noisy moment does not
        # flatter the commands
        bounds += [bound(corpus) for _ in range(3)]
        print(f"round {n + 1} bound: {bounds[-3:]}", file=sys.stderr)
        for name, command in commands:
            r = command()
            runs[name].append(r)
            print(f"round {n + 1} {name}: {r}", file=sys.stderr)
    b = min(bounds, key=lambda r: r["seconds"])
    results["bound"] = {**b, "rounds": [r["seconds"] for r in bounds]}
    results["rounds"] = args.rounds
    mb = b["bytes"] / 1e6
    rows: list[tuple[str, float, float | None]] = []
    for name, _ in commands:
        best = min(runs[name], key=_seconds)
        results[name] = {**best, "rounds": [_seconds(r) for r in runs[name]]}
        rows.append((name, _seconds(best), best.get("wall_seconds")))
    lines = [
        "| command | seconds | MB/s | share of the bound (bound s / command s) | native / pure |",
        "|---|---|---|---|---|",
        f"| bound (CRC + decompression) | {b['seconds']:.2f} | {mb / b['seconds']:.0f} | 1.00 | |",
    ]
    secs = {name: s for name, s, _ in rows}
    for name, s, _ in rows:
        other = name.replace("(native)", "(pure)")
        speedup = f"{secs[other] / s:.2f}x" if "(native)" in name and other in secs else ""
        before = name.replace("(native)", "(before)")
        if "(native)" in name and before in secs:
            speedup += f" ({secs[before] / s:.2f}x the checkout before)"
        lines.append(f"| {name} | {s:.2f} | {mb / s:.0f} | {b['seconds'] / s:.2f} | {speedup} |")
    table = "\n".join(lines)
    print(table)
    results["table"] = table
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    if args.markdown:
        command = " ".join([".venv/bin/python", "bench/native_scan.py", *(argv or sys.argv[1:])])
        Path(args.markdown).write_text(_markdown(results, table, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
