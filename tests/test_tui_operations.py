"""The operation input, the #7 switch, node actions and exports, driven by keys."""
from __future__ import annotations

import pytest
from textual.widgets import Input

from radixviz.tui.screens.node_picker import NodePicker
from tui_helpers import CHAPTER, narration, needs_dot, notifications, pane_rows, status, stepper, tree_text


async def type_op(pilot, text: str, opener: str = "colon") -> None:
    await pilot.press(opener, *text, "enter")


def kv_report_text(app) -> str:
    from radixviz.tui.screens.dialogs import KVReport
    assert isinstance(app.screen, KVReport), type(app.screen).__name__
    return str(app.screen.query_one("#kv-report").content)


class TestOpInput:
    @pytest.mark.parametrize("opener", ["colon", "i"])
    async def test_good_operation_runs_and_shows_its_first_step(self, tmp_path, opener):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            before = len(model.session.records)
            await type_op(pilot, 'insert "Hello_there"', opener)
            assert len(model.session.records) == before + 1
            assert model.frame.kind == "op" and model.record.op.text == 'insert "Hello_there"'
            field = app.screen.query_one("#op-input", Input)
            assert field.display and field.has_focus and field.value == ""   # open for the next one
            await pilot.press("escape")
            assert not field.display
            await pilot.press("right_square_bracket")    # to the end of it
            assert "'there'" in tree_text(app)

    async def test_the_input_stays_open_so_typed_letters_never_act_as_keys(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            screen, model = app.screen, app.screen.model
            await type_op(pilot, "insert abc")
            await pilot.press(*"matcher buggy", "enter")      # h, b, ... are letters here
            assert app.screen is screen                         # h did not go home
            assert [r.op.text for r in model.session.records][-2:] == ["insert abc", "matcher buggy"]
            await pilot.press("escape", "h")                    # closed: h is a key again
            assert app.screen is not screen

    async def test_several_operations_on_one_line(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            await type_op(pilot, "insert abc; insert abd; evict 1")
            assert [r.op.name for r in app.screen.model.session.records] == ["insert", "insert", "evict"]

    @pytest.mark.parametrize("text, error", [
        ("insert", "missing argument"),
        ("bogus 1", "unknown operation 'bogus'"),
        ('insert "unterminated', "unterminated quote"),
        ("unlock nothing", "no lock on 'nothing'"),
        ("evict -3", "negative eviction"),
    ])
    async def test_bad_input_shows_one_line_and_changes_nothing(self, tmp_path, text, error):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            await pilot.press("end")
            frames, records = len(model.frames), len(model.session.records)
            shown, tree = status(app), tree_text(app)
            await type_op(pilot, text)
            message = str(app.screen.query_one("#op-error").content)
            assert error in message and "\n" not in message
            field = app.screen.query_one("#op-input", Input)
            assert field.display and field.value == text        # the typing is not lost
            assert (len(model.frames), len(model.session.records)) == (frames, records)
            assert status(app) == shown and tree_text(app) == tree
            await pilot.press("escape")
            assert not field.display
            await pilot.press("left")                           # stepping keys work again
            assert model.position == frames - 2

    async def test_refused_insert_leaves_cache_and_pool_alone(self, tmp_path):
        async with stepper(tmp_path, script="insert abcdef; lock abcdef", pool_size=8) as (app, pilot):
            session = app.screen.model.session
            free, total = session.pool.available_size(), session.cache.total_size()
            await type_op(pilot, "insert xyzuvw")
            assert "pool full" in str(app.screen.query_one("#op-error").content)
            assert (session.pool.available_size(), session.cache.total_size()) == (free, total)

    async def test_bad_script_line_is_reported_and_the_rest_usable(self, tmp_path):
        async with stepper(tmp_path, script="insert abc\nfrobnicate 2\n") as (app, pilot):
            assert "<example>:2:1: unknown operation 'frobnicate'" in str(
                app.screen.query_one("#op-error").content)
            await type_op(pilot, "insert abd")
            assert app.screen.model.record.op.text == "insert abd"


class TestMatcherSwitch:
    async def test_b_toggles_the_matcher(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            assert "matcher fixed" in status(app)
            ops = [r.op.text for r in app.screen.model.session.records]
            await pilot.press("b")
            assert "matcher BUGGY" in status(app)
            assert app.screen.model.session.cache.buggy_match is True
            # the history is replayed, not added to
            assert [r.op.text for r in app.screen.model.session.records] == ops
            assert any("replayed 3 operation(s)" in n for n in notifications(app))
            await pilot.press("b")
            assert "matcher fixed" in status(app)
            assert app.screen.model.session.cache.buggy_match is False

    async def test_b_after_the_readme_match_shows_11_with_the_wrong_five(self, tmp_path):
        """The #7 flow of the README's tour: the fixed match has split the edge; b replays it all with the
        buggy matcher, so the same match now shows 11 tokens, the five of 'world' wrong."""
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("end")
            model = app.screen.model
            assert "match_prefix returns 6 token(s)" in narration(app)
            await pilot.press("b")
            assert model.record.op.text == 'match "Hello_world"' and model.at_end
            assert "match_prefix returns 11 token(s): slots 0–5, 22–26" in narration(app)
            tree = tree_text(app)
            assert "✗ 'world'" in tree
            assert "'Hello_│L.A.!' 6/11" in tree           # only 6 of the edge's 11 tokens matched
            await pilot.press("b")
            assert "match_prefix returns 6 token(s)" in narration(app) and model.at_end

    async def test_b_keeps_the_learner_on_the_same_operation(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            model = app.screen.model
            await pilot.press("end", "left_square_bracket", "left_square_bracket")
            shown = model.record.index
            await pilot.press("b")
            assert model.record.index == shown and model.frame.kind == "op"

    async def test_chapter_example_fixed_shows_6_and_names_the_buggy_11(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("end")
            words = narration(app)
            assert "match_prefix returns 6 token(s)" in words
            assert "buggy matcher (pre-#7) would return 11" in words

    async def test_chapter_example_buggy_shows_11_and_the_fixed_6(self, tmp_path):
        inserts = CHAPTER.rsplit("match", 1)[0]
        async with stepper(tmp_path, script=inserts) as (app, pilot):
            await pilot.press("b")
            await type_op(pilot, "match Hello_world")
            await pilot.press("escape", "right_square_bracket")
            words = narration(app)
            assert "match_prefix returns 11 token(s): slots 0–5, 22–26" in words
            assert "fixed matcher (#7) would return 6" in words
            assert "Hello_⟦world⟧" in words                     # the wrong tokens, marked
            assert "✗ 'world'" in tree_text(app)
            assert "matcher BUGGY" in status(app)
            # b replays the whole history: the same match now runs fixed, and splits
            await pilot.press("b")
            assert "match_prefix returns 6 token(s): slots 0–5" in narration(app)
            await type_op(pilot, "match Hello_world")
            await pilot.press("escape", "right_square_bracket")
            assert "match_prefix returns 6 token(s): slots 0–5" in narration(app)


class TestNodeActions:
    async def test_select_lock_unlock_and_evict(self, tmp_path):
        async with stepper(tmp_path, script='insert "Hello_L.A.!"\ninsert "Hello_there"') as (app, pilot):
            model = app.screen.model
            await pilot.press("end", "s")
            assert isinstance(app.screen, NodePicker)
            details = str(app.screen.query_one("#node-details").content)
            assert "edge 'Hello_'" in details and "slots 0–5" in details and "ref 0" in details
            await pilot.press("down", "l")                      # lock the 'L.A.!' leaf
            assert not isinstance(app.screen, NodePicker)
            assert model.session.records[-1].op.name == "lock"
            assert model.session.records[-1].result["delta"] == -11
            await pilot.press("end")
            assert "evictable 5" in status(app)
            await pilot.press("s", "down", "u")
            assert model.session.records[-1].op.name == "unlock"
            await pilot.press("end")
            assert "evictable 16" in status(app)
            await pilot.press("s", "down", "down", "x")          # evict 5 takes the oldest leaf
            assert model.session.records[-1].op.text == "evict 5"
            assert model.session.records[-1].result["evicted"] == 5

    async def test_escape_closes_the_picker_without_changes(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            records = len(app.screen.model.session.records)
            await pilot.press("s", "escape")
            assert not isinstance(app.screen, NodePicker)
            assert len(app.screen.model.session.records) == records


class TestExports:
    @needs_dot
    async def test_e_exports_the_current_frame(self, tmp_path):
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("end", "e")
            # named by the step number the status line shows, as export --step counts
            shown = app.screen.model.position + 1
            assert f"step {shown}/" in status(app)
            path = tmp_path / "export" / f"step-{shown:04d}.svg"
            assert path.read_text().lstrip().startswith(("<?xml", "<svg"))
            assert any(f"exported step {shown} to {path}" in n for n in notifications(app))

    @needs_dot
    async def test_E_exports_every_frame(self, tmp_path):
        async with stepper(tmp_path, script="insert abc") as (app, pilot):
            await pilot.press("E")
            await app.workers.wait_for_complete()
            await pilot.pause()
            files = sorted((tmp_path / "export").glob("step-*.svg"))
            assert len(files) == len(app.screen.model.frames)
            assert any("exported" in n and str(len(files)) in n for n in notifications(app))

    async def test_an_empty_sandbox_says_why_e_E_and_s_have_nothing_to_act_on(self, tmp_path):
        async with stepper(tmp_path, script=None) as (app, pilot):
            await pilot.press("e", "E")
            assert [n for n in notifications(app) if "nothing to export yet" in n] != []
            assert not (tmp_path / "export").exists()
            await pilot.press("s")
            assert isinstance(app.screen, NodePicker)
            assert any("no nodes yet" in str(w.content) for w in app.screen.query("Static"))
            await pilot.press("escape")

    async def test_missing_dot_gives_a_one_line_hint(self, tmp_path, monkeypatch):
        monkeypatch.setenv("PATH", "")   # the graphviz package finds no dot: ExecutableNotFound
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("e")
            message = notifications(app)[-1]
            assert "dot" in message and "\n" not in message
            assert not list((tmp_path / "export").glob("*.svg"))


class TestVerifyKV:
    async def test_v_finds_wrong_kv_only_with_the_buggy_matcher(self, tmp_path):
        inserts = CHAPTER.rsplit("match", 1)[0]
        async with stepper(tmp_path, script=inserts + "matcher buggy\nmatch Hello_world\n") as (app, pilot):
            stepper_screen = app.screen
            await pilot.press("v")
            await app.workers.wait_for_complete()
            await pilot.pause()
            report = kv_report_text(app)
            assert "11 token(s) reused from the cache: WRONG" in report
            assert "first wrong token: position 6 ('w')" in report
            assert "either way: the logits differ" in report or "the answer changes" in report
            await pilot.pause(0.3)
            assert kv_report_text(app) == report                 # stays until dismissed
            await pilot.press("escape")
            assert app.screen is stepper_screen
        async with stepper(tmp_path) as (app, pilot):
            await pilot.press("v")
            await app.workers.wait_for_complete()
            await pilot.pause()
            report = kv_report_text(app)
            assert "6 token(s) reused from the cache: right" in report
            assert "All 1 match(es) reuse the right K/V." in report


class TestCodePane:
    @staticmethod
    def rendered(engine: str, kind: str, trace: bool):
        """The code pane's lines for the first ``kind`` frame of the chapter on ``engine``:
        (texts, segment lines)."""
        from rich.console import Console
        from radixviz.script import Session
        from radixviz.tui.widgets.code_pane import code_view
        session = Session(device="cpu", engine=engine)
        session.run(CHAPTER)
        frame = next(f for f in session.frames if f.kind == kind)
        console = Console(width=100, color_system="truecolor", file=open("/dev/null", "w"))
        lines = console.render_lines(code_view(frame.source, frame.label, 30, trace=trace),
                                     console.options.update(width=100))
        return ["".join(s.text for s in line) for line in lines], lines

    @pytest.mark.parametrize("engine, marked_text", [
        ("2024", "siblings[get_child_key(new_node.key)] = new_node"),
        ("2026", "new_node.parent.children[self.get_child_key_fn(key, extra_key=extra_key)] = new_node"),
        ("hicache", "new_node.parent.children[self.get_child_key_fn(key, extra_key=extra_key)] = new_node")])
    def test_tracing_lines_are_hidden_and_t_shows_them_dimmed(self, engine, marked_text):
        texts, _ = self.rendered(engine, "split", trace=False)
        marked = next(t for t in texts if "❱" in t)
        assert marked_text in marked and "emit" not in marked
        assert not any("tr.emit(" in t or "tracer.emit(" in t or "invalidate(" in t for t in texts)
        assert "hidden (t)" in texts[0]
        texts, lines = self.rendered(engine, "split", trace=True)
        emit = next(i for i, t in enumerate(texts) if 'emit("split", K.SPLIT' in t)
        assert any(s.style and s.style.dim for s in lines[emit] if s.text.strip())
        assert "hidden" not in texts[0]

    def test_the_2026_walk_hides_its_compound_tracing_lines(self):
        # ``if tr.active and ...: tr.emit(...)`` and ``if node._snap is not None: invalidate(node)``
        texts, _ = self.rendered("2026", "compare", trace=False)
        assert any("prefix_len = self.key_match_fn(" in t for t in texts)
        assert not any("_snap is not None" in t or "tr.active" in t for t in texts)
        from radixviz.render.source_map import reporting_lines
        import radixviz.engines.v2026.cache as engine
        lines = open(engine.__file__).read().splitlines()
        compound = [i for i, t in enumerate(lines, 1) if "if tr.active and" in t or "_snap is not None:" in t]
        assert compound and set(compound) <= reporting_lines(engine.__file__)

    async def test_t_shows_and_hides_them_on_screen(self, tmp_path):
        async with stepper(tmp_path, size=(120, 40)) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            before = "\n".join(pane_rows(app, "#code-pane"))
            assert "hidden (t)" in before and "tr.emit(" not in before
            await pilot.press("t")
            await pilot.pause()
            shown = "\n".join(pane_rows(app, "#code-pane"))
            assert "tr.emit(" in shown and "hidden (t)" not in shown
            await pilot.press("t")
            await pilot.pause()
            assert "\n".join(pane_rows(app, "#code-pane")) == before


class TestStartOptions:
    async def test_buggy_and_pool_size_options(self, tmp_path):
        async with stepper(tmp_path, buggy=True, pool_size=32) as (app, pilot):
            assert "matcher BUGGY" in status(app) and "free 32/32" in status(app)
            await pilot.press("end")
            assert "match_prefix returns 11 token(s)" in narration(app)

    async def test_script_file_loads(self, tmp_path):
        from radixviz.tui.app import RadixvizApp
        from tui_helpers import wait_ready
        script = tmp_path / "demo.rv"
        script.write_text(CHAPTER)
        app = RadixvizApp("sandbox", script=str(script), device="cpu", export_dir=tmp_path)
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_ready(app, pilot)
            assert [r.op.line for r in app.screen.model.session.records] == [1, 2, 3]
