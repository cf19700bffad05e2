"""The HTML matrix: one self-contained file (no external resource), implementations x case
groups, a colour per outcome, drill-down to the cases of a cell and to one case (its bytes in
hex, Kafka's outcome, every implementation's verdict and diff).

Navigation is by URL fragment, so a view can be linked and opened directly:
``#cell=<impl>|<group>`` lists a cell's cases, ``#case=<case id>`` shows one case.
The data is embedded as JSON (``<script type="application/json" id="data">``).

Cell colours (also the legend): :data:`COLOURS`. A cell takes the colour of the most
serious result in it: an unexplained failure, then an adapter error, then a known
divergence, then pass; a cell whose cases are all unsupported is grey.
"""

from __future__ import annotations

import html
import json
from typing import Any

from conformance.harness.report.model import SCENARIO_SIDES, corpus_text
from conformance.levels import JAVA

__all__ = ["COLOURS", "render"]

COLOURS = {
    "pass": "#2e7d32",
    "fail": "#c62828",
    "error": "#6a1b9a",
    "known": "#ef8f00",
    "unsupported": "#9e9e9e",
}


def _data(report: dict[str, Any]) -> dict[str, Any]:
    case_ids = list(report["cases"])
    position = {cid: i for i, cid in enumerate(case_ids)}
    scenarios = report.get("side") in SCENARIO_SIDES
    groups = report["groups"]
    cases = [
        [
            cid,
            groups.index(c["group"]),
            c["mode"],
            c["size"],
            c["outcome"],
            c["hex"],
            c["hex_truncated"],
            c["description"],
        ]
        for cid, c in report["cases"].items()
    ]
    impls, statuses, details = [], {}, {}
    for impl in report["implementations"]:
        caps = impl["capabilities"]
        impls.append(
            {
                "name": impl["name"],
                "version": caps["version"],
                "counts": impl["counts"],
                "known": impl["known"],
                "caps": caps,
                "columns": impl.get("columns", []),
                "problem": impl["capabilities_problem"],
                "library": (impl["source"] or {}).get("library", ""),
            }
        )
        codes = ["-"] * len(case_ids)
        mine: dict[str, Any] = {}
        for r in report["results"]:
            if r["impl"] != impl["name"]:
                continue
            i = position[r["case"]]
            code = r["status"][0]
            if r["status"] in ("fail", "error") and r["divergence"] is not None:
                code = "k" if r["status"] == "fail" else "K"
            codes[i] = code
            # a passing case's drill-down: its findings, or the level it reached (on the
            # decode and consume sides only when below java: thousands of cases reach it)
            level = r.get("level")
            shown = level if scenarios else level not in (None, JAVA)
            if r["status"] != "pass" or r.get("findings") or shown:
                mine[str(i)] = [
                    r["reason"],
                    r.get("diff", []),
                    r.get("stderr", ""),
                    r["divergence"],
                    r.get("findings", []),
                    r.get("level"),
                ]
        statuses[impl["name"]] = "".join(codes)
        details[impl["name"]] = mine
    return {
        "created": report["created"],
        "kit": report["kit_version"],
        "groups": groups,
        "cases": cases,
        "impls": impls,
        "status": statuses,
        "details": details,
        "divergences": report["divergences"],
        "colours": COLOURS,
    }


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}
th{background:#f3f3f3;font-weight:600}
#matrix td.cell{color:#fff;text-align:center;cursor:pointer;min-width:40px;height:20px;font-weight:600;font-size:12px}
#matrix th.g{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;font-weight:500}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;color:#fff;border-radius:3px}
.badge{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;overflow:auto;max-height:360px;font-size:12px}
a{color:#1565c0} .muted{color:#777} #view{margin-top:12px}
"""  # noqa: E501 - CSS template, rendered verbatim

_SCRIPT = r"""
const D = JSON.parse(document.getElementById('data').textContent);
const C = D.colours;
const el = (tag, attrs, ...kids) => { const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (k === 'style') e.style.cssText = v; else e.setAttribute(k, v); }
  for (const k of kids) e.append(k); return e; };
const colourOf = code => ({p: C.pass, f: C.fail, e: C.error, k: C.known, K: C.known, u: C.unsupported})[code] || '#fff';
const label = code => ({p: 'pass', f: 'fail', e: 'error', k: 'fail (known)', K: 'error (known)', u: 'unsupported'})[code] || 'not run';
const badge = code => el('span', {class: 'badge', style: 'background:' + colourOf(code)}, label(code));
function cellCodes(impl, g) { const s = D.status[impl]; const out = [];
  D.cases.forEach((c, i) => { if (c[1] === g && s[i] !== '-') out.push([i, s[i]]); }); return out; }
function cellColour(codes) { const has = x => codes.some(([, c]) => x.includes(c));
  if (has('f')) return C.fail; if (has('e')) return C.error; if (has('kK')) return C.known;
  if (has('p')) return C.pass; return C.unsupported; }
function matrix() {
  const t = el('table', {id: 'matrix'}); const head = el('tr', {}, el('th', {}, 'implementation'));
  D.groups.forEach(g => head.append(el('th', {class: 'g'}, g))); t.append(head);
  for (const impl of D.impls) { const row = el('tr', {}, el('th', {}, impl.name + ' ' + impl.version));
    D.groups.forEach((g, gi) => { const codes = cellCodes(impl.name, gi);
      if (!codes.length) { row.append(el('td', {})); return; }
      const n = x => codes.filter(([, c]) => x.includes(c)).length;
      const td = el('td', {class: 'cell', style: 'background:' + cellColour(codes),
        title: `${impl.name} / ${g}: ${n('p')} pass, ${n('f')} fail, ${n('kK')} known, ${n('e')} error, ${n('u')} unsupported`},
        `${n('p')}/${codes.length - n('u')}`);
      td.onclick = () => { location.hash = 'cell=' + encodeURIComponent(impl.name + '|' + g); };
      row.append(td); });
    t.append(row); }
  return t; }
function notes(i) { const text = (i.problem ? i.problem + ' ' : '') + (i.caps.notes || [i.caps.produce, i.caps.encode].filter(Boolean).map(c => c.notes || '').join(' ') || '');
  if (text.length <= 80) return el('td', {class: 'muted'}, text);
  return el('td', {class: 'muted'}, el('details', {}, el('summary', {}, text.slice(0, 60) + '…'), text)); }
function summary() {
  const heads = D.impls.length ? D.impls[0].columns.map(c => c[0]) : [];
  const t = el('table', {id: 'summary'}, el('tr', {}, ...['implementation', 'library', 'pass', 'fail', 'unsupported',
    'error', 'known', ...heads, 'notes'].map(h => el('th', {}, h))));
  for (const i of D.impls) {
    t.append(el('tr', {}, el('td', {}, i.name + ' ' + i.version), el('td', {}, i.library || ''),
      ...['pass', 'fail', 'unsupported', 'error'].map(s => el('td', {}, String(i.counts[s]))),
      el('td', {}, String(i.known)), ...i.columns.map(c => el('td', {}, c[1])),
      notes(i))); }
  return t; }
function hexdump(hex, truncated, size) { const lines = [];
  for (let o = 0; o < hex.length / 2; o += 16) { const bytes = [];
    for (let j = o; j < Math.min(o + 16, hex.length / 2); j++) bytes.push(hex.substr(j * 2, 2));
    lines.push(o.toString(16).padStart(8, '0') + '  ' + bytes.join(' ')); }
  if (truncated) lines.push(`... (${size} bytes in all; the first ${hex.length / 2} shown)`);
  return lines.join('\n'); }
function caseLink(i) { return el('a', {href: '#case=' + encodeURIComponent(D.cases[i][0])}, D.cases[i][0]); }
function showCell(impl, g) { const gi = D.groups.indexOf(g); const v = el('div', {id: 'cell'});
  v.append(el('h2', {}, `${impl} / ${g}`)); const t = el('table', {}, el('tr', {}, el('th', {}, 'case'), el('th', {}, 'verdict'), el('th', {}, 'reason')));
  for (const [i, code] of cellCodes(impl, gi)) { const d = D.details[impl][i];
    t.append(el('tr', {}, el('td', {}, caseLink(i)), el('td', {}, badge(code), d && d[5] ? ` level reached: ${d[5]}` : ''), el('td', {}, d ? d[0] : ''))); }
  v.append(t); return v; }
function showCase(id) { const i = D.cases.findIndex(c => c[0] === id); const v = el('div', {id: 'case'});
  if (i < 0) { v.append('unknown case ' + id); return v; } const c = D.cases[i];
  v.append(el('h2', {}, id), el('p', {}, `group ${D.groups[c[1]]}, mode ${c[2]}, ${c[3]} bytes; Kafka's outcome: ${c[4]}. `, el('span', {class: 'muted'}, c[7])),
    el('pre', {class: 'hex'}, hexdump(c[5], c[6], c[3])));
  for (const impl of D.impls) { const code = D.status[impl.name][i]; const d = D.details[impl.name][i];
    v.append(el('h2', {}, impl.name + ' ', badge(code)));
    if (d) { v.append(el('p', {}, d[0]));
      if (d[3] !== null) { const k = D.divergences[d[3]]; v.append(el('p', {}, `known divergence (${k.class}): ${k.summary}`)); }
      if (d[5]) v.append(el('p', {}, `level reached: ${d[5]}`));
      if (d[1].length) v.append(el('pre', {class: 'diff'}, d[1].join('\n')));
      if (d[4].length) v.append(el('p', {}, 'findings (differences above the level asked, not failures):'), el('pre', {class: 'diff'}, d[4].join('\n')));
      if (d[2]) v.append(el('pre', {class: 'stderr'}, d[2])); } }
  return v; }
function route() { const view = document.getElementById('view'); view.replaceChildren();
  const h = decodeURIComponent(location.hash.slice(1));
  if (h.startsWith('cell=')) { const [impl, g] = h.slice(5).split('|'); view.append(showCell(impl, g)); }
  else if (h.startsWith('case=')) view.append(showCase(h.slice(5)));
  if (h) view.scrollIntoView(); }
document.getElementById('summary-slot').append(summary());
document.getElementById('matrix-slot').append(matrix());
window.addEventListener('hashchange', route); route();
"""  # noqa: E501 - JavaScript template, rendered verbatim


_TITLES = {
    "decode": "Kafka record-format conformance matrix",
    "consume": "Kafka consumer conformance matrix",
    "decode+consume": "Kafka record-format conformance matrix",
    "produce": "Kafka producer and encoder conformance matrix",
    "broker": "Kafka-compatible broker conformance matrix",
}
_INTROS = {
    "decode": "Each implementation's decoder against Kafka's verdict (the Java oracle) on every "
    "case",
    "consume": "Each implementation's real consumer, reading every consume scenario through the "
    "kit's fake broker, against what Kafka's own KafkaConsumer delivered",
    "decode+consume": "Each implementation's decoder against Kafka's verdict (the Java oracle) "
    "on every case, and each real consumer (the <library> consumer rows) against what Kafka's "
    "own KafkaConsumer delivered through the kit's fake broker",
    "produce": "Each implementation's producer (sending to a real broker the kit ran) or "
    "encoder, judged by the broker's answer, what the broker stored, the batch headers Java's "
    "KafkaProducer writes and the records Kafka's consumer reads back, at three levels "
    "(delivery, wire, java), on every scenario",
    "broker": "Each broker's answers to the produce corpus's requests (sent raw to a fresh "
    "topic) and the batches it stored, fetched back, against Kafka's answers (the kit's broker "
    "model), at three levels (delivery, wire, java), on every case",
}


def render(report: dict[str, Any], title: str | None = None) -> str:
    side = report.get("side", "decode")
    side = side if side in _TITLES else "decode"
    title = title or _TITLES[side]
    data = json.dumps(_data(report), separators=(",", ":")).replace("</", "<\\/")
    legend = "".join(
        f'<span style="background:{c}">{html.escape(name)}</span>'
        for name, c in [
            ("pass", COLOURS["pass"]),
            ("fail", COLOURS["fail"]),
            ("adapter error", COLOURS["error"]),
            ("known divergence", COLOURS["known"]),
            ("unsupported", COLOURS["unsupported"]),
        ]
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="muted">kafka-conformance {html.escape(report["kit_version"])}, {html.escape(corpus_text(report))}, {html.escape(report["created"])}.
{html.escape(_INTROS[side])}; a cell
shows passes / cases run and takes the colour of its most serious result. Click a cell for its
cases, a case for its bytes and every implementation's diff.</p>
<h2>Matrix</h2><p class="legend">{legend}</p>
<div id="matrix-slot"></div>
<h2>Implementations</h2>
<div id="summary-slot"></div>
<div id="view"></div>
<script type="application/json" id="data">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""  # noqa: E501 - HTML template, rendered verbatim
