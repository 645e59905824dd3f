"""Every entry point a person types paints its first screen before torch is imported.

Each command runs through the real command line (``radixviz.cli.main``) in a fresh Python,
with the terminal replaced by Pilot's: at the first paint the app notes whether torch is
loaded and what the screen shows, then quits. Not timed (``bench/first_paint.py`` times
them in a real terminal); what matters here is the order: paint first, torch after.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIRST_PAINT = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv.pop(1))   # the tests folder: its one reader of the painted screen
from radixviz.tui.app import RadixvizApp
from tui_helpers import painted_strips

seen = {}
painted = RadixvizApp._painted

def note_first_paint(self):
    rows = painted_strips(self)
    seen["torch"] = "torch" in sys.modules
    seen["text"] = "\n".join("".join(s.text for s in row) for row in rows)
    painted(self)
    self.exit()

def headless_run(self, *args, **kwargs):
    async def run():
        async with self.run_test(size=(100, 32)):
            while self.is_running:
                await asyncio.sleep(0.01)
    asyncio.run(run())

RadixvizApp._painted = note_first_paint
RadixvizApp.run = headless_run
from radixviz.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
seen["torch_at_exit"] = "torch" in sys.modules
print(json.dumps(seen))
"""

# the command, then text its first screen shows
ENTRY_POINTS = [
    (["home", "--device", "cpu"], "Sandbox: an empty cache"),
    (["sandbox", "--device", "cpu"], "loading the engine"),
    (["lesson", "1", "--device", "cpu"], "loading the engine"),
    (["simulate", "--app"], "scheduler"),
    # what each tab of ``radixviz serve`` runs (serve's app_command)
    (["home", "--no-preload", "--device", "cpu"], "Sandbox: an empty cache"),
]


def first_paint(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", FIRST_PAINT, str(Path(__file__).parent), *argv], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv, shown", ENTRY_POINTS, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_first_screen_is_painted_before_torch_is_imported(argv, shown):
    seen = first_paint(argv)
    assert shown in seen["text"]
    assert seen["torch"] is False


def test_a_served_tab_never_loads_torch_on_the_home_screen():
    assert first_paint(["home", "--no-preload", "--device", "cpu"])["torch_at_exit"] is False


def test_challenge_prints_its_goal_without_torch():
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom radixviz.cli import main\n"
                           "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
                           "print('torch' in sys.modules)", "challenge", "evict-short"],
                          capture_output=True, text=True, timeout=120)
    assert "Ask for more than you get" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "False"
