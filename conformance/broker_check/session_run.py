"""The session scenarios of a ``check-broker`` run (2-4), on topics of their own.

=========================  =================================================================
topic (after the prefix)   what runs on it
=========================  =================================================================
``txn``                    the session (``session.run_session``) at the newest Produce version
                           both speak (v3-11: a transactions V1 client's; v12+ where the
                           Kafka line has them, Kafka 4: a transactions V2 client's, EndTxn
                           v5, the epoch bumped at every commit and abort), then every read
                           (``reads``) at the newest Fetch / ListOffsets version both speak
                           (the ``fetch/<read>`` cases) and at every other one (the
                           ``versions/fetch`` and ``versions/list-offsets`` cases), then the
                           open transaction is aborted
``txn-lat``                the session on a LogAppendTime topic, every read at the newest
                           versions (``fetch/log-append-time``)
``produce-v<N>``           the session at each other Produce version (``versions/produce``)
=========================  =================================================================

"Both speak": the target advertises it (ApiVersions), the Kafka line judging it does
(``BrokerVersion.produce_versions`` / ``fetch_versions`` / ``list_offsets_versions``) and
the kit's client has its definition (``jvm.message_defs.client_protocol``); Fetch v13+ and
Produce v13+ (by topic id) only when Metadata v10+ gives the topic's id; Produce v12+ only
with EndTxn v5 (``SessionPlan.left_out`` says which versions were not sent, and why).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.broker.versions import BrokerVersion
from conformance.broker_check.reads import (
    FETCH,
    LIST_OFFSETS,
    MIN_VERSION,
    READS,
    Answered,
    Facts,
    facts,
    judge_read,
    run_reads,
    write_reads,
)
from conformance.broker_check.scenarios import LOG_APPEND_TIME, BrokerCase
from conformance.broker_check.session import Session, run_session
from conformance.capture.produce_wire import (
    API_PRODUCE,
    WireClient,
    leader_address,
    produce_version_for,
)
from conformance.capture.proxy import RecordingProxy
from conformance.capture.session_wire import TXN_MAX, TXN_V2, topic_id
from conformance.client.calls import END_TXN_V2, TOPIC_IDS_FROM
from conformance.client.connection import MalformedAnswerError
from conformance.harness.runner import CaseResult, keep_name
from conformance.host.broker_socket import WIRE_ERRORS, one_line
from conformance.jvm.message_defs import client_protocol
from conformance.levels import DELIVERY, Difference, Judgement

__all__ = ["SessionPlan", "run_session_cases"]

#: how the reads of a session are filed: (client, facts, topic id, the reads answered)
ReadsJudged = Callable[[WireClient, Facts, Any, list[Answered]], None]
#: why a Produce version is left out of the sweep
_NO_TV2 = f"transactions V2 needs EndTxn v{END_TXN_V2}, which the target does not speak"
_NO_TOPIC_ID = f"Produce v{TOPIC_IDS_FROM}+ names topics by id, which needs Metadata v10+"


def _kit_range(api: str) -> tuple[int, int]:
    """The versions of ``api`` the kit's client speaks (Kafka's definitions)."""
    v = client_protocol().versions(api)
    return v.lowest, v.highest


class SessionPlan:
    """The versions a target's sessions use, and the topics they need."""

    def __init__(self, apis: dict[int, tuple[int, int]], version: BrokerVersion) -> None:
        self.version = version
        kafka = {
            "Produce": version.produce_versions,
            FETCH: version.fetch_versions,
            LIST_OFFSETS: version.list_offsets_versions,
            "Metadata": (10, 12),
            **{name: _kit_range(name) for name in TXN_MAX},
        }  # fmt: skip
        p_low, p_high = _kit_range("Produce")
        t_low, t_high = self.produce_range = apis.get(API_PRODUCE, (0, -1))
        k_low, k_high = self.kafka_produce = version.produce_versions
        #: every Produce version both speak (the produce cases' sweep)
        self.produce_all = list(range(max(p_low, t_low, k_low), min(p_high, t_high, k_high) + 1))
        low = {"Produce": 3, "FindCoordinator": 1, **MIN_VERSION}
        self.versions: dict[str, list[int]] = {}
        for name, (k_low, k_high) in kafka.items():
            t_low, t_high = apis.get(client_protocol().key(name), (0, -1))
            p_low, p_high = _kit_range(name)
            first = max(k_low, t_low, p_low, low.get(name, 0))
            self.versions[name] = list(range(first, min(k_high, t_high, p_high) + 1))
        for name, top in TXN_MAX.items():  # a transactions V1 client's: up to its newest
            if not any(v <= top for v in self.versions[name]):
                self.versions[name] = []

        def lacking(names: Sequence[str]) -> str | None:
            missing = [n for n in names if not self.versions[n]]
            if not missing:
                return None
            return f"no version of {', '.join(missing)} both the target and Kafka speak"

        #: why no session can run (None: they can)
        self.unsupported = lacking(("Produce", FETCH, LIST_OFFSETS))
        #: why sessions run without transactions (plain batches; the ``txn`` cases are
        #: unsupported)
        self.no_transactions = lacking(tuple(TXN_MAX))
        #: the Produce versions both speak that no session is sent at, and why
        self.left_out: dict[int, str] = {}
        for v in self.versions["Produce"]:
            if v >= TOPIC_IDS_FROM and not self.versions["Metadata"]:
                self.left_out[v] = _NO_TOPIC_ID
            elif (
                version.epoch_bump(v)
                and not self.no_transactions
                and self.newest("EndTxn") < END_TXN_V2
            ):
                self.left_out[v] = _NO_TV2
        self.versions["Produce"] = [v for v in self.versions["Produce"] if v not in self.left_out]
        if not self.versions["Produce"] and not self.unsupported:
            self.unsupported = "; ".join(sorted(set(self.left_out.values())))

    def txn_versions(self, produce_version: int) -> dict[str, int] | None:
        """The transaction APIs' versions of a session at ``produce_version`` (None: no
        transactions): a transactions V2 client's (``TXN_V2`` at the newest, Produce v12+ on
        a Kafka line with ``transactions_v2_from``) or a V1 client's (up to ``TXN_MAX``)."""
        if self.no_transactions:
            return None
        if self.version.epoch_bump(produce_version):
            return {name: self.newest(name) for name in TXN_V2}
        return {name: max(v for v in self.versions[name] if v <= top)
                for name, top in TXN_MAX.items()}  # fmt: skip

    def other_produce_versions(self, requested: int) -> list[int]:
        """The Produce versions a produce case of ``requested`` is sent at besides its own
        (``produce_wire.produce_version_for``): every version the target, the Kafka line and
        the kit speak."""
        try:
            own = produce_version_for(requested, self.produce_range, self.kafka_produce)
        except ValueError:
            own = None
        return [v for v in self.produce_all if v != own]

    def newest(self, api: str) -> int:
        return self.versions[api][-1]

    def topics(self, cases: Sequence[BrokerCase]) -> dict[str, dict[str, str]]:
        """Topic suffix -> configuration, for the session cases among ``cases``."""
        names = {c.id for c in cases}
        out: dict[str, dict[str, str]] = {}
        if names & {"txn/transactions", "versions/fetch", "versions/list-offsets"} or any(
            n.startswith("fetch/") and n != "fetch/log-append-time" for n in names
        ):
            out["txn"] = {}
        if names & {"txn/transactions-log-append-time", "fetch/log-append-time"}:
            out["txn-lat"] = dict(LOG_APPEND_TIME)
        if "versions/produce" in names and not self.unsupported:
            for v in self.versions["Produce"][:-1]:
                out[f"produce-v{v}"] = {}
        return out


