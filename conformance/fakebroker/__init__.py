"""A fake Kafka broker for real consumers: it serves one partition's bytes (a corpus case's
partition directory or one file of record batches) verbatim in Fetch responses, so a client's
real consumer (fetch, decode, deliver) can be judged on them (docs/fake-broker.md).

* ``handlers``: what each API answers (:class:`Served`: definitions, topic, partition, log;
  :class:`Faults`);
* ``server``: :class:`FakeBroker`, the listener on 127.0.0.1 (threads, framing; everything
  it starts is stopped by ``stop()`` / ``with``);
* ``partition``: :func:`read_log`, a :class:`~conformance.broker.fetch.FetchLog` from files.

The protocol is encoded with ``conformance.messages`` from Kafka's own JSON definitions
(the caller passes them: ``jvm.message_defs.message_schemas``); what a Fetch returns is
``conformance.broker.fetch``'s model of a leader reading its segments.
"""

from __future__ import annotations

from conformance.fakebroker.handlers import APIS, Faults, Served
from conformance.fakebroker.partition import max_magic, read_log
from conformance.fakebroker.server import MAX_REQUEST_BYTES, FakeBroker

__all__ = ["APIS", "MAX_REQUEST_BYTES", "FakeBroker", "Faults", "Served", "read_log", "max_magic"]
