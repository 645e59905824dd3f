"""The stepper's movement keys: micro-steps, whole operations, ends, autoplay."""
from __future__ import annotations

import pytest

from tui_helpers import notifications, stepper, status, view, wait_until


class TestStepKeys:
    @pytest.mark.parametrize("key", ["right", "space", "n"])
    async def test_next_moves_one_micro_step(self, tmp_path, key):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            assert model.position == 0
            await pilot.press(key, key)
            assert model.position == 2
            assert "step 3/" in status(app)

    @pytest.mark.parametrize("key", ["left", "p"])
    async def test_prev_moves_back_one_micro_step(self, tmp_path, key):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("right", "right", "right", key)
            assert app.screen.model.position == 2

    async def test_home_and_end(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            await pilot.press("end")
            assert model.position == len(model.frames) - 1
            assert model.frame.kind == "result"
            await pilot.press("right")            # already at the end: stays
            assert model.position == len(model.frames) - 1
            await pilot.press("home")
            assert model.position == 0
            await pilot.press("left")
            assert model.position == 0

    async def test_brackets_jump_whole_operations(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            records = app.screen.model.session.records
            model = app.screen.model
            await pilot.press("right_square_bracket")
            assert model.position == records[1].first_frame
            await pilot.press("right_square_bracket")
            assert model.position == records[2].first_frame
            assert model.frame.kind == "op" and "match" in model.frame["text"]
            await pilot.press("right", "left_square_bracket")   # back to this op's start
            assert model.position == records[2].first_frame
            await pilot.press("left_square_bracket")            # then to the previous op
            assert model.position == records[1].first_frame


class TestBackAndForth:
    async def test_stepping_back_shows_identical_frames(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            forward = [view(app)]
            for _ in range(len(model.frames) - 1):
                await pilot.press("right")
                forward.append(view(app))
            backward = [view(app)]
            for _ in range(len(model.frames) - 1):
                await pilot.press("left")
                backward.append(view(app))
            assert backward[::-1] == forward
            # and the frames really differ along the way (the test could fail)
            assert len({v[0] for v in forward}) > 3

    async def test_split_frame_marks_the_split(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            while model.frame.kind != "split":
                await pilot.press("right")
            tree, code, words, _ = view(app)
            assert "✂ 'Hello_'" in tree and "✂ 'L.A.!'" in tree
            assert "_split_node" in code and "❱" in code
            assert words.startswith("split after 6 tokens")


class TestAutoplay:
    async def test_a_plays_and_stops(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            screen, model = app.screen, app.screen.model
            for _ in range(10):
                await pilot.press("plus")        # fastest: one step every 0.05 s
            assert notifications(app)[-1] == "autoplay: one step every 0.05 s"
            # at 0.05 s a loaded machine can play all ~24 steps before the status is read:
            # play at 0.25 s, so the run lasts seconds and the test sees it while it plays
            await pilot.press("minus", "minus")
            await pilot.press("a")
            assert "▶ autoplay 0.25s" in status(app)
            await wait_until(pilot, lambda: model.position > 0)   # the timer stepped
            await pilot.press("a")
            assert not screen.playing and "autoplay" not in status(app)

    async def test_autoplay_stops_by_itself_at_the_last_step(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            screen, model = app.screen, app.screen.model
            await pilot.press("end", "left", "left", *["plus"] * 5, "a")
            await wait_until(pilot, lambda: not screen.playing)
            assert model.at_end and "autoplay" not in status(app)

    async def test_minus_slows_down_and_clamps(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("minus")
            assert notifications(app)[-1] == "autoplay: one step every 2.0 s"
            await pilot.press("minus", "a")            # the slowest already: stays
            assert notifications(app)[-1] == "autoplay: one step every 2.0 s"
            assert "▶ autoplay 2.0s" in status(app)


TALL = "\n".join(f'insert "{chr(97 + i % 26)}{chr(97 + i // 26)}xyz"' for i in range(60))


class TestScrolling:
    async def test_tree_follows_the_current_node_and_pages(self, tmp_path):
        async with stepper(tmp_path, script=TALL, size=(80, 24)) as (app, pilot):
            tree = app.screen.query_one("#tree-pane")
            model = app.screen.model
            await pilot.press("end", "left_square_bracket")      # the start of the last insert
            while model.frame.kind != "create":                  # to the new leaf, far down
                await pilot.press("right")
            assert tree.scroll_y > 0                             # the pane scrolled to it
            line = tree.focus_line
            assert "▶" in tree.lines[line].plain and model.frame.nodes[0] > 0
            assert tree.scroll_y <= line < tree.scroll_y + tree.scrollable_content_region.height
            before = tree.scroll_y
            await pilot.press("pageup")
            assert tree.scroll_y < before
            await pilot.press("pagedown")
            assert tree.scroll_y > 0

    async def test_shift_arrows_scroll_the_narration(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24)) as (app, pilot):
            pane = app.screen.query_one("#narration-pane")
            await pilot.press("end")                   # a long narration: the #7 note
            assert pane.max_scroll_y > 0
            await pilot.press("shift+down")
            assert pane.scroll_y > 0
            await pilot.press("shift+up")
            assert pane.scroll_y == 0


class TestFirstPaint:
    def test_first_screen_paints_before_torch_is_imported(self):
        """In a fresh interpreter, as `radixviz` starts: torch arrives only after the first paint."""
        import subprocess
        import sys
        code = """
import asyncio
from radixviz.tui.app import RadixvizApp
async def main():
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(80, 24)) as pilot:
        while app.first_paint is None:
            await pilot.pause()
        print(app.torch_at_first_paint)
asyncio.run(main())
"""
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "False"
