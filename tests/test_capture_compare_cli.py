"""``kafka-conformance capture compare A B``: two captures against each other.

Two corpus roots are made in tmp dirs from real broker captures (cases of
``corpora/kafka-3.9.2-kraft/`` copied twice); then B is edited: a record's value byte, a batch's
maxTimestamp (with the CRC fixed, or left broken), a case added or left out. Every expected
value comes from those inputs (the files copied, the manifests' ``non_deterministic`` lists, the
bytes changed), never from the command's own output. The command runs through
``conformance.cli.main`` (and once as a process), like a user runs it.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import decode
from conformance.cli import main
from conformance.primitives.crc import crc32c
from conformance.wire import layout

ROOT = Path(__file__).resolve().parent.parent
BROKER = "kafka-3.9.2-kraft"
SOURCE = ROOT / "corpora" / BROKER
#: a java-produced case whose manifest masks nothing but partition.metadata
PLAIN = "codec-none-v2-java"
#: a LogAppendTime case: maxTimestamp, timestamp and crc are declared non-deterministic
APPEND_TIME = "log-append-time-none-v2"
EXTRA_A, EXTRA_B = "nulls-v2-java", "headers-none-v2-java"


def _manifest(case: Path) -> dict:
    return json.loads((case / "manifest.json").read_text())


def _compared_files(case: Path) -> list[str]:
    """The files under log/ that the manifest does not exclude with a ``file:`` pattern."""
    nd = _manifest(case).get("non_deterministic", [])
    patterns = [e.split(" ", 1)[0][len("file:") :] for e in nd if e.startswith("file:")]
    return sorted(
        f.relative_to(case).as_posix()
        for f in (case / "log").rglob("*")
        if f.is_file() and not any(fnmatch.fnmatch(f.name, p) for p in patterns)
    )


def _segment(case: Path) -> Path:
    return next((case / "log").rglob("00000000000000000000.log"))


def _batches(data: bytes) -> list[tuple[int, int]]:
    """(position, end) of every batch of a log segment, from the length fields."""
    out, pos = [], 0
    while pos + layout.LOG_OVERHEAD <= len(data):
        length = int.from_bytes(data[pos + layout.SIZE_OFFSET : pos + layout.LOG_OVERHEAD], "big")
        out.append((pos, pos + layout.LOG_OVERHEAD + length))
        pos += layout.LOG_OVERHEAD + length
    return out


def _fix_crc(data: bytearray, pos: int, end: int) -> None:
    crc = crc32c(bytes(data[pos + layout.ATTRIBUTES_OFFSET : end]))
    data[pos + layout.CRC_OFFSET : pos + layout.CRC_OFFSET + layout.CRC_LENGTH] = crc.to_bytes(
        4, "big"
    )


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """A and B: the same two cases of a real broker capture, copied twice."""
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        for name in (PLAIN, APPEND_TIME):
            shutil.copytree(SOURCE / name, root / BROKER / name)
    return a, b


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    rc = main(["capture", "compare", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out, err


def _json(out: str) -> dict:
    """The JSON document that ``--json -`` writes after the table."""
    return json.loads(out[out.index("\n{") + 1 :])


# ------------------------------------------------------------------------------------------
# same, different


def test_identical_copies_pass_with_every_report(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = roots
    junit = tmp_path / "r.xml"
    rc, out, err = run(capsys, a, b, "--json", "-", "--junit", junit)
    assert rc == 0, out + err
    files = {name: _compared_files(a / BROKER / name) for name in (PLAIN, APPEND_TIME)}
    n_checks = sum(len(f) for f in files.values())
    assert f"2 case(s), 1 broker(s), {n_checks} checks: {n_checks} ok -- PASS" in out
    assert out.splitlines()[:2] == [f"A: {a}", f"B: {b}"]
    for name in (PLAIN, APPEND_TIME):
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [name])
        assert row[1:3] == ["both", str(len(files[name]))]

    doc = _json(out)
    assert doc["format"] == "kafka-conformance/capture-compare/1"
    assert (doc["a"], doc["b"], doc["ok"]) == (str(a), str(b), True)
    assert doc["summary"]["cases"] == 2 and doc["summary"]["checks"] == n_checks
    for case in doc["cases"]:
        name = case["scenario"]
        assert case["case"] == f"{BROKER}/{name}" and case["ok"] is True
        assert case["broker_version"] == _manifest(a / BROKER / name)["broker_version"]
        assert sorted(c["path"] for c in case["checks"]) == files[name]
        for c in case["checks"]:
            kind = "decode" if c["path"].endswith((".log", ".checkpoint")) else "file"
            assert (c["check"], c["status"]) == (kind, "ok"), c

    tree = ET.parse(junit).getroot()
    assert tree.get("name") == "kafka-conformance capture compare"
    assert (tree.get("tests"), tree.get("failures"), tree.get("skipped")) == (
        str(n_checks),
        "0",
        "0",
    )
    assert [s.get("name") for s in tree.findall("testsuite")] == sorted(
        f"{BROKER}/{name}" for name in (PLAIN, APPEND_TIME)
    )


@pytest.mark.parametrize("fix_crc", [True, False], ids=["crc-fixed", "crc-broken"])
def test_a_changed_record_value_fails_and_names_the_file(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path, fix_crc: bool
) -> None:
    a, b = roots
    log = _segment(b / BROKER / PLAIN)
    data = bytearray(log.read_bytes())
    batches = _batches(bytes(data))
    result = decode(bytes(data), mode="file")
    assert result.error is None and len(result.batches) == len(batches)
    # the second record of the last batch: its value found in that batch's bytes
    bi, ri = len(batches) - 1, 1
    value = result.batches[bi].records[ri].value
    assert value and len(value) >= 2
    pos, end = batches[bi]
    at = data.index(value, pos, end) + len(value) // 2
    data[at] ^= 0x01
    if fix_crc:
        _fix_crc(data, pos, end)
    log.write_bytes(bytes(data))
    if fix_crc:  # the edit is a different value, not a corrupt batch
        changed = decode(bytes(data), mode="file")
        assert changed.error is None and changed.batches[bi].records[ri].value != value

    rel = log.relative_to(b / BROKER / PLAIN).as_posix()
    rc, out, err = run(capsys, a, b, "-q", "--json", "-", "--junit", tmp_path / "r.xml")
    assert rc == 1, out + err
    head = out[: out.index("\n{")]
    assert "FAIL (1 case(s))" in head and "scenario" not in head  # -q: no table
    assert f"{BROKER}/{PLAIN}: decode {rel} (mismatch)" in head

    doc = _json(out)
    assert doc["ok"] is False and doc["summary"]["mismatch"] == 1
    failed = [
        (case["case"], c) for case in doc["cases"] for c in case["checks"] if c["status"] != "ok"
    ]
    assert [(case, c["check"], c["path"]) for case, c in failed] == [
        (f"{BROKER}/{PLAIN}", "decode", rel)
    ]
    details = " ".join(failed[0][1]["details"])
    if fix_crc:
        assert f"$.batches[{bi}].records[{ri}]" in details, details
    else:
        assert "CorruptRecordException" in details, details

    tree = ET.parse(tmp_path / "r.xml").getroot()
    failures = [tc for tc in tree.iter("testcase") if tc.find("failure") is not None]
    assert [(tc.get("classname"), tc.get("name")) for tc in failures] == [
        (f"{BROKER}/{PLAIN}", f"decode {rel}")
    ]


def _shift_max_timestamp(log: Path) -> None:
    """maxTimestamp of the first batch + 1, the CRC recomputed."""
    data = bytearray(log.read_bytes())
    pos, end = _batches(bytes(data))[0]
    at = pos + layout.MAX_TIMESTAMP_OFFSET
    old = int.from_bytes(data[at : at + layout.MAX_TIMESTAMP_LENGTH], "big", signed=True)
    data[at : at + layout.MAX_TIMESTAMP_LENGTH] = (old + 1).to_bytes(8, "big", signed=True)
    _fix_crc(data, pos, end)
    log.write_bytes(bytes(data))


def test_a_declared_non_deterministic_field_is_no_difference(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """maxTimestamp changed in B: masked where the manifest declares it (LogAppendTime), a
    difference where it does not."""
    a, b = roots
    declared = {
        e.split(" ", 1)[0] for e in _manifest(b / BROKER / APPEND_TIME)["non_deterministic"]
    }
    assert "maxTimestamp" in declared
    assert "maxTimestamp" not in {
        e.split(" ", 1)[0] for e in _manifest(b / BROKER / PLAIN)["non_deterministic"]
    }
    log = _segment(b / BROKER / APPEND_TIME)
    _shift_max_timestamp(log)
    assert log.read_bytes() != _segment(a / BROKER / APPEND_TIME).read_bytes()
    rc, out, err = run(capsys, a, b)
    assert rc == 0, out + err

    _shift_max_timestamp(_segment(b / BROKER / PLAIN))
    rc, out, err = run(capsys, a, b, "--json", "-")
    assert rc == 1, out + err
    [case] = [c for c in _json(out)["cases"] if not c["ok"]]
    assert case["scenario"] == PLAIN
    [check] = [c for c in case["checks"] if c["status"] != "ok"]
    assert check["check"] == "decode" and any("maxTimestamp" in d for d in check["details"])


def test_a_file_on_one_side_only_is_a_difference(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = roots
    index = next((b / BROKER / PLAIN / "log").rglob("*.index"))
    index.unlink()
    rel = index.relative_to(b / BROKER / PLAIN).as_posix()
    rc, out, err = run(capsys, a, b, "-q")
    assert rc == 1, out + err
    assert f"{BROKER}/{PLAIN}: file {rel} (mismatch)\n    only in A" in out


# ------------------------------------------------------------------------------------------
# cases under one side only


def test_cases_under_one_side_only_are_skipped_or_with_same_cases_failures(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = roots
    shutil.copytree(SOURCE / EXTRA_A, a / BROKER / EXTRA_A)
    shutil.copytree(SOURCE / EXTRA_B, b / BROKER / EXTRA_B)
    rc, out, err = run(capsys, a, b, "--json", "-", "--junit", tmp_path / "r.xml")
    assert rc == 0, out + err
    for name, side, root in ((EXTRA_A, "A", a), (EXTRA_B, "B", b)):
        assert f"{BROKER}/{name}: case only in {side} (skipped)\n    {root / BROKER / name}" in out
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [name])
        assert row[1:4] == ["only", "in", side]
    doc = _json(out)
    assert doc["ok"] is True and doc["summary"]["cases"] == 4 and doc["summary"]["skipped"] == 2
    one_sided = {
        case["scenario"]: [{k: v for k, v in c.items() if k != "seconds"} for c in case["checks"]]
        for case in doc["cases"]
        if case["scenario"] in (EXTRA_A, EXTRA_B)
    }
    assert one_sided == {
        EXTRA_A: [
            {
                "check": "case",
                "path": "only in A",
                "status": "skipped",
                "details": [str(a / BROKER / EXTRA_A)],
            }
        ],
        EXTRA_B: [
            {
                "check": "case",
                "path": "only in B",
                "status": "skipped",
                "details": [str(b / BROKER / EXTRA_B)],
            }
        ],
    }
    assert ET.parse(tmp_path / "r.xml").getroot().get("skipped") == "2"

    rc, out, err = run(capsys, a, b, "--same-cases", "-q")
    assert rc == 1, out + err
    assert "FAIL (2 case(s))" in out
    assert f"{BROKER}/{EXTRA_A}: case only in A (mismatch)" in out
    assert f"{BROKER}/{EXTRA_B}: case only in B (mismatch)" in out


def test_only_and_a_broker_directory_against_a_root(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Cases are matched by <broker-id>/<scenario>, whatever level A and B name."""
    a, b = roots
    rc, out, err = run(capsys, a / BROKER, b, "--only", f"{BROKER}/codec-*")
    assert rc == 0, out + err
    assert "1 case(s)" in out and PLAIN in out and APPEND_TIME not in out
    rc, out, err = run(capsys, a / BROKER / PLAIN, b, "--json", "-")
    assert rc == 0, out + err
    cases = {c["scenario"]: c["checks"][0]["path"] for c in _json(out)["cases"]}
    assert cases[PLAIN] != "only in B" and cases[APPEND_TIME] == "only in B"


