"""A sandbox past its memory limit drops its oldest steps: stepping back stops at the oldest
step kept and says so on screen; the app goes on."""
from __future__ import annotations

from tui_helpers import screen_rows, status, stepper

SCRIPT = "\n".join(f'insert "{word}"' for word in
                   ("abcdefgh", "abcdxy", "abqq", "zzzz", "zzab", "hello", "help", "abcdefzz",
                    "qqqq", "hexx", "hepp", "zzabcd"))


def painted(app, words: str) -> bool:
    return any(words in row for row in screen_rows(app))


class TestOldestStepsDropped:
    async def test_stepping_back_stops_at_the_oldest_kept_step_and_says_why(self, tmp_path):
        async with stepper(tmp_path, script=SCRIPT, size=(160, 40), toasts=True,
                           history_mb=0.03) as (app, pilot):
            frames = app.screen.model.frames
            first, total = frames.first + 1, len(frames)
            assert first > 1    # the limit is small: the start of the script is gone
            await pilot.press("end")
            assert f"step {total}/{total}" in status(app)
            assert "dropped" not in status(app)
            await pilot.press("home")
            assert f"step {first}/{total}" in status(app)
            assert f"steps 1–{first - 1:,} dropped to keep memory under 0.03 MB" in status(app)
            await pilot.press("left")
            assert f"step {first}/{total}" in status(app)     # no further back
            assert painted(app, "No earlier steps")
            await pilot.press("right")
            assert f"step {first + 1}/{total}" in status(app) and "dropped" not in status(app)

    async def test_new_operations_keep_dropping_and_the_view_follows(self, tmp_path):
        async with stepper(tmp_path, script=SCRIPT, size=(160, 40), history_mb=0.03) as (app, pilot):
            dropped = app.screen.model.frames.dropped
            await pilot.press("home")
            await pilot.press("colon", *'insert "a new key to add"', "enter", "escape")
            await pilot.press("colon", *'insert "and another one"', "enter", "escape")
            frames = app.screen.model.frames
            assert frames.dropped > dropped
            await pilot.press("home")
            assert f"step {frames.first + 1}/{len(frames)}" in status(app)
            await pilot.press("end")
            assert f"step {len(frames)}/{len(frames)}" in status(app)
