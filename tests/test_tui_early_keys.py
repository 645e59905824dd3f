"""Keys are never lost: those pressed while the engine loads act once it is ready, in order,
and letters that arrive in one burst with ``:`` are typed into the operation input."""
from __future__ import annotations

import threading

from textual import events

import radixviz.tui.app as app_module
from radixviz.tui.app import RadixvizApp
from tui_helpers import screen_rows, stepper, wait_until


def painted(app) -> str:
    return "\n".join(screen_rows(app))


def burst(app, text: str) -> None:
    """``text`` as key events queued all at once, as a browser or a paste delivers them."""
    names = {" ": "space", ":": "colon", '"': "quotation_mark"}
    for char in text:
        app._driver.send_message(events.Key(names.get(char, char), char))


async def test_keys_pressed_while_the_engine_loads_act_when_it_is_ready(monkeypatch):
    release = threading.Event()
    loader = app_module.session_loader

    def held_loader(*args, **kwargs):
        load = loader(*args, **kwargs)

        def wait_then_load():
            release.wait(timeout=180)   # hang guard   # the engine is "loading" until the keys are in
            return load()
        return wait_then_load
    monkeypatch.setattr(app_module, "session_loader", held_loader)
    app = RadixvizApp("sandbox", device="cpu", script_text='insert "Hello_L.A.!"\n')
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(pilot, lambda: "loading the engine" in painted(app))
        await pilot.press("right", "right", "colon", *"insert abc", "enter", "escape", "right")
        assert "loading the engine" in painted(app)       # nothing acted yet
        release.set()
        await wait_until(pilot, lambda: "op 2/2" in painted(app))
        await pilot.pause()
        model = app.screen.model
        # → → stepped in the first operation, the typed one ran (showing its first step),
        # esc closed the input and → went one step into it
        assert [r.op.text for r in model.session.records] == ['insert "Hello_L.A.!"', "insert abc"]
        step = model.session.records[-1].first_frame + 2      # counted from 1 on screen
        assert f"step {step}/{len(model.frames)}" in painted(app)


async def test_letters_in_one_burst_with_the_colon_are_typed_not_run_as_keys(tmp_path):
    async with stepper(tmp_path, script=None) as (app, pilot):
        burst(app, ':insert "sab"')   # s would open the node picker, a start autoplay
        await pilot.pause()
        await pilot.press("enter")
        assert type(app.screen).__name__ == "StepperScreen"
        assert [r.op.text for r in app.screen.model.session.records] == ['insert "sab"']
        await pilot.press("escape", "end")
        assert "'sab'" in painted(app)
