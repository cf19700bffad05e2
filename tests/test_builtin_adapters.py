"""Every built-in adapter (adapters/*/adapter.toml), built here from its registry with its
pinned version, over every case of the corpora, in one `kafka-conformance check` run:

* every adapter is buildable on this machine (the toolchains are part of the machine);
* the Java adapter (Kafka's own classes) passes 100%;
* every other divergence is a classified, known one (adapters/*/divergences.toml), and no
  known divergence is stale;
* the published matrix (docs/conformance-matrix.md, scripts/publish-matrix) has the counts of
  this run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import ROOT, published_and_fresh_counts, unexplained_and_stale

from conformance.harness import cases as C
from conformance.harness import registry
from conformance.harness.consumer import read_consume_cases

# the Java adapter is the oracle. The run below builds every built-in adapter on a fresh
# clone (Go, Rust, npm and pip packages) and then runs every case: the suite's 600 s guard per
# test was exceeded by its setup on a fresh clone of this 2-core machine at a slow hour; its
# own deadline is the subprocess's 3600 s
pytestmark = [pytest.mark.oracle, pytest.mark.timeout(1800)]
ADAPTERS = registry.adapters(ROOT / "adapters")
NAMES = [a.name for a in ADAPTERS]
#: the real consumers (the consumer side: the consume scenarios through the fake broker)
CONSUMERS = [a.name for a in registry.adapters(ROOT / "adapters", side="consume")]
#: the rows of the report: every decoder, then every consumer
ROWS = NAMES + [f"{n} consumer" for n in CONSUMERS]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("builtin") / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "check",
            "--impl",
            "all",
            "-q",
            # a few cases make an adapter allocate and zero 2 GiB (franz-go on a snappy chunk
            # length of 2^31 - 2: about 18 s on 2 busy cores); the default 20 s deadline is
            # tight for that on a loaded machine, and the suite must not flake on it
            "--timeout",
            "90",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )
    assert out.is_file(), proc.stderr[-4000:]
    report = json.loads(out.read_text())
    report["_exit"], report["_stdout"], report["_stderr"] = (
        proc.returncode,
        proc.stdout,
        proc.stderr,
    )
    return report


def test_the_built_in_adapters() -> None:
    assert set(NAMES) >= {
        "java",
        "kafka-python",
        "aiokafka",
        "aiokafka-pure",
        "franz-go",
        "sarama",
        "kafka-protocol-rs",
        "kafkajs",
        "kit-native",
    }


@pytest.mark.parametrize("name", NAMES)
def test_buildable_here(name: str) -> None:
    adapter = next(a for a in ADAPTERS if a.name == name)
    state, why = registry.availability(adapter)
    assert state in ("built", "buildable"), why


def test_every_adapter_ran_every_case(run: dict[str, Any]) -> None:
    assert run["_exit"] == 0, run["_stdout"][-4000:] + run["_stderr"][-4000:]
    assert [i["name"] for i in run["implementations"]] == ROWS
    consume = [c for c, doc in run["cases"].items() if doc["group"] == "consume"]
    assert run["complete"] and len(run["cases"]) - len(consume) == len(C.read_cases())
    assert len(consume) == len(read_consume_cases())
    for impl in run["implementations"]:
        ran = (
            len(consume) if impl["name"].endswith(" consumer") else len(run["cases"]) - len(consume)
        )
        assert sum(impl["counts"].values()) == ran, impl["name"]
        assert impl["capabilities"]["declared"], impl["name"]


#: the implementations that must pass every case: Kafka's own classes (its decoder and its
#: KafkaConsumer), and the kit's decoder through its native fast path (docs/native.md),
#: judged against them like a third party
REFERENCES = ("java", "kit-native", "java consumer")


@pytest.mark.parametrize("name", REFERENCES)
def test_references_pass_everything(run: dict[str, Any], name: str) -> None:
    impl = next(i for i in run["implementations"] if i["name"] == name)
    assert impl["counts"]["pass"] == sum(impl["counts"].values()), impl["counts"]


@pytest.mark.parametrize("name", ROWS)
def test_every_divergence_is_classified_and_none_is_stale(run: dict[str, Any], name: str) -> None:
    assert unexplained_and_stale(run, name) == ([], [])


def test_third_parties_really_diverge(run: dict[str, Any]) -> None:
    """The comparison is not vacuous: every third-party library differs from Kafka somewhere,
    and supports most of what it declares."""
    for impl in run["implementations"]:
        if impl["name"] in REFERENCES or impl["name"].endswith(" consumer"):
            continue
        c = impl["counts"]
        assert c["fail"] + c["error"] > 0, impl["name"]
        assert c["pass"] > 200, impl["name"]


def test_published_matrix_is_current(run: dict[str, Any]) -> None:
    published, fresh = published_and_fresh_counts(ROOT / "docs" / "conformance-matrix.md", run)
    assert published == fresh, "run scripts/publish-matrix to update docs/conformance-matrix.md"
    assert (ROOT / "docs" / "conformance-matrix.html").is_file()
