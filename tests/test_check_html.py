"""The HTML matrix in a real headless Chromium (Debian's package, installed by
scripts/install-chromium): the page renders the matrix with a colour per outcome, and the
drill-down to a case shows its bytes in hex and the diff. Checked on the DOM Chromium built
(--dump-dom, after the page's script ran) and on its screenshot's pixels."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import ROOT
from PIL import Image

from conformance.harness.report.html import COLOURS

BROKEN = [sys.executable, str(ROOT / "tests" / "adapters" / "broken.py")]
CASES = ["crafted/v2-[a-d]*", "crafted/legacy-v1-[a-c]*"]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1600,1000",
]


@pytest.fixture(scope="module")
def chromium() -> str:
    proc = subprocess.run(
        [str(ROOT / "scripts" / "install-chromium")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("html")
    args = ["--impl", "java"]
    for behaviour in ("crash", "v2-only-lenient"):
        args += ["--cmd", " ".join([*BROKEN, behaviour])]
    for glob in CASES:
        args += ["--cases", glob]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "check",
            *args,
            "-q",
            "--timeout",
            "10",
            "--html",
            str(out / "m.html"),
            "--json",
            str(out / "m.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )
    assert proc.returncode == 1, proc.stderr  # the lenient adapter fails, the crashing one errs
    return out / "m.html", json.loads((out / "m.json").read_text())


def _chromium(binary: str, url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _pixels(png: Path) -> dict[str, int]:
    image = Image.open(png).convert("RGB")
    counts: dict[str, int] = {}
    wanted = {tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)): name for name, c in COLOURS.items()}
    for n, rgb in image.getcolors(image.width * image.height) or []:
        if rgb in wanted:
            counts[wanted[rgb]] = counts.get(wanted[rgb], 0) + n
    return counts


def test_matrix_renders(chromium: str, matrix: tuple[Path, dict], tmp_path: Path) -> None:
    page, report = matrix
    dom = _chromium(chromium, page.as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = re.findall(r"<tr><th>([^<]+)</th>((?:<td[^>]*>[^<]*</td>)+)</tr>", dom.stdout)
    names = [i["name"] for i in report["implementations"]]
    assert [r[0].split(" ")[0] for r in rows] == names  # one matrix row per implementation
    groups = report["groups"]
    for _name, cells in rows:
        assert len(re.findall(r"<td", cells)) == len(groups)
    colours = dict(
        zip(names, (re.findall(r"background: (rgb\([^)]*\))", cells) for _, cells in rows))
    )
    rgb = {
        k: "rgb({}, {}, {})".format(*(int(c[i : i + 2], 16) for i in (1, 3, 5)))
        for k, c in COLOURS.items()
    }
    assert set(colours["java"]) == {rgb["pass"]}
    assert set(colours["broken-crash"]) == {rgb["error"]}
    assert rgb["unsupported"] in colours["broken-v2-only-lenient"]  # legacy: magic 1 undeclared
    assert rgb["fail"] in colours["broken-v2-only-lenient"]
    shot = tmp_path / "matrix.png"
    run = _chromium(chromium, page.as_uri(), tmp_path, f"--screenshot={shot}")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    seen = _pixels(shot)
    cell = (
        40 * 15
    )  # a matrix cell is at least this many pixels of its colour; the legend chips are smaller
    assert seen.get("pass", 0) >= len(groups) * cell  # the java row
    assert seen.get("error", 0) >= len(groups) * cell  # the crashing adapter's row
    assert seen.get("fail", 0) >= cell and seen.get("unsupported", 0) >= cell


def test_drill_down_to_a_case(chromium: str, matrix: tuple[Path, dict], tmp_path: Path) -> None:
    page, report = matrix
    failing = next(
        r
        for r in report["results"]
        if r["impl"] == "broken-v2-only-lenient" and r["status"] == "fail"
    )
    url = page.as_uri() + "#case=" + quote(failing["case"], safe="")
    dom = _chromium(chromium, url, tmp_path, "--dump-dom")
    assert dom.returncode == 0
    case = report["cases"][failing["case"]]
    first = " ".join(case["hex"][i : i + 2] for i in range(0, min(32, len(case["hex"])), 2))
    assert f"00000000  {first}" in dom.stdout  # the bytes, in hex
    assert (
        "outcome ok where Kafka&#39;s is error" in dom.stdout
        or "outcome ok where Kafka's is error" in dom.stdout
    )
    shown = dom.stdout.replace("&#39;", "'").replace("&quot;", '"')
    assert '$.outcome: kafka="error" adapter="ok"' in shown  # the diff, each side named
    shot = tmp_path / "case.png"
    _chromium(chromium, url, tmp_path, f"--screenshot={shot}")
    assert _pixels(shot).get("fail", 0) > 0  # the failing verdict's badge is on screen


FAULTS = [sys.executable, str(ROOT / "tests" / "adapters" / "producer_faults.py")]


def test_producer_matrix_renders(chromium: str, tmp_path: Path) -> None:
    """``check-producer --html``: the encode scenarios need no broker; a correct encoder's row
    is green, one with a planted maxTimestamp fault red, a crashing one the error colour, and
    the summary shows the producer columns with the diff line of the fault on drill-down."""
    args = []
    for behaviour in ("ok", "max-timestamp", "crash"):
        args += ["--cmd", " ".join([*FAULTS, behaviour])]
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "check-producer", *args, "-q"]
        + ["--scenarios", "encode-*", "--timeout", "20"]
        + ["--html", str(tmp_path / "p.html"), "--json", str(tmp_path / "p.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["side"] == "produce"
    page = tmp_path / "p.html"
    dom = _chromium(chromium, page.as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Kafka producer and encoder conformance matrix" in dom.stdout
    rows = re.findall(r"<tr><th>([^<]+)</th>((?:<td[^>]*>[^<]*</td>)+)</tr>", dom.stdout)
    colours = {
        name.split(" ")[0]: set(re.findall(r"background: (rgb\([^)]*\))", cells))
        for name, cells in rows
    }
    rgb = {
        k: "rgb({}, {}, {})".format(*(int(c[i : i + 2], 16) for i in (1, 3, 5)))
        for k, c in COLOURS.items()
    }
    assert colours == {
        "faulty-ok": {rgb["pass"]},
        "faulty-max-timestamp": {rgb["fail"]},
        "faulty-crash": {rgb["error"]},
    }
    assert "<th>produce</th>" in dom.stdout and "<th>encode</th>" in dom.stdout
    url = page.as_uri() + "#case=" + quote("encode/encode-codec-gzip", safe="")
    dom = _chromium(chromium, url, tmp_path, "--dump-dom")
    assert "maxTimestamp -1, expected" in dom.stdout
