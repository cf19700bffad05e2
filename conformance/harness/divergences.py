"""Known divergences of the built-in adapters: ``adapters/<dir>/divergences.toml``.

Each entry names an implementation, the case ids it covers (``fnmatch`` globs), a class and
an explanation::

    [[divergence]]
    impl = "kafkajs"
    cases = ["crafted/v2-crc-*@memory"]
    class = "real-bug"          # real-bug | leniency | unsupported
    summary = "one line"
    detail = "what differs, why, the library's source or issue; minimal bytes for a real bug"

An entry may also name the diff lines it explains (``lines``: ``fnmatch`` globs over the lines
of a result's diff, or its reason when the diff is empty); such an entry covers a result only
together with others that explain the rest of its lines, so one harmless difference cannot hide
another in the same result (``check-producer``'s results have a line per difference). An entry
that explained a line of a result is in use even when another line of the same result is
unexplained (that result then fails, and the report names the lines no entry explains).

A result that gathers other cases (``check-broker``'s ``versions/produce-cases``: each produce
case again at other versions) names, in each line, the case it is about (:func:`scoped`:
``<case id> at <where>: <line>``); such a line is explained by the entries of that case as
``<line>`` would be in the case's own result, so an entry never explains another case's lines.

A ``fail`` or ``error`` result whose every line is explained (an entry without ``lines``
explains them all) is *known*: it is reported with its classes and does not fail
``kafka-conformance check`` (as protobuf's failure lists). An entry that
matches no such result in a run over every case is *stale* and reported as such, so the lists
cannot outlive the bugs they describe.

An entry's ``impl`` is the name the adapter declares in its capabilities: that covers the
adapter's results on every side, its decoder's (reported as ``<name>``) and its consumer's
(reported as ``<name> consumer``; the case ids keep the sides apart: a consume case is
``consume/<scenario>``). The name a consumer run is reported under, ``<name> consumer``, is
accepted too and covers that run alone (:meth:`Divergence.about`).
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLASSES",
    "CONSUMER_SUFFIX",
    "Divergence",
    "DivergenceError",
    "accepted_names",
    "classify",
    "consumer_name",
    "explain",
    "read_divergences",
    "scoped",
    "stale",
]

CLASSES = ("real-bug", "leniency", "unsupported")
#: what a consumer run's name adds to the name its adapter declares: ``<name> consumer``
CONSUMER_SUFFIX = "consumer"
#: a diff line that starts with this is evidence (e.g. the bytes of a batch header), not a
#: difference: it needs no entry to explain it
EVIDENCE = "| "
#: what separates the case a gathering result's line is about from where it happened
SCOPE = " at "
CLASS_TITLES = {
    "real-bug": "real bug",
    "leniency": "documented leniency",
    "unsupported": "unsupported feature",
}


class DivergenceError(ValueError):
    """A divergences.toml entry that is not valid."""


@dataclass(frozen=True)
class Divergence:
    impl: str
    cases: tuple[str, ...]
    cls: str
    summary: str
    detail: str
    source: str  # the file it comes from, relative to the repository
    #: the diff lines explained (globs); empty: every line of a covered result
    lines: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.impl}: {self.summary}"

    def about(self, run: str) -> bool:
        """Whether the entry is about the run reported as ``run``: the one of that name, and
        the consumer run of the adapter whose declared name ``impl`` is."""
        return run in (self.impl, consumer_name(self.impl))

    def matches(self, impl: str, case_id: str) -> bool:
        """Whether the entry covers case ``case_id`` of the run reported as ``impl``."""
        return self.about(impl) and any(fnmatch.fnmatchcase(case_id, g) for g in self.cases)

    def explains(self, line: str) -> bool:
        return not self.lines or any(fnmatch.fnmatchcase(line, g) for g in self.lines)


def consumer_name(name: str) -> str:
    """The name the consumer run of the adapter that declares ``name`` is reported under."""
    return f"{name} {CONSUMER_SUFFIX}"


def accepted_names(runs: Iterable[str]) -> list[str]:
    """Every ``impl`` an entry may name to be about one of the runs reported as ``runs``:
    each run's own name and, for a consumer run, the name its adapter declares."""
    names: list[str] = []
    tail = f" {CONSUMER_SUFFIX}"
    for run in runs:
        declared = run.removesuffix(tail)
        for name in (declared, run) if declared != run else (run,):
            if name not in names:
                names.append(name)
    return names


