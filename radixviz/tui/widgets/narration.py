"""The narration pane: what this step does, why, and what the other matcher would say."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from radixviz.render.badge import engine_badge as badge_of
from radixviz.render.narration import disagreement_text, misalignment_text
from radixviz.script import describe, explain


class NarrationPane(VerticalScroll, can_focus=False):
    """What this step did (bold) and why, then the matcher note. In a lesson it sits under
    the lesson's own words (``LessonPage``)."""

    DEFAULT_CSS = """
    NarrationPane { height: 1fr; }
    NarrationPane > Static { height: auto; }
    """

    def compose(self):
        yield Static("", id="narration-body")

    def show(self, frame, record) -> None:
        parts = [Text(describe(frame), style="bold")]
        # right under what the step did: "returns 6 token(s)" alone hides the #4 shift
        shifted = misalignment_text(record, frame)
        if shifted is not None:
            parts.append(shifted)
        why = explain(frame)
        if why:
            parts.append(Text(why))
        diff = disagreement_text(record, frame.tree.buggy_match)
        if diff is not None:
            parts.append(diff)
        self.show_parts(parts)

    def show_parts(self, parts: list) -> None:
        self.query_one("#narration-body", Static).update(Group(*parts))
        self.scroll_home(animate=False)


def engine_badge(tree) -> tuple:
    """(text, style) of the status line's first word: the 2024 engine's matcher (#7), or
    another engine's settings (today's cache: page size and eviction policy)."""
    text, tone = badge_of(tree)
    return f" {text} ", _BADGE_STYLES[tone]


_BADGE_STYLES = {"buggy": "bold reverse red", "fixed": "bold reverse green", "engine": "bold reverse blue"}


class StatusLine(Static):
    """matcher (or, on today's cache, engine · page · policy) · evictable · total · free
    slots · step k of n, then the stepper's notes.

    A note is a (long, short) pair such as the lesson's progress or autoplay's speed. When
    the line is too narrow the notes take their short form, then the op count and the pool's
    size go, so what matters stays on screen at 80 columns instead of being cut off.
    """

    DEFAULT_CSS = "StatusLine { height: 1; }"

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self._redraw = None   # the last show, to fit it again when the width changes

    def show(self, frame, total_frames: int, op_count: int, notes=()) -> None:
        self._redraw = lambda: self.show(frame, total_frames, op_count, notes)
        tree, pool = frame.tree, frame.pool
        sizes = f"evictable {tree.evictable_size} · total {tree.total_size} · free {pool.free}"
        step = f" · step {frame.number}/{total_frames}"
        ops = f" · op {min(frame.op_index + 1, op_count)}/{op_count}"
        full = f"{sizes}/{pool.size}{step}"
        self._fit(engine_badge(tree), (full + ops, full, sizes + step), notes)

    def show_empty(self, tree, notes=()) -> None:
        """Before the first step; ``tree`` is the live cache's snapshot."""
        self._redraw = lambda: self.show_empty(tree, notes)
        self._fit(engine_badge(tree), ("no steps yet",), notes)

    def _fit(self, badge: tuple, bodies: tuple, notes) -> None:
        width = self.size.width or 10**6
        choices = [(bodies[0], [long for long, _ in notes])]
        choices += [(body, [short for _, short in notes]) for body in bodies]
        # a long badge (an engine with many settings) shrinks to the engine's name before the
        # step counter is cut off
        label, fits = badge[0], False
        for label in dict.fromkeys((badge[0], badge[0].split(" · ")[0])):
            for body, words in choices:
                tail = "".join(f"  {word}" for word in words if word)
                if len(label) + 1 + len(body) + len(tail) <= width:
                    fits = True
                    break
            if fits:
                break
        if not fits:
            label = badge[0]
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(label, badge[1])
        text.append(f" {body}")
        text.append(tail, style="bold")
        self.update(text)

    def on_resize(self) -> None:
        if self._redraw is not None:
            self._redraw()
