"""What ``check-broker`` sends: the crafted produce cases of ``corpora/produce/`` (scenario 1)
and the session scenarios (2-4).

A produce case is one or more partition payloads (``records``), sent raw, in order, as
Produce requests to one fresh partition of a topic created with the case's configuration,
then fetched back from offset 0. Kafka's answer is the kit's broker model of the Kafka line
asked (``conformance.broker``, held to Kafka's own ``UnifiedLog`` by the oracle's answers
stored beside each case and to real brokers by ``corpora/produce-golden``).

The session scenarios (:func:`session_cases`) run on topics of their own: a transactional
producer's session (``session``: group ``txn``), then Fetch and ListOffsets on what it
stored (``reads``: group ``fetch``), and both again at every version the target and Kafka
speak (group ``versions``).

==============  =====================================================================
group           the case name's prefix: ``req`` the request, ``log`` the log's checks,
                ``batch`` batch checks, ``rec`` record checks, ``parse`` bytes the
                validator cannot read, ``rewrite`` what the broker changes, ``pid``
                idempotent and transactional producers, ``legacy`` magic 0/1,
                ``verify`` transaction verification (KIP-890); sessions: ``txn``
                a transactional producer, ``fetch`` reads, ``versions`` the version
                sweep
case id         ``<group>/<case name>``
==============  =====================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.broker_check.reads import READS
from conformance.corpus.produce.cases import ProduceCase
from conformance.corpus.produce.store import read_corpus
from conformance.harness.report.model import case_document

__all__ = [
    "LOG_APPEND_TIME",
    "PRODUCE",
    "PRODUCE_CASES",
    "READ",
    "SESSION",
    "VERSIONS",
    "BrokerCase",
    "applies",
    "broker_cases",
    "case_documents",
    "session_cases",
]

#: what a case is (``BrokerCase.kind``)
PRODUCE, SESSION, READ, VERSIONS = "produce", "session", "read", "versions"
#: the case that sends the produce cases at every other Produce version
PRODUCE_CASES = "versions/produce-cases"
#: the configuration of the session topic whose timestamps the broker sets
LOG_APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}


@dataclass(frozen=True)
class BrokerCase:
    """One scenario of ``check-broker``: a produce case (``produce``) or a session scenario
    (``kind``, ``about``), and where it comes from."""

    id: str
    group: str
    produce: ProduceCase | None
    path: str
    kind: str = PRODUCE
    about: str = ""

    @property
    def name(self) -> str:
        return self.produce.name if self.produce is not None else self.id.split("/", 1)[1]

    @property
    def description(self) -> str:
        return self.produce.description if self.produce is not None else self.about


def broker_cases(corpora: Path) -> list[BrokerCase]:
    """Every case of ``corpora/produce/``, in the corpus's order."""
    out = []
    for stored in read_corpus(corpora / "produce"):
        c = stored.case
        group = c.name.split("-", 1)[0]
        out.append(BrokerCase(f"{group}/{c.name}", group, c, f"corpora/produce/{c.name}"))
    return out + session_cases()


def session_cases() -> list[BrokerCase]:
    """The session scenarios (``broker_check.session`` and ``broker_check.reads``)."""
    from_session = "conformance/broker_check/session.py"
    from_reads = "conformance/broker_check/reads.py"

    def case(group: str, name: str, kind: str, path: str, about: str) -> BrokerCase:
        return BrokerCase(f"{group}/{name}", group, None, path, kind, about)

    out = [
        case("txn", "transactions", SESSION, from_session,
             "a transactional producer: an aborted and a committed transaction, a plain "
             "batch, an open transaction, an idempotent batch inside it, a retry"),
        case("txn", "transactions-log-append-time", SESSION, from_session,
             "the same session on a LogAppendTime topic"),
    ]  # fmt: skip
    out += [
        case("fetch", read.name, READ, from_reads, f"after the session: {read.about}")
        for read in READS
    ]
    out += [
        case("fetch", "log-append-time", READ, from_reads,
             "every read on the LogAppendTime topic's session"),
        case("versions", "produce", VERSIONS, from_session,
             "the session at every other Produce version both speak (3-11: transactions V1)"),
        case("versions", "produce-cases", VERSIONS, "corpora/produce",
             "every produce case the run sends, again at every other Produce version both "
             "speak, on a topic of its own per version"),
        case("versions", "fetch", VERSIONS, from_reads,
             "the Fetch reads at every other Fetch version both speak (4+)"),
        case("versions", "list-offsets", VERSIONS, from_reads,
             "the ListOffsets reads at every other ListOffsets version both speak (1+)"),
    ]  # fmt: skip
    return out


def applies(case: BrokerCase, kafka_version: str) -> str | None:
    """Why ``case`` says nothing of a broker judged against Kafka ``kafka_version`` (None:
    it applies): Kafka's answer differs by line, and some cases exist for some lines only;
    a case that needs an older inter-broker protocol needs a broker configured for it."""
    c = case.produce
    if c is None:
        return None
    if kafka_version not in c.versions:
        return f"a case of Kafka {', '.join(c.versions)} only"
    if c.inter_broker_protocol_version is not None:
        ibp = c.inter_broker_protocol_version
        return f"needs a broker with inter.broker.protocol.version {ibp}"
    return None


def case_documents(cases: Sequence[BrokerCase]) -> dict[str, dict[str, Any]]:
    """The ``cases`` member of a broker report."""
    out: dict[str, dict[str, Any]] = {}
    for c in cases:
        requests = c.produce.requests if c.produce is not None else ()
        first = requests[0] if requests else b""
        size = sum(len(r) for r in requests)
        out[c.id] = case_document(c.group, c.kind, c.path, c.description, first, size, shown=64)
    return out
