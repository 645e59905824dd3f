"""The app with SGLang's 9fbe6800a write_back bugs: ``b`` on the host-tier engine turns them
on (one operation, shown in the status line), and the host-leaf bug's damage is painted in
the pool pane: the lost node named, its slots marked ``?``."""
from __future__ import annotations

from radixviz.engines.hicache.views_pool import pool_rows
from tui_helpers import pane_rows, stepper, wait_until

SCRIPT = 'write-policy write_back\ninsert "xyz"\nevict 3\ninsert "xyzuv"\n'


def keys(text: str) -> list:
    return [{" ": "space", "-": "minus"}.get(ch, ch) for ch in text]


def painted(app, selector: str) -> str:
    return "\n".join(pane_rows(app, selector))


async def test_b_brings_the_bugs_back_and_the_pool_pane_names_the_lost_node(tmp_path):
    async with stepper(tmp_path, SCRIPT, size=(120, 40), engine_options={
            "engine": "hicache", "page_size": 1, "eviction_policy": "lru"}, pool_size=32) as (app, pilot):
        await pilot.press("end")
        # the host pool's sizes come before the badge's settings: at 120 columns the badge is the name
        await wait_until(pilot, lambda: "hicache host 3/65 (0 evictable" in painted(app, "#status-line")
                         .replace("evictable 5 · total 5 · free 27/32 · ", ""))
        assert "BUGS" not in painted(app, "#status-line")
        await pilot.press("b")
        await wait_until(pilot, lambda: app.screen.model.session.ops[-1].text == "hicache-fixes off")
        await pilot.press("end")   # the operation's last step: the switch is on there
        await wait_until(pilot, lambda: "hicache BUGS" in painted(app, "#status-line"))
        # the bugs act from here on: evict 5 files "xyz" as a host leaf above its child "uv",
        # and evict-host 2 deletes it
        await pilot.press("colon", *keys("evict 5"), "enter")
        await wait_until(pilot, lambda: app.screen.model.session.ops[-1].text == "evict 5")
        await pilot.press(*keys("evict-host 2"), "enter")
        await wait_until(pilot, lambda: app.screen.model.session.ops[-1].text == "evict-host 2")
        await pilot.press("escape", "end")
        await wait_until(pilot, lambda: "│ ·  ·  ·  ?  ? " in painted(app, "#pool-pane"))   # host slots 3-4
        # below the legend (the pane scrolls to them): the lost node, named with its slots
        frame = app.screen.model.frame
        lines = " ".join(line.plain for line in pool_rows(frame.pool, frame.marks, 60))
        assert "'uv' is out of the tree, nobody can reach it; it still holds host slots 3–4" in lines
        await pilot.press("b")   # and back: the fixes on again, the damage done stays
        await wait_until(pilot, lambda: app.screen.model.session.ops[-1].text == "hicache-fixes on")
        await pilot.press("end")
        await wait_until(pilot, lambda: "BUGS" not in painted(app, "#status-line"))


async def test_b_is_named_for_the_switch_it_is_on_each_engine(tmp_path):
    """On the host tier b switches SGLang's 9fbe6800a bugs: the footer and ? say so, and
    nothing there calls it "Bug #7" (the 2024 engine's matcher switch)."""
    from radixviz.tui.screens.help import HelpScreen
    from tui_helpers import screen_rows
    async with stepper(tmp_path, SCRIPT, size=(160, 40), engine_options={
            "engine": "hicache", "page_size": 1, "eviction_policy": "lru"}, pool_size=32) as (app, pilot):
        assert "b Bugs 9fbe6800a" in screen_rows(app)[-1] and "Bug #7" not in screen_rows(app)[-1]
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = " ".join(screen_rows(app))
        assert "SGLang's two write_back bugs of 9fbe6800a" in shown and "before PR #7" not in shown
    async with stepper(tmp_path, 'insert "ab"\n', size=(160, 40)) as (app, pilot):
        assert "b Bug #7" in screen_rows(app)[-1] and "9fbe6800a" not in screen_rows(app)[-1]
