"""``conformance.corpus.golden``: manifests, expectations (Java) and ``kafka-conformance verify``.

Case directories are built in tmp dirs (broker id ``synthetic-writer-3.9.2``, never under
``corpora/``) with the kit's broker-faithful writer. Expectations come from the real tools
(oracle + Kafka 3.9.2's DumpLogSegments, tests marked ``oracle``); the Java-free tests give the
case expectations written by the kit itself, only to exercise the verification machinery.
The last test verifies every real broker capture under ``corpora/<broker-id>/`` (no Java).
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import decode
from conformance.cli import verify as verify_cli
from conformance.corpus import golden as corpus
from conformance.logdir.dump import dump
from conformance.logdir.writer import LogConfig, PartitionWriter
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

ROOT = Path(__file__).resolve().parent.parent
KAFKA = "3.9.2"
BROKER = "synthetic-writer-3.9.2"
TS = 1_700_000_000_000


# ------------------------------------------------------------------------------------------
# building cases


def _v2(base: int, n: int, **kw: object) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base, **kw)  # type: ignore[arg-type]
    for j in range(n):
        b.append(
            TS + base + j,
            b"k%d" % (base + j) if j % 2 else None,
            b"value-%d \xe2\x82\xac" % (base + j),
            [("h", b"x")] if j == 0 else [],
        )
    return b.build()


def build_case(case: Path) -> Path:
    """Two segments (indexes, snapshots, a .txnindex), every codec, an aborted transaction, a
    wire capture ending in a truncated batch; manifest written."""
    w = PartitionWriter(
        case / "log", "t", 0, LogConfig(segment_bytes=600, index_interval_bytes=100)
    )
    off, wire = 0, []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd", "none"):
        b = _v2(off, 3, compression=codec, partition_leader_epoch=0)
        w.append(b)
        wire.append(b)
        off += 3
    w.append(_v2(off, 2, producer_id=5, producer_epoch=0, base_sequence=0, is_transactional=True))
    off += 2
    w.append(
        end_txn_marker_batch(
            offset=off,
            producer_id=5,
            producer_epoch=0,
            commit=False,
            coordinator_epoch=1,
            timestamp=TS + 99,
        )
    )
    off += 1
    w.append(_v2(off, 2))
    w.close()
    (case / "wire").mkdir()
    (case / "wire" / "fetch-0.bin").write_bytes(b"".join(wire[:3]) + wire[3][:20])
    corpus.write_manifest(
        case,
        broker_version=KAFKA,
        broker_mode="kraft",
        description="synthetic case written by conformance.logdir.writer",
        topic="t",
        captured_at="2026-11-21T09:00:00Z",
    )
    return case


def kit_expectations(case: Path) -> None:
    """Expectations written by the kit itself (test machinery only, never in corpora/)."""
    for rel in corpus._case_files(case):
        if rel.endswith(".log") or rel.startswith("wire/"):
            mode = "memory" if rel.startswith("wire/") else "file"
            doc = decode((case / rel).read_bytes(), mode=mode, filename=rel).to_dict()
            corpus._write_text(
                corpus.expected_path(case, rel, ".decode.json"), corpus._json_text(doc)
            )
        if rel.startswith("log/") and rel.endswith(corpus.DUMP_SUFFIXES):
            for deep in [False, True] if rel.endswith(".log") else [False]:
                out, err = io.StringIO(), io.StringIO()
                with corpus._cwd(case):
                    fmt = corpus.dump_format(KAFKA)
                    dump([rel], deep_iteration=deep, print_data_log=deep, fmt=fmt, out=out, err=err)
                suffix = ".deep.txt" if deep else ".dump.txt"
                corpus._write_text(corpus.expected_path(case, rel, suffix), out.getvalue())


@pytest.fixture
def kit_root(tmp_path: Path) -> Path:
    root = tmp_path / "corpora"
    case = build_case(root / BROKER / "basic")
    kit_expectations(case)
    (root / "crafted").mkdir()
    (root / "crafted" / "manifest.json").write_text('{"corpus": "crafted"}')
    (root / "samples").mkdir()
    return root


@pytest.fixture(scope="module")
def oracle_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conformance.jvm import kafka_jars, oracle

    root = tmp_path_factory.mktemp("oracle-corpus") / "corpora"
    case = build_case(root / BROKER / "basic")
    try:
        corpus.write_expectations(case, KAFKA)
    except (kafka_jars.KafkaJarsUnavailable, oracle.OracleUnavailable) as e:  # pragma: no cover
        pytest.skip(str(e))
    return root


def run_cli(*args: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="kafka-conformance")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    ns = parser.parse_args(["verify", *args])
    buf = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(buf):
        rc = ns.func(ns)
    return rc, buf.getvalue()


def flip(path: Path, at: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0x01
    path.write_bytes(bytes(raw))


SEG0 = "log/t-0/00000000000000000000.log"


# ------------------------------------------------------------------------------------------
# without Java


def test_file_kinds_and_dump_format() -> None:
    assert corpus.file_kind("log/t-0/00000000000000000000.log") == "log"
    assert corpus.file_kind("log/t-0/00000000000000000000.timeindex") == "timeindex"
    assert (
        corpus.file_kind("log/__cluster_metadata-0/00000000000000000100-0000000001.checkpoint")
        == "checkpoint"
    )
    assert corpus.file_kind("log/t-0/leader-epoch-checkpoint") == "metadata"
    assert corpus.file_kind("log/t-0/partition.metadata") == "metadata"
    assert corpus.file_kind("wire/fetch-0.bin") == "wire"
    known = ("0.10.2.2", "1.1.1", "2.8.2", "3.2.3", "3.9.2", "4.0.2", "4.3.1", "4.3")
    assert all(corpus.dump_format(v) is not None for v in known)
    assert [corpus.dump_format(v) for v in ("0.9.0.1", "4.4.0", "5", "junk", None)] == [None] * 5


def test_manifest_order_merge_and_files(tmp_path: Path) -> None:
    case = build_case(tmp_path / BROKER / "basic")
    m = corpus.write_manifest(case, producer={"name": "java"}, custom="kept")
    on_disk = json.loads((case / "manifest.json").read_text())
    assert on_disk == m
    documented = [k for k in m if k in corpus.MANIFEST_KEYS]
    assert documented == [k for k in corpus.MANIFEST_KEYS if k in m]
    assert list(m)[-1] == "custom" and list(m)[0] == "format"
    assert m["format"] == corpus.CORPUS_FORMAT
    assert (m["broker_id"], m["scenario"], m["description"]) == (
        BROKER,
        "basic",
        "synthetic case written by conformance.logdir.writer",
    )
    paths = [f["path"] for f in m["files"]]
    assert paths == sorted(paths) and "wire/fetch-0.bin" in paths
    assert {f["kind"] for f in m["files"]} == {
        "log",
        "index",
        "timeindex",
        "txnindex",
        "snapshot",
        "metadata",
        "wire",
    }
    entry = next(f for f in m["files"] if f["path"] == SEG0)
    assert entry["size"] == (case / SEG0).stat().st_size
    assert list(entry) == ["path", "sha256", "size", "kind"]


def test_split_dump() -> None:
    out = "Dumping a.log\nx\nDumping a.index\ny\n"
    assert corpus._split_dump(out, ["a.log", "a.index"]) == [
        "Dumping a.log\nx\n",
        "Dumping a.index\ny\n",
    ]
    # a payload that looks like the next header: ambiguous, one run per file instead
    tricky = "Dumping a.log\n| payload: \nDumping a.index\nDumping a.index\ny\n"
    assert corpus._split_dump(tricky, ["a.log", "a.index"]) is None
    assert corpus._split_dump(out, ["a.index", "a.log"]) is None


def test_find_cases(kit_root: Path) -> None:
    case = kit_root / BROKER / "basic"
    build_case(kit_root / "kafka-1.1.1-zk" / "legacy")
    assert corpus.find_cases(kit_root) == [kit_root / "kafka-1.1.1-zk" / "legacy", case]
    assert corpus.find_cases(kit_root, "synthetic-*") == [case]
    assert corpus.find_cases(kit_root, ["*/leg*"]) == [kit_root / "kafka-1.1.1-zk" / "legacy"]
    assert corpus.find_cases(kit_root / BROKER) == [case]
    assert corpus.find_cases(case) == [case]


def test_verify_kit_expectations_pass(kit_root: Path) -> None:
    report = corpus.verify_corpus(kit_root)
    assert report.ok and report.exit_code == 0
    [case] = report.cases
    kinds = {c.kind for c in case.checks}
    assert kinds == {"manifest", "sha256", "decode", "dump", "deep"}
    assert case.counts("decode")["ok"] == 3  # two segments + one wire file
    assert case.files == 12


@pytest.mark.parametrize(
    "plant, kind, status",
    [
        ("edit-dump", "dump", "mismatch"),
        ("edit-deep", "deep", "mismatch"),
        ("edit-decode", "decode", "mismatch"),
        ("flip-log-byte", "sha256", "mismatch"),
        ("missing-expectation", "decode", "error"),
        ("missing-file", "sha256", "error"),
        ("unlisted-file", "sha256", "error"),
        ("stale-expectation", "manifest", "error"),
        ("bad-format", "manifest", "error"),
    ],
)
def test_planted_problems_are_reported(kit_root: Path, plant: str, kind: str, status: str) -> None:
    case = kit_root / BROKER / "basic"
    exp = case / "expected"
    if plant == "edit-dump":
        p = exp / (SEG0 + ".dump.txt")
        p.write_text(p.read_text().replace("isvalid: true", "isvalid: false", 1))
    elif plant == "edit-deep":
        p = exp / (SEG0 + ".deep.txt")
        p.write_text(p.read_text() + "one more line\n")
    elif plant == "edit-decode":
        p = exp / (SEG0 + ".decode.json")
        doc = json.loads(p.read_text())
        doc["batches"][1]["records"][0]["offset"] = "42"
        p.write_text(json.dumps(doc))
    elif plant == "flip-log-byte":
        flip(case / SEG0, 100)
    elif plant == "missing-expectation":
        (exp / "wire" / "fetch-0.bin.decode.json").unlink()
    elif plant == "missing-file":
        (case / "log/t-0/partition.metadata").unlink()
    elif plant == "unlisted-file":
        (case / "log/t-0/extra.bin").write_bytes(b"x")
    elif plant == "stale-expectation":
        (exp / "log" / "t-0" / "gone.log.dump.txt").write_text("")
    elif plant == "bad-format":
        m = json.loads((case / "manifest.json").read_text())
        m["format"] = "something/else"
        (case / "manifest.json").write_text(json.dumps(m))
    report = corpus.verify_corpus(kit_root)
    assert not report.ok and report.exit_code == 1
    failed = [c for _, c in report.failures()]
    assert any(c.kind == kind and c.status == status for c in failed), failed
    if plant == "flip-log-byte":  # the decode and dump expectations no longer hold either
        assert {c.kind for c in failed} >= {"sha256", "decode", "dump", "deep"}
    if plant == "edit-decode":
        [c] = [c for c in failed if c.kind == "decode"]
        assert c.details == ["$.batches[1].records[0].offset: '42' != '3'"]
    if plant == "edit-dump":
        [c] = failed
        assert c.details[0].startswith("stdout (00000000000000000000.log.dump.txt): line 3 differs")
        assert "isvalid: false" in c.details[1] and "isvalid: true" in c.details[2]


def test_dump_is_compared_in_the_format_of_the_case_broker(kit_root: Path) -> None:
    """The texts were printed in 3.9's format: a case that says 2.8.2 wrote it is compared
    in 2.8's format ('Starting offset'), and a version the kit has no format for is skipped."""
    case = kit_root / BROKER / "basic"
    corpus.write_manifest(case, broker_version="2.8.2")
    report = corpus.verify_corpus(kit_root)
    [res] = report.cases
    assert res.dump_note is None
    mismatched = [c for c in res.checks if c.kind in ("dump", "deep") and c.status == "mismatch"]
    assert any("Starting offset: 0" in "".join(c.details) for c in mismatched)
    corpus.write_manifest(case, broker_version="5.0.0")
    report = corpus.verify_corpus(kit_root)
    assert report.ok
    [res] = report.cases
    assert res.dump_note == "skipped (no DumpLogSegments format for 5.0.0)"
    assert res.counts("dump", "deep") == {"skipped": 11}
    assert res.counts("decode") == {"ok": 3}
    assert "11 skipped (no DumpLogSegments format for 5.0.0)" in report.format_table()


