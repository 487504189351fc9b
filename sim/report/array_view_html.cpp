// The --show-format html page: one file, inline CSS and JS, no external resources, so it opens
// from a mail attachment or a course page offline. The data is a JSON object; the script draws
// one cycle at a time and the buttons, the slider and the arrow keys move between cycles.

#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/array_view.h"

namespace tpusim::sim {
namespace {

// Buttons use U+25C0 and U+25B6, which DejaVu and most fonts have; the media-control glyphs
// U+23EE and U+23ED showed as empty boxes in Debian's headless Chromium.
const char* kPage = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>@TITLE@</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table.grid { border-collapse: collapse; margin: 0.8em 0; }
table.grid td, table.grid th { border: 1px solid #bbb; padding: 0.35em 0.6em; text-align: center;
  font-family: monospace; min-width: 6em; }
td.busy { background: #ffe9a8; }
td.idle { color: #aaa; }
#controls button { font-size: 1em; margin-right: 0.3em; }
#slider { width: 40em; max-width: 90%; vertical-align: middle; }
#events li { font-family: monospace; }
.legend { color: #555; font-size: 0.9em; max-width: 50em; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<p id="flow" class="legend"></p>
<div id="controls">
<button id="first" title="first cycle">|&#x25C0;</button>
<button id="prev" title="previous cycle (left arrow)">&#x25C0;</button>
<button id="play" title="play / pause">play</button>
<button id="next" title="next cycle (right arrow)">&#x25B6;</button>
<button id="last" title="last cycle">&#x25B6;|</button>
<input id="slider" type="range" min="0" value="0">
<span id="label"></span>
</div>
<p id="edge"></p>
<table class="grid" id="grid"></table>
<ul id="events"></ul>
<p class="legend">Each cell is PE(r,c) during the cycle shown: <b>a*w=s</b> means it multiplies
@PRODUCT@ and latches the sum s at the end of the cycle. @IDLE@ A cycle number t in an
event means the value is usable from cycle t on (the fast model's end-of-cycle convention).</p>
<script>
const D = @DATA@;
let index = 0, timer = null;
const $ = (id) => document.getElementById(id);
function cellText(p) {
  if (p[0]) return p[1] + "*" + p[2] + "=" + p[4];
  return D.keeps ? "[" + p[4] + "]" : "(" + p[2] + ")";
}
function show(k) {
  index = Math.max(0, Math.min(D.frames.length - 1, k));
  const f = D.frames[index];
  $("slider").value = index;
  $("label").textContent = "cycle " + f.t + " (" + (index + 1) + " of " + D.frames.length + ")" +
      (f.last > f.t ? ", idle to cycle " + f.last : "");
  $("edge").textContent = f.edge ? "edge: " + f.edge : "";
  const grid = $("grid");
  grid.innerHTML = "";
  const head = document.createElement("tr");
  head.appendChild(document.createElement("th"));
  for (let c = 0; c < D.cols; c++) {
    const th = document.createElement("th");
    th.textContent = "c" + c;
    head.appendChild(th);
  }
  grid.appendChild(head);
  for (let r = 0; r < D.rows; r++) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.textContent = "r" + r;
    tr.appendChild(th);
    for (let c = 0; c < D.cols; c++) {
      const p = f.pes[r * D.cols + c];
      const td = document.createElement("td");
      td.textContent = cellText(p);
      td.className = p[0] ? "busy" : "idle";
      tr.appendChild(td);
    }
    grid.appendChild(tr);
  }
  // The events since the previous cycle shown; the last cycle also gets those after it (results
  // that reach accumulator memory once the array has drained).
  const list = $("events");
  list.innerHTML = "";
  const after = index > 0 ? D.frames[index - 1].last : -1;
  const last = index === D.frames.length - 1;
  for (const e of D.events) {
    if (e[0] <= after || (e[0] > f.last && !last)) continue;
    const li = document.createElement("li");
    li.textContent = "cycle " + e[0] + ": " + e[1];
    list.appendChild(li);
  }
}
function play() {
  if (timer) { clearInterval(timer); timer = null; $("play").textContent = "play"; return; }
  $("play").textContent = "pause";
  timer = setInterval(() => {
    if (index + 1 >= D.frames.length) { play(); return; }
    show(index + 1);
  }, 600);
}
$("flow").textContent = D.flow;
$("slider").max = D.frames.length - 1;
$("first").onclick = () => show(0);
$("prev").onclick = () => show(index - 1);
$("next").onclick = () => show(index + 1);
$("last").onclick = () => show(D.frames.length - 1);
$("play").onclick = play;
$("slider").oninput = (e) => show(Number(e.target.value));
document.onkeydown = (e) => {
  if (e.key === "ArrowRight") show(index + 1);
  if (e.key === "ArrowLeft") show(index - 1);
};
show(0);
</script>
</body>
</html>
)HTML";

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

void replace(std::string& s, const std::string& key, const std::string& value) {
  for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
    s.replace(at, key.size(), value);
}

}  // namespace

std::string render_show_html(const ArrayRecording& rec, const std::string& title) {
  using nlohmann::json;
  const bool keeps = rec.dataflow() == Dataflow::kOutputStationary;
  json data;
  data["rows"] = rec.rows();
  data["cols"] = rec.cols();
  data["keeps"] = keeps;
  data["flow"] = std::string(dataflow_name(rec.dataflow())) + " dataflow, " +
                 std::to_string(rec.rows()) + "x" + std::to_string(rec.cols()) + " array";
  json frames = json::array();
  // The page starts where the array first does something: the cycles before are all alike
  // (the text view prints them as one "idle" line).
  const auto& all = rec.frames();
  std::size_t first = 0;
  while (first + 1 < all.size() && !all[first].active()) ++first;
  for (std::size_t i = first; i < all.size(); ++i) {
    const ArrayRecording::Frame& f = all[i];
    json pes = json::array();
    for (const auto& p : f.pes)
      pes.push_back({p.a_valid ? 1 : 0, p.a, p.w, p.ps_valid ? 1 : 0, p.ps});
    std::string edge;
    if (f.in.in_valid)
      edge += f.in.in_tag ? "new item enters (first of its tile or fold)" : "new item enters";
    if (f.in.wl_valid)
      edge +=
          std::string(edge.empty() ? "" : "; ") + "load-chain row " + std::to_string(f.in.wl_row);
    if (f.in.cap) edge += std::string(edge.empty() ? "" : "; ") + "capture results, row 0 leaves";
    if (f.in.shift) edge += std::string(edge.empty() ? "" : "; ") + "next result row leaves";
    frames.push_back({{"t", f.t}, {"last", f.last}, {"edge", edge}, {"pes", pes}});
  }
  data["frames"] = frames;
  json events = json::array();
  for (const auto& e : rec.events()) events.push_back({e.cycle, e.text});
  data["events"] = events;

  std::string page = kPage;
  // "</" inside the JSON could close the script element early; JSON allows "<\/" for it.
  std::string payload = data.dump();
  replace(payload, "</", "<\\/");
  replace(page, "@TITLE@", escape_html(title));
  const CellLegend legend = cell_legend(rec.dataflow());
  replace(page, "@PRODUCT@", legend.product);
  replace(page, "@IDLE@", std::string("<b>") + legend.symbol + "</b>: " + legend.idle + ".");
  replace(page, "@DATA@", payload);
  return page;
}

}  // namespace tpusim::sim
