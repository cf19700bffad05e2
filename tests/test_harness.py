"""`kafka-conformance check`: cases, comparison rules, the runner against hostile adapters,
reports, and the Java adapter (Kafka's own classes) passing every case."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, processes, wait_until_gone

from conformance.harness import cases as C
from conformance.harness.judge import (
    CONSUME,
    DECODE,
    PARTIES,
    Capabilities,
    CapabilityError,
    judge,
    read_capabilities,
    unsupported_reason,
)
from conformance.harness.report import markdown, model
from conformance.harness.runner import select
from conformance.stream.compare import pair

CLI = [sys.executable, "-m", "conformance.cli"]
BROKEN = [sys.executable, str(ROOT / "tests" / "adapters" / "broken.py")]
REFERENCE = [sys.executable, str(ROOT / "tests" / "adapters" / "reference.py")]
MARK = ("kafka-conformance-broken-adapter", "tests/adapters/")
FEW = [
    "crafted/v2-appendix-a1@memory",
    "crafted/v2-empty-batch@memory",
    "crafted/legacy-v1-gzip-wrapper@memory",
    "crafted/split-tail-00@file",
]


def _check(*args: str, timeout: float = 600) -> tuple[int, str, str]:
    proc = subprocess.run(
        [*CLI, "check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )
    return proc.returncode, proc.stdout, proc.stderr


def _cases(*ids: str) -> list[str]:
    return [arg for i in ids for arg in ("--cases", i)]


def _report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _wait_no_adapter_left() -> dict[int, str]:
    return wait_until_gone(MARK)


# ------------------------------------------------------------------------------------------
# cases


def test_cases_cover_the_corpora() -> None:
    every = C.read_cases()
    ids = [c.id for c in every]
    assert len(ids) == len(set(ids))
    crafted = json.loads((ROOT / "corpora/crafted/manifest.json").read_text())["cases"]
    golden = list((ROOT / "corpora").glob("kafka-*/*/expected/**/*.decode.json"))
    regressions = [
        p
        for p in (ROOT / "corpora/regressions/stream").glob("*.json")
        if "expected" in json.loads(p.read_text())
    ]
    assert len(ids) == sum(len(c["modes"]) for c in crafted) + len(golden) + len(regressions)
    assert {c.group for c in every} >= {
        "crafted/v2",
        "crafted/legacy",
        "kafka-3.9.2-kraft",
        "regressions",
    }
    assert select(every, ["crafted/v2-*"]) and all(
        c.id.startswith("crafted/v2-") for c in select(every, ["crafted/v2-*"])
    )


def test_stream_regressions_are_record_streams() -> None:
    """Only the `stream` target's inputs are record streams as they are (the others are
    wrapped by their target before the oracle saw them)."""
    from conformance.fuzz.targets import get

    for case in C.read_cases():
        if case.group == "regressions":
            assert get("stream").wire_bytes(case.data()) == case.data()


def _case(case_id: str) -> C.Case:
    return next(c for c in C.read_cases() if c.id == case_id)


def test_features_and_unsupported_reasons() -> None:
    legacy = _case("crafted/legacy-v1-gzip-wrapper@memory")
    f = C.case_features(legacy, legacy.data(), legacy.expected())
    assert f.magics == {1} and "gzip" in f.codecs
    v2only = Capabilities(name="x", magics=frozenset({2}))
    assert unsupported_reason(f, "memory", v2only) == "magic 1 not supported"
    assert (
        unsupported_reason(f, "memory", Capabilities(name="x", codecs=frozenset({"none"})))
        == "codec gzip not supported"
    )
    crc = next(
        c
        for c in C.read_cases()
        if c.id.startswith("crafted/v2-crc")
        and "stored crc" in ((c.expected().get("error") or {}).get("message") or "")
    )
    fc = C.case_features(crc, crc.data(), crc.expected())
    assert fc.crc_error
    assert "checksum" in unsupported_reason(fc, crc.mode, Capabilities(name="x", checks_crc=False))
    assert unsupported_reason(fc, crc.mode, Capabilities(name="x")) is None
    # file semantics: a file case whose memory verdict differs needs them
    tail = _case("crafted/split-zero-tail-12@file")
    ft = C.case_features(tail, tail.data(), tail.expected())
    assert ft.same_in_memory is False
    assert "file semantics" in unsupported_reason(
        ft, "file", Capabilities(name="x", file_semantics=False)
    )


def test_capabilities_parsing() -> None:
    assert not read_capabilities(None, "a").declared
    assert not read_capabilities("not json", "a").declared
    caps = read_capabilities(
        json.dumps(
            {
                "name": "n",
                "magics": [2],
                "checks_crc": False,
                "error_semantics": "eager",
                "omits": ["crc"],
            }
        ),
        "a",
    )
    assert (caps.name, caps.magics, caps.checks_crc, caps.error_semantics, caps.omits) == (
        "n",
        {2},
        False,
        "eager",
        {"crc"},
    )
    for bad in (
        {"magics": [3]},
        {"codecs": ["brotli"]},
        {"error_semantics": "lazy"},
        {"error_classes": "some"},
        {"checks_crc": "yes"},
    ):
        with pytest.raises(CapabilityError):
            read_capabilities(json.dumps(bad), "a")


def test_capability_sides_and_unknown_keys() -> None:
    """Each side reads the keys that mean something there; an unknown key is an error on
    both sides (a typo does not silently leave a default), a decode-only key declared for
    the consumer too, and the ``consume`` object is the consumer's document."""
    both = {
        "name": "lib",
        "file_semantics": False,
        "persistent": True,
        "omits": ["crc"],
        "produce": {"codecs": ["none"]},
        "consume": {"name": "lib-consumer", "checks_crc": False, "omits": ["timestampType"]},
    }
    decode_side = read_capabilities(json.dumps(both), "a", DECODE)
    assert (decode_side.name, decode_side.omits, decode_side.persistent) == ("lib", {"crc"}, True)
    consume_side = read_capabilities(json.dumps(both), "a", CONSUME)
    assert (consume_side.name, consume_side.checks_crc, consume_side.omits) == (
        "lib-consumer",
        False,
        {"timestampType"},
    )
    assert consume_side.side == CONSUME and decode_side.side == DECODE
    for doc, problem in (
        ({"name": "x", "omit": ["crc"]}, "unknown key 'omit'"),
        ({"consume": {"check_crc": False}}, "unknown key 'consume.check_crc'"),
        ({"consume": {"produce": {}}}, "unknown key 'consume.produce'"),
        ({"consume": ["timestampType"]}, "'consume' must be an object"),
    ):
        for side in (DECODE, CONSUME):
            with pytest.raises(CapabilityError, match=re.escape(problem)) as raised:
                read_capabilities(json.dumps(doc), "a", side)
            assert str(raised.value).startswith("capabilities: ")
            if "unknown" in problem:
                assert "known" in str(raised.value).split(problem)[1]  # lists the keys
    # decode-only keys: refused on the consume side, at the top level or in `consume`
    for doc in ({"persistent": True}, {"consume": {"lists_failing_batch": False}}):
        with pytest.raises(CapabilityError, match="no meaning on the consume side"):
            read_capabilities(json.dumps(doc), "a", CONSUME)
    assert read_capabilities(json.dumps({"persistent": True}), "a", DECODE).persistent
    # omits name the keys of the side: a delivered record's on the consume side
    with pytest.raises(CapabilityError, match="no key of a delivered record: crc"):
        read_capabilities(json.dumps({"omits": ["crc"]}), "a", CONSUME)
    with pytest.raises(CapabilityError, match="no batch or record key: timestampTyp"):
        read_capabilities(json.dumps({"omits": ["timestampTyp"]}), "a", DECODE)
    by_magic = read_capabilities(json.dumps({"omits": {"0": ["timestampType"]}}), "a", CONSUME)
    assert by_magic.omitted(0) == {"timestampType"} and by_magic.omitted(2) == frozenset()
    # the name a refused document declares is kept for the report
    with pytest.raises(CapabilityError) as raised:
        read_capabilities(json.dumps({"name": "mine", "typo": 1}), "a", DECODE)
    assert raised.value.name == "mine"


