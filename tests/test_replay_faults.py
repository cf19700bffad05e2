"""Replay under hostile storage (issue 27): every fault a row in the summary, never a crash
or a lost run. Each test builds its own input."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conformance.corpus.synth import synthesize
from conformance.fileio import FileShrankError, FileSource
from conformance.replay.counts import UNREADABLE
from conformance.replay.inputs import expand
from conformance.replay.plan import Range, plan
from conformance.replay.summary import RunInfo, merge
from conformance.replay.task import RangeReplay, TaskOptions, run_task


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults") / "corpus"
    synthesize(root, 6_000_000, seed=27)
    return root


def _largest(ranges: list[Range]) -> Range:
    return max(ranges, key=lambda r: r.size)


def _copy(corpus: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(corpus, tmp_path / "c")
    return tmp_path / "c"


def test_file_source_refuses_a_short_read(tmp_path: Path) -> None:
    f = tmp_path / "seg.log"
    f.write_bytes(bytes(range(256)) * 4096)  # 1 MiB
    with FileSource(f) as source:
        assert source[0:10] == bytes(range(10))
        os.truncate(f, 300_000)
        assert source[100:110] == bytes(range(100, 110))  # still inside the read-ahead
        with pytest.raises(FileShrankError) as e:
            source[600_000:600_010]
        assert e.value.position == 600_000 and e.value.size == 300_000
        assert isinstance(e.value, OSError) and "shrank to 300000 bytes" in str(e.value)
        with pytest.raises(FileShrankError):
            source.window(290_000, 20_000)  # a window that runs past the new end


@pytest.mark.parametrize("cut", [0, 100, "half"])
def test_a_segment_cut_while_it_is_replayed_ends_in_an_unreadable_row(
    corpus: Path, tmp_path: Path, cut: int | str
) -> None:
    root = _copy(corpus, tmp_path)
    found = expand([str(root)])
    r = _largest(plan(found.files, 64 << 20))
    at = r.size // 2 if cut == "half" else int(cut)
    replay = RangeReplay(r, TaskOptions(rows_per_batch=1))
    rows = []
    for i, columns in enumerate(replay.rows()):
        rows.append(columns)
        if i == 2:  # three batches read: the file is cut under the task
            os.truncate(r.file.path, at)
    s = replay.summary
    regions = [(c["position"][0], c["size"][0], c["verdict"][0], c["message"][0]) for c in rows]
    # the rows still tile the range; the last one is the unread rest, saying why
    assert regions[0][0] == r.start and sum(size for _, size, _, _ in regions) == r.size
    assert all(a[0] + a[1] == b[0] for a, b in zip(regions, regions[1:]))
    last = regions[-1]
    assert last[2] == UNREADABLE and f"shrank to {at} bytes" in last[3]
    assert all(v == "ok" for _, _, v, _ in regions[:-1])
    assert s.counts.bytes.unread == last[1] and s.counts.bytes.total == r.size
    assert s.error is not None and "shrank" in s.error


def test_files_cut_or_deleted_after_planning_are_rows_and_problems(
    corpus: Path, tmp_path: Path
) -> None:
    root = _copy(corpus, tmp_path)
    found = expand([str(root)])
    ranges = plan(found.files, 64 << 10)
    logs = sorted({r.file.path for r in ranges if r.file.size > 100 << 10})
    cut, gone = logs[0], logs[1]
    half = os.path.getsize(cut) // 2
    os.truncate(cut, half)
    os.unlink(gone)
    batches = tmp_path / "batches"
    batches.mkdir()
    summaries = run_task(0, ranges, TaskOptions(), str(batches))
    run = RunInfo([str(root)], "kafka", 64 << 10, 0.0, "process", 1, 0.0, 0.0, 0.0)
    summary = merge(found, ranges, summaries, run=run).to_dict()
    assert summary["accounting_exact"], summary["accounting_errors"]  # not "a bug" (exit 3)
    files = {f["file"]: f for f in summary["files_detail"]}
    assert files[gone]["bytes_unread"] == files[gone]["bytes_total"]
    assert 0 < files[cut]["bytes_unread"] < files[cut]["bytes_total"]
    problems = {p["path"]: p["message"] for p in summary["problems"] if p["kind"] == "unreadable"}
    assert "No such file" in problems[gone] and f"shrank to {half} bytes" in problems[cut]
    rows = pq.read_table(batches).to_pylist()
    unread = [r for r in rows if r["verdict"] == UNREADABLE]
    assert {r["file"] for r in unread} == {cut, gone}
    assert sum(r["size"] for r in unread) == summary["totals"]["bytes_unread"]
    assert summary["verdicts"][UNREADABLE] == len(unread)
