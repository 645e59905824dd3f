"""Home, help, the command palette, lessons, quitting, and the entry points' exit codes."""
from __future__ import annotations

import subprocess
import sys

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import OptionList

from radixviz.cli import build_parser
from radixviz.lessons import load_lessons
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.help import HelpScreen
from radixviz.tui.screens.home import HomeScreen
from radixviz.tui.screens.stepper import StepperScreen
from tui_helpers import (answer_docked, dock_shown, lesson_stepper, narration, notifications,
                         painted_text, plain, screen_rows, status, stepper, wait_ready, wait_until,
                         walk_until)


class TestHelpAndPalette:
    @pytest.mark.parametrize("key", ["question_mark", "f1"])
    async def test_help_opens_and_closes(self, tmp_path, key):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press(key)
            assert isinstance(app.screen, HelpScreen)
            text = " ".join(plain(s.content) for s in app.screen.query("Static"))
            assert "before PR #7" in text and "wrongly matched" in text
            await pilot.press("escape")
            assert isinstance(app.screen, StepperScreen)

    async def test_palette_lists_and_runs_stepper_actions(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+p")
            assert isinstance(app.screen, CommandPalette)
            await pilot.press(*"buggy one")
            found = app.screen.query_one(CommandList)
            await wait_until(pilot, lambda: found.option_count and found.highlighted is not None)
            assert "key: b" in str(found.get_option_at_index(found.highlighted).prompt)
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, StepperScreen))
            assert "matcher BUGGY" in status(app)

    async def test_palette_offers_every_described_binding(self, tmp_path):
        async with stepper(tmp_path) as (app, _pilot):
            titles = {command.title for command in app.get_system_commands(app.screen)}
            # b is the #7 switch on the 2024 engine: the host tier's switch is not offered
            shown = app.screen.shown_keys(StepperScreen.BINDINGS)
        described = {b.tooltip or b.description for b in shown if b.description}
        assert described <= titles and len(shown) == len(StepperScreen.BINDINGS) - 1
        assert not any("9fbe6800a" in title for title in titles)
        assert {"Quit", "Theme"} <= titles              # and Textual's own commands stay

    async def test_palette_leaves_out_what_the_screen_cannot_do_yet(self, tmp_path):
        from radixviz.tui.app import session_loader
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_ready(app, pilot)
            stepper_screen = StepperScreen(session_loader(device="cpu"))
            titles = {c.title for c in app.get_system_commands(stepper_screen)}
        assert "this help" in titles and "back to the home screen" in titles
        assert "next micro-step (→, space or n)" not in titles   # no engine loaded in it yet


class TestQuit:
    async def test_q_quits_with_code_0(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("q")          # the script as loaded: nothing to lose, no question
        assert app.return_code == 0

    def test_a_crash_exits_non_zero(self, monkeypatch):
        """The sandbox command returns the app's return code, so a crash is not exit 0."""
        from radixviz.commands import sandbox

        def boom(self):
            raise RuntimeError("deliberate crash")
        monkeypatch.setattr(StepperScreen, "action_next", boom)
        original_run = RadixvizApp.run

        def headless_run(self, **kwargs):
            async def press_next(pilot):
                await wait_ready(pilot.app, pilot)
                await pilot.press("n")
            return original_run(self, headless=True, auto_pilot=press_next)
        monkeypatch.setattr(RadixvizApp, "run", headless_run)
        # the arguments as the command line gives them, so a new option reaches the test too
        args = build_parser().parse_args(["sandbox", "--pool-size", "16", "--device", "cpu",
                                          "--export-dir", "unused"])
        assert sandbox.run(args) == 1


class TestHome:
    async def test_home_lists_lessons_and_opens_the_sandbox(self):
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(100, 40)) as pilot:
            await wait_ready(app, pilot)
            assert isinstance(app.screen, HomeScreen)
            menu = app.screen.query_one(OptionList)
            prompts = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
            titles = [f"Lesson {l.number}: {l.title}" for l in load_lessons()]
            assert prompts[4:4 + len(titles)] == titles   # after the two sandboxes and the two side by sides
            await pilot.press("enter")                       # the first entry: the sandbox
            await wait_ready(app, pilot)
            assert isinstance(app.screen, StepperScreen)
            assert "no steps yet" in status(app)
            await pilot.press("h")                           # back home
            assert isinstance(app.screen, HomeScreen)

    async def test_example_entry_opens_the_chapter_example(self):
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(100, 40)) as pilot:
            await wait_ready(app, pilot)
            await pilot.press("x")
            await wait_ready(app, pilot)
            await pilot.press("end")
            assert "match_prefix returns 6 token(s)" in narration(app)