def test_cli_pass_json_junit(kit_root: Path, tmp_path: Path) -> None:
    rc, text = run_cli(
        str(kit_root), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")
    )
    assert rc == 0
    lines = text.splitlines()
    assert lines[0].split() == ["scenario", "files", "sha256", "decode", "dump", "time"]
    assert lines[1] == f"{BROKER} (Kafka {KAFKA})"
    assert lines[2].split()[:7] == ["basic", "12", "ok", "3", "ok", "11", "ok"]
    assert "-- PASS in" in lines[-1] and "27 checks: 27 ok" in lines[-1]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["ok"] is True and doc["summary"]["checks"] == 27 and doc["summary"]["ok"] == 27
    assert doc["cases"][0]["case"] == f"{BROKER}/basic"
    tree = ET.parse(tmp_path / "r.xml").getroot()
    assert tree.tag == "testsuites" and tree.get("failures") == "0" and tree.get("tests") == "27"
    assert len(tree.findall("./testsuite/testcase")) == 27


def test_cli_failure_json_junit(kit_root: Path, tmp_path: Path) -> None:
    case = kit_root / BROKER / "basic"
    flip(case / SEG0, 100)
    rc, text = run_cli(str(kit_root), "--json", "-", "--junit", str(tmp_path / "r.xml"), "-q")
    assert rc == 1
    head, _, js = text.partition("\n{")
    assert "FAIL (1 case(s))" in head and "failures:" in head
    assert f"{BROKER}/basic: sha256 {SEG0} (mismatch)" in head
    assert "scenario" not in head.splitlines()[0]  # -q: no table
    doc = json.loads("{" + js)
    assert doc["ok"] is False and doc["summary"]["mismatch"] >= 4
    tree = ET.parse(tmp_path / "r.xml").getroot()
    failures = tree.findall("./testsuite/testcase/failure")
    names = {
        tc.get("name")
        for tc in tree.findall("./testsuite/testcase")
        if tc.find("failure") is not None
    }
    assert {f"sha256 {SEG0}", f"decode {SEG0}", f"dump {SEG0}", f"deep {SEG0}"} <= names
    sha = next(f for f in failures if f.get("message", "").startswith("sha256 "))
    assert "(manifest)" in sha.get("message", "")


