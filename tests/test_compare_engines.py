"""Compare across time: the same operations on the 2024 engine and the 2026 engine, side by
side; what differs, where they first part ways, golden output for ``run --compare engines``
and ``export --compare engines``."""
from __future__ import annotations

from pathlib import Path

import pytest

from radixviz.script import compare_engines, parse_script
from radixviz.render.summary import op_result
from test_compare import golden

README = 'insert "Hello_world"; insert "Hello_there"; lock "Hello_wo"; evict 100'


def across(text, **settings):
    return compare_engines(parse_script(text), 64, "cpu", **settings)


class TestWhatDiffers:
    def test_a_page_of_4_drops_the_partial_page_2024_matches(self):
        side = across("insert abcdefgh; match abcdefg", page_size=4)
        old, new = (s.records[1].result for s in side.sessions)
        assert (old["matched"], new["matched"]) == (7, 4)
        assert side.diverged == 1 and not side.differs(0)   # 8 tokens are two whole pages

    def test_an_insert_of_a_partial_page_differs_at_once(self):
        side = across("insert abcdef; match abcdef", page_size=4)
        assert side.diverged == 0
        assert side.right.records[0].result["freed_tail"] == [4, 5]
        assert "partial page freed 4–5" in op_result(side.right.records[0])

    def test_lfu_evicts_another_leaf_than_2024s_lru(self):
        ops = "insert aaa; insert aaa; insert bbb; evict 3"
        lfu = across(ops, eviction_policy="lfu")
        assert lfu.diverged == 3
        assert [s.records[3].result["freed_slots"] for s in lfu.sessions] == [[0, 1, 2], [3, 4, 5]]
        assert across(ops, eviction_policy="lru").diverged is None   # same leaf: times agree

    def test_times_hits_and_priorities_are_not_differences(self):
        side = across('insert abc priority 5; insert abd; match abx; lock ab; unlock ab')
        assert side.diverged is None
        # the 2024 column inserted the same key without the priority it does not know
        assert side.left.records[0].op.priority is None and side.right.records[0].result["priority"] == 5

    def test_lock_ref_is_compared_with_ref(self):
        side = across("insert abcd; lock abcd", page_size=2)
        assert side.diverged is None
        tree = side.right.frames[-1].tree
        assert tree.root.children[0].lock_ref == 1

    def test_the_chapter_readme_eviction_order(self):
        side = across(README, page_size=1)
        assert side.diverged == 3
        assert [s.records[3].result["evicted"] for s in side.sessions] == [8, 8]

    def test_a_refused_operation_stops_both_columns(self):
        side = across("insert abc; unlock abc; match abc")
        assert side.count == 1 and "no lock on 'abc'" in side.error.message


class TestSettingLines:
    def test_a_2026_script_sets_up_the_2026_column_and_empties_the_2024_one(self):
        side = across("engine 2026; page-size 2; eviction lfu; insert abcde; matcher buggy; match abcde")
        assert side.titles() == ("2024 engine, BUGGY matcher (pre-#7)", "2026 engine, page 2, lfu")
        assert [r.op.name for r in side.left.records[:3]] == ["reset", "reset", "eviction"]
        assert side.left.records[2].result == {"skipped": "the 2024 engine evicts least recently used first"}
        assert side.right.records[4].result["skipped"] == "matcher is a switch of the 2024 engine"
        assert side.diverged == 3          # the setting lines themselves are no difference
        assert side.right.records[5].result["matched"] == 4 and side.left.records[5].result["matched"] == 5

    def test_a_page_size_line_mid_script_empties_both(self):
        side = across("insert abc; page-size 2; match abc")
        assert [s.records[2].result["matched"] for s in side.sessions] == [0, 0]
        assert side.diverged is None


class TestHeadless:
    def test_run_compare_engines_golden(self, cli):
        code, out, err = cli("run", "--compare", "engines", "--page-size", "2", "--device", "cpu",
                             "--width", "100", "-e", README)
        assert code == 0 and err == ""
        assert out == golden("compare-engines.txt", out)
        assert "2026 engine, page 2, lru" in out and "◀ first divergence" in out
        assert "† evicted 'ther'" in out and "† evicted 'rld'" in out

    def test_run_compare_engines_lfu_marks_the_evict(self, cli):
        code, out, _ = cli("run", "--compare", "engines", "--eviction-policy", "lfu", "--device", "cpu",
                           "--width", "120", "-e", "insert aaa; insert aaa; insert bbb; evict 3")
        assert code == 0 and "They part ways at operation 4: evict 3" in out
        row = next(line for line in out.splitlines() if line.lstrip().startswith("4 "))
        assert "slots 0–2" in row and "slots 3–5" in row and "◀" in row

    def test_export_compare_engines_golden(self, cli, tmp_path):
        target = tmp_path / "time.dot"
        code, out, _ = cli("export", "--compare", "engines", "--page-size", "2", "--device", "cpu",
                           "-e", README, "-o", str(target))
        text = target.read_text(encoding="utf-8")
        assert code == 0 and out == f"wrote {target}\n"
        assert "subgraph cluster_2024" in text and "subgraph cluster_2026" in text
        assert "lock_ref 1 · hits 2" in text and "ref 1" in text
        assert text == golden("compare-engines.dot", text)

    def test_the_buggy_matcher_on_the_2024_side(self, cli):
        code, out, _ = cli("run", "--compare", "engines", "--buggy", "--device", "cpu", "--width", "160",
                           "-e", 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"')
        assert code == 0 and "2024 engine, BUGGY matcher (pre-#7)" in out
        assert "They part ways at operation 3" in out

    @pytest.mark.parametrize("argv, words", [
        (["run", "--compare", "engines", "--engine", "2026", "-e", "insert a"], "drop --engine"),
        (["run", "--compare", "--page-size", "4", "-e", "insert a"], "--compare engines"),
        (["run", "--compare", "engines", "--page-size", "0", "-e", "insert a"], "--page-size"),
        (["run", "--compare", "engines", "--json", "-e", "insert a"], "--json"),
        (["run", "-e", "insert a", "--compare", "time"], "invalid choice"),
        (["export", "--compare", "engines", "-e", "insert a"], "-o FILE"),
    ])
    def test_options_that_make_no_sense_are_one_line(self, cli, argv, words):
        code, _, err = cli(*argv)
        assert code == 2 and err.count("\n") == 1 and words in err


def test_the_docs_show_what_the_command_prints():
    """The 2026 engine's page shows the comparison across time as the golden output (lines
    without trailing spaces)."""
    here = Path(__file__).parent
    readme = (here.parent / "docs" / "engines" / "2026.md").read_text(encoding="utf-8")
    stored = (here / "golden" / "compare-engines.txt").read_text(encoding="utf-8")
    printed = "\n".join(line.rstrip() for line in stored.splitlines())
    assert printed in readme
