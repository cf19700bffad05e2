"""``kafka-conformance synth`` (``conformance.corpus.synth``): synthetic log directories with
planted corruptions.

Expectations come from the kit's own readers, never from the generator: the decoder
(``StreamDecoder`` over ``FileSource``, file semantics) for what the ``.log`` files hold and
where they break, ``verify-dir`` for the broker files around them, and a byte comparison
with the same corpus generated without corruptions (planting never changes what is written
before it) for what was changed."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.cli.common import byte_size
from conformance.codecs import CODECS
from conformance.corpus.synth import KINDS, synthesize
from conformance.fileio import FileSource
from conformance.logdir.verify import verify_dir
from conformance.stream.decoder import StreamDecoder
from conformance.wire.batch import RecordBatchV2
from conformance.wire.control import ABORT, COMMIT, read_control_key

SIZE = 2_000_000
SEED = 5
CORRUPT = 8


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "clean"
    synthesize(out, SIZE, seed=SEED)
    return out


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "damaged"
    synthesize(out, SIZE, corrupt=CORRUPT, seed=SEED)
    return out


@pytest.fixture(scope="module", params=["spread", "crowded"])
def pair(
    request: pytest.FixtureRequest,
    clean: Path,
    damaged: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path]:
    """(the corpus without corruptions, the same corpus with them): one corruption per file,
    or more corruptions than files (several in a file)."""
    if request.param == "spread":
        return clean, damaged
    d = tmp_path_factory.mktemp("crowded")
    synthesize(d / "clean", 1_500_000, seed=8)
    synthesize(d / "damaged", 1_500_000, corrupt=30, seed=8)
    return d / "clean", d / "damaged"


def _logs(root: Path) -> list[Path]:
    return sorted(root.rglob("*.log"))


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _decode(path: Path, start: int = 0, end: int | None = None) -> tuple[StreamDecoder, list[Any]]:
    """The decoder's walk over ``path[start:end]`` (file semantics) and its batches."""
    with FileSource(path, start=start, end=end) as source:
        decoder = StreamDecoder(source, mode="file", keep=1)
        batches = list(decoder)
    return decoder, batches


def _planted(root: Path) -> dict[str, Any]:
    return json.loads((root / "planted.json").read_text())  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- byte_size


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4096", 4096),
        ("1GB", 10**9),
        ("1gb", 10**9),
        ("64MiB", 64 << 20),
        ("1.5GB", 1_500_000_000),
        ("2K", 2000),
        ("3 KiB", 3072),
        ("7B", 7),
        ("0.5kib", 512),
        ("1TB", 10**12),
        ("1TiB", 1 << 40),
        ("10m", 10**7),
        ("2G", 2 * 10**9),
        ("1GiB", 1 << 30),
    ],
)
def test_byte_size_accepts(text: str, value: int) -> None:
    assert byte_size(text) == value


@pytest.mark.parametrize(
    "text",
    ["0", "0GB", "abc", "-1GB", "-5", "", "1.5", "1.5B", "1XB", "1e9", "GB", "0.0001KB", "1 G B"],
)
def test_byte_size_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        byte_size(text)


# --------------------------------------------------------------------------- the corpus


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    a = synthesize(tmp_path / "a", 600_000, corrupt=4, seed=3)
    synthesize(tmp_path / "b", 600_000, corrupt=4, seed=3)
    synthesize(tmp_path / "c", 600_000, corrupt=4, seed=4)
    tree_a = _tree(tmp_path / "a")
    assert tree_a == _tree(tmp_path / "b")
    assert len(a.planted) == 4
    tree_c = _tree(tmp_path / "c")
    logs_a = {k: v for k, v in tree_a.items() if k.endswith(".log")}
    logs_c = {k: v for k, v in tree_c.items() if k.endswith(".log")}
    assert logs_a != logs_c
    assert tree_a["planted.json"] != tree_c["planted.json"]


@pytest.mark.parametrize("size", [300_000, 5_000_000])
def test_log_bytes_total_about_the_requested_size(tmp_path: Path, size: int) -> None:
    report = synthesize(tmp_path / "c", size, seed=1)
    total = sum(p.stat().st_size for p in _logs(tmp_path / "c"))
    assert abs(total - size) <= 0.03 * size
    assert report.total_bytes == total


