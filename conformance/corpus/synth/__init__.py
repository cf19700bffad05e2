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

=============  ===================================================================================
field          meaning
=============  ===================================================================================
format         ``"kafka-conformance/synth-1"``
seed, size     the seed and the requested size (the ``.log`` files total about that many bytes)
corrupt        the number of planted corruptions
files          every ``.log``, sorted: ``path`` (relative, posix), ``size`` (final),
               ``batches`` written
planted        sorted by (file, position); per corruption: ``kind``; ``file``; ``position``, the
               start of the first damaged batch, where a replay must flag it;
               ``byte_start``/``byte_end``, the changed bytes (end exclusive; torn-tail: the cut
               and the original size); ``expect``, what a replay that resumes at the next intact
               batch reports there: ``"partial"`` for a torn tail (the file ends inside a batch),
               else ``"corrupt"`` (Kafka's reader fails there, or stops there although intact
               batches follow: a size field past the end of the file); ``resume``, the first
               intact batch after the damage (null for a torn tail); ``detail``, human-readable
               (which bit, old and new size field, ...)
=============  ===================================================================================
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from conformance.corpus.synth.generate import partitions, write_root_files
from conformance.corpus.synth.model import (
    FORMAT,
    KINDS,
    Planted,
    ProgressCallback,
    SynthFile,
    SynthReport,
)
from conformance.corpus.synth.plant import plant

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


def synthesize(
    out: str | os.PathLike[str],
    size: int,
    *,
    corrupt: int = 0,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> SynthReport:
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
    done = list(partitions(root, size, seed, progress))
    write_root_files(root, done, seed)
    layouts = [f for _, gen in done for f in gen.files]
    try:
        planted = plant(root, layouts, corrupt, seed)
    except ValueError:
        _remove_contents(root, created)
        raise
    files = sorted(
        (SynthFile(f.path, os.path.getsize(root / f.path), len(f.lengths)) for f in layouts),
        key=lambda f: f.path,
    )
    report = SynthReport(
        root=root,
        size=size,
        corrupt=corrupt,
        seed=seed,
        files=files,
        planted=planted,
        total_bytes=sum(gen.written for _, gen in done),
        partitions=len(done),
        segments=len(layouts),
        batches=sum(len(f.lengths) for f in layouts),
        records=sum(gen.records for _, gen in done),
        elapsed=0.0,
    )
    (root / "planted.json").write_text(
        json.dumps(report.to_dict(), sort_keys=True, indent=2) + "\n"
    )
    report.elapsed = time.perf_counter() - started
    return report


__all__ = [
    "FORMAT",
    "KINDS",
    "Planted",
    "ProgressCallback",
    "SynthFile",
    "SynthReport",
    "synthesize",
]
