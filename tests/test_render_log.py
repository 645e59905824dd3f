"""The step log: one plain line per micro-step, numbered from 1 as everywhere."""
from radixviz.render.log import step_line, step_log

from render_helpers import CHAPTER, capture, session_after


class TestStepLog:
    def test_fixed_match_of_the_chapter_example(self):
        session = session_after(CHAPTER)
        frames = session.frames[session.records[-1].first_frame:]
        assert capture(step_log(frames), 80) == (
            "  16 ▶ match \"Hello_world\"\n"
            "  17   step onto the root (last access → 7)\n"
            "  18   compare edge 'Hello_L.A.!' with the key: 6 token(s) in common\n"
            "  19   split after 6 tokens: 'Hello_' above 'L.A.!'\n"
            "  20   take slots 0–5 of 'Hello_'\n"
            "  21   match_prefix returns 6 token(s): slots 0–5\n")

    def test_buggy_append_says_the_walk_goes_on(self):
        session = session_after(CHAPTER, buggy=True)
        lines = [step_line(f).plain for f in session.frames if f.kind == "append"]
        assert lines[-2].endswith("only part of the edge, yet the walk goes on below (pre-#7)")

    def test_unnumbered_lines_and_styles(self):
        frame = next(f for f in session_after(CHAPTER).frames if f.kind == "split")
        line = step_line(frame, numbered=False)
        assert line.plain == "  split after 6 tokens: 'Hello_' above 'L.A.!'"
        assert "yellow" in str(line.spans[0].style)

    def test_long_lines_wrap_and_keep_every_word(self):
        session = session_after(CHAPTER)
        out = capture(step_log(session.frames[9:10]), 40)
        assert out == "  10   compare edge 'Hello_L.A.!' with \nthe key: 11 token(s) in common\n"

    def test_a_typed_backslash_n_and_a_newline_read_apart_as_in_the_tree(self):
        session = session_after('insert "a\\nb"\ninsert "a\\\\nb"')
        created = [step_line(f).plain for f in session.frames if f.kind == "create"]
        counted = ": no request holds it, so the next step counts it evictable"
        assert created[0].endswith("create leaf 'a\\nb' (3 tokens)" + counted)
        assert created[1].endswith("create leaf '\\\\nb' (3 tokens)" + counted)
