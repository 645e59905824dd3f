"""The Rich tree view, captured in monochrome at a fixed width and compared exactly."""
import string

from rich.console import Console

from radixviz.cache import NodeSnapshot, TreeSnapshot
from radixviz.render.tree import TreeView
from radixviz.script import Session

from render_helpers import CHAPTER, capture, session_after


def final_view(script, width=60, buggy=False, **options):
    frame = session_after(script, buggy=buggy, pool_size=64).frames[-1]
    return capture(TreeView(frame.tree, frame.marks, **options), width)


class TestChapterExample:
    def test_fixed_matcher_shows_the_split_and_the_matched_path(self):
        assert final_view(CHAPTER, legend=True) == (
            "root  16 tokens · 16 evictable · matcher fixed\n"
            "└── ▶✂✓ 'Hello_'  slots 0–5  ref 0  t 8\n"
            "    └── ✂ 'L.A.!'  slots 6–10  ref 0  t 5\n"
            "        └── 'world'  slots 22–26  ref 0  t 6\n"
            "▶ current step  ✂ just split  ✓ matched\n")

    def test_buggy_matcher_marks_world_as_wrongly_matched(self):
        assert final_view(CHAPTER, buggy=True, legend=True) == (
            "root  16 tokens · 16 evictable · matcher BUGGY (pre-#7)\n"
            "└── ✓ 'Hello_│L.A.!' 6/11  slots 0–10  ref 0  t 8\n"
            "    └── ▶✗ 'world'  slots 22–26  ref 0  t 9\n"
            "▶ current step  ✗ wrongly matched (pre-#7)  ✓ matched\n"
            "│ the match took only the tokens before it (6/11: 6 of 11)\n")

    def test_the_partial_legend_gives_the_numbers_of_the_edge_shown(self):
        script = 'insert "abcdefgh"\ninsert "abcdefghXY"\nmatch "abcXY"'
        out = final_view(script, buggy=True, legend=True)
        assert "'abc│defgh' 3/8" in out
        assert out.endswith("│ the match took only the tokens before it (3/8: 3 of 8)\n")

    def test_colour_terminal_gets_styles_too(self):
        frame = session_after(CHAPTER, buggy=True).frames[-1]
        console = Console(force_terminal=True, color_system="standard", width=80)
        with console.capture() as captured:
            console.print(TreeView(frame.tree, frame.marks))
        assert "\x1b[1;7;31m▶✗ " in captured.get()  # current + wrong: bold reverse red


class TestMarksAndText:
    def test_locked_new_and_evicted_nodes(self):
        script = "insert abc\ninsert abd\nlock ab\nevict 2\ninsert xy"
        assert final_view(script, legend=True) == (
            "root  4 tokens · 2 evictable · matcher fixed\n"
            "├── ● 'ab'  slots 0–1  ref 1  t 9\n"
            "└── + 'xy'  slots 2–3  ref 0  t 11\n"
            "+ new  ● locked (ref > 0)\n")

    def test_todays_cache_calls_a_lock_a_lock_in_the_legend(self):
        session = Session(pool_size=32, device="cpu", engine="2026")
        session.run('insert "abcd"\nlock "abcd"', "test")
        frame = session.frames[-1]
        out = capture(TreeView(frame.tree, frame.marks, legend=True), 80)
        assert "lock 1" in out and "● locked (lock > 0)" in out and "ref > 0" not in out

    def test_evicted_leaves_are_listed_as_ghosts(self):
        assert final_view("insert abc\ninsert abd\nevict 2") == (
            "root  2 tokens · 2 evictable · matcher fixed\n"
            "└── 'ab'  slots 0–1  ref 0  t 6\n"
            "† evicted 'c'\n"
            "† evicted 'd'\n")

    def test_control_characters_and_markup_are_shown_escaped(self):
        out = final_view('insert "x\\ny[red]z\x1b\\\\"')
        assert "'x\\ny[red]z\\x1b\\\\'" in out
        assert "\x1b" not in out

    def test_long_edges_keep_head_and_tail(self):
        out = final_view("insert " + "L" * 40 + "tail", max_edge=24)
        assert "'LLLLLLLLLLLLLL…LLLtail'" in out

    def test_token_ids_read_as_ids(self):
        assert "'⟨12⟩⟨7⟩⟨3⟩'" in final_view("tokens 12 7 3")

    def test_lines_are_cut_not_wrapped_on_a_narrow_screen(self):
        lines = final_view(CHAPTER, width=30).splitlines()
        assert lines[1] == "└── ▶✂✓ 'Hello_'  slots 0–5  …"
        assert len(lines) == 4


