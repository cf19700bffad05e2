"""One broker's answers to one case against Kafka's, every difference at its level.

The exchange (``broker.exchange.Exchange``: the requests as sent, the answers as received,
what the partition stored) is compared with Kafka's answers by the kit's broker model of the
Kafka line asked (``broker.exchange.model_answers``: the broker's clock searched in the window
the request was in flight), each difference at the level it breaks (``broker.exchange``'s
table, ``conformance.levels``). What the judge adds: the evidence (Kafka's answer where they
differ) and the transaction coordinator's state, which the kit cannot see on a target
(:func:`judge_case`).
"""

from __future__ import annotations

import dataclasses

from conformance.broker.codes import NONE as NONE_ERROR
from conformance.broker.exchange import Exchange, model_answers, where
from conformance.broker.versions import broker_version
from conformance.harness.divergences import EVIDENCE
from conformance.levels import LEVELS, NONE, Difference, Judgement

__all__ = ["COORDINATOR_STATES", "judge_case"]

#: the levels a judgement may reach, lowest first
LEVELS_ORDER = (NONE, *LEVELS)

#: what a transaction coordinator may answer a 3.6+ broker's verification of a transactional
#: batch from a producer the kit never ran a transaction for: no coordinator (the topic
#: ``__transaction_state`` does not exist yet: Kafka started by the kit), the partition not
#: in a transaction, an unknown transactional id; and verified (a broker that does not verify)
COORDINATOR_STATES = (
    "COORDINATOR_NOT_AVAILABLE",
    "INVALID_TXN_STATE",
    "INVALID_PRODUCER_ID_MAPPING",
    NONE_ERROR,
)


def _judged(exchange: Exchange) -> Judgement:
    judgement = Judgement()
    for i, (r, (kafka, diffs)) in enumerate(zip(exchange.requests, model_answers(exchange))):
        at = where(i, r)
        judgement.differences += [Difference(d.level, f"{at}: {d.text}") for d in diffs]
        if diffs:
            judgement.evidence.append(
                f"{EVIDENCE}{at}: kafka answers {kafka['response']['errorName']}"
                + (f" ({kafka['exception']['class']})" if kafka.get("exception") else "")
            )
    return judgement


def judge_case(exchange: Exchange) -> Judgement:
    """Every difference between the target's answers in ``exchange`` (what it answered to
    each request, what it stored) and Kafka's (the model of ``exchange.kafka_version``), each
    line naming its request.

    Where Kafka's answer depends on the transaction coordinator's state, which the kit cannot
    see on a target (a transactional request to a line that verifies, KIP-890), each state of
    :data:`COORDINATOR_STATES` is Kafka's answer in turn, the exchange's own first: the first
    without a difference (else the one reaching the highest level, else the exchange's own)
    is the judgement, and its evidence names the state when it is not the exchange's own."""
    first = _judged(exchange)
    transactional = any(r.transactional_id for r in exchange.requests)
    if not first.differences or not transactional:
        return first
    if not broker_version(exchange.kafka_version).transaction_verification:
        return first
    best = first
    for state in COORDINATOR_STATES:
        if state == exchange.coordinator:
            continue
        trial = _judged(dataclasses.replace(exchange, coordinator=state))
        trial.evidence.append(f"{EVIDENCE}judged with the coordinator answering {state}")
        if LEVELS_ORDER.index(trial.reached()) > LEVELS_ORDER.index(best.reached()):
            best = trial
        if not trial.differences:
            return trial
    return best