def read_divergences(
    files: Iterable[Path],
    relative_to: Path | None = None,
    ordered: bool = False,
    *,
    require_lines: bool = False,
) -> list[Divergence]:
    """The entries of ``files`` (sorted by path, unless ``ordered``: as given);
    ``require_lines``: every entry must name the diff lines it explains (the producer side,
    whose results have a line per difference: an entry for a whole case would hide any new
    fault in it)."""
    found: list[Divergence] = []
    for path in files if ordered else sorted(files):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise DivergenceError(f"{path}: not TOML: {exc}") from None
        source = str(path.relative_to(relative_to)) if relative_to else str(path)
        entries = doc.get("divergence", [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise DivergenceError(
                f"{source}: divergence must be an array of tables (each entry under "
                "[[divergence]], not [divergence])"
            )
        for i, entry in enumerate(entries):
            where = f"{source}: divergence #{i + 1}"
            cls = entry.get("class")
            if cls not in CLASSES:
                raise DivergenceError(
                    f"{where}: class must be one of {', '.join(CLASSES)}, not {cls!r}"
                )
            cases = entry.get("cases")
            if not cases or not all(isinstance(c, str) for c in cases):
                raise DivergenceError(f"{where}: cases must be a non-empty list of case-id globs")
            lines = entry.get("lines", [])
            if not isinstance(lines, list) or not all(isinstance(x, str) and x for x in lines):
                raise DivergenceError(f"{where}: lines must be a list of diff-line globs")
            if require_lines and not lines:
                raise DivergenceError(
                    f"{where}: lines must name the diff lines the entry explains (an entry "
                    "for whole cases would hide any other difference in them)"
                )
            for key in ("impl", "summary"):
                if not isinstance(entry.get(key), str) or not entry[key]:
                    raise DivergenceError(f"{where}: {key} must be a non-empty string")
            found.append(
                Divergence(
                    entry["impl"],
                    tuple(cases),
                    cls,
                    entry["summary"],
                    str(entry.get("detail", "")).strip(),
                    source,
                    tuple(lines),
                )
            )
    return found


def scoped(case_id: str, where: str, line: str) -> str:
    """A line of a gathering result about case ``case_id`` (``where``: e.g. "Produce v3")."""
    return f"{case_id}{SCOPE}{where}: {line}"


def _unscoped(line: str) -> tuple[str, str] | None:
    """(case id, line) of a :func:`scoped` line (None: not one)."""
    head, sep, rest = line.partition(": ")
    case_id, at, _ = head.partition(SCOPE)
    if not sep or not at or "/" not in case_id or " " in case_id:
        return None
    return case_id, rest


def classify(
    known: Sequence[Divergence], impl: str, case_id: str, lines: Sequence[str] = ()
) -> list[Divergence]:
    """The entries that explain the result of ``impl`` on ``case_id`` whose diff (or reason)
    is ``lines``: the first entry without ``lines`` covering the case, else for every line the
    first entry explaining it; [] when a line is unexplained (the result is not known)."""
    explaining, _, unexplained = explain(known, impl, case_id, lines)
    return [] if unexplained else explaining


def explain(
    known: Sequence[Divergence], impl: str, case_id: str, lines: Sequence[str] = ()
) -> tuple[list[Divergence], list[Divergence], list[str]]:
    """``(explaining, matched, unexplained)`` for the result of ``impl`` on ``case_id`` whose
    diff (or reason) is ``lines``: the entries that explain it (every entry that explained a
    line), every entry that explained at least one of its lines (an entry that did is not
    stale, whatever else the result had), and the lines no entry explains (evidence lines
    need none). The result is *known* when ``unexplained`` is empty."""
    mine = [e for e in known if e.matches(impl, case_id)]
    whole = next((e for e in mine if not e.lines), None)
    if whole is not None:
        return [whole], [whole], []
    used: list[Divergence] = []
    unexplained: list[str] = []
    differences = [line for line in lines if not line.startswith(EVIDENCE)]
    for line in differences or [""]:
        entry = next((e for e in mine if e.explains(line)), None)
        inner = _unscoped(line) if entry is None else None
        if inner is not None:
            of, rest = inner
            entry = next((e for e in known if e.matches(impl, of) and e.explains(rest)), None)
        if entry is None:
            unexplained.append(line)
        elif entry not in used:
            used.append(entry)
    return used, used, unexplained


def stale(
    known: Sequence[Divergence], impls: Iterable[str], diverging: Iterable[tuple[str, str]]
) -> list[Divergence]:
    """Entries of ``impls`` that cover none of the ``(impl, case id)`` pairs that diverged."""
    pairs = list(diverging)
    names = set(impls)
    return [
        d
        for d in known
        if any(d.about(n) for n in names) and not any(d.matches(i, c) for i, c in pairs)
    ]
