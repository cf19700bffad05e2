"""What a task counts over one range (:class:`RangeSummary`), and how counts combine.

A range summary is built region by region (:meth:`RangeSummary.add`) by the task that replays
the range (``task``), crosses from a Spark task to the driver as JSON text
(:meth:`RangeSummary.to_json`, read back by :func:`read_range_summary`), and is combined with
the others into the replay's summary (``summary.merge``) by the pieces here:

=========================  ===================================================================
piece                      combines
=========================  ===================================================================
:class:`ByteCounts`        the byte buckets (decoded, corrupt, trailing, unread) of each
                           verdict
:class:`Counts`            + regions per verdict, Kafka exceptions, codecs, strict findings,
                           records, intact batches, flagged regions (the first few as
                           :class:`FlaggedRegion` examples): :meth:`Counts.add`
:class:`Offsets`           offsets followed batch after batch, then range after range and
                           segment after segment: first and last offset, gaps, overlaps (the
                           first few as :class:`OffsetExample`): :meth:`Offsets.follow` for a
                           batch, :meth:`Offsets.extend` for a later range's offsets
=========================  ===================================================================

One rule decides gaps and overlaps everywhere: :func:`offset_step`.
"""

from __future__ import annotations

import json
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice, repeat
from typing import Any, Literal

from conformance.jsondoc import JsonDocument
from conformance.replay.plan import Range
from conformance.stream.scan import Region

__all__ = [
    "BUCKETS",
    "EXAMPLES_PER_RANGE",
    "ByteCounts",
    "Counts",
    "FlaggedRegion",
    "OffsetExample",
    "OffsetStep",
    "Offsets",
    "RangeSummary",
    "UNREADABLE",
    "offset_step",
    "read_range_summary",
]

#: byte-accounting bucket of each verdict (``stream.scan``'s, and the replay's own
#: :data:`UNREADABLE`)
BUCKETS = {
    "ok": "decoded",
    "corrupt": "corrupt",
    "partial": "trailing",
    "zero-tail": "trailing",
    "unreadable": "unread",
}
#: the verdict of bytes a task could not read (the file vanished, shrank, or an I/O error):
#: one region from where reading failed to the end of its range, with the error as message
UNREADABLE = "unreadable"
#: gaps, overlaps and flagged regions listed per range (counts are always exact)
EXAMPLES_PER_RANGE = 20

OffsetStep = Literal["gap", "overlap"]


#: ones, to add to offsets (``Offsets.follow_run``)
ONES = repeat(1)


def offset_step(previous_last: int, base: int) -> OffsetStep | None:
    """What lies between offsets up to ``previous_last`` and a batch (or a range) whose first
    offset is ``base``: a ``"gap"`` when ``base > previous_last + 1`` (offsets missing: normal
    after compaction, or where damaged bytes hid batches), an ``"overlap"`` when ``base <=
    previous_last`` (offsets seen again), None when it simply continues."""
    if base > previous_last + 1:
        return "gap"
    if base <= previous_last:
        return "overlap"
    return None


def _counter(doc: dict[str, int]) -> Counter[str]:
    return Counter(doc)


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items()))


@dataclass(frozen=True, slots=True)
class OffsetExample(JsonDocument):
    """A gap or an overlap: at ``position`` of ``file`` offsets go on at ``base`` after
    ``previous_last``."""

    kind: OffsetStep
    file: str
    position: int | None
    previous_last: int
    base: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "file": self.file,
            "position": self.position,
            "previous_last": self.previous_last,
            "base": self.base,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> OffsetExample:
        return cls(doc["kind"], doc["file"], doc["position"], doc["previous_last"], doc["base"])


