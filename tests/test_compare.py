"""Both matchers on the same operations: the comparison itself, and golden output for
``radixviz run --compare`` and ``radixviz export --compare``."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from radixviz.script import compare_ops, parse_script

GOLDEN = Path(__file__).parent / "golden"
CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"; match "Hello_world"'


def golden(name: str, text: str) -> str:
    """The stored golden text; RADIXVIZ_UPDATE_GOLDEN=1 rewrites it from ``text`` first."""
    path = GOLDEN / name
    if os.environ.get("RADIXVIZ_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


class TestSideBySide:
    def test_the_chapter_parts_at_the_match(self):
        side = compare_ops(parse_script(CHAPTER), 64, "cpu")
        assert side.diverged == 2 and side.count == 4
        assert side.fixed.records[2].result["matched"] == 6
        assert side.buggy.records[2].result["matched"] == 11
        assert not side.differs(0) and not side.differs(1) and side.differs(3)

    def test_no_divergence_without_a_fork_inside_an_edge(self):
        side = compare_ops(parse_script("insert abc; match abc; match ab"), 64, "cpu")
        assert side.diverged is None

    def test_a_refused_operation_stops_both_sides(self):
        side = compare_ops(parse_script("insert abc; unlock abc; match abc"), 64, "cpu")
        assert side.count == 1 and "no lock on 'abc'" in side.error.message


class TestGolden:
    def test_run_compare(self, cli):
        code, out, err = cli("run", "--compare", "--device", "cpu", "--width", "120", "-e", CHAPTER)
        assert code == 0 and err == ""
        assert out == golden("compare-chapter.txt", out)
        assert "◀ first divergence" in out and "'Hello_│L.A.!' 6/11" in out

    def test_export_compare_one_diagram_with_both_trees(self, cli, tmp_path):
        target = tmp_path / "both.dot"
        code, out, _ = cli("export", "--compare", "--device", "cpu", "-e", CHAPTER, "-o", str(target))
        text = target.read_text(encoding="utf-8")
        assert code == 0 and out == f"wrote {target}\n"
        assert "subgraph cluster_fixed" in text and "subgraph cluster_buggy" in text
        assert text == golden("compare-chapter.dot", text)

    @pytest.mark.parametrize("argv", [
        ["run", "--compare", "--json", "-e", "insert a"],
        ["export", "--compare", "-e", "insert a", "--all-steps", "d"],
        ["export", "--compare", "--buggy", "-e", "insert a", "-o", "x.dot"],
    ])
    def test_options_that_make_no_sense_together_are_one_line(self, cli, argv):
        code, _, err = cli(*argv)
        assert code == 2 and err.count("\n") == 1 and "--compare" in err
