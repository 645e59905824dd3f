"""The help screen: the keys of the screen that opened it and how to read that screen."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from radixviz.tui.palette import key_label

GUIDE = (
    "Top left, the radix tree: one line per node with its edge, its KV slots, its reference "
    "count (ref) and its last access time (t). Top right, the engine's own source: the line "
    "that did this step is marked ❱; lines that only report steps to this viewer are hidden "
    "(t shows them, dim). "
    "Bottom left, the KV pool, one cell per slot. Bottom right, what the step did and why.\n\n"
    "Marks have symbols as well as colours: ▶ current step, ✗ wrongly matched (the pre-#7 "
    "bug), ✂ just split, ✓ matched, + new, ● locked, † evicted. The tokens a buggy match "
    "takes wrongly are shown between ⟦ ⟧.\n\n"
    'Operations (press : or i): insert "Hello", match "Hello", lock "Hello", unlock "Hello", '
    "evict 5, matcher fixed|buggy, reset, tokens 12 7 3 (token ids). Separate several with ;. "
    'On the 2026 engine a key may end with ns NAME (a namespace: insert "Hi" ns lora-a), and '
    "events on starts a cache that hashes its pages and reports KV events (k shows the log). "
    "They run on the newest state of the cache, and the view jumps to their first step.")

LESSON_GUIDE = "\n\n".join((
    "→ walks the lesson: a paragraph, then a prediction docked beside the tree (a, b, c picks "
    "an option; a free answer says what form it takes; esc skips it), then the operations that "
    "answer it, step by step, then your answer, right or wrong and why, with its explanation, "
    "then the next paragraph, and so on to the end. ] jumps a whole operation.",
    "Text longer than its pane: → shows the next screenful before going on, pgup and pgdn "
    "scroll it, and the pane's border says ▼ more. ← walks back and shows the same text again.",
    "r switches between reading (the lesson's text across the whole screen, chosen by itself "
    "for paragraphs on screens smaller than 100×32) and watching (the tree and pool beside it).",
    "Typing an operation (:), undo (u), the other matcher (b) and a node's lock, unlock or "
    "evict open a sandbox copy of the lesson: the lesson keeps its own operations, so every "
    "prediction is answered on the tree you see. h in the copy comes back here.",
    GUIDE.split("\n\n")[1],
))

# paragraphs without hard line breaks: the help pane wraps them to its width
SCHEDULER_GUIDE = "\n\n".join((
    "Each step is one forward pass of the first release's scheduler loop.",
    "A prefill pass matches every waiting request against the tree, lines them up in the "
    "policy's order and offers places. Left, top: that queue. hit is the matched prefix; need "
    "the tokens this request would add to the batch (new prompt + max new tokens + what the "
    "batch already holds); room the free slots plus what the tree could evict minus what the "
    "running requests will still write; Δlock how much locking its prefix took from the "
    "evictable room. ✓ admitted, ✗ no room, ↶ fitted until its prefix was locked, ≥ prefill "
    "token cap, ⏸ held back (--hold-back-shared-prefix, a rule SGLang never had), · never "
    "reached (no free request row); \"sorted last (#2442)\" marks a request --delay-shared-prefix "
    "moved to the back of the queue.",
    "Left, bottom: the running batch. + admitted in this pass, ▸ decoding, ✔ finished (its "
    "tokens went into the tree), ↩ retracted or deferred for lack of memory, ⊘ refused, ↪ the "
    "next turn of a chat arriving.",
    "Right: the radix tree after the pass (+ new nodes, † evicted leaves, ● locked by a running "
    "request) and the KV pool (■ tree, 2 shared, □ request only, · free); g shows every slot. "
    "The bottom line adds up the run so far: hit rate, prompt tokens reused, tokens computed, "
    "tokens evicted, and ✔ finished, ↩ retracted, ⊘ refused requests.",
))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def __init__(self, bindings, guide: str = GUIDE):
        """``bindings``: the screen's keys, one row each; ``guide``: how to read that screen."""
        super().__init__()
        self._bindings_shown, self.guide = bindings, guide

    def compose(self) -> ComposeResult:
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for binding in self._bindings_shown:
            if binding.description:
                table.add_row(key_label(binding.key), binding.tooltip or binding.description)
        with VerticalScroll(id="help-body"):
            yield Static(Text("radixviz — keys (esc closes)", style="bold"))
            yield Static(table)
            yield Static(Text(self.guide), id="help-guide")

    # Textual's is async with a result; a sync one without is called the same way (any action may be)
    def action_dismiss(self) -> None:   # type: ignore[override]
        self.dismiss(None)
