"""The pool grid, captured in monochrome and compared exactly."""
from rich.console import Console

from radixviz.render.pool import PoolGrid
from radixviz.script import PoolSnapshot

from render_helpers import CHAPTER, capture, session_after


class TestPoolGrid:
    def test_chapter_example_with_the_matched_slots_touched(self):
        frame = session_after(CHAPTER, buggy=True).frames[-1]
        assert capture(PoolGrid(frame.pool, frame.marks), 80) == (
            # 80 columns hold 24 cells, but 32 slots need two rows either way: 16 + 16
            "   0 │[■][■][■][■][■][■] ■  ■  ■  ■  ■  ·  ·  ·  ·  · \n"
            "  16 │ ·  ·  ·  ·  ·  · [■][■][■][■][■] ·  ·  ·  ·  · \n"
            "16/32 used  · free  ■ tree  □ request  2 = 2 holders share it  [ ] touched\n")

    def test_request_and_shared_slots_and_refcounts(self):
        tree = session_after("insert ab").frames[-1].tree      # the tree owns slots 0 and 1
        pool = PoolSnapshot((1, 3, 1, 0, 12, 0, 0, 0), tree)   # 1 shared by 3; 2 and 4 held by requests
        assert capture(PoolGrid(pool, legend=False), 40) == "   0 │ ■  3  □  ·  □  ·  ·  · \n"

    def test_a_wide_grid_uses_its_width_for_a_big_pool(self):
        frame = session_after("insert abcdefghij", pool_size=128).frames[-1]
        rows = capture(PoolGrid(frame.pool, legend=False), 100).splitlines()
        assert [row.split("│")[0].strip() for row in rows] == ["0", "28", "56", "84", "112"]

    def test_width_argument_narrows_the_grid(self):
        frame = session_after("insert abcdefghij").frames[-1]
        out = capture(PoolGrid(frame.pool, width=40, legend=False), 100)
        assert out.splitlines()[:2] == ["   0 │ ■  ■  ■  ■  ■  ■  ■  ■ ", "   8 │ ■  ■  ·  ·  ·  ·  ·  · "]

    def test_legend_wraps_rather_than_vanishing(self):
        frame = session_after("insert ab").frames[-1]
        assert capture(PoolGrid(frame.pool), 30).splitlines()[-4:] == [
            "2/32 used  · free  ■ tree", "□ request", "2 = 2 holders share it", "[ ] touched"]

    def test_states_follow_the_pool(self):
        tree = session_after("insert ab").frames[-1].tree
        pool = PoolSnapshot((1, 2, 1, 0), tree)
        assert [pool.state(i) for i in range(4)] == ["tree", "shared", "request", "free"]

    def test_measure_fits_thirty_two_slots(self):
        frame = session_after("insert ab").frames[-1]
        measured = Console(width=200).measure(PoolGrid(frame.pool, legend=False))
        assert measured.maximum == 6 + 3 * 32
