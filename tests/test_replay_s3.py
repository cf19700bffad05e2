"""``replay`` from a real S3 object store (issue 27): ``conformance.host.objectstore`` runs
versitygw (built from the Go module proxy) on 127.0.0.1; the kit reads ``s3://`` URIs through
``pyarrow.fs`` with the key pair from the environment, in ranges, and every storage fault
(missing bucket, wrong credentials, a stalled server) is a row or a problem in the summary."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from conformance.corpus.synth import synthesize
from conformance.host.objectstore import ObjectStore, object_store
from conformance.replay.counts import UNREADABLE
from conformance.replay.inputs import expand
from conformance.replay.job import ReplayOptions, replay
from conformance.replay.plan import plan
from conformance.replay.storage import arrow_fs
from conformance.replay.task import TaskOptions, run_task

BUCKET = "kafka"
SPLIT = 96 * 1024


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("s3") / "corpus"
    synthesize(root, 2_500_000, seed=11, corrupt=3)
    return root


@pytest.fixture
def store(
    s3_server_binary: Path, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ObjectStore]:
    """The store with the corpus under ``kafka/corpus/``; the environment holds its key pair
    (as a user's would), so the kit's workers inherit it."""
    with object_store(s3_server_binary, tmp_path / "store") as s:
        for k, v in s.client_env().items():
            monkeypatch.setenv(k, v)
        fs, _ = arrow_fs(s.uri(BUCKET) + "&allow_bucket_creation=true")
        fs.create_dir(BUCKET)
        for path in sorted(corpus.rglob("*")):
            if path.is_file():
                with fs.open_output_stream(f"{BUCKET}/corpus/{path.relative_to(corpus)}") as out:
                    out.write(path.read_bytes())
        yield s


def _replay(inputs: list[str], out: Path, **kw: Any) -> dict[str, Any]:
    task = kw.pop("task", TaskOptions())
    result = replay(
        inputs, ReplayOptions(out=out, split_bytes=SPLIT, task=task, progress=False, **kw)
    )
    return result.summary.to_dict()


def _relative(name: str) -> str:
    """A row's file as its path inside the corpus, for s3:// URIs and local paths alike."""
    return name.split("?", 1)[0].split("/corpus/", 1)[1]


def _rows(out: Path) -> list[tuple[Any, ...]]:
    table = pq.read_table(out / "batches", columns=["file", "position", "size", "verdict"])
    return sorted(
        (_relative(r["file"]), r["position"], r["size"], r["verdict"]) for r in table.to_pylist()
    )


@pytest.mark.parametrize("engine", ["process", "spark"])
def test_replay_from_s3_reads_ranges_and_matches_the_local_replay(
    store: ObjectStore, corpus: Path, tmp_path: Path, engine: str
) -> None:
    local = _replay([str(corpus)], tmp_path / "local", engine="process")
    log_start = os.path.getsize(store.log)
    kw = {"master": "local[2]"} if engine == "spark" else {}
    remote = _replay([store.uri(f"{BUCKET}/corpus")], tmp_path / "s3", engine=engine, **kw)
    assert remote["accounting_exact"], remote["accounting_errors"]
    assert remote["files"]["count"] == local["files"]["count"] > 5
    assert remote["totals"] == local["totals"] and remote["verdicts"] == local["verdicts"]
    assert _rows(tmp_path / "s3") == _rows(tmp_path / "local")
    assert remote["flagged_count"] == local["flagged_count"] == 3  # the planted corruptions
    # every object was read in ranges: no GET of a whole segment
    gets = [r for r in store.requests() if r.method == "GET" and r.path.endswith(".log")]
    assert gets and all(r.ranged for r in gets), [r for r in gets if not r.ranged][:3]
    assert os.path.getsize(store.log) > log_start


def test_a_missing_bucket_and_no_bucket_are_problems(
    store: ObjectStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.cli import main

    missing = store.uri("no-such-bucket/corpus")
    bare = "s3://"
    out = tmp_path / "out"
    code = main(["replay", missing, bare, "--out", str(out), "--engine", "process"])
    assert code == 1, capsys.readouterr().err
    doc = json.loads((out / "summary.json").read_text())
    problems = {p["path"]: p for p in doc["problems"]}
    assert problems[missing]["kind"] == "unreadable"
    assert problems[bare]["kind"] == "unreadable"
    assert "no bucket" in problems[bare]["message"]
    assert doc["files"]["count"] == 0


def test_wrong_credentials_are_a_problem_not_a_crash(
    store: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    uri = store.uri(f"{BUCKET}/corpus")
    doc = _replay([uri], tmp_path / "out", engine="process")
    [problem] = doc["problems"]
    assert problem["kind"] == "unreadable" and problem["path"] == uri
    assert any(w in problem["message"] for w in ("ACCESS_DENIED", "SIGNATURE", "AccessDenied"))


def test_a_stalled_store_times_out_into_a_row_per_file(store: ObjectStore, tmp_path: Path) -> None:
    """Listed and planned, then the server stops answering (SIGSTOP): each file's read
    fails after --io-timeout (tried 3 times) and becomes an unreadable row; the run ends."""
    options = TaskOptions(io_timeout=1.0)
    found = expand([store.uri(f"{BUCKET}/corpus/orders-0")], options.io_timeout)
    ranges = plan(found.files, 1 << 30, io_timeout=options.io_timeout)  # a range per file
    assert len(ranges) == len(found.files) >= 2
    batches = tmp_path / "batches"
    batches.mkdir()
    os.kill(store.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        summaries = run_task(0, ranges[:2], options, str(batches))
        took = time.monotonic() - started
    finally:
        os.kill(store.pid, signal.SIGCONT)
    assert took < 60
    rows = pq.read_table(batches).to_pylist()
    assert [r["verdict"] for r in rows] == [UNREADABLE, UNREADABLE]
    assert [r["size"] for r in rows] == [r.size for r in ranges[:2]]
    assert all("NETWORK_CONNECTION" in (s.error or "") for s in summaries)


def test_gs_without_credentials_gives_up_in_time(tmp_path: Path) -> None:
    """No Google credentials and no network: GCS's client retried for 15 minutes, silently;
    with --io-timeout the problem is reported in seconds."""
    started = time.monotonic()
    doc = _replay(
        ["gs://nonexistent-bucket/x", "gs://"],
        tmp_path / "out",
        engine="process",
        task=TaskOptions(io_timeout=2.0),
    )
    assert time.monotonic() - started < 90
    kinds = {p["path"]: p["kind"] for p in doc["problems"]}
    assert kinds == {"gs://nonexistent-bucket/x": "unreadable", "gs://": "unreadable"}


@pytest.mark.parametrize("engine", ["process", "spark"])
def test_parquet_output_to_s3(
    store: ObjectStore, corpus: Path, tmp_path: Path, engine: str
) -> None:
    local = _replay([str(corpus)], tmp_path / "local", engine="process")
    out = store.uri(f"{BUCKET}/out-{engine}")
    kw = {"master": "local[2]"} if engine == "spark" else {}
    doc = _replay([str(corpus)], out, engine=engine, **kw)  # type: ignore[arg-type]
    assert doc["accounting_exact"], doc["accounting_errors"]
    fs, prefix = pafs.FileSystem.from_uri(out)
    with fs.open_input_stream(f"{prefix}/summary.json") as f:
        assert json.loads(f.read()) == doc
    parts = fs.get_file_info(pafs.FileSelector(f"{prefix}/batches"))
    assert parts and all(p.base_name.startswith("part-") for p in parts)  # no leftovers
    table = pq.read_table(f"{prefix}/batches", filesystem=fs)
    rows = sorted(
        (_relative(r["file"]), r["position"], r["size"], r["verdict"]) for r in table.to_pylist()
    )
    assert rows == _rows(tmp_path / "local")
    assert doc["totals"] == local["totals"]
    if engine == "spark":
        assert fs.get_file_info(f"{prefix}/spark-driver.log").type == pafs.FileType.File
    # a second replay into it needs --force, as for a directory
    from conformance.replay.output import OutputExists

    with pytest.raises(OutputExists):
        _replay([str(corpus)], out, engine="process")  # type: ignore[arg-type]
    again = _replay([str(corpus)], out, engine="process", force=True)  # type: ignore[arg-type]
    assert again["totals"] == doc["totals"]
