"""A sandbox never loses work: undo and redo, save and open scripts, leaving asks first."""
from __future__ import annotations

from radixviz.script import load_script
from radixviz.tui.screens.dialogs import AskPath, ConfirmLeave
from radixviz.tui.screens.home import HomeScreen
from radixviz.tui.screens.stepper import StepperScreen
from tui_helpers import narration, notifications, shows, stepper, tree_text


def op_texts(app) -> list[str]:
    return [r.op.text for r in app.screen.model.session.records]


class TestUndoRedo:
    async def test_u_takes_back_the_last_operation_and_ctrl_y_brings_it_back(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("end")
            assert "✂" in tree_text(app)                      # the match split the edge
            await pilot.press("u")
            assert op_texts(app) == ['insert "Hello_L.A.!"', 'insert "Hello_L.A.!world"']
            assert "'Hello_L.A.!'" in tree_text(app) and "'Hello_'" not in tree_text(app)
            assert app.screen.model.session.pool.available_size() == 128 - 16
            await pilot.press("ctrl+y")
            assert op_texts(app)[-1] == 'match "Hello_world"'
            await pilot.press("end")
            assert "match_prefix returns 6 token(s)" in narration(app)

    async def test_ctrl_z_twice_then_a_new_operation_forgets_the_redo(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+z", "ctrl+z")
            assert op_texts(app) == ['insert "Hello_L.A.!"']
            await pilot.press("colon", *"insert xyz", "enter", "escape")
            await pilot.press("ctrl+y")
            assert op_texts(app) == ['insert "Hello_L.A.!"', "insert xyz"]
            assert any("nothing to redo" in n for n in notifications(app))

    async def test_undo_with_nothing_says_so(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            await pilot.press("u")
            assert any("nothing to undo" in n for n in notifications(app))


class TestSaveAndOpen:
    async def test_ctrl_s_writes_a_script_run_reads_back(self, tmp_path):
        target = tmp_path / "mine.rv"
        async with stepper(tmp_path, buggy=True) as (app, pilot):
            await pilot.press("ctrl+s")
            assert isinstance(app.screen, AskPath)
            await pilot.press("ctrl+a", "ctrl+k", *str(target), "enter")
            assert not isinstance(app.screen, AskPath)
        ops = load_script(target)
        assert [op.name for op in ops] == ["matcher", "insert", "insert", "match"]
        assert ops[-1].key == tuple("Hello_world")
        assert any(f"saved 3 operation(s) to {target}" in n for n in notifications(app))

    async def test_ctrl_o_runs_a_script_after_what_is_there(self, tmp_path):
        script = tmp_path / "more.rv"
        script.write_text("insert abc\nmatch abd\n", encoding="utf-8")
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("ctrl+o", "ctrl+a", "ctrl+k", *str(script), "enter")
            assert op_texts(app)[-2:] == ["insert abc", "match abd"]
            assert len(op_texts(app)) == 5

    async def test_ctrl_o_of_a_bad_file_says_where_and_runs_nothing(self, tmp_path):
        script = tmp_path / "bad.rv"
        script.write_text("insert abc\nfrob 1\n", encoding="utf-8")
        async with stepper(tmp_path) as (app, pilot):
            stepper_screen = app.screen
            await pilot.press("ctrl+o", "ctrl+a", "ctrl+k", *str(script), "enter")
            await pilot.pause()
            # the dialog stays open and says what is wrong, so the name can be fixed there
            assert isinstance(app.screen, AskPath)
            assert shows(app, f"{script}:2:1: unknown operation 'frob'", "#dialog-error")
            assert [r.op.text for r in stepper_screen.model.session.records][-1] == 'match "Hello_world"'
            assert len(stepper_screen.model.session.records) == 3


async def add_op(pilot, text: str = "insert xyz") -> None:
    await pilot.press("colon", *text, "enter", "escape")


class TestLeaving:
    async def test_h_with_new_operations_asks_and_esc_stays(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            screen = app.screen
            await add_op(pilot)
            await pilot.press("h")
            assert isinstance(app.screen, ConfirmLeave)
            await pilot.press("escape")
            assert app.screen is screen and len(op_texts(app)) == 4

    async def test_leave_after_saving(self, tmp_path):
        target = tmp_path / "kept.rv"
        async with stepper(tmp_path) as (app, pilot):
            await add_op(pilot)
            await pilot.press("h", "s")
            assert isinstance(app.screen, AskPath)
            await pilot.press("ctrl+a", "ctrl+k", *str(target), "enter")
            await pilot.pause()
            assert isinstance(app.screen, HomeScreen)
        assert len(load_script(target)) == 4

    async def test_q_asks_too_and_l_leaves(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("u")                     # an undo changes the history too
            await pilot.press("q")
            assert isinstance(app.screen, ConfirmLeave)
            await pilot.press("l")
            await pilot.pause()
        assert app.return_code == 0

    async def test_saved_work_leaves_without_asking(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            await add_op(pilot)
            await pilot.press("ctrl+s", "ctrl+a", "ctrl+k", *str(tmp_path / "s.rv"), "enter")
            await pilot.press("h")
            await pilot.pause()
            assert isinstance(app.screen, HomeScreen)

    async def test_a_saved_script_says_what_its_first_line_does(self, tmp_path):
        """b replays the whole session with the other matcher: the saved script starts on it,
        and its comment says so, not that the session started that way."""
        async with stepper(tmp_path) as (_app, pilot):
            await pilot.press("b")
            await pilot.pause()
            target = tmp_path / "s.rv"
            await pilot.press("ctrl+s", "ctrl+a", "ctrl+k", *str(target), "enter")
            await pilot.pause()
        lines = target.read_text(encoding="utf-8").splitlines()
        assert "matcher buggy   # the operations below start on the pre-#7 matcher" in lines
        assert not any("session started" in line for line in lines)

    async def test_an_untouched_sandbox_leaves_at_once(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("h")
            await pilot.pause()
            assert isinstance(app.screen, HomeScreen) and not isinstance(app.screen, StepperScreen)
