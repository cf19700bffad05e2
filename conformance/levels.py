"""Judgement levels: how far an implementation's output agrees with Kafka.

Every side's judge (``harness.judge``: decoders, ``harness.consumer``: consumers,
``producer_check.judge``: producers and encoders, ``broker_check.judge``: brokers) files every
difference it finds at the **level** the difference breaks, :data:`LEVELS` from the weakest
promise to the strongest, each including the one before: ``delivery`` (what a consumer reads
is what was meant: records, offsets, whether and which error), ``wire`` (every field of the
bytes or the answer is what every broker and reader trusts it to be), ``java`` (also what
only Java's own code does: its exact error texts, every header field as Java writes it). A
run asks for one level (``--level``, the same on every side): a difference at or below it
fails, one above it is a *finding* (reported, counted, never a failure); what a case reaches
is the highest level with no difference at or below it.

Sans-IO: differences in, verdicts out. The report model (``harness.report.model``) counts
results per reached level from these names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "DEFAULT_LEVEL",
    "DELIVERY",
    "Difference",
    "JAVA",
    "Judgement",
    "LEVELS",
    "Lines",
    "NONE",
    "Verdict",
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


class Verdict(NamedTuple):
    """A judgement at the level asked (:meth:`Judgement.verdict`), the verdict of every side:
    ``pass``, ``fail`` or ``error``; the headline; the failing lines (and the evidence);
    the findings (the differences above the level, each prefixed with its level)."""

    status: str
    reason: str = ""
    diff: list[str] = []
    findings: list[str] = []


@dataclass
class Judgement:
    """Every difference of one case (or why it could not be judged: ``error``) and the
    evidence (header bytes) behind them; ``headline``: the reason made of the failing lines
    (default: the first); ``limit``: the most lines a verdict keeps of either list (the rest
    counted in one more line)."""

    differences: list[Difference] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    error: str | None = None
    headline: Callable[[list[str]], str] | None = None
    limit: int | None = None

    def reached(self) -> str:
        """The highest level with no difference at or below it (:data:`NONE`: not even
        ``delivery``)."""
        worst = min((LEVELS.index(d.level) for d in self.differences), default=len(LEVELS))
        return LEVELS[worst - 1] if worst > 0 else NONE

    def verdict(self, level: str = DEFAULT_LEVEL) -> Verdict:
        """The verdict at ``level``: the differences at or below it fail the case, in level
        order (the headline is the first, or :attr:`headline`'s); the ones above it are
        findings, each prefixed with its level."""
        if self.error is not None:
            return Verdict("error", self.error)
        asked = LEVELS.index(level)
        ordered = sorted(self.differences, key=lambda d: LEVELS.index(d.level))
        failing = [d.text for d in ordered if LEVELS.index(d.level) <= asked]
        findings = [f"{d.level}: {d.text}" for d in ordered if LEVELS.index(d.level) > asked]
        if failing:
            reason = self.headline(failing) if self.headline else failing[0]
            return Verdict("fail", reason, self._kept(failing) + self.evidence, findings)
        return Verdict("pass", "", [], self._kept(findings) + (self.evidence if findings else []))

    def _kept(self, lines: list[str]) -> list[str]:
        extra = len(lines) - self.limit if self.limit is not None else 0
        if extra <= 0:
            return lines
        assert self.limit is not None
        return lines[: self.limit] + [f"... {extra} more differences"]


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
