"""Each real consumer at every API version the fake broker claims.

For every cap ``c`` from 0 to the highest version the broker's definitions have, the fake
broker claims no API above ``c`` (``Served.version_cap``, ``check --broker-max-version``), and
each built-in consumer reads a scenario whose batches that Fetch version can carry (magic 0
below Fetch v2, magic 1 below v4, then a read_committed partition with an aborted
transaction, so every v4+ version also carries the aborted transactions list). What the test
holds, from the requests the broker read and Kafka's consumer's document of the scenario:

* every consumer delivers exactly what Kafka's consumer delivered, at every cap, except the
  refusals listed in :data:`REFUSALS` (each with the error it must end with);
* a consumer negotiates: at cap ``c`` it speaks ``min(c, its own highest)`` of each API it
  uses (ApiVersions aside: it is first sent at the client's highest version and answered with
  v0, as Kafka answers a version it does not know);
* together the consumers speak every version the broker claims of every API a consumer
  uses (all but Produce, which the broker claims for librdkafka's sake and refuses), except
  the versions in :data:`UNSPOKEN`, which only the kit's own client exercises
  (``test_fakebroker.py``).

Kafka's consumer runs twice: as the ``check`` adapter (assign, no group) and as a member of a
group (``--group``: FindCoordinator, JoinGroup, SyncGroup, OffsetFetch, Heartbeat,
OffsetCommit, LeaveGroup).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.fakebroker.handlers import (
    APIS,
    FETCH,
    FIRST_FETCH_OF_MAGIC,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
)
from conformance.harness import registry, session
from conformance.harness.consumer import ConsumeRun, consume_case, read_consume_cases
from conformance.harness.decode import capabilities_of
from conformance.harness.judge import CONSUME
from conformance.harness.process import ProcessTable
from conformance.harness.runner import Settings
from conformance.messages.protocol import API_VERSIONS

ROOT = Path(__file__).resolve().parent.parent
CASES = {c.scenario.name: c for c in read_consume_cases(ROOT / "corpora")}
CONSUMERS = [a.name for a in registry.adapters(ROOT / "adapters", side="consume")]
#: (adapter, group): every built-in consumer, and Kafka's consumer once more as a group member
GROUP = "kafka-conformance-versions"
RUNS = [(name, None) for name in CONSUMERS] + [("java", GROUP)]
#: the caps at which a client meets a broker that claims only version 0 of Metadata,
#: ListOffsets and Fetch (no real release did: 0.10.0, the first with ApiVersions, claimed
#: Metadata v0-v1 and Fetch v0-v2); what each client must end with there
REFUSALS: dict[tuple[str, int], str] = {
    # Java's client refuses a broker without Metadata v1: UnsupportedVersionException
    # ("MetadataRequest versions older than 1 are not supported") from poll()
    ("java", 0): "UnsupportedVersionException",
    # aiokafka has no FetchRequest v0 (NotImplementedError in its fetcher task, logged as
    # "Unexpected error in fetcher routine"), and the application is never told: it stalls
    ("aiokafka", 0): "raised timeout",
    # kafkajs has no OffsetFetch v0, and its request lookup never compares its own versions
    # with the broker's lowest: "KafkaJSNonRetriableError: offsetFetch is not a function"
    ("kafkajs", 0): "offsetFetch is not a function",
}
#: claimed versions no real consumer here speaks: the group members of the sweep (Java's
#: consumer with --group, kafkajs) meet OffsetCommit, OffsetFetch and Heartbeat v0 only at
#: cap 0, which Java's refuses and where kafkajs stops at OffsetFetch (see REFUSALS)
UNSPOKEN: dict[int, set[int]] = {8: {0}, 9: {0}, 12: {0}}


def scenario_for(cap: int) -> str:
    """A scenario whose batches a Fetch of version ``cap`` (or lower) carries unchanged."""
    if cap < FIRST_FETCH_OF_MAGIC[1]:
        return "v0-gzip"
    if cap < FIRST_FETCH_OF_MAGIC[2]:
        return "v1-snappy"
    return "aborted-then-committed"


def _top(schemas: Any) -> int:
    return max(schemas.request(k).valid_versions.highest for k in (FETCH, LIST_OFFSETS, METADATA))


SWEEPS: dict[tuple[str, str | None], dict[int, ConsumeRun]] = {}


def _label(run: tuple[str, str | None]) -> str:
    return run[0] if run[1] is None else f"{run[0]}-group"


def sweep(name: str, group: str | None, schemas: Any) -> dict[int, ConsumeRun]:
    """``name``'s consumer (a member of ``group``, when given) at every cap, run once."""
    if (name, group) not in SWEEPS:
        os.environ.setdefault("KAFKA_CONFORMANCE_ROOT", str(ROOT))
        selection = session.implementations([name], [], side="consume")
        assert selection.implementations, f"{name}: not built ({selection.failures})"
        impl = selection.implementations[0]
        table = ProcessTable()
        settings = Settings(jobs=1, timeout=12)
        try:
            caps, problem = capabilities_of(table, impl, settings, CONSUME)
            assert problem is None, problem
            SWEEPS[name, group] = {
                cap: consume_case(
                    impl,
                    CASES[scenario_for(cap)],
                    settings,
                    table,
                    schemas,
                    caps=caps,
                    version_cap=cap,
                    group=group,
                )
                for cap in range(_top(schemas) + 1)
            }
        finally:
            table.kill_all()
        left = subprocess.run(
            ["pgrep", "-f", "--", " consume --bootstrap 127.0.0.1:"], capture_output=True, text=True
        )
        assert left.stdout.strip() == "", f"{name}: a consumer process was left running"
    return SWEEPS[name, group]


