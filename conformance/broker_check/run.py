"""A ``check-broker`` run: each target over the cases, judged against Kafka's answers.

Per target (``targets.running``: started by the kit, or reached at its bootstrap address):

1. ApiVersions through a recording proxy: the versions the target speaks (the report's
   capabilities); a Produce version the target does not speak is replaced by the nearest one
   both speak, and the case says so.
2. One topic per case, named ``<prefix><run token>-<case>`` (1 partition, replication factor
   1, the case's configuration): the run creates, writes, reads and deletes no other topic. A
   topic the target refuses to create with the case's configuration makes the case
   ``unsupported`` (the reason names the configuration); one refused without configuration is
   an ``error``.
3. Each case through a fresh recording proxy: the Metadata of its topic (the leader), each
   request sent raw as a Produce request (acks -1) to the leader, then a Fetch from offset 0
   (``capture.produce.send_case``); judged (``judge.judge_case``) at the level asked.
4. ``versions/produce-cases``: each produce case again at every other Produce version both
   speak, on a topic of its own per version.
5. The session scenarios (``session_run``: a transactional session, Fetch and ListOffsets on
   what it stored, both at every version both speak) on topics of their own.
6. The topics are deleted (unless ``keep_topics``), also when the run fails or is
   interrupted; a target that cannot be reached makes every remaining case ``error``.

``keep``: each case's evidence in ``<keep>/<target>/<case>/`` in the produce-golden layout
(``request-<i>.bin``, ``response-<i>.bin``, ``fetch.bin``, ``case.json``, ``answer.json``),
readable by ``decode`` and ``dump``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.broker.codes import NONE as NONE_ERROR
from conformance.broker.exchange import Exchange
from conformance.broker.versions import VERSIONS, broker_version
from conformance.broker_check.judge import judge_case
from conformance.broker_check.scenarios import (
    PRODUCE,
    PRODUCE_CASES,
    BrokerCase,
    applies,
    broker_cases,
    case_documents,
)
from conformance.broker_check.session_run import SessionPlan, run_session_cases
from conformance.broker_check.targets import BOOTSTRAP, Target, TargetError, running
from conformance.capture.produce import coordinator_meta, send_case
from conformance.capture.produce_wire import (
    API_PRODUCE,
    CLIENT_ID,
    WireClient,
    delete_topics,
    leader_address,
    produce_version_for,
    stored_by_request,
)
from conformance.capture.proxy import API_METADATA, RecordingProxy
from conformance.capture.session_wire import topic_id
from conformance.corpus.produce.cases import ProduceCase
from conformance.corpus.produce.golden import GoldenCase, write_golden_case
from conformance.harness.divergences import EVIDENCE, scoped
from conformance.harness.process import ProcessTable
from conformance.harness.runner import (
    CaseResult,
    Implementation,
    ImplementationRun,
    Job,
    Side,
    judged,
    keep_name,
)
from conformance.host.broker_socket import WIRE_ERRORS, BrokerConnection, answer_timeout, one_line
from conformance.host.kafka_client import KafkaClient
from conformance.host.progress import Status
from conformance.host.sessions import uninterrupted
from conformance.jsondoc import JsonDocument
from conformance.jvm.kafka_jars import try_kafka2_zstd
from conformance.jvm.message_defs import client_protocol
from conformance.levels import DEFAULT_LEVEL, DELIVERY, Difference, Judgement

__all__ = [
    "DEFAULT_PREFIX",
    "NEWEST",
    "BrokerCapabilities",
    "BrokerSettings",
    "BrokerSide",
    "implementation",
]

#: the prefix of every topic the run creates
DEFAULT_PREFIX = "kc-check-"
#: the Kafka line whose answers judge a target by default
NEWEST = max(VERSIONS, key=lambda v: tuple(int(x) for x in v.split(".")))
#: the APIs whose versions the report shows (key -> name)
_SHOWN_APIS = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 19: "CreateTopics"}


@dataclass(frozen=True)
class BrokerSettings:
    #: the Kafka line whose answers judge a target that is not Apache Kafka itself
    kafka_version: str = NEWEST
    topic_prefix: str = DEFAULT_PREFIX
    keep_topics: bool = False
    keep: Path | None = None
    level: str = DEFAULT_LEVEL


@dataclass
class BrokerCapabilities(JsonDocument):
    """What the report says of a target: what it is, the Kafka line judging it and the
    versions it advertises."""

    version: str
    judged_as: str
    api_versions: dict[str, list[int]] = field(default_factory=dict)
    #: what the target's ApiVersions said that is not a range of versions (one line each)
    version_findings: list[str] = field(default_factory=list)
    #: the run's topics it could not delete (name -> why)
    left_behind: dict[str, str] = field(default_factory=dict)
    #: the Kafka line whose answers judge it (``judged_as`` in words)
    kafka_version: str = ""
    #: a target declares no name and no capabilities: neither is ever invalid
    name: str = ""
    invalid: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "judgedAs": self.judged_as,
            "apiVersions": self.api_versions,
        }
        if self.version_findings:
            out["versionFindings"] = list(self.version_findings)
        if self.left_behind:
            out["leftBehind"] = dict(self.left_behind)
        return out


def implementation(target: Target) -> Implementation:
    """The report's row of ``target``: its name, its bootstrap address (a ``bootstrap``
    target), what it is."""
    return Implementation(
        target.name,
        (target.bootstrap,) if target.kind == BOOTSTRAP and target.bootstrap else (),
        source={
            "kind": target.kind,
            "description": target.description,
            "library": target.adapter.library if target.adapter else target.version,
        },
    )


_Job = Job[BrokerCase, BrokerCapabilities]


class BrokerSide(Side[BrokerCase, BrokerCapabilities]):
    """Kafka-compatible brokers over the broker cases (``check-broker``): each target in
    turn, started by the kit or reached at its address, its cases one after the other."""

    name = "broker"
    title = "check-broker"

    def __init__(
        self, targets: Sequence[Target], settings: BrokerSettings, log: Status = lambda _: None
    ) -> None:
        self.targets = {t.name: t for t in targets}
        self.settings, self.log = settings, log
        self._caps: dict[str, BrokerCapabilities] = {}

    def implementations(self) -> list[Implementation]:
        return [implementation(t) for t in self.targets.values()]

    def capabilities(
        self, impl: Implementation, table: ProcessTable
    ) -> tuple[BrokerCapabilities, str | None]:
        target = self.targets[impl.name]
        kafka_version = target.kafka_version or self.settings.kafka_version
        caps = BrokerCapabilities(target.version, f"Apache Kafka {kafka_version}")
        caps.kafka_version = kafka_version
        self._caps[impl.name] = caps
        return caps, None

    def left_behind(self, run: ImplementationRun) -> dict[str, str]:
        """The run's topics the target of ``run`` could not delete (name -> why)."""
        return self._caps[run.impl.name].left_behind

    def read_cases(self, corpora: Path) -> list[BrokerCase]:
        return broker_cases(corpora)

    def unsupported(self, case: BrokerCase, caps: BrokerCapabilities) -> str | None:
        return applies(case, caps.kafka_version)

    def documents(self, cases: Sequence[BrokerCase]) -> dict[str, dict[str, Any]]:
        return case_documents(cases)

    def settings_doc(self) -> dict[str, Any]:
        return {"jobs": 1, "timeout": answer_timeout(), "output_limit": None} | {
            "level": self.settings.level
        }

    def run_case(self, env: Any, job: _Job, table: ProcessTable) -> CaseResult:
        raise NotImplementedError("a target's cases run together (run_jobs)")

    def run_jobs(
        self,
        env: Any,
        jobs: Sequence[_Job],
        table: ProcessTable,
        record: Callable[[_Job, CaseResult], None],
    ) -> str | None:
        """The jobs of one target (the loop runs targets in turn): started or reached, its
        topics made, every case run, its topics deleted; a target that fails makes its cases
        not yet judged an ``error`` and is the run's problem."""
        target, caps = self.targets[jobs[0].impl.name], jobs[0].caps
        by_id = {j.case.id: j for j in jobs}
        done: set[str] = set()

        def put(result: CaseResult) -> None:
            done.add(result.case)
            record(by_id[result.case], result)

        if broker_version(caps.kafka_version).clients == "2.8":
            try_kafka2_zstd(self.log)  # Kafka 2.x's zstd, for the model of its line
        problem: str | None = None
        try:
            with running(target, self.log) as bootstrap:
                _on_target(
                    target, bootstrap, [j.case for j in jobs], caps.kafka_version,
                    self.settings, caps, self.log, put,
                )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - a target's failure is its cases' verdict
            problem = f"{target.name}: {one_line(exc)}"
            self.log(problem)
        for j in jobs:
            if j.case.id not in done:
                why = problem or "not run"
                record(j, CaseResult(target.name, j.case.id, j.case.group, "error", why, [], ""))
        return problem


