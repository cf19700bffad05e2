"""The fast paths are held to the reference reader: the Python loop of
``conformance/wire/_record_fast.py`` and the native extension (``native/``, docs/native.md).

Every record stream of the kit's corpora is decoded with each fast path allowed and with the
fast path forced off (``conformance.wire.batch.FAST_PATH``), in both profiles, and the
canonical JSON (records, findings, error, tail) must be identical:

* ``corpora/crafted/*.bin`` in each mode it has expectations for;
* the golden corpora: every ``.log`` segment (file mode) and ``wire/*.bin`` fetch response
  (memory mode) under ``corpora/<broker>/``;
* ``corpora/regressions/<target>/*.bin`` and every ``fuzz/corpus/<target>/`` input of the
  record-stream targets, turned into the record stream the target decodes
  (``Target.wire_bytes``; batch, stream and legacy inputs are streams themselves), in the
  mode the differential fuzzer uses for it (``mode_of``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.fuzz.differential import mode_of
from conformance.fuzz.targets import CODEC_OF, DECOMPRESSED_LIMIT, get
from conformance.primitives import native
from conformance.stream import _run_fast
from conformance.stream.decoder import decode
from conformance.wire import _record_fast, batch

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "corpora"
STREAM_TARGETS = ("batch", "stream", "legacy", "headers", *CODEC_OF)

Case = tuple[str, bytes, str]  # (id, record stream, mode)


def _crafted() -> Iterator[Case]:
    for p in sorted((CORPORA / "crafted").glob("*.bin")):
        data = p.read_bytes()
        for mode in sorted({j.name.split(".")[-2] for j in p.parent.glob(f"{p.stem}.*.json")}):
            yield f"crafted/{p.stem}.{mode}", data, mode


def _golden() -> Iterator[Case]:
    for broker in sorted(CORPORA.iterdir()):
        if not broker.is_dir() or broker.name in ("crafted", "regressions", "samples"):
            continue
        for p in sorted(broker.glob("*/log/*/*.log")):
            yield str(p.relative_to(CORPORA)), p.read_bytes(), "file"
        for p in sorted(broker.glob("*/wire/*.bin")):
            yield str(p.relative_to(CORPORA)), p.read_bytes(), "memory"


def _fuzz_inputs() -> Iterator[Case]:
    dirs = [(f"regressions/{t}", CORPORA / "regressions" / t) for t in STREAM_TARGETS]
    dirs += [(f"fuzz/{t}", ROOT / "fuzz" / "corpus" / t) for t in STREAM_TARGETS]
    for label, d in dirs:
        target = get(label.split("/")[1])
        for p in sorted(d.glob("*")):
            if not p.is_file() or p.suffix in (".json", ".md"):
                continue
            wire = target.wire_bytes(p.read_bytes())
            assert wire is not None, f"{label} is a record-stream target"
            yield f"{label}/{p.name}", wire, mode_of(wire)


def _cases() -> list[Case]:
    return [*_crafted(), *_golden(), *_fuzz_inputs()]


CASES = _cases()


def _verdict(data: bytes, mode: str, profile: str) -> dict[str, object]:
    return decode(
        data,
        mode=mode,
        profile=profile,
        decompressed_limit=DECOMPRESSED_LIMIT,  # type: ignore[arg-type]
    ).to_dict()


def test_the_corpora_are_there() -> None:
    kinds = {case_id.split("/")[0] for case_id, _, _ in CASES}
    assert {"crafted", "regressions", "fuzz"} <= kinds
    assert len(kinds) >= 6, kinds  # crafted, regressions, fuzz and the golden brokers
    assert len(CASES) > 3000


#: the fast paths: the native extension (when installed) and the Python loop
PATHS = ["native", "pure"]


def _use(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "native":
        module = native.NATIVE or _loaded_native()
        monkeypatch.setattr(native, "NATIVE", module)
    else:
        monkeypatch.setattr(native, "NATIVE", None)


def _loaded_native() -> object:
    try:
        import kafka_conformance_native as module
    except ImportError:
        pytest.skip("the native extension is not installed (scripts/build-native)")
    return module


@pytest.mark.parametrize("path", PATHS)
def test_fast_path_is_taken_and_declines(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpora exercise both outcomes of the fast path (else the comparison is hollow).
    Counted without the decoder's native lane, which decides whole batches before this path
    is asked (its own counts: tests/test_run_fast.py)."""
    _use(path, monkeypatch)
    monkeypatch.setattr(_run_fast, "available", lambda data, profile: False)
    calls = {"accepted": 0, "declined": 0}
    real = _record_fast.read_records_fast

    def counting(*args: object) -> object:
        result = real(*args)  # type: ignore[arg-type]
        calls["accepted" if result else "declined"] += 1
        return result

    monkeypatch.setattr(batch, "read_records_fast", counting)
    for _, data, mode in CASES[:: max(1, len(CASES) // 600)]:
        _verdict(data, mode, "kafka")
    assert calls["accepted"] > 50 and calls["declined"] > 50, calls


@pytest.mark.parametrize("path", PATHS)
def test_fast_path_equals_reference(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One test over all inputs (thousands of them: per-input parametrisation costs more than
    the decoding); the first differences are reported with their input ids."""
    _use(path, monkeypatch)
    assert batch.FAST_PATH is True
    diffs: list[str] = []
    for case_id, data, mode in CASES:
        for profile in ("kafka", "strict"):
            monkeypatch.setattr(batch, "FAST_PATH", True)
            fast = _verdict(data, mode, profile)
            monkeypatch.setattr(batch, "FAST_PATH", False)
            reference = _verdict(data, mode, profile)
            if fast != reference:
                diffs.append(f"{case_id} [{mode}, {profile}]")
    assert not diffs, f"{len(diffs)} verdicts differ, e.g. {diffs[:10]}"
