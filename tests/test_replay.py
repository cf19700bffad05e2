"""``kafka-conformance replay``: real Spark (``local[2]``, a standalone cluster on 127.0.0.1)
over a synthetic corpus with planted corruptions and over the golden corpora.

Expectations: the planted set is recorded by the generator (``planted.json``: which bytes it
changed, in which batch); the golden verdicts are the Java oracle's (the ``*.decode.json`` and
``*.file.json`` expectations that ``kafka-conformance verify`` checks); the byte accounting
is checked against the files' sizes on disk."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pyspark")

from conformance.cli import main  # noqa: E402
from conformance.corpus.synth import synthesize  # noqa: E402
from conformance.replay.counts import offset_step, read_range_summary  # noqa: E402
from conformance.replay.inputs import expand  # noqa: E402
from conformance.replay.job import LOCAL_JVM_OPTIONS, ReplayOptions, replay, spark_conf  # noqa: E402
from conformance.replay.plan import plan, read_ranges, write_ranges  # noqa: E402
from conformance.replay.task import RangeReplay, TaskOptions  # noqa: E402
from conformance.wire.builder import write_batch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "corpora"
#: test-only ``sitecustomize`` that kills a Spark Python worker in mid-task (its docstring)
KILL_DIR = Path(__file__).resolve().parent / "replay_kill"
needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
SPLIT = 96 * 1024  # small ranges: every segment is cut into several tasks


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "corpus"
    synthesize(out, 3_000_000, corrupt=8, seed=11)
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs that are not (all) Kafka: each must be reported, and the job must complete."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "not-kafka").mkdir()
    (d / "not-kafka" / "README.txt").write_text("hello\n")
    part = d / "logs" / "t-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b"")  # empty segment
    (part / "00000000000000000100.log").write_bytes(bytes(5000))  # zero-filled segment
    batch = write_batch([(1, b"k", b"v" * 100)])
    (part / "00000000000000000200.log").write_bytes(batch + batch[:40])  # truncated
    (part / "00000000000000000300.log").symlink_to(d / "vanished.log")  # unreadable
    os.mkfifo(part / "00000000000000000400.log")  # not a regular file: never opened
    (part / "notes.txt").write_text("not a log file\n")
    return d


def _rows(out: Path) -> list[tuple]:
    table = pq.read_table(out / "batches")
    cols = [c for c in table.column_names if c != "range_id"]
    return sorted(
        tuple(json.dumps(v) if isinstance(v, list) else v for v in row.values())
        for row in table.select(cols).to_pylist()
    )


def _stable(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without what depends on the run (timings, engine, worker PIDs)."""
    return {k: v for k, v in summary.items() if k not in ("run", "workers")}


def _flagged_positions(out: Path) -> set[tuple[str, int, str]]:
    table = pq.read_table(out / "batches", columns=["file", "position", "verdict"])
    return {
        (r["file"], r["position"], r["verdict"]) for r in table.to_pylist() if r["verdict"] != "ok"
    }


def _check_planted(corpus: Path, out: Path, summary: dict[str, Any]) -> None:
    planted = json.loads((corpus / "planted.json").read_text())
    expected = {(str(corpus / p["file"]), p["position"], p["expect"]) for p in planted["planted"]}
    assert len(expected) == planted["corrupt"] == 8
    assert _flagged_positions(out) == expected
    assert summary["flagged_count"] == 8
    # exact byte accounting, checked against the files on disk
    assert summary["accounting_exact"], summary["accounting_errors"]
    table = pq.read_table(out / "batches", columns=["file", "position", "size"])
    by_file: dict[str, list[tuple[int, int]]] = {}
    for r in table.to_pylist():
        by_file.setdefault(r["file"], []).append((r["position"], r["size"]))
    files = {f["file"]: f for f in summary["files_detail"]}
    for path in corpus.rglob("*.log"):
        size = path.stat().st_size
        f = files[str(path)]
        assert (
            f["bytes_total"]
            == size
            == f["bytes_decoded"] + f["bytes_corrupt"] + f["bytes_trailing"]
        )
        regions = sorted(by_file.get(str(path), []))
        assert sum(s for _, s in regions) == size
        assert all(a[0] + a[1] == b[0] for a, b in zip(regions, regions[1:]))  # no overlap, no hole


