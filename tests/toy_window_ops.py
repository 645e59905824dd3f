"""The toy window engine's own script operation, ``slide``, and its words in the narration
(tests/toy_window.py names this module in its spec: ``script="toy_window_ops"``,
``ops=("slide",)``; another engine refuses ``slide``).

``slide`` trims the tree to the window: every unlocked node deeper than ``window`` tokens
leaves the tree with everything below it, and its slots go back to the pool. The toy reads
its window as a cap on how far into a prompt the cache keeps tokens: the front of a prompt
(a shared system prompt, a few-shot header) is what the next request most likely shares, the
tail is one request's own. A locked path stays whole: a running request still reads it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from radixviz.cache.text import key_text, slot_ranges
from radixviz.script.ops import EngineOps
from radixviz.script.parser import Op

WHY = {
    "op": "slide trims the tree to the window: the tokens deeper than it go back to the pool. "
          "Predict which nodes go: every unlocked one below depth window.",
    "slide.drop": "This node sits one token past the window, and no lock holds it, so it goes with "
                  "everything below it (a lock would have held its whole path to the root).",
    "slide.result": "The call returns how many tokens left the tree; the front of every prompt, up "
                    "to the window, stays for the next request to share.",
}


def describe(frame) -> str | None:
    """The line of a ``slide`` step, or None (narrate.py's words serve the rest)."""
    d = frame.data
    if frame.label == "slide.drop":
        return (f"slide: drop {key_text(d['key'])} and what hangs below it, {d['tokens']} token(s) "
                f"past depth {d['window']}")
    if frame.label == "slide.result":
        return f"slide returns {d['dropped']}: token(s) deeper than the window of {d['window']} are gone"
    if frame.kind == "op" and d.get("name") == "slide":
        return f"▶ {d['text']}: keep {frame.tree.window} token(s) of every prompt, drop the rest"
    return None


def explain(frame) -> str | None:
    if frame.kind == "op" and frame.data.get("name") != "slide":
        return None
    return WHY.get("op" if frame.kind == "op" else frame.label)


class WindowOps(EngineOps):
    """The toy window engine's session handlers."""

    ways_to_room = "slide, evict, unlock or reset"

    def precheck(self, op: Op, refuse: Callable[[str], Any]) -> None:
        if op.name == "slide" and op.count is not None:
            refuse(f"slide takes no number: it trims to the window ({self.session.engine.settings['window']}); "
                   "window N sets another")

    def _do_slide(self, op: Op) -> dict:  # step: op.slide
        freed: list = []
        dropped = self.session.engine.slide(lambda slots: freed.extend(slots.tolist()))
        return {"window": self.session.engine.settings["window"], "dropped": dropped,
                "freed_slots": freed}


def summary(result: dict) -> str:
    """``run``'s words for a ``slide``'s result."""
    return (f"dropped {result['dropped']} token(s) deeper than {result['window']}"
            + (f" (slots {slot_ranges(result['freed_slots'])})" if result["freed_slots"] else ""))


OPS = WindowOps