# ------------------------------------------------------------------------------------------
# usage errors: exit 2, one line on stderr


def test_usage_errors_are_one_line(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = roots
    empty = tmp_path / "empty"
    empty.mkdir()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    other = tmp_path / "other"
    shutil.copytree(SOURCE / EXTRA_A, other / BROKER / EXTRA_A)
    cases = {
        "missing": ((a, tmp_path / "nope"), "no such directory"),
        "a file": ((a_file, b), "not a directory"),
        "no case": ((a, empty), "no case under it"),
        "--only": ((a, b, "--only", "nothing-*"), "no case matching nothing-*"),
        "disjoint": ((a, other), "no case is under both A and B (A has 2, B has 1"),
        "--json": ((a, b, "--json", tmp_path / "no" / "r.json"), "cannot write the report"),
    }
    for what, (args, message) in cases.items():
        rc, out, err = run(capsys, *args)
        assert rc == 2, (what, out, err)
        assert message in err and len(err.splitlines()) == 1, (what, err)
        assert out == "", (what, out)


def test_capture_options_before_compare_are_refused(
    roots: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = roots
    rc = main(["capture", "--broker", BROKER, "--out", str(a), "compare", str(a), str(b)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert "--broker, --out: capture's own option(s), not compare's" in err


# ------------------------------------------------------------------------------------------
# the command line around it


def test_capture_without_compare_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import build_parser
    from conformance.cli import capture as capture_cli

    args = build_parser().parse_args(
        ["capture", "--broker", BROKER, "--scenario", PLAIN, "--out", "/tmp/c"]
    )
    assert args.func is capture_cli._cmd_capture and args.capture_command is None
    assert (args.broker, args.scenario, args.out) == (BROKER, [PLAIN], Path("/tmp/c"))
    assert main(["capture", "--list"]) == 0
    assert BROKER in capsys.readouterr().out


def test_help_texts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["capture", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "kafka-conformance capture compare [options] A B" in text
    assert "kafka-conformance capture compare /tmp/c/jvm" in text
    with pytest.raises(SystemExit) as exc:
        main(["capture", "compare", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: kafka-conformance capture compare ")
    for part in (
        "exit codes:",
        "examples:",
        "--same-cases",
        "--only",
        "--junit",
        "non_deterministic",
    ):
        assert part in text, part


def test_the_installed_command_and_the_retired_module(roots: tuple[Path, Path]) -> None:
    a, b = roots
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "capture", "compare", str(a), str(b)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert r.returncode == 0 and "-- PASS" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "conformance.capture.compare", str(a), str(b)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "kafka-conformance capture compare A B" in r.stderr
