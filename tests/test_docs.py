"""The README as a newcomer meets it: the two commands on top (the second one what CI runs),
short, and every document it or the map (docs/architecture.md, "Documents") names there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: the two commands the README opens with
COMMANDS = [
    "scripts/bootstrap && .venv/bin/kafka-conformance verify",
    "scripts/bootstrap && .venv/bin/tox",
]
#: a path into docs/ as the documents write it
DOC_PATH = re.compile(r"\bdocs/[A-Za-z0-9_.-]+\.(?:md|html)\b")


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_opens_with_the_two_commands() -> None:
    lines = _readme().splitlines()
    assert lines[2:6] == ["```bash", *COMMANDS, "```"], lines[:8]


def test_ci_runs_the_readmes_test_command() -> None:
    """``.ci/run`` runs the README's second command, the whole of a line (not in a comment)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert COMMANDS[1] in [line.strip() for line in ci if not line.lstrip().startswith("#")]


def test_the_readme_is_short() -> None:
    """What a newcomer needs; the reference is in docs/ (issue 53: about 80-120 lines)."""
    assert len(_readme().splitlines()) <= 120


def test_every_doc_the_readme_names_exists() -> None:
    named = set(DOC_PATH.findall(_readme()))
    assert named, "the README points into docs/"
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []


def test_every_doc_is_reachable_from_the_readme_or_the_map() -> None:
    """A document neither the README nor docs/architecture.md names is one nobody finds."""
    text = _readme() + (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(DOC_PATH.findall(text))
    docs = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert sorted(docs - named) == []
