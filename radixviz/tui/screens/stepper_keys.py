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
    # b is the engine's bug switch: the screen shows the one its engine has (check_action)
    Binding("b", "toggle_matcher", "Bug #7",
            tooltip="switch between the fixed matcher and the buggy one from before PR #7"),
    Binding("b", "toggle_head_bugs", "Bugs 9fbe6800a",
            tooltip="SGLang's two write_back bugs of 9fbe6800a (March 2026) on or off, from this "
                    "operation on"),
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
    # every pane scrolls from the keyboard: tab picks it (its border lights up), then these
    Binding("tab", "app.focus_next", "Next pane", show=False,
            tooltip="move to the next pane (its border lights up; esc leaves it): ↑ ↓ pgup pgdn scroll it"),
    Binding("shift+tab", "app.focus_previous", "Previous pane", show=False,
            tooltip="move to the previous pane"),
    Binding("up", "scroll_pane(-1)", "Scroll up", key_display="↑", show=False,
            tooltip="scroll the pane tab picked up a line (none picked: the tree)"),
    Binding("down", "scroll_pane(1)", "Scroll down", key_display="↓", show=False,
            tooltip="scroll the pane tab picked down a line (none picked: the tree)"),
    Binding("pageup", "scroll_pane(-1, True)", "Page up", key_display="pgup", show=False,
            tooltip="scroll the pane tab picked up a page (none picked: the tree)"),
    Binding("pagedown", "scroll_pane(1, True)", "Page down", key_display="pgdn", show=False,
            tooltip="scroll the pane tab picked down a page (none picked: the tree)"),
    Binding("shift+up", "scroll_text(-1)", "Scroll narration up",
            tooltip="scroll the narration up", show=False),
    Binding("shift+down", "scroll_text(1)", "Scroll narration down",
            tooltip="scroll the narration down", show=False),
    Binding("escape", "close_input", "Close input",
            tooltip="close the operation input (or a dialog)", show=False),
]

# A lesson's keys: the same, with reading first. → also pages through a paragraph that does
# not fit; ↑ ↓ pgup pgdn scroll the lesson's text (or the pane tab picked); everything
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
    "toggle_head_bugs": Binding("b", "toggle_head_bugs", "Bugs 9fbe6800a", show=False,
                                tooltip="SGLang's 9fbe6800a write_back bugs on or off, in a sandbox "
                                        "copy of the lesson"),
    "undo": Binding("ctrl+z,u", "undo", "Undo", show=False,
                    tooltip="take back the last operation, in a sandbox copy of the lesson"),
    "redo": Binding("ctrl+y,U", "redo", "Redo", show=False,
                    tooltip="apply again what undo took back, in a sandbox copy of the lesson"),
}
READING_KEYS = [
    Binding("r", "toggle_reading", "Read/Watch",
            tooltip="the lesson's text across the whole screen, or beside the tree (r again)"),
]
# in a lesson the keys that scroll a pane scroll the lesson's text while tab has picked none
for _binding in STEPPER_KEYS:
    if _binding.action.startswith("scroll_pane"):
        LESSON_ONLY[_binding.action] = Binding(
            _binding.key, _binding.action, _binding.description, key_display=_binding.key_display,
            show=False, tooltip=(_binding.tooltip or "").replace("none picked: the tree", "none picked: "
                                                                     "the lesson's text"))


def _lesson_keys() -> list:
    keys = []
    for binding in STEPPER_KEYS:
        action = binding.action
        keys.append(LESSON_ONLY.get(action, binding))
        if action == "prev":
            keys.extend(READING_KEYS)
    return keys


LESSON_KEYS = _lesson_keys()
