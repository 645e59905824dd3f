"""Nothing a learner does in the sandbox is lost: every way out asks when there is unsaved
work, a closed terminal leaves an autosave that the next sandbox offers back, ctrl+s never
replaces a file without asking, ctrl+o says at once what is wrong, and a typed line is
applied whole or not at all."""
from __future__ import annotations

import subprocess
import sys

from radixviz.script import load_script
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens import dialogs
from radixviz.tui.screens.dialogs import AskPath, ConfirmLeave, ConfirmOverwrite, RestoreWork
from radixviz.tui.screens.stepper import StepperScreen
from tui_helpers import screen_rows, shows, stepper, wait_ready, wait_until, watch_notifications


def op_texts(screen) -> list[str]:
    return [r.op.text for r in screen.model.session.records]


async def add_op(pilot, text: str = "insert xyz") -> None:
    await pilot.press("colon", *text, "enter", "escape")


def painted(app, words: str) -> bool:
    return any(words in row for row in screen_rows(app))


class TestEveryWayOutAsks:
    async def test_ctrl_q_asks(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            await pilot.press("ctrl+q")
            assert isinstance(app.screen, ConfirmLeave)
            assert painted(app, "This sandbox holds 4 operations")
            await pilot.press("escape")
            assert isinstance(app.screen, StepperScreen) and app.return_code is None

    async def test_words_typed_into_the_question_neither_leave_nor_save(self, tmp_path, monkeypatch):
        """The l of a word typed on (``match "hello"``) would leave without saving."""
        monkeypatch.setattr(dialogs, "TYPING_PAUSE_S", 0.3)
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            await pilot.press("ctrl+q", *'match "hello"', "enter")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmLeave) and app.return_code is None
            assert painted(app, "first answer with one of the keys above")
            await pilot.pause(0.4)
            await pilot.press("escape")
            assert isinstance(app.screen, StepperScreen) and len(app.screen.model.session.records) == 4

    async def test_the_palettes_quit_asks(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            await pilot.press("ctrl+p")
            await pilot.press(*"quit")
            await wait_until(pilot, lambda: painted(app, "Quit the application"))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmLeave))

    async def test_ctrl_c_hints_at_ctrl_q_which_asks(self, tmp_path):
        async with stepper(tmp_path, toasts=True) as (app, pilot):
            await add_op(pilot)
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: painted(app, "Press ctrl+q to quit the app"))
            assert isinstance(app.screen, StepperScreen)
            await pilot.press("ctrl+q")
            assert isinstance(app.screen, ConfirmLeave)

    async def test_q_in_the_compare_view_over_a_sandbox_asks(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            await pilot.press("c")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "CompareScreen")
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmLeave))

    async def test_leaving_on_purpose_quits_and_drops_the_autosave(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            autosave = app.screen.sandbox_work.autosave_path
            assert autosave.exists()
            await pilot.press("ctrl+q", "l")
            await pilot.pause()
        assert app.return_code == 0 and not autosave.exists()


class TestAClosedTerminalKeepsTheWork:
    async def test_every_change_is_autosaved(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            await add_op(pilot, 'insert "abc"')
            await add_op(pilot, 'match "abd"')
            saved = load_script(app.screen.sandbox_work.autosave_path)
            assert [op.text for op in saved] == ['insert "abc"', 'match "abd"']
            await pilot.press("u")
            assert len(load_script(app.screen.sandbox_work.autosave_path)) == 1

    async def test_the_next_sandbox_offers_the_work_back(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            folder = app.autosave_folder
        # a sandbox whose process is gone (its terminal closed) left its operations behind
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"sandbox-{gone}.rv").write_text('insert "abc"\ninsert "abd"\n', encoding="utf-8")
        app = RadixvizApp("sandbox", device="cpu")
        watch_notifications(app)
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_ready(app, pilot)
            await wait_until(pilot, lambda: isinstance(app.screen, RestoreWork))
            assert painted(app, "before its 2 operations were saved")
            await pilot.press("r")
            await pilot.pause()
            assert op_texts(app.screen) == ['insert "abc"', 'insert "abd"']
            assert not (folder / f"sandbox-{gone}.rv").exists()     # now this sandbox's own autosave
            await pilot.press("h")
            assert isinstance(app.screen, ConfirmLeave)               # and still unsaved work


    async def test_typing_into_the_offer_answers_nothing_until_the_learner_stops(self, tmp_path, monkeypatch):
        """Found walking the sandbox in tmux after a closed terminal: typing ``insert "hello"``
        and Enter without reading the offer restored the work with the r of insert, and the
        rest of the line acted as the sandbox's keys (it ended on the scheduler's screen)."""
        monkeypatch.setattr(dialogs, "TYPING_PAUSE_S", 0.3)
        async with stepper(tmp_path, script=None) as (app, pilot):
            folder = app.autosave_folder
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        folder.mkdir(parents=True, exist_ok=True)
        left = folder / f"sandbox-{gone}.rv"
        left.write_text('insert "abc"\n', encoding="utf-8")
        app = RadixvizApp("sandbox", device="cpu")
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_ready(app, pilot)
            await wait_until(pilot, lambda: isinstance(app.screen, RestoreWork))
            await pilot.press(*'insert "hello world"', "enter")
            await pilot.pause()
            assert isinstance(app.screen, RestoreWork) and left.exists()    # nothing answered
            assert painted(app, "first answer with one of the keys above")
            await pilot.press("r")                        # still typing: a moment has not passed
            assert isinstance(app.screen, RestoreWork)
            await pilot.pause(0.4)
            await pilot.press("d")                        # a key on its own answers
            await wait_until(pilot, lambda: isinstance(app.screen, StepperScreen))
            assert op_texts(app.screen) == [] and not left.exists()

    async def test_one_operation_left_is_said_in_the_singular(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            folder = app.autosave_folder
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"sandbox-{gone}.rv").write_text('insert "abc"\n', encoding="utf-8")
        app = RadixvizApp("sandbox", device="cpu")
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_ready(app, pilot)
            await wait_until(pilot, lambda: isinstance(app.screen, RestoreWork))
            assert painted(app, "before its 1 operation was saved")


class TestSavingNeverReplacesWithoutAsking:
    async def test_the_suggested_name_is_free(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "session.rv").write_text("insert first\n")
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+s")
            assert app.screen.query_one("#dialog-input").value == "session-2.rv"
            await pilot.press("enter")
            await pilot.pause()
        assert (tmp_path / "session.rv").read_text() == "insert first\n"
        assert len(load_script(tmp_path / "session-2.rv")) == 3

    async def test_an_existing_file_asks_n_offers_another_name_y_replaces(self, tmp_path):
        target = tmp_path / "mine.rv"
        target.write_text("insert precious\n")
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+s", "ctrl+a", "ctrl+k", *str(target), "enter")
            assert isinstance(app.screen, ConfirmOverwrite) and painted(app, "already exists")
            await pilot.press("n")
            assert isinstance(app.screen, AskPath)
            assert app.screen.query_one("#dialog-input").value == str(tmp_path / "mine-2.rv")
            await pilot.press("escape")
            assert target.read_text() == "insert precious\n"
            await pilot.press("ctrl+s", "ctrl+a", "ctrl+k", *str(target), "enter", "y")
            await pilot.pause()
        assert len(load_script(target)) == 3

    async def test_saving_again_to_the_same_file_does_not_ask(self, tmp_path):
        target = tmp_path / "again.rv"
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+s", "ctrl+a", "ctrl+k", *str(target), "enter")
            await add_op(pilot)
            await pilot.press("ctrl+s")
            assert app.screen.query_one("#dialog-input").value == str(target)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, StepperScreen)
        assert len(load_script(target)) == 4


class TestOpeningSaysAtOnce:
    async def test_a_missing_file_is_named_in_the_dialog(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+o", "ctrl+a", "ctrl+k", *str(tmp_path / "nope.rv"), "enter")
            await pilot.pause()
            assert isinstance(app.screen, AskPath)
            assert shows(app, "no such file", "#dialog-error")

    async def test_a_path_with_brackets(self, tmp_path):
        odd = tmp_path / "a[" / "]b"          # the path reads a[/]b
        odd.mkdir(parents=True)
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+o", "ctrl+a", "ctrl+k", *str(odd / "x.rv"), "enter")
            await pilot.pause()
            assert shows(app, "[/]", "#dialog-error")


class TestALineIsWholeOrNothing:
    async def test_an_error_halfway_applies_nothing_and_says_so(self, tmp_path):
        async with stepper(tmp_path, script=None, size=(160, 32)) as (app, pilot):
            screen = app.screen
            line = 'insert "abc"; unlock "zzz"; insert "abd"'
            await pilot.press("colon", *line, "enter")
            assert op_texts(screen) == []
            assert screen.model.session.pool.available_size() == 128
            assert shows(app, "nothing applied: operation 2 of 3 was refused, so the whole line was taken back",
                          "#op-error")
            assert screen.query_one("#op-input").value == line        # kept, to be fixed
            await pilot.press("ctrl+a", "ctrl+k", *'insert "abc"; insert "abd"', "enter")
            assert op_texts(screen) == ['insert "abc"', 'insert "abd"']