def test_cli_only_and_missing_dir(kit_root: Path, tmp_path: Path) -> None:
    assert run_cli(str(kit_root), "--only", "nothing-*")[0] == 2
    rc, text = run_cli(str(kit_root), "--only", f"{BROKER}/bas*")
    assert rc == 0 and "1 case(s)" in text
    assert run_cli(str(tmp_path / "nope"))[0] == 2


def test_cli_help_has_examples() -> None:
    parser = argparse.ArgumentParser(prog="kafka-conformance")
    verify_cli.register(parser.add_subparsers())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices["verify"].format_help()
    assert "examples:" in text and "kafka-conformance verify --only" in text


# ------------------------------------------------------------------------------------------
# with the real tools (Java oracle + Kafka 3.9.2 DumpLogSegments)


@pytest.mark.oracle
def test_write_expectations_then_verify(oracle_root: Path) -> None:
    case = oracle_root / BROKER / "basic"
    m = json.loads((case / "manifest.json").read_text())
    assert m["expectations"] == {
        "decode": f"oracle kafka-clients {corpus._oracle_kafka_version()} (oracle/)",
        "dump": f"kafka.tools.DumpLogSegments from kafka_2.13-{KAFKA}.jar",
    }
    written = sorted(
        p.relative_to(case / "expected").as_posix()
        for p in (case / "expected").rglob("*")
        if p.is_file()
    )
    assert f"{SEG0}.decode.json" in written and f"{SEG0}.deep.txt" in written
    assert "wire/fetch-0.bin.decode.json" in written
    assert "log/t-0/00000000000000000012.txnindex.dump.txt" in written
    assert not any(w.startswith(("log/t-0/leader-epoch", "log/t-0/partition.")) for w in written)
    wire = json.loads((case / "expected/wire/fetch-0.bin.decode.json").read_text())
    assert wire["mode"] == "memory" and wire["outcome"] == "partial"
    report = corpus.verify_corpus(oracle_root)
    assert report.ok, report.format_table()
    assert report.counts() == {"ok": 27}


