"""`kafka-conformance check --init-adapter LANG DIR`: every starter adapter builds as it is
written (its hook refusing to decode, honestly), and, with its hook backed by a correct
decoder (tests/adapters/starter-bridges/: the kit's reference decoder, spoken to as lines by
tests/adapters/starter_bridge.py), passes every `crafted/v2-*` case through the protocol code
the user keeps (capabilities, serve, the canonical JSON it writes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from conformance.harness import cases as C
from conformance.harness.judge import read_capabilities
from conformance.harness.runner import select
from conformance.harness.starter import starters

CLI = [sys.executable, "-m", "conformance.cli", "check"]
BRIDGES = ROOT / "tests" / "adapters" / "starter-bridges" / "decode"
STARTERS = starters()
ENV = {
    **os.environ,
    "KAFKA_CONFORMANCE_ROOT": str(ROOT),
    "STARTER_BRIDGE_PYTHON": sys.executable,
    "STARTER_BRIDGE_SCRIPT": str(ROOT / "tests" / "adapters" / "starter_bridge.py"),
}


def test_every_language_of_the_issue_has_a_starter() -> None:
    assert set(STARTERS) == {"python", "go", "java", "rust", "node"}
    for s in STARTERS.values():
        assert (BRIDGES / s.language / s.hook).is_file(), s.language


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=ENV
    )


def _build(language: str, directory: Path) -> None:
    for step in STARTERS[language].build:
        proc = subprocess.run(
            list(step), cwd=directory, capture_output=True, text=True, timeout=600, env=ENV
        )
        assert proc.returncode == 0, f"{' '.join(step)}:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("language", sorted(STARTERS))
def test_starter_builds_and_passes_when_backed_by_a_correct_decoder(
    tmp_path: Path, language: str
) -> None:
    starter = STARTERS[language]
    missing = starter.missing_tools()
    assert not missing, f"the machine lacks {missing}"  # the toolchains are the machine's
    directory = tmp_path / "my-adapter"
    made = _cli("--init-adapter", language, str(directory))
    assert made.returncode == 0, made.stderr
    assert starter.hook in made.stdout and "--cmd" in made.stdout
    assert not (directory / "starter.toml").exists()
    assert _cli("--init-adapter", language, str(directory)).returncode == 2  # not empty now

    # as written: it builds, declares the protocol's capabilities, and refuses to decode
    _build(language, directory)
    command = starter.command(directory)
    caps = subprocess.run(
        [*command, "capabilities"], capture_output=True, text=True, timeout=120, env=ENV
    )
    assert caps.returncode == 0, caps.stderr
    declared = read_capabilities(caps.stdout, "x")
    assert declared.declared and declared.persistent and declared.lists_failing_batch
    sample = (ROOT / "corpora" / "crafted" / "v2-appendix-a1.bin").read_bytes()
    refused = subprocess.run(
        [*command, "decode", "--as", "memory"],
        input=sample,
        capture_output=True,
        timeout=120,
        env=ENV,
    )
    assert refused.returncode != 0 and b"not implemented" in refused.stderr

    # backed by a correct decoder: every crafted/v2-* case passes
    shutil.copyfile(BRIDGES / language / starter.hook, directory / starter.hook)
    _build(language, directory)
    out = tmp_path / "report.json"
    run = _cli(
        "--cmd",
        starter.command_line(directory),
        "--cases",
        "crafted/v2-*",
        "--json",
        str(out),
        "-q",
    )
    report = json.loads(out.read_text())
    (impl,) = report["implementations"]
    n = len(select(C.read_cases(), ["crafted/v2-*"]))
    assert impl["name"] == f"{language}-starter-bridge"
    assert impl["counts"] == {"pass": n, "fail": 0, "unsupported": 0, "error": 0}, run.stdout
    assert run.returncode == 0


def test_unknown_language_and_used_directory(tmp_path: Path) -> None:
    proc = _cli("--init-adapter", "cobol", str(tmp_path / "x"))
    assert proc.returncode == 2 and "python" in proc.stderr
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "mine.txt").write_text("keep")
    proc = _cli("--init-adapter", "go", str(tmp_path / "used"))
    assert proc.returncode == 2 and (tmp_path / "used" / "mine.txt").read_text() == "keep"


#: a hook for the Node starter modelling a library that does not check a batch's length field:
#: it lists the batch the length field claims (a size of 12 + that int32, as it reads it) and
#: computes its last offset without wrapping (a BigInt past 2^63 - 1)
_LENIENT_HOOK = """'use strict';
module.exports = {
  NAME: 'lenient-length', VERSION: '', MAGICS: [0, 1, 2], CODECS: ['none'], CHECKS_CRC: true,
  ERROR_SEMANTICS: 'streaming', FILE_SEMANTICS: true, ERROR_CLASSES: 'none',
  LISTS_FAILING_BATCH: true, NOTES: '',
  OMITS: ['magic', 'crc', 'attributes', 'compression', 'timestampType', 'maxTimestamp'],
  decode: (data) => ({
    batches: [{ position: 0, sizeInBytes: 12 + data.readInt32BE(8),
                lastOffset: data.readBigInt64BE(0) + 2n ** 63n, records: [] }],
    error: null,
  }),
};
"""


def test_node_starter_on_a_negative_batch_length(tmp_path: Path) -> None:
    """`split-size-negative-c57` (length field 0x80000000): the Node starter prints the
    positions of the oracle's verdict when its library rejects the batch, and, when the library
    lists the batch at the size its length field claims (12 - 2^31), no negative tail position
    made of that size; a 64-bit value the library computed past 2^63 - 1 is printed as it is,
    and the kit reports both as the library's differences, not as an adapter's crash."""
    starter = STARTERS["node"]
    directory = tmp_path / "node"
    assert _cli("--init-adapter", "node", str(directory)).returncode == 0
    shutil.copyfile(BRIDGES / "node" / starter.hook, directory / starter.hook)
    command = starter.command(directory)
    data = (ROOT / "corpora" / "crafted" / "split-size-negative-c57.bin").read_bytes()
    for mode in ("memory", "file"):
        (case,) = select(C.read_cases(), [f"crafted/split-size-negative-c57@{mode}"])
        expected = case.expected()
        run = subprocess.run(
            [*command, "decode", "--as", mode], input=data, capture_output=True, env=ENV
        )
        assert run.returncode == 0, run.stderr
        doc = json.loads(run.stdout)
        assert (doc["outcome"], doc["tail"]) == (expected["outcome"], expected["tail"])
        for key in ("batch_index", "position"):
            assert doc["error"][key] == expected["error"][key], (mode, key)

    (directory / starter.hook).write_text(_LENIENT_HOOK)
    run = subprocess.run([*command, "decode", "--as", "memory"], input=data, capture_output=True)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    length = int.from_bytes(data[8:12], "big", signed=True)
    last = int.from_bytes(data[0:8], "big", signed=True) + 2**63
    assert (doc["outcome"], doc["tail"]) == ("ok", None)
    (batch,) = doc["batches"]
    assert batch == {
        "position": 0, "sizeInBytes": 12 + length, "lastOffset": str(last), "records": []
    }  # fmt: skip
    out = tmp_path / "report.json"
    _cli(
        "--cmd", starter.command_line(directory),
        "--cases", "crafted/split-size-negative-c57@memory", "--json", str(out), "-q",
    )  # fmt: skip
    (result,) = json.loads(out.read_text())["results"]
    assert result["status"] == "fail", result
    assert '$.outcome: kafka="error" adapter="ok"' in result["diff"], result["diff"]
