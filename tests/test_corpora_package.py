"""The corpora package (``kafka-conformance-corpora``, scripts/build-corpora-package) serves
what the checkout serves, and ``check`` refuses one that was tampered with (issue 52, point 1
and the hostile trial's corpora-package bullet).

The package is the session's built wheel (``wheels``), unzipped: the files a user installs.
The reference is always the checkout's corpora (the Java oracle's verdicts, the brokers'
captures, their ``.txnindex`` as Kafka wrote it), never the package's own record of itself.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT
from wheelenv import Install, Wheels, fresh_install

from conformance import __version__
from conformance.corpus import consume, package

CORPORA = ROOT / "corpora"
KC = str(Path(sys.executable).parent / "kafka-conformance")
#: a consume scenario whose partition (a Kafka 4.3.1 capture) holds aborted transactions
TXN = "txn-committed"
#: the tests that need the built wheels (the session's `wheels`)
wheel = pytest.mark.wheel


def _build_script() -> ModuleType:
    """scripts/build-corpora-package as a module (its ``first_difference``)."""
    path = ROOT / "scripts" / "build-corpora-package"
    loader = importlib.machinery.SourceFileLoader("build_corpora_package", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shipped(wheels: Wheels, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpora wheel's package directory, unzipped (read-only for the tests: copy it)."""
    where = tmp_path_factory.mktemp("corpora-wheel")
    with zipfile.ZipFile(wheels.corpora) as z:
        z.extractall(where)
    return where / package.PACKAGE


@pytest.fixture
def copy(shipped: Path, tmp_path: Path) -> Path:
    """A copy of the package to tamper with (the name a copy may have: not the package's)."""
    dest = tmp_path / "corpora-copy"
    shutil.copytree(shipped, dest)
    return dest


def _txn_partition(root: Path) -> Path:
    [scenario] = [s for s in consume.SCENARIOS if s.name == TXN]
    return consume.partition_dir(root, scenario)


@wheel
def test_the_built_package_serves_the_checkouts_cases(shipped: Path) -> None:
    """(a) The wheel the real build wrote gives every decode case the checkout's bytes and
    verdicts, every consume scenario the checkout's Fetch answers (aborted transactions
    included: the broker's .txnindex is shipped), every check-broker case its requests; and
    its recorded digest is its files'."""
    assert _build_script().first_difference(CORPORA, shipped) is None
    txnindex = sorted(p.name for p in _txn_partition(shipped).glob("*.txnindex"))
    assert txnindex == sorted(p.name for p in _txn_partition(CORPORA).glob("*.txnindex"))
    assert txnindex, "the capture has a .txnindex"
    recorded = json.loads((shipped / package.IDENTITY_FILE).read_text())
    assert package.identity(shipped) == {
        "version": __version__, "source": "package", "digest": recorded["digest"]
    }  # fmt: skip


@wheel
def test_the_build_check_catches_a_missing_txnindex(copy: Path) -> None:
    """(b) A staged corpus without the .txnindex of the txn-committed partition (what the
    package shipped before: its .log only) is refused, naming the scenario, the offset and
    the aborted transactions the checkout's broker recorded."""
    for f in _txn_partition(copy).glob("*.txnindex"):
        f.unlink()
    found = _build_script().first_difference(CORPORA, copy)
    assert found is not None
    assert found.startswith(f"consume/{TXN}: a Fetch at offset ")
    assert "aborted transactions" in found and "[] from the staged corpus" in found


@wheel
def test_the_build_check_catches_a_changed_verdict_and_request(copy: Path) -> None:
    """A decode verdict changed in the staged corpus names its case; a check-broker request
    changed names its file."""
    script = _build_script()
    verdict = copy / "crafted" / "v2-appendix-a1.memory.json"
    doc = json.loads(verdict.read_text())
    doc["outcome"] = "error" if doc["outcome"] == "ok" else "ok"
    original = verdict.read_text()
    verdict.write_text(json.dumps(doc))
    found = script.first_difference(CORPORA, copy)
    assert found is not None and found.startswith("crafted/v2-appendix-a1@memory: Kafka's verdict")
    verdict.write_text(original)
    request = sorted(copy.glob("produce/*/request-0.bin"))[0]
    request.write_bytes(request.read_bytes() + b"\x00")
    found = script.first_difference(CORPORA, copy)
    assert found is not None and request.parent.name in found and "sha256" in found


