"""How the replay packs its ranges into tasks (``replay.job.pack``), for any ranges and cores.

The rules come from the packing's contract (docs/replay.md, "Ranges and tasks"): every range
in exactly one task, in plan order inside it; one task per core, up to two as long as each
keeps ``MIN_TASK_BYTES`` (fewer when there are fewer ranges), more when a task would
otherwise exceed ``MAX_TASK_BYTES``; the ranges spread
largest first onto the lightest task, so no task exceeds the mean by more than one range;
tasks handed out largest first.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from conformance.replay import job
from conformance.replay.inputs import InputFile
from conformance.replay.plan import Range


def _ranges(sizes: list[int]) -> list[Range]:
    out = []
    for i, size in enumerate(sizes):
        f = InputFile(f"/d/{i}.log", "raw", size, "/d", f"/d/{i}.log", None, None)
        out.append(Range(i, f, 0, size))
    return out


sizes = st.lists(st.integers(min_value=1, max_value=3 << 30), min_size=1, max_size=60)


@given(sizes, st.integers(min_value=1, max_value=64))
def test_every_range_once_in_plan_order(sizes: list[int], cores: int) -> None:
    tasks = job.pack(_ranges(sizes), cores)
    ids = [r.range_id for t in tasks for r in t]
    assert sorted(ids) == list(range(len(sizes)))
    for t in tasks:
        assert t and [r.range_id for r in t] == sorted(r.range_id for r in t)


@given(sizes, st.integers(min_value=1, max_value=64), st.sampled_from([job.MIN_TASK_BYTES, 0]))
def test_task_count_follows_the_cores_and_the_size_cap(
    sizes: list[int], cores: int, least: int
) -> None:
    tasks = job.pack(_ranges(sizes), cores, min_task_bytes=least)
    total = sum(sizes)
    per_cores = job.TASKS_PER_CORE * cores
    if least:  # a second task per core only where each keeps the least
        per_cores = min(per_cores, max(cores, total // least))
    wanted = max(math.ceil(total / job.MAX_TASK_BYTES), min(per_cores, len(sizes)))
    assert len(tasks) == min(wanted, len(sizes))
    assert len(tasks) >= min(cores, len(sizes))  # every core has a task while ranges last


@given(sizes, st.integers(min_value=1, max_value=64))
def test_no_task_exceeds_the_mean_by_more_than_a_range(sizes: list[int], cores: int) -> None:
    tasks = job.pack(_ranges(sizes), cores)
    loads = [sum(r.size for r in t) for t in tasks]
    assert max(loads) <= sum(sizes) / len(tasks) + max(sizes)
    assert loads == sorted(loads, reverse=True)


def test_two_cores_one_task_each_until_a_second_keeps_its_minimum() -> None:
    """Eight equal ranges on two cores: two tasks of four while a task would hold less than
    MIN_TASK_BYTES; four tasks of two once each of four holds it."""
    small = job.pack(_ranges([100] * 8), 2)
    assert [len(t) for t in small] == [4, 4]
    large = job.pack(_ranges([job.MIN_TASK_BYTES // 2] * 8), 2)
    assert [len(t) for t in large] == [2, 2, 2, 2]
    # without the least (the process engine), two per core whatever their size
    assert [len(t) for t in job.pack(_ranges([100] * 8), 2, min_task_bytes=0)] == [2, 2, 2, 2]


def test_a_large_corpus_is_cut_into_tasks_of_at_most_the_cap() -> None:
    """Forty 64 MiB ranges (2.5 GiB) on one core: three tasks, none above 1 GiB."""
    tasks = job.pack(_ranges([64 << 20] * 40), 1)
    assert len(tasks) == 3
    assert all(sum(r.size for r in t) <= job.MAX_TASK_BYTES for t in tasks)
