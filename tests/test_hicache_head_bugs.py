"""SGLang's two 9fbe6800a write_back bugs, switched on (engines/hicache/cache_head_bugs.py).

With a bug's switch on, the engine is held to the reference written in the shape of
SGLang's file with that bug's lines (tests/oracles/naive_hicache.py: ``head_load_back``,
``head_host_leaf_rule``) on seeded random sequences, step by step: the reachable tree, both
pools' free slots (the host's in queue order, slots freed twice included), sizes, the clock,
both candidate sets and the copies in flight, which may now hold nodes the root cannot
reach. Where SGLang's ``assert`` in ``evict_host`` fires (the reference raises), the engine
must have recorded the same stop in ``head_bug_reports``; the run ends there, as SGLang's
scheduler would. The unswitched engine is held to the unswitched reference by
test_hicache_differential.py, unchanged.
"""
from __future__ import annotations

import random

import pytest

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import open_engine
from radixviz.engines.hicache.ops_pool import host_size, host_state
from oracles.naive_hicache import HiRefNode
from reference_hicache import HiPair, NaiveHiRadixCache, hicache_structure
from test_hicache_differential import page_patterns

STEPS = 250
COMBOS = {"load_back_unprotected": dict(head_load_back=True),
          "host_leaf_by_evicted": dict(head_host_leaf_rule=True),
          "both": dict(head_load_back=True, head_host_leaf_rule=True)}


def chain(node) -> tuple:
    """The edges from ``node`` up its parent links (the root: ()), attached to the root or not."""
    edges = []
    while node.parent is not None:
        edges.append(tuple(node.key))
        node = node.parent
    return tuple(reversed(edges))


class TiedRefNode(HiRefNode):
    # a lost node can share its access time with a candidate in the tree; SGLang's heap then
    # orders them by where its set happens to hold them, the engine by node id: so does this
    def __lt__(self, other) -> bool:
        return (self.last_access_time, self.number) < (other.last_access_time, other.number)


class TiedReference(NaiveHiRadixCache):
    def _node(self, priority=0):
        self.numbers += 1
        return TiedRefNode(self.clock, self.numbers, priority)


class HeadPair(HiPair):
    """HiPair with the head bugs on in both: nodes are compared by their parent chains (a
    lost node has one too), and SGLang's assert ends the run."""

    def __init__(self, bugs: tuple, flags: dict, page: int, write_policy: str, device: int, host: int):
        self.pool = TokenToKVPool(device, device="cpu")
        self.engine = open_engine("hicache", self.pool, page_size=page, eviction_policy="lru",
                                  host_size=host, write_policy=write_policy, head_bugs=bugs)
        self.reference = TiedReference(device, host, page, "lru", write_policy, **flags)
        self.locks, self.steps, self.stopped = [], 0, None
        from collections import Counter
        self.seen = Counter()

    def path(self, node, which="engine") -> tuple:
        return chain(node)

    def apply(self, op) -> None:
        reports = len(self.cache.head_bug_reports)
        try:
            super().apply(op)
        except (AssertionError, TypeError, AttributeError) as exc:
            # the reference (SGLang's lines) raised: the engine must have stopped in the same
            # operation, reporting it, and not before (a comparison failing is no stop)
            if len(self.cache.head_bug_reports) != reports + 1:
                raise
            self.stopped = f"{type(exc).__name__}: {exc}"
            assert "stops the scheduler here" in self.cache.head_bug_reports[-1]
            return
        assert len(self.cache.head_bug_reports) == reports, \
            f"the engine stopped where SGLang does not: {self.cache.head_bug_reports[-1]}"

    def check(self) -> None:
        e, r, cache = self.engine, self.reference, self.cache
        self.steps += 1
        assert (e.evictable_size(), e.protected_size()) == (r.evictable_size(), r.protected_size())
        assert cache._clock == r.clock.now
        assert hicache_structure(cache.root_node) == r.structure()
        free = {i for i, count in enumerate(self.pool.refcounts()) if count == 0}
        assert free == r.device.free_set
        assert e.host_pool.free_slots.tolist() == r.host.free_slots.tolist()
        for mine, theirs in ((cache.ongoing_write_through, r.ongoing_write_through),
                             (cache.ongoing_load_back, r.ongoing_load_back),
                             (cache.evictable_leaves, r.evictable_leaves),
                             (cache.evictable_host_leaves, r.evictable_host_leaves)):
            mine = mine.values() if isinstance(mine, dict) else mine
            theirs = theirs.values() if isinstance(theirs, dict) else theirs
            assert sorted(chain(n) for n in mine) == sorted(chain(n) for n in theirs)
        snap = cache.snapshot()
        self.seen["unreachable"] += bool(snap.unreachable)
        self.seen["double_freed"] += bool(snap.double_freed)
        queue = r.host.free_slots.tolist()
        assert bool(snap.double_freed) >= (len(set(queue)) < len(queue))


