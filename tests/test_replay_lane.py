"""A replay task counts the plain lane's runs in bulk (``stream.scan.scan_runs``,
``RangeSummary.add_run``, the task's column gathering): its rows and range summaries must be
exactly those of the reference walk alone (``TaskOptions(plain_lane=False)``: one region at a
time, through ``RangeSummary.add``), on a synthetic corpus with planted corruptions, cut into
many ranges, with small column chunks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.corpus.synth import synthesize
from conformance.primitives import native
from conformance.replay.inputs import expand
from conformance.replay.plan import plan
from conformance.replay.task import ROW_COLUMNS, RangeReplay, TaskOptions

if native.NATIVE is None:
    pytest.skip("the plain lane is the native extension's", allow_module_level=True)

#: what differs from run to run: the time and the process
_MEASURED = ("seconds", "pid", "peak_rss_kib")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lane") / "corpus"
    synthesize(out, 3_000_000, corrupt=8, seed=5)
    return out


def _replay(corpus: Path, options: TaskOptions, split: int) -> tuple[list[Any], dict[str, list]]:
    summaries = []
    columns: dict[str, list[Any]] = {c: [] for c in ROW_COLUMNS}
    chunks = []
    for r in plan(expand([str(corpus)]).files, split):
        replay = RangeReplay(r, options)
        for chunk in replay.rows():
            chunks.append(len(chunk["position"]))
            for name in ROW_COLUMNS:
                columns[name] += chunk[name]
        doc = replay.summary.to_dict()
        summaries.append({k: v for k, v in doc.items() if k not in _MEASURED})
    return summaries, {**columns, "_chunks": chunks}


@pytest.mark.parametrize("split", [64 << 10, 1 << 20])
def test_bulk_counts_equal_the_reference_walks(corpus: Path, split: int) -> None:
    lane_summaries, lane_rows = _replay(corpus, TaskOptions(rows_per_batch=7), split)
    ref_summaries, ref_rows = _replay(
        corpus, TaskOptions(rows_per_batch=7, plain_lane=False), split
    )
    assert lane_summaries == ref_summaries
    assert lane_rows == ref_rows
    flagged = sum(s["counts"]["flagged_count"] for s in lane_summaries)
    assert flagged >= 8  # the planted corruptions were walked, not only the lane's batches
    assert sum(s["counts"]["batches"] for s in lane_summaries) > 100


def test_chunks_hold_rows_per_batch_rows(corpus: Path) -> None:
    """Every column chunk of a range holds ``rows_per_batch`` rows but its last one."""
    r = plan(expand([str(corpus)]).files, 1 << 30)[0]
    sizes = [len(c["position"]) for c in RangeReplay(r, TaskOptions(rows_per_batch=5)).rows()]
    assert len(sizes) > 2 and all(n == 5 for n in sizes[:-1]) and 1 <= sizes[-1] <= 5


def test_following_a_run_is_following_each_batch() -> None:
    """``Offsets.follow_run`` (at C speed where a run simply continues) ends where
    ``Offsets.follow`` batch after batch does: offsets, gaps, overlaps, examples."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from conformance.replay.counts import Offsets

    batch = st.tuples(st.integers(-3, 3), st.integers(-3, 4))  # (step from the last, span)

    @settings(max_examples=300, deadline=None)
    @given(st.none() | st.integers(0, 50), st.lists(batch, max_size=12), st.booleans())
    def check(start: int | None, steps: list[tuple[int, int]], simple: bool) -> None:
        bases, lasts = [], []
        last = 100 if start is None else start
        for step, span in steps:
            base = last + 1 if simple else last + 1 + step
            bases.append(base)
            lasts.append(base + (abs(span) if simple else span))
            last = max(last, lasts[-1])
        positions = [10 * i for i in range(len(bases))]
        one, run = Offsets(), Offsets()
        for o in (one, run):
            if start is not None:
                o.follow(start - 5, start, file="f", position=None, limit=3)
        for b, la, p in zip(bases, lasts, positions):
            one.follow(b, la, file="f", position=p, limit=3)
        run.follow_run(bases, lasts, file="f", positions=positions, limit=3)
        assert run.to_dict() == one.to_dict()

    check()
