"""No code path is picked by an engine's capability flag outside the registry: views,
sessions, commands and the simulation dispatch on what they hold (the snapshot's type,
render/views/; the report's type, render/sim_report.py), on an option's declaration
(``spec.takes("kv_events")``, cache/options.py), on the hooks of the engine's own parts
(script/ops/, sim/engines/), or ask the registry a question (``engines_with("pages")``,
``op_owners("matcher")``). radixviz/cache/engines.py is the one place that reads the flags.

Read from the source as text (nothing is imported), as tests/test_layers.py reads imports:
any read of a flag (``spec.host_tier``, ``engine_spec(name).pages``, ``spec.has("...")``)
outside engines.py fails, with its file and line. A flag that is only *shown* would need a
narrow, commented exception here; there is none today. A field of the same name on another
object is no flag (``record.kv_events``, a snapshot's ``self.kv_events``, the module
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
                        r"|\b(?:lesson|self)\.pages\b"   # a lesson's pages (lessons/lesson/model.py)
                        r"|\.(?:kv_events|pages) import\b|\b(?:stats|self)\.host_tier\b")


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


def test_no_capability_flag_read_outside_the_registry():
    reads = flag_reads()
    assert not reads, ("capability flags read outside radixviz/cache/engines.py (dispatch on the "
                       "snapshot's or report's type, an option's declaration, the engine's own "
                       "parts, or ask the registry a question instead):\n"
                       + "\n".join(f"{file}:\n  " + "\n  ".join(lines) for file, lines in reads.items()))


def test_the_pattern_sees_a_read():
    # the test itself can fail: a line of each kind is caught
    assert FLAG_READ.search("if engine_spec(tree.engine).host_tier:")
    assert FLAG_READ.search('self.need("namespaces") or spec.has("pages")')
    assert not FLAG_READ.search("tree.page_size")
    for other in ("pages = lesson.pages", "if record.kv_events:", "from radixviz.cache.kv_events import MEDIUM_GPU",
                  "self.priorities.watch(pid)", "events = session.records[-1].kv_events",
                  "if point.stats.host_tier:"):
        assert not FLAG_READ.search(NOT_A_FLAG.sub("", other)), other
    assert FLAG_READ.search(NOT_A_FLAG.sub("", "if not self.spec.kv_events:"))
