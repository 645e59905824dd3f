"""The exported page's style sheet and script, inlined into every page (nothing is fetched).

Without the script every step shows, one after another (as in print); the script adds the
``js`` class, shows one step at a time and keeps the step number in the URL fragment.
"""

STYLE = """
:root { --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --panel: #f6f8fa; --line: #d1d9e0;
  --accent: #1f6feb; --ok: #1a7f37; --bad: #d1242f; --warn: #9a6700; --lock: #8250df;
  --touched: #fff8c5; --code-hi: #ddf4ff; }
:root.theme-dark { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --panel: #161b22; --line: #30363d;
  --accent: #58a6ff; --ok: #56d364; --bad: #ff7b72; --warn: #e3b341; --lock: #d2a8ff;
  --touched: #4b3500; --code-hi: #0c2d6b; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
header.bar { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; gap: .6em 1em;
  align-items: center; padding: .5em 1em; background: var(--panel); border-bottom: 1px solid var(--line); }
header.bar h1 { font-size: 1.05em; margin: 0; flex: 1 1 16em; }
.controls { display: none; align-items: center; gap: .5em; flex: 2 1 24em; }
.js .controls { display: flex; }
.controls input[type=range] { flex: 1; accent-color: var(--accent); }
.controls button { font: inherit; padding: .15em .7em; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); cursor: pointer; }
.counter { font-variant-numeric: tabular-nums; white-space: nowrap; }
.hint { color: var(--muted); font-size: .85em; }
main { padding: 0 1em 2em; }
section.step { display: grid; grid-template-columns: minmax(0, 3fr) minmax(18em, 2fr); gap: 1em;
  padding: 1em 0; border-bottom: 1px solid var(--line); }
.js section.step { display: none; border-bottom: 0; }
.js section.step.current { display: grid; }
.tree { margin: 0; text-align: center; }
.tree svg { max-width: 100%; min-width: min(100%, 26em); max-height: 85vh; height: auto; }
.side { display: flex; flex-direction: column; gap: .7em; min-width: 0; }
.side h2 { font-size: .8em; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 0 0 .2em; }
.what { font-weight: 600; }
.why { color: var(--muted); }
.lesson { background: var(--panel); border-left: 3px solid var(--accent); padding: .3em .8em; }
.lesson p { margin: .4em 0; }
.lesson h1 { font-size: 1.2em; }
.lesson h2, .lesson h3 { font-size: 1.05em; text-transform: none; letter-spacing: 0; color: var(--fg); }
.predict { border: 1px solid var(--accent); border-radius: 6px; padding: .4em .8em; }
.predict .q { font-weight: 600; }
.predict summary { cursor: pointer; color: var(--accent); }
.diff .wrong { color: var(--bad); font-weight: 700; text-decoration: underline; }
.diff .ok { color: var(--ok); }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; }
pre.code, pre.pool { margin: 0; padding: .4em .6em; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; overflow-x: auto; font-size: 12.5px; line-height: 1.35; }
pre.code .ln { color: var(--muted); user-select: none; }
pre.code .hi { display: inline-block; min-width: 100%; background: var(--code-hi); font-weight: 700; }
pre.code .dim { opacity: .55; }
.where { font-size: .85em; color: var(--muted); }
.where span { margin-right: .5em; }
.p-free { color: var(--muted); } .p-tree { color: var(--ok); } .p-request { color: var(--warn); }
.p-shared { color: var(--lock); font-weight: 700; }
.p-t { background: var(--touched); outline: 1px solid var(--warn); }
.status { font-size: .9em; }
.badge { font-weight: 700; padding: 0 .4em; border-radius: 4px; color: #fff; }
.badge.fixed { background: #1a7f37; } .badge.buggy { background: #d1242f; }
@media (max-width: 800px) { section.step, .js section.step.current { grid-template-columns: 1fr; } }
@media print {
  header.bar { position: static; }
  .controls, .hint { display: none !important; }
  .js section.step, section.step { display: grid !important; break-after: page; page-break-after: always;
    border: 0; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); }
  body { font-size: 11pt; }
}
"""

SCRIPT = r"""
(function () {
  var root = document.documentElement;
  root.classList.add("js");
  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  var total = steps.length, current = 0;
  var slider = document.getElementById("slider");
  var counter = document.getElementById("step-number");
  var opStarts = steps.map(function (s) { return s.dataset.opStart === "1"; });

  function setFragment(k) {
    var fragment = "#step-" + k;
    if (location.hash === fragment) return;
    try { history.replaceState(null, "", fragment); } catch (e) { location.hash = fragment; }
  }
  function show(k) {
    if (!total) return;
    k = Math.max(1, Math.min(total, k | 0));
    if (k === current) return;
    if (current) steps[current - 1].classList.remove("current");
    steps[k - 1].classList.add("current");
    current = k;
    slider.value = k;
    counter.textContent = k;
    setFragment(k);
  }
  function fromFragment() {
    var m = /^#step-(\d+)$/.exec(location.hash);
    return m ? parseInt(m[1], 10) : 1;
  }
  function nextOp(direction) {
    var k = current;
    do { k += direction; } while (k > 1 && k < total && !opStarts[k - 1]);
    show(k);
  }
  window.radixvizShow = show;
  document.getElementById("prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("next").addEventListener("click", function () { show(current + 1); });
  slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
  window.addEventListener("hashchange", function () { show(fromFragment()); });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var t = e.target;
    // the slider moves itself with the arrow keys; a summary opens with space
    if (t === slider || (t && /^(INPUT|TEXTAREA|SELECT|SUMMARY|BUTTON)$/.test(t.tagName) && e.key === " ")) return;
    var moves = { ArrowRight: 1, ArrowLeft: -1, n: 1, p: -1, " ": 1 };
    if (e.key in moves) { show(current + moves[e.key]); }
    else if (e.key === "Home") { show(1); }
    else if (e.key === "End") { show(total); }
    else if (e.key === "]") { nextOp(1); }
    else if (e.key === "[") { nextOp(-1); }
    else return;
    e.preventDefault();
  });
  show(fromFragment());
})();
"""
