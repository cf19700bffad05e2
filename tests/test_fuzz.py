"""The fuzzing layer: mutator, findings store, minimizer, differential, and a real smoke run of
every target under atheris (the CI smoke the nightly runs build on)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import decode
from conformance.fuzz import store as fstore
from conformance.fuzz.minimize import ddmin
from conformance.fuzz.mutator import Mutator, split
from conformance.fuzz.targets import (
    CODEC_OF,
    TARGETS,
    Target,
    get,
    wrap_payload,
)
from conformance.fuzz.worker import build
from conformance.primitives.crc import crc32c
from conformance.wire.batch import RecordBatchV2

ROOT = Path(__file__).resolve().parent.parent
CRAFTED = ROOT / "corpora" / "crafted"


def _seeds(name: str, limit: int = 60) -> list[bytes]:
    out = []
    for s in get(name).seeds(ROOT):
        out.append(s)
        if len(out) >= limit:
            break
    return out


def test_every_target_has_seeds_and_handles_them() -> None:
    for name, target in TARGETS.items():
        seeds = _seeds(name)
        assert seeds, name
        for s in seeds:
            try:
                target.run(s)
            except Exception as e:  # noqa: BLE001
                from conformance.errors import DecodeError

                assert isinstance(e, DecodeError), (name, e)


def test_mutator_is_deterministic_per_seed() -> None:
    m = Mutator("stream", target="batch")
    seed = _seeds("batch")[5]
    assert m(seed, 16384, 42) == m(seed, 16384, 42)


def test_mutated_v2_batches_mostly_keep_a_valid_checksum() -> None:
    """The point of structure-aware mutation: mutated batches get past ensureValid()."""
    m = Mutator("stream", target="batch")
    seeds = [s for s in _seeds("batch", 200) if len(s) < 4096]
    valid = total = 0
    for i in range(600):
        out = m(seeds[i % len(seeds)], 16384, i)
        entries, _ = split(out)
        for raw in entries:
            if len(raw) >= 61 and raw[16] == 2:
                total += 1
                b = RecordBatchV2(raw)
                valid += crc32c(raw[21:]) == b.crc and b.batch_length == len(raw) - 12
    assert total > 300
    assert valid / total > 0.85, (valid, total)


def test_codec_mutations_reach_the_records() -> None:
    """Recompressed mutations decompress cleanly, so record parsing sees the change."""
    for codec, codec_id in CODEC_OF.items():
        m = Mutator("codec", target=codec)
        seeds = _seeds(codec, 30)
        decoded = 0
        for i in range(200):
            out = m(seeds[i % len(seeds)], 16384, i)
            result = decode(wrap_payload(codec_id, out))
            if result.batches and result.batches[0].records:
                decoded += 1
        assert decoded > 40, (codec, decoded)


def test_header_mutations_produce_header_sections() -> None:
    m = Mutator("headers", target="headers")
    seeds = _seeds("headers")
    assert any(
        decode(get("headers").wire_bytes(m(seeds[i % len(seeds)], 4096, i))).ok  # type: ignore[arg-type]
        for i in range(50)
    )


def test_store_deduplicates_by_stack_and_keeps_the_smallest(tmp_path: Path) -> None:
    st = fstore.FindingStore(tmp_path, "t")

    def boom(n: int) -> BaseException:
        try:
            [][n]
        except IndexError as e:
            return e
        raise AssertionError

    assert st.crash(b"x" * 10, boom(1)) is True
    assert st.crash(b"x" * 20, boom(2)) is False  # same stack, bigger: not saved
    st.crash(b"x" * 3, boom(3))  # same stack, smaller: replaces the input
    found = fstore.read_findings(tmp_path, "t")
    assert len(found) == 1
    assert found[0].input == b"x" * 3
    assert found[0].kind == "crash"
    assert "IndexError" in found[0].signature


def test_worker_files_undocumented_exceptions_and_goes_on(tmp_path: Path) -> None:
    def run(data: bytes) -> None:
        if data.startswith(b"\xff"):
            raise KeyError("stray")
        decode(data)

    TARGETS["_probe"] = Target("_probe", run, "test", lambda root: iter(()))
    try:
        one, stats, _ = build("_probe", tmp_path, False)
        one(b"\x00\x01")
        one(b"\xff\x00")
        one(b"\xff\x01\x02")
    finally:
        del TARGETS["_probe"]
    assert stats["execs"] == 3 and stats["crashes"] == 2
    found = fstore.read_findings(tmp_path, "_probe")
    assert [f.kind for f in found] == ["crash"]
    assert found[0].input == b"\xff\x00"


def test_ddmin_finds_the_minimal_failing_input() -> None:
    data = bytes(random.Random(1).randrange(256) for _ in range(300)) + b"BUG" + b"z" * 200
    small = ddmin(data, lambda d: b"BUG" in d)
    assert small == b"BUG"


def test_kafka_python_agrees_with_the_oracle_on_clean_batches() -> None:
    pytest.importorskip("kafka")
    from conformance.fuzz.differential import compare_kafka_python, kafka_python

    manifest = json.loads((CRAFTED / "manifest.json").read_text())
    checked = 0
    for case in manifest["cases"]:
        expected = (
            json.loads((CRAFTED / f"{case['name']}.memory.json").read_text())
            if "memory" in case["modes"]
            else None
        )
        if not expected or expected["outcome"] != "ok" or not case["name"].startswith("codec-"):
            continue
        data = (CRAFTED / f"{case['name']}.bin").read_bytes()
        assert compare_kafka_python(expected, kafka_python(data)) == [], case["name"]
        checked += 1
    assert checked >= 5


def test_kafka_python_difference_is_reported() -> None:
    """A CRC-corrupt v2 batch: Kafka raises, so a consumer that passed it on would differ."""
    from conformance.fuzz.differential import compare_kafka_python

    java = {
        "error": {"kafka_exception": "org.apache.kafka.common.errors.CorruptRecordException"},
        "batches": [],
    }
    kp = {
        "error": None,
        "records": [{"offset": "0", "timestamp": "0", "key": None, "value": b"v", "headers": []}],
    }
    out = compare_kafka_python(java, kp)
    assert any(line.startswith("$.verdict") for line in out)
    assert any(line.startswith("$.records") for line in out)


def _cli(*args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_cli_lists_targets() -> None:
    r = _cli("fuzz", "--list")
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names == list(TARGETS)


def test_smoke_every_target_under_atheris(tmp_path: Path) -> None:
    """CI smoke: every target really fuzzes (atheris + libFuzzer, instrumented), a few
    seconds each, and nothing of the kit's own is found."""
    pytest.importorskip("atheris")
    r = _cli("fuzz", "all", "--time", "3", "--out", str(tmp_path), "--json")
    summaries = json.loads(r.stdout) if r.stdout.strip() else []
    assert [s["target"] for s in summaries] == list(TARGETS), r.stderr[-3000:]
    for s in summaries:
        assert s["execs"] > 100, s
        assert s["coverage"] > 0, s
        assert not s["new_findings"], s
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.oracle
def test_smoke_differential(tmp_path: Path) -> None:
    """The differential pipeline works end to end against the real oracle JVM and kafka-python.
    Divergences it may find are triaged by the nightly run; a crash or a dead oracle fails."""
    pytest.importorskip("atheris")
    r = _cli(
        "fuzz",
        "stream",
        "--time",
        "15",
        "--differential",
        "--out",
        str(tmp_path),
        "--json",
        "--minimize-seconds",
        "5",
    )
    [s] = json.loads(r.stdout)
    assert s["differential_inputs"] > 500, s
    assert not [
        f for f in s["new_findings"] if f.split("/")[0] in ("crash", "oracle", "timeout")
    ], s