def _replay(inputs: list[str], out: Path, **kw: Any) -> dict[str, Any]:
    """The replay's summary document; it is also what summary.json holds."""
    task = kw.pop("task", TaskOptions())
    result = replay(
        inputs,
        ReplayOptions(
            out=out, split_bytes=kw.pop("split_bytes", SPLIT), task=task, progress=False, **kw
        ),
    )
    doc = result.summary.to_dict()
    assert json.loads((out / "summary.json").read_text()) == doc
    return doc


def test_process_engine_finds_exactly_the_planted_set(corpus: Path, tmp_path: Path) -> None:
    summary = _replay([str(corpus)], tmp_path / "out", engine="process")
    _check_planted(corpus, tmp_path / "out", summary)
    assert summary["ranges"] > len(list(corpus.rglob("*.log")))  # segments were cut


def test_planning_in_threads_gives_the_sequential_plan(corpus: Path) -> None:
    files = expand([str(corpus)]).files
    sequential = plan(files, SPLIT, threads=1)
    assert len(sequential) > len(files)  # several files are cut
    assert [r.range_id for r in sequential] == list(range(len(sequential)))
    for threads in (2, 16):
        assert plan(files, SPLIT, threads=threads) == sequential


def test_range_summaries_and_ranges_cross_as_json_text(corpus: Path) -> None:
    """What crosses the Spark boundary (ranges in, range summaries out, as JSON text) comes
    back equal; a range's rows and its summary agree, the summary only after the rows."""
    ranges = plan(expand([str(corpus)]).files, SPLIT)
    assert read_ranges(write_ranges(ranges)) == ranges
    flagged = offsets = 0
    for r in ranges:
        replay_ = RangeReplay(r, TaskOptions(rows_per_batch=7))
        rows = replay_.rows()
        first = next(rows)
        with pytest.raises(RuntimeError):
            replay_.summary  # noqa: B018 - not complete yet
        n = len(first["position"]) + sum(len(c["position"]) for c in rows)
        s = replay_.summary
        assert (s.rows, s.range_id, s.start, s.end) == (n, r.range_id, r.start, r.end)
        assert s.counts.bytes.total == r.size == s.end_position - s.first_position
        assert read_range_summary(s.to_json()) == s
        flagged += s.counts.flagged_count
        offsets += s.offsets.gaps + len(s.offsets.examples)
    assert flagged == 8 and offsets > 0  # the round trips carried flagged regions and gaps


def test_local_master_jvm_flags_come_before_the_users(tmp_path: Path) -> None:
    key = "spark.driver.extraJavaOptions"
    local = spark_conf(ReplayOptions(out=tmp_path, master="local[2]"))
    assert local[key] == LOCAL_JVM_OPTIONS
    mine = spark_conf(ReplayOptions(out=tmp_path, spark_conf={key: "-XX:TieredStopAtLevel=4"}))
    assert mine[key] == f"{LOCAL_JVM_OPTIONS} -XX:TieredStopAtLevel=4"  # the last flag wins
    for master in ("spark://127.0.0.1:7077", None):  # a cluster's driver is left as configured
        assert key not in spark_conf(ReplayOptions(out=tmp_path, master=master))
    assert (
        spark_conf(ReplayOptions(out=tmp_path, spark_conf={"spark.ui.enabled": "true"}))[
            "spark.ui.enabled"
        ]
        == "true"
    )


def test_offset_step() -> None:
    assert offset_step(10, 11) is None
    assert offset_step(10, 12) == "gap"
    assert offset_step(10, 10) == offset_step(10, 3) == "overlap"


@needs_java
def test_local2_finds_exactly_the_planted_set_like_the_process_engine(
    corpus: Path, tmp_path: Path
) -> None:
    base = _replay([str(corpus)], tmp_path / "process", engine="process")
    summary = _replay([str(corpus)], tmp_path / "spark", engine="spark", master="local[2]")
    _check_planted(corpus, tmp_path / "spark", summary)
    assert summary["run"]["engine"].startswith("spark local[2")
    # the driver JVM really runs with the local-master flags (job.LOCAL_JVM_OPTIONS)
    assert {"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"} <= set(
        summary["run"]["driver_jvm_options"]
    )
    assert _rows(tmp_path / "spark") == _rows(tmp_path / "process")
    assert _stable(summary) == _stable(base)
    assert len(summary["workers"]["peak_rss_kib"]) >= 1


