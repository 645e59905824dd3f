"""The narration pane: what this step does, why, and what the other matcher would say."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Group
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from radixviz.render.badge import engine_badge as badge_of
from radixviz.render.narration import disagreement_text, misalignment_text
from radixviz.script import describe, explain

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any
    from radixviz.cache import TreeSnapshot
    from radixviz.script.frames import Frame, OpRecord


class NarrationPane(VerticalScroll, can_focus=True, inherit_bindings=False):
    """What this step did (bold) and why, then the matcher note. In a lesson it sits under
    the lesson's own words (``LessonPage``)."""

    DEFAULT_CSS = """
    NarrationPane { height: 1fr; }
    NarrationPane > NarrationBody { height: auto; min-height: 100%; }
    """

    def compose(self):
        yield NarrationBody(id="narration-body")

    def scroll_rows(self, rows: int) -> None:
        """Scroll ``rows`` down (up when negative): the screen's ↑ ↓ pgup pgdn."""
        self.scroll_to(y=self.scroll_y + rows, animate=False, immediate=True)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._ahead: tuple | None = None   # (frame, record, width, text, its rows) built by prefetch

    def show(self, frame: Frame, record: OpRecord | None) -> None:
        ahead, body = self._ahead, self.query_one("#narration-body", NarrationBody)
        if ahead is not None and ahead[0] is frame and ahead[1] is record and ahead[2] == body.content_region.width:
            self._show(ahead[3], ahead[4])
        else:
            self.show_parts(narration_parts(frame, record))

    def prefetch(self, frame: Frame, record: OpRecord | None) -> None:
        """Build ahead the text of ``frame`` and its rows wrapped to the pane (for idle time
        before the step: see TreePane.prefetch)."""
        body = self.query_one("#narration-body", NarrationBody)
        width = body.content_region.width
        if width:
            text = Group(*narration_parts(frame, record))
            self._ahead = (frame, record, width, text, body.wrapped(text, width))

    def show_parts(self, parts: list) -> None:
        self._show(Group(*parts))

    def _show(self, text: Group, rows: list | None = None) -> None:
        body = self.query_one("#narration-body", NarrationBody)
        before = body.size.height
        body.update(text, layout=False, rows=rows)
        # the body fills the pane at least (min-height): a text that fits the pane before and
        # after leaves every size as it was, so a step needs no layout pass, only a repaint
        width, room = body.content_region.width, self.scrollable_content_region.height
        if not width or before != room or body.get_content_height(self.size, self.app.size, width) > room:
            body.refresh(layout=True)
        self.scroll_home(animate=False)


def narration_parts(frame: Frame, record: OpRecord | None) -> list:
    """What the narration says of ``frame``: what the step did (bold), the #4 shift if a
    match returned misaligned slots, why, and what the other matcher would have done."""
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
    return parts