@pytest.mark.oracle
@pytest.mark.parametrize("broker", ["2.8.2", "4.3.1"])
def test_smoke_produce_differential(tmp_path: Path, broker: str) -> None:
    """The produce target against a broker oracle, pinned to one version: inputs really are
    compared, with that version, and the model agrees with Kafka on all of them."""
    pytest.importorskip("atheris")
    r = _cli(
        "fuzz", "produce", "--time", "12", "--differential", "--broker", broker,
        "--out", str(tmp_path), "--json", "--minimize-seconds", "5",
    )  # fmt: skip
    [s] = json.loads(r.stdout)
    assert s["broker"] == broker
    assert s["differential_inputs"] > 300, s
    assert not s["new_findings"], s
    assert r.returncode == 0, r.stderr[-3000:]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "brokeroracle" not in ps and str(tmp_path) not in ps


def test_produce_inputs_follow_the_pinned_broker() -> None:
    from conformance.fuzz.produce import pinned_broker, read_request, write_request

    data = write_request(0, 0, 0, b"")  # the selector names 2.8.2
    assert read_request(data).version == "2.8.2"
    with pinned_broker("4.3.1"):
        assert read_request(data).version == "4.3.1"
    assert read_request(data).version == "2.8.2"
    with pytest.raises(ValueError, match="unknown broker version"):
        with pinned_broker("9.9.9"):
            pass


