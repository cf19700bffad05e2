"""The ``native`` fuzz target (``conformance/fuzz/native.py``): the native fast path held to the
pure loop and the reference reader, on fuzzed decodes and records regions.

The target itself runs in the fuzz smoke of every target (``tests/test_fuzz.py``); here: its
built-in seeds, that it really sees a divergence, a panic and a missing extension, its
mutator shape, and its counters reaching the worker's stats file."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import codecs
from conformance.errors import DecodeError
from conformance.fuzz import native as N
from conformance.fuzz import store as fstore
from conformance.fuzz.mutator import Mutator
from conformance.fuzz.targets import TARGETS, get
from conformance.fuzz.worker import build
from conformance.primitives import native as native_choice
from conformance.wire import batch as batch_module
from conformance.wire.record import Record, write_record_v2

ROOT = Path(__file__).resolve().parent.parent

needs_native = pytest.mark.skipif(
    N.unavailable() is not None, reason="the native extension is not installed"
)


def _run(data: bytes) -> None:
    try:
        N.t_native(data)
    except DecodeError:
        pass


def _region(records: list[bytes], **kw: Any) -> N.RegionInput:
    fields: dict[str, Any] = dict(
        selector=1, count=len(records), base_offset=100, base_timestamp=1_700_000_000_000,
        log_append_time=0, keep=len(records), pad=b"", region=b"".join(records),
    )  # fmt: skip
    fields.update(kw)
    return N.RegionInput(**fields)


GOOD = [write_record_v2(0, 0, b"k", b"v", [("h", b"x")]), write_record_v2(1, 3, None, b"w")]


def test_the_target_is_registered_with_its_hooks() -> None:
    t = get("native")
    assert t.shape == "native" and t.unavailable is N.unavailable and t.counters is N.counters
    assert t.wire_bytes(b"\x00") is None  # no Java oracle: the reference is the kit's own


def test_built_in_seeds_need_no_checkout(tmp_path: Path) -> None:
    seeds = list(N.seeds())
    forms = {s[0] & 1 for s in seeds}
    assert forms == {0, 1}
    codecs_seen = {N.read_region_input(s).codec for s in seeds if s[0] & 1}
    assert codecs_seen == set(codecs.CODECS)
    # the registry's seed function reads corpora/ when there is one, adds nothing otherwise
    assert len(list(TARGETS["native"].seeds(tmp_path))) == len(seeds)


def test_region_input_round_trips() -> None:
    r = _region(GOOD, selector=0x83, pad=b"\x01\x02", keep=1, log_append_time=-5)
    back = N.read_region_input(N.write_region_input(r))
    assert back == r and back.lat == -5 and back.codec == codecs.NONE
    assert N.read_region_input(b"\x01") == N.RegionInput(1, 0, 0, 0, 0, 0, b"", b"")


@needs_native
def test_seeds_run_clean_and_both_verdicts_are_counted() -> None:
    before = N.counters()
    saved = (native_choice.NATIVE, batch_module.FAST_PATH)
    for s in N.seeds():
        _run(s)
    assert (native_choice.NATIVE, batch_module.FAST_PATH) == saved  # the switches are restored
    after = N.counters()
    grew = {k: after[k] - before[k] for k in after}
    assert grew["native_accepted"] > 50 and grew["native_declined"] > 20, grew
    assert grew["decodes_compared"] > 100 and grew["rows_compared"] > 100, grew


class _Rows(list):  # type: ignore[type-arg]
    """Rows made up by a test, with the extension's ``records()`` beside them."""

    def records(self) -> Iterator[Record]:
        return iter([Record(*row) for row in self])


