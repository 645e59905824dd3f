"""The app on the host-tier engine: a write-through, an eviction that keeps the host copy and
a load back, each seen on the painted screen as the learner steps through them."""
from __future__ import annotations

from tui_helpers import pane_rows, screen_rows, stepper, wait_until

SCRIPT = 'insert "Hello_world!"\nevict 12\nload-back "Hello_world!"\n'


def painted(app, selector: str) -> str:
    return "\n".join(pane_rows(app, selector))


def painted_words(app, selector: str) -> str:
    """A pane's painted text as one line: borders dropped, wrapped lines joined."""
    return " ".join(" ".join(row.strip("│╭╮╰╯─ ").split()) for row in pane_rows(app, selector))


async def step_until(app, pilot, words: str, limit: int = 80) -> None:
    """Press → until the narration pane shows ``words`` (at most ``limit`` steps)."""
    for _ in range(limit):
        await pilot.pause()
        if words in painted_words(app, "#narration-body"):
            return
        await pilot.press("right")
    raise AssertionError(f"never reached a step saying {words!r}:\n" + "\n".join(screen_rows(app)))


async def test_the_stepper_shows_each_transfer_between_the_tiers(tmp_path):
    async with stepper(tmp_path, SCRIPT, size=(130, 44), engine_options={
            "engine": "hicache", "page_size": 1, "eviction_policy": "lru"}, pool_size=32) as (app, pilot):
        await pilot.press("home")
        # 1. the insert writes the new node through to the host: it is locked, the copy in flight
        await step_until(app, pilot, "write 'Hello_world!' to the host")
        tree, pool = painted(app, "#tree-pane"), painted(app, "#pool-pane")
        assert "'Hello_world!'  [GPU→CPU]" in tree and "host 12/65 · 1" in tree
        assert "CPU · host pool" in pool and "[▤]" in pool          # the host slots being filled
        assert "write_backup" in painted(app, "#code-pane")
        # 2. the next operation acknowledges it, then evicts: the device copy goes, the host's stays
        await step_until(app, pilot, "is acknowledged: unlock it")
        await step_until(app, pilot, "its host copy 0–11 stays")
        tree, pool = painted(app, "#tree-pane"), painted(app, "#pool-pane")
        assert "'Hello_world!'  [CPU]  slots — · host 0–11" in tree
        assert "0/32 used" in pool and "12/65 used" in pool
        # 3. load back: new device slots, the node locked until the load is acknowledged
        await step_until(app, pilot, "load 'Hello_world!' back")
        tree = painted(app, "#tree-pane")
        assert "[CPU→GPU]  slots 0–11 · host 0–11" in tree
        await wait_until(pilot, lambda: "load_back" in painted(app, "#code-pane"))
        await step_until(app, pilot, "start copying 12 token(s) from host to device")
        assert "op 3/3" in painted(app, "#status-line")