@dataclass(frozen=True, slots=True)
class FlaggedRegion(JsonDocument):
    """A region whose verdict is not ``ok``."""

    file: str
    position: int
    size: int
    verdict: str
    kafka_exception: str | None
    message: str | None

    @classmethod
    def of(cls, file: str, region: Region) -> FlaggedRegion:
        return cls(
            file,
            region.position,
            region.size,
            region.verdict,
            region.kafka_exception,
            region.message,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "position": self.position,
            "size": self.size,
            "verdict": self.verdict,
            "kafka_exception": self.kafka_exception,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> FlaggedRegion:
        return cls(
            doc["file"],
            doc["position"],
            doc["size"],
            doc["verdict"],
            doc["kafka_exception"],
            doc["message"],
        )


@dataclass(slots=True)
class ByteCounts(JsonDocument):
    """Bytes per accounting bucket (:data:`BUCKETS`)."""

    decoded: int = 0
    corrupt: int = 0
    trailing: int = 0
    unread: int = 0

    @property
    def total(self) -> int:
        return self.decoded + self.corrupt + self.trailing + self.unread

    def count(self, verdict: str, size: int) -> None:
        bucket = BUCKETS[verdict]
        if bucket == "decoded":
            self.decoded += size
        elif bucket == "corrupt":
            self.corrupt += size
        elif bucket == "trailing":
            self.trailing += size
        else:
            self.unread += size

    def add(self, other: ByteCounts) -> None:
        self.decoded += other.decoded
        self.corrupt += other.corrupt
        self.trailing += other.trailing
        self.unread += other.unread

    def to_dict(self) -> dict[str, Any]:
        return {
            "decoded": self.decoded,
            "corrupt": self.corrupt,
            "trailing": self.trailing,
            "unread": self.unread,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> ByteCounts:
        return cls(doc["decoded"], doc["corrupt"], doc["trailing"], doc["unread"])


@dataclass(slots=True)
class Counts(JsonDocument):
    """What regions add up to: bytes, counters, records, batches, flagged regions."""

    bytes: ByteCounts = field(default_factory=ByteCounts)
    verdicts: Counter[str] = field(default_factory=Counter)
    #: where Kafka's reader fails or stops, by exception class ("(none)": a silent stop)
    exceptions: Counter[str] = field(default_factory=Counter)
    #: codecs of the intact batches
    codecs: Counter[str] = field(default_factory=Counter)
    findings: Counter[str] = field(default_factory=Counter)
    records: int = 0
    #: intact batches
    batches: int = 0
    flagged_count: int = 0
    #: the first flagged regions (at most :data:`EXAMPLES_PER_RANGE` per range)
    flagged: list[FlaggedRegion] = field(default_factory=list)

    def count(self, file: str, region: Region) -> None:
        """Count one region of ``file``."""
        self.bytes.count(region.verdict, region.size)
        self.verdicts[region.verdict] += 1
        self.records += region.record_count
        for code in region.findings:
            self.findings[code] += 1
        if region.verdict != "ok":
            if region.verdict != UNREADABLE:  # Kafka's reader never saw those bytes
                self.exceptions[region.kafka_exception or "(none)"] += 1
            self.flagged_count += 1
            if len(self.flagged) < EXAMPLES_PER_RANGE:
                self.flagged.append(FlaggedRegion.of(file, region))
            return
        self.batches += 1
        # an intact batch always has a codec; None would be JSON's "null" key as before
        self.codecs[region.codec if region.codec is not None else "null"] += 1

    def add(self, other: Counts) -> None:
        """Add ``other``'s counts (its flagged examples after these)."""
        self.bytes.add(other.bytes)
        self.verdicts.update(other.verdicts)
        self.exceptions.update(other.exceptions)
        self.codecs.update(other.codecs)
        self.findings.update(other.findings)
        self.records += other.records
        self.batches += other.batches
        self.flagged_count += other.flagged_count
        self.flagged.extend(other.flagged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.bytes.to_dict(),
            "verdicts": _sorted(self.verdicts),
            "exceptions": _sorted(self.exceptions),
            "codecs": _sorted(self.codecs),
            "findings": _sorted(self.findings),
            "records": self.records,
            "batches": self.batches,
            "flagged_count": self.flagged_count,
            "flagged": [f.to_dict() for f in self.flagged],
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Counts:
        return cls(
            ByteCounts.from_dict(doc["bytes"]),
            _counter(doc["verdicts"]),
            _counter(doc["exceptions"]),
            _counter(doc["codecs"]),
            _counter(doc["findings"]),
            doc["records"],
            doc["batches"],
            doc["flagged_count"],
            [FlaggedRegion.from_dict(f) for f in doc["flagged"]],
        )


@dataclass(slots=True)
class Offsets(JsonDocument):
    """Offsets followed in file order: the first, the highest last offset, gaps and overlaps
    (:func:`offset_step`), with the first ones as examples."""

    first_offset: int | None = None
    last_offset: int | None = None
    gaps: int = 0
    overlaps: int = 0
    examples: list[OffsetExample] = field(default_factory=list)

    def follow(self, base: int, last: int, *, file: str, position: int | None, limit: int) -> None:
        """Offsets ``base..last`` come next, at ``position`` of ``file``; at most ``limit``
        examples are kept."""
        previous = self.last_offset
        if previous is None:
            self.first_offset = base
        else:
            step = offset_step(previous, base)
            if step == "gap":
                self.gaps += 1
            elif step == "overlap":
                self.overlaps += 1
            if step is not None and len(self.examples) < limit:
                self.examples.append(OffsetExample(step, file, position, previous, base))
        self.last_offset = last if previous is None else max(previous, last)

    def follow_run(
        self,
        bases: Sequence[int],
        lasts: Sequence[int],
        *,
        file: str,
        positions: Sequence[int],
        limit: int = EXAMPLES_PER_RANGE,
    ) -> None:
        """:meth:`follow` for each batch of a run in turn; at C speed where every batch simply
        continues the offsets before it (each base one past the highest offset so far, each
        last offset at or after its base), which is then all following does."""
        previous = self.last_offset
        if (
            bases
            and (previous is None or bases[0] == previous + 1)
            and all(map(operator.le, bases, lasts))
            and all(map(operator.eq, islice(bases, 1, None), map(operator.add, lasts, ONES)))
        ):
            if previous is None:
                self.first_offset = bases[0]
            self.last_offset = lasts[-1]
            return
        for base, last, position in zip(bases, lasts, positions):
            self.follow(base, last, file=file, position=position, limit=limit)

    def extend(self, later: Offsets, *, file: str, position: int | None, limit: int) -> None:
        """The offsets of a later range (or segment), starting at ``position`` of ``file``, come
        next: its own gaps and overlaps count, and so does the step between the two; the
        examples are the step's, then the later range's, up to ``limit`` in all."""
        if later.first_offset is None or later.last_offset is None:
            return  # no intact batch with offsets there
        self.gaps += later.gaps
        self.overlaps += later.overlaps
        self.follow(
            later.first_offset, later.last_offset, file=file, position=position, limit=limit
        )
        room = max(0, limit - len(self.examples))
        self.examples.extend(later.examples[:room])

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "gaps": self.gaps,
            "overlaps": self.overlaps,
            "examples": [e.to_dict() for e in self.examples],
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Offsets:
        return cls(
            doc["first_offset"],
            doc["last_offset"],
            doc["gaps"],
            doc["overlaps"],
            [OffsetExample.from_dict(e) for e in doc["examples"]],
        )


@dataclass(slots=True)
class RangeSummary(JsonDocument):
    """What one task saw in one range: counts, offsets, where its regions start and end (the
    tiling check), the rows it wrote, and what it cost."""

    range_id: int
    file: str
    start: int
    end: int
    #: the task that replayed it (its Parquet part: ``output.part_name(task)``)
    task: int = 0
    #: first byte of its first region, end of its last one (None: no region)
    first_position: int | None = None
    end_position: int | None = None
    #: regions that did not start where the previous one ended (0 unless a bug)
    tiling_errors: int = 0
    counts: Counts = field(default_factory=Counts)
    offsets: Offsets = field(default_factory=Offsets)
    #: why the file could not be read (to its end), None if it could
    error: str | None = None
    #: rows written to the task's part
    rows: int = 0
    seconds: float = 0.0
    pid: int = 0
    peak_rss_kib: int = 0

    @classmethod
    def of_range(cls, r: Range, task: int = 0) -> RangeSummary:
        """An empty summary of ``r``, to be filled region by region."""
        return cls(r.range_id, r.file.name, r.start, r.end, task)

    def add(self, region: Region) -> None:
        """Count the next region of the range."""
        if self.first_position is None:
            self.first_position = region.position
        elif region.position != self.end_position:
            self.tiling_errors += 1
        self.end_position = region.end
        self.counts.count(self.file, region)
        if region.verdict != "ok" or region.base_offset is None or region.last_offset is None:
            return
        self.offsets.follow(
            region.base_offset,
            region.last_offset,
            file=self.file,
            position=region.position,
            limit=EXAMPLES_PER_RANGE,
        )

    def add_run(
        self,
        positions: Sequence[int],
        sizes: Sequence[int],
        bases: Sequence[int],
        lasts: Sequence[int],
        records: Sequence[int],
        codecs: Sequence[str],
    ) -> None:
        """Count the next regions of the range, all ``ok`` batches with offsets (a plain run:
        ``stream.scan.PlainRun``), in bulk: the counts :meth:`add` makes of each."""
        if not positions:
            return
        ends = list(map(operator.add, positions, sizes))
        if self.first_position is None:
            self.first_position = positions[0]
        elif positions[0] != self.end_position:
            self.tiling_errors += 1
        self.tiling_errors += sum(map(operator.ne, islice(positions, 1, None), ends))
        self.end_position = ends[-1]
        counts = self.counts
        counts.bytes.count("ok", sum(sizes))
        counts.verdicts["ok"] += len(positions)
        counts.records += sum(records)
        counts.batches += len(positions)
        counts.codecs.update(codecs)
        self.offsets.follow_run(bases, lasts, file=self.file, positions=positions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "range_id": self.range_id,
            "file": self.file,
            "start": self.start,
            "end": self.end,
            "task": self.task,
            "first_position": self.first_position,
            "end_position": self.end_position,
            "tiling_errors": self.tiling_errors,
            "counts": self.counts.to_dict(),
            "offsets": self.offsets.to_dict(),
            "error": self.error,
            "rows": self.rows,
            "seconds": self.seconds,
            "pid": self.pid,
            "peak_rss_kib": self.peak_rss_kib,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RangeSummary:
        return cls(
            range_id=doc["range_id"],
            file=doc["file"],
            start=doc["start"],
            end=doc["end"],
            task=doc["task"],
            first_position=doc["first_position"],
            end_position=doc["end_position"],
            tiling_errors=doc["tiling_errors"],
            counts=Counts.from_dict(doc["counts"]),
            offsets=Offsets.from_dict(doc["offsets"]),
            error=doc["error"],
            rows=doc["rows"],
            seconds=doc["seconds"],
            pid=doc["pid"],
            peak_rss_kib=doc["peak_rss_kib"],
        )


def read_range_summary(text: str) -> RangeSummary:
    """A range summary from its JSON text (:meth:`RangeSummary.to_json`)."""
    return RangeSummary.from_dict(json.loads(text))
