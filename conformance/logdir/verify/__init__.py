"""``kafka-conformance verify-dir``: verify a segment, a partition directory or a log directory.

docs/format.md §6 (files of a log directory). Every check reads the files with the kit's own
parsers (``splitter``/``decoder`` for ``.log``, ``index``, ``txnindex``, ``snapshot``,
``checkpoint``), mirroring how Kafka's ``LogLoader`` / ``UnifiedLog`` load a partition; this
package only walks them side by side and compares:

================  ===========================================================================
module            what
================  ===========================================================================
findings          codes, severities, ``DirFinding``, ``DirReport``, the capped finding sink
logwalk           the ``.log`` walk (one ``BatchInfo`` per batch) and shared file helpers
indexes           ``.index`` / ``.timeindex`` checks (``OffsetIndex``, ``TimeIndex``)
transactions      transaction state and the ``.txnindex`` check (``TransactionIndex``)
segment           one segment within its partition: offset continuity, checks side by side
files             checkpoints, ``partition.metadata``, ``meta.properties``, ``.snapshot``
(this module)     the directory walk and the public API
================  ===========================================================================

* ``.log`` is decoded batch by batch, as Kafka's consumer decodes it (``StreamDecoder``, file
  semantics); after a batch that fails, the walk resumes at the next batch boundary when the
  splitter could still frame the failing batch (so one bad batch gives one finding);
* ``.index``, ``.timeindex``, ``.txnindex`` are memory-mapped and merged with the batch walk
  (each index is sorted, so one pass over the log checks every entry);
* offsets are followed across the segments of a partition, transactions across its batches.

Memory does not grow with file sizes: one batch is decoded at a time, index files are mapped,
not read, and findings are capped per (file, code) (:data:`MAX_FINDINGS_PER_FILE_AND_CODE`).

Every finding has a stable code (:data:`FINDING_CODES`), a severity (:data:`SEVERITY`), a file
and a byte position in that file. ``info`` findings (preallocated zero tails, lifecycle files,
an index entry written for a multi-batch append) are states Kafka produces itself; they do not
make a directory unclean.

Positions: a batch finding points at the batch's first byte in ``.log``; an index finding at the
entry (``n * 8``, ``n * 12``, ``n * 34``); a zero or partial tail at its first byte; a
``txnindex-missing`` at the ABORT marker in ``.log``; a checkpoint finding at the offending
line; a snapshot finding at the version (0), CRC (2) or count (6) field; whole-file findings at 0.

Consequences (one defect, several findings), by design:

* a batch that fails decoding still contributes its header (a v2 base offset is outside the
  CRC): a damaged header can also give offset-gap/overlap and index findings;
* an unframeable entry (size < 14, not a zero tail) ends that segment's walk: index entries
  past it are not judged, and the offset chain and transaction state restart as "unknown";
* index entries that break monotonicity, and .txnindex entries below the segment base, are
  reported once and left out of the matching; a bad .txnindex version disables the matching
  for that segment (Kafka cannot read the file either);
* a segment whose file name changes base offset makes its index entries name other offsets
  (index/timeindex offset mismatches follow);
* transaction state: exact when the partition's first segment has base 0 or its
  ``<base>.snapshot`` parses; otherwise a producer is unknown until its next marker, and for
  unknown producers, and at or below the cleaner-offset-checkpoint, an ABORT marker may or may
  not have an entry and firstOffset / lastStableOffset are not checked;
* an .index entry at a batch start whose offset is the last offset of a LATER batch is how a
  pre-4.0 broker indexed a multi-batch (follower) append: ``index-entry-multi-batch`` (info),
  not ``index-offset-mismatch``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from conformance import codecs
from conformance.host.progress import Status
from conformance.logdir import checkpoint
from conformance.logdir.index import base_offset_from_name
from conformance.logdir.verify.files import (
    add_non_regular_index_findings,
    verify_snapshot,
    verify_text_file,
)
from conformance.logdir.verify.findings import (
    DIR_FINDING_CODES,
    FINDING_CODES,
    MAX_FINDINGS_PER_FILE_AND_CODE,
    SEVERITY,
    DirFinding,
    DirReport,
    Sink,
)
from conformance.logdir.verify.segment import (
    PARTITION_DIR,
    PartitionState,
    cleaned_upto,
    verify_segment_into,
)

_SEGMENT_FILE = re.compile(r"^(\d+)\.(log|index|timeindex|txnindex|snapshot)$")
_KRAFT_FILE = re.compile(r"^\d{20}-\d{10}\.checkpoint(\.part|\.deleted)?$")
_LIFECYCLE_SUFFIXES = (".deleted", ".cleaned", ".swap")
_LIFECYCLE_DIR_SUFFIXES = ("-delete", "-future", "-stray")
_ROOT_FILES_OK = {".lock", ".kafka_cleanshutdown", "bootstrap.checkpoint"}
_ROOT_DIRS_OK = {"remote-log-index-cache"}


def _classify_partition_file(name: str, is_dir: bool, kraft: bool) -> str | None:
    """None (expected), "lifecycle" or "unexpected"."""
    if is_dir:
        return "unexpected"
    if _SEGMENT_FILE.match(name) or name in (
        checkpoint.LEADER_EPOCH_CHECKPOINT,
        checkpoint.PARTITION_METADATA,
    ):
        return None
    if kraft and (name == "quorum-state" or _KRAFT_FILE.match(name)):
        return None
    for suffix in _LIFECYCLE_SUFFIXES:
        if name.endswith(suffix) and _SEGMENT_FILE.match(name[: -len(suffix)]):
            return "lifecycle"
    return "unexpected"


def _verify_partition(
    pdir: Path, sink: Sink, limit: int, progress: Status | None, report: DirReport
) -> None:
    part = PartitionState(sink, limit, progress, cleaned_upto=cleaned_upto(pdir))
    kraft = pdir.name.startswith("__cluster_metadata-")
    logs: list[tuple[int, Path]] = []
    names = sorted(os.listdir(pdir))
    present = set(names)
    for name in names:
        p = pdir / name
        kind = _classify_partition_file(name, p.is_dir() and not _SEGMENT_FILE.match(name), kraft)
        if kind == "lifecycle":
            sink.add(
                "lifecycle-file",
                str(p),
                0,
                "transient file of a deletion, cleaning or swap (Kafka finishes or undoes "
                "it at load); not verified",
            )
            continue
        if kind == "unexpected":
            sink.add(
                "unexpected-file", str(p), 0, "Kafka does not expect this in a partition directory"
            )
            continue
        m = _SEGMENT_FILE.match(name)
        if m is None:
            if name in (checkpoint.LEADER_EPOCH_CHECKPOINT, checkpoint.PARTITION_METADATA):
                verify_text_file(p, sink)
            continue
        suffix = m.group(2)
        if suffix == "log":
            logs.append((int(m.group(1)), p))
        elif suffix == "snapshot":
            verify_snapshot(p, sink)
        elif f"{m.group(1)}.log" not in present:
            sink.add(
                "unexpected-file",
                str(p),
                0,
                f"orphaned index file: no {m.group(1)}.log (Kafka deletes it at load)",
            )
    for _, log_path in sorted(logs):
        verify_segment_into(log_path, part)
    report.partitions += 1
    report.segments += part.segments
    report.batches += part.batches
    report.log_bytes += part.log_bytes


def _is_log_dir(path: Path) -> bool:
    try:
        children = list(path.iterdir())
    except OSError:
        return False
    for c in children:
        if c.name in checkpoint.OFFSET_CHECKPOINTS or c.name == checkpoint.META_PROPERTIES:
            return True
        if c.is_dir() and (PARTITION_DIR.match(c.name) or c.name.endswith(_LIFECYCLE_DIR_SUFFIXES)):
            return True
    return False


def _verify_log_dir(
    root: Path, sink: Sink, limit: int, progress: Status | None, report: DirReport
) -> None:
    for name in sorted(os.listdir(root)):
        p = root / name
        if p.is_dir():
            if name.endswith(_LIFECYCLE_DIR_SUFFIXES):
                sink.add(
                    "lifecycle-file",
                    str(p),
                    0,
                    "partition directory being deleted, moved "
                    "(-future) or marked stray; not verified",
                )
            elif PARTITION_DIR.match(name):
                _verify_partition(p, sink, limit, progress, report)
            elif name not in _ROOT_DIRS_OK:
                sink.add(
                    "unexpected-file",
                    str(p),
                    0,
                    "directory Kafka does not expect in a log directory",
                )
        elif name in checkpoint.OFFSET_CHECKPOINTS or name == checkpoint.META_PROPERTIES:
            verify_text_file(p, sink)
        elif name not in _ROOT_FILES_OK:
            sink.add("unexpected-file", str(p), 0, "file Kafka does not expect in a log directory")


# ------------------------------------------------------------------------------ public API


def verify_segment(
    log_path: str | os.PathLike[str],
    *,
    max_decompressed: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    progress: Status | None = None,
) -> list[DirFinding]:
    """Verify one ``<base>.log`` and its ``.index``/``.timeindex``/``.txnindex``.

    Transactions are followed from the segment's start (state seeded from ``<base>.snapshot``
    when the base is not 0); offset gaps are allowed up to the root cleaner-offset-checkpoint
    entry (``../../cleaner-offset-checkpoint``) of the partition.
    """
    p = Path(log_path)
    base_offset_from_name(p)  # ValueError for a name that is not <offset>.log
    sink = Sink()
    part = PartitionState(sink, max_decompressed, progress, cleaned_upto=cleaned_upto(p.parent))
    verify_segment_into(p, part)
    return sink.findings


def verify_dir(
    path: str | os.PathLike[str],
    *,
    max_decompressed: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    progress: Status | None = None,
) -> DirReport:
    """Verify a partition directory, a log directory (several partitions plus root checkpoint
    files) or a single ``.log`` file. Raises ``FileNotFoundError`` / ``ValueError`` for a path
    that is none of these."""
    p = Path(path)
    report = DirReport(str(p))
    sink = Sink()
    if p.is_file():
        if not p.name.endswith(".log"):
            raise ValueError(f"{p}: not a .log file or a directory")
        base_offset_from_name(p)
        part = PartitionState(sink, max_decompressed, progress, cleaned_upto=cleaned_upto(p.parent))
        verify_segment_into(p, part)
        report.segments, report.batches, report.log_bytes = (
            part.segments,
            part.batches,
            part.log_bytes,
        )
        report.partitions = 0
    elif p.is_dir():
        if _is_log_dir(p):
            _verify_log_dir(p, sink, max_decompressed, progress, report)
        else:
            _verify_partition(p, sink, max_decompressed, progress, report)
    else:
        raise FileNotFoundError(f"{p}: no such file or directory")
    report.findings = sink.findings
    report.suppressed = sink.suppressed
    add_non_regular_index_findings(report)  # a FIFO .index would never be "clean"
    return report


__all__ = [
    "DIR_FINDING_CODES",
    "FINDING_CODES",
    "MAX_FINDINGS_PER_FILE_AND_CODE",
    "SEVERITY",
    "DirFinding",
    "DirReport",
    "Status",
    "verify_dir",
    "verify_segment",
]
