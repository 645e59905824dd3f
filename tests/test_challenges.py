"""Challenges: every shipped one is solved by its own solution, and plausible wrong attempts
fail naming the condition they miss — graded by running the engine, through the CLI a
learner uses."""
import io
import json
import textwrap

import pytest

from radixviz.lessons.challenges.challenge import AttemptError, attempt, check_challenge, load_challenges
from radixviz.lessons.challenges.goals import GoalError, parse_goal

CHALLENGES = load_challenges()
BY_ID = {c.id: c for c in CHALLENGES}

# a plausible wrong attempt per challenge, and the condition (its text) it must be told it misses
WRONG = {
    "first-hit": ('insert "Hello_there"; match "Hello_there"', "match.matched == 6"),
    "no-new-leaf": ('insert "Hello_L.A.!x"', "insert.splits == 1"),
    "insert-return": ('insert "Hello_th"', "insert.created == 1"),
    "split-count": ('match "ab"; match "abc"', "edges == ab cd ef"),
    "lru-victim": ("evict 1", "edges == Hello_ L.A.!"),
    "foreign-kv": ('insert "abc"; insert "abcde"; match "abx"', "any match.foreign > 0"),
    "locked-leaf": ('lock "Hello_there"; evict 5', "evict.skipped >= 1"),
    "ref-delta": ('lock "Hello_there"', "lock.delta == -5"),
    "evict-short": ('insert "abc"; evict 5', "total_size >= evict.asked"),
    "evictable-zero": ('lock "Hello_L.A.!"; lock "Hi"', "evictable_size == 0"),
    "whole-tree": ("evict 10", "evict.leaves == 3"),
    "lfu-vs-lru": ('insert "apple"; evict 1', "evict.slots != lru:evict.slots"),
    "every-worker-hits": ('insert "cats:ask1" ns w0; insert "dogs:ask2" ns w1; insert "eels:ask3" ns w2; '
                          'insert "dogs:ask4" ns w0; insert "eels:ask5" ns w1; insert "cats:ask6" ns w2',
                          "namespaces_hit == 3"),
    "page-drop": ('match "Hello_wo"', "match.matched < page1:match.matched"),
    # the host tier: a match before the eviction hits on the device; an eviction of everything
    # also demotes the system prompt, which has a host copy
    "host-only-hit": ('match "Hello_world!"', "match.matched == 0"),
    "eviction-before-the-write": ("evict 27", "evict.demoted == 0"),
    # SGLang's 9fbe6800a bugs: with room on the device the load is right; a host leaf
    # without a child leaves nothing behind
    "someone-elses-kv": ('load-back "greetings!"', "load-back.foreign > 0"),
    "nobody-can-reach-it": ('insert "xyz"; evict 3; evict-host 3', "unreachable > 0"),
    # the unified tree: without a tombstone the shared prefix is reused; with one, a key that
    # shares too little of the tree reaches fewer than 8 tokens of full KV
    "in-the-tree-out-of-reach": ('insert "Once_upon_a_time"; match "Once_upon_a_star"', "match.matched == 0"),
}


def test_at_least_ten_ship_with_the_required_ids():
    assert len(CHALLENGES) >= 10
    assert {"evict-short", "foreign-kv", "insert-return", "locked-leaf", "split-count",
            "evictable-zero", "lfu-vs-lru", "page-drop"} <= set(BY_ID)
    assert {c.level for c in CHALLENGES} == {"easy", "medium", "hard"}


@pytest.mark.parametrize("challenge", CHALLENGES, ids=lambda c: c.id)
def test_reference_solution_solves_at_par(challenge):
    assert check_challenge(challenge) == []
    verdict = attempt(challenge, challenge.solution)
    assert verdict.solved and verdict.ops_used == challenge.par
    assert challenge.hints and challenge.debrief


@pytest.mark.parametrize("challenge_id", sorted(WRONG))
def test_plausible_wrong_attempt_names_the_missing_condition(challenge_id):
    script, missing = WRONG[challenge_id]
    verdict = attempt(BY_ID[challenge_id], script)
    assert not verdict.solved
    assert missing in [c.condition.text for c in verdict.missing]


def test_every_shipped_challenge_has_a_wrong_attempt_here():
    assert set(WRONG) >= set(BY_ID)


