"""``conformance.capture``: real-broker captures (marked ``capture``) and Java-free unit tests
of the machinery (ports, process cleanup, harvesting, scenario selection, CLI)."""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import E2E_BROKER as BROKER  # the jvm capture fixture `captured_twice` is there
from conftest import E2E_SCENARIOS

from conformance.capture import BrokerSpec
from conformance.capture import jvm as cjvm
from conformance.capture.brokers import BROKERS
from conformance.capture.run import copy_partition
from conformance.capture.scenarios import (
    SCENARIOS,
    mask,
    masked_keys,
    scenarios_for,
)
from conformance.host.ports import free_port

# ------------------------------------------------------------------------------------------
# Java-free


def test_free_port_unique_and_bindable() -> None:
    ports = {free_port() for _ in range(20)}
    assert len(ports) == 20
    for port in list(ports)[:3]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_stop_process_sigterm() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert cjvm.stop_process(proc, timeout=10) == -signal.SIGTERM
    assert cjvm.stop_process(proc) == -signal.SIGTERM  # idempotent


def test_stop_process_kills_after_timeout() -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    t0 = time.monotonic()
    assert cjvm.stop_process(proc, timeout=0.5) == -signal.SIGKILL
    assert time.monotonic() - t0 < 10


def test_broker_stop_stops_every_process(tmp_path: Path) -> None:
    broker = cjvm.JvmBroker(BROKERS["kafka-3.9.2-zk-ibp2.8"], tmp_path)
    for name in ("zookeeper", "broker"):
        broker.processes.append(
            (name, subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        )
    with broker:
        pass
    assert all(p.poll() is not None for _, p in broker.processes)
    broker.stop()  # idempotent


def test_copy_partition_skips_cleaner_leftovers(tmp_path: Path) -> None:
    src = tmp_path / "t-0"
    src.mkdir()
    for name in (
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.log.deleted",
        "00000000000000000000.log.cleaned",
        "00000000000000000000.log.swap",
        "leader-epoch-checkpoint",
    ):
        (src / name).write_bytes(b"x")
    dst = tmp_path / "out" / "t-0"
    copied = copy_partition(src, dst)
    assert sorted(p.name for p in copied) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "leader-epoch-checkpoint",
    ]


def test_scenario_selection() -> None:
    kraft = {s.name for s in scenarios_for(BROKERS["kafka-3.9.2-kraft"])}
    zk = {s.name for s in scenarios_for(BROKERS["kafka-3.9.2-zk-ibp2.8"])}
    k4 = {s.name for s in scenarios_for(BROKERS["kafka-4.3.1-kraft"])}
    legacy = {s.name for s in scenarios_for(BROKERS["kafka-1.1.1-zk"])}
    assert not any(re.search(r"-v[01](-|$)", n) and "upconvert" not in n for n in kraft | k4)
    assert "codec-gzip-v0-kafka-python" in zk and "codec-gzip-v0-kafka-python" in legacy
    assert not any("zstd" in n for n in legacy)
    assert "multi-segment-bytes-v2" in kraft and "multi-segment-bytes-v2" not in k4
    assert "upconvert-v1-to-v2" in kraft and "upconvert-v1-to-v2" not in k4
    assert "kraft-cluster-metadata" in kraft and "kraft-cluster-metadata" not in zk
    assert scenarios_for(BROKERS["kafka-3.9.2-kraft"])[-1].name == "kraft-cluster-metadata"
    assert all(n == s.name for n, s in SCENARIOS.items())
    with pytest.raises(KeyError):
        scenarios_for(BROKERS[BROKER], ["no-such-scenario"])
    spec = BrokerSpec("x", "3.9.2", "kraft")
    assert SCENARIOS["codec-none-v2-kafka-python"].applies(spec)


def test_mask_helpers() -> None:
    keys, files = masked_keys(["producerId (why)", "file:*.snapshot (why)", "crc"])
    assert keys == {"producerId", "crc"} and files == ["*.snapshot"]
    doc = {"batches": [{"crc": 1, "producerId": "7", "records": [{"crc": 2, "v": 3}]}]}
    assert mask(doc, keys) == {
        "batches": [
            {"crc": "<masked>", "producerId": "<masked>", "records": [{"crc": "<masked>", "v": 3}]}
        ]
    }


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import capture as capture_cli

    parser = argparse.ArgumentParser()
    capture_cli.register(parser.add_subparsers())
    args = parser.parse_args(["capture", "--list"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "kafka-1.1.1-zk" in out and "compacted-v2-java" in out


# ------------------------------------------------------------------------------------------
# real broker (Java 17 + Maven Central jars)


@pytest.mark.capture
def test_capture_end_to_end(captured_twice: tuple[Path, Path, list]) -> None:
    from conformance.corpus import golden as corpus

    root, _, _ = captured_twice
    for name in E2E_SCENARIOS:
        case = root / name
        manifest = json.loads((case / "manifest.json").read_text())
        assert manifest["broker_id"] == BROKER and manifest["scenario"] == name
        assert manifest["broker_mode"] == "kraft" and manifest["backend"] == "jvm"
        assert manifest["producer"]["name"] in ("kafka-python", "java")
        assert manifest["java_version"].startswith("17")
        assert any(f["kind"] == "log" for f in manifest["files"])
        assert not any(p.name.endswith((".deleted", ".cleaned", ".swap")) for p in case.rglob("*"))
        assert (case / "expected").is_dir()
        result = corpus.verify_case(case)
        failed = [c.to_dict() for c in result.checks if c.failed]
        # our decoder must agree with the oracle on the real broker's bytes
        assert not [c for c in failed if c["check"] in ("manifest", "sha256", "decode")], failed
    txn = root / "txn-commit-abort-v2-kafka-python" / "log" / "txn-commit-abort-v2-kafka-python-0"
    assert list(txn.glob("*.txnindex"))
    compacted = root / "compacted-v2-kafka-python" / "log" / "compacted-v2-kafka-python-0"
    assert len(list(compacted.glob("*.log"))) >= 2
    assert (
        len(
            list((root / "multi-segment-time-v2" / "log" / "multi-segment-time-v2-0").glob("*.log"))
        )
        == 4
    )


@pytest.mark.capture
def test_capture_is_deterministic(captured_twice: tuple[Path, Path, list]) -> None:
    from conformance.capture.compare import compare_corpora

    first, second, _ = captured_twice
    report = compare_corpora(first.parent, second.parent, same_cases=True)
    assert [c.case_id for c in report.cases] == [
        f"{BROKER}/{name}" for name in sorted(E2E_SCENARIOS)
    ]
    assert report.ok, report.format_table(quiet=True)