def _on_target(
    target: Target,
    bootstrap: str,
    cases: Sequence[BrokerCase],
    kafka_version: str,
    settings: BrokerSettings,
    caps: BrokerCapabilities,
    log: Status,
    record: Callable[[CaseResult], None],
) -> None:
    protocol = client_protocol()
    with KafkaClient(bootstrap, protocol, client_id=CLIENT_ID) as client:
        versions = client.versions
        client.metadata([])
        first = client.addresses[0]
    caps.version_findings = list(versions.findings)
    for line in versions.findings:
        log(f"{target.name}: {line}")
    apis = dict(versions.ranges)
    caps.api_versions = {name: list(apis[key]) for key, name in _SHOWN_APIS.items() if key in apis}
    if API_PRODUCE not in apis:
        raise TargetError("the target advertises no Produce versions")
    host, port = first
    prefix = f"{settings.topic_prefix}{secrets.token_hex(6)}-"
    produce_cases = [c for c in cases if c.kind == PRODUCE]
    session_cases = [c for c in cases if c.kind != PRODUCE]
    plan = SessionPlan(apis, broker_version(kafka_version))
    if session_cases and plan.unsupported:
        for c in session_cases:
            record(CaseResult(target.name, c.id, c.group, "unsupported", plan.unsupported))
        session_cases = []
    topics = {f"{prefix}{c.name}": dict(c.produce.topic) for c in produce_cases if c.produce}
    sweep = next((c for c in session_cases if c.id == PRODUCE_CASES), None)
    session_cases = [c for c in session_cases if c.id != PRODUCE_CASES]
    if sweep is not None and not produce_cases:
        why = "no produce case is run (--cases chose none)"
        record(CaseResult(target.name, sweep.id, sweep.group, "unsupported", why))
        sweep = None
    sweep_versions = {
        c.id: plan.other_produce_versions(c.produce.produce_version)
        for c in produce_cases
        if sweep is not None and c.produce is not None
    }
    sweep_topics = {
        f"{prefix}{c.name}-v{v}": dict(c.produce.topic)
        for c in produce_cases
        if c.produce is not None
        for v in sweep_versions.get(c.id, ())
    }
    topics.update(sweep_topics)
    session_topics = {f"{prefix}{k}": v for k, v in plan.topics(session_cases).items()}
    topics.update(session_topics)
    refused: dict[str, str] = {}
    made: list[str] = []
    on = _OnTarget(target, host, int(port), kafka_version, apis, settings)
    try:
        log(f"{target.name}: creating {len(topics)} topics named {prefix}*")
        refused = _create(target, bootstrap, topics, apis, made, log)
        for c in produce_cases:
            topic = f"{prefix}{c.name}"
            if topic in refused:
                record(_refused(target, c, refused[topic]))
                continue
            record(_one_case(on, c, topic))
        for topic, why in refused.items():
            if topic in session_topics:
                log(f"{target.name}: {topic}: {why}")
        if sweep is not None:
            t0 = time.monotonic()
            sweep_made = {t.removeprefix(prefix): t for t in sweep_topics if t not in refused}
            judgement = _every_version(on, produce_cases, sweep_versions, sweep_made)
            record(_result(target, sweep, judgement, settings, time.monotonic() - t0))
        if session_cases and on.dead:
            why = f"not run: the target stopped answering ({on.dead[0]})"
            for c in session_cases:
                record(CaseResult(target.name, c.id, c.group, "error", why, [why], ""))
        elif session_cases:
            session_made = {t.removeprefix(prefix): t for t in session_topics if t not in refused}

            def judged(case: BrokerCase, judgement: Judgement, seconds: float) -> CaseResult:
                return _result(target, case, judgement, settings, seconds)

            run_session_cases(
                target.name, session_cases, (host, int(port)), session_made, plan,
                broker_version(kafka_version), settings.keep, judged, record,
            )  # fmt: skip
    except WIRE_ERRORS:
        on.dead.append("its answers stopped")
        raise
    finally:
        if not settings.keep_topics:
            # to its end, even when Ctrl-C or SIGTERM ended the cases: a user's cluster keeps
            # nothing of the run (a broker the kit started is stopped anyway); a second
            # interruption ends the deletion, and what is left is named. A target that
            # stopped answering is asked once, briefly.
            timeout = DEAD_TARGET_TIMEOUT if on.dead else None
            try:
                uninterrupted(lambda: _delete(target, bootstrap, made, log, caps, timeout), again=1)
            except BaseException:
                if made:
                    caps.left_behind.update({t: "the deletion was interrupted" for t in made})
                    log(f"{target.name}: the run's topics left: {', '.join(made)}")
                raise


