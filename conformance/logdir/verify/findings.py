"""Finding codes, severities and the verify-dir report types (``DirFinding``, ``DirReport``).

Named ``Dir*`` to keep them apart from the decoder's strict-profile ``stream.findings.Finding``.
Codes are stable: they appear in ``verify-dir --json`` and in the tests (docs/format.md §6).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from conformance.jsondoc import JsonDocument

# ------------------------------------------------------------------------------------ codes

FINDING_CODES: dict[str, str] = {
    # .log: Kafka's consumer-side decode (one code per Java exception family)
    "log-corrupt-record": (
        "a batch fails decoding with CorruptRecordException (CRC, size < 61, record size < 14)"
    ),
    "log-invalid-record": (
        "a batch fails decoding with InvalidRecordException (record structure, counts)"
    ),
    "log-kafka-exception": (
        "a batch fails decoding with KafkaException (typically a corrupt compressed stream)"
    ),
    "log-codec-error": (
        "a compression library error escapes unwrapped (e.g. org.xerial.snappy.SnappyError)"
    ),
    "log-illegal-argument": (
        "a batch fails decoding with IllegalArgumentException (e.g. codec id 5-7)"
    ),
    "log-runtime-exception": (
        "a batch fails decoding with another raw JDK exception (NPE, IndexOutOfBounds, ...)"
    ),
    "log-decompressed-limit": (
        "a batch decompresses to more than --max-decompressed bytes "
        "(kit limit; not checked further)"
    ),
    "log-zero-tail": (
        "the .log ends in a zero-filled (preallocated) tail; Kafka's recovery truncates it"
    ),
    "log-truncated-tail": (
        "the .log ends in a partial batch (not zero-filled); "
        "Kafka ignores it, recovery truncates it"
    ),
    "batch-records-exceed-offsets": "a v2 batch hands out more records than its offset range holds "
    "(more than lastOffsetDelta + 1): offsets repeat; Kafka reads it, no broker writes it",
    # offsets
    "offset-overlap": (
        "a batch's first offset is not above the previous batch's last offset "
        "(same or earlier segment)"
    ),
    "offset-gap": (
        "offsets are missing between two batches, "
        "outside the range cleaner-offset-checkpoint allows"
    ),
    "segment-base-offset-mismatch": (
        "the segment file name's base offset is greater than its first batch's base offset"
    ),
    # .index
    "index-zero-tail": (
        "the .index ends in zero-filled (preallocated, untrimmed) entries; "
        "Kafka counts them as entries"
    ),
    "index-sanity-check": ".index fails Kafka's OffsetIndex.sanityCheck() (CorruptIndexException)",
    "index-not-monotonic": (
        ".index entry whose offset or position is not above the previous entry's"
    ),
    "index-position-outside": (
        ".index entry whose position is negative or at/after the end of the .log"
    ),
    "index-not-batch-boundary": ".index entry whose position is not the start of a batch",
    "index-offset-mismatch": (
        ".index entry whose offset is not the last offset of the batch at its position"
    ),
    "index-entry-multi-batch": (
        ".index entry = (last offset of a LATER batch, this batch's position): a pre-4.0 "
        "broker's entry for a multi-batch (follower) append; not an error"
    ),
    # .timeindex
    "timeindex-zero-tail": (
        "the .timeindex ends in zero-filled (preallocated) entries "
        "(Kafka's sanityCheck would fail on them)"
    ),
    "timeindex-sanity-check": (
        ".timeindex fails Kafka's TimeIndex.sanityCheck() (CorruptIndexException)"
    ),
    "timeindex-not-monotonic": (
        ".timeindex entry whose timestamp is not above, or offset below, the previous entry's"
    ),
    "timeindex-timestamp-mismatch": (
        ".timeindex entry at a batch's last offset, but that batch did not first reach "
        "the entry's timestamp as the segment's running max timestamp"
    ),
    "timeindex-offset-mismatch": (
        ".timeindex entry whose offset is not the last offset of any batch of the segment"
    ),
    # .txnindex
    "txnindex-sanity-check": (
        ".txnindex fails Kafka's TransactionIndex.sanityCheck() (lastOffset < segment base)"
    ),
    "txnindex-bad-version": ".txnindex entry whose version byte is > 0 (KafkaException when read)",
    "txnindex-partial-entry": (
        ".txnindex length is not a multiple of 34; Kafka silently ignores the partial entry"
    ),
    "txnindex-missing": (
        "an ABORT marker that ends a transaction has no .txnindex entry "
        "(position: the marker in .log)"
    ),
    "txnindex-extra": ".txnindex entry with no ABORT marker ending a transaction at its lastOffset",
    "txnindex-mismatch": (
        ".txnindex entry for an ABORT marker with the wrong producerId, "
        "firstOffset or lastStableOffset"
    ),
    # other files
    "snapshot-unreadable": (
        "a producer-state .snapshot Kafka refuses to load (CorruptSnapshotException)"
    ),
    "checkpoint-unreadable": (
        "an offset checkpoint or leader-epoch-checkpoint Kafka refuses to read"
    ),
    "metadata-unreadable": "partition.metadata or meta.properties Kafka refuses to read",
    "unexpected-file": (
        "a file or directory Kafka does not expect here (including orphaned index files)"
    ),
    "lifecycle-file": (
        "a .deleted/.cleaned/.swap file or a -delete/-future/-stray directory "
        "(transient; not verified)"
    ),
    "io-error": "a file that could not be read",
}
DIR_FINDING_CODES = FINDING_CODES

_INFO = {
    "log-zero-tail",
    "index-zero-tail",
    "timeindex-zero-tail",
    "index-entry-multi-batch",
    "lifecycle-file",
}
_WARNING = {
    "batch-records-exceed-offsets",
    "log-truncated-tail",
    "log-decompressed-limit",
    "txnindex-partial-entry",
    "unexpected-file",
}
SEVERITY: dict[str, str] = {
    code: "info" if code in _INFO else "warning" if code in _WARNING else "error"
    for code in FINDING_CODES
}

MAX_FINDINGS_PER_FILE_AND_CODE = 100


@dataclass(slots=True)
class DirFinding(JsonDocument):
    code: str
    file: str
    position: int
    message: str
    java_exception: str | None = None

    @property
    def severity(self) -> str:
        return SEVERITY[self.code]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "position": self.position,
            "message": self.message,
        }
        if self.java_exception is not None:
            out["java_exception"] = self.java_exception
        return out


@dataclass
class DirReport(JsonDocument):
    root: str
    findings: list[DirFinding] = field(default_factory=list)
    partitions: int = 0
    segments: int = 0
    batches: int = 0
    log_bytes: int = 0
    suppressed: dict[str, int] = field(default_factory=dict)  # "file\tcode" -> count

    @property
    def ok(self) -> bool:
        """No finding other than informational ones."""
        return all(f.severity == "info" for f in self.findings) and not any(
            SEVERITY[k.split("\t")[1]] != "info" for k in self.suppressed
        )

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def by_file(self) -> dict[str, list[DirFinding]]:
        out: dict[str, list[DirFinding]] = {}
        for f in sorted(self.findings, key=lambda f: (f.file, f.position, f.code)):
            out.setdefault(f.file, []).append(f)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "kafka-conformance/verify-dir/1",
            "root": self.root,
            "ok": self.ok,
            "partitions": self.partitions,
            "segments": self.segments,
            "batches": self.batches,
            "log_bytes": self.log_bytes,
            "findings": [
                f.to_dict()
                for f in sorted(self.findings, key=lambda f: (f.file, f.position, f.code))
            ],
            "suppressed": [
                {"file": k.split("\t")[0], "code": k.split("\t")[1], "count": n}
                for k, n in sorted(self.suppressed.items())
            ],
        }

    def format_text(self) -> str:
        counts = {s: 0 for s in ("error", "warning", "info")}
        for f in self.findings:
            counts[f.severity] += 1
        head = (
            f"{self.root}: {self.partitions} partition(s), {self.segments} segment(s), "
            f"{self.batches} {'batch' if self.batches == 1 else 'batches'}, "
            f"{self.log_bytes} log bytes: "
        )
        if not self.findings:
            return head + "clean"
        lines = [
            head + f"{counts['error']} error(s), {counts['warning']} warning(s), "
            f"{counts['info']} informational"
        ]
        root = self.root
        for file, fs in self.by_file().items():
            try:
                shown = os.path.relpath(file, root) if os.path.isdir(root) else file
            except ValueError:  # pragma: no cover - different drives
                shown = file
            lines.append(shown)
            for f in fs:
                lines.append(f"  @{f.position} {f.code} [{f.severity}]: {f.message}")
        for k, n in sorted(self.suppressed.items()):
            file, code = k.split("\t")
            lines.append(f"  ({n} more {code} finding(s) in {file} not shown)")
        return "\n".join(lines)


class Sink:
    """Collects findings, at most ``cap`` per (file, code)."""

    def __init__(self, cap: int = MAX_FINDINGS_PER_FILE_AND_CODE) -> None:
        self.findings: list[DirFinding] = []
        self.counts: dict[tuple[str, str], int] = {}
        self.suppressed: dict[str, int] = {}
        self.cap = cap

    def add(
        self,
        code: str,
        file: str | os.PathLike[str],
        position: int,
        message: str,
        java_exception: str | None = None,
    ) -> None:
        assert code in FINDING_CODES, code
        file = os.fspath(file)
        key = (file, code)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        if n > self.cap:
            k = f"{file}\t{code}"
            self.suppressed[k] = self.suppressed.get(k, 0) + 1
            return
        self.findings.append(DirFinding(code, file, position, message, java_exception))
