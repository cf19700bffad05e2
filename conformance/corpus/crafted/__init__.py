"""The crafted edge-case corpus: hand-built inputs for every rule of the format and the bug list.

Every case is written from ``docs/format.md`` (sections 1-5, Appendix A) or from a bug of
``research/third-party-implementations.md`` section 2 (ids ``C1``..``C69``; a case built from a
bug carries the id in its name, e.g. ``snappy-raw-c11``). Expectations are **never** written
here: ``scripts/make-crafted-corpus`` runs the Java oracle (Kafka's own classes) on these bytes
and stores its documents next to them (``corpora/crafted/``).

>>> from conformance.corpus.crafted import cases
>>> [c.name for c in cases()][:2]           # doctest: +SKIP
['split-empty', 'split-tail-00']

One module per case area (name prefix): ``split`` (``split-``, docs/format.md §1.2/§1.3),
``v2`` (``v2-``, §3.1-3.3), ``records`` (``rec-``, §3.4/§3.5), ``headers`` (``hdr-``),
``varint`` (``varint-``, §3.6), ``control`` (``ctl-``, §3.7), ``legacy`` (``legacy-``, §2),
``gzip`` / ``snappy`` / ``lz4`` / ``zstd`` / ``codec`` (§5), ``mixed`` (several formats in one
input). Cases about splitting run in both modes; the others in ``memory``.

Byte builders (re-exported here, usable on their own, e.g. in tests): from ``_build``
:func:`v2_record`, :func:`v2_batch`, :func:`reseal`, :func:`legacy_message`,
:func:`legacy_wrapper`, :func:`v1_inner`, :func:`ctl_key`, :func:`ctl_value`,
:func:`control_batch` - the crafted defaults (timestamp :data:`TS`, key ``k``, value ``v``)
over the one writer of each structure in ``conformance.wire`` (``record.write_record_v2``,
``batch.write_batch_v2`` / ``seal_v2``, ``legacy.write_legacy_message`` /
``write_legacy_wrapper``, ``control.write_control_key`` / ``write_end_txn_marker_value``),
whose keyword knobs make the faults; :class:`~conformance.wire.record.Raw` marks field bytes
written verbatim. The codec framings are the codec modules' writers, re-exported
under their earlier names: :func:`lz4_custom` (``codecs.lz4.write_frame``), :func:`xerial` /
:func:`xerial_header` (``codecs.snappy.write_xerial`` / ``write_header``), :func:`gzip_member`
(``codecs.gzip.write_member``), :func:`zstd_raw_frame` (``codecs.zstd.write_raw_frame``).
"""

from __future__ import annotations

from conformance.corpus.crafted import (
    codec,
    control,
    gzip,
    headers,
    legacy,
    lz4,
    mixed,
    records,
    snappy,
    split,
    v2,
    varint,
    zstd,
)
from conformance.corpus.crafted._build import (
    AREAS,
    TS,
    Case,
    Collector,
    control_batch,
    ctl_key,
    ctl_value,
    legacy_message,
    legacy_wrapper,
    patch,
    reseal,
    v1_inner,
    v2_batch,
    v2_record,
)

__all__ = [
    "AREAS",
    "TS",
    "Case",
    "cases",
    "control_batch",
    "ctl_key",
    "ctl_value",
    "legacy_message",
    "legacy_wrapper",
    "patch",
    "reseal",
    "v1_inner",
    "v2_batch",
    "v2_record",
]

# The area modules in case order (the order of corpora/crafted/manifest.json).
_AREA_MODULES = (
    split,
    v2,
    records,
    headers,
    varint,
    control,
    legacy,
    gzip,
    snappy,
    lz4,
    zstd,
    codec,
    mixed,
)


def cases() -> list[Case]:
    """Every crafted case, in a stable order (names unique, kebab-case, area-prefixed)."""
    add = Collector()
    for module in _AREA_MODULES:
        module.add_cases(add)
    return add.items


if __name__ == "__main__":  # pragma: no cover
    all_cases = cases()
    print(f"{len(all_cases)} cases, {sum(len(c.data) for c in all_cases)} bytes")
    for c in all_cases:
        print(f"{c.name:50s} {len(c.data):7d} {','.join(c.modes)}")