#: how long a target that stopped answering is given to answer the deletion of its topics
DEAD_TARGET_TIMEOUT = 10.0


#: the API key of CreateTopics
_CREATE_TOPICS = 19


def _create(
    target: Target,
    bootstrap: str,
    topics: dict[str, dict[str, str]],
    apis: dict[int, tuple[int, int]],
    made: list[str],
    log: Status,
) -> dict[str, str]:
    """Create the run's topics (replication factor of the target) and append to ``made``
    each one the run made; returns topic -> why it was not made. Without CreateTopics the
    topics are made by Metadata's auto-creation with the broker's defaults, and a topic that
    needs a configuration is refused."""
    refused: dict[str, str] = {}
    with KafkaClient(bootstrap, client_protocol(), client_id=CLIENT_ID) as client:
        if _CREATE_TOPICS in apis:
            specs = {n: (1, target.replication, dict(c)) for n, c in topics.items()}
            outcomes = client.create_topics(specs, created=made.append)
        else:
            plain = [n for n, c in topics.items() if not c]
            why = "the target offers no CreateTopics: a topic with a configuration cannot be made"
            refused.update({n: why for n, c in topics.items() if c})
            log(f"{target.name}: no CreateTopics: {len(plain)} topics by Metadata auto-creation")
            outcomes = client.auto_create(plain, created=made.append)
    for name, outcome in outcomes.items():
        if not outcome.created or outcome.error != "NONE":
            refused[name] = f"topic creation refused: {outcome.reason}"
    return refused