class _Wrapped:
    """The real extension with one thing changed."""

    API = native_choice.API

    def __init__(self, real: Any, **overrides: Any) -> None:
        self._real = real
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _with_module(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    monkeypatch.setattr(N, "_MODULE", module)


@needs_native
def test_a_wrong_row_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    real = N._module()

    def off_by_one(*args: Any) -> Any:
        rows = real.read_records_v2(*args)
        return None if rows is None else _Rows((r[0] + 1, *r[1:]) for r in rows)

    _with_module(monkeypatch, _Wrapped(real, read_records_v2=off_by_one))
    with pytest.raises(N.RowsDiffer, match="native row 0"):
        N.t_native(N.write_region_input(_region(GOOD)))
    stream = b"\x00" + N.region_stream(_region(GOOD))

    def no_lane(data: bytes, start: int, *rest: Any) -> Any:
        return [], start, 0  # the decoder's lane declines: the region path decides

    _with_module(monkeypatch, _Wrapped(real, read_records_v2=off_by_one, decode_run=no_lane))
    with pytest.raises(N.DecodeDiffers, match="canonical JSON"):
        N.t_native(stream)


@needs_native
def test_a_wrong_batch_from_the_decoders_lane_is_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = N._module()

    def shifted(*args: Any) -> Any:
        batches, stop, need = real.decode_run(*args)
        for b in batches:
            b.header.base_offset += 1
        return batches, stop, need

    stream = b"\x00" + N.region_stream(_region(GOOD))
    _with_module(monkeypatch, _Wrapped(real, decode_run=shifted))
    with pytest.raises(N.DecodeDiffers, match="canonical JSON"):
        N.t_native(stream)


@needs_native
def test_accepting_what_the_reference_refuses_is_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = N._module()
    good = real.read_records_v2(b"".join(GOOD), 0, 2, 0, 0, None, 2)

    def accept_all(*args: Any) -> Any:
        return good

    _with_module(monkeypatch, _Wrapped(real, read_records_v2=accept_all))
    bad = _region([GOOD[0], b"\x7f\x00"])  # the second record runs past the end
    with pytest.raises(N.AcceptedRefused):
        N.t_native(N.write_region_input(bad))


@needs_native
def test_a_wrong_crc_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    real = N._module()
    _with_module(monkeypatch, _Wrapped(real, crc32c=lambda buf, start: 0))
    with pytest.raises(N.NativeDivergence, match="crc"):  # the decode sees it first
        N.t_native(b"\x00" + N.region_stream(_region(GOOD)))


class PanicException(BaseException):  # the name pyo3 gives its panics (a BaseException)
    pass


def _panicking(*args: Any) -> Any:
    raise PanicException("index out of bounds: the len is 3 but the index is 7")


@needs_native
def test_a_panic_is_a_crash_never_swallowed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_module(monkeypatch, _Wrapped(N._module(), read_records_v2=_panicking))
    data = N.write_region_input(_region(GOOD))
    with pytest.raises(N.NativePanic, match="PanicException: index out of bounds") as info:
        N.t_native(data)
    assert isinstance(info.value.__cause__, PanicException)
    assert "_panicking" in {f.name for f in info.traceback}  # the extension's own frames
    one, stats, _ = build("native", tmp_path, False)
    one(data)
    assert stats["crashes"] == 1
    [found] = fstore.read_findings(tmp_path, "native")
    assert found.kind == "crash" and "NativePanic" in found.signature


@needs_native
def test_a_panic_inside_a_decode_is_a_crash_too(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Wrapped(N._module(), read_records_v2=_panicking)
    _with_module(monkeypatch, fake)
    with pytest.raises(N.NativePanic):
        N.t_native(b"\x00" + N.region_stream(_region(GOOD)))


def test_without_the_extension_the_target_refuses_to_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(N, "_MODULE", None)
    monkeypatch.setattr(N, "_WHY", "kafka_conformance_native is not installed (test)")
    why = N.unavailable()
    assert why is not None and "scripts/build-native" in why and "not installed" in why
    with pytest.raises(N.NativeUnavailable, match="scripts/build-native"):
        N.t_native(b"\x00")
    with pytest.raises(SystemExit, match="cannot run.*not installed"):
        build("native", tmp_path, False)
    from conformance.fuzz.runner import run_target

    with pytest.raises(RuntimeError, match="fuzz native: cannot run"):
        run_target("native", seconds=5, out=tmp_path, progress=None)
    assert not (tmp_path / "corpus").exists()  # refused before anything was started


def test_the_cli_says_why_without_the_extension(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    program = (
        "import runpy, sys; sys.modules['kafka_conformance_native'] = None; "
        f"sys.argv = ['kafka-conformance', 'fuzz', 'native', '--time', '3', '--out', "
        f"{str(tmp_path)!r}]; runpy.run_module('conformance.cli', run_name='__main__')"
    )
    r = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2, r.stderr
    assert "scripts/build-native" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_mutator_keeps_both_forms_alive() -> None:
    m = Mutator("native", target="native")
    seeds = list(N.seeds())
    assert m(seeds[3], 16384, 7) == m(seeds[3], 16384, 7)
    forms = [0, 0]
    converted = 0
    for i in range(400):
        seed = seeds[i % len(seeds)]
        out = m(seed, 16384, i)
        assert len(out) <= 16384
        forms[out[0] & 1] += 1
        converted += (out[0] & 1) != (seed[0] & 1)
    assert min(forms) > 50 and converted > 0, (forms, converted)


@needs_native
def test_counters_reach_the_stats_file(tmp_path: Path) -> None:
    stats_path = tmp_path / "stats.json"
    one, _stats, _ = build("native", tmp_path / "findings", False, stats_path)
    one(N.write_region_input(_region(GOOD)))
    one.write_stats()  # type: ignore[attr-defined]
    doc = json.loads(stats_path.read_text())
    assert doc["execs"] == 1 and doc["counters"]["regions"] >= 1
    assert set(doc["counters"]) == set(N.COUNTERS)


@needs_native
def test_mutated_inputs_show_no_divergence() -> None:
    """A few hundred structure-aware mutations, uninstrumented: the comparison holds."""
    m = Mutator("native", target="native")
    rng = random.Random(5)
    pool = list(N.seeds())
    for i in range(300):
        out = m(pool[rng.randrange(len(pool))], 4096, i)
        _run(out)
        pool.append(out)


def test_docs_describe_the_target() -> None:
    text = (ROOT / "docs" / "fuzzing.md").read_text()
    assert "fuzz native" in text and "native_declined" in text and "build-native" in text


def test_the_random_differential_run_checks_both_outcomes() -> None:
    """``python -m conformance.fuzz.native_random``: a small run compares accepted regions
    and legacy payloads with the reference (both outcomes occur) and finds no difference."""
    pytest.importorskip("kafka_conformance_native")
    from conformance.fuzz import native_random

    counts = native_random.run(seed=7, start=0, count=3000)
    assert counts["inputs"] == 3000
    assert counts["native_accepted"] > 100 and counts["native_declined"] > 100
    assert counts["legacy_accepted"] > 50 and counts["legacy_declined"] > 50
    assert counts["rows_compared"] > 100
    native_random.replay_input(7, 11)  # one input rebuilt from its seed and index


def test_the_random_differential_run_reports_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("kafka_conformance_native")
    from conformance.fuzz import native, native_random

    def broken(*args: object, **kwargs: object) -> None:
        raise native.RowsDiffer("planted")

    monkeypatch.setattr(native, "_check_region", broken)
    monkeypatch.setattr(native_random, "_check_legacy", broken)
    with pytest.raises(RuntimeError, match="input 0 of seed 3: RowsDiffer: planted"):
        native_random.run(seed=3, start=0, count=5)