def test_invalid_capabilities_make_every_case_an_error(tmp_path: Path) -> None:
    """A capability error is a verdict: every case of that implementation is an ``error``
    with the reason ``capabilities: ...``; the other implementations run as usual."""
    script = tmp_path / "typo.py"
    script.write_text(
        "import json, sys\n"
        "if sys.argv[1] == 'capabilities':\n"
        "    print(json.dumps({'name': 'typo', 'omit': ['crc']}))\n"
        "else:\n"
        "    raise SystemExit('never asked to decode')\n"
    )
    out = tmp_path / "r.json"
    code, stdout, stderr = _check(
        "--cmd",
        f"{sys.executable} {script}",
        "--cmd",
        " ".join(REFERENCE),
        *_cases(*FEW),
        "--json",
        str(out),
        "-q",
    )
    report = _report(out)
    assert code == 1, stdout + stderr
    by_impl: dict[str, list[dict[str, Any]]] = {}
    for r in report["results"]:
        by_impl.setdefault(r["impl"], []).append(r)
    refused = by_impl["typo"]
    assert len(refused) == len(FEW)
    assert all(r["status"] == "error" for r in refused)
    assert all(r["reason"].startswith("capabilities: unknown key 'omit'") for r in refused)
    assert all(r["status"] == "pass" for r in by_impl["reference.py"])
    impl = next(i for i in report["implementations"] if i["name"] == "typo")
    assert "unknown key 'omit'" in impl["capabilities_problem"]