def _failed_task_attempts(events: Path) -> list[dict[str, Any]]:
    """The task attempts that Spark's event log (``spark.eventLog.*``) records as failed."""
    failed = []
    logs = list(events.iterdir())
    assert len(logs) == 1 and logs[0].is_file(), logs
    for log in logs:
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event["Event"] == "SparkListenerTaskEnd" and event["Task Info"]["Failed"]:
                failed.append(event)
    return failed


@needs_java
def test_killed_task_is_retried_without_duplicate_or_missing_rows(
    corpus: Path, tmp_path: Path
) -> None:
    """The first attempt of range 3 kills its Python worker (SIGKILL) after some of its rows
    went to its Parquet part: tests/replay_kill/sitecustomize.py, on the workers' PYTHONPATH,
    does it from outside the kit. Spark retries the task; the rows and the summary are an
    undisturbed run's."""
    base = _replay([str(corpus)], tmp_path / "process", engine="process")
    marker, events = tmp_path / "killed", tmp_path / "events"
    events.mkdir()
    summary = _replay(
        [str(corpus)],
        tmp_path / "spark",
        engine="spark",
        master="local[2]",
        task=TaskOptions(rows_per_batch=16),
        spark_conf={
            "spark.executorEnv.PYTHONPATH": str(KILL_DIR),
            "spark.executorEnv.KAFKA_CONFORMANCE_TEST_KILL": f"3:{marker}",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": events.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",  # one file of JSON lines
        },
    )
    # the kill happened: the first attempt wrote the marker and died there (the kit's own
    # task module, wrapped in the worker); a later attempt of the same task found the marker
    killed = json.loads(marker.read_text())
    assert killed["attempt"] == 0
    assert Path(killed["module"]) == ROOT / "conformance" / "replay" / "task.py"
    retries = [json.loads(line) for line in Path(f"{marker}.retries").read_text().splitlines()]
    assert retries and all(r["partition"] == killed["partition"] for r in retries)
    assert all(r["attempt"] >= 1 and r["pid"] != killed["pid"] for r in retries)
    # and Spark saw it fail: one failed attempt, that task's first, its Python worker crashed
    failed = _failed_task_attempts(events)
    assert len(failed) == 1, failed
    assert failed[0]["Task Info"]["Attempt"] == 0
    assert failed[0]["Task Info"]["Partition ID"] == killed["partition"]
    assert "crashed" in json.dumps(failed[0]["Task End Reason"])
    rows = _rows(tmp_path / "spark")
    assert len(rows) == len(set(rows))  # no duplicate
    assert rows == _rows(tmp_path / "process")  # none missing
    assert _stable(summary) == _stable(base)


def test_hostile_inputs_are_reported_and_the_job_completes(hostile: Path, tmp_path: Path) -> None:
    summary = _replay(
        [str(hostile / "not-kafka"), str(hostile / "logs"), str(hostile / "nothing-*.log")],
        tmp_path / "out",
        engine="process",
    )
    kinds = {(p["kind"], Path(p["path"]).name) for p in summary["problems"]}
    assert ("not-kafka", "not-kafka") in kinds
    assert ("skipped", "README.txt") in kinds and ("skipped", "notes.txt") in kinds
    assert ("unreadable", "00000000000000000300.log") in kinds  # dangling link
    assert ("unreadable", "00000000000000000400.log") in kinds  # FIFO
    assert ("no-match", "nothing-*.log") in kinds
    files = {Path(f["file"]).name: f for f in summary["files_detail"]}
    assert files["00000000000000000000.log"]["bytes_total"] == 0
    assert files["00000000000000000100.log"]["bytes_trailing"] == 5000
    truncated = files["00000000000000000200.log"]
    assert truncated["bytes_decoded"] + truncated["bytes_trailing"] == truncated["bytes_total"]
    assert truncated["bytes_trailing"] == 40
    assert summary["accounting_exact"]


