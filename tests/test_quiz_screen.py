"""The quiz screen in the app: answer, get feedback at once, "show me" in the stepper, score saved."""
from __future__ import annotations

import json

import pytest

from radixviz.lessons.quiz import make_quiz
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.quiz import QuizScreen
from tui_helpers import screen_rows


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    return tmp_path


def text(app, selector) -> str:
    return str(app.screen.query_one(selector).content)


async def open_quiz(app, pilot, quiz):
    await app.workers.wait_for_complete()
    app.push_screen(QuizScreen(quiz))
    await pilot.pause()


class TestAnswering:
    async def test_right_then_wrong_then_score_saved(self, data_dir):
        quiz = make_quiz(11, "easy", lesson=8, count=2)
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(110, 40)) as pilot:
            await open_quiz(app, pilot, quiz)
            assert "Question 1/2" in text(app, "#quiz-status")
            assert quiz.questions[0].prompt.splitlines()[0] in text(app, "#quiz-prompt")
            await pilot.press(*quiz.questions[0].example_reply(), "enter")
            assert text(app, "#quiz-feedback").startswith("✓ Right.")
            assert "score 1/1" in text(app, "#quiz-status")
            await pilot.press("enter", "0", "enter")          # next question, a wrong reply
            assert text(app, "#quiz-feedback").startswith("✗ Not quite (not those slots): the answer is 22-26.")
            await pilot.press("enter")
            assert text(app, "#quiz-prompt").startswith("Done: 1/2 right")
        saved = json.loads((data_dir / "progress.json").read_text())["scores"]
        assert [(s["score"], s["total"], s["lesson"], s["seed"]) for s in saved] == [(1, 2, 8, 11)]

    async def test_unreadable_reply_is_explained_not_counted(self):
        quiz = make_quiz(1, selftest=True)
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(110, 40)) as pilot:
            await open_quiz(app, pilot, quiz)
            await pilot.press("z", "z", "enter")
            assert "could not read 'zz'" in text(app, "#quiz-feedback")
            assert quiz.answers == []


class TestShowMe:
    async def test_set_up_only_before_answering_then_the_whole_scenario(self):
        quiz = make_quiz(5, "medium", lesson=3, count=1)
        question = quiz.questions[0]
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(110, 40)) as pilot:
            await open_quiz(app, pilot, quiz)
            await pilot.press("f5")
            await app.workers.wait_for_complete()
            await pilot.pause()
            setup_ops = list(app.screen.model.session.ops)
            assert type(app.screen).__name__ == "QuizShowMe"
            assert question.scenario.startswith("\n".join(op.text for op in setup_ops))
            rows = screen_rows(app)
            assert "h Quiz" in rows[-1] and "Home" not in rows[-1], "the footer says where h goes"
            assert "h: back to the quiz" in rows[-2]
            await pilot.press("h")                            # back to the quiz
            await pilot.pause()
            assert isinstance(app.screen, QuizScreen)
            await pilot.press(*question.example_reply(), "enter", "f5")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert len(app.screen.model.session.ops) == len(setup_ops) + 1
            await pilot.press("escape")                       # esc goes back too
            await pilot.pause()
            assert isinstance(app.screen, QuizScreen)


    async def test_a_replay_never_asks_to_be_saved(self):
        """On the host tier b adds an operation (the 9fbe6800a bugs switched): leaving the
        replay still asks nothing (it asked to save eight operations nobody typed)."""
        quiz = make_quiz(5, "medium", lesson=17, count=1)
        app = RadixvizApp("home", device="cpu")
        async with app.run_test(size=(110, 40)) as pilot:
            await open_quiz(app, pilot, quiz)
            await pilot.press("f5")
            await app.workers.wait_for_complete()
            await pilot.pause()
            ops = len(app.screen.model.session.ops)
            await pilot.press("b")
            await pilot.pause()
            assert len(app.screen.model.session.ops) == ops + 1
            await pilot.press("h")
            await pilot.pause()
            assert isinstance(app.screen, QuizScreen)


async def test_home_menu_opens_a_generated_quiz():
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(110, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("z")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        assert len(app.screen.quiz.questions) == 6 and "Question 1/6" in text(app, "#quiz-status")
