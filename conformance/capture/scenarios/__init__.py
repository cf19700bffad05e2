"""What each corpus case makes a real broker write (docs/corpora.md, scenario directories).

A :class:`Scenario` creates nothing itself: ``capture`` (``run.py``) creates its topic with
``topic_configs`` (partition count 1), calls :meth:`Scenario.run`, which produces
deterministically (fixed timestamps, keys and values; batches delimited by explicit flushes,
``linger`` far longer than a run) and waits where needed (the log cleaner), and returns the
producer description for the manifest.

``non_deterministic`` lists what may differ between two captures of the same scenario. Each
entry starts with a canonical decode JSON key (``conformance.stream.canonical``), masked wherever it
appears in a batch or record by the determinism test, optionally followed by an explanation;
entries starting with ``file:`` name files whose bytes vary as a whole.

Producers: kafka-python (``api_version`` picks the magic: (0, 9) -> 0, (0, 10, 2) -> 1,
(2, 5) -> 2; it has no snappy codec here) and Kafka's own Java producer
(``jvm/producer/Produce.java``, run with the broker version's kafka-clients).

Modules: ``base`` (the type, the registry, shared constants), ``producers`` (kafka-python and
the Java producer), ``formats``, ``state`` and ``wire`` (the scenarios, registered on import in
that order).
"""

from __future__ import annotations

# the scenario modules register themselves in SCENARIOS, in this order
from conformance.capture.scenarios import formats, state, wire  # noqa: F401
from conformance.capture.scenarios.base import (
    SCENARIOS,
    T0,
    Scenario,
    mask,
    masked_keys,
    scenarios_for,
    wait_cleaned,
)
from conformance.capture.scenarios.producers import (
    java_produce,
    kafka_python_produce,
    produce,
)

__all__ = [
    "SCENARIOS",
    "T0",
    "Scenario",
    "java_produce",
    "kafka_python_produce",
    "mask",
    "masked_keys",
    "produce",
    "scenarios_for",
    "wait_cleaned",
]