def _golden_inputs() -> list[tuple[Path, Path]]:
    """(file, file-mode expectation) of every golden .log and crafted file-mode case."""
    pairs = []
    for exp in sorted(CORPORA.glob("*/*/expected/log/*/*.log.decode.json")):
        case = exp.parents[3]
        rel = exp.relative_to(case / "expected")
        pairs.append((case / str(rel)[: -len(".decode.json")], exp))
    for exp in sorted((CORPORA / "crafted").glob("*.file.json")):
        pairs.append((exp.with_name(exp.name[: -len(".file.json")] + ".bin"), exp))
    return pairs


def _check_golden(summary: dict[str, Any], out: Path, pairs: list[tuple[Path, Path]]) -> int:
    """Each file's regions up to Kafka's verdict are the oracle's verdict."""
    table = pq.read_table(out / "batches").to_pylist()
    by_file: dict[str, list[dict[str, Any]]] = {}
    for r in table:
        by_file.setdefault(r["file"], []).append(r)
    checked = 0
    for path, exp_path in pairs:
        exp = json.loads(exp_path.read_text())
        regions = sorted(by_file.get(str(path.absolute()), []), key=lambda r: r["position"])
        batches = exp["batches"]
        if exp["outcome"] == "error":
            err = exp["error"]
            i = next(i for i, r in enumerate(regions) if r["verdict"] != "ok")
            assert regions[i]["position"] == err["position"], path
            assert regions[i]["kafka_exception"] == err["kafka_exception"], path
            # Kafka names the file as it was given: the oracle got paths relative to the root
            assert regions[i]["message"] == err["message"].replace(
                str(path.relative_to(ROOT)), str(path)
            ), path
            assert i in (len(batches), len(batches) - 1), path
        else:
            n = len(batches)
            assert [r["verdict"] for r in regions[:n]] == ["ok"] * n, path
            assert [r["record_count"] for r in regions[:n]] == [
                len(b["records"]) for b in batches
            ], path
            if exp["outcome"] == "partial":
                tail = regions[n]
                assert (tail["position"], tail["size"]) == (
                    exp["tail"]["position"],
                    exp["tail"]["bytes"],
                ), path
                assert tail["verdict"] in ("partial", "zero-tail"), path
            else:
                assert len(regions) == n, path
        checked += 1
    return checked


@needs_java
def test_golden_corpora_replay_with_verify_verdicts(tmp_path: Path) -> None:
    pairs = _golden_inputs()
    assert len(pairs) > 300
    inputs = [str(p) for p, _ in pairs]
    summary = _replay(
        inputs, tmp_path / "out", engine="spark", master="local[2]", split_bytes=64 << 20
    )
    assert summary["accounting_exact"], summary["accounting_errors"]
    assert _check_golden(summary, tmp_path / "out", pairs) == len(pairs)
    errors = sum(1 for _, e in pairs if json.loads(e.read_text())["outcome"] == "error")
    assert errors >= 10  # the crafted cases bring Kafka's exceptions


