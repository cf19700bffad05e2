"""``corpora/written/``: directories written by the kit's writer, dumped by real releases.

Without Java: the stored ``log/`` bytes are what the writer writes today (so the stored dumps
still describe its output), the releases the issue asks for are there, and ``dump`` in each
case's release format reproduces the stored dumps (``verify``). With Java: each release's
DumpLogSegments and the oracle, run again, print exactly the stored expectations (they come
from the tools, not from the kit).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from conformance.corpus import golden, written
from conformance.logdir.dump.formats import kafka_version

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
CASES = golden.find_cases(CORPORA / golden.WRITTEN)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored(version: str, case: written.WrittenCase) -> Path:
    return written.case_dir(CORPORA, version, case)


def test_every_case_for_the_releases_asked_for() -> None:
    versions = {golden.read_manifest(c)["broker_version"] for c in CASES}
    lines = {kafka_version(v)[:2] for v in versions}
    assert {(2, 8), (3, 9), (4, 3)} <= lines
    for v in versions:
        for case in written.CASES:
            m = golden.read_manifest(_stored(v, case))
            assert m["writer"] == {"name": written.WRITER, "command": case.command}
            assert m["expectations"]["dump"].startswith("kafka.tools.DumpLogSegments from") or m[
                "expectations"
            ]["dump"].startswith("org.apache.kafka.tools.DumpLogSegments from")


def test_not_check_inputs_but_verified() -> None:
    assert not any(golden.WRITTEN in c.parts for c in golden.find_cases(CORPORA))
    report = golden.verify_corpus(CORPORA, only="kit-writer-*")
    assert {c.case_id for c in report.cases} == {golden.case_id(c) for c in CASES}
    assert "written directories" in report.format_table(quiet=True)


@pytest.mark.parametrize("case", written.CASES, ids=lambda c: c.name)
def test_stored_bytes_are_what_the_writer_writes(tmp_path: Path, case: written.WrittenCase) -> None:
    version = golden.read_manifest(CASES[0])["broker_version"]
    fresh = written.write_case(tmp_path, version, case, expectations=False)
    for v in {golden.read_manifest(c)["broker_version"] for c in CASES}:
        stored = _stored(v, case)
        files = golden.read_manifest(stored)["files"]
        assert [f["path"] for f in files] == [
            f["path"] for f in golden.read_manifest(fresh)["files"]
        ]
        for f in files:
            assert _sha(fresh / f["path"]) == f["sha256"], (v, f["path"])
        assert (fresh / "planted.json").read_bytes() == (stored / "planted.json").read_bytes()


@pytest.mark.parametrize("case_dir", CASES, ids=golden.case_id)
def test_dump_reproduces_each_release(case_dir: Path) -> None:
    result = golden.verify_case(case_dir)
    assert result.dump_note is None
    failures = [f"{c.name}: " + "; ".join(c.details) for c in result.checks if c.failed]
    assert not failures, "\n".join(failures)
    assert result.counts("dump", "deep")["ok"] >= 10


@pytest.mark.oracle
@pytest.mark.parametrize("case_dir", CASES, ids=golden.case_id)
def test_expectations_are_the_tools(tmp_path: Path, case_dir: Path) -> None:
    from conformance.jvm import kafka_jars

    copy = tmp_path / case_dir.parent.name / case_dir.name
    shutil.copytree(case_dir, copy)
    shutil.rmtree(copy / "expected")
    version = golden.read_manifest(case_dir)["broker_version"]
    try:
        golden.write_expectations(copy, version)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))
    stored = sorted(p.relative_to(case_dir) for p in (case_dir / "expected").rglob("*"))
    again = sorted(p.relative_to(copy) for p in (copy / "expected").rglob("*"))
    assert stored == again
    for rel in stored:
        if (case_dir / rel).is_file():
            assert (copy / rel).read_bytes() == (case_dir / rel).read_bytes(), rel


#: per broker capture directory, the cases whose stored dumps are printed again by that
#: version's own tool (the first case of each kind the directory has)
_AGAIN = (
    "multi-segment-bytes",
    "wire-partial-fetch",
    "txn-commit-abort",
    "compacted-none",
    "kraft-cluster-metadata",
)


def _broker_samples() -> list[Path]:
    out = []
    for broker in sorted(p for p in CORPORA.glob("kafka-*") if p.is_dir()):
        for prefix in _AGAIN:
            found = sorted(broker.glob(f"{prefix}*"))
            if found:
                out.append(found[0])
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("case_dir", _broker_samples(), ids=golden.case_id)
def test_broker_captures_dumps_are_each_versions_tool(tmp_path: Path, case_dir: Path) -> None:
    """The stored dumps of broker captures are what that broker version's DumpLogSegments
    prints today (a sample of every broker directory: several segments, a cut fetch, a
    transaction, compaction)."""
    test_expectations_are_the_tools(tmp_path, case_dir)
