"""The stepper's sparse compositor paints what Textual's own would: after every update the
app writes, a terminal shows what a full render of the screen shows.

The check is run on Textual's own compositor too (it must hold there, or the check is
wrong) and on one that drops updates (it must fail there, or the check sees nothing).
"""
from __future__ import annotations

import random

from textual._compositor import ChopsUpdate, Compositor, LayoutUpdate

import radixviz.tui.screens.stepper as stepper_module
from radixviz.tui.screens.stepper import StepperScreen
from radixviz.tui.sparse_compositor import SparseCompositor
from terminal_model import Terminal
from tui_helpers import painted_strips, stepper, wait_until


def _script(operations: int = 40, seed: int = 5) -> str:
    """Inserts over a small alphabet (shared prefixes: splits) and a few matches: a tree
    taller than the pane, so steps scroll it."""
    rng = random.Random(seed)
    lines = []
    for index in range(operations):
        key = "".join(rng.choice("abcd") for _ in range(rng.randint(3, 9)))
        lines.append(f'{"match" if index % 7 == 6 else "insert"} "{key}"')
    return "\n".join(lines) + "\n"


KEYS = (["right"] * 70 + ["right_square_bracket"] * 6 + ["left"] * 25 + ["t"] + ["right"] * 8 + ["t"]
        + ["b"] + ["right"] * 10 + ["end"] + ["left"] * 6 + ["home"] + ["right"] * 12
        + ["question_mark", "escape"] + ["right"] * 8)


async def _painted_vs_full(tmp_path, monkeypatch, compositor: type[Compositor] | None) -> dict:
    """Step through a session with ``compositor`` on the stepper (None: the sparse one), a
    terminal written by every update the app sends; after each key, once the screen has
    nothing left to paint, compare the terminal with a full render of the screen. Return
    how many partial updates were painted and the rows that differed, by key.

    Not after each update: a widget that has just asked for a repaint (its rows dirty, the
    screen not yet told) already renders its new rows in a full render, while the terminal
    rightly shows the old ones until the screen's next update paints them."""
    if compositor is not None:
        monkeypatch.setattr(stepper_module, "paint_sparsely",
                            lambda screen: setattr(screen, "_compositor", compositor()))
    found: dict = {"partial": 0, "differing": []}
    async with stepper(tmp_path, script=_script(), size=(90, 26)) as (app, pilot):
        screen = app.screen
        assert isinstance(screen._compositor, compositor or SparseCompositor)
        terminal = Terminal(*app.size)
        terminal.apply(screen._compositor.render_full_update(), app.console)
        display = app._display

        def written(shown, update) -> None:
            nonlocal terminal
            display(shown, update)
            if update is None:
                return
            if isinstance(update, LayoutUpdate) and update.region.size != (terminal.width, terminal.height):
                terminal = Terminal(*update.region.size)   # the terminal was resized
            terminal.apply(update, app.console)
            if isinstance(update, ChopsUpdate) and shown is screen:
                found["partial"] += 1

        app._display = written
        for index, name in enumerate(KEYS):
            await pilot.press(name)
            await wait_until(pilot, lambda: not _waiting(app, screen))
            if app.screen is screen:
                rows = terminal.rows_differing_from(painted_strips(app))
                if rows:
                    found["differing"].append((f"{index}:{name}", rows))
            if index == 60:   # a narrower terminal: a full update, then partial ones again
                await pilot.resize_terminal(80, 24)
    return found


def _waiting(app, screen) -> bool:
    """Whether a widget of ``screen`` still waits for a repaint or a layout (the app's own
    state). A screen under a dialog paints nothing until it is on top again: not waiting."""
    return app.screen is screen and bool(
        screen._dirty_widgets or screen._layout_required or screen._repaint_required
        or any(widget._repaint_regions or widget._repaint_required or widget._layout_required
               for widget in screen.walk_children()))


async def test_every_update_leaves_the_terminal_as_a_full_render(tmp_path, monkeypatch):
    found = await _painted_vs_full(tmp_path, monkeypatch, None)
    assert found["partial"] > 100   # the steps were painted by partial updates, and checked
    assert not found["differing"], _described(found["differing"])


async def test_textual_own_compositor_passes_the_same_check(tmp_path, monkeypatch):
    found = await _painted_vs_full(tmp_path, monkeypatch, Compositor)
    assert found["partial"] > 100
    assert not found["differing"], _described(found["differing"])


def _described(differing: list) -> str:
    """The first few updates that left the terminal unlike a full render, row by row."""
    lines = []
    for key, rows in differing[:3]:
        lines.append(f"after key {key}:")
        for y, shown, full in rows:
            lines += [f"  row {y} shown: {shown!r}", f"  row {y} full:  {full!r}"]
    return "\n".join(lines)


class DropsEveryThirdUpdate(SparseCompositor):
    """Paints nothing on every third partial update (its changes never reach the terminal)."""

    count = 0

    def render_partial_update(self):
        DropsEveryThirdUpdate.count += 1
        update = super().render_partial_update()
        if update is not None and DropsEveryThirdUpdate.count % 3 == 0:
            return ChopsUpdate([{} for _ in update.chops], update.spans, update.chop_ends)
        return update


async def test_the_check_sees_a_compositor_that_misses_rows(tmp_path, monkeypatch):
    found = await _painted_vs_full(tmp_path, monkeypatch, DropsEveryThirdUpdate)
    assert found["differing"], "a compositor that drops updates passed the check"


def test_the_stepper_paints_sparsely():
    screen = StepperScreen(lambda: (None, None))
    assert isinstance(screen._compositor, SparseCompositor)

