"""The sample browser's page: the HTML, CSS and script of ``samples.html`` (filled in by
:func:`evalcore.reporting._browser.sample_browser_html`) and the Content-Security-Policy that
lets only that script run.

Split from :mod:`evalcore.reporting._browser`, which imports these names.
"""

from __future__ import annotations

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
{csp}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body{{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#fafbfc}}
header{{padding:12px 20px;background:#fff;border-bottom:1px solid #dde2e8}}
h1{{font-size:18px;margin:0 0 6px}}
dl{{display:flex;flex-wrap:wrap;gap:4px 22px;margin:0}} dl div{{display:flex;gap:6px}}
dt{{color:#5b6673}} dd{{margin:0;font-weight:600}}
#controls{{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;
  padding:10px 20px;background:#f1f4f7;border-bottom:1px solid #dde2e8}}
#controls label{{display:inline-flex;gap:4px;align-items:center;cursor:pointer;white-space:nowrap}}
#search{{flex:1 1 260px;max-width:480px;padding:5px 8px;border:1px solid #b9c2cc;border-radius:4px;font:inherit}}
#count{{color:#5b6673;margin-left:auto}}
main{{padding:8px 20px 40px}}
details.sample{{background:#fff;border:1px solid #dde2e8;border-radius:5px;margin:6px 0}}
details.sample>summary{{display:grid;grid-template-columns:minmax(150px,1.4fr) 90px minmax(120px,2fr) 130px 90px;
  gap:10px;padding:7px 10px;cursor:pointer;align-items:baseline}}
summary .id{{font-family:ui-monospace,monospace;overflow-wrap:anywhere}}
.v{{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;text-align:center}}
.v-right,.v-passed{{background:#dcf2e3;color:#155d2c}} .v-wrong,.v-failed{{background:#fbe0df;color:#8a1c16}}
.v-no-answer{{background:#fdf0cf;color:#6d5100}} .v-error{{background:#e6e1f5;color:#3c2a80}}
.num{{color:#5b6673;font-variant-numeric:tabular-nums;text-align:right}}
.body{{padding:4px 12px 12px;border-top:1px solid #eef1f4}}
.body h3{{font-size:13px;margin:10px 0 4px;color:#5b6673}}
pre{{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:8px;background:#f5f7f9;border-radius:4px;
  font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:420px;overflow:auto}}
.kv{{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}} .kv span:nth-child(odd){{color:#5b6673}}
#empty{{color:#5b6673;padding:20px 0}}
</style></head>
<body>
<header><h1>{title}</h1><dl>{facts}</dl></header>
<div id="controls" role="search">
  <span id="filters" aria-label="verdicts"></span>
  <input id="search" type="search" placeholder="search prompt, response, answer, item id" aria-label="search">
  <span id="count"></span>
</div>
<main><div id="list"></div><p id="empty" hidden>No sample matches these filters.</p></main>
<script type="application/json" id="evalcore-samples">{data}</script>
<script>
"use strict";
(function () {{
  var payload = JSON.parse(document.getElementById("evalcore-samples").textContent);
  var samples = payload.samples;
  var list = document.getElementById("list");
  var filters = document.getElementById("filters");
  var search = document.getElementById("search");
  var count = document.getElementById("count");
  var empty = document.getElementById("empty");
  var checks = {{}};

  function el(tag, cls, text) {{
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }}
  function slug(v) {{ return v.replace(/[^a-z]+/g, "-"); }}
  function shown(v) {{ return v === null || v === undefined || v === "" ? "—" : String(v); }}
  function known(v) {{ return v === null || v === undefined ? "unknown" : String(v); }}
  function hashKey(v) {{ return v.replace(/ /g, "_"); }}  // #verdict=parse_failure
  function fromKey(v) {{ return v.replace(/[_-]/g, " "); }}

  var counts = {{}};
  samples.forEach(function (s) {{ counts[s.verdict] = (counts[s.verdict] || 0) + 1; }});
  payload.meta.verdicts.forEach(function (v) {{
    if (!counts[v]) return;
    var label = el("label");
    var box = el("input");
    box.type = "checkbox"; box.checked = true; box.value = v; box.id = "verdict-" + slug(v);
    box.addEventListener("change", function () {{ apply(true); }});
    checks[v] = box;
    label.appendChild(box);
    label.appendChild(el("span", "v v-" + slug(v), v));
    label.appendChild(el("span", "num", counts[v]));
    filters.appendChild(label);
  }});

  var rows = samples.map(function (s, i) {{
    var d = el("details", "sample");
    d.dataset.verdict = s.verdict;
    d.dataset.index = String(i);
    var sum = el("summary");
    sum.title = "show the prompt, the response and how it was scored";
    sum.appendChild(el("span", "id", s.item_id + (s.epoch ? " · epoch " + s.epoch : "")));
    var badge = el("span", "v v-" + slug(s.verdict), s.verdict);
    var vcell = el("span"); vcell.appendChild(badge); sum.appendChild(vcell);
    var answer = s.error ? s.error : s.result !== null && s.result !== undefined ? s.result
      : shown(s.extracted) + (s.method ? " (" + s.method + ")" : "") + "  ·  reference " + shown(s.reference);
    sum.appendChild(el("span", "answer", answer));
    sum.appendChild(el("span", "num", s.prompt_tokens === null && s.completion_tokens === null ? "tokens unknown"
      : known(s.prompt_tokens) + " → " + known(s.completion_tokens) + " tok"));
    sum.appendChild(el("span", "num", s.latency_s === null ? "latency unknown"
      : s.latency_s.toFixed(2) + " s" + (s.cached ? " (cache)" : "")));
    d.appendChild(sum);
    d.addEventListener("toggle", function () {{
      if (d.open && !d.dataset.filled) {{ fill(d, s); d.dataset.filled = "1"; }}
    }});
    list.appendChild(d);
    s._text = [s.item_id, s.response, s.reference, s.extracted, s.extracted_strict, s.result, s.error,
               s.subject].concat(s.messages.map(function (m) {{ return m.content; }}))
               .filter(function (x) {{ return x !== null && x !== undefined; }}).join("\\n").toLowerCase();
    return d;
  }});

  function fill(d, s) {{
    var body = el("div", "body");
    s.messages.forEach(function (m) {{
      body.appendChild(el("h3", null, "prompt · " + m.role));
      body.appendChild(el("pre", "prompt", m.content));
    }});
    body.appendChild(el("h3", null, "response"));
    body.appendChild(el("pre", "response", s.response || "(empty)"));
    body.appendChild(el("h3", null, "scoring"));
    var kv = el("div", "kv");
    var pairs = [["verdict", s.verdict], ["reference", shown(s.reference)]];
    if (s.result !== null && s.result !== undefined) pairs.push(["sandbox", s.result]);
    if (s.method !== null && s.method !== undefined) {{
      var both = s.method_strict !== null && s.method_strict !== undefined;
      pairs.push([both ? "extracted (flexible)" : "extracted", shown(s.extracted) + " via " + s.method]);
      if (both) pairs.push(["extracted (strict)", shown(s.extracted_strict) + " via " + s.method_strict]);
    }}
    if (s.subject) pairs.push(["subject", s.subject]);
    pairs.push(["tokens", known(s.prompt_tokens) + " prompt, " + known(s.completion_tokens) + " completion"]);
    pairs.push(["latency", s.latency_s === null ? "unknown (not in the log)"
      : s.latency_s.toFixed(3) + " s" + (s.cached ? " (answered from the response cache)" : "")]);
    if (s.error) pairs.push(["error", s.error]);
    pairs.forEach(function (p) {{ kv.appendChild(el("span", null, p[0])); kv.appendChild(el("span", null, p[1])); }});
    body.appendChild(kv);
    d.appendChild(body);
  }}

  function apply(toHash) {{
    var q = search.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (d, i) {{
      var s = samples[i];
      var ok = (!checks[s.verdict] || checks[s.verdict].checked) && (!q || s._text.indexOf(q) >= 0);
      d.hidden = !ok;
      if (ok) n += 1;
    }});
    count.textContent = "showing " + n + " of " + samples.length;
    empty.hidden = n > 0;
    if (toHash) {{
      var off = Object.keys(checks).filter(function (v) {{ return !checks[v].checked; }});
      var parts = [];
      if (off.length) parts.push("verdict=" + Object.keys(checks).filter(function (v) {{ return checks[v].checked; }})
        .map(function (v) {{ return encodeURIComponent(hashKey(v)); }}).join(","));
      if (q) parts.push("q=" + encodeURIComponent(search.value.trim()));
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    }}
  }}

  function decode(text) {{
    try {{ return decodeURIComponent(text); }} catch (e) {{ return text; }}  // a malformed link: as typed
  }}
  function fromHash() {{
    var params = {{}};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {{
      if (!kv) return;
      var i = kv.indexOf("=");
      params[decode(kv.slice(0, i < 0 ? kv.length : i))] = i < 0 ? "" : decode(kv.slice(i + 1));
    }});
    if (params.verdict !== undefined) {{
      var want = params.verdict.split(",").map(fromKey);
      Object.keys(checks).forEach(function (v) {{ checks[v].checked = want.indexOf(v) >= 0; }});
    }}
    search.value = params.q || "";
    apply(false);
  }}

  var timer = null;
  search.addEventListener("input", function () {{
    clearTimeout(timer);
    timer = setTimeout(function () {{ apply(true); }}, 120);
  }});
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.ready = "1";
}})();
</script>
</body></html>
"""


def _browser_csp() -> str:
    import re

    from evalcore.reporting._export import content_security_policy

    page = _PAGE.format(title="", facts="", csp="", data="")
    return content_security_policy(re.findall(r"<script>(.*?)</script>", page, re.DOTALL)[-1])


_BROWSER_CSP = _browser_csp()
