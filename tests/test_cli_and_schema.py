from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings

from conformance import decode
from conformance import strategies as kst
from conformance.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "conformance" / "schema" / "decode-result.schema.json").read_text())
#: one validator for every document (``jsonschema.validate`` checks the schema and builds a
#: validator on each call)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SAMPLES = sorted(str(p) for p in (ROOT / "corpora" / "samples").glob("*.bin"))


def test_decode_json_one_line_per_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--json", *SAMPLES]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(SAMPLES)
    for line in lines:
        VALIDATOR.validate(json.loads(line))


def test_exit_code_on_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\0" * 17)
    assert main(["decode", str(bad)]) == 1
    assert "CorruptRecordException" in capsys.readouterr().out
    assert main(["decode", "--as", "file", str(bad)]) == 0  # a <=17 byte tail is ignored in files


def test_missing_file_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "/nonexistent/x.bin"]) == 2


def test_console_script_help_has_examples() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "decode", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "examples:" in out and "exit codes:" in out and "varint-non-minimal" in out


@settings(max_examples=50)
@given(kst.record_streams())
def test_output_matches_schema(cases: list[kst.BatchCase]) -> None:
    data = b"".join(c.data for c in cases)
    for profile in ("kafka", "strict"):
        VALIDATOR.validate(decode(data[:-3], profile=profile).to_dict())  # type: ignore[arg-type]


def test_stored_expectations_match_schema() -> None:
    for path in sorted((ROOT / "corpora" / "crafted").glob("*.json")):
        if path.name != "manifest.json":
            VALIDATOR.validate(json.loads(path.read_text()))