def test_foreign_kv_is_graded_by_both_matchers_on_the_learners_session():
    # the learner's own tree and query, different from the reference solution
    verdict = attempt(BY_ID["foreign-kv"], 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"')
    assert verdict.solved
    assert "match foreign 5" in verdict.checks[0].actual


def test_forbidden_operation_is_refused_before_anything_runs():
    with pytest.raises(AttemptError, match="'insert' is not allowed in this challenge"):
        attempt(BY_ID["split-count"], 'match "ab"\ninsert "x"')


def test_goal_lines_are_validated():
    with pytest.raises(GoalError, match="unknown subject 'nodez'"):
        parse_goal("nodes == 3\nnodez == 2", first_line=10)
    with pytest.raises(GoalError, match="line 11"):
        parse_goal("nodes == 3\nnodes is 2", first_line=10)


class TestCommand:
    """``radixviz challenge``, in this process: the command's own code is what is checked (the
    fresh Python a person starts is test_cli's), and each attempt costs no torch import."""

    def test_check_exit_codes_solved_not_solved_bad_input(self, cli, tmp_path, monkeypatch):
        _own_data_dir(monkeypatch, tmp_path)
        good = tmp_path / "good.rv"
        good.write_text('lock "Hello_there"\nevict 11\n')
        code, out, err = cli("challenge", "locked-leaf", "--check", str(good))
        assert code == 0, err
        assert "solved in 2 operations (at par)" in out

        bad = tmp_path / "bad.rv"
        bad.write_text('lock "Hello_there"\nevict 5\n')
        code, out, _ = cli("challenge", "locked-leaf", "--check", str(bad))
        assert code == 1
        assert "✗ the eviction passes over a referenced leaf" in out
        assert "not solved: 1 of 3 conditions not met" in out

        typo = tmp_path / "typo.rv"
        typo.write_text('lock "Hello_there"\nevitc 5\n')
        code, _, err = cli("challenge", "locked-leaf", "--check", str(typo))
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and "typo.rv:2" in err

    def test_solved_and_seen_are_recorded_and_listed(self, cli, tmp_path, monkeypatch):
        _own_data_dir(monkeypatch, tmp_path)
        monkeypatch.setattr("sys.stdin", io.StringIO('insert "Hello_there"\nmatch "Hello_world"\n'))
        assert cli("challenge", "first-hit", "--check", "-")[0] == 0
        assert cli("challenge", "whole-tree", "--solution")[1].strip() == "evict 11"
        listing = cli("challenges")[1]
        assert "✓ solved in 2 (par 2)" in listing
        assert "· solution seen" in listing.splitlines()[10]
        shown = cli("progress")[1]
        assert "Challenges solved: 1/" in shown and "✓ first-hit: A first hit  in 2 operations (par 2)" in shown
        assert "· whole-tree: One eviction, three leaves  solution seen" in shown
        saved = json.loads((tmp_path / "data" / "progress.json").read_text())["challenges"]
        assert saved["first-hit"]["solved"] and saved["first-hit"]["ops"] == 2
        assert saved["whole-tree"] == {"seen_solution": True, "when": saved["whole-tree"]["when"]}

    def test_show_prints_goal_and_starting_tree(self, cli):
        code, out, _ = cli("challenge", "lru-victim", "--show")
        assert code == 0
        assert "the eviction deletes one leaf" in out
        assert 'insert "Hello_there"' in out and "L.A.!" in out

    def test_unknown_id_is_one_line_exit_2(self, cli):
        code, _, err = cli("challenge", "nope", "--show")
        assert code == 2 and "no challenge 'nope'" in err


def test_lessons_check_plays_a_teachers_challenge(cli, tmp_path):
    (tmp_path / "mine.md").write_text(textwrap.dedent('''\
        ---
        id: mine
        title: Too easy
        par: 1
        allow: insert
        ---
        Insert anything.

        ```goal
        nodes == 2
        ```

        ```solution
        insert "ab"
        ```
        '''))
    code, out, _ = cli("lessons", "--check", str(tmp_path))
    assert code == 1
    assert "mine.md:10: the solution does not meet the goal: nodes == 2 (nodes 1)" in out


def _own_data_dir(monkeypatch, tmp_path):
    """The learner's progress in tmp_path/data, where the test reads it back."""
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path / "data"))


def test_a_condition_can_compare_with_a_replay_under_the_other_matcher():
    from radixviz.lessons.challenges.goals import evaluate
    from radixviz.script import Session

    session = Session(device="cpu")
    records = session.run('insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"')
    (check,) = evaluate(parse_goal("match.matched < buggy:match.matched  # the old matcher takes more"),
                        session, records[2:])
    assert check.held
    assert check.actual == "match matched 6, match matched with the pre-#7 matcher 11"