def test_long_values_are_shown_where_they_differ() -> None:
    """Two long values that differ after the first 120 characters do not print alike: both
    are shown around their first difference, with their lengths."""
    kafka, adapter = "A" * 200 + "B" + "C" * 99, "A" * 200 + "X" + "C" * 99
    line = pair(kafka, adapter, PARTIES)
    shown_kafka, shown_adapter = line.split(" adapter=")
    assert shown_kafka.removeprefix("kafka=") != shown_adapter
    assert "AB" in shown_kafka and "AX" in shown_adapter and "302 chars" in line
    assert shown_kafka.startswith("kafka=…")
    # a difference the plain cut shows keeps the plain cut
    early = pair("B" + "A" * 200, "X" + "A" * 200, PARTIES)
    assert early.startswith('kafka="BAAA') and "… (203 chars)" in early
    # on the decode side, in a record value of Kafka's document
    exp = _expected("crafted/v2-appendix-a1@memory")
    exp = copy.deepcopy(exp)
    exp["batches"][0]["records"][0]["value"] = "QUFB" * 60
    act = copy.deepcopy(exp)
    act["batches"][0]["records"][0]["value"] = "QUFB" * 59 + "QUFC"
    v = judge(exp, act, Capabilities(name="x"), "memory")
    assert v.status == "fail" and 'QUFB"' in v.diff[0] and 'QUFC"' in v.diff[0]


# ------------------------------------------------------------------------------------------
# comparison rules (actual documents are Kafka's with one deliberate change)


def _expected(case_id: str) -> dict[str, Any]:
    return _case(case_id).expected()


