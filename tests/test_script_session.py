"""Sessions: operations on a real cache and pool, atomic, replayable, every step a frame."""

import pytest

from radixviz.cache import check_invariants
from radixviz.render.source_map import locate
from radixviz.script import ScriptError, Session, describe, parse_script

CHAPTER = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'


def state(session):
    """Everything a refused operation must leave alone."""
    return (session.cache.snapshot(), session.pool.refcounts(), len(session.frames),
            len(session.records), {k: list(v) for k, v in session.locks.items()})


class TestChapterExample:
    @pytest.mark.parametrize("buggy, matched, slots", [
        (False, 6, list(range(6))),
        (True, 11, list(range(6)) + list(range(22, 27))),
    ])
    def test_match_hits(self, buggy, matched, slots):
        session = Session(pool_size=32, buggy=buggy, device="cpu")
        records = session.run(CHAPTER)
        result = records[2].result
        assert result["matched"] == matched and result["slots"] == slots
        assert result["disagreement"] == {"fixed": 6, "buggy": 11, "wrong_from": 6,
                                          "wrong_slots": [22, 23, 24, 25, 26]}
        check_invariants(session.cache, session.pool)

    def test_an_empty_match_after_it_reports_no_disagreement(self):
        session = Session(pool_size=32, device="cpu")
        records = session.run(CHAPTER + 'match ""\n')
        assert records[3].result["matched"] == 0 and records[3].result["disagreement"] is None

    def test_buggy_frames_mark_the_wrong_node(self):
        session = Session(pool_size=32, buggy=True, device="cpu")
        session.run(CHAPTER)
        last = session.frames[-1]
        (wrong,) = last.marks.wrong
        assert last.tree.nodes[wrong].key == tuple("world")

    def test_fixed_frames_mark_the_split(self):
        session = Session(pool_size=32, device="cpu")
        session.run(CHAPTER)
        split = next(f for f in session.frames if f.kind == "split")
        upper, lower = split.marks.split
        assert split.tree.nodes[upper].key == tuple("Hello_")
        assert split.tree.nodes[lower].key == tuple("L.A.!")
        assert describe(split) == "split after 6 tokens: 'Hello_' above 'L.A.!'"


class TestInsertLikeTheScheduler:
    def test_duplicated_prefix_slots_are_freed(self):
        session = Session(pool_size=32, device="cpu")
        first, second = session.run('insert "abcd"\ninsert "abxy"')
        assert first.result["prefix_len"] == 0
        assert second.result["prefix_len"] == 2
        assert second.result["freed_duplicates"] == [4, 5]
        assert second.result["new_slots"] == [6, 7]
        assert session.pool.available_size() == 32 - 6
        check_invariants(session.cache, session.pool)

    def test_short_pool_evicts_the_shortfall_first(self):
        session = Session(pool_size=8, device="cpu")
        session.run('insert "abcdef"')
        record = session.apply(parse_script('insert "xyz"')[0])
        assert record.result["evicted_first"] == [0, 1, 2, 3, 4, 5]
        assert session.cache.total_size() == 3
        check_invariants(session.cache, session.pool)

    def test_pool_too_small_is_refused_and_nothing_changes(self):
        session = Session(pool_size=8, device="cpu")
        session.run('insert "abcdef"\nlock "abcdef"')
        before = state(session)
        with pytest.raises(ScriptError, match=r"<input>:1:1: pool full: 4 slots needed, 2 free and 0 evictable"):
            session.run('insert "wxyz"')
        assert state(session) == before


class TestLocks:
    def test_lock_and_unlock_report_evictable_deltas(self):
        session = Session(pool_size=16, device="cpu")
        _, lock, unlock = session.run('insert "abcd"\nlock "ab"\nunlock "ab"')
        assert lock.result["delta"] == -2 and unlock.result["delta"] == 2
        assert session.cache.evictable_size() == 4

    def test_unknown_or_double_unlock_is_an_error_not_a_negative_count(self):
        session = Session(pool_size=16, device="cpu")
        session.run('insert "abcd"\nlock "ab"\nunlock "ab"')
        before = state(session)
        with pytest.raises(ScriptError, match="no lock on 'ab' to release"):
            session.run('unlock "ab"')
        with pytest.raises(ScriptError, match="no lock on 'zz'"):
            session.run('unlock "zz"')
        assert state(session) == before

    def test_locked_leaf_survives_eviction(self):
        session = Session(pool_size=16, device="cpu")
        session.run('insert "abcd"\ninsert "xy"\nlock "abcd"\nevict 10')
        assert session.records[-1].result == {"evicted": 2, "freed_slots": [4, 5]}
        assert session.cache.total_size() == 4


class TestHistory:
    def test_replay_gives_identical_frames(self):
        session = Session(pool_size=32, device="cpu")
        session.run(CHAPTER + "lock Hello_\nmatcher buggy\nmatch Hello_world\nevict 100\nunlock Hello_\nreset")
        again = session.replay()
        assert again.frames == session.frames
        assert [r.result for r in again.records] == [r.result for r in session.records]

    def test_replay_a_prefix_rewinds(self):
        session = Session(pool_size=32, device="cpu")
        session.run(CHAPTER)
        earlier = session.replay(upto=1)
        assert earlier.cache.total_size() == 11
        assert earlier.frames == session.frames[:len(earlier.frames)]

    def test_a_refused_line_keeps_the_operations_before_it(self):
        session = Session(pool_size=32, device="cpu")
        with pytest.raises(ScriptError, match=":2:1: no lock"):
            session.run('insert "abc"\nunlock "abc"\ninsert "never"')
        assert [op.text for op in session.ops] == ['insert "abc"']

    def test_every_frame_belongs_to_its_operation(self):
        session = Session(pool_size=32, device="cpu")
        session.run(CHAPTER)
        for record in session.records:
            kinds = [session.frames[i].kind for i in record.frame_range]
            assert kinds[0] == "op"
            assert all(session.frames[i].op_index == record.index for i in record.frame_range)


class TestCodeLocations:
    @pytest.mark.parametrize("kind, text", [
        ("alloc", "self.pool.alloc(need)"),
        ("free_dup", "self.pool.free(duplicates)"),
        ("split", "siblings[get_child_key(new_node.key)] = new_node"),
        ("compare", "prefix_len = match(child.key, key"),
        ("create", "node.children[get_child_key(new_node.key)] = new_node"),
        ("op", "def _do_"),
    ])
    def test_frames_point_at_the_line_that_did_the_step(self, kind, text):
        session = Session(pool_size=32, device="cpu")
        session.run(CHAPTER)
        frame = next(f for f in session.frames if f.kind == kind)
        assert text in locate(frame.source, frame.label).text