def test_cli_replay_exit_codes_and_outputs(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert (
        main(
            [
                "replay",
                str(corpus),
                "--out",
                str(out),
                "--engine",
                "process",
                "--split-bytes",
                "100KiB",
            ]
        )
        == 1
    )  # planted corruptions are flagged
    text = capsys.readouterr().out
    assert "exact for every file" in text and "flagged regions: 8" in text
    assert (out / "summary.json").is_file() and (out / "summary.txt").is_file()
    assert main(["replay", str(corpus), "--out", str(out), "--engine", "process"]) == 2
    assert "--force" in capsys.readouterr().err
    clean = tmp_path / "clean"
    (clean / "t-0").mkdir(parents=True)
    (clean / "t-0" / "00000000000000000000.log").write_bytes(write_batch([(1, None, b"x")]))
    assert (
        main(
            ["replay", str(clean), "--out", str(tmp_path / "o2"), "--engine", "process", "--quiet"]
        )
        == 0
    )
    with pytest.raises(SystemExit) as e:
        main(["replay", "--help"])
    assert e.value.code == 0
    assert "spark-submit" in capsys.readouterr().out


@needs_java
def test_segment_over_2gib(tmp_path: Path) -> None:
    """A 2.2 GB segment (offsets patched in a repeated 1 MiB batch: the CRC does not cover
    them) replays in ranges, with positions past 2^31 and a bounded worker memory."""
    one = write_batch([(1, b"k%d" % i, bytes([i]) * (64 << 10)) for i in range(16)])
    part = tmp_path / "big" / "t-0"
    part.mkdir(parents=True)
    path = part / "00000000000000000000.log"
    count = (2_200_000_000 // len(one)) + 1
    with open(path, "wb") as f:
        for n in range(count):
            b = bytearray(one)
            struct.pack_into(">q", b, 0, n * 16)
            f.write(b)
    size = path.stat().st_size
    assert size > 2**31
    summary = _replay(
        [str(tmp_path / "big")],
        tmp_path / "out",
        engine="spark",
        master="local[2]",
        split_bytes=256 << 20,
    )
    assert summary["accounting_exact"], summary["accounting_errors"]
    assert summary["totals"]["bytes_decoded"] == size
    assert summary["verdicts"] == {"ok": count}
    assert summary["offsets"][str(part)]["gaps"] == 0
    assert summary["ranges"] >= 8
    assert summary["workers"]["max_peak_rss_kib"] < 600 * 1024  # not the 2.2 GB file
    positions = pq.read_table(tmp_path / "out" / "batches", columns=["position"]).column(0)
    assert max(positions.to_pylist()) > 2**31
    path.unlink()


@pytest.mark.spark
@needs_java
def test_standalone_cluster_gives_the_rows_and_summary_of_local(
    corpus: Path, tmp_path: Path
) -> None:
    """A real standalone master + 2 workers on 127.0.0.1 (Spark's spark-class deploy classes),
    the replay submitted with spark-submit: the planted set, exact accounting, and the same
    Parquet rows and summary as local[2]."""
    from conformance.replay.cluster import StandaloneCluster

    local = _replay([str(corpus)], tmp_path / "local", engine="spark", master="local[2]")
    out = tmp_path / "cluster"
    entry = ROOT / "conformance" / "cli" / "replay_submit.py"
    with StandaloneCluster(workers=2, cores_per_worker=1, memory_per_worker="1g") as cluster:
        proc = cluster.submit(
            entry,
            [str(corpus), "--out", str(out), "--split-bytes", str(SPLIT), "--quiet"],
            timeout=600,
        )
        apps = cluster.status().get("completedapps", [])
    assert proc.returncode == 1, proc.stderr[-3000:]  # 1: planted corruptions flagged
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["engine"].startswith("spark spark://127.0.0.1:")
    _check_planted(corpus, out, summary)
    assert _rows(out) == _rows(tmp_path / "local")
    assert _stable(summary) == _stable(local)
    assert len(summary["workers"]["peak_rss_kib"]) == 2  # one Python worker per executor
    assert apps and apps[0]["name"] == "kafka-conformance replay"


def test_file_uris_are_local_paths_and_arrow_sources_read_alike(
    corpus: Path, tmp_path: Path
) -> None:
    """file:// URIs are replayed as the local paths they name; ArrowSource (read_at through
    pyarrow.fs, as for s3:// or hdfs://) reads the same regions as the local pread source."""
    from conformance.fileio import FileSource
    from conformance.replay.inputs import ArrowSource
    from conformance.stream.scan import scan

    summary = _replay([corpus.as_uri()], tmp_path / "out", engine="process")
    planted = json.loads((corpus / "planted.json").read_text())
    expected = {(str(corpus / p["file"]), p["position"], p["expect"]) for p in planted["planted"]}
    assert _flagged_positions(tmp_path / "out") == expected
    assert summary["accounting_exact"]
    log = str(corpus / planted["planted"][0]["file"])
    arrow, local = ArrowSource(f"file://{log}"), FileSource(log)
    try:
        assert list(scan(arrow)) == list(scan(local))
    finally:
        arrow.close()
        local.close()


def test_strict_profile_rows_carry_the_decoders_findings(tmp_path: Path) -> None:
    """--profile strict: each row's finding codes are those decode(profile="strict") reports
    for that batch (the golden crafted inputs include anomalies Kafka accepts silently)."""
    from conformance.stream.decoder import decode

    pairs = _golden_inputs()
    expected: dict[tuple[str, int], list[str]] = {}
    for path, _ in pairs:
        result = decode(path.read_bytes(), mode="file", profile="strict")
        positions = [b.header.position for b in result.batches]
        for f in result.findings or []:
            if f.batch_index < len(positions):
                expected.setdefault((str(path), positions[f.batch_index]), []).append(f.code)
    assert len(expected) >= 4  # the corpus has strict findings to compare
    summary = _replay(
        [str(p) for p, _ in pairs],
        tmp_path / "out",
        engine="process",
        task=TaskOptions(profile="strict"),
    )
    rows = pq.read_table(tmp_path / "out" / "batches").to_pylist()
    got = {(r["file"], r["position"]): r["findings"] for r in rows if r["findings"]}
    for key, codes in expected.items():
        assert sorted(got.get(key, [])) == sorted(codes), key
    assert sum(summary["findings"].values()) >= sum(len(c) for c in expected.values())


# ------------------------------------------------------------------ Arrow columns from buffers
_text = st.one_of(st.none(), st.text(max_size=12))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            _text,
            st.one_of(st.none(), st.integers(-(1 << 63), (1 << 63) - 1)),
            st.one_of(st.none(), st.integers(-128, 127)),
            st.integers(-(1 << 31), (1 << 31) - 1),
            st.lists(st.text(max_size=5), max_size=3),
        ),
        max_size=40,
    )
)
def test_record_batch_is_pyarrows_conversion(rows: list[tuple[Any, ...]]) -> None:
    """``replay.arrow.record_batch`` lays the columns out as pyarrow's own converter does."""
    from conformance.replay.arrow import record_batch

    schema = pa.schema(
        [
            ("s", pa.string()),
            ("q", pa.int64()),
            ("b", pa.int8()),
            ("i", pa.int32()),
            ("l", pa.list_(pa.string())),
        ]
    )
    columns = {name: [r[k] for r in rows] for k, name in enumerate(schema.names)}
    built = record_batch(columns, schema)
    built.validate(full=True)
    assert built.equals(pa.record_batch(columns, schema=schema))


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 40),
    text=_text,
    q=st.one_of(st.none(), st.integers(-(1 << 63), (1 << 63) - 1)),
    strings=st.lists(st.text(max_size=5), max_size=3),
    varied=st.lists(_text, min_size=1, max_size=4),
)
def test_record_batch_of_repeated_values(
    n: int, text: str | None, q: int | None, strings: list[str], varied: list[str | None]
) -> None:
    """Columns of one value throughout (a range's file, most rows' verdict, all nulls) and of a
    few values repeated, laid out as pyarrow's own converter does."""
    from conformance.replay.arrow import record_batch

    schema = pa.schema(
        [
            ("s", pa.string()),
            ("r", pa.string()),
            ("q", pa.int64()),
            ("l", pa.list_(pa.string())),
        ]
    )
    columns = {
        "s": [text] * n,
        "r": [varied[i % len(varied)] for i in range(n)],
        "q": [q] * n,
        "l": [strings] * n,
    }
    built = record_batch(columns, schema)
    built.validate(full=True)
    assert built.equals(pa.record_batch(columns, schema=schema))


