"""A monkey test: hundreds of seeded random keys across every screen, and no exception."""
from __future__ import annotations

import os
import random

from radixviz.tui.app import RadixvizApp
from tui_helpers import wait_ready

# every binding of every screen, keys that move focus or confirm, and letters and digits
# that end up typed into the operation input or a prediction's answer
KEYS = ("right space n left p home end right_square_bracket left_square_bracket a plus minus "
        "colon i b s e E pageup pagedown shift+up shift+down question_mark f1 f5 escape h w x z l u "
        "up down enter tab ctrl+p backspace m t c r k 1 2 5 quotation_mark semicolon").split()
ENTER_OPS = ['insert "Hello_L.A.!"', 'insert "Hello_world"', "match Hello_world", "lock Hello",
             "evict 3", "unlock Hello", "matcher buggy", "reset", "tokens 1 2 3", "insert abc"]
BUDGET = 800   # Pilot waits for the app to go idle after each key: about 0.1-0.2 s a key here


async def _one_run(rng, tmp_path, budget: int, screens: set) -> int:
    """Press random keys until ``budget`` is spent or the learner quit (the palette has a
    Quit command); return how many keys were pressed. Any exception fails the test."""
    app = RadixvizApp("home", device="cpu", pool_size=48, export_dir=tmp_path / "export")
    pressed = 0
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        while pressed < budget and app.is_running:
            if rng.random() < 0.05:
                # now and then a whole, well-formed operation, so the tree grows
                keys = ["colon", *rng.choice(ENTER_OPS), "enter"]
            else:
                keys = [rng.choice(KEYS) for _ in range(rng.randint(1, 8))]
            await pilot.press(*keys)
            pressed += len(keys)
            screens.add(type(app.screen).__name__)
            if rng.random() < 0.1:
                await app.workers.wait_for_complete()
        if app.is_running:
            await app.workers.wait_for_complete()
            await pilot.pause()
    assert app.return_code in (None, 0)
    return pressed


async def test_random_keys_never_crash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(int(os.environ.get("RADIXVIZ_MONKEY_SEED", "20240607")))
    screens: set = set()
    pressed = 0
    while pressed < BUDGET:
        pressed += await _one_run(rng, tmp_path, BUDGET - pressed, screens)
    # the walk really went through the screens
    assert {"HomeScreen", "StepperScreen", "HelpScreen"} <= screens
