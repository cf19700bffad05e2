"""Judgement levels: how far an implementation's output agrees with Kafka.

A judge (``producer_check.judge``: producers and encoders) files every difference it finds
at the **level** the difference breaks, :data:`LEVELS` from the weakest promise to the
strongest, each including the one before: ``delivery`` (what a consumer reads back is what
was meant), ``wire`` (the bytes are what every broker and reader trusts them to be), ``java``
(the bytes are what Java's own code writes). A run asks for one level: a difference at or
below it fails, one above it is a *finding* (reported, counted, never a failure); what a
scenario reaches is the highest level with no difference at or below it.

Sans-IO: differences in, verdicts out. The report model (``harness.report.model``) counts
results per reached level from these names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_LEVEL",
    "DELIVERY",
    "Difference",
    "JAVA",
    "Judgement",
    "LEVELS",
    "Lines",
    "NONE",
    "WIRE",
    "capped",
]

DELIVERY, WIRE, JAVA = "delivery", "wire", "java"
#: the judgement levels, each including the one before
LEVELS = (DELIVERY, WIRE, JAVA)
DEFAULT_LEVEL = WIRE
#: what :meth:`Judgement.reached` says of a scenario that does not reach ``delivery``
NONE = "none"
#: lines kept per check and level (the rest is counted in one more line)
MAX_LINES = 12


@dataclass(frozen=True)
class Difference:
    """One difference from what Kafka expects, at the level it breaks."""

    level: str
    text: str


@dataclass
class Judgement:
    """Every difference of one scenario (or why it could not be judged: ``error``) and the
    evidence (header bytes) behind them."""

    differences: list[Difference] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    error: str | None = None

    def reached(self) -> str:
        """The highest level with no difference at or below it (:data:`NONE`: not even
        ``delivery``)."""
        worst = min((LEVELS.index(d.level) for d in self.differences), default=len(LEVELS))
        return LEVELS[worst - 1] if worst > 0 else NONE

    def verdict(self, level: str = DEFAULT_LEVEL) -> tuple[str, str, list[str], list[str]]:
        """(status, headline, diff, findings) at ``level``: the differences at or below it
        fail the scenario, in level order (the headline is the first); the ones above it are
        findings, each prefixed with its level."""
        if self.error is not None:
            return "error", self.error, [], []
        asked = LEVELS.index(level)
        ordered = sorted(self.differences, key=lambda d: LEVELS.index(d.level))
        failing = [d.text for d in ordered if LEVELS.index(d.level) <= asked]
        findings = [f"{d.level}: {d.text}" for d in ordered if LEVELS.index(d.level) > asked]
        if failing:
            return "fail", failing[0], failing + self.evidence, findings
        return "pass", "", [], findings + (self.evidence if findings else [])


class Lines:
    """Differences collected per level, the same message at several places grouped."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, level: str, text: str) -> None:
        self.items.append((level, text))

    def extend(self, level: str, texts: Iterable[str]) -> None:
        for t in texts:
            self.add(level, t)

    def grouped(self, title: str) -> list[Difference]:
        """``where: message`` lines as one line per (level, message), in first-seen order:
        ``message (at where[ and N more])``; at most :data:`MAX_LINES` per level."""
        at: dict[tuple[str, str], list[str]] = {}
        for level, line in self.items:
            where, _, message = line.partition(": ")
            at.setdefault((level, message), []).append(where)
        out: dict[str, list[str]] = defaultdict(list)
        for (level, m), w in at.items():
            out[level].append(f"{m} (at {w[0]}{f' and {len(w) - 1} more' if len(w) > 1 else ''})")
        return [Difference(lv, t) for lv, texts in out.items() for t in capped(texts, title)]

    def plain(self, title: str) -> list[Difference]:
        out: dict[str, list[str]] = defaultdict(list)
        for level, line in self.items:
            out[level].append(line)
        return [Difference(lv, t) for lv, texts in out.items() for t in capped(texts, title)]


def capped(lines: list[str], title: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return lines[:MAX_LINES] + [f"{title}: {len(lines) - MAX_LINES} more lines"]
