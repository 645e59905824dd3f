"""Reusing the cache's K/V against recomputing them: agree after #7, diverge before it."""
import random

import pytest
import torch

from radixviz.script import ScriptError, Session, parse_script
from radixviz.script.kv_session import KVSession, lesson_lines, sandbox_lines, session_lines, verify_ops
from radixviz.sim.kv_report import table_lines

CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'


def chapter(buggy):
    return verify_ops(parse_script(CHAPTER, "ex"), buggy=buggy, device="cpu").checks[0]


def random_script(rng, n_ops=30):
    """Inserts and matches over a 3-letter alphabet so keys share prefixes and fork a lot."""
    ops, locked = [], []
    for _ in range(n_ops):
        key = "".join(rng.choice("ab_") for _ in range(rng.randint(1, 8)))
        roll = rng.random()
        if roll < 0.4:
            ops.append(("insert", key))
        elif roll < 0.75:
            ops.append(("match", key))
        elif roll < 0.85:
            ops.append(("evict", rng.randint(1, 6)))
        elif roll < 0.92:
            ops.append(("lock", key))
            locked.append(key)
        elif locked:
            ops.append(("unlock", locked.pop()))
    return ops


class TestChapterExample:
    def test_fixed_matcher_reuses_hello_and_agrees(self):
        check = chapter(buggy=False)
        assert check.matched == 6 and check.agree
        assert check.kv_diff < 1e-5 and check.logits_diff < 1e-5

    def test_buggy_matcher_diverges_from_token_6(self):
        check = chapter(buggy=True)
        assert check.matched == 11 and not check.agree
        assert check.first_bad == 6
        assert max(check.token_diffs[:6]) < 1e-5          # 'Hello_' really is cached
        assert min(check.token_diffs[6:]) > 0.1            # 'world' is someone else's
        assert not check.logits_ok and check.logits_diff > 1e-2
        assert check.to_dict()["first_diverging_token"] == 6

    def test_lesson_lines_tell_both_matchers(self):
        text = "\n".join(lesson_lines())
        assert "after #7 :  6 tokens reused" in text
        assert "before #7: 11 tokens reused" in text
        assert "diverges from token 6 'w'" in text


class TestRandomScripts:
    @pytest.mark.parametrize("seed", range(6))
    def test_fixed_matcher_reuse_equals_recompute(self, seed):
        rng = random.Random(seed)
        session = KVSession(device="cpu", pool_size=48)
        for op in random_script(rng):
            try:
                session.apply(op)
            except ScriptError:
                pass  # e.g. pool full under locks: refused with nothing changed
        checks = session.report().checks
        assert checks and session.report().ok
        assert any(c.matched > 0 for c in checks)  # something was really reused

    def test_the_same_scripts_catch_the_pre_7_matcher(self):
        diverged = 0
        for seed in range(6):
            session = KVSession(buggy=True, device="cpu", pool_size=48)
            for op in random_script(random.Random(seed)):
                try:
                    session.apply(op)
                except ScriptError:
                    pass
            diverged += sum(not c.agree for c in session.report().checks)
        assert diverged > 0

    @pytest.mark.parametrize("seed", range(3))
    def test_tree_and_slots_are_the_plain_sessions(self, seed):
        ops = random_script(random.Random(100 + seed))
        kv, plain = KVSession(device="cpu", pool_size=48), Session(48, device="cpu")
        for op in ops:
            try:
                kv.apply(op)
            except ScriptError:
                continue
            plain.apply(kv.session.records[-1].op)
        assert kv.pool.refcounts() == plain.pool.refcounts()
        assert kv.cache.snapshot().root == plain.cache.snapshot().root


class TestDetection:
    def test_a_tampered_slot_is_found_at_its_position(self):
        session = KVSession(device="cpu")
        session.apply(("insert", "abcdef"))
        slots, _ = session.cache.match_prefix("abcdef")
        session.pool.v_buffer[1][int(slots[3])] += 0.5
        check = session.apply(("match", "abcdef"))
        assert check.first_bad == 3 and not check.agree
        assert check.token_diffs[3] == pytest.approx(0.5, abs=1e-5)

    def test_a_buggy_insert_leaves_wrong_kv_that_the_fixed_matcher_then_serves(self):
        ops = parse_script(CHAPTER.replace("match", "insert") + "; matcher fixed; match Hello_world")
        check = verify_ops(ops, buggy=True, device="cpu").checks[0]
        assert not check.buggy and check.matched == 11 and check.first_bad == 6

    def test_reset_starts_clean(self):
        ops = parse_script(CHAPTER + "; reset; insert Hello_world; match Hello_world")
        report = verify_ops(ops, buggy=True, device="cpu")
        assert [c.agree for c in report.checks] == [False, True]


class TestRefusals:
    def test_out_of_vocabulary_token_changes_nothing(self):
        session = KVSession(device="cpu")
        session.apply(("insert", "abc"))
        before = (session.pool.refcounts(), session.cache.snapshot().root, len(session.session.records))
        with pytest.raises(ScriptError, match=r"^x:1:1: token '€'.*vocabulary"):
            session.apply(parse_script("insert a€", "x")[0])
        assert before == (session.pool.refcounts(), session.cache.snapshot().root,
                          len(session.session.records))

    def test_sandbox_lines_end_with_the_refusal(self):
        lines = sandbox_lines(parse_script("insert ab; match ab; unlock ab", "sb"))
        assert "ok  agree" in lines[3]
        assert lines[-1].startswith("stopped: sb:1:22: no lock")


class TestTable:
    def test_table_names_the_divergence(self):
        report = verify_ops(parse_script(CHAPTER, "ex"), buggy=True, device="cpu")
        lines = table_lines(report)
        assert lines[1].split() == ["op", "where", "matcher", "key", "hit", "K/V", "max", "diff",
                                    "logits", "diff", "result"]
        row = lines[3]
        assert row.split()[:5] == ["3", "ex:1:50", "buggy", "'Hello_world'", "11"]
        assert "BAD diverges from token 6 'w'" in row
        assert lines[-1].startswith("1 of 1 match diverge")

    def test_no_matches_says_so(self):
        assert table_lines(verify_ops([("insert", "ab")], device="cpu"))[-1] == \
            "no match operations: nothing to check"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_chapter_example_on_cuda():
    ops = parse_script(CHAPTER)
    fixed = verify_ops(ops, device="cuda").checks[0]
    buggy = verify_ops(ops, buggy=True, device="cuda")
    assert buggy.device.startswith("cuda")
    assert fixed.agree and buggy.checks[0].first_bad == 6


def test_token_strip_shows_the_cut():
    report = verify_ops(parse_script(CHAPTER, "ex"), buggy=True, device="cpu")
    strip = table_lines(report)[4].strip()
    assert strip.startswith("|reused - recomputed| by token 3..10: l 0  o 0  _ 0  |  w ")


def test_an_empty_key_match_is_not_checked():
    assert verify_ops(parse_script('insert ab; match ""'), device="cpu").checks == ()


def test_session_lines_replay_a_stepper_session_without_touching_it():
    session = Session(64, buggy=True, device="cpu")
    session.run(CHAPTER)
    before = (session.pool.refcounts(), len(session.frames))
    lines = "\n".join(session_lines(session))
    assert "diverges from token 6 'w'" in lines
    assert (session.pool.refcounts(), len(session.frames)) == before
    head = session_lines(session, upto=2)
    assert head[-1] == "no match operations: nothing to check"