def test_judge_rules() -> None:
    exp = _expected("crafted/v2-appendix-a1@memory")
    caps = Capabilities(name="x")
    assert judge(exp, copy.deepcopy(exp), caps, "memory").status == "pass"
    act = copy.deepcopy(exp)
    act["batches"][0]["records"][0]["value"] = "AA=="
    v = judge(exp, act, caps, "memory")
    value = exp["batches"][0]["records"][0]["value"]
    assert v.status == "fail" and v.diff == [
        f'$.batches[0].records[0].value: kafka="{value}" adapter="AA=="'
    ]
    # an undeclared missing key fails; a declared one is not compared
    act = copy.deepcopy(exp)
    del act["batches"][0]["partitionLeaderEpoch"]
    assert judge(exp, act, caps, "memory").status == "fail"
    assert (
        judge(
            exp, act, Capabilities(name="x", omits=frozenset({"partitionLeaderEpoch"})), "memory"
        ).status
        == "pass"
    )
    assert judge(exp, {"format": "other"}, caps, "memory").status == "error"


def _compressed_error_case() -> dict[str, Any]:
    for case in C.read_cases():
        e = case.expected()
        if e["outcome"] == "error" and case.mode == "memory":
            i = e["error"]["batch_index"]
            if (
                i < len(e["batches"])
                and e["batches"][i]["compression"] != "none"
                and len(e["batches"][i]["records"]) >= 2
            ):
                return e
    raise AssertionError("no compressed batch that fails after records")


def test_error_semantics_and_classes() -> None:
    exp = _compressed_error_case()
    i = exp["error"]["batch_index"]
    fewer = copy.deepcopy(exp)
    fewer["batches"][i]["records"] = fewer["batches"][i]["records"][:1]
    assert judge(exp, fewer, Capabilities(name="x"), "memory").status == "fail"
    assert (
        judge(exp, fewer, Capabilities(name="x", error_semantics="eager"), "memory").status
        == "pass"
    )
    wrong = copy.deepcopy(fewer)
    wrong["batches"][i]["records"][0]["offset"] = "999"
    assert (
        judge(exp, wrong, Capabilities(name="x", error_semantics="eager"), "memory").status
        == "fail"
    )
    other = copy.deepcopy(exp)
    other["error"] = {
        **exp["error"],
        "kafka_exception": "java.lang.IllegalStateException",
        "message": "mine",
    }
    assert (
        judge(exp, other, Capabilities(name="x", error_classes="none"), "memory").status == "pass"
    )
    assert (
        judge(exp, other, Capabilities(name="x", error_classes="class"), "memory").status == "fail"
    )
    assert (
        judge(exp, other, Capabilities(name="x", error_classes="family"), "memory").status == "fail"
    )
    moved = copy.deepcopy(exp)
    moved["error"]["position"] += 1
    assert judge(exp, moved, Capabilities(name="x"), "memory").status == "fail"


# ------------------------------------------------------------------------------------------
# the runner with real adapter processes


def test_five_line_adapter_uses_the_defaults(tmp_path: Path) -> None:
    """tests/adapters/reference.py has no `capabilities`: the defaults apply and the kit's
    reference decoder, an adapter like any other, passes."""
    out = tmp_path / "r.json"
    code, stdout, _ = _check(
        "--cmd",
        " ".join(REFERENCE),
        *_cases("crafted/v2-*", "crafted/split-*@file"),
        "--json",
        str(out),
        "-q",
    )
    report = _report(out)
    (impl,) = report["implementations"]
    assert code == 0, stdout
    assert impl["name"] == "reference.py" and impl["capabilities_problem"]
    assert impl["counts"]["pass"] == len(report["results"]) > 60


