"""The kit in a client library's CI (docs/for-library-maintainers.md), as an outsider has it:
a fresh venv with only the built wheels (`pip install 'kafka-conformance[corpora]'`, the
extra resolving to the corpora's wheel), commands run from an empty directory with no
checkout anywhere the kit could find one. There: a starter of each side in Python, the decode
one backed by the kit's own decoder; `check --cmd` on the shipped corpus, its report naming
that corpus; a known file gating (exit 0, then 1 once a new fault is injected); the consume
and produce starters answering from the wheel; the pytest plugin in a sample project.

Kafka's verdicts are the corpus's (the Java oracle's documents), never the decoder's: the
faults are measured against them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from wheelenv import Install, Wheels, fresh_install

from conformance import __version__
from conformance.corpus import package
from conformance.harness import cases as C
from conformance.harness.runner import select

pytestmark = pytest.mark.wheel

#: what the decode starter runs on: the first globs of "Writing an adapter in 15 minutes",
#: gzip cases (the injected fault), and one broker's golden captures
CASES = ("crafted/v2-*", "crafted/gzip-*", "kafka-0.10.2.2-zk/*")
BRIDGE = ROOT / "tests" / "adapters" / "starter-bridges" / "decode" / "python" / "library.py"
BRIDGE_SCRIPT = ROOT / "tests" / "adapters" / "starter_bridge.py"

#: fault A, which the known file explains: every batch's checksum reported as 0
FAULT_A = """

_kit_decode = decode


def decode(data, mode):
    decoded = _kit_decode(data, mode)
    for batch in decoded.batches:
        batch.crc = 0
    return decoded
"""
#: fault B, new: the last record of every gzip batch lost
FAULT_B = """

_faulty_decode = decode


def decode(data, mode):
    decoded = _faulty_decode(data, mode)
    for batch in decoded.batches:
        if batch.compression == "gzip" and batch.records:
            batch.records.pop()
    return decoded
"""
KNOWN = """
[[divergence]]
impl = "python-starter-bridge"
cases = ["crafted/*", "kafka-*"]
class = "real-bug"
summary = "reports every batch's checksum as 0"
lines = ["$.batches*.crc: *"]
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Install:
    tmp = tmp_path_factory.mktemp("client-ci")
    return fresh_install(tmp, f"{wheels.kit}[corpora]", find_links=wheels.directory)


@pytest.fixture(scope="module")
def empty(client: Install) -> Path:
    where = client.work / "my-library"
    where.mkdir()
    return where