def test_record_batch_of_the_replay_rows(corpus: Path) -> None:
    """Every column of the replay's schema, from real rows (non-empty string lists: the
    property test above)."""
    from conformance.replay.arrow import record_batch
    from conformance.replay.task import row_schema

    schema = row_schema()
    nulls = 0
    for r in plan(expand([str(corpus)]).files, 1 << 40):
        for columns in RangeReplay(r, TaskOptions(profile="strict")).rows():
            built = record_batch(columns, schema)
            built.validate(full=True)
            assert built.equals(pa.record_batch(columns, schema=schema))
            nulls += built.column("kafka_exception").null_count
    assert nulls  # validity bitmaps were exercised


def test_a_replay_task_does_not_import_pandas(corpus: Path, tmp_path: Path) -> None:
    """pyarrow's list conversion imports pandas (0.4 s per process); the task's own Arrow
    layout does not, so a replay worker never pays for it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from conformance.replay.inputs import expand\n"
        "from conformance.replay.plan import plan\n"
        "from conformance.replay.task import TaskOptions, run_task\n"
        f"ranges = plan(expand([{str(corpus)!r}]).files, 1 << 20)\n"
        f"run_task(0, ranges, TaskOptions(), {str(tmp_path)!r})\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert (tmp_path / "part-00000.parquet").exists()
