"""Hostile option values and environments (issue 40, points 13-16): the broker profile's
numbers and versions, ``dump --format-of`` of releases that never existed, ``check
--init-adapter`` into symbolic links and existing directories, integer options in odd
spellings, a stdout that cannot be written, and a failed Kafka jar download.

Each case fails on the code before the fix: a traceback, a silently accepted value, a
misleading message, or a cache directory left behind."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import conformance.errors as errors
from conformance.broker import PartitionLog
from conformance.broker.config import TopicConfig
from conformance.broker.profile import ProduceContext, decode
from conformance.cli import common, main
from conformance.harness import starter
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as jvm
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parent.parent
NOW = 1_700_000_000_000
LOG = (
    ROOT
    / "corpora/kafka-1.1.1-zk/compacted-v2-java/log/compacted-v2-java-0/00000000000000000000.log"
)


@pytest.fixture
def batch(tmp_path: Path) -> str:
    """A batch every broker line accepts (one record, base offset 0)."""
    b = BatchBuilder()
    b.append(NOW, b"k", b"v")
    path = tmp_path / "ok.bin"
    path.write_bytes(b.build())
    return str(path)


def _broker(*args: str) -> list[str]:
    return ["decode", "--profile", "broker", "--now", str(NOW), *args]


def _usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI, which must refuse with exit 2 (argparse or the command); its stderr."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------ 13: decode --profile broker


def test_leader_epoch_beyond_int32_is_refused(
    batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage(_broker("--leader-epoch", "2147483648", batch), capsys)
    assert "--leader-epoch" in err and "2147483647" in err
    assert main(_broker("--leader-epoch", "2147483647", batch)) == 0
    assert "partitionLeaderEpoch: -1 -> 2147483647" in capsys.readouterr().out


@pytest.mark.parametrize("epoch", [2147483648, -1, 1 << 70])
def test_leader_epoch_beyond_int32_is_a_typed_error_in_the_api(epoch: int) -> None:
    with pytest.raises(errors.BrokerContextError, match="leader epoch"):
        ProduceContext(leader_epoch=epoch)


@pytest.mark.parametrize("name", ["max.message.bytes", "segment.bytes"])
@pytest.mark.parametrize("value", ["2147483648", "99999999999999999999"])
def test_int_topic_configs_beyond_int32_are_refused(
    name: str, value: str, batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka's ConfigDef types both as INT: ``Integer.parseInt`` refuses the value."""
    err = _usage(_broker("--topic-config", f"{name}={value}", batch), capsys)
    assert name in err and "INT" in err and value in err
    assert "at least" not in err  # the old message claimed a lower bound was the problem
    with pytest.raises(errors.ConfigError, match=name):
        TopicConfig.from_properties({name: value})
    assert TopicConfig.from_properties({name: "2147483647"}).max_message_bytes in (
        2147483647,
        1048588,
    )


def test_long_topic_config_keeps_its_range() -> None:
    name = "message.timestamp.before.max.ms"
    assert TopicConfig.from_properties({name: str((1 << 63) - 1)}).timestamp_before_max_ms
    with pytest.raises(errors.ConfigError, match="LONG"):
        TopicConfig.from_properties({name: str(1 << 63)})


