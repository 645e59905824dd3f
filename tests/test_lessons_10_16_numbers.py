"""Every number lessons 10-16 state in a prediction's explanation, in their prose about the
engine, in a challenge debrief or in a generated quiz explanation, recomputed from the
engine or the simulation (the scheduler figures, each under the loop the text names, are in
test_lessons_claims.py, test_lessons_routing.py and test_lessons_hicache.py). Each lesson's
operations are replayed block by block; after the block that answers a prediction, the
numbers its explanation gives are read off the records and the session."""
from __future__ import annotations

import re

import pytest

from radixviz.lessons import Predict, load_lessons
from radixviz.lessons.challenges.challenge import attempt, load_challenges
from radixviz.lessons.lesson.model import Operations
from radixviz.lessons.quiz.generate import generate_question
from radixviz.lessons.route_checks import placements
from radixviz.script import Session

LESSONS = {l.number: l for l in load_lessons()}
CHALLENGES = {c.id: c for c in load_challenges()}


def folded(text: str) -> str:
    return " ".join(text.split())


def replay(number: int, checks: dict) -> set:
    """Run lesson ``number``; after the block answering a prediction whose question starts
    with a key of ``checks``, call ``checks[key](explain, records, session)``. Returns the
    keys that ran (each must)."""
    session, pending, ran = Session(device="cpu"), [], set()
    for block in LESSONS[number].blocks:
        if isinstance(block, Predict):
            pending.append(block)
        elif isinstance(block, Operations):
            records = [session.apply(op) for op in block.ops]
            for predict in pending:
                for start, check in checks.items():
                    if folded(predict.question).startswith(start):
                        check(folded(predict.explain), records, session)
                        ran.add(start)
            pending = []
    assert ran == set(checks), set(checks) - ran
    return ran


def span(slots) -> str:
    return f"{slots[0]}–{slots[-1]}"


def tokens(node_key) -> str:
    return "".join(node_key)


# ------------------------------------------------------------------ lesson 10

def test_lesson_10_explanations():
    def kept_slots(explain, records, session):
        r = records[0].result
        assert f"Slots {span(r['freed_duplicates'])} hold \"Hell\"" in explain
        assert f"Slots {span(r['new_slots'])} hold \"o_th\", the one new whole page" in explain
        assert f"Slots {span(r['freed_tail'])} hold the partial page \"ere\"" in explain
        fresh = r["freed_duplicates"] + r["new_slots"] + r["freed_tail"]
        assert len(fresh) == len("Hello_there") == 11 and span(fresh) == "12–22"

    def cut_to_pages(explain, records, session):
        key, page = records[0].op.key, session.cache.page_size
        whole = len(key) - len(key) % page
        assert f"cut to {whole} tokens first (\"{tokens(key[:whole])}\")" in explain
        assert f"all {records[0].result['matched']} match" in explain and len(key) == 9

    def sixteen(explain, records, session):
        assert len(records[0].op.key) == 12 and session.cache.page_size == 16
        assert "Twelve tokens do not fill one page of 16" in explain
        assert session.cache.total_size() == 0 and len(records[0].result["freed_tail"]) == 12

    replay(10, {"The insert allocates eleven fresh slots": kept_slots,
                "A match for \"Hello_wor\"": cut_to_pages,
                "After inserting \"Hello_world!\" with pages of 16": sixteen})
    text = folded(LESSONS[10].path.read_text(encoding="utf-8"))
    assert "\"Hello_there\" has 11 tokens: two whole pages and the partial page \"ere\"" in text
    assert len("Hello_there") // 4 == 2 and "Hello_there"[8:] == "ere"


# ------------------------------------------------------------------ lesson 11

def test_lesson_11_explanations_and_slru_threshold():
    from radixviz.cache.evict_policy import PROTECTED_HITS as SLRU_PROTECTED_HITS
    text = folded(LESSONS[11].path.read_text(encoding="utf-8"))
    assert f"reaches SLRU's threshold of {SLRU_PROTECTED_HITS}" in text

    def priorities(explain, records, session):
        found = {}
        for op in LESSONS[11].operations:     # the highest priority inserted through each leaf
            if op.name == "insert":
                found[tokens(op.key)] = max(found.get(tokens(op.key), 0), op.priority or 0)
        assert f"\"berry\" has {found['berry']}, \"cherry\" {found['cherry']}" in explain

    replay(11, {"Under the priority policy, which leaf goes next?": priorities})


def _walk(root):
    stack = list(root.children.values())
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


# ------------------------------------------------------------------ lesson 12

