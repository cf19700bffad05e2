"""What ``check-broker`` sends: the crafted produce cases of ``corpora/produce/``.

Each case is one or more partition payloads (``records``), sent raw, in order, as Produce
requests to one fresh partition of a topic created with the case's configuration, then
fetched back from offset 0. Kafka's answer is the kit's broker model of the Kafka line asked
(``conformance.broker``, held to Kafka's own ``UnifiedLog`` by the oracle's answers stored
beside each case and to real brokers by ``corpora/produce-golden``).

==============  =====================================================================
group           the case name's prefix: ``req`` the request, ``log`` the log's checks,
                ``batch`` batch checks, ``rec`` record checks, ``parse`` bytes the
                validator cannot read, ``rewrite`` what the broker changes, ``pid``
                idempotent and transactional producers, ``legacy`` magic 0/1,
                ``verify`` transaction verification (KIP-890)
case id         ``<group>/<case name>``
==============  =====================================================================
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.corpus.produce.cases import ProduceCase
from conformance.corpus.produce.store import read_corpus

__all__ = ["BrokerCase", "applies", "broker_cases", "case_documents", "select"]


@dataclass(frozen=True)
class BrokerCase:
    """One scenario of ``check-broker``: a produce case and where it comes from."""

    id: str
    group: str
    produce: ProduceCase
    path: str

    @property
    def description(self) -> str:
        return self.produce.description


def broker_cases(corpora: Path) -> list[BrokerCase]:
    """Every case of ``corpora/produce/``, in the corpus's order."""
    out = []
    for stored in read_corpus(corpora / "produce"):
        c = stored.case
        group = c.name.split("-", 1)[0]
        out.append(BrokerCase(f"{group}/{c.name}", group, c, f"corpora/produce/{c.name}"))
    return out


def select(cases: Sequence[BrokerCase], globs: Sequence[str]) -> list[BrokerCase]:
    """The cases whose id or name matches one of ``globs`` (all when there is none)."""
    if not globs:
        return list(cases)
    return [
        c
        for c in cases
        if any(fnmatch.fnmatch(c.id, g) or fnmatch.fnmatch(c.produce.name, g) for g in globs)
    ]


def applies(case: BrokerCase, kafka_version: str) -> str | None:
    """Why ``case`` says nothing of a broker judged against Kafka ``kafka_version`` (None:
    it applies): Kafka's answer differs by line, and some cases exist for some lines only;
    a case that needs an older inter-broker protocol needs a broker configured for it."""
    c = case.produce
    if kafka_version not in c.versions:
        return f"a case of Kafka {', '.join(c.versions)} only"
    if c.inter_broker_protocol_version is not None:
        ibp = c.inter_broker_protocol_version
        return f"needs a broker with inter.broker.protocol.version {ibp}"
    return None


def case_documents(cases: Sequence[BrokerCase]) -> dict[str, dict[str, Any]]:
    """The ``cases`` member of a broker report."""
    return {
        c.id: {
            "group": c.group,
            "mode": "produce",
            "size": sum(len(r) for r in c.produce.requests),
            "path": c.path,
            "description": c.description,
            "outcome": "ok",
            "hex": c.produce.requests[0][:64].hex() if c.produce.requests else "",
            "hex_truncated": bool(c.produce.requests) and len(c.produce.requests[0]) > 64,
        }
        for c in cases
    }
