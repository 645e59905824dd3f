"""#4 in the operation language: ``insert-slots release`` and what every view shows of it."""
from __future__ import annotations

import json

import pytest

from radixviz.cache import InvariantError, check_invariants
from radixviz.script import Session, parse_script
from render_helpers import capture

RELEASE = "insert-slots release\ninsert Hello\ninsert Hello_world\nmatch Hello_w\n"


def session_after(script: str) -> Session:
    session = Session(pool_size=32, device="cpu")
    session.run(script)
    return session


class TestSession:
    def test_an_insert_keeps_one_slot_fewer_and_a_later_match_is_shifted(self):
        session = session_after(RELEASE)
        first, second, match = (r.result for r in session.records[1:])
        assert first["new_slots"] == [0, 1, 2, 3]                      # 5 tokens, 4 slots
        assert second["prefix_len"] == 5 and second["new_slots"] == [9, 10, 11, 12, 13]
        # 7 tokens matched, 6 slots: from token 4 ('o') on, each slot is a later token's
        assert match["slots"] == [0, 1, 2, 3, 9, 10]
        assert match["misaligned"] == {"tokens": 7, "slots": 6, "from": 4}

    def test_evicting_everything_leaves_the_counter_negative(self):
        session = session_after(RELEASE + "evict 100\n")
        assert session.cache.total_size() == 0 and session.cache.evictable_size() == -2
        with pytest.raises(InvariantError, match="evictable size = tokens in unreferenced nodes"):
            check_invariants(session.cache, session.pool)

    def test_insert_slots_fixed_goes_back_to_one_slot_per_token(self):
        session = session_after("insert-slots release\ninsert-slots fixed\ninsert Hello\nmatch Hello\n")
        assert session.records[-1].result["slots"] == [0, 1, 2, 3, 4]
        check_invariants(session.cache, session.pool)

    @pytest.mark.parametrize("line, message", [
        ("insert-slots", "missing argument: e.g. insert-slots release|fixed"),
        ("insert-slots sometimes", "unknown insert-slots mode 'sometimes': use fixed or release"),
    ])
    def test_bad_lines(self, line, message):
        from radixviz.script import ScriptError
        with pytest.raises(ScriptError, match=message):
            parse_script(line)


class TestViews:
    def test_tree_marks_the_short_nodes_and_the_drifting_counter(self):
        from radixviz.render.tree import TreeView
        frame = session_after(RELEASE).frames[-1]
        text = capture(TreeView(frame.tree, frame.marks), 100)
        assert "'Hello'  slots 0–3  ref 0  t 8  ⚠ 4 slots for 5 tokens" in text
        assert "11 tokens · 9 evictable ⚠≠11 unreferenced" in text

    def test_an_insert_mid_way_is_no_drift(self):
        """Lesson 1's first insert: the step that creates the leaf comes before the one that
        counts it, and neither the tree nor the step's words call that a drift."""
        from radixviz.render.tree import TreeView
        from radixviz.script import describe
        created = next(f for f in session_after("insert Hello_L.A.!\n").frames if f.kind == "create")
        assert "11 tokens · 0 evictable · matcher fixed" in capture(TreeView(created.tree, created.marks), 100)
        assert describe(created) == ("create leaf 'Hello_L.A.!' (11 tokens): no request holds it, so the "
                                     "next step counts it evictable")

    def test_run_names_the_broken_invariant_and_exits_1(self, cli):
        code, out, err = cli("run", "--width", "200", "-e", RELEASE.replace("\n", ";") + "evict 100")
        assert code == 1
        assert "MISALIGNED: 6 slots for 7 tokens, from token 4 on" in out
        assert "-2 evictable ⚠≠0 unreferenced" in out
        assert err == ("radixviz: invariant broken: evictable size = tokens in unreferenced nodes: "
                       "evictable_size() is -2 but unreferenced nodes hold 0 tokens\n")

    def test_run_json_carries_the_mode_and_the_shift(self, cli):
        _code, out, _ = cli("run", "--json", "-e", RELEASE.replace("\n", ";"))
        doc = json.loads(out)
        assert doc["ops"][0]["name"] == "insert-slots" and doc["ops"][0]["result"] == {"mode": "release"}
        assert doc["ops"][-1]["result"]["misaligned"] == {"tokens": 7, "slots": 6, "from": 4}

    def test_verify_kv_shows_the_wrong_numbers(self, cli):
        code, out, _ = cli("verify-kv", "--device", "cpu", "-e",
                           RELEASE.replace("\n", ";"))
        assert code == 1, out
        row = next(line for line in out.splitlines() if "'Hello_w'" in line)
        assert "BAD diverges from token 4 'o'" in row
