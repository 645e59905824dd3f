"""No new code path is picked by an engine's capability flag: views, sessions and commands
dispatch on what they hold (the snapshot's type, render/views/; an option's declaration,
cache/options.py), and the registry (radixviz/cache/engines.py) is the one place that reads
the flags freely.

Read from the source as text (nothing is imported), as tests/test_layers.py reads imports:
every read of a flag (``spec.host_tier``, ``engine_spec(name).pages``, ``spec.has("...")``)
outside engines.py is counted per file and held to ALLOWED, today's remaining reads. The
table may only shrink: a file reading more flags than it lists fails, and so does one reading
fewer (lower its number, or drop the line, in the same change). A field of the same name on
another object is no flag (``record.kv_events``, a snapshot's ``self.kv_events``, the module
``cache.kv_events``, a server's ``self.priorities``): NOT_A_FLAG takes those forms out first.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "radixviz"
REGISTRY = PACKAGE / "cache" / "engines.py"
FLAG_READ = re.compile(r"\.(host_tier|matcher_switch|release_insert|pages|eviction_policies|node_stats"
                       r"|priorities|namespaces|kv_events)\b|has\(\"")
# same-named fields and modules that are not an engine's flags: an operation record's events,
# the --events argument, an object's own field, a module named kv_events in an import, a
# run's totals of tokens the host tier moved (SimStats.host_tier)
NOT_A_FLAG = re.compile(r"\b(?:record|r|args|self)\.(?:kv_events|priorities)\b|records\[[^\]]*\]\.kv_events\b"
                        r"|\.(?:kv_events|pages) import\b|\b(?:stats|self)\.host_tier\b")

# file (from the repository root) -> reads of a capability flag it still makes
ALLOWED = {
    "radixviz/commands/simulate.py": 9,
}
# files that must read none: the views that dispatch on the snapshot's type (issue 31)
NONE_HERE = ("radixviz/render/tree.py", "radixviz/render/tree_rows.py", "radixviz/render/graphviz.py",
             "radixviz/render/views", "radixviz/render/marks.py", "radixviz/render/badge.py",
             "radixviz/render/compare_dot.py", "radixviz/lessons/lesson/checker.py")


def flag_reads() -> dict:
    """File -> ["line: text", ...] of every capability-flag read outside the registry."""
    found: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == REGISTRY:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FLAG_READ.search(NOT_A_FLAG.sub("", line)):
                found.setdefault(str(path.relative_to(ROOT)), []).append(f"{number}: {line.strip()}")
    return found


def test_no_new_capability_flag_read():
    over = {file: lines for file, lines in flag_reads().items() if len(lines) > ALLOWED.get(file, 0)}
    assert not over, ("capability flags read outside radixviz/cache/engines.py (dispatch on the "
                      "snapshot's type, render/views/, or on an option's declaration instead):\n"
                      + "\n".join(f"{file} ({len(lines)}, allowed {ALLOWED.get(file, 0)}):\n  "
                                  + "\n  ".join(lines) for file, lines in over.items()))


def test_the_allowlist_only_shrinks():
    reads = flag_reads()
    stale = {file: (allowed, len(reads.get(file, ()))) for file, allowed in ALLOWED.items()
             if len(reads.get(file, ())) < allowed}
    assert not stale, "fewer reads than ALLOWED lists: lower these numbers (or drop the line): " + ", ".join(
        f"{file} {allowed} -> {now}" for file, (allowed, now) in stale.items())


def test_the_views_read_no_flag():
    reads = flag_reads()
    wrong = [file for file in reads if file.startswith(NONE_HERE)]
    assert not wrong, f"these dispatch on the snapshot's type and read no flag: {wrong}"


def test_the_pattern_sees_a_read():
    # the test itself can fail: a line of each kind is caught
    assert FLAG_READ.search("if engine_spec(tree.engine).host_tier:")
    assert FLAG_READ.search('self.need("namespaces") or spec.has("pages")')
    assert not FLAG_READ.search("tree.page_size")
    for other in ("if record.kv_events:", "from radixviz.cache.kv_events import MEDIUM_GPU",
                  "self.priorities.watch(pid)", "events = session.records[-1].kv_events",
                  "if point.stats.host_tier:"):
        assert not FLAG_READ.search(NOT_A_FLAG.sub("", other)), other
    assert FLAG_READ.search(NOT_A_FLAG.sub("", "if not self.spec.kv_events:"))
