"""Quiz questions on today's cache (lessons 10-12), each answered by running the 2026 engine.

Same contract as lessons/quiz/generate.py, which reads GENERATORS and LESSON_TOPICS here
(EngineSpec.quiz): a question is a pure function of its seed and difficulty.
"""
from __future__ import annotations

from radixviz.cache import POLICY_SUMMARY

from radixviz.lessons.quiz.builder import ScenarioBuilder
from radixviz.lessons.quiz.questions import NAME_BY_KEY, Question
from radixviz.lessons.scenario import apply_text, first_evicted_leaf, node_choices, run_scenario, tree_text

_PAGE = {"easy": (2, 2), "medium": (2, 4), "hard": (3, 8)}
# the policies asked about at each level: the plain ones first, the two-part keys later
_POLICIES = {"easy": ("lru", "fifo", "mru"), "medium": ("lfu", "filo", "mru", "fifo"),
             "hard": ("priority", "slru", "lfu")}


def gen_pages(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    page = rng.randint(*_PAGE[build.difficulty])
    first = build.word(2 * page, 4 * page)
    first = first[:len(first) - len(first) % page]
    shared = rng.randint(1, len(first) - 1)
    second = first[:shared] + build.word(page, 2 * page)
    build.lines = ["engine 2026", f"page-size {page}", f'insert "{first}"']
    asked = f'insert "{second}"'
    session = run_scenario(build.text)
    held = apply_text(session, asked).result["prefix_len"]
    return Question(f"gen-pages-{build.difficulty}-{seed}", "number",
                    "Scenario:\n\n    " + "\n    ".join(build.lines)
                    + f"\n\nWhat does {asked} return (tokens the tree already held)?",
                    (str(held),), str(held),
                    f"The keys share {_common_prefix(first, second)} token(s), but pages of {page} "
                    f"compare whole: only the "
                    f"{held // page} page(s) that agree in every token count, so {held}. A partial last "
                    f"page of the new key is not inserted at all.",
                    scenario=build.script_with_question(asked), **build.tags(seed, "pages", 10))


def _common_prefix(a: str, b: str) -> int:
    """How many leading tokens two keys share (the appended text may repeat the next one)."""
    shared = 0
    for x, y in zip(a, b):
        if x != y:
            break
        shared += 1
    return shared


def gen_eviction_policy(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    policy = rng.choice(_POLICIES[build.difficulty])
    words = ["".join(rng.sample(build.alphabet, 1)) + build.word(1, 3) for _ in range(3)]
    while len({w[0] for w in words}) < 3:       # one leaf per first token: three leaves
        words = [rng.choice("abcdefgh") + build.word(1, 3) for _ in range(3)]
    lines = ["engine 2026"] + [f'insert "{w}" priority {rng.randint(0, 2)}' for w in words]
    for _ in range(rng.randint(1, 3)):           # extra hits and touches reorder the keys
        w = rng.choice(words)
        lines.append(f'insert "{w}"' if rng.random() < 0.5 else f'match "{w}"')
    lines.append(f"eviction {policy}")
    build.lines = lines
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    leaf, _ = first_evicted_leaf(session, 1)
    victim = tree.nodes[leaf]
    return Question(f"gen-eviction-{build.difficulty}-{seed}", "node",
                    "Scenario:\n\n    " + "\n    ".join(lines)
                    + f"\n\nevict(1) is called under the {policy} policy. Which leaf goes first?" + NAME_BY_KEY,
                    (str(leaf),), f"#{leaf} \"{''.join(victim.key)}\"",
                    f"{policy}: {_why(policy)} Inserts raise hit counts and take the max priority; "
                    f"matches only refresh the access time.",
                    scenario=build.script_with_question("evict 1"), nodes=node_choices(tree),
                    tree_text=tree_text(tree, show_time=True) if build.shows_tree else "",
                    **build.tags(seed, "eviction-policy", 11))


def gen_protected(build: ScenarioBuilder, seed: int) -> Question:
    build.lines = ["engine 2026"]
    build.inserts()
    build.some_locks()
    key = build.prefix_of_a_key()
    asked = f'lock "{key}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    before = session.cache.protected_size()
    apply_text(session, asked)
    after = session.cache.protected_size()
    return Question(f"gen-protected-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree) + f"\n\nprotected_size() is {before}. What is it after {asked}?",
                    (str(after),), str(after),
                    "inc_lock_ref walks from the matched node to the root; each node going from "
                    "lock_ref 0 to 1 moves its tokens from evictable to protected.",
                    scenario=build.script_with_question(asked), tree_text=tree_text(tree),
                    **build.tags(seed, "protected", 12))


def _why(policy: str) -> str:
    return POLICY_SUMMARY[policy] + "."


GENERATORS = {"pages": gen_pages, "eviction-policy": gen_eviction_policy, "protected": gen_protected}
LESSON_TOPICS = {10: ("pages",), 11: ("eviction-policy",), 12: ("protected",)}
