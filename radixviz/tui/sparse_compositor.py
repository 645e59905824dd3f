"""A compositor whose partial updates ask each widget only for the rows it shows in them.

Textual's own partial update (``Compositor.render_partial_update``, Textual 8) takes the
box around every changed region and asks each widget that box touches for all of its lines,
then keeps only the changed rows. A stepper's step changes a few rows in each of four panes
and the status line, so the box is the whole screen: fifteen widgets are asked for all
their lines, six of them containers that the panes hide completely, and every line is cut
up again. This one goes front to back through the same widgets, and asks a widget only for
the rows where some cell of a changed span is still unpainted and lies in it: a container
behind its panes, or a pane beside the change, renders nothing.

The output is Textual's: the same spans, the same cuts, a cut's strip from the front-most
widget over it (tests/test_sparse_compositor.py checks every update against a full render).
Full updates (a layout, a resize) are Textual's own.
"""
from __future__ import annotations

from itertools import pairwise

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen


class SparseCompositor(Compositor):
    def render_partial_update(self) -> ChopsUpdate | None:
        regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not regions:
            return None
        spans = list(self._regions_to_spans(regions))
        cuts = self.cuts
        # row -> the starts of its cuts that a changed span touches and no widget has filled yet
        unpainted: dict[int, set[int]] = {}
        for y, x1, x2 in spans:
            row = cuts[y]
            unpainted.setdefault(y, set()).update(
                start for start, end in pairwise(row) if start < x2 and end > x1)
        chops: list[dict] = [dict.fromkeys(row[:-1]) for row in cuts]
        for widget, (region, clip) in self.visible_widgets.items():   # front to back
            if not unpainted:
                break
            shown = region.intersection(clip)
            left, right = shown.column_span
            rows = [y for y in shown.line_range
                    if y in unpainted and any(left <= start < right for start in unpainted[y])]
            if not rows:
                continue
            top = rows[0]
            strips = widget.render_lines(Region(shown.x - region.x, top - region.y, shown.width, rows[-1] - top + 1))
            for y in rows:
                own_cuts = [cut for cut in cuts[y] if left <= cut <= right]
                pieces = strips[y - top].divide([cut - left for cut in own_cuts[1:]])
                wanted, chop = unpainted[y], chops[y]
                for cut, piece in zip(own_cuts, pieces):
                    if cut in wanted:
                        chop[cut] = piece
                        wanted.discard(cut)
                if not wanted:
                    del unpainted[y]
        return ChopsUpdate(chops, spans, [row[1:] for row in cuts])


def paint_sparsely(screen: Screen) -> None:
    """Give ``screen`` the sparse compositor; call in its ``__init__``, before it is mounted
    (the compositor holds nothing until the first layout)."""
    screen._compositor = SparseCompositor()