def random_head_run(pair: HeadPair, page: int, rng: random.Random, steps: int) -> None:
    """Random operations, weighted toward what the bugs need: write-backs under a full
    device, loads back of demoted prefixes, host evictions."""
    patterns = page_patterns(page)
    pages = 10 if page == 1 else 4
    documents = ["".join(rng.choice(patterns) for _ in range(pages)) for _ in range(3)]
    for _ in range(steps):
        if pair.stopped:
            return
        key = rng.choice(documents)[:page * rng.randint(1, pages)]
        if rng.random() < 0.3:
            key += "".join(rng.choice(patterns) for _ in range(rng.randint(1, 2)))
        roll = rng.random()
        if roll < 0.35:
            pair.apply(("insert", key, 0))
        elif roll < 0.55:
            pair.apply(("load", key))
        elif roll < 0.60:
            pair.apply(("lock", key))
        elif roll < 0.65:
            pair.apply(("unlock", rng.randint(0, 10)))
        elif roll < 0.80:
            pair.apply(("evict", rng.randint(1, 4 * page + 6)))
        elif roll < 0.90:
            pair.apply(("evict_host", rng.randint(1, 3 * page + 4)))
        else:
            pair.apply(("sync",))


@pytest.mark.parametrize("write_policy", ("write_back", "write_through"))
@pytest.mark.parametrize("combo", COMBOS)
def test_switched_engine_matches_sglangs_lines_on_random_runs(combo, write_policy):
    bugs = ("load_back_unprotected", "host_leaf_by_evicted") if combo == "both" else (combo,)
    seen, stops = {"unreachable": 0, "double_freed": 0}, 0
    for seed in range(8):
        for page in (1, 2):
            device = 12 * page
            pair = HeadPair(bugs, COMBOS[combo], page, write_policy, device, device + 2 * page)
            random_head_run(pair, page, random.Random(f"{combo}-{write_policy}-{seed}-{page}"), STEPS)
            assert pair.steps > 0
            stops += pair.stopped is not None
            for k in seen:
                seen[k] += pair.seen[k]
    if write_policy == "write_back":
        # the runs reached the bugs: a node nobody can reach (both bugs make one)
        assert seen["unreachable"], seen


# ------------------------------------------------------------ the two sequences

from radixviz.script import Session  # noqa: E402

LOAD_BACK = """hicache-fixes {mode}
insert tokens 1 1 1 1 1 1 1 1 1 1
evict 10
insert tokens 2 2 2 2 2 2 2 2 2 2 2 2
load-back tokens 1 1 1 1 1 1 1 1 1 1
"""
HOST_LEAF = """hicache-fixes {mode}
insert tokens 1 2 3
evict 3
insert tokens 1 2 3 4 5
evict 5
evict-host 2
evict-host 10
"""


def run_script(text: str, pool: int, host: int) -> Session:
    session = Session(pool, engine="hicache", device="cpu", host_size=host, write_policy="write_back")
    session.run(text)
    return session


