"""What ``kafka-conformance synth`` writes and reports: constants, ``planted.json``'s records,
and the layout of each written ``.log`` that planting works from (the package docstring
describes the corpus)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from conformance.jsondoc import JsonDocument

FORMAT = "kafka-conformance/synth-1"
KINDS = ("bitflip", "bad-length", "zero-fill", "torn-tail")
TOPICS = ("orders", "events")
MIN_SEGMENT_BYTES = 64 * 1024
MAX_SEGMENT_BYTES = 1 << 30  # log.segment.bytes default
MAX_BATCH_BYTES = 1 << 20  # about max.message.bytes
MAX_PER_FILE = 3
BASE_TIMESTAMP = 1_700_000_000_000  # 2023-11-14T22:13:20Z
MAX_RECORDS = 500

#: progress callback: ``.log`` bytes written so far
ProgressCallback = Callable[[int], None]

#: batch kinds of a file layout: a v2 batch, an uncompressed v0/v1 message, a v0/v1 wrapper
V2, PLAIN, WRAPPER = 0, 1, 2


@dataclass(frozen=True, slots=True)
class SynthFile(JsonDocument):
    """One ``.log`` file of the corpus."""

    path: str  # relative to the corpus root, posix
    size: int  # final size (after planting)
    batches: int  # batches written

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "batches": self.batches}


@dataclass(frozen=True, slots=True)
class Planted(JsonDocument):
    """One planted corruption (see the module docstring for the fields)."""

    kind: str
    file: str
    position: int
    byte_start: int
    byte_end: int
    expect: str
    detail: str
    resume: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "file": self.file,
            "position": self.position,
            "byte_start": self.byte_start,
            "byte_end": self.byte_end,
            "expect": self.expect,
            "detail": self.detail,
            "resume": self.resume,
        }


@dataclass
class SynthReport(JsonDocument):
    """What :func:`synthesize` wrote: ``planted.json`` plus counts and the time it took."""

    root: Path
    size: int  # requested
    corrupt: int
    seed: int
    files: list[SynthFile]
    planted: list[Planted]
    total_bytes: int  # .log bytes written (before planting; torn tails remove some)
    partitions: int
    segments: int  # = .log files
    batches: int
    records: int  # including control records
    elapsed: float  # seconds, planting and planted.json included

    @property
    def mb_per_s(self) -> float:
        return self.total_bytes / 1e6 / self.elapsed if self.elapsed > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ``planted.json`` document."""
        return {
            "format": FORMAT,
            "seed": self.seed,
            "size": self.size,
            "corrupt": self.corrupt,
            "files": [f.to_dict() for f in self.files],
            "planted": [p.to_dict() for p in self.planted],
        }


@dataclass
class FileLayout:
    """The batches of one ``.log`` as written: lengths and kinds (v2 / message / wrapper)."""

    path: str
    lengths: array[int] = field(default_factory=lambda: array("q"))
    kinds: bytearray = field(default_factory=bytearray)
    last_in_partition: bool = False

    def positions(self) -> list[int]:
        """Batch starts, plus the original file size at the end."""
        return [0, *accumulate(self.lengths)]