def test_inter_broker_protocol_on_4x_is_refused(
    batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage(
        _broker("--broker-version", "4.3.1", "--inter-broker-protocol-version", "2.8", batch),
        capsys,
    )
    assert "inter.broker.protocol.version" in err and "4.3.1" in err
    with pytest.raises(errors.ConfigError, match="inter.broker.protocol.version"):
        PartitionLog(version="4.3.1", inter_broker_protocol_version="3.9")
    # 2.x/3.x keep it
    assert main(_broker("--broker-version", "3.9.2", "--inter-broker-protocol-version", "2.8",
                        batch)) == 0  # fmt: skip
    capsys.readouterr()


@pytest.mark.parametrize("topic", [[], ["--topic-config", "message.format.version=2.8"]])
def test_bogus_inter_broker_protocol_names_the_option(
    topic: list[str], batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _broker("--broker-version", "3.9.2", "--inter-broker-protocol-version", "bogus")
    err = _usage([*argv, *topic, batch], capsys)
    assert "inter.broker.protocol.version" in err and "bogus" in err
    assert "message.format.version" not in err


def test_bogus_message_format_version_names_its_option(
    batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _broker("--broker-version", "3.9.2", "--inter-broker-protocol-version", "2.8")
    err = _usage([*argv, "--topic-config", "message.format.version=bogus", batch], capsys)
    assert "message.format.version" in err and "inter.broker.protocol.version" not in err


def test_a_context_and_a_log_of_other_versions_are_refused(batch: str) -> None:
    data = Path(batch).read_bytes()
    ctx = ProduceContext(version="2.8.2", now=NOW)
    with pytest.raises(errors.BrokerContextError) as e:
        decode(data, profile="broker", produce=ctx, log=PartitionLog(version="4.3.1"))
    assert "2.8.2" in str(e.value) and "4.3.1" in str(e.value)
    # the same versions agree; without a context the log's version judges
    log = PartitionLog(version="2.8.2")
    verdict = decode(data, profile="broker", produce=ctx, log=log).broker
    assert (verdict.broker, verdict.produce_version, verdict.accepted) == ("2.8.2", 9, True)
    verdict = decode(data, profile="broker", log=PartitionLog(version="2.8.2")).broker
    assert (verdict.broker, verdict.produce_version) == ("2.8.2", 9)


def test_a_context_and_a_log_of_other_topics_are_refused(batch: str) -> None:
    data = Path(batch).read_bytes()
    log = PartitionLog({"cleanup.policy": "compact"})
    ctx = ProduceContext(topic={"cleanup.policy": "delete"}, now=NOW)
    with pytest.raises(errors.BrokerContextError, match="topic"):
        decode(data, profile="broker", produce=ctx, log=log)
    # a context without a topic configuration takes the log's
    verdict = decode(data, profile="broker", produce=ProduceContext(now=NOW), log=log).broker
    assert verdict.accepted


# ------------------------------------------------------------------ 14: dump --format-of


@pytest.mark.parametrize(
    "bad",
    [
        "3.10",
        "3.99",
        "2.9",
        "1.2",
        "0.12",
        "0.10.3",
        "4.0.99",
        "3.9.2-rc1",
        " 3.9",
        "3.9.2 ",
        "2.8.3",
        "0.10.2.3",
        "3.9.2.0",
        "4.3.2",
    ],  # fmt: skip
)
def test_format_of_a_release_that_never_existed_is_refused(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dump", "--format-of", bad, str(LOG)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert repr(bad) in err or bad in err
    assert "0.10.2.0" in err and "4.3.1" in err and "2.8.2" in err  # the real ones are named


@pytest.mark.parametrize(
    "good",
    [
        "0.10.2",
        "0.10.2.0",
        "0.10.2.2",
        "0.11.0.3",
        "1.0",
        "1.1.1",
        "2.8",
        "2.8.2",
        "3.3.0",
        "3.9",
        "4.0.2",
        "4.3",
        "4.3.1",
    ],  # fmt: skip
)
def test_format_of_a_real_release_or_line_is_accepted(
    good: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a v2 segment: 0.10.2's tool dies on it (exit 1) after 'Dumping'; no usage error
    assert main(["dump", "--format-of", good, str(LOG)]) in (0, 1)
    captured = capsys.readouterr()
    assert "Dumping" in captured.out and "--format-of" not in captured.err


def test_the_releases_are_one_table() -> None:
    from conformance.logdir.dump import releases

    assert releases.RELEASES[0] == "0.10.2.0" and releases.RELEASES[-1].startswith("4.3.")
    assert len(set(releases.RELEASES)) == len(releases.RELEASES)
    assert releases.is_release("3.9.2") and not releases.is_release("3.10")
    assert releases.is_release("2.8") and releases.is_release("0.10.2")


# ------------------------------------------------------------------ 15: check --init-adapter


def test_init_adapter_refuses_a_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(starter.StarterError, match="symbolic link"):
        starter.target_directory(str(loop))
    with pytest.raises(starter.StarterError, match="symbolic link"):
        starter.init_adapter("python", loop)


def test_init_adapter_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere" / "deeper")
    with pytest.raises(starter.StarterError, match="symbolic link"):
        starter.target_directory(str(dangling))
    with pytest.raises(starter.StarterError, match="symbolic link"):
        starter.init_adapter("python", dangling)
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_init_adapter_on_the_command_line_refuses_broken_links(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --init-adapter LANG DIR`` with DIR a link loop or a dangling link: exit 2 and
    one line that says so (the command resolved the path first and raised RuntimeError on a
    loop, and followed a dangling link to create its target)."""
    link = tmp_path / kind
    link.symlink_to(link if kind == "loop" else tmp_path / "nowhere" / "deeper")
    assert main(["check", "--init-adapter", "python", str(link)]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "Traceback" not in err
    assert not (tmp_path / "nowhere").exists()


def test_init_adapter_target_directory_resolves_plain_paths(tmp_path: Path) -> None:
    assert starter.target_directory(str(tmp_path / "new")) == (tmp_path / "new").resolve()
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)  # a link to an existing directory is that directory
    assert starter.target_directory(str(tmp_path / "link")) == real.resolve()


def test_init_adapter_keeps_an_existing_directory_s_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "private"
    target.mkdir()
    os.chmod(target, 0o700)
    assert main(["check", "--init-adapter", "python", str(target)]) == 0
    capsys.readouterr()
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert (target / "library.py").is_file()


# ------------------------------------------------------------------ 16: integers, stdout, jars


BAD_INTEGERS = [" 12", "12 ", "1_000", "١٢", "+12", "12.0", "0x10", "", "-", "１２"]


@pytest.mark.parametrize("text", BAD_INTEGERS)
@pytest.mark.parametrize(
    "kind", [common.positive_int, common.non_negative_int, common.int64, common.non_negative_int64]
)
def test_integer_types_take_ascii_decimal_digits_only(text: str, kind: object) -> None:
    with pytest.raises(common.argparse.ArgumentTypeError):
        kind(text)  # type: ignore[operator]


def test_integer_types_take_a_minus_only_where_negatives_are_allowed() -> None:
    assert common.int64("-12") == -12
    assert common.positive_int("12") == 12 and common.non_negative_int("0") == 0
    for kind in (common.positive_int, common.non_negative_int, common.non_negative_int64):
        with pytest.raises(common.argparse.ArgumentTypeError):
            kind("-3")
    with pytest.raises(common.argparse.ArgumentTypeError):
        common.non_negative_int("-0")


@pytest.mark.parametrize("text", [" 2", "1_0", "١٢", "2 "])
def test_seconds_take_ascii_numbers_only(text: str) -> None:
    with pytest.raises(common.argparse.ArgumentTypeError):
        common.seconds(text)
    assert common.seconds("2.5") == 2.5


@pytest.mark.parametrize("option", ["--max-records", "--produce-version", "--leader-epoch"])
def test_cli_integer_options_refuse_odd_spellings(
    option: str, batch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in (" 9", "1_0", "١٢"):
        err = _usage(_broker(option, text, batch), capsys)
        assert option in err


@pytest.mark.parametrize("option", ["--max-bytes", "--max-message-size"])
def test_dump_integer_options_refuse_odd_spellings(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in (" 9", "1_0", "١٢"):
        err = _usage(["dump", option, text, str(LOG)], capsys)
        assert option in err


def test_stdout_write_failure_is_one_line() -> None:
    """``guard_stdout``: a command whose stdout is /dev/full ends with a message and exit 2,
    no traceback, no 'Exception ignored' at the interpreter's exit."""
    program = (
        "import sys; from conformance.cli.common import guard_stdout\n"
        "def body():\n"
        "    for _ in range(10000): sys.stdout.write('x' * 100 + '\\n')\n"
        "    return 0\n"
        "sys.exit(guard_stdout('prog', body))\n"
    )
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-c", program],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
            cwd=ROOT,
        )
    assert r.returncode == 2, r.stderr
    assert r.stderr == "prog: cannot write to stdout: No space left on device\n"


def test_guard_stdout_leaves_other_errors_alone() -> None:
    def body() -> int:
        raise FileNotFoundError(2, "No such file or directory", "x")

    with pytest.raises(FileNotFoundError):
        common.guard_stdout("prog", body)
    assert common.guard_stdout("prog", lambda: 3) == 3


# the jar cache: a checkout of its own under tmp_path (never the real .cache)


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "root"
    (root / "jvm" / "kafka-classpath").mkdir(parents=True)
    (root / "jvm" / "kafka-classpath" / "pom.xml").write_text("<project/>")
    monkeypatch.setenv(jvm.ROOT_ENV, str(root))
    return root


def _maven(succeeds: bool, calls: list[str]):  # type: ignore[no-untyped-def]
    def run_maven(cache: Path, args: list[str], *, cwd: Path, timeout: float | None = None):  # type: ignore[no-untyped-def]
        out = Path(next(a for a in args if a.startswith("-DoutputDirectory="))
                   .split("=", 1)[1])  # fmt: skip
        calls.append(str(out))
        assert not out.is_relative_to(cache / "kafka" / "3.9.2")
        if succeeds:
            for name in ("kafka-clients-3.9.2.jar", "kafka_2.13-3.9.2.jar"):
                (out / name).write_bytes(b"PK\x05\x06" + bytes(18))
            return subprocess.CompletedProcess(["mvn"], 0, "ok", "")
        (out / "kafka-clients-3.9.2.jar").write_bytes(b"partial")  # a half-copied download
        return subprocess.CompletedProcess(["mvn"], 1, "[ERROR] network unreachable", "")

    return run_maven


def test_a_failed_jar_download_leaves_no_cache_directory(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(jvm, "run_maven", _maven(False, calls))
    with pytest.raises(kafka_jars.KafkaJarsUnavailable):
        kafka_jars.classpath("3.9.2", fake_root)
    cache = fake_root / ".cache" / "kafka"
    assert not (cache / "3.9.2").exists()
    assert [p.name for p in cache.iterdir() if p.name != ".resolve.lock"] == []
    assert calls


def test_a_missing_maven_leaves_no_cache_directory(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_maven(*_: object, **__: object) -> None:
        raise jvm.JvmToolMissing("no mvn: Apache Maven is not on PATH")

    monkeypatch.setattr(jvm, "run_maven", no_maven)
    with pytest.raises(kafka_jars.KafkaJarsUnavailable):
        kafka_jars.classpath("3.9.2", fake_root)
    assert not (fake_root / ".cache" / "kafka" / "3.9.2").exists()


@pytest.mark.parametrize("leftover", ["empty", "lib-without-marker", "empty-jar", "other-version"])
def test_an_incomplete_cache_is_resolved_again(
    leftover: str, fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = fake_root / ".cache" / "kafka" / "3.9.2"
    (directory / "lib").mkdir(parents=True)
    if leftover != "empty":
        (directory / "lib" / "kafka-clients-3.9.2.jar").write_bytes(
            b"" if leftover == "empty-jar" else b"PK\x05\x06" + bytes(18)
        )
    if leftover in ("empty-jar", "other-version"):
        marker = {"version": "2.8.2" if leftover == "other-version" else "3.9.2",
                  "jars": ["kafka-clients-3.9.2.jar"]}  # fmt: skip
        (directory / "complete.json").write_text(json.dumps(marker))
    calls: list[str] = []
    monkeypatch.setattr(jvm, "run_maven", _maven(True, calls))
    jars = kafka_jars.classpath("3.9.2", fake_root)
    assert len(calls) == 1
    assert [j.name for j in jars] == ["kafka-clients-3.9.2.jar", "kafka_2.13-3.9.2.jar"]
    assert all(j.stat().st_size > 0 and j.parent == directory / "lib" for j in jars)
    assert json.loads((directory / "complete.json").read_text())["version"] == "3.9.2"
    # complete now: the next run takes it without Maven
    assert kafka_jars.classpath("3.9.2", fake_root) == jars and len(calls) == 1
    leftovers = [p.name for p in directory.parent.iterdir()]
    assert sorted(leftovers) == [".resolve.lock", "3.9.2"]
