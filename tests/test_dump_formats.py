"""``dump --format-of``: the format table, the command line's choice of a release, ``auto``.

What each release prints is checked against the real tools in tests/test_dump.py and by
``verify`` on the corpora; here the choice and its documentation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.logdir.dump.formats import (
    CHANGES,
    NEWEST_LINE,
    UnknownKafkaVersion,
    changes_table,
    format_of,
    kafka_version,
    same_format,
)

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "corpora" / "kafka-1.1.1-zk" / "compacted-v2-java"


def test_docs_hold_the_changes_table() -> None:
    assert changes_table() in (ROOT / "docs" / "dump.md").read_text()


def test_changes_are_in_release_order_and_each_changes_something() -> None:
    assert [c.since for c in CHANGES] == sorted(c.since for c in CHANGES)
    for change in CHANGES:
        before = format_of(".".join(map(str, _previous(change.since))))
        after = format_of(".".join(map(str, change.since)))
        assert not same_format(before, after), change.what


def _previous(v: tuple[int, int, int, int]) -> tuple[int, ...]:
    a, b, c, d = v
    if d:
        return (a, b, c, d - 1)
    if c:
        return (a, b, c - 1, 99)
    return (a, b - 1, 99) if b else (a - 1, 99, 99)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("2.8", (2, 8, 0, 0)),
        ("3.9.2", (3, 9, 2, 0)),
        ("0.10.2.2", (0, 10, 2, 2)),
        ("4.1.0-rc1", (4, 1, 0, 0)),
    ],
)
def test_versions(text: str, parsed: tuple[int, ...]) -> None:
    assert kafka_version(text) == parsed


@pytest.mark.parametrize("bad", ["", "4", "x.y", "0.9.0.1", "4.4.0", "10.0"])
def test_versions_outside_the_known_releases_are_refused(bad: str) -> None:
    with pytest.raises(UnknownKafkaVersion):
        format_of(bad)


def test_option_of_a_later_release_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(CASE / "log" / "compacted-v2-java-0" / "00000000000000000000.log")
    assert main(["dump", "--format-of", "2.8.2", "--max-bytes", "100", log]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "kafka-conformance dump: Kafka 2.8.2's DumpLogSegments has no --max-bytes "
        "(added in Kafka 3.3, KAFKA-13687)"
    )
    assert main(["dump", "--format-of", "2.7", "--skip-record-metadata", log]) == 2
    assert "added in Kafka 2.8" in capsys.readouterr().err
    assert main(["dump", "--format-of", "9.9", log]) == 2
    assert "not 9.9" in capsys.readouterr().err


def test_format_of_auto_reads_the_corpus_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 1.1.1 broker's own text for this segment is in the case: auto picks 1.1.1."""
    case = tmp_path / "case"
    shutil.copytree(CASE, case)
    rel = "log/compacted-v2-java-0/00000000000000000000.log"
    expected = (case / "expected" / (rel + ".dump.txt")).read_text()
    import os

    cwd = os.getcwd()
    os.chdir(case)
    try:
        assert main(["dump", "--format-of", "auto", rel]) == 0
        assert capsys.readouterr().out == expected
        assert main(["dump", rel]) == 0  # the default, 4.3, prints another text
        assert capsys.readouterr().out != expected
    finally:
        os.chdir(cwd)
    manifest = json.loads((case / "manifest.json").read_text())
    del manifest["broker_version"]
    (case / "manifest.json").write_text(json.dumps(manifest))
    assert main(["dump", "--format-of", "auto", str(case / rel)]) == 2
    assert "names no broker_version" in capsys.readouterr().err
    loose = tmp_path / "00000000000000000000.log"
    loose.write_bytes((case / rel).read_bytes())
    assert main(["dump", "--format-of", "auto", str(loose)]) == 2
    err = capsys.readouterr().err
    assert "no corpus manifest.json above" in err and "give --format-of VERSION" in err


def test_default_is_the_newest_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["dump", "--help"])
    out = capsys.readouterr().out
    assert f"(default {NEWEST_LINE})" in " ".join(out.split())