def _check(corpora: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``check`` on ``corpora`` with an adapter that is never started when the corpora are
    refused up front (``false``: every case an error otherwise)."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_CONFORMANCE_ROOT"}
    r = subprocess.run(
        [KC, "check", "--cmd", "false", "--corpora", str(corpora), "-q", *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=corpora.parent,
    )  # fmt: skip
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    return r


def _refused(r: subprocess.CompletedProcess[str], *said: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr)
    assert r.stdout == ""  # nothing ran
    for part in said:
        assert part in r.stderr, r.stderr


@wheel
def test_an_untouched_copy_runs(copy: Path) -> None:
    r = _check(copy, "--cases", "crafted/v2-appendix-a1@memory")
    assert r.returncode == 1 and "exit code 1" in r.stdout  # the adapter ran, and failed
    assert "(package, sha256 " in r.stdout


@wheel
@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        pytest.param(
            lambda d: (d / "crafted" / "v2-appendix-a1.memory.json").write_text("{}"),
            (
                "do not match its recorded digest",
                "changed: crafted/v2-appendix-a1.memory.json",
                "reinstall",
            ),
            id="changed-verdict",
        ),
        pytest.param(
            lambda d: (d / "crafted" / "v2-appendix-a1.bin").write_bytes(b"\x00" * 61),
            ("do not match its recorded digest", "changed: crafted/v2-appendix-a1.bin"),
            id="changed-input",
        ),
        pytest.param(
            lambda d: [f.unlink() for f in _txn_partition(d).glob("*.txnindex")],
            ("do not match its recorded digest", "missing: kafka-4.3.1-kraft/"),
            id="deleted-txnindex",
        ),
        pytest.param(
            lambda d: (d / "crafted" / "extra.bin").write_bytes(b"x"),
            ("not in the package: crafted/extra.bin",),
            id="added-file",
        ),
        pytest.param(
            lambda d: (d / package.IDENTITY_FILE).write_text(
                (d / package.IDENTITY_FILE).read_text().replace(f'"{__version__}"', '"9.9.9"')
            ),
            ("the corpora package is version '9.9.9', the kit " + __version__,),
            id="other-version",
        ),
        pytest.param(
            lambda d: (d / package.IDENTITY_FILE).write_text('{"format": '),
            ("corpus.json is not valid JSON", "reinstall"),
            id="garbled-corpus-json",
        ),
        pytest.param(
            lambda d: (d / package.IDENTITY_FILE).unlink(),
            ("corpus.json: missing from the corpora package",),
            id="deleted-corpus-json",
        ),
    ],
)
def test_a_tampered_package_is_refused_up_front(
    copy: Path, tamper: object, said: tuple[str, ...]
) -> None:
    tamper(copy)  # type: ignore[operator]
    _refused(_check(copy), *said)


@wheel
def test_a_fifo_in_the_corpora_is_refused_without_opening_it(copy: Path, tmp_path: Path) -> None:
    """A FIFO (nothing ever writes to it) in the package or in a plain corpora directory: one
    line, exit 2, at once (an open would block for ever)."""
    os.mkfifo(copy / "consume" / "fifo.log")
    _refused(_check(copy, timeout=30), "fifo.log: a FIFO in the corpora, not a regular file")
    plain = tmp_path / "plain"
    shutil.copytree(CORPORA / "crafted", plain / "crafted")
    os.mkfifo(plain / "crafted" / "v2-appendix-a1.bin.tmp")
    _refused(_check(plain, timeout=30), "a FIFO in the corpora")


def test_a_damaged_corpora_directory_is_refused_before_the_run(tmp_path: Path) -> None:
    """A plain directory (no recorded digest): a deleted input, a garbled verdict or manifest
    and a consume partition without its .log are refused before any case runs, naming the
    case and the file."""
    plain = tmp_path / "plain"
    shutil.copytree(CORPORA / "crafted", plain / "crafted")
    (plain / "crafted" / "v2-appendix-a1.bin").unlink()
    _refused(_check(plain, "--cases", "crafted/v2-*"),
             "case crafted/v2-appendix-a1@", "v2-appendix-a1.bin: No such file")  # fmt: skip
    shutil.copyfile(
        CORPORA / "crafted" / "v2-appendix-a1.bin", plain / "crafted" / "v2-appendix-a1.bin"
    )
    (plain / "crafted" / "v2-appendix-a1.file.json").write_text("{not json")
    _refused(_check(plain, "--cases", "crafted/v2-*"), "v2-appendix-a1.file.json: not valid JSON")
    (plain / "crafted" / "manifest.json").write_text("[")
    _refused(_check(plain), "manifest.json: not valid JSON")


def _served_digests(python: str, env: dict[str, str], cwd: Path) -> dict[str, object]:
    """Per consume scenario, the digest of the fake broker's Fetch answers from the corpora
    the kit finds by itself (``corpora_root``), and where that is."""
    code = (
        "import json\n"
        "from conformance.corpus import package\n"
        "from conformance.harness import consumer\n"
        "root = package.corpora_root()\n"
        "cases = consumer.read_consume_cases(root)\n"
        "print(json.dumps({'root': str(root), 'identity': package.identity(root),\n"
        "    'served': {c.id: package.fetch_answers(root, c.scenario).digest() for c in cases}}))\n"
    )
    r = subprocess.run([python, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


@wheel
def test_the_installed_package_serves_the_consume_scenarios_as_the_checkout(
    wheels: Wheels, tmp_path: Path
) -> None:
    """From a fresh venv with only the two wheels (no checkout reachable, KAFKA_CONFORMANCE_ROOT
    unset), every consume scenario is served exactly as from the checkout (every offset's
    Fetch answer: records, offsets, aborted transactions), and check's consume side finds
    the same scenarios."""
    installed: Install = fresh_install(tmp_path, wheels.kit, wheels.corpora)
    there = _served_digests(installed.bin("python"), installed.env, installed.work)
    assert there["root"] == str(installed.site / package.PACKAGE)
    assert there["identity"]["source"] == "package"  # type: ignore[index]
    here = _served_digests(sys.executable, {**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
                           ROOT)  # fmt: skip
    assert here["root"] == str(CORPORA)
    assert here["served"] == there["served"]
    assert f"consume/{TXN}" in there["served"]  # type: ignore[operator]