class NarrationBody(Widget):
    """The narration's text on Textual's Line API. Rich wraps it to the pane once a step;
    only the rows whose segments changed are painted again: a Static paints every row of
    its area (the blank ones under a short text too) on each update, and the compositor then
    redraws all of them."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._content = Text("")
        self._rows: list = []          # the rendered rows: a list of Segments each
        self._width: int | None = None   # the width ``_rows`` were wrapped to
        self._strips: dict = {}         # row index -> Strip, until the row changes
        self._style: Style | None = None   # the widget's style, looked up once per set of rows

    @property
    def content(self):
        """The renderable shown (what ``update`` was given)."""
        return self._content

    def update(self, renderable, *, layout: bool = True, rows: list | None = None) -> None:
        """Show ``renderable``; the rows that stay the same are not painted again. ``rows``:
        ``renderable`` already wrapped to the body's width (``wrapped``)."""
        self._content = renderable
        width = self.content_region.width
        if not width or width != self._width:   # not laid out yet, or another width: all anew
            self._rows, self._width, self._strips = [], None, {}
            self.refresh(layout=layout)
            return
        before = self._rows
        self._rows = self.wrapped(renderable, width) if rows is None else rows
        for index in range(max(len(before), len(self._rows))):
            if index >= len(before) or index >= len(self._rows) or before[index] != self._rows[index]:
                self._strips.pop(index, None)
                self.refresh(Region(0, index, width, 1))
        if layout:
            self.refresh(layout=True)

    def wrapped(self, renderable, width: int) -> list:
        """``renderable``'s rows (lists of Segments) wrapped to ``width`` cells."""
        console = self.app.console
        options = self.app.console_options.update(highlight=False, width=width, height=None)
        segments = console.render(renderable, options)
        return list(Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False))

    def _rows_for(self, width: int) -> list:
        if width != self._width:
            self._rows, self._width, self._strips = self.wrapped(self._content, width), width, {}
        return self._rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows_for(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width
        rows = self._rows_for(width)
        if self._style is None:
            self._style = self.rich_style
        if y >= len(rows):
            return Strip.blank(width, self._style)
        strip = self._strips.get(y)
        if strip is None:
            # as a Static paints it: the row's own cells; the pane fills the rest of the width
            strip = Strip(Segment.apply_style(rows[y], self._style))
            self._strips[y] = strip
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style, self._strips = None, {}


def engine_badge(tree: TreeSnapshot) -> tuple:
    """(text, style) of the status line's first word: the 2024 engine's matcher (#7), or
    another engine's settings (today's cache: page size and eviction policy)."""
    text, tone = badge_of(tree)
    return f" {text} ", _BADGE_STYLES[tone]


_BADGE_STYLES = {"buggy": "bold reverse red", "fixed": "bold reverse green", "engine": "bold reverse blue"}


class StatusLine(Widget):
    """matcher (or, on today's cache, engine · page · policy) · evictable · total · free
    slots · step k of n, then the stepper's notes.

    A note is a (long, short) pair such as the lesson's progress or autoplay's speed. When
    the line is too narrow the notes take their short form, then the op count and the pool's
    size go, so what matters stays on screen at 80 columns instead of being cut off.
    """

    DEFAULT_CSS = "StatusLine { height: 1; }"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._redraw: Callable[[], None] | None = None   # the last show, to fit it again when the width changes
        self._content = Text("")
        self._strip: tuple | None = None   # (width, the painted row), until the text changes

    @property
    def content(self):
        """The Text shown."""
        return self._content

    def update(self, text: Text, *, layout: bool = False) -> None:
        """Show ``text`` (one row, cut with "…" if too wide). On the Line API: a step paints
        this row from its segments, without a Static's re-measure and Visual conversion."""
        if text == self._content and text.style == self._content.style:
            return   # nothing changed: no repaint
        self._content, self._strip = text, None
        self.refresh(layout=layout)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if y > 0 or not width:
            return Strip.blank(width, style)
        if self._strip is None or self._strip[0] != width:
            text = self._content
            if text.cell_len > width:
                text = text.copy()
                text.truncate(width, overflow="ellipsis")
            self._strip = (width, Strip(Segment.apply_style(text.render(self.app.console), style)))
        return self._strip[1]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strip = None

    def show(self, frame: Frame, total_frames: int, op_count: int, notes: Sequence[tuple[str, str]] = ()) -> None:
        self._redraw = lambda: self.show(frame, total_frames, op_count, notes)
        tree, pool = frame.tree, frame.pool
        sizes = f"evictable {tree.evictable_size} · total {tree.total_size} · free {pool.free}"
        step = f" · step {frame.number}/{total_frames}"
        ops = f" · op {min(frame.op_index + 1, op_count)}/{op_count}"
        # each further pool the engine declares: its name and slots in use (a host pool, a window's),
        # and what the tree holds of it, evictable and protected (in words, else in short)
        held = {h.component.name: h for h in tree.held[1:]}
        used = [(c.name, f"{len(counts) - counts.count(0)}/{len(counts)}", held.get(c.name))
                for i, c in enumerate(pool.pooled, start=1) for counts in (pool.counts(i),)]
        pools = "".join(f" · {name} {n}" for name, n, _ in used)
        words = "".join(f" · {name} {n}" + (f" ({h.evictable} evictable, {h.protected} protected)" if h else "")
                        for name, n, h in used)
        short = "".join(f" · {name} {n}" + (f" e{h.evictable} p{h.protected}" if h else "") for name, n, h in used)
        full = f"{sizes}/{pool.size}{pools}{step}"
        plain = (full + ops, full, sizes + pools + step, sizes + step)
        if words == pools:   # no further component's sizes to say
            self._fit(engine_badge(tree), plain, notes)
            return
        bodies = (f"{sizes}/{pool.size}{words}{step}{ops}", f"{sizes}/{pool.size}{words}{step}",
                  f"{sizes}/{pool.size}{short}{step}")
        # the components' sizes before the badge's settings: those bodies shrink the badge first
        self._fit(engine_badge(tree), bodies + plain[1:], notes, lead=len(bodies))

    def show_empty(self, tree: TreeSnapshot, notes: Sequence[tuple[str, str]] = ()) -> None:
        """Before the first step; ``tree`` is the live cache's snapshot."""
        self._redraw = lambda: self.show_empty(tree, notes)
        self._fit(engine_badge(tree), ("no steps yet",), notes)

    def _fit(self, badge: tuple, bodies: tuple, notes: Sequence[tuple[str, str]], lead: int = 0) -> None:
        """Show the badge and the first body that fits; the first ``lead`` bodies are each worth
        shrinking the badge for before a later body is tried."""
        width = self.size.width or 10**6
        choices = [(bodies[0], [long for long, _ in notes])]
        choices += [(body, [short for _, short in notes]) for body in bodies]
        # a long badge (an engine with many settings) shrinks to the engine's name before the
        # step counter is cut off
        labels = tuple(dict.fromkeys((badge[0], badge[0].split(" · ")[0])))
        split = lead + 1 if lead else 0   # the choices tried with each label before the next choice
        first = [(label, body, words) for body, words in choices[:split] for label in labels]
        rest = [(label, body, words) for label in labels for body, words in choices[split:]]
        label, fits = badge[0], False
        for label, body, words in first + rest:
            tail = "".join(f"  {word}" for word in words if word)
            if len(label) + 1 + len(body) + len(tail) <= width:
                fits = True
                break
        if not fits:
            label = badge[0]
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(label, badge[1])
        text.append(f" {body}")
        text.append(tail, style="bold")
        self.update(text, layout=False)   # one row, whatever it says: no layout pass a step

    def on_resize(self) -> None:
        if self._redraw is not None:
            self._redraw()
