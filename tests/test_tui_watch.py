"""The watch app: a recording's tree drawn by the stepper's tree pane, with live figures, and
stepping back through the batches."""
from __future__ import annotations

import argparse
from pathlib import Path

from radixviz.commands.watch import load_recording
from radixviz.tui.watch_app import WatchApp
from radixviz.wire.playback import core_for

from tui_helpers import screen_rows

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "kv-events.rvkv"


def app_for(path: Path) -> WatchApp:
    args = argparse.Namespace(endpoint=None, file=str(path), speed=0.0, tokenizer=None,
                              exit_after=None, exit_after_idle=None, batches=None)
    records = load_recording(str(path))
    return WatchApp(args, core_for(records), records=records)


async def wait_for(pilot, app, text: str, limit: int = 600) -> str:
    for _ in range(limit):   # 600 pauses of 0.1 s: only a hang guard
        painted = "\n".join(screen_rows(app))
        if text in painted:
            return painted
        await pilot.pause(0.1)
    raise AssertionError(f"{text!r} never painted:\n" + "\n".join(screen_rows(app)))


async def test_the_recording_draws_its_last_tree_with_figures_and_steps_back():
    app = app_for(EXAMPLE)
    async with app.run_test(size=(120, 40)) as pilot:
        painted = await wait_for(pilot, app, "seq 9")
        assert "'The capital of'" in painted and "' Bye'" in painted
        assert "device (GPU): 40 blocks, 80 tokens" in painted
        assert "gaps 1" in painted and "recovered 1" in painted
        await pilot.press("left")
        painted = await wait_for(pilot, app, "seq 8")
        assert "batch 9 of 10 kept" in painted and "tokens 28–31" in painted and "t 0" not in painted
        await pilot.press("end")
        await wait_for(pilot, app, "seq 9 ")


async def test_before_the_first_batch_the_screen_says_what_it_waits_for():
    """A watcher started before its server has sent anything: the root and what to do, not a
    blank screen (a recording whose first batch has not played yet stands in for it)."""
    app = app_for(EXAMPLE)
    app.records = []          # nothing arrives
    async with app.run_test(size=(120, 40)) as pilot:
        painted = await wait_for(pilot, app, "waiting for the first batch")
        assert "root  (no batch yet)" in painted and "send it a request" in painted