def test_clean_corpus_decodes_and_is_realistic(clean: Path) -> None:
    total = sum(p.stat().st_size for p in _logs(clean))
    assert abs(total - SIZE) <= 0.03 * SIZE
    seen: dict[str, set[Any]] = defaultdict(set)
    segments: dict[str, int] = defaultdict(int)
    gaps = 0
    for part in sorted(p for p in clean.iterdir() if p.is_dir()):
        previous_last: int | None = None
        previous_ts = -1
        for log in _logs(part):
            segments[part.name] += 1
            decoder, batches = _decode(log)
            assert decoder.outcome == "ok" and decoder.tail is None, (log, decoder.error)
            assert batches, log
            for b in batches:
                h = b.header
                seen["magic"].add(h.magic)
                seen["codec"].add((h.magic, h.compression_id))
                count = b.records.total
                first = (
                    h.base_offset
                    if isinstance(h, RecordBatchV2)
                    else (h.last_offset if h.compression_id == 0 else b.records[0].offset)
                )
                if previous_last is not None:
                    assert first > previous_last
                    gaps += first > previous_last + 1
                previous_last = h.last_offset
                if isinstance(h, RecordBatchV2):
                    assert h.max_timestamp >= previous_ts  # timestamps increase
                    previous_ts = h.max_timestamp
                    if h.is_control:
                        seen["control"].add(read_control_key(b.records[0].key))
                        continue
                    assert 1 <= count <= 500
                    seen["producer"].add(
                        "transactional"
                        if h.is_transactional
                        else "idempotent"
                        if h.producer_id >= 0
                        else "plain"
                    )
                    record = b.records[0]
                    seen["headers"].add(bool(record.headers))
                    seen["null key"].add(record.key is None)
                else:
                    assert 1 <= count <= 500
    assert len(segments) >= 2 and all(n >= 2 for n in segments.values()), segments
    assert {p.split("-")[0] for p in segments} == {"orders", "events"}
    assert seen["magic"] == {0, 1, 2}
    assert {(2, c) for c in CODECS} <= seen["codec"]  # every codec
    assert {(m, c) for m in (0, 1) for c in range(4)} & seen["codec"]
    assert seen["control"] == {COMMIT, ABORT}
    assert seen["producer"] == {"plain", "idempotent", "transactional"}
    assert seen["headers"] == {True, False}
    assert True in seen["null key"]
    assert gaps > 0


def test_clean_corpus_passes_verify_dir(clean: Path) -> None:
    """Indexes, transaction indexes, snapshots, checkpoints and offset gaps are what a broker
    leaves: verify-dir finds nothing but planted.json, which Kafka would not expect there."""
    report = verify_dir(clean)
    assert [(Path(f.file).name, f.code) for f in report.findings] == [
        ("planted.json", "unexpected-file")
    ]
    assert report.segments == len(_logs(clean))


# --------------------------------------------------------------------------- planting


def test_planted_json(pair: tuple[Path, Path]) -> None:
    damaged = pair[1]
    doc = _planted(damaged)
    assert doc["format"] == "kafka-conformance/synth-1"
    if damaged.name == "damaged" and doc["seed"] == SEED:
        assert (doc["size"], doc["corrupt"]) == (SIZE, CORRUPT)
    assert [f["path"] for f in doc["files"]] == [
        p.relative_to(damaged).as_posix() for p in _logs(damaged)
    ]
    for f in doc["files"]:
        assert f["size"] == (damaged / f["path"]).stat().st_size
    planted = doc["planted"]
    assert len(planted) == doc["corrupt"]
    assert {p["kind"] for p in planted} == set(KINDS)
    assert planted == sorted(planted, key=lambda p: (p["file"], p["position"]))
    per_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in planted:
        per_file[p["file"]].append(p)
        assert p["expect"] == ("partial" if p["kind"] == "torn-tail" else "corrupt")
        assert p["byte_start"] < p["byte_end"] and p["detail"]
    for entries in per_file.values():
        kinds = [p["kind"] for p in entries]
        assert len(kinds) <= 3 and kinds.count("torn-tail") <= 1
        assert "torn-tail" not in kinds[:-1]  # a torn tail is the last thing in its file
    if len(planted) <= len(doc["files"]):
        assert max(len(e) for e in per_file.values()) == 1  # spread over the files first
    else:
        assert max(len(e) for e in per_file.values()) >= 2
    text = (damaged / "planted.json").read_text()
    assert text == json.dumps(doc, sort_keys=True, indent=2) + "\n"


def test_planted_positions_are_batch_starts_of_the_original_files(pair: tuple[Path, Path]) -> None:
    clean, damaged = pair
    doc = _planted(damaged)
    batches = {f["path"]: f["batches"] for f in doc["files"]}
    for log in _logs(clean):
        name = log.relative_to(clean).as_posix()
        _, decoded = _decode(log)
        assert len(decoded) == batches[name]
    for p in doc["planted"]:
        _, decoded = _decode(clean / p["file"])
        starts = [b.header.position for b in decoded]
        assert p["position"] in starts[1:], p  # a batch start, never the first batch
        if p["kind"] == "torn-tail":
            assert p["resume"] is None
        else:
            assert p["resume"] in starts and p["resume"] > p["position"], p
            # the damaged bytes lie in [position, resume): the batch at resume is intact
            assert p["position"] <= p["byte_start"] and p["byte_end"] <= p["resume"], p


