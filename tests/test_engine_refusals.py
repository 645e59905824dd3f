"""What the engines refuse, changing nothing: a lock released where nobody took it (both
engines), and the first release's short insert (#4) on today's cache, which has no such switch."""
from __future__ import annotations

import pytest

from radixviz.cache import InvariantError, TokenToKVPool, open_engine
from radixviz.cli import main
from radixviz.script import ScriptError, Session

from tui_helpers import pane_rows, stepper


def locked_leaf(engine: str):
    """An engine whose tree is 'ab' -> 'cd', the leaf locked by a request; (engine, parent, leaf)."""
    pool = TokenToKVPool(16, device="cpu")
    engine = open_engine(engine, pool)
    engine.insert(tuple("abcd"), pool.alloc(4))
    engine.insert(tuple("abxy"), pool.alloc(4))          # splits: 'ab' above 'cd' and 'xy'
    _, leaf = engine.match(tuple("abcd"))
    engine.lock(leaf)
    return engine, leaf.parent, leaf


@pytest.mark.parametrize("name", ["2024", "2026"])
class TestReleasingALockNobodyTook:
    def test_the_parent_of_a_locked_leaf_is_refused_and_nothing_changes(self, name):
        engine, parent, leaf = locked_leaf(name)
        before = engine.snapshot()
        with pytest.raises(ValueError, match="holds no lock of its own"):
            engine.unlock(parent)   # the lock on 'ab' belongs to 'cd' below it
        after = engine.snapshot()
        assert (after.root, after.evictable_size) == (before.root, before.evictable_size)
        engine.check_invariants()
        # the count along the path stays monotone, and the caller's own unlock still works
        assert engine.unlock(leaf) == 4 and engine.evictable_size() == 6
        engine.check_invariants()

    def test_a_second_release_of_the_same_lock_is_refused(self, name):
        engine, _, leaf = locked_leaf(name)
        engine.unlock(leaf)
        with pytest.raises(ValueError, match="holds no lock of its own"):
            engine.unlock(leaf)
        engine.check_invariants()

    def test_a_lock_taken_on_the_parent_itself_can_be_released_there(self, name):
        engine, parent, leaf = locked_leaf(name)
        engine.lock(parent)                       # a second request that matched only 'ab'
        assert engine.unlock(parent) == 0         # 'ab' stays locked by the leaf's request
        engine.check_invariants()
        assert engine.unlock(leaf) == 4

    def test_the_invariant_check_names_a_lock_released_below_where_it_was_taken(self, name):
        engine, parent, _ = locked_leaf(name)
        counts = "ref_counter" if name == "2024" else "lock_ref"
        setattr(parent, counts, 0)                # what the unchecked release used to leave
        with pytest.raises(InvariantError):
            engine.check_invariants()


class TestTheShortInsertIsTheFirstReleasesSwitch:
    def test_run_refuses_it_on_the_2026_engine_with_its_place(self, capsys):
        with pytest.raises(SystemExit) as info:
            main(["run", "--device", "cpu", "-e", 'engine 2026; insert-slots release; insert "abcdefgh"'])
        _out, err = capsys.readouterr()
        assert info.value.code == 2
        assert err.splitlines() == ["<-e>:1:14: insert-slots belongs to the 2024 engine: "
                                    "start with 'engine 2024'"]

    def test_the_session_refuses_it_and_the_pool_keeps_every_slot(self):
        session = Session(pool_size=16, device="cpu")
        session.run("engine 2026")
        with pytest.raises(ScriptError, match="insert-slots belongs to the 2024 engine"):
            session.run('insert-slots release\ninsert "abcdefgh"')
        assert session.pool.available_size() == 16 and len(session.records) == 1
        session.check_invariants()

    def test_an_engine_line_turns_the_switch_off(self):
        session = Session(pool_size=16, device="cpu")
        session.run('insert-slots release\nengine 2026\ninsert "abcdefgh"')
        assert session.records[-1].result["new_slots"] == list(range(8))
        assert session.pool.used_size() == session.cache.total_size() == 8
        session.check_invariants()

    @pytest.mark.parametrize("name", ["2024", "2026"])
    def test_an_insert_the_engine_refuses_gives_its_slots_back(self, name):
        pool = TokenToKVPool(16, device="cpu")
        engine = open_engine(name, pool)
        with pytest.raises(ValueError):
            engine.insert(tuple("abcdefgh"), pool.alloc(7))   # one slot short, strictly refused
        assert pool.available_size() == 16 and engine.total_size() == 0
        engine.check_invariants()

    async def test_the_sandbox_says_so_and_keeps_its_work(self, tmp_path):
        async with stepper(tmp_path, 'insert "Hello"\n', engine_options={"engine": "2026"}) as (app, pilot):
            await pilot.press("colon", *"insert-slots release", "enter")
            await pilot.pause()
            rows = "\n".join(pane_rows(app, "#op-error"))
            assert "insert-slots belongs to the 2024 engine" in rows
            assert [r.op.text for r in app.screen.model.session.records] == ['insert "Hello"']
