"""The home menu at the sizes people use: every entry in view on a big terminal, a scrolling
list (with the footer's keys) at 80x24."""
import pytest
from textual.widgets import OptionList

from radixviz.tui.app import RadixvizApp, wait_until_ready


@pytest.mark.parametrize("size", [(200, 55), (120, 40)])
async def test_every_home_entry_is_in_view_on_a_big_terminal(size):
    app = RadixvizApp("home", device="cpu", preload_engine=False)
    async with app.run_test(size=size) as pilot:
        await wait_until_ready(app, pilot)
        menu = app.screen.query_one("#home-menu", OptionList)
        assert menu.option_count >= 18            # sandboxes, twelve lessons, quiz, challenges, scheduler
        assert menu.max_scroll_y == 0             # nothing hidden below "Scheduler"


async def test_at_80x24_the_menu_scrolls_inside_the_screen():
    app = RadixvizApp("home", device="cpu", preload_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_ready(app, pilot)
        menu = app.screen.query_one("#home-menu", OptionList)
        assert menu.max_scroll_y > 0 and menu.region.bottom <= 24