def _used(run: ConsumeRun) -> dict[int, set[int]]:
    used: dict[int, set[int]] = {}
    for key, version in run.requests:
        used.setdefault(key, set()).add(version)
    return used


@pytest.mark.oracle
@pytest.mark.parametrize("name, group", RUNS, ids=[_label(r) for r in RUNS])
def test_every_cap_delivers_kafkas_records(name: str, group: str | None, schemas: Any) -> None:
    for cap, run in sweep(name, group, schemas).items():
        refusal = REFUSALS.get((name, cap))
        result = run.result
        if refusal is None:
            assert result.status == "pass", (cap, result.reason, result.diff[:5], run.requests)
        else:
            assert result.status == "fail" and refusal in result.reason, (cap, result.reason)
        for key, version in run.requests:
            assert key == API_VERSIONS or version <= cap, (cap, key, version)
        if group is not None and refusal is None:
            assert {11, 14} <= set(_used(run)), (cap, "no JoinGroup/SyncGroup")


@pytest.mark.oracle
@pytest.mark.parametrize("name, group", RUNS, ids=[_label(r) for r in RUNS])
def test_a_consumer_speaks_the_highest_version_it_shares(
    name: str, group: str | None, schemas: Any
) -> None:
    runs = sweep(name, group, schemas)
    own: dict[int, int] = {}
    for run in runs.values():
        for key, versions in _used(run).items():
            own[key] = max(own.get(key, 0), *versions)
    assert FETCH in own
    for cap, run in runs.items():
        if (name, cap) in REFUSALS:
            continue
        for key, versions in _used(run).items():
            if key != API_VERSIONS:
                assert versions == {min(cap, own[key])}, (cap, key, versions, own[key])


@pytest.mark.oracle
def test_every_claimed_version_is_spoken_by_some_consumer(schemas: Any) -> None:
    spoken: dict[int, set[int]] = {key: set() for key in APIS if key != PRODUCE}
    for name, group in RUNS:
        for run in sweep(name, group, schemas).values():
            for key, versions in _used(run).items():
                spoken[key] |= versions
    missing = {}
    for key, versions in spoken.items():
        valid = schemas.request(key).valid_versions
        claimed = set(range(valid.lowest, valid.highest + 1))
        if claimed - versions:
            missing[key] = claimed - versions
    assert missing == UNSPOKEN
