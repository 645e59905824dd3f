"""The KV pool as a Rich renderable: one cell per slot, marked and coloured by who holds it.

``·`` free, ``■`` held by a tree node only, ``□`` held by a request outside the tree, a digit
for a slot shared by that many holders. Slots the current step touches sit in brackets.
"""
from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from collections import OrderedDict

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from .subtree import slot_holders

if TYPE_CHECKING:
    from ..script.frames import Marks

CELL = 3            # "[■]" or " ■ "
LABEL = 5           # "128 " row label, then the guide
STATES = {          # state -> (symbol, style, legend words)
    "free": ("·", "dim", "free"),
    "tree": ("■", "green", "tree"),
    "request": ("□", "yellow", "request"),
    "shared": ("2", "bold magenta", "= 2 holders share it"),
}
TOUCHED_STYLE = "reverse"
_ROWS: OrderedDict = OrderedDict()   # (first slot, runs of cells) -> the row's Text: see PoolGrid.row


def slot_symbol(state: str, refcount: int) -> str:
    if state == "shared":
        return str(refcount) if refcount < 10 else "+"
    return STATES[state][0]


class PoolGrid:
    """Rich renderable for a ``PoolSnapshot`` (and the touched slots of ``Marks``)."""

    def __init__(self, pool, marks: Marks | None = None, *, width: int | None = None, legend: bool = True) -> None:
        self.pool, self.marks, self.width, self.legend = pool, marks, width, legend
        self._touched = frozenset(getattr(marks, "slots", ()) or ())
        self._held: tuple | None = None   # sets of the slots the tree holds, once a row asks

    def state(self, slot: int) -> str:
        """``pool.state(slot)``, knowing the tree's slots from the snapshots it shares with
        earlier frames instead of a walk of the whole tree per frame."""
        count = self.pool.refcounts[slot]
        if count == 0:
            return "free"
        if self._held is None:
            self._held = slot_holders(self.pool.tree)
        if not any(slot in held for held in self._held):
            return "request"
        return "tree" if count == 1 else "shared"

    def columns(self, width: int) -> int:
        """Slots per row: a wide pane is used (a power of two left up to half of it empty),
        yet rows stay even: from 8 on, the narrowest multiple of 4 that needs no more rows
        than the widest that fits (32 slots at 80 columns: 16 + 16, not 24 + 8)."""
        size = max(1, self.pool.size)
        fit = max(1, (width - LABEL - 1) // CELL)
        if fit < 8:
            return min(fit, size)
        widest = fit - fit % 4
        rows = -(-size // widest)
        return min(size, min(c for c in range(8, widest + 1, 4) if -(-size // c) <= rows))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = min(self.width or options.max_width, options.max_width)
        yield from self.lines(width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = LABEL + 1 + CELL * min(self.pool.size, 32)
        legend = sum(e.cell_len + 2 for e in self._legend_entries()) - 2 if self.legend else 0
        return Measurement(LABEL + 1 + CELL, max(widest, legend)).clamp(max_width=options.max_width)

    def lines(self, width: int) -> list[Text]:
        """Every row of the grid, then the legend wrapped to ``width``."""
        cols = self.columns(width)
        out = [self.row(start, cols) for start in range(0, self.pool.size, cols)]
        if self.legend:
            out.extend(self.legend_lines(width))
        return out

    def row(self, start: int, cols: int) -> Text:
        """One row: the label of slot ``start``, then ``cols`` cells (a view may build rows
        lazily). Cells of one style are one run of text; a row whose cells read as in a row
        built before is that Text (read-only), so a step repaints only the rows it changed."""
        pool, touched = self.pool, self._touched
        runs: list = []   # [text, style] of consecutive cells that share a style
        for slot in range(start, min(start + cols, pool.size)):
            state = self.state(slot)
            symbol, style = slot_symbol(state, pool.refcounts[slot]), STATES[state][1]
            if slot in touched:
                cell, style = f"[{symbol}]", f"{style} {TOUCHED_STYLE}"
            else:
                cell = f" {symbol} "
            if runs and runs[-1][1] == style:
                runs[-1][0] += cell
            else:
                runs.append([cell, style])
        key = (start, tuple(map(tuple, runs)))
        row = _ROWS.get(key)
        if row is not None:
            _ROWS.move_to_end(key)
            return row
        row = Text(no_wrap=True, overflow="ellipsis")
        row.append(f"{start:>{LABEL - 1}} ", style="dim")
        row.append("│", style="dim")
        for text, style in runs:
            row.append(text, style=style)
        _ROWS[key] = row
        if len(_ROWS) > 4096:
            _ROWS.popitem(last=False)
        return row

    def _legend_entries(self) -> list[Text]:
        entries = [Text(f"{self.pool.used}/{self.pool.size} used", style="bold")]
        entries += [Text(f"{symbol} {words}", style=style) for symbol, style, words in STATES.values()]
        entries.append(Text("[ ] touched", style=TOUCHED_STYLE))
        return entries

    def legend_lines(self, width: int) -> list[Text]:
        """The legend, wrapped between entries (never inside one) to fit ``width``."""
        lines = [Text(no_wrap=True, overflow="ellipsis")]
        for entry in self._legend_entries():
            if lines[-1] and lines[-1].cell_len + 2 + entry.cell_len > width:
                lines.append(Text(no_wrap=True, overflow="ellipsis"))
            if lines[-1]:
                lines[-1].append("  ")
            lines[-1].append_text(entry)
        return lines


class PoolRows:
    """The grid's lines (rows, then the legend) as a read-only sequence that builds each
    row on first access: a pool of thousands of slots is hundreds of rows, and a view that
    shows a dozen of them must not build them all."""

    def __init__(self, pool, marks: Marks | None = None, width: int = 40) -> None:
        self.grid = PoolGrid(pool, marks)
        self.touched = tuple(getattr(marks, "slots", ()) or ())
        self.cols = self.grid.columns(width)
        self.rows = -(-pool.size // self.cols)
        self.legend = self.grid.legend_lines(width)
        self._built: dict = {}

    def __len__(self) -> int:
        return self.rows + len(self.legend)

    def __getitem__(self, index: int) -> Text:
        if index >= self.rows:
            return self.legend[index - self.rows]
        row = self._built.get(index)
        if row is None:
            row = self._built[index] = self.grid.row(index * self.cols, self.cols)
        return row

    @property
    def width(self) -> int:
        return max([LABEL + 1 + CELL * self.cols] + [line.cell_len for line in self.legend])

    @property
    def focus(self) -> int | None:
        """The row of the first touched slot."""
        return min(self.touched) // self.cols if self.touched else None

    def line_of(self, slot: int, host: bool = False) -> int | None:
        """The line of ``slot``'s row (None for a host slot: this pool has no host tier)."""
        return None if host or not 0 <= slot < self.grid.pool.size else slot // self.cols


# ------------------------------------------------- the pools of further components

TOMBSTONE = "⊘"     # a node that lost one component's data and stays (contract.NodePart)


class _ComponentPool:
    """Pool ``index`` of a PoolSnapshot (a component after the first: a host pool, a window's
    pool), seen as a pool the grid draws: its counts, and which node's part holds a slot."""

    def __init__(self, snapshot, index: int) -> None:
        self.snapshot, self.index = snapshot, index
        self.refcounts = snapshot.counts(index)
        self.tree = snapshot.tree
        self.size = len(self.refcounts)
        self.used = self.size - self.refcounts.count(0)

    def state(self, slot: int) -> str:
        count = self.refcounts[slot]
        if count == 0:
            return "free"
        if self.snapshot.holders(self.index)[slot] is None:
            return "request"
        return "tree" if count == 1 else "shared"


class ComponentGrid(PoolGrid):
    """The grid of a further component's pool (``PoolSnapshot.more``), with the slots a step
    touches there (``Marks.more_slots``): the same cells and legend as the device's."""

    def __init__(self, pool, index: int, marks: Marks | None = None, *, width: int | None = None,
                 legend: bool = True) -> None:
        super().__init__(_ComponentPool(pool, index), None, width=width, legend=legend)
        touched = getattr(marks, "more_slots", ()) or ()
        self._touched = frozenset(touched[index - 1]) if len(touched) >= index else frozenset()

    def state(self, slot: int) -> str:
        return self.pool.state(slot)


def pool_title(component, pool=None) -> Text:
    """A pool's heading: its component's title (and its occupancy, given the pool)."""
    title = Text(component.title, style="bold")
    if pool is not None:
        title.append(f"  {pool.used}/{pool.size} {component.unit}s", style="dim")
    return title


def _title_lines(component, width: int) -> list[Text]:
    """A pool's heading in lines of at most ``width`` cells, broken between words."""
    return [Text(line, style="bold") for line in textwrap.wrap(component.title, max(width, 12))] or [Text("")]


class StackedPoolRows:
    """Every declared pool's lines as one lazily built sequence: each pool's title, rows and
    legend, a blank line between pools (the interface of ``PoolRows``)."""

    def __init__(self, pool, marks=None, width: int = 40) -> None:
        tree = pool.tree
        # a title wider than the pane wraps between words (at 80 columns a pool's title is
        # longer than its pane): each part is (its title's lines, its rows)
        self.parts: list = [(_title_lines(tree.components[0], width), PoolRows(pool, marks, width))]
        for i, component in enumerate(pool.pooled, start=1):
            grid = ComponentGrid(pool, i, marks)
            rows = _GridRows(grid, width)
            self.parts.append((_title_lines(component, width), rows))
        self._starts: list = []
        at = 0
        for i, (titles, rows) in enumerate(self.parts):
            self._starts.append(at)
            at += len(titles) + len(rows) + (1 if i < len(self.parts) - 1 else 0)
        self._length = at

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Text:
        if not 0 <= index < self._length:
            raise IndexError(index)   # iterating it ends here
        for start, (titles, rows) in zip(reversed(self._starts), reversed(self.parts)):
            if index >= start:
                offset = index - start
                if offset < len(titles):
                    return titles[offset]
                if offset - len(titles) < len(rows):
                    return rows[offset - len(titles)]
                return Text("")
        raise IndexError(index)

    @property
    def width(self) -> int:
        return max(rows.width for _title, rows in self.parts)

    def line_of(self, slot: int, host: bool = False) -> int | None:
        """The line of ``slot``'s row in the first pool (``host``: in the first further one)."""
        index = 1 if host else 0
        if index >= len(self.parts):
            return None
        titles, rows = self.parts[index]
        line = rows.line_of(slot)
        return None if line is None else self._starts[index] + len(titles) + line

    @property
    def focus(self) -> int | None:
        """The row of the first touched slot, in the first pool that has one."""
        for start, (titles, rows) in zip(self._starts, self.parts):
            if rows.focus is not None:
                return start + len(titles) + rows.focus
        return None


class _GridRows:
    """A grid's rows and legend, built lazily (``PoolRows`` for any grid)."""

    def __init__(self, grid: PoolGrid, width: int) -> None:
        self.grid = grid
        self.touched = tuple(sorted(grid._touched))
        self.cols = grid.columns(width)
        self.rows = -(-grid.pool.size // self.cols)
        self.legend = grid.legend_lines(width)
        self._built: dict = {}

    def __len__(self) -> int:
        return self.rows + len(self.legend)

    def __getitem__(self, index: int) -> Text:
        if index >= self.rows:
            return self.legend[index - self.rows]
        row = self._built.get(index)
        if row is None:
            row = self._built[index] = self.grid.row(index * self.cols, self.cols)
        return row

    @property
    def width(self) -> int:
        return max([LABEL + 1 + CELL * self.cols] + [line.cell_len for line in self.legend])

    @property
    def focus(self) -> int | None:
        return self.touched[0] // self.cols if self.touched else None

    def line_of(self, slot: int, host: bool = False) -> int | None:
        return None if host or not 0 <= slot < self.grid.pool.size else slot // self.cols
