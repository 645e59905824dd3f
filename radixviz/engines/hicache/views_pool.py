"""The host tier's pool beside the device's: a second grid, one cell per host slot.

``·`` free, ``■`` held by a node that is on the host only, ``▣`` a copy of a node that is on
the device too, ``▤`` a slot a write in flight is filling; with SGLang's 9fbe6800a bugs on,
``?`` held by a node nobody can reach, ``!`` freed twice, ``×`` free while a node holds it.
Slots the current step touches sit in brackets, as in the device grid. ``TieredPoolRows``
stacks both grids (titled ``GPU`` and ``CPU``) for the panes that show one sequence of lines.
"""
from __future__ import annotations

from rich.text import Text

from .ops_pool import host_size, host_state, host_used
from radixviz.render.pool import CELL, LABEL, TOUCHED_STYLE, PoolGrid, PoolRows
from radixviz.render.wrap import wrap_words

from .views_head_bugs import damage_lines

HOST_STATES = {   # state -> (symbol, style, legend words)
    "free": ("·", "dim", "free"),
    "host": ("■", "blue", "host only"),
    "both": ("▣", "cyan", "copy of a device node"),
    "writing": ("▤", "bold yellow", "write in flight"),
    # only SGLang's 9fbe6800a bugs make these (engines/hicache/cache_head_bugs.py): legend when present
    "stray": ("?", "bold red", "taken, no node reaches it"),
    "twice": ("!", "bold reverse red", "freed twice"),
    "held": ("×", "bold magenta", "free, yet a node holds it"),
}
BROKEN_STATES = ("stray", "twice", "held")


class _HostPool:
    """The host half of a PoolSnapshot, seen as a pool the grid can draw."""

    def __init__(self, snapshot) -> None:
        self.snapshot = snapshot
        self.size = host_size(snapshot)
        self.used = host_used(snapshot)

    def state(self, slot: int) -> str:
        return host_state(self.snapshot, slot)


class HostPoolGrid(PoolGrid):
    """Rich renderable for the host pool of a ``PoolSnapshot`` (and the host slots touched)."""

    def __init__(self, pool, marks=None, *, width: int | None = None, legend: bool = True) -> None:
        super().__init__(_HostPool(pool), None, width=width, legend=legend)
        # the host pool's slots this step touches (Marks.more_slots follows PoolSnapshot.more)
        self._touched = frozenset(marks.more_slots[0]) if marks is not None and marks.more_slots else frozenset()

    def row(self, start: int, cols: int) -> Text:
        pool, touched = self.pool, self._touched
        row = Text(no_wrap=True, overflow="ellipsis")
        row.append(f"{start:>{LABEL - 1}} ", style="dim")
        row.append("│", style="dim")
        for slot in range(start, min(start + cols, pool.size)):
            symbol, style, _ = HOST_STATES[pool.state(slot)]
            if slot in touched:
                row.append(f"[{symbol}]", style=f"{style} {TOUCHED_STYLE}")
            else:
                row.append(f" {symbol} ", style=style)
        return row

    def _legend_entries(self) -> list[Text]:
        entries = [Text(f"{self.pool.used}/{self.pool.size} used", style="bold")]
        seen = {self.pool.state(slot) for slot in range(self.pool.size)}
        entries += [Text(f"{symbol} {words}", style=style)
                    for name, (symbol, style, words) in HOST_STATES.items()
                    if name not in BROKEN_STATES or name in seen]
        return entries


class TieredPoolRows:
    """Both pools' lines as one lazily built sequence: ``GPU`` title, device rows and legend,
    a blank line, ``CPU`` title, host rows and legend (same interface as ``PoolRows``)."""

    def __init__(self, pool, marks=None, width: int = 40) -> None:
        self.device = PoolRows(pool, marks, width)
        host = HostPoolGrid(pool, marks)
        self.host_grid, self.host_cols = host, host.columns(width)
        self.host_rows = -(-host.pool.size // self.host_cols)
        # with SGLang's 9fbe6800a bugs on: the lost nodes and the broken accounting, named
        self.host_legend = host.legend_lines(width) + [
            row for line in damage_lines(pool.tree) for row in wrap_words(line, width)]
        self.host_touched = tuple(sorted(host._touched))
        self._built: dict = {}
        self.titles = (Text("GPU · device pool", style="bold green"),
                       Text("CPU · host pool", style="bold blue"))

    def __len__(self) -> int:
        return 1 + len(self.device) + 2 + self.host_rows + len(self.host_legend)

    def __getitem__(self, index: int) -> Text:
        if index == 0:
            return self.titles[0]
        index -= 1
        if index < len(self.device):
            return self.device[index]
        index -= len(self.device)
        if index == 0:
            return Text("")
        if index == 1:
            return self.titles[1]
        index -= 2
        if index >= self.host_rows:
            return self.host_legend[index - self.host_rows]
        row = self._built.get(index)
        if row is None:
            row = self._built[index] = self.host_grid.row(index * self.host_cols, self.host_cols)
        return row

    @property
    def width(self) -> int:
        return max(self.device.width, LABEL + 1 + CELL * self.host_cols,
                   *(line.cell_len for line in self.host_legend))

    def line_of(self, slot: int, host: bool = False) -> int | None:
        """The line of the row of device slot ``slot``, or of host slot ``slot``."""
        if not host:
            line = self.device.line_of(slot)
            return None if line is None else 1 + line
        return 1 + len(self.device) + 2 + slot // self.host_cols if 0 <= slot < self.host_grid.pool.size else None

    @property
    def focus(self) -> int | None:
        """The row of the first touched device slot, else of the first touched host slot."""
        if self.device.focus is not None:
            return 1 + self.device.focus
        if self.host_touched:
            return 1 + len(self.device) + 2 + self.host_touched[0] // self.host_cols
        return None


def pool_rows(pool, marks=None, width: int = 40):
    """The pool pane's lines: the device grid, and the host grid under it when there is one."""
    return TieredPoolRows(pool, marks, width) if pool.more else PoolRows(pool, marks, width)


def host_pool_page(frame, max_drawn: int, row: int) -> dict | None:
    """The host tier's pool, one character a slot, as the app's second grid shows it, for a
    step's HTML page (render/html_page.py): rows of (start, [(class, symbol)]); ``rows`` None
    for a pool of more than ``max_drawn`` slots; None without a host pool."""
    if not frame.pool.more:
        return None
    pool, touched = frame.pool, set(frame.marks.more_slots[0] if frame.marks.more_slots else ())
    size = host_size(pool)
    shown: dict[str, object] = {"title": "host pool (CPU)", "prefix": "h-", "used": host_used(pool), "size": size,
                                "rows": None,
             "legend": [(state, symbol, words) for state, (symbol, _style, words) in HOST_STATES.items()
                        if state not in BROKEN_STATES]}
    if size > max_drawn:
        return shown
    shown["rows"] = [(start, [(f"h-{host_state(pool, slot)}" + (" p-t" if slot in touched else ""),
                               HOST_STATES[host_state(pool, slot)][0])
                              for slot in range(start, min(start + row, size))])
                     for start in range(0, size, row)]
    return shown
