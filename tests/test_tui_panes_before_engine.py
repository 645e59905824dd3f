"""The sandbox's panes are on screen while the engine (torch) still loads: an empty tree, a
free pool grid, the code pane's place; an operation typed meanwhile runs once it is there.
A lesson's first page is read beside them meanwhile, and → goes on once the engine is there."""
from __future__ import annotations

import re
import sys
import threading

import radixviz.tui.app as app_module
from radixviz.tui.app import RadixvizApp
from tui_helpers import pane_rows, screen_rows, wait_until


def painted(app) -> str:
    return "\n".join(screen_rows(app))


def hold_the_engine(monkeypatch) -> threading.Event:
    """The app's engine loads only once the returned event is set (its session loader waits)."""
    release = threading.Event()
    loader = app_module.session_loader

    def held_loader(*args, **kwargs):
        load = loader(*args, **kwargs)

        def wait_then_load():
            release.wait(timeout=180)   # "loading" until the panes are checked (a hang guard)
            return load()
        return wait_then_load
    monkeypatch.setattr(app_module, "session_loader", held_loader)
    return release


async def test_the_panes_show_before_the_engine_and_the_typed_operation_runs_after(monkeypatch):
    release = hold_the_engine(monkeypatch)
    app = RadixvizApp("sandbox", device="cpu", pool_size=64)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "KV pool" in painted(app))
        assert app.screen.model is None and "loading the engine" in painted(app)
        pool = pane_rows(app, "#pool-pane")
        assert "0/64 used" in "\n".join(pool)
        grid = [row.split("│")[2] for row in pool if re.match(r"│\s+\d+ │", row)]
        assert grid and all(set(cells) <= {" ", "·"} for cells in grid)   # every slot free
        assert "root" in "\n".join(pane_rows(app, "#tree-pane"))
        await pilot.press("colon", *'insert "zq"', "enter")
        assert app.screen.model is None                   # nothing ran yet
        release.set()
        await wait_until(pilot, lambda: "op 1/1" in painted(app))
        assert [r.op.text for r in app.screen.model.session.records] == ['insert "zq"']
        assert "loading the engine" not in painted(app)


async def test_a_lessons_first_page_is_read_beside_its_panes_while_the_engine_loads(monkeypatch):
    from radixviz.lessons import load_lessons
    lesson = load_lessons()[0]
    release = hold_the_engine(monkeypatch)
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "Many requests to a language model" in painted(app))
        assert app.screen.model is None and "loading the engine" in painted(app)
        assert "KV pool" in painted(app) and "root" in "\n".join(pane_rows(app, "#tree-pane"))
        await pilot.press("pagedown", "right")   # pgdn reads on; → waits for the engine
        assert app.screen.model is None and app.screen.walk.at == 0
        release.set()
        await wait_until(pilot, lambda: app.screen.model is not None and app.screen.walk.at >= 1)
        assert "loading the engine" not in painted(app)


def test_the_panes_need_no_torch():
    # the stepper imports them in its worker before the engine; they must not bring torch in
    import subprocess
    code = ("import sys; import radixviz.tui.widgets.panes, radixviz.script.frames; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_a_lesson_on_another_engine_shows_that_engine_before_its_first_step():
    # lesson 18 opens with `engine unified`: before its first step the panes showed the
    # default engine's tree ("matcher fixed", the 2024 switch the lesson never uses)
    from radixviz.lessons import load_lessons
    lesson = next(one for one in load_lessons() if one.number == 18)
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.model is not None)
        await wait_until(pilot, lambda: "unified" in "\n".join(pane_rows(app, "#tree-pane")))
        tree = "\n".join(pane_rows(app, "#tree-pane"))
        assert "matcher" not in tree and "matcher" not in "\n".join(pane_rows(app, "#status-line"))


async def test_a_pools_title_wider_than_its_pane_wraps_between_words(tmp_path):
    # at 80x24 the pool pane is 36 columns: "Mamba state pool · one state a node" was cut to
    # "... one state a" with nothing to say more was there
    from radixviz.tui.widgets.pool_pane import pool_lines
    from tui_helpers import stepper
    script = 'engine unified\ncomponents full,mamba\ninsert "You_are_kind._Q1"\n'
    async with stepper(tmp_path, script, size=(80, 24)) as (app, pilot):
        await pilot.press("end")
        pane = app.screen.query_one("#pool-pane")
        await wait_until(pilot, lambda: bool(pane.view_width))
        frame = app.screen.model.frame
        lines = [line.plain for line in pool_lines(frame.pool, frame.marks, pane.view_width)]
        title = next(i for i, line in enumerate(lines) if line.startswith("Mamba"))
        assert " ".join(lines[title:title + 2]).startswith("Mamba state pool · one state a node")
        assert all(len(line) <= pane.view_width for line in lines[title:title + 2])