def _run(client: Install, cwd: Path, *args: str, env: dict[str, str] | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:  # fmt: skip
    r = subprocess.run(
        [*args], cwd=cwd, env={**client.env, **(env or {})}, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    assert "Traceback" not in r.stderr, (args, r.stderr[-3000:])
    return r


def _expected_ids() -> list[str]:
    """The cases the globs select in the checkout's corpora (the shipped ones must be these)."""
    return [c.id for c in select(C.read_cases(ROOT / "corpora"), list(CASES))]


def test_the_corpora_extra_installs_the_data_package(client: Install) -> None:
    root = client.site / package.PACKAGE
    doc = json.loads((root / package.IDENTITY_FILE).read_text())
    assert doc["version"] == json.loads(_run(client, client.work, client.bin("python"), "-c",
        "import json, conformance; print(json.dumps(conformance.__version__))").stdout)  # fmt: skip
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    assert size < 40e6, f"the corpora package installs {size / 1e6:.1f} MB"
    assert not (client.site / "corpora").exists()


def test_an_outside_library_gates_its_ci_on_the_shipped_corpus(
    client: Install, empty: Path
) -> None:
    kc = client.bin("kafka-conformance")
    py = client.bin("python")
    for side, name in (("decode", "dec"), ("consume", "cons"), ("produce", "prod")):
        made = _run(client, empty, kc, "check", "--init-adapter", "python", name, "--side", side)
        assert made.returncode == 0, made.stderr
    assert {p.name for p in empty.iterdir()} == {"dec", "cons", "prod"}

    # the decode starter backed by the kit's own decoder (the test bridge and its script,
    # copied in: files, not a checkout)
    shutil.copyfile(BRIDGE, empty / "dec" / "library.py")
    shutil.copyfile(BRIDGE_SCRIPT, empty / "starter_bridge.py")
    env = {"STARTER_BRIDGE_PYTHON": py, "STARTER_BRIDGE_SCRIPT": str(empty / "starter_bridge.py")}
    cmd = f"{py} {empty / 'dec' / 'adapter.py'}"
    globs = [a for g in CASES for a in ("--cases", g)]

    def check(*extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
        r = _run(client, empty, kc, "check", "--cmd", cmd, *globs, "--json", "report.json",
                 "--junit", "report.xml", "-q", *extra, env=env)  # fmt: skip
        return r, json.loads((empty / "report.json").read_text())

    ran, report = check()
    assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
    [impl] = report["implementations"]  # type: ignore[misc]
    ids = _expected_ids()
    assert impl["counts"] == {"pass": len(ids), "fail": 0, "unsupported": 0, "error": 0}
    assert sorted(r["case"] for r in report["results"]) == sorted(ids)  # type: ignore[attr-defined]
    shipped = json.loads((client.site / package.PACKAGE / package.IDENTITY_FILE).read_text())
    assert report["corpus"] == {
        "version": shipped["version"], "source": "package", "digest": shipped["digest"]
    }  # fmt: skip
    assert f"corpus {shipped['version']} (package" in (empty / "report.xml").read_text()

    # a known divergence, explained by the known file: exit 0; a new fault on top: exit 1
    # (on the crafted cases only: the gating is the point, not the corpus again)
    globs = [a for g in CASES[:2] for a in ("--cases", g)]
    hook = empty / "dec" / "library.py"
    hook.write_text(hook.read_text() + FAULT_A)
    (empty / "known.toml").write_text(KNOWN)
    ran, report = check()
    assert ran.returncode == 1, "fault A without its known file"
    ran, report = check("--known", "known.toml")
    assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
    [impl] = report["implementations"]  # type: ignore[misc]
    assert impl["counts"]["fail"] == impl["known"] > 0
    hook.write_text(hook.read_text() + FAULT_B)
    ran, report = check("--known", "known.toml")
    assert ran.returncode == 1
    gzip = [r for r in report["results"] if r["status"] == "fail" and r["divergence"] is None]  # type: ignore[attr-defined]
    assert gzip and all("gzip" in r["case"] for r in gzip), [r["case"] for r in gzip]

    # the consumer and producer starters, unwritten, from the wheel: the consume scenarios
    # ship with the corpora and the fake broker with the kit; the hooks refuse honestly
    ran = _run(client, empty, kc, "check", "--side", "consume", "--cmd",
               f"{py} {empty / 'cons' / 'adapter.py'}", "--cases", "consume/v2-nulls",
               "--json", "consume.json", "-q")  # fmt: skip
    assert ran.returncode == 1
    [result] = json.loads((empty / "consume.json").read_text())["results"]
    assert result["status"] == "error" and "not implemented" in result["stderr"], result
    plan = empty / "prod" / "sample-plan.json"
    enc = subprocess.run(
        [py, str(empty / "prod" / "adapter.py"), "encode", "--plan", str(plan)],
        cwd=empty, env=client.env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert enc.returncode == 3 and "not implemented" in enc.stderr  # the hook's traceback

    # check-broker --bootstrap needs only the package (the kit's own client, the broker
    # model): a broker that is not there is a report of errors and exit 1, no traceback
    report = empty / "broker.json"
    ran = _run(client, empty, kc, "check-broker", "--bootstrap", "gone=127.0.0.1:1",
               "--cases", "req-ok", "-q", "--json", str(report))  # fmt: skip
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    problem = json.loads(report.read_text())["implementations"][0]["capabilities_problem"]
    assert "connection refused by 127.0.0.1:1" in problem, problem


SAMPLE_CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def kafka_capabilities():
    return {"name": "samplelib"}
"""
SAMPLE_TEST = """
from conformance import decode

def test_decode(kafka_case):
    doc = decode(kafka_case.data, mode=kafka_case.mode).to_dict()
    if {fault}:
        for batch in doc["batches"]:
            if batch["compression"] == "gzip" and batch["records"]:
                batch["records"].pop()
    kafka_case.check(doc)
"""


def test_the_pytest_plugin_in_a_sample_project(client: Install) -> None:
    client.pip("install", "pytest>=8")
    project = client.work / "sample-project"
    project.mkdir()
    (project / "conftest.py").write_text(SAMPLE_CONFTEST)
    ids = _expected_ids()
    globs = [a for g in CASES for a in ("--kafka-cases", g)]
    for fault in (False, True):
        (project / "test_kafka.py").write_text(SAMPLE_TEST.format(fault=fault))
        r = _run(client, project, client.bin("python"), "-m", "pytest", "-q", "-p",
                 "no:cacheprovider", *globs)  # fmt: skip
        last = r.stdout.strip().splitlines()[-1]
        if not fault:
            assert r.returncode == 0 and f"{len(ids)} passed" in last, r.stdout[-3000:]
        else:
            assert r.returncode == 1 and " failed" in last, r.stdout[-3000:]


def test_corpus_identity_follows_the_files(tmp_path: Path) -> None:
    """A directory's identity is the digest of its files (a changed byte changes it); the data
    package's is the one recorded when it was built."""
    (tmp_path / "crafted").mkdir()
    (tmp_path / "crafted" / "a.bin").write_bytes(b"\x00\x01")
    first = package.identity(tmp_path)
    assert first["source"] == "directory" and first["version"].endswith("+directory")
    (tmp_path / "crafted" / "a.bin").write_bytes(b"\x00\x02")
    second = package.identity(tmp_path)
    assert second["digest"] != first["digest"]
    recorded = package.write_identity(tmp_path, __version__)  # another version is refused
    assert package.identity(tmp_path) == {
        "version": __version__, "source": "package", "digest": recorded["digest"]
    }  # fmt: skip
    assert recorded["digest"] == second["digest"]  # the identity file itself is not hashed