def _delete(
    target: Target,
    bootstrap: str,
    made: list[str],
    log: Status,
    caps: BrokerCapabilities,
    timeout: float | None = None,
) -> None:
    if not made:
        return
    failed = delete_topics(bootstrap, made, timeout)
    log(f"{target.name}: {len(made) - len(failed)} of {len(made)} topics deleted")
    for topic, why in list(failed.items())[:5]:
        log(f"{target.name}: could not delete {topic}: {why}")
    if len(failed) > 5:
        log(f"{target.name}: ... and {len(failed) - 5} more not deleted")
    caps.left_behind.update(failed)
    made[:] = [t for t in made if t in failed]  # a repeated step deletes only what is left


def _refused(target: Target, case: BrokerCase, why: str) -> CaseResult:
    config = case.produce.topic if case.produce is not None else {}
    if config:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(config.items()))
        return CaseResult(
            target.name, case.id, case.group, "unsupported",
            f"the target cannot create a topic with {shown}: {why}",
        )  # fmt: skip
    return CaseResult(target.name, case.id, case.group, "error", why, [why], "")


@dataclass(frozen=True)
class _OnTarget:
    """What each produce case of one target's run is sent with and judged by."""

    target: Target
    host: str
    port: int
    kafka_version: str
    apis: dict[int, tuple[int, int]]
    settings: BrokerSettings
    #: why the target is no longer judged (it stopped answering), once it is so
    dead: list[str] = field(default_factory=list)


def _one_case(on: _OnTarget, case: BrokerCase, topic: str) -> CaseResult:
    t0 = time.monotonic()
    assert case.produce is not None
    if on.dead:
        why = f"not run: the target stopped answering ({on.dead[0]})"
        return CaseResult(on.target.name, case.id, case.group, "error", why, [why], "")
    judgement = _sent(on, case.produce, topic)
    return _result(on.target, case, judgement, on.settings, time.monotonic() - t0)


