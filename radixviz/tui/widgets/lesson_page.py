"""The lesson pane: the lesson's own words at the stop shown.

Its paragraphs (Markdown), each prediction with the learner's reply and, once the
operations have run, the verdict and explanation, and the closing words. The pane opens
on the part the stop put there; what does not fit scrolls, and the border says so.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from radixviz.render.lesson_text import LessonMarkdown

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any
    from rich.console import Console
    from radixviz.tui.lesson_player import Part

VERDICT_STYLES = {"right": "bold green", "wrong": "bold yellow", "skipped": "bold",
                  "earlier": "bold"}
MORE_BELOW = "▼ more: → or pgdn"


def part_renderable(part: Part):
    """A page part as Rich renders it: prose as Markdown, a reply as styled lines."""
    if part.kind == "prose":
        return LessonMarkdown(part.text, hyperlinks=False)
    if part.kind == "end":
        last, _, keys = part.text.partition("\n")
        text = Text(last, style="bold reverse")
        if keys:
            text.append("\n" + keys, style="dim")
        return text
    question, said, *answer = part.text.split("\n")
    text = Text(question, style="bold")
    text.append("\n" + said, style="italic")
    for line in answer:
        style = VERDICT_STYLES.get(part.verdict, "") if line.startswith(("✓", "✗", "–", "Answer:")) \
            else "bold red" if line.startswith("⚠") else ""
        text.append("\n" + line, style=style)
    return text


def rows_for(parts: Sequence[Part], width: int, console: Console) -> int:
    """How many rows ``parts`` take at ``width`` columns, the blank rows between them too."""
    options = console.options.update_width(max(1, width))
    return sum(len(console.render_lines(part_renderable(p), options, pad=False)) + 1 for p in parts) - 1


class LessonPage(VerticalScroll, can_focus=True, inherit_bindings=False):
    """Shows a page (``LessonWalk.page``); keys reach it through the screen (→, pgup, pgdn;
    ↑ ↓ too once tab has focused it)."""

    # the gutter is kept even when nothing scrolls: a scrollbar appearing would narrow the
    # text after its height was measured, and the last lines would fall out of reach
    DEFAULT_CSS = """
    LessonPage { scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    LessonPage > #lesson-text { height: auto; }
    """

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._shown: tuple = ()
        self._anchor: int | None = None   # the part to open on, again when the pane resizes
        self._unplaced = 0                # shows not yet scrolled to their part
        self._body = Static("", id="lesson-text")

    def compose(self):
        yield self._body

    def show(self, parts: list, own: int | None) -> None:
        """Show ``parts``; scroll to the top of part ``own``, or to the end when None."""
        if tuple(parts) != self._shown:
            self._shown = tuple(parts)
            pieces: list[RenderableType] = []
            for part in parts:
                if pieces:
                    pieces.append(Text(""))
                pieces.append(part_renderable(part))
            self._body.update(Group(*pieces))
        self._anchor = own
        self._unplaced += 1
        self.call_after_refresh(self._place, own)

    @property
    def placed(self) -> bool:
        """Every page asked for is at its part: the scroll a show waits a refresh for has run
        (what a reader of the pane, such as a test on a busy machine, waits on)."""
        return self._unplaced == 0

    def _place(self, own: int | None) -> None:
        self._unplaced -= 1
        self._scroll_to_part(own)

    def _scroll_to_part(self, own: int | None) -> None:
        if not self.is_attached:
            return
        if own is None:
            self.scroll_end(animate=False, immediate=True)
        else:
            self.scroll_to(y=self._offset_of(own), animate=False, immediate=True)
        self._note_more()

    def _offset_of(self, index: int) -> int:
        """The row where part ``index`` starts, at the width the text is drawn."""
        width = self._body.content_region.width or self.scrollable_content_region.width
        if width <= 0 or index <= 0:
            return 0
        return rows_for(self._shown[:index], width, self.app.console) + 1

    @property
    def more_below(self) -> bool:
        return self.scroll_y < self.max_scroll_y

    def page_down(self) -> None:
        """Scroll a screenful on, keeping the last line in view so no line is skipped."""
        self.scroll_to(y=self.scroll_y + max(1, self.scrollable_content_region.height - 1),
                       animate=False, immediate=True)
        self._note_more()

    def scroll_rows(self, rows: int) -> None:
        """Scroll ``rows`` down (up when negative): the screen's ↑ ↓ pgup pgdn."""
        self.scroll_to(y=self.scroll_y + rows, animate=False, immediate=True)
        self._note_more()

    def page_up(self) -> None:
        self.scroll_to(y=self.scroll_y - max(1, self.scrollable_content_region.height - 1),
                       animate=False, immediate=True)
        self._note_more()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._note_more()

    def on_resize(self) -> None:
        # a docked prediction or another layout changed the room: open on the same part
        self.call_after_refresh(self._scroll_to_part, self._anchor)

    def _note_more(self) -> None:
        self.border_subtitle = MORE_BELOW if self.more_below else ""