@pytest.mark.parametrize("mode", ("off", "load-back-unprotected"))
def test_load_back_returns_the_host_slots_it_just_freed(mode):
    """Device 12, host 14: A (ten 1s) demoted to host slots 0-9, B (twelve 2s) fills the
    device; loading A back writes B to the host first, which frees A's host slots and
    deletes A, and B's copy takes host slots 10-13 then 0-7."""
    session = run_script(LOAD_BACK.format(mode=mode), 12, 14)
    result = session.records[-1].result
    assert result["host_hit_length"] == 10 and result["loaded"] == 10
    tree = session.engine.snapshot()
    (b,) = tree.root.children
    assert b.key == (2,) * 12 and b.evicted and b.host_value == (10, 11, 12, 13, 0, 1, 2, 3, 4, 5, 6, 7)
    # A is gone from the tree, yet it holds the ten new device slots and its old host slots,
    # eight of which are B's copy now
    ((_a_id, a_key, a_device, a_host),) = tree.unreachable
    assert a_key == (1,) * 10 and a_device == tuple(result["slots"]) and a_host == tuple(range(10))
    assert set(a_host) & set(b.host_value) == set(range(8))


def test_load_back_with_the_fix_protects_the_copy_and_loads_nothing():
    session = run_script(LOAD_BACK.format(mode="on"), 12, 14)
    result = session.records[-1].result
    assert result["host_hit_length"] == 10 and result["loaded"] == 0
    tree = session.engine.snapshot()
    assert {n.key for n in tree.root.children} == {(1,) * 10, (2,) * 12} and not tree.unreachable
    session.check_invariants()


@pytest.mark.parametrize("mode", ("off", "host-leaf-by-evicted"))
def test_a_host_leaf_with_a_child_orphans_it_then_frees_twice(mode):
    """Device 8, host 10: A=[1,2,3] on host slots 0-2 with child B=[4,5] on 3-4. SGLang files
    A as a host leaf, so evict-host 2 deletes A with B below it; B keeps host slots 3-4 where
    nobody can reach them, and the next evict-host frees B, then A's slots 0-2 again."""
    session = run_script(HOST_LEAF.format(mode=mode), 8, 10)
    after_first = session.records[-2]
    tree = session.frames[after_first.last_frame].tree
    assert not tree.root.children   # A deleted from the root
    assert [(key, host) for _, key, _, host in tree.unreachable] == [((1, 2, 3), (0, 1, 2)), ((4, 5), (3, 4))]
    pool = session.frames[after_first.last_frame].pool
    assert [host_state(pool, s) for s in (3, 4)] == ["stray", "stray"]   # taken, no node reaches them
    from radixviz.engines.hicache.views_pool import pool_rows
    shown = [line.plain for line in pool_rows(pool, width=60)]
    assert any("? taken, no node reaches it" in line for line in shown)
    assert "'⟨4⟩⟨5⟩' is out of the tree, nobody can reach it; it still holds host slots 3–4" in " ".join(shown)
    end = session.engine.snapshot()
    assert end.double_freed == (0, 1, 2)
    assert "hiradix_cache.py:994" in end.reports[0]
    assert "freed twice" in end.host_accounting
    assert [host_state(session.live_frame().pool, s) for s in (0, 1, 2)] == ["twice"] * 3


def test_a_host_leaf_with_a_child_stays_with_the_fix():
    session = run_script(HOST_LEAF.format(mode="on"), 8, 10)
    tree = session.frames[session.records[-2].last_frame].tree
    (a,) = tree.root.children
    assert a.key == (1, 2, 3) and not a.children   # evict-host 2 took B, the leaf, not A
    end = session.engine.snapshot()
    assert not end.unreachable and not end.double_freed and not end.reports
    session.check_invariants()


# ------------------------------------------------------------ the harm, in numbers

def test_the_kv_check_marks_the_loaded_slots_as_another_contexts():
    """With the tiny model filling the pool, the ten slots load-back hands out for A hold B's
    K/V in the first eight (host slots 0-7 were rewritten by B's write-back) and A's own,
    left behind in freed host slots 8-9, in the last two."""
    from radixviz.script import parse_script
    from radixviz.script.kv_session import KVSession
    from radixviz.tui.kv_check import match_block

    checks = {}
    for mode in ("off", "on"):
        kv = KVSession(device="cpu", pool_size=12, engine="hicache", host_size=14, write_policy="write_back")
        for op in parse_script(LOAD_BACK.format(mode=mode)):
            check = kv.apply(op)
        checks[mode] = check
    bad = checks["off"]
    assert bad.matched == 10 and not bad.agree and bad.first_bad == 0
    wrong = [i for i, diff in enumerate(bad.token_diffs) if diff > 1e-3]
    assert wrong == list(range(8))
    text = "\n".join(match_block(bad, "load-back"))
    assert "load-back" in text and "WRONG" in text and "another context" in text
    assert checks["on"].matched == 0 and checks["on"].agree   # the fix loads nothing: recomputed


