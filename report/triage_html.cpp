#include "report/triage_html.h"

#include "base/printable.h"

#include "report/triage_json.h"

namespace hangpy::report {
namespace {

// The page around the data. The script lays the tree out itself (each subtree as wide as its
// widest level, a parent centred over its children), so the page needs no Graphviz and no
// library: a few hundred lines would be the cost of a dependency nobody can fetch offline.
constexpr const char* kPageHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>hangpy triage</title>
<style>
body { font-family: sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px 0; }
#verdict { font-size: 15px; padding: 8px 12px; border-left: 5px solid #d62728; background: #fdf2f2; margin-bottom: 12px; }
#verdict.alike { border-left-color: #2ca02c; background: #f2fbf2; }
#groups { list-style: none; padding: 0; margin: 0 0 12px 0; }
#groups li { margin: 3px 0; font-size: 13px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: middle; border-radius: 2px; }
.outlier-tag { color: #d62728; font-weight: bold; margin-left: 6px; }
#tree { border: 1px solid #ddd; overflow: auto; max-height: 75vh; background: #fcfcfc; }
svg text { font-family: monospace; font-size: 11px; }
svg .edge-label { font-family: sans-serif; font-size: 10px; }
svg g.box { cursor: pointer; }
pre { background: #f6f6f6; padding: 8px; font-size: 12px; overflow: auto; }
.notes { color: #555; font-size: 12px; }
details { margin: 6px 0; }
summary { cursor: pointer; font-size: 13px; }
</style>
</head>
<body>
<h1>hangpy triage</h1>
<div id="verdict"></div>
<div class="notes" id="notes"></div>
<ul id="groups"></ul>
<div class="notes">Click a box to fold or unfold what is below it; hover for all its frames.</div>
<div id="tree"></div>
<h2 style="font-size:16px">Representative stacks</h2>
<div id="stacks"></div>
<script type="application/json" id="triage-data">)HTML";

constexpr const char* kPageTail = R"HTML(</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("triage-data").textContent);
const SVG = "http://www.w3.org/2000/svg";
const CHAR_W = 6.7, LINE_H = 14, PAD = 6, GAP_X = 18, GAP_Y = 46, MAX_LINES = 12;
const OUTLIER = "#d62728", SHARED = "#555555";

function el(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const k in attrs) node.setAttribute(k, attrs[k]);
  if (text !== undefined) node.textContent = text;
  return node;
}
function frameText(f) {
  const base = f.file ? f.file.split("/").pop() : "";
  if (f.kind === "python") return "`" + f.function + "` at " + base + ":" + (f.line === null ? "?" : f.line);
  return base ? "`" + f.function + "` in " + base : "`" + f.function + "`";
}
function colourOf(box) {
  return box.group === null ? SHARED : data.groups[box.group].colour;
}
function linesOf(box) {
  let lines = box.frames.map(frameText);
  if (lines.length === 0) lines = [data.processes.length + " processes"];
  if (lines.length > MAX_LINES) {
    const head = lines.slice(0, MAX_LINES / 2), tail = lines.slice(lines.length - (MAX_LINES / 2 - 1));
    lines = head.concat(["... " + (lines.length - head.length - tail.length) + " more frames ..."], tail);
  }
  return lines;
}
function measure(box) {
  box.lines = linesOf(box);
  box.w = Math.max(60, Math.max(...box.lines.map(l => l.length)) * CHAR_W + 2 * PAD);
  box.h = box.lines.length * LINE_H + 2 * PAD;
  box.label = box.label || "";
  const shown = box.collapsed ? [] : box.children;
  shown.forEach(measure);
  const childrenW = shown.reduce((s, c) => s + c.span, 0) + GAP_X * Math.max(0, shown.length - 1);
  box.span = Math.max(box.w, childrenW, box.label.length * 5.5);
}
function place(box, left, top) {
  box.x = left + (box.span - box.w) / 2;
  box.y = top;
  let x = left + (box.span - (box.collapsed ? 0 : box.children.reduce((s, c) => s + c.span, 0) + GAP_X * Math.max(0, box.children.length - 1))) / 2;
  let bottom = top + box.h;
  if (!box.collapsed) for (const child of box.children) {
    bottom = Math.max(bottom, place(child, x, top + box.h + GAP_Y));
    x += child.span + GAP_X;
  }
  return bottom;
}
function draw(svg, box) {
  if (!box.collapsed) for (const child of box.children) {
    const x1 = box.x + box.w / 2, y1 = box.y + box.h, x2 = child.x + child.w / 2, y2 = child.y;
    const colour = child.outlier ? OUTLIER : colourOf(child);
    svg.appendChild(el("path", {d: "M" + x1 + "," + y1 + " C" + x1 + "," + (y1 + GAP_Y / 2) + " " + x2 + "," + (y2 - GAP_Y / 2) + " " + x2 + "," + y2,
                                 fill: "none", stroke: colour, "stroke-width": child.outlier ? 3 : 1.5}));
    // Just above the child, where siblings' labels cannot meet (each subtree is as wide as its label).
    svg.appendChild(el("text", {x: child.x + 2, y: y2 - 5, class: "edge-label",
                                 fill: child.outlier ? OUTLIER : "#333", "font-weight": child.outlier ? "bold" : "normal"}, child.label));
    draw(svg, child);
  }
  const g = el("g", {class: "box"});
  g.appendChild(el("title", {}, box.frames.map(frameText).join("\n") + "\n" + box.label));
  g.appendChild(el("rect", {x: box.x, y: box.y, width: box.w, height: box.h, rx: 5,
                             fill: box.outlier ? "#fde0dd" : "#fff", stroke: box.outlier ? OUTLIER : colourOf(box),
                             "stroke-width": box.outlier ? 3 : 1.5}));
  box.lines.forEach((line, i) => g.appendChild(el("text", {x: box.x + PAD, y: box.y + PAD + (i + 1) * LINE_H - 3}, line)));
  if (box.collapsed && box.children.length)
    g.appendChild(el("text", {x: box.x + box.w - 14, y: box.y + box.h - 3, fill: "#999"}, "+"));
  g.addEventListener("click", () => { box.collapsed = !box.collapsed; render(); });
  svg.appendChild(g);
}
function render() {
  const holder = document.getElementById("tree");
  holder.textContent = "";
  if (!data.tree) return;
  measure(data.tree);
  const bottom = place(data.tree, 10, 10);
  const svg = el("svg", {width: data.tree.span + 20, height: bottom + 20, xmlns: SVG});
  draw(svg, data.tree);
  holder.appendChild(svg);
}
function stackText(group) {
  const lines = [];
  for (const stack of group.stacks) {
    const names = stack.threads.map(t => (t.name ? '"' + t.name + '"' : (t.asyncio_task ? "task" : "thread")) + (t.native_thread_id === null ? "" : " (LWP " + t.native_thread_id + ")"));
    if (stack.threads_not_listed) names.push("... (" + stack.threads_not_listed + " more)");
    const tasks = stack.asyncio_tasks === stack.count;
    lines.push(stack.count > 1 ? "\u00d7" + stack.count + (tasks ? " asyncio tasks" : " threads") + " alike: " + names.join(", ")
                               : (tasks ? "asyncio task " : "Thread ") + names.join(", "));
    if (stack.blocked_on) lines.push("    " + (tasks ? "Awaiting: " : "Blocked on: ") + stack.blocked_on);
    for (const f of stack.frames)
      lines.push("    " + (f.kind === "python" ? 'File "' + f.file + '", line ' + f.line + ", in " + f.function : f.function + (f.file ? " in " + f.file : "")));
  }
  return lines.join("\n");
}
(function () {
  const verdict = document.getElementById("verdict");
  verdict.textContent = data.verdict;
  if (data.verdict_kind === "all_alike") verdict.className = "alike";
  document.getElementById("notes").textContent = data.notes.join("; ");
  const list = document.getElementById("groups"), stacks = document.getElementById("stacks");
  data.groups.forEach((group, i) => {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = group.colour;
    item.appendChild(swatch);
    item.appendChild(document.createTextNode("Group " + (i + 1) + ": " + group.description));
    if (group.outlier) {
      const tag = document.createElement("span");
      tag.className = "outlier-tag";
      tag.textContent = "outlier";
      item.appendChild(tag);
    }
    list.appendChild(item);
    const details = document.createElement("details");
    if (group.outlier) details.open = true;
    const summary = document.createElement("summary");
    summary.textContent = "Group " + (i + 1) + ": " + data.processes[group.representative].name + ", from " + data.processes[group.representative].source;
    summary.style.color = group.colour;
    details.appendChild(summary);
    const pre = document.createElement("pre");
    pre.textContent = stackText(group);
    details.appendChild(pre);
    stacks.appendChild(details);
  });
  render();
})();
</script>
</body>
</html>
)HTML";

}  // namespace

// Every string the page shows as the processes gave it, with control characters written as \xNN
// (JSON would carry them through to the page raw).
static void escape_strings(nlohmann::json& value) {
  if (value.is_string()) {
    value = for_terminal(value.get_ref<const std::string&>(), true);
  } else if (value.is_structured()) {
    for (auto& item : value) escape_strings(item);
  }
}

std::string triage_html(const triage::Triage& triage) {
  nlohmann::json document = triage_document(triage);
  escape_strings(document);
  std::string data = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Inside <script> a "</script" or "<!--" would end or change the element: '<' only ever appears
  // inside JSON strings, where \u003c says the same.
  std::string escaped;
  escaped.reserve(data.size());
  for (char c : data) {
    if (c == '<') escaped += "\\u003c";
    else escaped += c;
  }
  return std::string(kPageHead) + escaped + kPageTail;
}

}  // namespace hangpy::report