class TestFolding:
    def test_wide_levels_fold_but_keep_the_matched_child(self):
        script = "\n".join(f"insert {c}{c}" for c in string.ascii_lowercase[:10]) + "\nmatch hh"
        assert final_view(script, max_children=4) == (
            "root  20 tokens · 20 evictable · matcher fixed\n"
            "├── 'aa'  slots 0–1  ref 0  t 3\n"
            "├── 'bb'  slots 2–3  ref 0  t 5\n"
            "├── 'cc'  slots 4–5  ref 0  t 7\n"
            "├── ▶✓ 'hh'  slots 14–15  ref 0  t 23\n"
            "└── … 6 more children (12 tokens)\n")

    def test_deep_levels_fold_with_a_count(self):
        script = "\n".join(f"insert {'abcdefghij'[:i]}" for i in range(1, 11)) + "\nmatch abc"
        assert final_view(script, max_depth=3) == (
            "root  10 tokens · 10 evictable · matcher fixed\n"
            "└── ✓ 'a'  slots 0  ref 0  t 68\n"
            "    └── ✓ 'b'  slots 2  ref 0  t 69\n"
            "        └── ▶✓ 'c'  slots 4  ref 0  t 70\n"
            "            … 7 more nodes below (7 tokens)\n")

    def test_a_marked_node_below_the_depth_limit_stays_visible(self):
        script = "\n".join(f"insert {'abcdef'[:i]}" for i in range(1, 7)) + "\ninsert abx\nmatch abcde"
        assert final_view(script, max_depth=2) == (
            "root  7 tokens · 7 evictable · matcher fixed\n"
            "└── ✓ 'a'  slots 0  ref 0  t 34\n"
            "    └── ✓ 'b'  slots 2  ref 0  t 35\n"
            "        ├── ✓ 'c'  slots 4  ref 0  t 36\n"
            "        │   └── ✓ 'd'  slots 6  ref 0  t 37\n"
            "        │       └── ▶✓ 'e'  slots 8  ref 0  t 38\n"
            "        │           … 1 more node below (1 token)\n"
            "        └── … 1 more node below (1 token)\n")

    def test_a_very_deep_chain_renders_without_recursion(self):
        # deeper than Python's default recursion limit (1000)
        node = NodeSnapshot(1500, ("z",), (0,), 0, 0, (), 1)
        for i in range(1499, 0, -1):
            node = NodeSnapshot(i, ("z",), (i,), 0, i, (node,), node.subtree_tokens + 1)
        root = NodeSnapshot(0, (), (), 1, 0, (node,), node.subtree_tokens)
        tree = TreeSnapshot(root, 1500, 0, False)
        lines = TreeView(tree, max_depth=10_000).lines()
        assert len(lines) == 1501
        assert lines[-1].plain.endswith("└── 'z'  slots 0  ref 0  t 0")
        folded = capture(TreeView(tree), 200).splitlines()
        assert folded[-1].strip() == "… 1488 more nodes below (1488 tokens)"

    def test_measure_reports_the_widest_line(self):
        frame = session_after(CHAPTER).frames[-1]
        console = Console(width=120)
        measured = console.measure(TreeView(frame.tree, frame.marks))
        assert measured.maximum == len("root  16 tokens · 16 evictable · matcher fixed")


class TestEveryFrameOfARandomSession:
    def test_tree_pool_log_and_dot_draw_every_frame(self):
        import random

        from radixviz.render.graphviz import to_dot
        from radixviz.render.log import step_line
        from radixviz.render.pool import PoolGrid
        from radixviz.script import ScriptError, Session, parse_script

        rng = random.Random(3)
        session = Session(pool_size=24, device="cpu")
        for _ in range(60):
            word = "".join(rng.choice("abc") for _ in range(rng.randint(1, 6)))
            line = rng.choice([f"insert {word}", f"match {word}", f"lock {word}", f"unlock {word}",
                               f"evict {rng.randint(0, 6)}", "matcher buggy", "matcher fixed"])
            try:
                session.apply(parse_script(line)[0])
            except ScriptError:
                pass  # refused: nothing changed, the next operation goes on
        assert len(session.frames) > 150
        for frame in session.frames:
            view = TreeView(frame.tree, frame.marks, legend=True)
            text = "\n".join(line.plain for line in view.lines())
            for node_id in frame.marks.current:
                node = frame.tree.nodes.get(node_id)
                if node is not None and node.key:
                    assert "▶" in text
            assert len(view.lines()) >= len(frame.tree.nodes)  # nothing folded at this size
            capture(PoolGrid(frame.pool, frame.marks), 60)
            assert step_line(frame).plain.strip()
            assert to_dot(frame.tree, frame.marks).endswith("}\n")
