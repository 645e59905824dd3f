"""Challenges in the app, walked as a learner does: from home to the list, into a
challenge, typing operations, hints, the solution, and the success screen."""
import json

from textual.widgets import Input, OptionList

from radixviz.tui.app import RadixvizApp, wait_until_ready
from tui_helpers import plain, screen_rows


async def open_challenge(pilot, app, number: int) -> None:
    """From home: c opens the list; pick challenge ``number`` (1-based) and wait for the engine."""
    await pilot.press("c")
    menu = app.screen.query_one("#challenge-menu", OptionList)
    menu.highlighted = number - 1
    await pilot.press("enter")
    await wait_until_ready(app, pilot)


async def type_ops(pilot, *lines: str) -> None:
    """Open the input once and type each line: it stays open until esc, as a person sees."""
    await pilot.press("colon")
    for line in lines:
        await pilot.press(*line)
        await pilot.press("enter")
        await pilot.pause()
    if type(pilot.app.screen).__name__ == "ChallengeScreen":
        await pilot.press("escape")


def goal_text(app) -> str:
    return plain(app.screen.query_one("#goal-pane").content, width=160)


async def test_solve_a_challenge_from_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        await open_challenge(pilot, app, 1)
        assert "○" not in goal_text(app) and "✗ the last match returns six tokens  (no match yet)" in goal_text(app)
        assert "operations 0 · par 2" in goal_text(app)

        await type_ops(pilot, 'insert "Hello_there"')
        assert "operations 1 · par 2" in goal_text(app)
        await type_ops(pilot, 'match "Hello_world"')
        assert type(app.screen).__name__ == "SolvedScreen"
        solved = app.screen.query_one("Markdown").source
        assert "Solved in 2 operations (at par!)" in solved
        assert 'match "Hello_world"' in solved
        await pilot.press("enter")
        assert "✓ the last match returns six tokens" in goal_text(app)

    saved = json.loads((tmp_path / "progress.json").read_text())["challenges"]["first-hit"]
    assert saved["solved"] is True and saved["ops"] == 2


async def test_hints_one_at_a_time_then_the_solution_counts_as_seen(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        await open_challenge(pilot, app, 7)          # locked-leaf
        assert "hint 1" not in goal_text(app)
        await pilot.press("question_mark")
        assert "hint 1: A running request holds" not in goal_text(app)   # that is the statement
        assert "hint 1: `lock` plays a request" in goal_text(app)
        assert "hint 2" not in goal_text(app)
        await pilot.press("question_mark")
        assert "hint 2: Asking for too little" in goal_text(app)

        await pilot.press("g")
        assert type(app.screen).__name__ == "SolutionScreen"
        assert 'lock "Hello_there"' in app.screen.query_one("Markdown").source
        await pilot.press("escape")
        assert "solution seen" in goal_text(app)

        await type_ops(pilot, 'lock "Hello_there"', "evict 11")   # now solving it counts as seen
        assert "You saw the solution first" in app.screen.query_one("Markdown").source
        await pilot.press("escape")
        await pilot.press("h")
        assert "· seen" in str(app.screen.query_one("#challenge-menu", OptionList).get_option_at_index(6).prompt)

    saved = json.loads((tmp_path / "progress.json").read_text())["challenges"]["locked-leaf"]
    assert saved.get("seen_solution") is True and not saved.get("solved")


async def test_a_wrong_attempt_shows_what_is_missing_and_a_forbidden_op_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        await open_challenge(pilot, app, 4)          # split-count: matches only
        await type_ops(pilot, 'match "ab"', 'match "abc"')
        text = goal_text(app)
        assert "✗ with the edges ab, cd and ef  (edges are ab c def)" in text
        assert "✓ three nodes below the root" in text
        records = len(app.screen.model.session.records)

        await pilot.press("colon", *'insert "x"', "enter")
        assert "'insert' is not allowed in this challenge (allowed: match)" in \
            str(app.screen.query_one("#op-error").content)
        assert len(app.screen.model.session.records) == records       # nothing ran
        assert app.screen.query_one("#op-input", Input).value == 'insert "x"'   # nothing lost


async def test_the_debrief_says_what_the_learners_own_eviction_freed(tmp_path, monkeypatch):
    # a free leaf beside the locked one: this eviction frees 2 tokens and still falls short
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        await open_challenge(pilot, app, 9)
        await type_ops(pilot, 'insert "abcdef"', 'lock "abcdef"', 'insert "xy"', "evict 5")
        assert type(app.screen).__name__ == "SolvedScreen"
        await pilot.pause()
        painted = " ".join(" ".join(screen_rows(app)).split())
        assert "Your evict 5 freed 2 token(s), and the tree still holds 6." in painted
        assert "freed nothing" not in painted
