"""A session's memory grows with what its steps change: frames share the pool counts and tree
snapshots they did not change, and past a limit the oldest frames are dropped.

None of this may change what a frame shows: every frame read back at the end (stepping
back) equals what it showed when it was made.
"""
from __future__ import annotations

import gc
import json
import random
import tracemalloc

import pytest

from radixviz.cache.recent import KEEP
from radixviz.cache.slot_counts import CHUNK, SlotCounts
from radixviz.cli import main
from radixviz.script import ScriptError, Session, parse_script
from radixviz.script.frame_history import FrameDropped, FrameHistory


def random_script(inserts: int, seed: int = 3, alphabet: str = "abcdef") -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(inserts):
        key = "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 10)))
        lines.append(f'insert "{key}"')
        if i % 7 == 3:
            lines.append(f'match "{key[:4]}zz"')
        if i % 11 == 5:
            lines.append(f'lock "{key}"')
            lines.append(f'unlock "{key}"')
        if i % 13 == 7:
            lines.append("evict 6")
    return "\n".join(lines)


def picture(frame) -> tuple:
    """Everything a view reads of a frame, as plain values (no shared objects)."""
    nodes = tuple((n.id, n.key, n.value, n.ref, n.last_access, tuple(c.id for c in n.children),
                   n.subtree_tokens) for n in frame.tree.root.walk())
    return (frame.index, frame.kind, frame.label, nodes, frame.tree.evictable_size,
            tuple(frame.pool.refcounts), frame.pool.free, frame.pool.owners, frame.marks)