@pytest.mark.oracle
def test_real_tool_stderr_with_absolute_paths_verifies_anywhere(tmp_path: Path) -> None:
    """Non-consecutive offsets: the tool names the .log by absolute path on stderr (one JVM per
    file then); the case still verifies after being moved."""
    from conformance.jvm import kafka_jars

    case = tmp_path / "a" / BROKER / "gaps"
    batches = []
    for base in (0, 10, 11):
        b = BatchBuilder(magic=2, base_offset=base)
        for j in range(3):
            b.append(TS + j, None, b"v", offset=base + 2 * j)
        batches.append(b.build())
    w = PartitionWriter(case / "log", "g", 0, LogConfig(index_interval_bytes=10))
    for b in batches:
        w.append(b)
    d = w.close()
    with (d / "00000000000000000000.log").open("ab") as f:
        f.write(b"\0" * 7)
    corpus.write_manifest(case, broker_version=KAFKA)
    try:
        corpus.write_expectations(case, KAFKA)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))
    err = (case / "expected/log/g-0/00000000000000000000.log.deep.err").read_text()
    assert err.startswith("Non-consecutive offsets in <case-dir>/log/g-0/00000000000000000000.log")
    shutil.move(tmp_path / "a", tmp_path / "b")
    report = corpus.verify_corpus(tmp_path / "b")
    assert report.ok, report.format_table()