# ------------------------------------------------------------ the two challenges

@pytest.mark.parametrize("challenge_id", ("someone-elses-kv", "nobody-can-reach-it"))
def test_challenges_solve_with_sglangs_lines_and_fail_with_the_fixes(challenge_id):
    """Graded by the engine: the reference solution meets the goal with 9fbe6800a's lines
    on, and the same operations miss it once the start turns the fixes back on."""
    from dataclasses import replace

    from radixviz.lessons.challenges.challenge import attempt, load_challenges

    challenge = {c.id: c for c in load_challenges()}[challenge_id]
    assert "hicache-fixes off" in challenge.start
    assert attempt(challenge, challenge.solution).solved
    fixed = replace(challenge, start=challenge.start.replace("hicache-fixes off", "hicache-fixes on"))
    verdict = attempt(fixed, challenge.solution)
    assert not verdict.solved
    assert {c.condition.left for c in verdict.missing} & {"load-back.foreign", "unreachable"}


# ------------------------------------------------------------ the quiz topic

@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_lesson_17_questions_replay_to_their_answer(difficulty):
    """Random small host pools and keys: the answer is what SGLang's lines leave behind,
    and "show me" replays the scenario to the same count; both outcomes occur."""
    from radixviz.lessons.quiz.generate import generate_question
    from radixviz.lessons.scenario import run_scenario

    answers = set()
    for seed in range(10):
        question = generate_question(seed, difficulty, lesson=17)
        assert question.topic == "host-leaf" and question == generate_question(seed, difficulty, lesson=17)
        session = run_scenario(question.scenario)
        frame = session.live_frame()
        stray = sum(1 for s in range(host_size(frame.pool)) if host_state(frame.pool, s) == "stray")
        assert question.accepted == (str(stray),)
        answers.add(stray)
    assert 0 in answers and answers - {0}


# ------------------------------------------------------------ the command line

def _cli(*argv, capsys):
    from radixviz.cli import main
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code or 0, out.out, out.err


def test_head_bugs_flag_on_run_switches_the_engine_and_the_document_shows_the_damage(capsys):
    import json
    script = "insert tokens 1 2 3; evict 3; insert tokens 1 2 3 4 5; evict 5; evict-host 2"
    code, out, _ = _cli("run", "--engine", "hicache", "--write-policy", "write_back", "--pool-size", "8",
                        "--head-bugs", "host_leaf_by_evicted", "--json", "-e", script, capsys=capsys)
    doc = json.loads(out)
    assert doc["head_bugs"] == ["host_leaf_by_evicted"]
    assert len(doc["head_bug_damage"]["unreachable"]) == 2   # "1 2 3" deleted above "4 5"
    code, out, _ = _cli("run", "--engine", "hicache", "--write-policy", "write_back", "--pool-size", "8",
                        "--json", "-e", script, capsys=capsys)
    assert code == 0 and json.loads(out)["head_bugs"] == [] and "head_bug_damage" not in json.loads(out)


@pytest.mark.parametrize("argv, words", [
    (("run", "--head-bugs", "-e", "insert a"), "host tier"),                       # the 2024 engine
    (("run", "--engine", "hicache", "--head-bugs", "nope", "-e", "insert a"), "unknown head bug"),
    (("simulate", "--engine", "2026", "--head-bugs"), "host tier"),
])
def test_head_bugs_flag_refuses_what_it_cannot_do_in_one_line(argv, words, capsys):
    code, _, err = _cli(*argv, capsys=capsys)
    assert code == 2 and words in err and "Traceback" not in err
