"""A fake Kafka broker for real consumers: it serves one partition's bytes (a corpus case's
partition directory or one file of record batches) verbatim in Fetch responses, so a client's
real consumer (fetch, decode, deliver) can be judged on them (docs/fake-broker.md).

* ``handlers``: what each API answers (:class:`Served`: definitions, topic, partition, log;
  :class:`Faults`);
* ``server``: :class:`FakeBroker`, the listener on 127.0.0.1 (threads, framing; everything
  it starts is stopped by ``stop()`` / ``with``);
* ``partition``: :func:`read_log`, a :class:`~conformance.broker.fetch.FetchLog` from files
  (:func:`write_log`: back to files).

The protocol is encoded with ``conformance.messages`` from Kafka's own JSON definitions
(the caller passes them: ``jvm.message_defs.message_schemas``); what a Fetch returns is
``conformance.broker.fetch``'s model of a leader reading its segments.
"""

from __future__ import annotations

from conformance.fakebroker.handlers import APIS, FETCH_MAX_BYTES, Faults, Served, topic_problem
from conformance.fakebroker.partition import max_magic, read_log, write_log
from conformance.fakebroker.server import (
    MAX_CONNECTIONS,
    MAX_REQUEST_BYTES,
    MAX_REQUEST_ENTRIES,
    FakeBroker,
)

__all__ = [
    "APIS",
    "FETCH_MAX_BYTES",
    "MAX_CONNECTIONS",
    "MAX_REQUEST_BYTES",
    "MAX_REQUEST_ENTRIES",
    "FakeBroker",
    "Faults",
    "Served",
    "max_magic",
    "read_log",
    "topic_problem",
    "write_log",
]
