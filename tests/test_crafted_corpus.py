"""The crafted cases in code and the crafted corpus on disk are the same bytes.

``corpora/crafted/<name>.bin`` (with the Java oracle's expectations beside it) was written by
``scripts/make-crafted-corpus`` from ``conformance.corpus.crafted``; this holds the case
builders to those bytes, so a change in a writer or a fault knob cannot silently change
what the oracle's expectations were made for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.corpus import crafted

CRAFTED = Path(__file__).resolve().parents[1] / "corpora" / "crafted"
CASES = crafted.cases()


def test_every_stored_case_is_built_and_every_built_case_is_stored() -> None:
    stored = {p.stem for p in CRAFTED.glob("*.bin")}
    built = {c.name for c in CASES}
    assert built == stored, (sorted(built - stored)[:10], sorted(stored - built)[:10])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_bytes_equal_the_stored_corpus(case: crafted.Case) -> None:
    assert case.data == (CRAFTED / f"{case.name}.bin").read_bytes()


def test_stored_modes_match_the_case() -> None:
    for case in CASES:
        modes = {p.name.split(".")[-2] for p in CRAFTED.glob(f"{case.name}.*.json")}
        assert modes == set(case.modes), case.name