def test_lesson_12_explanations():
    def six(explain, records, session):
        assert -records[0].result["delta"] == len("Hello_") and "six tokens leave" in explain

    def two(explain, records, session):
        node = _node(session, "wo")
        assert -records[0].result["delta"] == len(node.key) == 2 and "(two tokens)" in explain
        assert _node(session, "Hello_").lock_ref == 2 and "\"Hello_\" goes from 1 to 2" in explain

    def protected(explain, records, session):
        assert session.cache.protected_size() == 6 + 2
        assert "\"Hello_\" (6, locked twice) and \"wo\" (2)" in explain

    def unlock(explain, records, session):
        assert _node(session, "Hello_").lock_ref == 1 and "(lock_ref 2 → 1)" in explain

    replay(12, {"lock \"Hello_\" returns": six, "lock \"Hello_wo\" changes": two,
                "How many tokens are protected now?": protected, "unlock \"Hello_\" returns": unlock})


def _node(session, edge: str):
    return next(n for n in _walk(session.cache.root_node) if tokens(n.key) == edge)


# ------------------------------------------------------------------ lesson 13

def test_lesson_13_explanations_and_page_count():
    def shared(explain, records, session):
        assert records[0].result["prefix_len"] == 6 and "returns 6" in explain
        assert "all 11 tokens" in explain and len("Hello_world") == 11

    def removed(explain, records, session):
        assert len([e for e in records[0].kv_events if e.kind == "removed"]) == 1
        assert "It holds one page, so one event names it" in explain

    replay(13, {"Now insert \"Hello_world\" ns lora-a. What prefix length": shared,
                "evict 2 frees the least recently used leaf": removed})
    session = Session(device="cpu")
    for op in LESSONS[13].operations:
        if op.name == "reset":
            break
        session.apply(op)
    pages = session.cache.total_size() // session.cache.page_size
    assert pages == 6 and "The tree holds six pages at this point" in folded(
        LESSONS[13].path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ lesson 14

def test_lesson_14_explanation_loads():
    four = ["cats:ask1", "cats:ask2", "dogs:ask3", "cats:ask4"]
    chosen = placements("cache-aware", 2, four)
    loads = [chosen[:2].count(w) for w in (0, 1)]       # when dogs:ask3 arrives
    explain = folded(next(p.explain for p in LESSONS[14].blocks if isinstance(p, Predict)
                          and p.check == "routes.cache-aware.2"))
    assert f"worker 1 (loads {loads[0]} and {loads[1]})" in explain and chosen[2] == 1
    rr = placements("round-robin", 2, four)
    rr_explain = folded(next(p.explain for p in LESSONS[14].blocks if isinstance(p, Predict)
                             and p.check == "reused.round-robin.2"))
    assert ", ".join(f"{k} to {w}" for k, w in zip(four, rr)) in rr_explain
    from radixviz.sim.routers import LAUNCHED_DEFAULTS as L, LIBRARY_DEFAULTS as B

    def explain_of(check):
        return folded(next(p.explain for p in LESSONS[14].blocks if isinstance(p, Predict) and p.check == check))
    assert (f"above {L.cache_threshold:.0%}" in explain_of("route.cache-aware.2")
            and f"the library's default of {B.cache_threshold:.0%}" in explain_of("route.cache-aware.2"))
    assert (f"the gap is above {L.balance_abs_threshold} requests and the busiest worker has more than "
            f"{L.balance_rel_threshold} times") in explain_of("over_half.hot-prefix.cache-aware")
    assert f"its lead seldom passes {L.balance_abs_threshold}" in explain_of("over_half.hot-prefix.cache-aware")
    assert (f"a gap above {B.balance_abs_threshold} with more than {B.balance_rel_threshold} times"
            in explain_of("over_half.hot-prefix.cache-aware-library"))


# ------------------------------------------------------------------ lesson 15

def test_lesson_15_host_eviction_explanations():
    def host_evict(explain, records, session):
        events = [e for e in records[0].kv_events if e.kind == "removed"]
        assert records[0].result["evicted"] == 10 and len(events) == 10
        assert "\"world\" (5 tokens, the older leaf)" in explain and "so \"there\" (5) goes too" in explain
        assert "Ten pages left both tiers: ten \"removed\" events" in explain
        assert "Hello_" in {tokens(n.key) for n in _walk(session.cache.root_node)}

    def demote(explain, records, session):
        assert not [e for e in records[0].kv_events if e.kind == "removed"]
        assert all(e.medium == "GPU" for r in records for e in r.kv_events)

    replay(15, {"evict-host 6 frees how many host tokens?": host_evict,
                "evict 100 drops every device copy": demote})
    text = folded(LESSONS[15].path.read_text(encoding="utf-8"))
    from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD
    assert f"shorter than {LOAD_BACK_THRESHOLD} tokens" in text
    assert "The host pool here holds 160 tokens; the device pool, as always in the lessons, 128" in text
    session = Session(device="cpu")
    session.run("engine hicache\nhost-size 160")
    assert session.engine.host_pool.size == 160 and session.pool.size == 128


# ------------------------------------------------------------------ lesson 16

def test_lesson_16_explanations():
    def in_flight(explain, records, session):
        before = session.engine.host_pool.used_size() - len("Hello_world!")
        assert before == 4 * 12 and "four nodes of twelve were already there" in folded(
            LESSONS[16].path.read_text(encoding="utf-8"))
        assert "takes its twelve host slots" in explain

    replay(16, {"Under write_through with auto-sync off, insert \"Hello_world!\"": in_flight})


# ------------------------------------------------------------------ nothing left unchecked

# every number the explanations of lessons 10-16 give, and the test above (or in
# test_lessons_routing.py for lesson 14) that recomputes it; key names such as cats:ask4 and
# years count too. A number added to an explanation fails here until a test recomputes it.
CHECKED = {
    10: {"8", "12", "15", "16", "19", "20", "22"},            # test_lesson_10_explanations
    11: {"0", "2", "2024"},                                    # priorities; "the 2024 engine"
    12: {"0", "1", "2", "6"},                                  # test_lesson_12_explanations
    13: {"6", "11"},                                           # test_lesson_13_explanations...
    14: {"0", "1", "1.1", "1.5", "2", "3", "4", "8", "9", "30", "32", "38", "50", "55", "64",
         "89", "100", "256"},                                  # test_lessons_routing.py + above
    15: {"0", "5", "6"},                                       # test_lesson_15_host_eviction...
    16: set(),
}


def test_no_explanation_number_goes_unchecked():
    for number, checked in CHECKED.items():
        found = set()
        for block in LESSONS[number].blocks:
            if isinstance(block, Predict):
                found |= set(re.findall(r"\d+(?:\.\d+)?", folded(block.explain)))
        assert found <= checked, f"lesson {number}: {sorted(found - checked)} recomputed by no test"


# ------------------------------------------------------------------ challenge debriefs 10-16

def test_challenge_debriefs_10_to_16():
    whole = folded(attempt(CHALLENGES["whole-tree"], CHALLENGES["whole-tree"].solution)
                   .debrief(CHALLENGES["whole-tree"]))
    session = Session(device="cpu")
    session.run(CHALLENGES["whole-tree"].start)
    leaves = [n for n in _walk(session.cache.root_node) if not n.children]
    freed = sum(len(n.key) for n in leaves)
    asked = session.run(CHALLENGES["whole-tree"].solution)[-1].op.count
    assert len(leaves) == 2 and f"gave {freed} tokens, short of {asked}" in whole
    assert f"Ask for {freed} and the loop stops one leaf earlier" in whole
    page = folded(CHALLENGES["page-drop"].path.read_text(encoding="utf-8"))
    key = "Hello_wor"
    assert (f"The query had {len(key)} tokens" in page and f"— {len(key) - len(key) % 4} —" in page
            and f"the same match returns {len(key)}" in page)
    hits = folded(attempt(CHALLENGES["every-worker-hits"], CHALLENGES["every-worker-hits"].solution)
                  .debrief(CHALLENGES["every-worker-hits"]))
    from radixviz.sim.router_tree import ApproxTree
    from radixviz.sim.routers import LAUNCHED_DEFAULTS, LIBRARY_DEFAULTS
    tree = ApproxTree()
    tree.insert(tuple("cats:ask1"), 0)
    found = tree.prefix_match(tuple("cats:ask6"))
    assert f"here {found.matched} of its {found.length} characters" in hits
    assert (f"far above the {LAUNCHED_DEFAULTS.cache_threshold:.0%} the launched router asks for, or the "
            f"library's {LIBRARY_DEFAULTS.cache_threshold:.0%}") in hits
    assert "six prompts computed from scratch" in hits


def test_lfu_and_write_debriefs_state_the_engines_counts():
    lfu = CHALLENGES["lfu-vs-lru"]
    session = Session(device="cpu")
    session.run(lfu.start + "\n" + lfu.solution)
    assert _node(session, "apple").hit_count == 2
    assert "raised its hit count to 2" in folded(lfu.path.read_text(encoding="utf-8"))
    write = CHALLENGES["eviction-before-the-write"]
    text = folded(write.path.read_text(encoding="utf-8"))
    asked = int(re.search(r"evicting (\d+) tokens took `one_off_query` only", text).group(1))
    session = Session(device="cpu")
    session.run(write.start)
    evict = session.run(write.solution)[-1]
    assert evict.op.count == asked and len("one_off_query") == asked


# ------------------------------------------------------------------ generated quiz explanations

SEEDS = range(40)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_kv_event_explanations_count_pages(difficulty):
    for seed in SEEDS:
        q = generate_question(seed, difficulty, topic="kv-events")
        found = re.search(r"the key has (\d+) whole page\(s\) of (\d+), the tree already held (\d+) of "
                          r"them, so (\d+)", q.explanation)
        whole, page, held, stored = map(int, found.groups())
        session = Session(device="cpu")
        records = session.run(q.scenario)
        asked = records[-1]
        assert whole == len(asked.op.key) // page and held == asked.result["prefix_len"] // page
        assert stored == whole - held == len([e for e in asked.kv_events if e.kind == "stored"])
        assert q.accepted == (str(stored),)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_namespace_explanations_state_the_longest_shared_prefix(difficulty):
    def shared(a, b):
        return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    for seed in SEEDS:
        q = generate_question(seed, difficulty, topic="namespaces")
        stated = int(re.search(r"the longest shared prefix is (\d+) token", q.explanation).group(1))
        ops = Session(device="cpu").run(q.scenario)
        asked = ops[-1].op
        same = [r.op.key for r in ops[:-1] if r.op.name == "insert" and r.op.ns == asked.ns]
        assert stated == max((shared(k, asked.key) for k in same), default=0), (seed, q.scenario)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_routing_explanations_state_the_placements_and_thresholds(difficulty):
    from radixviz.sim.routers import LAUNCHED_DEFAULTS as L, LIBRARY_DEFAULTS as B
    for seed in SEEDS:
        q = generate_question(seed, difficulty, topic="routing")
        router = re.search(r"behind a (\S+) router", q.prompt).group(1)
        keys = re.findall(r"^\s+\d+\. (\S+)$", q.prompt, re.MULTILINE)
        workers = int(q.prompt.split()[0])
        chosen = placements(router, workers, keys)
        assert f"The router places them {' '.join(map(str, chosen))}." in q.explanation
        assert (f"more than {L.cache_threshold:.0%} of the prompt, imbalance beyond {L.balance_abs_threshold} "
                f"requests and {L.balance_rel_threshold}x; the library's own defaults would be "
                f"{B.cache_threshold:.0%}, {B.balance_abs_threshold} and {B.balance_rel_threshold}x") in q.prompt
        assert q.answer_text == f"worker {chosen[-1]}"


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_host_tier_explanations_state_the_two_tiers(difficulty):
    from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD
    for seed in SEEDS:
        q = generate_question(seed, difficulty, topic="host-hit")
        device, host = map(int, re.search(r"finds (\d+) token\(s\) still on the device and, after them, "
                                          r"(\d+) on the host only", q.explanation).groups())
        session = Session(device="cpu")
        asked = session.run(q.scenario)[-1]
        key, node, seen = asked.op.key, session.cache.root_node, [0, 0]
        while key:          # walk the tree along the key: device tokens, then host-only ones
            child = next((c for c in node.children.values() if c.key[0] == key[0]), None)
            if child is None:
                break
            n = next((i for i, (a, b) in enumerate(zip(child.key, key)) if a != b), min(len(child.key), len(key)))
            seen[child.evicted] += n
            if n < len(child.key):
                break
            node, key = child, key[n:]
        assert (device, host) == tuple(seen), (seed, q.scenario)
        q = generate_question(seed, difficulty, topic="load-back")
        cut = int(re.search(r"the host-only stretch is (\d+) token", q.explanation).group(1))
        asked = Session(device="cpu").run(q.scenario)[-1]
        assert cut == len(asked.op.key) and f"threshold of {LOAD_BACK_THRESHOLD}" in q.explanation
        assert asked.result["loaded"] == (cut if cut >= LOAD_BACK_THRESHOLD else 0)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_lesson_9_history_questions_are_the_simulations(difficulty):
    from radixviz.lessons.quiz.generate_history import b_hit
    for seed in range(25):
        q = generate_question(seed, difficulty, topic="cache-unfinished")
        first, second = re.findall(r"[Rr]equest [AB] \(\"([^\"]+)\"", q.prompt)
        with_418 = "with #418" in q.prompt
        shared = next((i for i, (x, y) in enumerate(zip(first, second)) if x != y), min(len(first), len(second)))
        assert q.accepted == (str(shared if with_418 else 0),), (seed, q.prompt)
        assert int(q.accepted[0]) == b_hit(first, second, with_418)
        assert f"{shared} token(s)" in q.explanation
        q = generate_question(seed, difficulty, topic="delay-2442")
        queue = re.findall(r"^\s+R\d\. (\S+)$", q.prompt, re.MULTILINE)
        hits = [int(h) for h in re.findall(r"R\d (\d+)", q.explanation.split(".")[0])]
        session = Session(device="cpu")
        records = session.run(q.scenario)
        assert hits == [r.result["matched"] for r in records if r.op.name == "match"]
        assert [r.op.key for r in records if r.op.name == "match"] == [tuple(k) for k in queue]
