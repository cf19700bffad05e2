"""JUnit XML: one ``testsuite`` per implementation, one ``testcase`` per case.

``pass`` is a passing testcase, ``fail`` a ``<failure>`` (reason, then the diff), ``error`` an
``<error>`` (the problem, stderr in ``<system-err>``), ``unsupported`` a ``<skipped>`` with
the capability. A known divergence keeps its failure and names its class in the message. On a
side judged at levels, each testcase's ``<system-out>`` says the level it reached and lists
its findings (differences above the level asked, which are no failure).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from conformance.harness.report.model import corpus_text

__all__ = ["render"]


def _clean(text: str) -> str:
    # XML 1.0 forbids most control characters; adapters' stderr may hold any bytes
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in text)


def render(report: dict[str, Any]) -> bytes:
    root = ET.Element("testsuites", name="kafka-conformance check")
    divergences = report["divergences"]
    for impl in report["implementations"]:
        mine = [r for r in report["results"] if r["impl"] == impl["name"]]
        c = impl["counts"]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=impl["name"],
            tests=str(len(mine)),
            failures=str(c["fail"]),
            errors=str(c["error"]),
            skipped=str(c["unsupported"]),
            time=f"{impl['seconds']:.3f}",
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="version", value=impl["capabilities"]["version"])
        ET.SubElement(props, "property", name="corpus", value=corpus_text(report))
        for r in mine:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{impl['name']}.{r['group']}",
                name=r["case"],
                time=f"{r['seconds']:.4f}",
            )
            known = divergences[r["divergence"]] if r.get("divergence") is not None else None
            prefix = f"[known {known['class']}: {known['summary']}] " if known else ""
            if r["status"] == "fail":
                el = ET.SubElement(
                    case, "failure", message=_clean(prefix + r["reason"]), type="divergence"
                )
                el.text = _clean("\n".join(r["diff"]))
            elif r["status"] == "error":
                el = ET.SubElement(
                    case, "error", message=_clean(prefix + r["reason"]), type="adapter-error"
                )
                el.text = _clean(r["reason"])
                if r.get("stderr"):
                    ET.SubElement(case, "system-err").text = _clean(r["stderr"])
            elif r["status"] == "unsupported":
                ET.SubElement(case, "skipped", message=_clean(r["reason"]))
            if r.get("level") is not None:
                findings = r.get("findings") or []
                ET.SubElement(case, "system-out").text = _clean(
                    "\n".join([f"level reached: {r['level']}", *findings])
                )
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