def _still_answers(on: _OnTarget) -> str | None:
    """None when the target answers ApiVersions within a few seconds, else why not."""
    try:
        with BrokerConnection(
            (on.host, on.port), client_protocol(), client_id=CLIENT_ID, timeout=5.0,
            connect_timeout=5.0,
        ) as conn:  # fmt: skip
            conn.negotiate()
    except WIRE_ERRORS as exc:
        return str(exc)
    return None


def _sent(on: _OnTarget, case: ProduceCase, topic: str, keep_as: str | None = None) -> Judgement:
    """``case`` sent to ``topic`` and fetched back, judged (kept as ``keep_as``, default
    the case's name, with ``--keep``)."""
    kafka = broker_version(on.kafka_version).produce_versions
    try:
        version = produce_version_for(case.produce_version, on.apis[API_PRODUCE], kafka)
    except ValueError as exc:
        return Judgement(error=str(exc))
    try:
        with RecordingProxy(on.host, on.port, protocol=client_protocol()) as proxy:
            address = leader_address(proxy, topic)
            uuid = _topic_id(proxy, topic, on.apis) if version >= 13 else None
            requests, fetched, meta = send_case(
                case, topic, proxy, True, on.apis[API_PRODUCE], kafka, address, uuid
            )
    except Exception as exc:  # noqa: BLE001 - whatever the target did: this case's verdict
        if isinstance(exc, WIRE_ERRORS):
            why = _still_answers(on)
            if why is not None:
                on.dead.append(why)
        return Judgement(error=one_line(exc))
    stored = stored_by_request(fetched or b"", [r.response for r in requests])
    answered = tuple(replace(r, stored=s) for r, s in zip(requests, stored))
    coordinator = coordinator_meta(on.kafka_version)
    exchange = Exchange(
        on.kafka_version,
        topic,
        dict(case.topic),
        answered,
        fetched=True,
        coordinator=coordinator.get("coordinator", NONE_ERROR),
    )
    if on.settings.keep is not None:
        root = on.settings.keep / keep_name(on.target.name)
        root.mkdir(parents=True, exist_ok=True)
        meta = {**meta, **coordinator, "target": on.target.name}
        kept = GoldenCase(keep_as or case.name, case.description, on.target.name,
                          on.kafka_version, topic, dict(case.topic), answered, None, True,
                          fetched, meta)  # fmt: skip
        write_golden_case(root, kept)
    return judge_case(exchange)


def _topic_id(proxy: RecordingProxy, topic: str, apis: dict[int, tuple[int, int]]) -> Any:
    """The topic's id (Metadata v10+, the newest both speak), for Produce v13+."""
    low, high = apis.get(API_METADATA, (0, -1))
    ours = client_protocol().versions(API_METADATA)
    version = min(high, ours.highest)
    if version < max(low, 10):
        raise RuntimeError("the target speaks no Metadata v10+: no topic id for Produce v13+")
    client = WireClient(proxy)
    try:
        return topic_id(client, topic, version)
    finally:
        client.close()


def _every_version(
    on: _OnTarget,
    cases: Sequence[BrokerCase],
    versions: dict[str, list[int]],
    topics: dict[str, str],
) -> Judgement:
    """``versions/produce-cases``: each produce case at every Produce version of its list
    in ``versions`` (on the topic ``topics`` names for it at that version), each difference
    naming the case and the version."""
    out = Judgement()
    for c in cases:
        assert c.produce is not None
        for v in versions[c.id]:
            if on.dead:
                out.evidence.append(EVIDENCE + scoped(c.id, f"Produce v{v}", "not sent: the "
                                                      "target stopped answering"))  # fmt: skip
                continue
            topic = topics.get(f"{c.name}-v{v}")
            if topic is None:
                out.evidence.append(EVIDENCE + scoped(c.id, f"Produce v{v}", "no topic"))
                continue
            at, where = replace(c.produce, produce_version=v), f"Produce v{v}"
            j = _sent(on, at, topic, f"{c.name}-v{v}")
            if j.error is not None:
                out.differences.append(Difference(DELIVERY, scoped(c.id, where, j.error)))
            out.differences += [
                Difference(d.level, scoped(c.id, where, d.text)) for d in j.differences
            ]
    return out


def _result(
    target: Target, case: BrokerCase, judgement: Judgement, settings: BrokerSettings, seconds: float
) -> CaseResult:
    return judged(target.name, case, judgement, settings.level, seconds=seconds)
