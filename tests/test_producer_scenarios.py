"""The scenarios of ``check-producer`` (conformance.producer_check.scenarios) are what they say.

* every scenario's description is generated from its promises, and every promise holds on its
  plan; a plan that breaks a promise cannot be made, and no promise holds on every plan;
* the shapes the issue asked for exist: an explicit timestamp 0 (accepted by the kit's model
  of every broker line with Kafka's default topic settings), a null key next to an empty key,
  an empty and a null header value in one record;
* the judgement can tell every record of a scenario from the others (key, value, headers) and
  knows the partition of each on a topic of several partitions.

No broker is started.
"""

from __future__ import annotations

import inspect
import re
import time
from dataclasses import replace

import pytest

from conformance.broker.config import TopicConfig
from conformance.broker.profile import ProduceContext
from conformance.broker.profile import decode as broker_decode
from conformance.broker.versions import LONG_MAX, VERSIONS
from conformance.harness.runner import select
from conformance.producer_check.scenarios import (
    ENCODE,
    EQUAL_TIMESTAMPS,
    PRODUCE,
    TIMESTAMP_ZERO,
    PlanRecord,
    Promise,
    Scenario,
    broken_promises,
    scenarios,
    write_plan,
)
from conformance.wire.builder import BatchBuilder

ALL = scenarios()
SCENARIO = {s.name: s for s in ALL}
IDS = [s.name for s in ALL]


# ------------------------------------------------------------------------------ the promises


@pytest.mark.parametrize("s", ALL, ids=IDS)
def test_every_promise_holds_on_its_plan(s: Scenario) -> None:
    assert s.promises
    assert broken_promises(s) == []
    for p in s.promises:
        assert p.holds(s), (s.name, p.text)


@pytest.mark.parametrize("s", ALL, ids=IDS)
def test_the_description_is_the_promises(s: Scenario) -> None:
    assert s.description == ", ".join(p.text for p in s.promises)
    assert s.description and len(s.description) < 250


def test_a_description_cannot_be_written_by_hand() -> None:
    """``description`` is not a parameter of a scenario: only promises make it."""
    assert "description" not in inspect.signature(Scenario).parameters
    with pytest.raises(TypeError):
        Scenario("x", PRODUCE, description="anything", records=())  # type: ignore[call-arg]


def test_a_plan_that_breaks_a_promise_cannot_be_made() -> None:
    """Changing the plan without its promise is caught: the timestamp 0 taken out of
    ``timestamps-explicit``, the empty key out of ``nulls-key-value``, a made-up promise."""
    explicit = SCENARIO["timestamps-explicit"]
    without_zero = tuple(r for r in explicit.records if r.timestamp != 0)
    with pytest.raises(ValueError, match="promises 'a timestamp 0', which its plan breaks"):
        replace(explicit, records=without_zero)
    nulls = SCENARIO["nulls-key-value"]
    with pytest.raises(ValueError, match="a null key next to an empty key"):
        replace(nulls, records=tuple(r for r in nulls.records if r.key != b""))
    with pytest.raises(ValueError, match="a timestamp 0"):
        Scenario("made-up", PRODUCE, (TIMESTAMP_ZERO,), (PlanRecord(b"k", b"v", (), 5),))
    with pytest.raises(ValueError, match="promises nothing"):
        Scenario("silent", PRODUCE, (), (PlanRecord(b"k", b"v"),))
    # the same plan with a promise it keeps is made
    assert replace(explicit, promises=(EQUAL_TIMESTAMPS,)).description == EQUAL_TIMESTAMPS.text


def test_no_promise_holds_on_every_plan() -> None:
    """Each promise's test can fail: some other scenario of the kit breaks it (a test that
    always passes would let its text say anything)."""
    vacuous = [
        (s.name, p.text) for s in ALL for p in s.promises if all(p.holds(other) for other in ALL)
    ]
    assert vacuous == []
    always = Promise("anything at all", lambda s: True)
    assert all(always.holds(other) for other in ALL)  # what the check above catches