class TestSlotCounts:
    def test_reads_as_the_tuple_it_replaces(self):
        counts = [random.Random(1).randint(0, 3) for _ in range(3 * CHUNK + 5)]
        shared = SlotCounts(counts)
        assert shared == tuple(counts) and len(shared) == len(counts)
        assert list(shared) == counts
        assert [shared[i] for i in (0, CHUNK, len(counts) - 1, -1, -len(counts))] == \
               [counts[i] for i in (0, CHUNK, len(counts) - 1, -1, -len(counts))]
        assert shared[5:300:7] == tuple(counts[5:300:7])
        assert shared.count(0) == counts.count(0) and shared.count(3) == counts.count(3)
        for bad in (len(counts), len(counts) + CHUNK, -len(counts) - 1):
            with pytest.raises(IndexError):
                shared[bad]

    def test_a_change_costs_its_chunk_not_the_pool(self):
        before = SlotCounts([0] * 8192)
        counts = [0] * 8192
        counts[200] = counts[201] = 1
        after = SlotCounts(counts, before)
        assert after == tuple(counts) and before == (0,) * 8192   # the earlier picture stands
        changed = [i for i, (a, b) in enumerate(zip(after._chunks, before._chunks)) if a is not b]
        assert changed == [200 // CHUNK]
        assert after.new_bytes < before.new_bytes / 20

    def test_session_pool_pictures_share_their_unchanged_chunks(self):
        session = Session(pool_size=4096, device="cpu")
        session.run('insert "abcdef"\ninsert "abcxyz"')
        pictures = {id(f.pool.refcounts): f.pool.refcounts for f in session.frames}
        assert len(pictures) >= 3
        chunks = {id(c) for p in pictures.values() for c in p._chunks}
        # every picture has 32 chunks; shared, they are a few more than one picture's
        assert len(chunks) < 32 + 2 * len(pictures)


class TestFramesStayAsMade:
    @pytest.mark.parametrize("engine, options", [("2024", {}), ("2024", {"buggy": True}),
                                                 ("2026", {"page_size": 2})])
    def test_every_frame_read_back_equals_the_frame_as_made(self, engine, options):
        session = Session(pool_size=96, device="cpu", engine=engine, **options)
        made = []
        for op in parse_script(random_script(60)):
            try:
                record = session.apply(op)
            except ScriptError:
                continue    # a refused operation (the pool is full): nothing was added
            made += [picture(session.frames[i]) for i in record.frame_range]
            # the newest picture of the pool is the pool as it is
            assert tuple(session.frames[-1].pool.refcounts) == session.pool.refcounts()
        assert len(made) == len(session.frames) > 300
        for _ in range(KEEP + 1):
            [f.tree.nodes for f in session.frames]   # push every index out of the recent ones
        assert [picture(f) for f in session.frames] == made
        assert [picture(f) for f in reversed(session.frames)] == made[::-1]

    def test_a_replay_gives_equal_frames(self):
        session = Session(pool_size=96, device="cpu")
        session.run(random_script(20))
        again = session.replay()
        assert [picture(f) for f in again.frames] == [picture(f) for f in session.frames]


class TestIndexesKeptOnRecentSnapshotsOnly:
    def test_a_long_walk_keeps_a_few_indexes_and_rebuilds_equal_ones(self):
        session = Session(pool_size=256, device="cpu")
        session.run(random_script(40))
        frames = list(session.frames)
        first = dict(frames[0].tree.nodes)
        for frame in frames:
            _ = frame.tree.nodes, frame.tree.parents, frame.pool.owners
        holding = sum("_index" in vars(f.tree) for f in frames)
        assert holding <= KEEP < len(frames)
        assert frames[0].tree.nodes == first    # built again, the same


class TestAllocatedSlotsOwnTheirMemory:
    def test_a_node_keeps_its_slots_not_the_pools_free_list(self):
        session = Session(pool_size=8192, device="cpu")
        session.run('insert "abcdef"\ninsert "abcxyz"\ninsert "q"')
        for node in _live_nodes(session.cache.root_node):
            # a view of the free list would keep 8 bytes per free slot of the whole pool
            assert node.value.untyped_storage().nbytes() <= 8 * 6


def _live_nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        yield node


class TestFrameHistory:
    def test_past_the_limit_the_oldest_frames_go_and_numbers_stay(self):
        history = FrameHistory(limit_mb=1000 / 2**20)   # 1,000 bytes
        for i in range(10):
            history.append(f"frame {i}", cost=300)
        assert history.dropped == 7 and history.first == 7 and len(history) == 10
        assert history.kept_bytes <= 1000
        assert list(history) == ["frame 7", "frame 8", "frame 9"]
        assert history[7] == "frame 7" and history[-1] == "frame 9" and history[-3] == "frame 7"
        assert history[0:10] == ["frame 7", "frame 8", "frame 9"]
        assert history.kept(range(5, 9)) == ["frame 7", "frame 8"]
        with pytest.raises(FrameDropped, match="step 3 was dropped .* oldest kept is step 8"):
            history[2]
        with pytest.raises(IndexError):
            history[10]

    def test_the_newest_frame_stays_even_when_it_alone_is_over(self):
        history = FrameHistory(limit_mb=100 / 2**20)
        history.append("small", cost=50)
        history.append("huge", cost=10_000)
        assert list(history) == ["huge"] and history.dropped == 1

    def test_dropping_many_stays_cheap_and_right(self):
        history = FrameHistory(limit_mb=50 * 10 / 2**20)
        for i in range(5000):
            history.append(i, cost=10)
        assert list(history) == list(range(4950, 5000)) and history[4950] == 4950
        assert len(history._frames) < 2000    # compacted now and then

    def test_no_limit_keeps_everything(self):
        history = FrameHistory(limit_mb=None)
        for i in range(100):
            history.append(i, cost=10**9)
        assert history.dropped == 0 and list(history) == list(range(100))


class TestSessionLimit:
    def test_a_session_over_its_limit_drops_its_oldest_steps_and_keeps_going(self):
        script = random_script(80)
        full = Session(pool_size=96, device="cpu", history_mb=None)
        full.run(script)
        small = Session(pool_size=96, device="cpu", history_mb=0.25)
        small.run(script)
        frames = small.frames
        assert frames.dropped > 0 and len(frames) == len(full.frames)
        assert frames.kept_bytes <= 0.25 * 2**20
        # what is kept is what the unlimited session shows at those steps
        assert [picture(f) for f in frames] == [picture(full.frames[f.index]) for f in frames]
        assert small.replay().frames.dropped == frames.dropped   # a replay keeps the limit

    def test_the_estimate_follows_what_the_frames_take(self):
        ops = parse_script(random_script(150, alphabet="abcdefgh"))
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            session = Session(pool_size=2048, device="cpu", history_mb=None)
            for op in ops:
                try:
                    session.apply(op)
                except ScriptError:
                    pass
            gc.collect()
            taken = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        # the traced total also holds the live tree, its tensors' headers and the records
        assert 0.6 * taken < session.frames.kept_bytes < 1.2 * taken


class TestCommandLine:
    def script(self, tmp_path):
        path = tmp_path / "long.rvz"
        path.write_text(random_script(300, alphabet="abcdefgh"))
        return path

    def test_run_prints_the_steps_kept_and_says_the_rest_were_dropped(self, tmp_path, capsys):
        with pytest.raises(SystemExit) as info:
            main(["run", str(self.script(tmp_path)), "--device", "cpu", "--pool-size", "512",
                  "--history-mb", "1", "--json", "--steps"])
        out, err = capsys.readouterr()
        document = json.loads(out)
        steps = [s["step"] for op in document["ops"] for s in op.get("steps", [])]
        assert steps[0] > 1 and steps == list(range(steps[0], steps[-1] + 1))
        assert err == f"note: steps 1-{steps[0] - 1} were dropped to keep memory under 1 MB " \
                      "(raise --history-mb to keep them)\n"
        assert info.value.code in (0, 2)   # 2: the script may fill the pool; what ran is printed

    def test_export_of_a_dropped_step_is_refused_in_one_line(self, tmp_path, capsys):
        with pytest.raises(SystemExit) as info:
            main(["export", str(self.script(tmp_path)), "--device", "cpu", "--pool-size", "512",
                  "--history-mb", "1", "--step", "1", "-o", str(tmp_path / "one.dot")])
        _, err = capsys.readouterr()
        assert info.value.code == 2 and not (tmp_path / "one.dot").exists()
        assert "--step 1: " in err and "earlier steps were dropped to keep memory under 1 MB" in err
        assert len(err.strip().splitlines()) == 1

    def test_a_history_limit_below_one_mb_is_refused(self, capsys):
        with pytest.raises(SystemExit) as info:
            main(["run", "-e", 'insert "a"', "--history-mb", "0"])
        assert info.value.code == 2 and "--history-mb" in capsys.readouterr().err
