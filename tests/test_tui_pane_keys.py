"""Every pane scrolls from the keyboard: tab picks a pane (its border lights up), then ↑ ↓
pgup pgdn scroll it; ? lists those keys. In a lesson pgdn scrolls the lesson's text until
tab picks another pane. (Before, only the mouse wheel reached the pool's lower rows.)"""
import pytest

from radixviz.tui.screens.help import HelpScreen
from tui_helpers import lesson_stepper, painted_text, screen_rows, stepper

pytestmark = pytest.mark.slow   # an app each: seconds

# a tree and a pool taller than their panes at 80x24
MANY = "\n".join(f'insert "{chr(97 + i)}{chr(97 + i)}xyz{i}"' for i in range(20)) + "\n"


async def scrolled_by(pilot, app, selector: str, *keys: str) -> tuple[list, list]:
    """(what the pane painted, what it paints after ``keys``)."""
    before = painted_text(app, selector)
    await pilot.press(*keys)
    await pilot.pause()
    return before, painted_text(app, selector)


async def test_tab_picks_each_pane_and_the_arrows_scroll_it(tmp_path):
    async with stepper(tmp_path, MANY, size=(80, 24)) as (app, pilot):
        await pilot.press("end")   # the last step: the whole tree
        for selector in ("#tree-pane", "#pool-pane"):
            await pilot.press("tab")
            await pilot.pause()
            assert app.focused is app.screen.query_one(selector)
            assert app.focused.styles.border_top[0] == "heavy", "the picked pane's border lights up"
            await pilot.press("pageup", "pageup", "pageup")
            before, after = await scrolled_by(pilot, app, selector, "pagedown")
            assert after != before and before[-1] in after, f"{selector}: a page down, its last row kept"
            _, up = await scrolled_by(pilot, app, selector, "up")
            assert up[1:] == after[:-1], f"{selector}: a row up"
            _, top = await scrolled_by(pilot, app, selector, "pageup")
            assert top == before, f"{selector}: pgup back to the top"
        await pilot.press("tab")    # the code pane shows a window of the function: ↑ ↓ move it
        await pilot.pause()
        assert app.focused is app.screen.query_one("#code-pane")
        before, after = await scrolled_by(pilot, app, "#code-pane", "up", "up", "up")
        assert after != before and after[0] == before[0], "the header stays; the window moves"
        # a step shows its own line again
        await pilot.press("escape", "left")
        await pilot.pause()
        assert app.focused is None and any("❱" in row for row in painted_text(app, "#code-pane"))


async def test_without_a_pane_picked_the_keys_scroll_the_tree_and_step_on(tmp_path):
    async with stepper(tmp_path, MANY, size=(80, 24)) as (app, pilot):
        await pilot.press("end")
        before, after = await scrolled_by(pilot, app, "#tree-pane", "pagedown")
        assert after != before
        status = screen_rows(app)[-2]
        await pilot.press("left")   # ← still steps: no pane takes it
        await pilot.pause()
        assert screen_rows(app)[-2] != status


async def test_help_lists_the_keys_that_scroll_a_pane(tmp_path):
    async with stepper(tmp_path, 'insert "ab"\n', size=(120, 70)) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(screen_rows(app))
        for words in ("tab", "move to the next pane", "↑", "scroll the pane tab picked up a line",
                      "pgdn", "scroll the pane tab picked down a page", "b", "Bug #7", "the buggy one"):
            assert words in text, words


async def test_in_a_lesson_pgdn_scrolls_the_text_until_tab_picks_a_pane():
    async with lesson_stepper(size=(80, 24)) as (app, pilot, _lesson):
        page = app.screen.query_one("#lesson-pane")
        assert page.more_below
        before, after = await scrolled_by(pilot, app, "#lesson-pane", "pagedown")
        assert after != before and before[-1] in after
        await pilot.press("tab")   # reading at 80x24: the text is the one pane to pick
        await pilot.pause()
        assert app.focused is page
        _, up = await scrolled_by(pilot, app, "#lesson-pane", "up")
        assert up[1:] == after[:-1]


async def test_a_docked_questions_letter_picks_its_option_wherever_the_focus_is():
    """With a question docked, ``a`` is its option a even once tab has moved the focus to a
    pane (before, it started autoplay there)."""
    from tui_helpers import dock_shown, walk_until
    async with lesson_stepper(size=(120, 40)) as (app, pilot, lesson):
        await walk_until(app, pilot, lambda: dock_shown(app))
        asked = app.screen.walk.waiting
        await pilot.press("tab", "tab")
        await pilot.pause()
        assert app.focused is not None and "pane" in app.focused.classes
        await pilot.press("a")
        await pilot.pause()
        assert not app.screen.playing
        assert app.screen.walk.replies[lesson.blocks.index(asked)].said == f"a) {asked.choices[0]}"
