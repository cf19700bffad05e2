"""Every fixed fuzzing finding (corpora/regressions/) stays fixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.errors import DecodeError
from conformance.fuzz.differential import mode_of, reference
from conformance.fuzz.targets import get
from conformance.stream.compare import diff

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "corpora" / "regressions").glob("*/*.bin"))


def _meta(path: Path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


def test_there_are_regressions() -> None:
    assert len(CASES) >= 4


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_regression_replays(path: Path) -> None:
    meta = _meta(path)
    assert meta["target"] == path.parent.name
    assert meta["note"], "a regression says what was wrong and where it was fixed"
    target = get(meta["target"])
    data = path.read_bytes()
    try:
        target.run(data)
    except DecodeError:
        pass  # documented; anything else fails the test with its traceback
    if "expected" in meta:
        wire = target.wire_bytes(data)
        assert wire is not None
        assert meta["mode"] in ("memory", "file")
        if meta.get("kind") != "adapter":  # a finding of `fuzz --against` keeps the mode it
            assert mode_of(wire) == meta["mode"]  # was asked in (its adapter's semantics)
        assert diff(meta["expected"], reference(wire, meta["mode"])) == []


@pytest.mark.oracle
def test_oracle_reproduces_regression_expectations() -> None:
    from conformance.fuzz.differential import normalize_java
    from conformance.jvm.oracle import OracleServer

    with OracleServer() as oracle:
        for path in CASES:
            meta = _meta(path)
            if "expected" not in meta:
                continue
            wire = get(meta["target"]).wire_bytes(path.read_bytes())
            assert normalize_java(oracle.decode(wire, meta["mode"])) == meta["expected"], path