def test_coverage_report_measures_the_decoder() -> None:
    pytest.importorskip("coverage")
    from conformance.fuzz import coverage

    results = coverage.measure(["varint"])
    [varint] = [m for m in results["varint"] if m.module == "primitives.varint"]
    assert varint.branches > 20 and varint.covered > 10
    measured = {m.module for m in results["all"]}
    # every reading layer is measured (a module the target never entered counts, at 0%) ...
    assert {
        "primitives.varint",
        "primitives.java",
        "wire.record",
        "wire.batch",
        "wire.legacy",
        "wire.control",
        "stream.splitter",
        "stream.decoder",
        "stream.findings",
        "logdir.index",
        "logdir.txnindex",
        "logdir.snapshot",
        "logdir.checkpoint",
    } <= measured
    assert any(m.startswith("codecs") for m in measured)
    # ... and nothing of the shells or the writers
    assert not {
        m for m in measured if m.split(".")[0] in ("cli", "fuzz", "corpus", "jvm", "capture")
    }
    assert "wire.builder" not in measured


def test_heap_dependent_inputs_are_not_sent_to_the_oracle() -> None:
    """A record length Java would allocate before reading (300 MiB): Java's verdict and time
    depend on its heap, so the differential does not compare it (and starts no JVM)."""
    from conformance import codecs
    from conformance.fuzz.differential import Differential
    from conformance.fuzz.targets import v2_envelope
    from conformance.primitives.varint import write_varint

    payload = codecs.write_stream(1, write_varint(300 * 1024 * 1024) + b"\x00" * 20)
    d = Differential()
    try:
        out = d.run(v2_envelope(payload, attributes=1, count=1))
        assert out.bounded and out.java is None and not out.differences
        assert d.skipped == 1
        assert d.oracle._proc is None  # never started
    finally:
        d.close()


def test_allocations_are_watched_only_inside_the_with() -> None:
    """``errors.Allocations`` sees the allocations of the decodes run inside it, in its own
    thread only; outside a ``with`` nothing is recorded (the core keeps no state)."""
    import threading

    from conformance import codecs
    from conformance.errors import Allocations
    from conformance.fuzz.targets import v2_envelope
    from conformance.primitives.varint import write_varint

    huge = v2_envelope(
        codecs.write_stream(1, write_varint(300 * 1024 * 1024) + b"\x00" * 20),
        attributes=1,
        count=1,
    )
    small = v2_envelope(
        codecs.write_stream(1, write_varint(50) + b"\x00" * 20), attributes=1, count=1
    )
    decode(huge)  # no watch: nothing to record
    with Allocations() as watch:
        decode(small)
        assert 0 < watch.largest < 100
        other = threading.Thread(target=decode, args=(huge,))
        other.start()
        other.join()
        assert watch.largest < 100  # another thread's decode is not this watch's
        decode(huge)
    assert watch.largest == 300 * 1024 * 1024
    decode(small)
    assert watch.largest == 300 * 1024 * 1024  # ended with the with
