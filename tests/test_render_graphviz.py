"""Graphviz export: golden DOT for the chapter example, quoting, formats, and life without ``dot``."""
import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from radixviz.render.graphviz import GraphvizError, to_dot, write
from radixviz.script import Session

GOLDEN = Path(__file__).parent / "golden"
CHAPTER = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'
HAS_DOT = shutil.which("dot") is not None
MAGIC = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF"}


def chapter(buggy: bool):
    """The session after the chapter's three operations with the chosen matcher."""
    session = Session(pool_size=32, buggy=buggy, device="cpu")
    session.run(CHAPTER, "chapter")
    return session


def golden(name: str, text: str) -> str:
    """The stored golden text; RADIXVIZ_UPDATE_GOLDEN=1 rewrites it from ``text`` first."""
    path = GOLDEN / name
    if os.environ.get("RADIXVIZ_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


class TestGoldenChapterDot:
    @pytest.mark.parametrize("buggy", [False, True], ids=["fixed", "buggy"])
    def test_final_state_matches_golden(self, buggy):
        frame = chapter(buggy).frames[-1]
        name = f"chapter-{'buggy' if buggy else 'fixed'}.dot"
        assert to_dot(frame.tree, frame.marks) == golden(name, to_dot(frame.tree, frame.marks))

    def test_fixed_splits_and_buggy_marks_world_wrong(self):
        fixed, buggy = (to_dot(s.frames[-1].tree, s.frames[-1].marks) for s in (chapter(False), chapter(True)))
        assert "✂" in fixed and "'Hello_'" in fixed and "✗" not in fixed
        assert "✗ 'world'" in buggy and "✂" not in buggy
        # the pre-#7 walk took 6 of the edge's 11 tokens: only those are marked matched
        assert "✓ 'Hello_│L.A.!'\\n(6 of 11 matched)" in buggy

    def test_same_input_same_text(self):
        a, b = chapter(True).frames[-1], chapter(True).frames[-1]
        assert to_dot(a.tree, a.marks) == to_dot(b.tree, b.marks)


class TestLabels:
    def test_quotes_backslashes_and_control_characters_are_escaped(self):
        session = Session(pool_size=32, device="cpu")
        session.run('insert "a\\"b\\\\c\\n\x1b"')
        text = to_dot(session.frames[-1].tree)
        # the edge shows as 'a"b\\c\n\x1b' in the view; DOT needs each quote and backslash escaped
        assert "label=\"'a\\\"b\\\\\\\\c\\\\n\\\\x1b'" in text
        assert "\x1b" not in text

    @pytest.mark.skipif(not HAS_DOT, reason="Graphviz dot not installed")
    def test_dot_accepts_awkward_labels(self, tmp_path):
        session = Session(pool_size=32, device="cpu")
        session.run('insert "{<a|b>}\\"\\\\"\ninsert "{<a|c"\nevict 2')
        write(session.frames[-1], tmp_path / "odd.svg")
        assert (tmp_path / "odd.svg").read_bytes().startswith(b"<?xml")

    def test_evicted_leaves_are_drawn_as_dashed_ghosts(self):
        session = Session(pool_size=32, device="cpu")
        session.run("insert abc\ninsert abd\nevict 1")
        text = to_dot(session.frames[-1].tree, session.frames[-1].marks)
        assert "ghost0" in text and "† 'c'" in text and "dashed" in text


class TestWrite:
    @pytest.mark.skipif(not HAS_DOT, reason="Graphviz dot not installed")
    @pytest.mark.parametrize("fmt", ["dot", "svg", "png", "pdf"])
    def test_every_format_by_extension(self, tmp_path, fmt):
        frame = chapter(True).frames[-1]
        path = write(frame, tmp_path / f"chapter.{fmt}")
        data = path.read_bytes()
        if fmt == "dot":
            assert data.decode() == to_dot(frame.tree, frame.marks)
        else:
            assert data.startswith(MAGIC[fmt])

    def test_dot_needs_no_graphviz_and_others_say_how_to_install(self, tmp_path, monkeypatch):
        monkeypatch.setenv("PATH", "")   # the graphviz package finds no dot: ExecutableNotFound
        frame = chapter(False).frames[-1]
        assert write(frame, tmp_path / "ok.dot").read_text().startswith("digraph radix {")
        with pytest.raises(GraphvizError) as info:
            write(frame, tmp_path / "no.svg")
        message = str(info.value)
        assert "\n" not in message and "apt-get install graphviz" in message
        assert not (tmp_path / "no.svg").exists()

    def test_unknown_extension_is_refused(self, tmp_path):
        with pytest.raises(GraphvizError, match="use .dot, .svg, .png or .pdf"):
            write(chapter(False).frames[-1], tmp_path / "x.jpg")

    def test_explicit_marks_override_the_frames(self, tmp_path):
        frame = chapter(True).frames[-1]
        plain = write(frame, tmp_path / "plain.dot", dataclasses.replace(frame.marks, wrong=(), current=()))
        assert "✗" not in plain.read_text()
