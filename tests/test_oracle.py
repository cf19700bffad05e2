"""The reference decoder against Kafka's own Java classes (the oracle).

* every crafted edge case: our canonical JSON equals the oracle's stored expectation
  (pure Python; the expectations were written by ``scripts/make-crafted-corpus``);
* ``oracle``-marked tests rebuild the oracle from Maven Central and check that it still
  produces those expectations, and that encoder output reads identically in Java and here.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from conformance import decode
from conformance.strategies import CODECS_BY_MAGIC
from conformance.stream.compare import diff
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parent.parent
CRAFTED = ROOT / "corpora" / "crafted"
MANIFEST = json.loads((CRAFTED / "manifest.json").read_text())
CASES = [(c["name"], mode) for c in MANIFEST["cases"] for mode in c["modes"]]


def test_corpus_is_large_enough() -> None:
    assert len(MANIFEST["cases"]) >= 150


@pytest.mark.parametrize(("name", "mode"), CASES, ids=[f"{n}[{m}]" for n, m in CASES])
def test_crafted_case_matches_oracle(name: str, mode: str) -> None:
    rel = f"corpora/crafted/{name}.bin"
    expected = json.loads((CRAFTED / f"{name}.{mode}.json").read_text())
    actual = decode((ROOT / rel).read_bytes(), mode=mode, filename=rel).to_dict()  # type: ignore[arg-type]
    assert diff(expected, actual) == []


@pytest.mark.oracle
def test_oracle_reproduces_stored_expectations() -> None:
    from conformance.jvm import oracle

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for mode in ("memory", "file"):
            names = [n for n, m in CASES if m == mode]
            docs = oracle.decode_files([Path(f"corpora/crafted/{n}.bin") for n in names], mode)
            for n, doc in zip(names, docs, strict=True):
                stored = json.loads((CRAFTED / f"{n}.{mode}.json").read_text())
                assert doc == stored, n
    finally:
        os.chdir(cwd)


def _random_batches(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        magic = (0, 1, 2)[i % 3]
        codecs = CODECS_BY_MAGIC[magic]
        opts: dict[str, object] = {
            "magic": magic,
            "compression": codecs[(i // 3) % len(codecs)],
            "base_offset": rng.randrange(1 << 40),
        }
        if magic and rng.random() < 0.3:
            opts.update(timestamp_type="LogAppendTime", log_append_time=rng.randrange(1 << 42))
        if magic == 2 and rng.random() < 0.5:
            opts.update(
                producer_id=rng.randrange(1 << 30),
                producer_epoch=rng.randrange(100),
                base_sequence=rng.randrange(1 << 31),
                is_transactional=rng.random() < 0.5,
                partition_leader_epoch=rng.randrange(1000),
            )
        b = BatchBuilder(**opts)  # type: ignore[arg-type]
        offset = int(opts["base_offset"])  # type: ignore[call-overload]
        for _ in range(rng.randint(1, 40)):
            key = None if rng.random() < 0.2 else rng.randbytes(rng.randint(0, 20))
            value = None if rng.random() < 0.1 else rng.randbytes(rng.randint(0, 3000))
            headers = (
                [
                    (f"h{j}", None if rng.random() < 0.3 else rng.randbytes(5))
                    for j in range(rng.randint(0, 3))
                ]
                if magic == 2
                else []
            )
            b.append(rng.choice([-1, rng.randrange(1 << 41)]), key, value, headers, offset=offset)
            offset += 1 + (rng.random() < 0.2)
        out.append(b.build())
    return out


@pytest.mark.oracle
def test_encoder_output_reads_the_same_in_kafka() -> None:
    """Our encoder's bytes, every magic x codec: Kafka's classes and ours agree exactly."""
    from conformance.jvm.oracle import OracleServer

    with OracleServer() as server:
        for data in _random_batches(seed=20261121, count=150):
            expected = server.decode(data, "memory")
            assert expected["outcome"] == "ok", expected["error"]
            assert diff(expected, decode(data).to_dict()) == []
