"""The stepper's keys: the footer, the help screen and the command palette all read them.

Order matters: the footer shows them in this order and, at 80 columns (compact), has room
for about nine: the ones a person must always find (step, operation, help, home, quit) come
first, the lesser ones after, dropped first on a narrow terminal. The tooltip is the long
description that help and the palette show.
"""
from __future__ import annotations

from textual.binding import Binding

STEPPER_KEYS = [
    Binding("right,space,n", "next", "Next", tooltip="next micro-step (→, space or n)"),
    Binding("left,p", "prev", "Back", tooltip="previous micro-step (← or p)"),
    Binding("home", "first", "First step", tooltip="jump to the first step", show=False),
    Binding("end", "last", "Last step", tooltip="jump to the last step", show=False),
    Binding("right_square_bracket", "next_op", "Next op", key_display="]",
            tooltip="jump to the start of the next operation (in a lesson: play the next block)"),
    Binding("left_square_bracket", "prev_op", "Prev op", key_display="[",
            tooltip="jump back to the start of this (or the previous) operation", show=False),
    Binding("colon,i", "op_input", "Op", key_display=":",
            tooltip="type operations: insert, match, lock, unlock, evict, matcher, reset"),
    Binding("b", "toggle_matcher", "Bug #7",
            tooltip="switch between the fixed matcher and the buggy one from before PR #7 (on the "
                    "host-tier engine: SGLang's 9fbe6800a write_back bugs on or off)"),
    Binding("ctrl+z,u", "undo", "Undo", tooltip="take back the last operation (ctrl+z or u)", show=False),
    Binding("ctrl+y,U", "redo", "Redo", tooltip="apply again what undo took back (ctrl+y or U)", show=False),
    Binding("ctrl+s", "save_script", "Save script", show=False,
            tooltip="save the operations as a script file (radixviz run reads it)"),
    Binding("ctrl+o", "open_script", "Open script", show=False,
            tooltip="open a script file and run its operations here"),
    Binding("c", "compare", "Compare", show=False,
            tooltip="both matchers side by side on these operations, stepping together (#7)"),
    Binding("C", "compare('engines')", "Across time", show=False,
            tooltip="the 2024 and the 2026 engine side by side, stepping together (across time)"),
    # the footer shows about nine keys at 80 columns: help, home and quit must be among them
    Binding("question_mark,f1", "help", "Help", tooltip="this help", key_display="?"),
    Binding("h", "home", "Home", tooltip="back to the home screen"),
    Binding("q", "quit_app", "Quit", tooltip="quit radixviz"),
    Binding("a", "autoplay", "Play", tooltip="autoplay on/off"),
    Binding("plus,equals_sign", "faster", "Faster", tooltip="autoplay faster", show=False),
    Binding("minus", "slower", "Slower", tooltip="autoplay slower", show=False),
    Binding("s", "select_node", "Node",
            tooltip="pick a node: see its key, slots, ref count and access time; lock, unlock or evict"),
    Binding("k", "kv_events", "KV events", show=False,
            tooltip="the KV events log: each page the cache reported stored or removed so far "
                    "(2026 engine after events on)"),
    Binding("v", "verify_kv", "Verify KV", show=False,
            tooltip="replay the operations on real K/V from a tiny model: does reuse equal recompute?"),
    Binding("e", "export", "Export", tooltip="export this step as a Graphviz SVG"),
    Binding("E", "export_all", "Export all",
            tooltip="export every step as SVGs into the export folder", show=False),
    Binding("t", "toggle_trace", "Trace lines", show=False,
            tooltip="show or hide the code pane's tracing lines (if tr.active: tr.emit(...))"),
    Binding("pageup", "scroll_tree(-1)", "Scroll tree up",
            tooltip="scroll the tree up", show=False),
    Binding("pagedown", "scroll_tree(1)", "Scroll tree down",
            tooltip="scroll the tree down", show=False),
    Binding("shift+up", "scroll_text(-1)", "Scroll narration up",
            tooltip="scroll the narration up", show=False),
    Binding("shift+down", "scroll_text(1)", "Scroll narration down",
            tooltip="scroll the narration down", show=False),
    Binding("escape", "close_input", "Close input",
            tooltip="close the operation input (or a dialog)", show=False),
]

# A lesson's keys: the same, with reading first. → also pages through a paragraph that does
# not fit; pgup/pgdn scroll the lesson's text (ctrl+pgup/ctrl+pgdn the tree); everything
# that would change the lesson's operations opens a sandbox copy instead.
LESSON_ONLY = {
    "next": Binding("right,space,n", "next", "Next",
                    tooltip="next step; in a long text the next screenful, then on (→, space or n)"),
    "next_op": Binding("right_square_bracket", "next_op", "Next op", key_display="]", show=False,
                       tooltip="jump to the start of the next operation, then on through the lesson"),
    "op_input": Binding("colon,i", "op_input", "Try", key_display=":",
                        tooltip="type operations in a sandbox copy of the lesson (the lesson keeps "
                                "its own; h there comes back here)"),
    "toggle_matcher": Binding("b", "toggle_matcher", "Bug #7", show=False,
                              tooltip="the other matcher (#7), in a sandbox copy of the lesson"),
    "undo": Binding("ctrl+z,u", "undo", "Undo", show=False,
                    tooltip="take back the last operation, in a sandbox copy of the lesson"),
    "redo": Binding("ctrl+y,U", "redo", "Redo", show=False,
                    tooltip="apply again what undo took back, in a sandbox copy of the lesson"),
    "scroll_tree(-1)": Binding("ctrl+pageup", "scroll_tree(-1)", "Scroll tree up",
                               tooltip="scroll the tree up", show=False),
    "scroll_tree(1)": Binding("ctrl+pagedown", "scroll_tree(1)", "Scroll tree down",
                              tooltip="scroll the tree down", show=False),
}
READING_KEYS = [
    Binding("r", "toggle_reading", "Read/Watch",
            tooltip="the lesson's text across the whole screen, or beside the tree (r again)"),
    Binding("pagedown", "scroll_page(1)", "More text", key_display="pgdn", show=False,
            tooltip="scroll the lesson's text down"),
    Binding("pageup", "scroll_page(-1)", "Text up", key_display="pgup", show=False,
            tooltip="scroll the lesson's text up"),
]


def _lesson_keys() -> list:
    keys = []
    for binding in STEPPER_KEYS:
        action = binding.action
        keys.append(LESSON_ONLY.get(action, binding))
        if action == "prev":
            keys.extend(READING_KEYS)
    return keys


LESSON_KEYS = _lesson_keys()