def run_session_cases(
    target_name: str,
    cases: Sequence[BrokerCase],
    proxy_at: tuple[str, int],
    topics: dict[str, str],
    plan: SessionPlan,
    version: BrokerVersion,
    keep: Path | None,
    judged: Callable[[BrokerCase, Judgement, float], CaseResult],
    record: Callable[[CaseResult], None],
) -> None:
    """Every session case of ``cases`` (``topics``: suffix -> the topic created, or missing
    when it was refused); ``judged`` makes a case's result of its judgement."""
    wanted = {c.id: c for c in cases}
    done: set[str] = set()

    def put(case_id: str, judgement: Judgement, seconds: float) -> None:
        if case_id in wanted and case_id not in done:
            done.add(case_id)
            record(judged(wanted[case_id], judgement, seconds))

    versions = {FETCH: plan.newest(FETCH), LIST_OFFSETS: plan.newest(LIST_OFFSETS)}
    if plan.no_transactions:
        for case_id in ("txn/transactions", "txn/transactions-log-append-time"):
            if case_id in wanted:
                done.add(case_id)
                c = wanted[case_id]
                record(CaseResult(target_name, c.id, c.group, "unsupported", plan.no_transactions))

    @contextmanager
    def session(suffix: str, produce_version: int) -> Iterator[tuple[WireClient, Session, Any]]:
        """A session on the topic of ``suffix`` (with the topic's id where it is needed); its
        transaction is closed on the way out."""
        topic = topics[suffix]
        config = LOG_APPEND_TIME if suffix == "txn-lat" else {}
        with RecordingProxy(*proxy_at) as proxy:
            leader = leader_address(proxy, topic)
            client = WireClient(proxy, address=leader)
            s = Session(connections=[client])
            try:
                uuid = _topic_uuid(client, topic, plan, produce_version)
                run_session(s, proxy, client, topic, config, version, produce_version,
                            plan.txn_versions(produce_version), uuid)  # fmt: skip
                yield client, s, uuid
                s.close()
            finally:
                for c in s.connections:
                    c.close()

    def attempt(ids: Sequence[str], step: Callable[[], None]) -> None:
        """``step``; the cases of ``ids`` it did not record are errors when it raised."""
        t0 = time.monotonic()
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - whatever the target did: these cases' verdict
            why = one_line(exc)
            for case_id in ids:
                put(case_id, Judgement(error=why), time.monotonic() - t0)

    def on_topic(suffix: str, txn_case: str, judged_reads: ReadsJudged) -> None:
        """The session on the topic of ``suffix`` (its judgement: ``txn_case``), every read
        at the newest versions (``judged_reads`` files them), the evidence kept."""
        t0 = time.monotonic()
        with session(suffix, plan.newest("Produce")) as (client, s, uuid):
            f = facts(s.log)
            answered = run_reads(client, topics[suffix], READS, versions, f, uuid)
            judged_reads(client, f, uuid, answered)
            _keep(keep, target_name, txn_case.replace("/", "-"), s, answered, version)
        put(txn_case, s.judgement, time.monotonic() - t0)

    def each_read_and_version(
        client: WireClient, f: Facts, uuid: Any, answered: list[Answered]
    ) -> None:
        for read, v, asked, answer in answered:
            put(f"fetch/{read.name}", Judgement(judge_read(read, v, asked, answer, f)), 0.0)
        for api, case_id in ((FETCH, "versions/fetch"), (LIST_OFFSETS, "versions/list-offsets")):
            put(case_id, _sweep(client, topics["txn"], api, plan, f, uuid), 0.0)

    def all_reads(client: WireClient, f: Facts, uuid: Any, answered: list[Answered]) -> None:
        judgement = Judgement([d for r in answered for d in judge_read(*r, f)])
        put("fetch/log-append-time", judgement, 0.0)

    def every_produce_version() -> None:
        t0 = time.monotonic()
        j = Judgement()
        for v in plan.versions["Produce"][:-1]:
            with session(f"produce-v{v}", v) as (_, s, _):
                pass
            j.differences += [Difference(d.level, f"Produce v{v}: {d.text}")
                              for d in s.judgement.differences]  # fmt: skip
        for v, why in sorted(plan.left_out.items()):
            j.evidence.append(f"| Produce v{v}: not sent ({why})")
        put("versions/produce", j, time.monotonic() - t0)

    if "txn" in topics:
        reads = [f"fetch/{r.name}" for r in READS]
        attempt(
            ["txn/transactions", *reads, "versions/fetch", "versions/list-offsets"],
            lambda: on_topic("txn", "txn/transactions", each_read_and_version),
        )
    if "txn-lat" in topics:
        attempt(
            ["txn/transactions-log-append-time", "fetch/log-append-time"],
            lambda: on_topic("txn-lat", "txn/transactions-log-append-time", all_reads),
        )
    if "versions/produce" in wanted:
        attempt(["versions/produce"], every_produce_version)
    for c in cases:  # a topic that could not be created
        if c.id not in done:
            put(c.id, Judgement(error="its topic was not created"), 0.0)