# ---------------------------------------------------------------------------- the shapes asked


def test_timestamps_explicit_has_a_timestamp_0() -> None:
    stamps = [r.timestamp for r in SCENARIO["timestamps-explicit"].records]
    assert 0 in stamps
    assert stamps[0] != min(s for s in stamps if s is not None)  # still out of order
    assert SCENARIO["encode-timestamps"].records == SCENARIO["timestamps-explicit"].records


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_every_broker_line_accepts_create_time_0(version: str) -> None:
    """The kit's model of each broker line, with Kafka's default topic settings (what
    ``check-producer`` runs: 2.x ``message.timestamp.difference.max.ms`` = Long.MAX_VALUE;
    3.x/4.x ``before.max.ms`` = Long.MAX_VALUE, 4.x ``after.max.ms`` = one hour), accepts the
    records of ``timestamps-explicit`` (timestamp 0 included) as one batch."""
    topic = TopicConfig.from_properties({}, version)
    assert topic.timestamp_before_max_ms == LONG_MAX
    b = BatchBuilder()
    for r in SCENARIO["timestamps-explicit"].records:
        assert r.timestamp is not None
        b.append(r.timestamp, r.key, r.value, list(r.headers))
    ctx = ProduceContext(version=version, transactional_id=None, now=time.time_ns() // 1_000_000)
    verdict = broker_decode(b.build(), profile="broker", produce=ctx).broker
    assert verdict is not None
    response = verdict.to_dict()["response"]
    assert (response["errorName"], response["errorCode"]) == ("NONE", 0), response


def test_a_null_key_is_next_to_an_empty_key() -> None:
    """In one scenario, on one partition (so in the batches of one partition, in a row); also
    next to a record every client sends (some refuse the record whose key and value are both
    null); and in the one batch of ``encode-nulls-headers``."""

    def pairs(s: Scenario) -> list[tuple[PlanRecord, PlanRecord]]:
        return [
            (a, b)
            for a, b in zip(s.records, s.records[1:])
            if {a.key, b.key} == {None, b""} and a.partition == b.partition
        ]

    nulls = SCENARIO["nulls-key-value"]
    assert nulls.partitions == 1
    assert pairs(nulls)
    assert any(a.value is not None and b.value is not None for a, b in pairs(nulls))
    assert pairs(SCENARIO["encode-nulls-headers"])


def test_a_record_has_an_empty_and_a_null_header_value() -> None:
    for name in ("headers-shapes", "encode-nulls-headers"):
        assert any(
            b"" in [v for _, v in r.headers] and None in [v for _, v in r.headers]
            for r in SCENARIO[name].records
        ), name


def test_the_encode_scenarios_follow_the_produce_ones() -> None:
    assert SCENARIO["encode-nulls-headers"].records == (
        SCENARIO["headers-shapes"].records + SCENARIO["nulls-key-value"].records
    )


# ------------------------------------------------------------------ what the judgement relies on


@pytest.mark.parametrize("s", ALL, ids=IDS)
def test_records_are_distinguishable(s: Scenario) -> None:
    """No two records of a scenario have the same key, value and headers: the judgement
    identifies a read-back record by them."""
    contents = [(r.key, r.value, r.headers) for r in s.records]
    assert len(set(contents)) == len(contents)


def test_indistinguishable_records_cannot_be_made() -> None:
    s = SCENARIO["timestamps-absent"]
    with pytest.raises(ValueError, match="records 0 and 5 have the same key, value and headers"):
        replace(s, records=(*s.records, s.records[0]))


@pytest.mark.parametrize("s", ALL, ids=IDS)
def test_a_record_on_several_partitions_has_a_key_or_a_partition(s: Scenario) -> None:
    if s.partitions > 1:
        assert all(r.key is not None or r.partition is not None for r in s.records)


def test_a_keyless_record_on_several_partitions_cannot_be_made() -> None:
    s = SCENARIO["explicit-partition"]
    with pytest.raises(ValueError, match="record 9 has neither key nor partition"):
        replace(s, records=(*s.records, PlanRecord(None, b"nowhere")))


def test_contents_are_deterministic() -> None:
    """Two calls give the same plans (timestamps are fixed at import)."""
    again = scenarios()
    assert [write_plan(s, "t") for s in again] == [write_plan(s, "t") for s in ALL]
    assert [s.description for s in again] == [s.description for s in ALL]


def test_sides_and_selection() -> None:
    assert {s.side for s in ALL} == {PRODUCE, ENCODE}
    assert [s.name for s in select(ALL, ["timestamps-*"])] == [
        "timestamps-explicit",
        "timestamps-absent",
        "timestamps-mixed",
        "timestamps-negative",
    ]
    assert select(ALL, None) == ALL


# ------------------------------------------------------------------ one batch: the plan groups

GROUPED = [s for s in ALL if s.groups]


def test_the_batch_scenarios_ask_for_one_batch_each() -> None:
    assert [s.name for s in GROUPED] == [
        "batch-timestamps-wide",
        "batch-many-records",
        "batch-headers",
        "batch-nulls-mixed",
    ]
    for s in GROUPED:
        assert s.side == PRODUCE and s.groups == ((0, len(s.records)),), s.name
        assert s.needs()["batching"] and s.partitions == 1, s.name
    assert not any(s.needs()["batching"] for s in ALL if not s.groups)


def test_wide_timestamps_overflow_a_32_bit_delta_both_ways() -> None:
    stamps = [r.timestamp for r in SCENARIO["batch-timestamps-wide"].records]
    assert all(t is not None for t in stamps)
    deltas = [t - stamps[0] for t in stamps if t is not None]
    assert max(deltas) > 2**31 - 1 and min(deltas) < -(2**31)
    assert SCENARIO["encode-batch-timestamps-wide"].records == (
        SCENARIO["batch-timestamps-wide"].records
    )


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("s", GROUPED, ids=[s.name for s in GROUPED])
def test_every_broker_line_accepts_each_group_as_one_batch(version: str, s: Scenario) -> None:
    """The kit's model of each broker line, with Kafka's default topic settings, accepts the
    records of every group as one batch (the timestamps 75 days back, the 64 KiB headers, the
    2,000 records: under max.message.bytes)."""
    b = BatchBuilder()
    for r in s.records:
        assert r.timestamp is not None
        b.append(r.timestamp, r.key, r.value, list(r.headers))
    ctx = ProduceContext(version=version, transactional_id=None, now=time.time_ns() // 1_000_000)
    verdict = broker_decode(b.build(), profile="broker", produce=ctx).broker
    assert verdict is not None
    response = verdict.to_dict()["response"]
    assert (response["errorName"], response["errorCode"]) == ("NONE", 0), response
    assert len(b.build()) <= s.batch_size


@pytest.mark.parametrize(
    ("groups", "partitions", "problem"),
    [
        (((0, 1),), 1, "group (0, 1) is not a run of 2+ records"),
        (((0, 3), (2, 2)), 1, "group (2, 2) is not a run of 2+ records after 3"),
        (((4, 3),), 1, "group (4, 3) is not a run"),
        (((0, 2),), 3, "group (0, 2) does not name one partition"),
    ],
)
def test_a_group_that_is_no_batch_cannot_be_made(
    groups: tuple[tuple[int, int], ...], partitions: int, problem: str
) -> None:
    s = SCENARIO["timestamps-absent"]  # 5 records, keyed, no partition named
    promises = (Promise("anything", lambda _: True),)
    with pytest.raises(ValueError, match=re.escape(problem)):
        replace(s, promises=promises, groups=groups, partitions=partitions)
    with pytest.raises(ValueError, match="groups in a encode plan"):
        replace(SCENARIO["encode-codec-none"], groups=((0, 2),))
    assert replace(s, promises=promises, groups=((0, 2), (2, 3))).grouped() == [
        range(0, 2),
        range(2, 5),
    ]
