"""The testcontainers capture backend, for real: a container engine (Podman's socket service
started by scripts/container-engine where no daemon answers), broker images built here, brokers
in containers, captures checked against the jvm backend's, and nothing left behind.

Marked ``containers``; part of the default run (no skip: a missing engine is a failure)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import E2E_BROKER, E2E_SCENARIOS, ROOT, processes, require_kafka_jars

from conformance.capture.containers import engine as cengine
from conformance.capture.containers import images

pytestmark = pytest.mark.containers

ZK_BROKER = "kafka-3.9.2-zk-ibp2.8"
ZK_SCENARIOS = [
    "codec-gzip-v0-kafka-python",
    "compacted-v2-kafka-python",
    "txn-commit-abort-v2-kafka-python",
]
SCRIPT = ROOT / "scripts" / "container-engine"


@pytest.fixture(scope="session")
def engine() -> Iterator[cengine.Engine]:
    """The engine of the run: one that answers, else Podman started (and stopped at the end)."""
    eng = cengine.ensure_engine()
    yield eng
    eng.stop()


@pytest.fixture(scope="session")
def client(engine: cengine.Engine) -> Any:
    return cengine.docker_client(engine)


@pytest.fixture(scope="session")
def container_capture(engine: cengine.Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """E2E_SCENARIOS on E2E_BROKER and ZK_SCENARIOS on ZK_BROKER, through testcontainers."""
    require_kafka_jars()
    from conformance.capture.run import capture

    out = tmp_path_factory.mktemp("capture-tc")
    for broker, scenarios in ((E2E_BROKER, E2E_SCENARIOS), (ZK_BROKER, ZK_SCENARIOS)):
        result = capture(broker, scenarios, out, backend="testcontainers", progress=lambda m: None)
        assert not result.failed, result.failed
        assert result.captured == scenarios
    return out


# ------------------------------------------------------------------------------------------
# the engine script


def test_engine_script_usage() -> None:
    helped = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert helped.returncode == 0 and "container-engine up" in helped.stdout
    bad = subprocess.run([str(SCRIPT), "bogus"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "unknown command bogus" in bad.stderr


def test_engine_answers_and_script_env_names_it(engine: cengine.Engine, client: Any) -> None:
    assert client.ping() is True
    env = subprocess.run([str(SCRIPT), "env"], capture_output=True, text=True, check=False)
    assert env.returncode == 0, env.stderr
    assert f"export DOCKER_HOST={engine.url}" in env.stdout.splitlines()
    assert "export TESTCONTAINERS_RYUK_DISABLED=true" in env.stdout.splitlines()
    assert os.environ["DOCKER_HOST"] == engine.url


# ------------------------------------------------------------------------------------------
# images


def test_images_are_built_once_and_run(client: Any) -> None:
    require_kafka_jars()
    first = images.kafka_image(client, "3.9.2")
    again = images.kafka_image(client, "3.9.2")
    assert not again.built and again.id == first.id and again.tag == "kafka-conformance/kafka:3.9.2"
    attrs = client.images.get(first.tag).attrs
    assert attrs["Config"]["Labels"][images.INPUTS_LABEL]
    out = client.containers.run(
        first.tag,
        ["java", "-version"],
        remove=True,
        stdout=True,
        stderr=True,
        labels={cengine.LABEL: "test-java-version"},
    )
    assert b'version "17.' in out


def test_images_are_rebuilt_when_an_input_changes(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_kafka_jars()
    before = images.kafka_image(client, "3.9.2")
    edited = tmp_path / "kafka-start.sh"
    edited.write_text(images.START_SCRIPT.read_text() + "# an edit\n")
    monkeypatch.setattr(images, "START_SCRIPT", edited)
    changed = images.kafka_image(client, "3.9.2")
    assert changed.built and changed.id != before.id
    monkeypatch.undo()
    back = images.kafka_image(client, "3.9.2")  # the label no longer matches: built again
    assert back.built
    assert images.kafka_image(client, "3.9.2").built is False
    ids = {i.id for i in client.images.list(all=True)}
    assert changed.id not in ids  # a replaced image is removed, not left dangling


# ------------------------------------------------------------------------------------------
# captures through testcontainers


def test_container_capture_manifest(container_capture: Path, client: Any) -> None:
    from conformance.corpus import golden

    image = client.images.get("kafka-conformance/kafka:3.9.2")
    for broker, scenarios in ((E2E_BROKER, E2E_SCENARIOS), (ZK_BROKER, ZK_SCENARIOS)):
        for name in scenarios:
            case = container_capture / broker / name
            manifest = golden.read_manifest(case)
            assert manifest["backend"] == "testcontainers"
            assert manifest["image"]["tag"] == "kafka-conformance/kafka:3.9.2"
            assert manifest["image"]["id"] == image.id
            assert manifest["image"]["digest"].startswith("sha256:")
            assert manifest["java_version"].startswith("17")
            result = golden.verify_case(case)
            failed = [c.to_dict() for c in result.checks if c.failed]
            assert not failed, failed
    zk = golden.read_manifest(container_capture / ZK_BROKER / ZK_SCENARIOS[0])
    assert zk["broker_mode"] == "zookeeper" and "zookeeper.connect" in zk["broker_config"]


@pytest.mark.capture
def test_container_capture_matches_jvm_capture(
    container_capture: Path, captured_twice: tuple[Path, Path, list]
) -> None:
    """KRaft: the same scenarios through both backends, decoded, apart from the
    non-deterministic fields the scenarios declare."""
    from conformance.capture.compare import compare_corpora

    jvm_root = captured_twice[0].parent
    report = compare_corpora(jvm_root, container_capture, only=E2E_BROKER, same_cases=True)
    assert [c.case_id for c in report.cases] == [f"{E2E_BROKER}/{n}" for n in sorted(E2E_SCENARIOS)]
    assert report.ok, report.format_table(quiet=True)


def test_container_zookeeper_capture_matches_committed_jvm_corpus(container_capture: Path) -> None:
    """ZooKeeper mode: against corpora/ (captured by the jvm backend, manifest says so)."""
    from conformance.capture.compare import compare_corpora
    from conformance.corpus import golden

    committed = ROOT / "corpora"
    for name in ZK_SCENARIOS:
        assert golden.read_manifest(committed / ZK_BROKER / name)["backend"] == "jvm"
    only = container_capture.parent / "zk-only"
    shutil.copytree(container_capture / ZK_BROKER, only / ZK_BROKER, dirs_exist_ok=True)
    report = compare_corpora(committed, only, only=[f"{ZK_BROKER}/{n}" for n in ZK_SCENARIOS])
    assert [c.case_id for c in report.cases] == [f"{ZK_BROKER}/{n}" for n in sorted(ZK_SCENARIOS)]
    assert report.ok and not report.counts()["skipped"], report.format_table(quiet=True)


def test_compare_sees_a_changed_record(container_capture: Path, tmp_path: Path) -> None:
    """The cross-check can fail: one flipped value byte in a copy is a difference."""
    from conformance.capture.compare import compare_corpora

    name = "headers-none-v2-java"
    copy = tmp_path / E2E_BROKER / name
    shutil.copytree(container_capture / E2E_BROKER / name, copy)
    log = next((copy / "log").rglob("00000000000000000000.log"))
    data = bytearray(log.read_bytes())
    data[-1] ^= 0x01  # last byte of the last record's value (CRC now wrong as well)
    log.write_bytes(bytes(data))
    report = compare_corpora(container_capture, tmp_path, only=f"{E2E_BROKER}/{name}")
    assert [c.case_id for c in report.cases] == [f"{E2E_BROKER}/{name}"]
    assert [c.path for _, c in report.failures()] == [log.relative_to(copy).as_posix()]


# ------------------------------------------------------------------------------------------
# the command line: its own engine service, and nothing left behind (also on Ctrl-C)


def _leftovers(client: Any, sock: Path) -> list[str]:
    left = [
        f"container {c.short_id} {c.labels}"
        for c in client.containers.list(all=True, filters={"label": cengine.LABEL})
    ]
    left += [
        f"process {pid}: {cmd[:200]}"
        for pid, cmd in processes((str(sock), "/opt/kafka/run/")).items()
    ]
    if sock.exists():
        left.append(f"socket {sock}")
    return left


def _cli(sock: Path, out: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCKER_", "TESTCONTAINERS_"))}
    env["KAFKA_CONFORMANCE_ENGINE_SOCKET"] = str(sock)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "capture",
            "--backend",
            "testcontainers",
            "--broker",
            E2E_BROKER,
            "--scenario",
            "codec-none-v2-kafka-python",
            "--scenario",
            "compacted-v2-kafka-python",
            "--out",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


@pytest.fixture
def own_socket() -> Iterator[Path]:
    sock = Path(f"/run/kc-test-{uuid.uuid4().hex[:8]}/podman.sock")
    yield sock
    shutil.rmtree(sock.parent, ignore_errors=True)


def test_cli_starts_its_own_engine_and_leaves_nothing(
    client: Any, own_socket: Path, tmp_path: Path
) -> None:
    require_kafka_jars()
    proc = _cli(own_socket, tmp_path / "out")
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert f"container engine at unix://{own_socket} (started; stopped again" in output
    assert "2 captured, 0 failed" in output
    assert (tmp_path / "out" / E2E_BROKER / "compacted-v2-kafka-python" / "manifest.json").is_file()
    assert _leftovers(client, own_socket) == []


def test_cli_interrupted_leaves_nothing(client: Any, own_socket: Path, tmp_path: Path) -> None:
    require_kafka_jars()
    proc = _cli(own_socket, tmp_path / "out")
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 300
    for line in proc.stdout:  # Ctrl-C once the broker in its container answers
        lines.append(line)
        if " up at " in line or time.monotonic() > deadline:
            break
    assert any(" up at " in line for line in lines), "".join(lines)
    os.killpg(proc.pid, signal.SIGINT)
    rest, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, "".join(lines) + rest
    assert "interrupted" in rest
    assert _leftovers(client, own_socket) == []


def test_check_producer_on_a_container_broker(engine: cengine.Engine, tmp_path: Path) -> None:
    """``check-producer --backend testcontainers``: the same judgement with the broker in a
    container (Java's KafkaProducer passes; the broker is stopped afterwards)."""
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "check-producer", "--impl", "java"]
        + ["--backend", "testcontainers", "-q", "--json", str(out)]
        + ["--scenarios", "codec-zstd", "--scenarios", "idempotent-retry"]
        + ["--scenarios", "txn-abort"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "(testcontainers)" in proc.stderr
    report = json.loads(out.read_text())
    assert sorted(r["case"] for r in report["results"]) == [
        "4.3.1/codec-zstd",
        "4.3.1/idempotent-retry",
        "4.3.1/txn-abort",
    ]
    assert {r["status"] for r in report["results"]} == {"pass"}
