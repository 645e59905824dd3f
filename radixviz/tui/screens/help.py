"""The help screen: every key of the stepper and how to read the panes."""
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
    "that did this step is marked ❱, lines that only report steps to this viewer are dim. "
    "Bottom left, the KV pool, one cell per slot. Bottom right, what the step did and why.\n\n"
    "Marks have symbols as well as colours: ▶ current step, ✗ wrongly matched (the pre-#7 "
    "bug), ✂ just split, ✓ matched, + new, ● locked, † evicted. The tokens a buggy match "
    "takes wrongly are shown between ⟦ ⟧.\n\n"
    'Operations (press : or i): insert "Hello", match "Hello", lock "Hello", unlock "Hello", '
    "evict 5, matcher fixed|buggy, reset, tokens 12 7 3 (token ids). Separate several with ;. "
    "They run on the newest state of the cache, and the view jumps to their first step.")


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

    def action_dismiss(self) -> None:
        self.dismiss(None)