def test_only_the_recorded_bytes_changed(pair: tuple[Path, Path]) -> None:
    clean, damaged = pair
    doc = _planted(damaged)
    per_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in doc["planted"]:
        per_file[p["file"]].append(p)
    for log in _logs(clean):
        name = log.relative_to(clean).as_posix()
        before, after = log.read_bytes(), (damaged / name).read_bytes()
        entries = per_file.get(name, [])
        torn = [p for p in entries if p["kind"] == "torn-tail"]
        if torn:
            assert len(after) == torn[0]["byte_start"] and torn[0]["byte_end"] == len(before)
        else:
            assert len(after) == len(before)
        changed = [i for i, (x, y) in enumerate(zip(before, after)) if x != y]
        ranges = [(p["byte_start"], p["byte_end"]) for p in entries if p["kind"] != "torn-tail"]
        assert all(any(s <= i < e for s, e in ranges) for i in changed), name
        for p in entries:
            inside = [i for i in changed if p["byte_start"] <= i < p["byte_end"]]
            if p["kind"] == "bitflip":
                assert len(inside) == 1
                assert (before[inside[0]] ^ after[inside[0]]).bit_count() == 1
                first = 21 if before[p["position"] + 16] == 2 else 17  # CRC-covered bytes
                assert inside[0] - p["position"] >= first
            elif p["kind"] == "bad-length":
                assert (p["byte_start"], p["byte_end"]) == (p["position"] + 8, p["position"] + 12)
                assert inside
            elif p["kind"] == "zero-fill":
                assert inside[0] == p["byte_start"] and inside[-1] == p["byte_end"] - 1
                assert not any(after[p["byte_start"] : p["byte_end"]])
    assert set(_tree(clean)) == set(_tree(damaged))


def test_the_decoder_flags_each_planted_position(pair: tuple[Path, Path]) -> None:
    """Each file decodes cleanly up to its first planted position, fails or stops exactly at
    each one, and decodes cleanly again from its resume position up to the next one."""
    damaged = pair[1]
    doc = _planted(damaged)
    per_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in doc["planted"]:
        per_file[p["file"]].append(p)
    for name, entries in per_file.items():
        path = damaged / name
        start = 0
        for p in entries:
            decoder, _ = _decode(path, start, p["position"])
            assert decoder.outcome == "ok" and decoder.tail is None, (p, decoder.error)
            decoder, decoded = _decode(path, p["position"])
            if decoder.outcome == "error":
                assert decoder.error is not None and decoder.error.position == 0, p
            else:  # the reader stops at the damaged batch: it does not end inside the file
                assert decoder.outcome == "partial" and not decoded, p
                assert decoder.tail is not None and decoder.tail.position == 0
            if p["kind"] == "torn-tail":
                assert decoder.outcome == "partial"
                break
            start = p["resume"]
        else:
            decoder, decoded = _decode(path, start)  # intact batches follow the last one
            assert decoder.outcome == "ok" and decoder.tail is None and decoded
    for name in {f["path"] for f in doc["files"]} - set(per_file):
        decoder, _ = _decode(damaged / name)
        assert decoder.outcome == "ok" and decoder.tail is None


def test_every_kind_with_four(tmp_path: Path) -> None:
    report = synthesize(tmp_path / "c", 1_000_000, corrupt=4, seed=9)
    assert sorted(p.kind for p in report.planted) == sorted(KINDS)


def test_too_many_corruptions_for_the_corpus(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="too small"):
        synthesize(tmp_path / "c", 200_000, corrupt=200)
    assert not (tmp_path / "c").exists()  # what was written is removed


def test_refuses_a_non_empty_out(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        synthesize(tmp_path, 100_000)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    synthesize(empty, 100_000)  # an existing empty directory is fine
    assert (empty / "planted.json").is_file()


# --------------------------------------------------------------------------- command line


def test_cli_writes_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "corpus"
    assert main(["synth", "--size", "1MB", "--out", str(out), "--corrupt", "4", "--seed", "2"]) == 0
    captured = capsys.readouterr()
    doc = _planted(out)
    assert doc["size"] == 1_000_000 and doc["seed"] == 2 and len(doc["planted"]) == 4
    assert "planted 4 corruptions" in captured.out
    for p in doc["planted"]:
        assert f"{p['file']} @{p['position']}" in captured.out
    assert "100%" in captured.err  # progress (not a terminal: a line every 10%)


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").write_text("x")
    assert main(["synth", "--size", "100KB", "--out", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (
        main(["synth", "--size", "100KB", "--out", str(tmp_path / "small"), "--corrupt", "500"])
        == 2
    )
    assert "too small" in capsys.readouterr().err
    for bad in (["--size", "abc"], ["--size", "0"], ["--size", "1MB", "--corrupt", "-1"]):
        with pytest.raises(SystemExit) as e:
            main(["synth", *bad, "--out", str(tmp_path / "y")])
        assert e.value.code == 2


def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["synth", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "examples:" in out and "--corrupt" in out
