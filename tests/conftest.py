from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
#: programs the package ships as data (`check --init-adapter`'s starter adapters): standalone
#: programs in their own languages, not modules of the package, so the package's layer and
#: one-home-per-fact rules do not apply to them (they cannot import the kit by design)
SHIPPED_PROGRAMS = ROOT / "conformance" / "harness" / "starters"


def package_modules() -> list[Path]:
    """Every ``.py`` file of the package, without :data:`SHIPPED_PROGRAMS`."""
    return [
        f
        for f in sorted((ROOT / "conformance").rglob("*.py"))
        if not f.is_relative_to(SHIPPED_PROGRAMS)
    ]


settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
# nightly / local soak: HYPOTHESIS_PROFILE=stress pytest tests/test_robustness.py ...
settings.register_profile(
    "stress", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


# ------------------------------------------------------------------------------------------
# real-broker captures shared by tests/test_capture.py and tests/test_capture_containers.py

E2E_BROKER = "kafka-3.9.2-kraft"
E2E_SCENARIOS = [
    "codec-gzip-v2-kafka-python",
    "codec-snappy-v2-java",
    "headers-none-v2-java",
    "txn-commit-abort-v2-kafka-python",
    "compacted-v2-kafka-python",
    "log-append-time-none-v2",
    "multi-segment-time-v2",
]


def require_kafka_jars(version: str = "3.9.2") -> None:
    from conformance.jvm import kafka_jars

    try:
        kafka_jars.classpath(version)
    except kafka_jars.KafkaJarsUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def schemas() -> Any:
    """The protocol definitions the fake broker speaks (Kafka 3.9.2's JSON messages)."""
    from conformance.corpus.consume import DEFINITIONS
    from conformance.jvm.kafka_jars import KafkaJarsUnavailable
    from conformance.jvm.message_defs import message_schemas

    try:
        return message_schemas(DEFINITIONS)
    except KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def captured_twice(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Any]]:
    """E2E_SCENARIOS captured twice by the jvm backend: (root a, root b, results)."""
    require_kafka_jars()
    from conformance.capture.run import capture

    first = tmp_path_factory.mktemp("capture-a")
    second = tmp_path_factory.mktemp("capture-b")
    r1 = capture(E2E_BROKER, E2E_SCENARIOS, first, progress=lambda m: None)
    r2 = capture(E2E_BROKER, E2E_SCENARIOS, second, progress=lambda m: None, expectations=False)
    assert not r1.failed, r1.failed
    assert not r2.failed, r2.failed
    return first / E2E_BROKER, second / E2E_BROKER, [r1, r2]


# ------------------------------------------------------------------------------------------
# nothing left behind: brokers, ZooKeepers, containers, the engine's socket service, adapters

#: command-line fragments of what a capture starts (on the host or in a container)
_LEFTOVER_PATTERNS = (
    "kafka.Kafka ",
    "ZooKeeperServerMain",
    "podman system service",
    "/opt/kafka/run/",
    "conmon ",
    # adapters run by `kafka-conformance check` (built-in and tests/adapters/)
    "/adapters/",
    "kafka-conformance-broken-adapter",
    "oracle.jar serve",
    # conformance.host.objectstore's S3 server (scripts/fetch-s3-server)
    "/tools/bin/versitygw",
    # conformance.jvm.broker_oracle's JVMs (its MAIN_CLASS)
    "org.kafkaconformance.brokeroracle.BrokerOracle serve",
)
_before: set[int] = set()


def processes(patterns: tuple[str, ...] = _LEFTOVER_PATTERNS) -> dict[int, str]:
    """pid -> command line of every process whose command line contains one of ``patterns``."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(p in cmd for p in patterns):
            found[int(d.name)] = cmd
    return found


def wait_until_gone(patterns: tuple[str, ...], seconds: float = 5.0) -> dict[int, str]:
    """:func:`processes` matching ``patterns`` still there after up to ``seconds`` (a killed
    process takes a moment to be reaped): empty when every one is gone."""
    left = processes(patterns)
    deadline = time.monotonic() + seconds
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = processes(patterns)
    return left


def pytest_sessionstart(session: pytest.Session) -> None:
    _before.update(processes())
    # the broker model of Kafka 2.x reads zstd with Kafka 2.8.2's own libzstd (from its jars,
    # resolved with Maven on first use); without them those cases fail with a clear message
    try:
        from conformance.jvm.kafka_jars import use_kafka2_zstd

        use_kafka2_zstd()
    except Exception as e:  # noqa: BLE001 - reported, not fatal to the other tests
        print(f"conftest: no Kafka 2.x libzstd ({e})", file=sys.stderr)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a broker, ZooKeeper, container or engine service that the run
    started is still there (every session fixture has been torn down by now)."""
    import time

    left: dict[int, str] = {}
    for _ in range(20):  # processes being stopped get a few seconds to go
        left = {p: c for p, c in processes().items() if p not in _before}
        if not left:
            break
        time.sleep(0.5)
    if left:
        lines = "\n".join(f"  pid {p}: {c[:160]}" for p, c in sorted(left.items()))
        print(f"\nLEFT BEHIND by the test run:\n{lines}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ------------------------------------------------------------------------------------------
# check and check-producer reports (tests/test_builtin_adapters.py, tests/test_producer_check.py)


def kit_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``kafka-conformance ARGS`` from this checkout (``python -m conformance.cli``), its
    output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )


def unexplained_and_stale(report: dict[str, Any], name: str) -> tuple[list[str], list[str]]:
    """The failing or erroring results of ``name`` no known divergence explains, and its known
    divergences that matched nothing (stale), in a ``kafka-conformance/check/2`` report."""
    unexplained = [
        f"{r['case']}: {r['reason']}"
        for r in report["results"]
        if r["impl"] == name and r["status"] in ("fail", "error") and r["divergence"] is None
    ]
    stale = [
        report["divergences"][i]["summary"]
        for i in report["stale"]
        if report["divergences"][i]["impl"] == name
    ]
    return unexplained, stale


def published_and_fresh_counts(
    matrix: Path, report: dict[str, Any]
) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """(pass, fail, unsupported, error) per implementation: as published in the Markdown
    ``matrix``, and as in ``report``."""
    text = matrix.read_text()
    rows = re.findall(
        r"^\| (\S+(?: consumer)?) [^|]*\| [^|]*\| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", text, re.M
    )
    published = {name: [int(x) for x in counts] for name, *counts in rows}
    fresh = {
        i["name"]: [i["counts"][s] for s in ("pass", "fail", "unsupported", "error")]
        for i in report["implementations"]
    }
    return published, fresh


# ------------------------------------------------------------------------------------------
# the S3 object store (conformance.host.objectstore; tests/test_objectstore.py,
# tests/test_replay_s3.py)


@pytest.fixture(scope="session")
def s3_server_binary() -> Path:
    """The S3 server, built once by scripts/fetch-s3-server (Go module proxy, .cache/)."""
    import shutil
    import subprocess

    if shutil.which("go") is None:
        pytest.skip("Go is needed to build the S3 server (scripts/fetch-s3-server)")
    proc = subprocess.run(
        [str(Path(__file__).resolve().parents[1] / "scripts" / "fetch-s3-server")],
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture
def no_instance_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS SDK never asks 169.254.169.254 for a region or credentials."""
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The kit's wheel and the corpora's wheel, built once per session (tests/wheelenv.py)."""
    from wheelenv import build_wheels

    return build_wheels(tmp_path_factory.mktemp("wheels"))