def _topic_uuid(client: WireClient, topic: str, plan: SessionPlan, produce_version: int) -> Any:
    """The topic's id, for a session at Produce v13+ (where not known: it raises) or for
    Fetch v13+ (None: not needed, or not known: those Fetches are not sent)."""
    by_id = produce_version >= TOPIC_IDS_FROM  # only with Metadata (SessionPlan.left_out)
    if not plan.versions["Metadata"] or not (by_id or plan.newest(FETCH) >= TOPIC_IDS_FROM):
        return None
    try:
        return topic_id(client, topic, plan.newest("Metadata"))
    except WIRE_ERRORS + (RuntimeError,):
        if by_id:
            raise
        return None


def _sweep(
    client: WireClient, topic: str, api: str, plan: SessionPlan, f: Any, uuid: Any
) -> Judgement:
    """Every read of ``api`` at every other version both speak; an answer that does not read
    at its version (as Kafka's generated readers read it) is a ``delivery`` difference of
    that version, and the sweep goes on."""
    j = Judgement()
    reads = [r for r in READS if r.api == api]
    for v in plan.versions[api][:-1]:
        if api == FETCH and v >= 13 and uuid is None:
            j.evidence.append(f"| Fetch v{v}: not sent (the topic's id is not known)")
            continue
        chosen = [r for r in reads if v >= r.min_version]
        try:
            answered = run_reads(client, topic, chosen, {api: v}, f, uuid)
        except MalformedAnswerError as exc:  # what Java's client at v could not read either
            j.differences.append(Difference(DELIVERY, one_line(exc)))
            continue
        for read, version, asked, answer in answered:
            j.differences += judge_read(read, version, asked, answer, f)
    return j


def _keep(
    keep: Path | None,
    target: str,
    name: str,
    s: Session,
    reads: Sequence[Answered],
    version: BrokerVersion,
) -> None:
    """The session's evidence under ``keep``/<target>/<name>: ``session.json`` (each step's
    answers and Kafka's) and the reads' (``reads.write_reads``)."""
    if keep is None:
        return
    root = keep / keep_name(target) / name
    meta = {
        "target": target,
        "judgedAs": f"Apache Kafka {version.version}",
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kit": __version__,
        "source": "kafka-conformance check-broker --keep",
    }
    write_reads(root, s.log, reads, meta)
    (root / "session.json").write_text(json.dumps(s.exchanges, indent=2) + "\n")