class TestLesson:
    async def test_a_lesson_walks_text_predictions_operations_and_answers(self):
        async with lesson_stepper() as (app, pilot, lesson):
            prose = next(line for line in lesson.blocks[0].text.splitlines()
                         if line.strip() and not line.startswith("#"))
            assert " ".join(prose.split()[:4]) in " ".join(" ".join(painted_text(app, "#lesson-pane")).split())
            asked = 0
            for _ in range(300):
                if dock_shown(app):
                    asked += 1
                    if asked == 1:               # the first one by its letter, right
                        await answer_docked(app, pilot, right=True)
                    elif asked == 2:             # the second with the arrows and enter, wrong
                        predict = app.screen.walk.waiting
                        wrong = next(i for i, c in enumerate(predict.choices) if c != predict.answer)
                        await pilot.press(*["down"] * wrong, "enter")
                    else:
                        await pilot.press("escape")
                    continue
                if app.screen.walk.at_end:
                    break
                await pilot.press("right_square_bracket")
            text = " ".join(" ".join(painted_text(app, "#lesson-pane")).split())
            assert asked == sum(type(b).__name__ == "Predict" for b in lesson.blocks) > 2
            assert f"End of lesson 1. You predicted 1 of {asked}." in text   # one right, one wrong
            assert len(app.screen.model.session.records) == len(lesson.operations)
            assert "page" in status(app)

    async def test_a_free_answer_says_its_form_and_an_unreadable_one_is_asked_again(self):
        async with lesson_stepper() as (app, pilot, _lesson):
            await walk_until(app, pilot, lambda: dock_shown(app) and not app.screen.walk.waiting.choices,
                             key="right_square_bracket", docked="answer")
            rows = " ".join(screen_rows(app))
            assert "a number of tokens" in rows
            await pilot.press("z", "z", "enter")
            assert dock_shown(app), "a reply that cannot be read is not an answer"
            assert "could not read" in " ".join(painted_text(app, "#predict-dock"))


class TestNarrowTerminal:
    async def test_a_lesson_at_80x24_reads_across_the_screen_and_watches_beside_the_tree(self):
        async with lesson_stepper((80, 24)) as (app, pilot, _lesson):
            screen = app.screen
            # a paragraph: the reading layout, the text across the whole width, no tree
            assert screen.query_one("#lesson-pane").size.width > 70
            assert not painted_text(app, "#tree-pane")
            await pilot.press("r")            # r: watch, the tree beside the text
            assert painted_text(app, "#tree-pane") and painted_text(app, "#lesson-pane")
            await pilot.press("r")
            assert not painted_text(app, "#tree-pane")
            await walk_until(app, pilot, lambda: painted_text(app, "#step-pane"))   # the first operations
            assert painted_text(app, "#tree-pane") and painted_text(app, "#lesson-pane")
            await pilot.press("a")
            line = status(app).strip()
            assert len(line) <= 80 and "page" in line and "step" in line and "▶" in line
            await pilot.press("a")
            await walk_until(app, pilot, lambda: screen.walk.at_end, key="right_square_bracket")
            await pilot.press("right")
            assert "go home with h" in notifications(app)[-1] or "h goes home" in notifications(app)[-1]
            await pilot.press("h")
            assert isinstance(app.screen, HomeScreen)


class TestEntryPoints:
    def test_home_screen_imports_no_torch(self):
        code = ("import sys; import radixviz.tui.app, radixviz.tui.screens.home, "
                "radixviz.tui.screens.stepper, radixviz.commands.home; print('torch' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "False"

    @pytest.mark.parametrize("argv, message", [
        (["sandbox", "no/such/script.txt"], "no such script file"),
        (["sandbox", "--pool-size", "0"], "argument --pool-size: must be between 1 and 1000000, not 0"),
        (["lesson", "999"], "no lesson '999'"),
        (["home", "--lessons", "no/such/dir"], "no such folder"),
        (["sandbox", "--device", "gpu"], "argument --device: gpu: use auto, cpu or cuda"),
        (["lesson", "1", "--device", "foo"], "argument --device: foo: use auto, cpu or cuda"),
    ])
    def test_bad_arguments_exit_2_with_one_line(self, argv, message):
        out = subprocess.run([sys.executable, "-m", "radixviz", *argv], capture_output=True, text=True)
        assert out.returncode == 2
        assert message in out.stderr and out.stderr.count("\n") == 1

    def test_a_bad_line_in_a_sandbox_script_exits_2_before_the_app_starts(self, tmp_path):
        script = tmp_path / "bad.rv"
        script.write_text('insert "abc"\nevict lots\n')
        out = subprocess.run([sys.executable, "-m", "radixviz", "sandbox", str(script)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2
        assert out.stderr == f"radixviz: {script}:2:7: bad number 'lots': evict takes a token count, e.g. evict 5\n"


class TestLessonAutoplay:
    async def test_autoplay_stops_at_a_prediction_and_plays_operations(self):
        async with lesson_stepper() as (app, pilot, _lesson):
            screen = app.screen
            await pilot.press(*["plus"] * 6, "a")   # from the first paragraph: on to the question
            await wait_until(pilot, lambda: dock_shown(app))
            assert not screen.playing   # a prediction pauses autoplay: nothing runs behind it
            await answer_docked(app, pilot)
            await pilot.press("a")                  # the operations play on their own
            await wait_until(pilot, lambda: not screen.playing)
            assert screen.walk.stop.kind in ("answer", "read", "ask")   # paused where there is text
