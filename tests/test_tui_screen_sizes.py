"""The stepper at the sizes people use: 80x24 keeps the keys and the tree header readable,
200x55 uses its room, notifications leave the narration alone, light themes paint the panes."""
from __future__ import annotations

import re

import pytest

from radixviz.tui.app import RadixvizApp, wait_until_ready
from test_tui_challenges import open_challenge
from tui_helpers import narration, painted_strips, pane_rows, screen_rows, stepper, wait_until

SCROLLBAR_MARKS = re.compile("[▁▂▃▄▅▆▇█▉▊▋▌▍▎▏▐]")
RELEASE = "insert-slots release\ninsert Hello\ninsert Hello_world\nmatch Hello_w\n"


def inside(rows: list[str]) -> str:
    """A pane's text without its border, rows joined by spaces."""
    return " ".join(row[1:-1] for row in rows[1:-1])


class TestAt80x24:
    async def test_the_footer_keeps_help_home_and_quit_and_cuts_no_key_in_half(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24)) as (app, pilot):
            footer = screen_rows(app)[-1]
            for key in ("→ Next", "] Next op", ": Op", "? Help", "h Home", "q Quit", "^p palette"):
                assert key in footer, footer
            # a key that does not fit is left out whole, never shown as a stray letter
            assert re.search(r"\s[a-zA-Z]▏", footer) is None, footer
            await pilot.press("h")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "HomeScreen")

    async def test_the_tree_header_is_whole_and_no_scrollbar_is_drawn_in_the_tree(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            rows = pane_rows(app, "#tree-pane")
            text = inside(rows)
            assert re.search(r"root\s+16 tokens · 16 evictable ·\s+matcher fixed", text), text
            # a line too wide for the pane wraps under its node instead of scrolling
            # sideways or being cut: every part of it is painted whole
            assert "'Hello_'" in text and re.search(r"'L\.A\.!'\s+slots 6–10\s+ref 0\s+│?\s*t \d+", text), text
            assert not SCROLLBAR_MARKS.search(text), "\n".join(rows)


class TestNarrowerTerminal:
    async def test_a_tree_line_that_no_longer_fits_wraps_under_its_node(self, tmp_path):
        """A node line wider than the pane wraps between its parts, the rest under the node:
        the row's strip, drawn for the wider pane, is drawn again for the narrower one, and
        nothing of the line is cut (issue 51: hashes, host slots and tiers were)."""
        long_key = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        script = f'insert "{long_key}"\ninsert "{long_key}xyzxyzxyzxyzxyz"\n'
        async with stepper(tmp_path, script=script, size=(140, 30)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            wide = pane_rows(app, "#tree-pane")[2]
            assert "slots 0–76  ref 0" in wide, wide   # the whole line fits at 140 columns
            await pilot.resize_terminal(90, 30)
            await wait_until(pilot, lambda: pane_rows(app, "#tree-pane")[2] != wide)
            rows = [row[1:-1].rstrip() for row in pane_rows(app, "#tree-pane")]
            at = next(i for i, row in enumerate(rows) if "└──" in row)
            first, rest = rows[at:at + 2]
            assert not first.endswith("…") and "slots 0–76" in first + rest, (first, rest)
            assert re.search(r"ref 0\s+t \d+$", rest), rest


class TestAt200x55:
    async def test_the_pool_grid_uses_the_width_of_its_pane(self, tmp_path):
        async with stepper(tmp_path, size=(200, 55)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            rows = pane_rows(app, "#pool-pane")
            pane_width = len(rows[0])
            first_row = rows[1].rstrip("│ ")
            assert len(first_row) >= pane_width - 3 * 4 - 4, (pane_width, first_row)
            labels = [int(row.split("│")[1]) for row in rows[1:4]]
            assert labels[1] - labels[0] >= 24 and labels[2] - labels[1] == labels[1] - labels[0]

    async def test_the_code_pane_shows_whole_source_lines(self, tmp_path):
        async with stepper(tmp_path, size=(200, 55)) as (app, pilot):
            await pilot.press("end", "t")   # t: with the tracing lines, the longest ones
            await pilot.pause()
            text = " ".join(inside(pane_rows(app, "#code-pane")).split())
            # the longest line of match_prefix, wrapped under its number, not cut at the edge
            assert "matched=len(value), slots=tuple(value.tolist()))" in text, text
            assert "def match_prefix(self, key):" in text and "return value, last_node" in text

    async def test_at_80x24_the_code_pane_keeps_more_lines_instead(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            rows = pane_rows(app, "#code-pane")
            numbered = [row for row in rows[2:-1] if re.match(r"│\s*❱?\s*\d+ ", row)]
            assert len(numbered) == len(rows) - 3   # one source line a row, none wrapped


class TestNotifications:
    async def test_a_burst_of_notes_shows_one_toast_and_leaves_the_narration_as_it_was(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24), toasts=True) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            before = pane_rows(app, "#narration-pane")
            # autoplay speed notes and exports: each says something
            await pilot.press("plus", "plus", "minus", "e", "plus", "minus", "e", "minus")
            await pilot.pause()
            assert len(app.screen.query("Toast")) <= 1
            toast = app.screen.query_one("Toast").region
            assert not toast.overlaps(app.screen.query_one("#narration-pane").region)
            await pilot.press("e")   # an export names its file: the last note is the one shown
            await pilot.pause()
            assert "svg" in "".join(screen_rows(app)) and "one step every" not in "".join(screen_rows(app))
            await wait_until(pilot, lambda: not app.screen.query("Toast"))
            await pilot.pause()
            after = pane_rows(app, "#narration-pane")
            assert after == before
            assert after[0].startswith("╭─ this step") and all(row[0] == row[-1] == "│" for row in after[1:-1])


class TestLightTheme:
    @pytest.mark.parametrize("selector", ["#tree-pane", "#pool-pane", "#code-pane"])
    async def test_every_cell_of_the_pane_has_the_pane_background(self, tmp_path, selector):
        async with stepper(tmp_path, size=(100, 32)) as (app, pilot):
            await pilot.press("end")
            app.theme = "textual-light"
            await pilot.pause()
            await pilot.pause()
            pane = app.screen.query_one(selector)
            background = pane.rich_style.bgcolor
            assert background is not None and background.triplet is not None
            region = pane.scrollable_content_region   # the scrollbar keeps its own colours
            strips = painted_strips(app)
            painted = 0
            for y in range(region.y, region.bottom):
                x = 0
                for segment in strips[y]:
                    if region.x <= x < region.right and not segment.style.reverse:
                        # the current step's mark is reversed on purpose: its colours swap
                        assert segment.style.bgcolor == background, (y, x, segment)
                        painted += 1
                    x += segment.cell_length
            assert painted > region.height   # the pane was really drawn

    async def test_the_palette_theme_switch_repaints_the_tree(self, tmp_path):
        async with stepper(tmp_path, size=(100, 32)) as (app, pilot):
            await pilot.press("end")
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette")
            await pilot.press(*"theme", "enter")
            await pilot.pause()
            await pilot.press(*"textual-light", "enter")
            await wait_until(pilot, lambda: app.theme == "textual-light")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "StepperScreen")
            await pilot.pause()
            pane = app.screen.query_one("#tree-pane")
            segments = [s for y in range(3) for s in pane.render_line(y) if not s.style.reverse]
            assert segments and all(s.style.bgcolor == pane.rich_style.bgcolor for s in segments)
            assert not app.current_theme.dark


class TestMisalignedNarration:
    async def test_the_match_after_a_release_insert_names_the_first_wrong_position(self, tmp_path):
        async with stepper(tmp_path, script=RELEASE, size=(100, 32)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            words = " ".join(narration(app).split())
            assert "Misaligned (#4): the walk matched 7 tokens 'Hello_w' but only 6 slots came back" in words
            assert "from position 4 'o' on, every slot holds a later token's K/V (position 4 gets slot 9)" in words
            assert "shifted by 1" in words
            await pilot.press("left")   # the step before the result: the walk is still going
            await pilot.pause()
            assert "Misaligned" not in narration(app)

    async def test_at_80x24_the_warning_is_in_view_without_scrolling(self, tmp_path):
        async with stepper(tmp_path, script=RELEASE, size=(80, 24)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            text = " ".join(inside(pane_rows(app, "#narration-pane")).split())
            assert "⚠ Misaligned (#4): the walk matched 7 tokens" in text, text


class TestEveryScreenAt80x24:
    """Not only the stepper: every screen with a footer keeps the way out in view."""

    async def test_home_keeps_help_and_quit(self, tmp_path, monkeypatch):
        monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until_ready(app, pilot)
            footer = screen_rows(app)[-1]
            assert "? Help" in footer and "q Quit" in footer, footer
            assert re.search(r"\s[a-zA-Z]▏", footer) is None, footer

    async def test_a_challenge_keeps_hint_the_way_back_and_quit(self, tmp_path, monkeypatch):
        monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until_ready(app, pilot)
            await open_challenge(pilot, app, 1)
            footer = screen_rows(app)[-1]
            for key in ("? Hint", "h Challenges", "q Quit"):
                assert key in footer, footer
            await pilot.press("h")   # says where it goes: the list the challenge came from
            await wait_until(pilot, lambda: type(app.screen).__name__ == "ChallengeListScreen")

    async def test_the_compare_view_keeps_back_and_quit(self, tmp_path):
        async with stepper(tmp_path, size=(80, 24)) as (app, pilot):
            await pilot.press("end", "c")
            await wait_until(pilot, lambda: getattr(app.screen, "side", None) is not None)
            footer = screen_rows(app)[-1]
            for key in ("d First difference", "esc Back", "q Quit"):
                assert key in footer, footer
            await pilot.press("escape")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "StepperScreen")
