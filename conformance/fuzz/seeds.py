"""Where a run's seeds come from: the checkout's ``corpora/``, else a built-in stand-in.

Every target extracts its seeds from a root's ``corpora/`` (``Target.seeds(root)``: broker
segments, wire captures, crafted cases, regressions). An installed package has no
``corpora/`` (nor ``fuzz/corpus/``), so :func:`write_builtin_root` writes a small one, made
with the kit's own writers, that the same extractors read unchanged:

* ``corpora/crafted/<name>.bin``: every crafted case (``conformance.corpus.crafted``), the
  bytes the checkout keeps in ``corpora/crafted/`` (``tests/test_crafted_corpus.py`` holds
  them equal);
* ``corpora/builtin/partition/log/topic-0/``: a partition directory written by
  ``PartitionWriter`` as a broker writes one: two segments with ``.index``/``.timeindex``,
  every codec, an aborted transaction (``.txnindex``), producer snapshots, two leader
  epochs (``leader-epoch-checkpoint``) and ``partition.metadata``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conformance import codecs
from conformance.corpus.crafted import cases
from conformance.jvm.runtime import checkout_root
from conformance.logdir.writer import LogConfig, PartitionWriter
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

_TS = 1_700_000_000_000


def has_corpora(root: Path | None) -> bool:
    return root is not None and (root / "corpora").is_dir()


def seed_root(scratch: Path) -> tuple[Path, bool]:
    """``(root, built_in)``: the checkout (or ``$KAFKA_CONFORMANCE_ROOT``) when it has a
    ``corpora/``, else a built-in root written under ``scratch``."""
    root = checkout_root()
    if root is not None and has_corpora(root):
        return root, False
    return write_builtin_root(scratch), True


def write_builtin_root(dest: Path) -> Path:
    """Write ``dest/corpora/`` (see the module docstring; rewritten each call); returns ``dest``."""
    shutil.rmtree(dest, ignore_errors=True)
    crafted = dest / "corpora" / "crafted"
    crafted.mkdir(parents=True)
    for case in cases():
        (crafted / f"{case.name}.bin").write_bytes(case.data)
    _write_partition(dest / "corpora" / "builtin" / "partition" / "log")
    return dest


def _batch(base: int, n: int, **kw: object) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base, **kw)  # type: ignore[arg-type]
    for j in range(n):
        b.append(
            _TS + base + j,
            b"k%d" % (base + j) if j % 2 else None,
            b"value-%d" % (base + j),
            [("h", b"x")] if j == 0 else [],
        )
    return b.build()


def _write_partition(log_dir: Path) -> Path:
    w = PartitionWriter(log_dir, "topic", 0, LogConfig(segment_bytes=600, index_interval_bytes=100))
    off = 0
    for i, codec in enumerate([*codecs.CODEC_IDS, "none"]):  # every codec, then none again
        w.append(_batch(off, 3, compression=codec, partition_leader_epoch=i // 3))
        off += 3
    w.append(
        _batch(
            off,
            2,
            producer_id=5,
            producer_epoch=0,
            base_sequence=0,
            is_transactional=True,
            partition_leader_epoch=1,
        )
    )
    off += 2
    w.append(
        end_txn_marker_batch(
            offset=off,
            producer_id=5,
            producer_epoch=0,
            commit=False,
            coordinator_epoch=1,
            timestamp=_TS + 99,
            partition_leader_epoch=1,
        )
    )
    off += 1
    w.append(
        _batch(off, 2, producer_id=6, producer_epoch=1, base_sequence=0, partition_leader_epoch=1)
    )
    return w.close()


__all__ = ["has_corpora", "seed_root", "write_builtin_root"]