@pytest.mark.oracle
def test_oracle_planted_mismatches(oracle_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    shutil.copytree(oracle_root, root)
    case = root / BROKER / "basic"
    p = case / "expected" / (SEG0 + ".decode.json")
    doc = json.loads(p.read_text())
    doc["batches"][0]["crc"] += 1
    p.write_text(json.dumps(doc))
    p = case / "expected" / "log/t-0/00000000000000000000.index.dump.txt"
    p.write_text(p.read_text().replace("position", "pos"))
    rc, text = run_cli(str(root), "--junit", str(tmp_path / "r.xml"))
    assert rc == 1
    assert "1 MISMATCH" in text and "FAIL" in text
    assert f"{BROKER}/basic: decode {SEG0} (mismatch)" in text
    tree = ET.parse(tmp_path / "r.xml").getroot()
    assert tree.get("failures") == "2"
    msgs = [f.get("message") for f in tree.iter("failure")]
    assert any(m.startswith("$.batches[0].crc:") for m in msgs)
    assert any(m.startswith("stdout (00000000000000000000.index.dump.txt): line 2") for m in msgs)


# ------------------------------------------------------------------------------------------
# the real corpora (no Java)

_REAL_CASES = corpus.find_cases(ROOT / "corpora")


@pytest.mark.parametrize(
    "case_dir",
    [pytest.param(c, id=corpus.case_id(c)) for c in _REAL_CASES]
    or [pytest.param(None, marks=pytest.mark.skip(reason="no broker captures under corpora/"))],
)
def test_real_corpus_case(case_dir: Path) -> None:
    result = corpus.verify_case(case_dir)
    failures = [
        f"{c.name} ({c.status}): " + "; ".join(c.details) for c in result.checks if c.failed
    ]
    assert not failures, "\n".join(failures)


def test_jobs_give_the_same_report(kit_root: Path) -> None:
    shutil.copytree(kit_root / BROKER / "basic", kit_root / BROKER / "copy")
    corpus.write_manifest(kit_root / BROKER / "copy")
    flip(kit_root / BROKER / "copy" / SEG0, 100)
    one = corpus.verify_corpus(kit_root, jobs=1).to_dict()
    two = corpus.verify_corpus(kit_root, jobs=2).to_dict()

    def strip(doc: dict) -> dict:
        doc = json.loads(json.dumps(doc))
        doc["summary"].pop("seconds")
        for case in doc["cases"]:
            case.pop("seconds")
            for c in case["checks"]:
                c.pop("seconds")
        return doc

    assert strip(one) == strip(two)
    assert [c["case"] for c in one["cases"]] == [f"{BROKER}/basic", f"{BROKER}/copy"]


def test_a_broker_directory_verifies_without_taking_expected_for_cases(tmp_path: Path) -> None:
    """``verify corpora/<broker>``: each case's ``expected/`` mirrors its ``log/`` and is no
    case of its own (it was reported as a case without a manifest)."""
    broker = tmp_path / "kafka-3.9.2-kraft"
    source = Path(__file__).resolve().parent.parent / "corpora" / "kafka-3.9.2-kraft"
    for name in ("codec-none-v2-java", "compacted-v2-java"):
        shutil.copytree(source / name, broker / name)
    assert (broker / "compacted-v2-java" / "expected" / "log").is_dir()
    assert corpus.find_cases_without_manifest(broker) == []
    report = corpus.verify_corpus(broker)
    assert report.ok and [c.case_id for c in report.cases] == [
        "kafka-3.9.2-kraft/codec-none-v2-java",
        "kafka-3.9.2-kraft/compacted-v2-java",
    ]
    (broker / "stray" / "log").mkdir(parents=True)
    assert corpus.find_cases_without_manifest(broker) == [broker / "stray"]