@pytest.mark.parametrize(
    "behaviour,reason",
    [
        ("hang", "timeout: no result after 2 s"),
        ("crash", "killed by signal SIGSEGV"),
        ("exit3", "exit code 3"),
        ("flood", "output over the 1048576-byte limit"),
        ("garbage", "invalid JSON"),
        ("wrong", "invalid document"),
        ("serve-huge", "over the 1048576-byte limit"),
    ],
)
def test_broken_adapter_gets_an_error_verdict(tmp_path: Path, behaviour: str, reason: str) -> None:
    out = tmp_path / "r.json"
    started = time.monotonic()
    code, stdout, stderr = _check(
        "--cmd",
        " ".join([*BROKEN, behaviour]),
        *_cases(*FEW),
        "--timeout",
        "2",
        "--output-limit",
        "1MiB",
        "--json",
        str(out),
        "-q",
    )
    report = _report(out)
    assert code == 1, stderr
    assert [r["status"] for r in report["results"]] == ["error"] * len(FEW)
    assert all(reason in r["reason"] for r in report["results"]), report["results"][0]["reason"]
    assert time.monotonic() - started < 60
    assert _wait_no_adapter_left() == {}


def test_a_run_survives_broken_adapters_and_still_makes_a_matrix(tmp_path: Path) -> None:
    """Hang, crash, flood, a persistent server that hangs on its third request, a 100 MiB
    stderr flood, and a good adapter, in one run: every one gets its verdicts, the good one
    passes everything, the reports are written, and no adapter process is left."""
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "junit", "html", "markdown")}
    cases = ["crafted/v2-[a-d]*", "crafted/legacy-v1-[a-c]*"]
    adapters = ["hang", "crash", "flood", "serve-hang", "stderr-flood", "serve-ok"]
    args = [a for b in adapters for a in ("--cmd", " ".join([*BROKEN, b]))]
    for k, p in paths.items():
        args += [f"--{k}", str(p)]
    code, stdout, stderr = _check(
        *args,
        *_cases(*cases),
        "--timeout",
        "2",
        "--output-limit",
        "1MiB",
        "--jobs",
        "4",
        "-q",
        timeout=900,
    )
    assert code == 1
    report = _report(paths["json"])
    counts = {i["name"]: i["counts"] for i in report["implementations"]}
    n = len(report["cases"])
    assert (
        counts["broken-hang"]["error"]
        == counts["broken-crash"]["error"]
        == counts["broken-flood"]["error"]
        == n
    )
    assert counts["broken-serve-ok"]["pass"] == counts["broken-stderr-flood"]["pass"] == n
    hung = [
        r for r in report["results"] if r["impl"] == "broken-serve-hang" and r["status"] == "error"
    ]
    assert hung and all("timeout: no response" in r["reason"] for r in hung)
    assert counts["broken-serve-hang"]["pass"] > n / 2  # restarted after each hang
    suites = ET.parse(paths["junit"]).getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == [f"broken-{a}" for a in adapters]
    assert all(int(s.get("tests")) == n for s in suites)
    assert (
        "broken-hang" in paths["html"].read_text() and "| group |" in paths["markdown"].read_text()
    )
    assert _wait_no_adapter_left() == {}


