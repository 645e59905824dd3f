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
