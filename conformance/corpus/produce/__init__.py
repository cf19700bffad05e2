"""The produce corpus: crafted Produce requests and Kafka's answers to them (docs/broker.md).

``cases`` builds the requests (one module of cases, each built with the real writers and a
fault knob); ``store`` writes them with the broker oracle's answers under
``corpora/produce/<case>/`` (``scripts/make-produce-corpus``) and reads them back, and judges
a case with the kit's model (:func:`~conformance.corpus.produce.store.judge`).
"""

from __future__ import annotations

from conformance.corpus.produce.cases import NOW, ProduceCase, cases
from conformance.corpus.produce.store import StoredCase, judge, read_corpus, write_corpus

__all__ = ["NOW", "ProduceCase", "StoredCase", "cases", "judge", "read_corpus", "write_corpus"]