@pytest.mark.parametrize(
    "sig, code",
    [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_interrupt_stops_every_adapter(tmp_path: Path, sig: int, code: int) -> None:
    proc = subprocess.Popen(
        [
            *CLI,
            "check",
            "--cmd",
            " ".join([*BROKEN, "hang"]),
            "--jobs",
            "2",
            "--timeout",
            "600",
            "-q",
            *_cases("crafted/v2-*"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(processes(MARK)) < 4 and time.monotonic() < deadline:  # 2 adapters + 2 children
            time.sleep(0.2)
        assert len(processes(MARK)) >= 4
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert "interrupted" in err or sig == signal.SIGTERM
    assert _wait_no_adapter_left() == {}


def test_usage_errors() -> None:
    assert _check()[0] == 2
    assert _check("--impl", "no-such-decoder")[0] == 2
    assert _check("--cmd", " ".join(REFERENCE), "--cases", "nothing/matches")[0] == 2
    code, stdout, _ = _check("--list")
    assert code == 0 and "java" in stdout and "org.apache.kafka:kafka-clients" in stdout


# ------------------------------------------------------------------------------------------
# the reference: Kafka's own classes


@pytest.mark.oracle
def test_java_adapter_passes_every_case(tmp_path: Path) -> None:
    out = tmp_path / "java.json"
    code, stdout, stderr = _check("--impl", "java", "--json", str(out), "-q")
    assert code == 0, stdout + stderr
    report = _report(out)
    (impl,) = report["implementations"]
    assert impl["capabilities"]["error_classes"] == "exact" and impl["capabilities"]["persistent"]
    assert impl["counts"] == {"pass": len(C.read_cases()), "fail": 0, "unsupported": 0, "error": 0}
    assert report["complete"]


@pytest.mark.oracle
def test_golden_logs_read_the_same_in_memory_mode() -> None:
    """cases.case_features relies on it where the corpus has no memory-mode verdict (the golden
    logs): those Kafka reads whole (outcome ok) in file mode get the same document in memory
    mode, as the oracle shows. (Not true of every input: a crafted batch of magic 3 is `ok` in
    file mode and an error in memory mode; crafted cases carry both verdicts.)"""
    from conformance.jvm.oracle import OracleServer

    logs = [
        c
        for c in C.read_cases()
        if c.mode == "file" and c.other_mode_path is None and c.expected()["outcome"] == "ok"
    ]
    assert len(logs) > 300
    with OracleServer() as oracle:
        for case in logs:
            memory = oracle.decode(case.data(), "memory")
            assert {**memory, "mode": "file"} == case.expected(), case.id


def test_markdown_links_every_divergence_to_its_cases() -> None:
    report = {
        "kit_version": "0",
        "cases": {},
        "implementations": [
            {
                "name": "x",
                "counts": {"pass": 1, "fail": 1, "unsupported": 0, "error": 0},
                "known": 1,
                "source": None,
                "capabilities": Capabilities(name="x").to_dict(),
            }
        ],
        "groups": ["crafted/v2"],
        "stale": [],
        "results": [
            {
                "impl": "x",
                "case": "crafted/v2-a@memory",
                "group": "crafted/v2",
                "status": "fail",
                "reason": "r",
                "divergence": 0,
            },
            {
                "impl": "x",
                "case": "crafted/v2-b@memory",
                "group": "crafted/v2",
                "status": "pass",
                "reason": "",
                "divergence": None,
            },
        ],
        "divergences": [
            {
                "impl": "x",
                "cases": ["crafted/v2-a@*"],
                "class": "real-bug",
                "summary": "s",
                "detail": "d",
                "source": "adapters/x/divergences.toml",
                "count": 1,
            }
        ],
    }
    text = markdown.render(report)
    assert (
        "**real bug**: s (1 case: [`crafted/v2-a@memory`]"
        "(conformance-matrix.html#case=crafted%2Fv2-a%40memory))"
    ) in text
    assert model.unknown_problems({"results": report["results"]}) == []


# ------------------------------------------------------------------------------------------
# known divergences: the names an entry may give; answers out of the 64-bit range

OUT_OF_RANGE = [sys.executable, str(ROOT / "tests" / "adapters" / "out_of_range.py")]
#: the one case and the one consume scenario the out-of-range adapter is run on
ONE_CASE, ONE_SCENARIO = "crafted/v2-appendix-a1@memory", "consume/v2-headers-gzip"


def _entry(impl: str, case: str) -> str:
    return (
        f'[[divergence]]\nimpl = "{impl}"\ncases = ["{case}"]\nclass = "real-bug"\n'
        'summary = "its 64-bit arithmetic does not wrap"\n'
    )


def _run(name: str, side: str, results: dict[str, str]) -> Any:
    from conformance.harness.runner import CaseResult, Implementation, ImplementationRun

    return ImplementationRun(
        Implementation(name, ("x",)),
        Capabilities(name=name, side=side),
        None,
        [CaseResult(name, case, "g", status) for case, status in results.items()],
        0.0,
        side,
    )


def test_an_entry_names_the_adapter_or_its_consumer_run() -> None:
    from conformance.harness import divergences as dv
    from conformance.harness.runner import Settings

    bare = dv.Divergence("lib", ("consume/*",), "real-bug", "s", "", "k.toml")
    suffixed = dv.Divergence("lib consumer", ("consume/*",), "real-bug", "s", "", "k.toml")
    assert bare.about("lib") and bare.about("lib consumer") and not bare.about("lib2 consumer")
    assert suffixed.about("lib consumer") and not suffixed.about("lib")
    assert dv.accepted_names(["lib consumer", "other"]) == ["lib", "lib consumer", "other"]
    decoder = _run("lib", DECODE, {"crafted/a@memory": "pass"})
    consumer = _run("lib consumer", CONSUME, {"consume/s": "fail"})
    for entry in (bare, suffixed):
        report = model.build([decoder, consumer], {}, Settings().to_dict(), [entry], complete=True)
        (failed,) = [r for r in report["results"] if r["status"] == "fail"]
        assert failed["divergence"] == 0 and report["stale"] == [], entry
    # the consumer side did not run: an entry for its scenarios is not stale, though the
    # run covered every decode case; one for a decode case that explained nothing is
    decode_entry = dv.Divergence("lib", ("crafted/a@memory",), "real-bug", "s", "", "k.toml")
    report = model.build(
        [decoder],
        {},
        Settings().to_dict(),
        [bare, decode_entry],
        complete=True,
        every_case=["crafted/a@memory", "consume/s"],
    )
    assert report["stale"] == [1] and len(report["divergences"]) == 2
    # neither side names the case: stale in a run over every case
    gone = dv.Divergence("lib", ("crafted/gone*",), "real-bug", "s", "", "k.toml")
    report = model.build(
        [decoder], {}, Settings().to_dict(), [gone], complete=True, every_case=["crafted/a@memory"]
    )
    assert report["stale"] == [0]


def test_a_64_bit_value_out_of_range_is_the_librarys_answer(tmp_path: Path) -> None:
    """A library whose arithmetic does not wrap prints an offset past 2^63 - 1 (or a timestamp
    below -2^63): a difference showing the value, on both sides, not an error."""
    (case,) = select(C.read_cases(), [ONE_CASE])
    kafka_last = int(case.expected()["batches"][0]["lastOffset"])
    out = tmp_path / "decode.json"
    code, stdout, stderr = _check(
        "--cmd", " ".join([*OUT_OF_RANGE, "decode"]), *_cases(ONE_CASE), "--json", str(out)
    )
    (result,) = _report(out)["results"]
    assert code == 1 and result["status"] == "fail", stdout + stderr
    assert result["diff"] == [
        f'$.batches[0].lastOffset: kafka="{kafka_last}" adapter="{kafka_last + 2**63}"'
    ]
    from conformance.corpus import consume as consume_corpus

    expected = json.loads(
        (ROOT / "corpora" / consume_corpus.CONSUME_DIR / ONE_SCENARIO.split("/")[1])
        .joinpath("expected.json")
        .read_text()
    )
    first = expected["records"][0]
    out = tmp_path / "consume.json"
    command = " ".join([*OUT_OF_RANGE, "consume"])
    code, stdout, stderr = _check(
        "--side", "consume", "--cmd", command, *_cases(ONE_SCENARIO), "--json", str(out)
    )
    (result,) = _report(out)["results"]
    assert code == 1 and result["status"] == "fail", stdout + stderr
    offset, timestamp = int(first["offset"]), int(first["timestamp"])
    assert result["diff"] == [
        f'$.records[0].offset: kafka="{offset}" adapter="{offset + 2**63}"',
        f'$.records[0].timestamp: kafka="{timestamp}" adapter="{timestamp - 2**64}"',
    ]

    # the consumer's known file: the name the adapter declares, or the report's name
    for impl in ("out-of-range", "out-of-range consumer"):
        known = tmp_path / "known.toml"
        known.write_text(_entry(impl, ONE_SCENARIO) + _entry("out-of-range", ONE_CASE))
        code, stdout, stderr = _check(
            "--side", "consume", "--cmd", command, *_cases(ONE_SCENARIO),
            "--known", str(known), "--json", str(out),
        )  # fmt: skip
        report = _report(out)
        assert code == 0 and report["results"][0]["divergence"] == 0, stdout + stderr
        assert report["stale"] == [] and "no implementation of" not in stderr, stderr
    known.write_text(_entry("out-of-rang", ONE_SCENARIO))
    code, _, stderr = _check(
        "--side", "consume", "--cmd", command, *_cases(ONE_SCENARIO), "--known", str(known)
    )
    assert code == 1
    assert "entries for out-of-rang, which this run has no implementation of" in stderr
    assert "this run's: out-of-range, out-of-range consumer)" in stderr, stderr


def test_the_docs_count_the_consume_scenarios_there_are() -> None:
    """A doc that says how many consume scenarios there are says the real number (one that
    does not fall behind when a scenario is added names none)."""
    from conformance.corpus import consume as consume_corpus

    about_consume = re.compile(r"consume/|`consume`|fake broker")
    count = re.compile(r"\b(\d+) (?:consume |consumer )?scenarios\b")
    stated = [
        (f.name, int(m.group(1)))
        for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for line in f.read_text(encoding="utf-8").splitlines()
        if about_consume.search(line)
        for m in count.finditer(line)
    ]
    assert stated, "the pattern finds the counts the docs state"
    real = len(consume_corpus.SCENARIOS)
    assert [s for s in stated if s[1] != real] == [], f"there are {real} consume scenarios"


def test_decode_differences_are_filed_at_the_level_they_break() -> None:
    """What a consumer would notice (a record's value, the error's class) fails at every
    level; a batch header field (the CRC) only from wire on; Kafka's exact error text (under
    ``error_classes = "exact"``) only at java: below it, a finding."""
    import copy

    from conformance.harness.cases import read_cases
    from conformance.harness.judge import judge, read_capabilities
    from conformance.levels import LEVELS

    case = next(
        c
        for c in read_cases()
        if c.id == "crafted/split-zero-tail-12@memory"  # a v2 batch, then Kafka's error
    )
    kafka = case.expected()
    caps = read_capabilities('{"error_classes": "exact", "magics": [0, 1, 2]}', "t")

    def levels(change: Any) -> dict[str, str]:
        actual = copy.deepcopy(kafka)
        change(actual)
        return {lv: judge(kafka, actual, caps, case.mode, lv).status for lv in LEVELS}

    def value(doc: dict[str, Any]) -> None:
        doc["batches"][0]["records"][0]["value"] = "changed"

    def crc(doc: dict[str, Any]) -> None:
        doc["batches"][0]["crc"] = (doc["batches"][0]["crc"] or 0) + 1

    def message(doc: dict[str, Any]) -> None:
        doc["error"]["message"] = "another text"

    def exception(doc: dict[str, Any]) -> None:
        doc["error"]["kafka_exception"] = "org.apache.kafka.common.errors.SomethingElse"

    assert levels(value) == {"delivery": "fail", "wire": "fail", "java": "fail"}
    assert levels(exception) == {"delivery": "fail", "wire": "fail", "java": "fail"}
    assert levels(crc) == {"delivery": "pass", "wire": "fail", "java": "fail"}
    assert levels(message) == {"delivery": "pass", "wire": "pass", "java": "fail"}
    actual = copy.deepcopy(kafka)
    message(actual)
    (finding,) = judge(kafka, actual, caps, case.mode).findings  # the default level: wire
    assert finding.startswith("java: $.error.message: ") and "another text" in finding
