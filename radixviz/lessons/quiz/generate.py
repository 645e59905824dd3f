"""Generated questions: a random scenario on a real Session, the engine computes the answer.

``generate_question(seed, difficulty, topic=None, lesson=None)`` is a pure function of its
arguments: the same seed gives the same scenario, prompt and answer on every machine.
The scenario itself is written by builder.ScenarioBuilder.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

from radixviz.cache.engines import engine_names, engine_spec
from radixviz.sim.policies import order_queue

from .builder import DIFFICULTIES, ScenarioBuilder
from .questions import FIXED_MATCHER, NAME_A_NODE, NAME_BY_KEY, Question, slots_key
from ..scenario import (apply_text, edge_text, first_evicted_leaf, indent, node_choices, run_scenario, tree_text,
                       whole_key)

__all__ = ["DIFFICULTIES", "GENERATORS", "LESSON_TOPICS", "generate_question"]


def gen_structure(build: ScenarioBuilder, seed: int) -> Question:
    build.inserts()
    session = run_scenario(build.text)
    count = len(session.cache.snapshot().nodes) - 1
    tokens = sum(len(k) for k in build.keys)
    trie = len({key[:end] for key in build.keys for end in range(1, len(key) + 1)})
    return Question(f"gen-structure-{build.difficulty}-{seed}", "number",
                    f"Starting from an empty cache:\n\n{indent(build.text)}\n\n"
                    "How many nodes does the tree have now, not counting the root?",
                    (str(count),), str(count),
                    f"Each edge holds a whole stretch of tokens, so {tokens} inserted tokens "
                    f"need only {count} nodes; a trie with one token per node would need {trie}.",
                    scenario=build.text + "\n", tree_text=tree_text(session.cache.snapshot()),
                    **build.tags(seed, "structure", 1))


def gen_match(build: ScenarioBuilder, seed: int) -> Question:
    build.inserts()
    if build.difficulty == "hard":
        build.some_locks()
    query = build.related_key()
    asked = f'match "{query}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    result = apply_text(session, asked).result
    if build.difficulty == "medium":
        return Question(f"gen-match-slots-{seed}", "slots",
                        build.setup_prompt(tree) + f"\n\nWhich slots does match_prefix(\"{query}\") return?"
                        f"{FIXED_MATCHER}",
                        (slots_key(result["slots"]),), " ".join(map(str, result["slots"])) or "none",
                        f"It hits {_tokens(result['matched'])} ({result['matched_text']!r}): the slots of the "
                        "edges it walks, cut where the query stops." + _release_differs(result),
                        scenario=build.script_with_question(asked), tree_text=tree_text(tree),
                        **build.tags(seed, "match", 2))
    return Question(f"gen-match-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree)
                    + f"\n\nHow many tokens does match_prefix(\"{query}\") return?{FIXED_MATCHER}",
                    (str(result["matched"]),), f"{result['matched']} ({result['matched_text'] or 'nothing'!r})",
                    "The walk follows the child whose edge starts with the next token and stops at the "
                    "first token that differs (or when the query ends)." + _release_differs(result),
                    scenario=build.script_with_question(asked), tree_text=tree_text(tree) if build.shows_tree else "",
                    **build.tags(seed, "match", 2))


def gen_split(build: ScenarioBuilder, seed: int) -> Question:
    for attempt in range(50):
        build.restart()
        build.inserts()
        if attempt == 49:    # a last resort that always has a long edge
            build.lines.append(f'insert "{build.alphabet * 2}"')
        session = run_scenario(build.text)
        tree = session.cache.snapshot()
        # a query that ends, or forks, inside some edge
        node = build.rng.choice([n for n in tree.root.walk() if len(n.key) > 1] or [None])
        if node is None:
            continue
        path = "".join(edge_text(tree.nodes[i].key) for i in tree.path_to(node.id) if tree.nodes[i].key)
        cut = build.rng.randint(len(path) - len(node.key) + 1, len(path) - 1)
        tail = build.word(0, 2) if build.difficulty != "easy" else ""
        query = path[:cut] + "".join(c for c in tail[:1] if c != path[cut])
        frames = len(session.frames)
        apply_text(session, f'match "{query}"')
        split = next((f for f in session.frames[frames:] if f.kind == "split"), None)
        if split is not None:
            break
    assert split is not None   # the last attempt always has a long edge to cut
    upper_id, lower_id = split.nodes
    upper = split.tree.nodes[upper_id]
    cut_node = tree.nodes[lower_id]       # the node that was cut keeps its id as the lower half
    asked = f'match "{query}"'
    explanation = (f"The match stops inside edge \"{edge_text(cut_node.key)}\" after "
                   f"{_tokens(len(upper.key))}: a new node #{upper_id} takes \"{edge_text(upper.key)}\" "
                   "and the old node "
                   "keeps the rest as its child.")
    if len(query) > len(whole_key(split.tree, upper_id)):
        explanation += (" The release as shipped, before #7, would not have split here: it cut an edge "
                        "only where the query ran out, and this query goes on past the fork.")
    if build.difficulty == "easy":
        return Question(f"gen-split-easy-{seed}", "node",
                        build.setup_prompt(tree) + f"\n\nmatch_prefix(\"{query}\") splits one edge. Which node is cut?"
                        f"{FIXED_MATCHER}{NAME_A_NODE}",
                        (str(lower_id),), _node_answer(tree, lower_id), explanation,
                        scenario=build.script_with_question(asked), nodes=node_choices(tree), tree_text=tree_text(tree),
                        **build.tags(seed, "split", 2))
    return Question(f"gen-split-{build.difficulty}-{seed}", "text",
                    build.setup_prompt(tree) + f"\n\nmatch_prefix(\"{query}\") splits an edge. "
                    f"Which tokens does the new upper node hold? (the tokens, or how many){FIXED_MATCHER}",
                    (edge_text(upper.key), str(len(upper.key))),
                    f"\"{edge_text(upper.key)}\" ({_tokens(len(upper.key))})",
                    explanation, scenario=build.script_with_question(asked), tree_text=tree_text(tree),
                    **build.tags(seed, "split", 2))


def gen_insert(build: ScenarioBuilder, seed: int) -> Question:
    build.inserts()
    key = build.related_key() if build.rng.random() < 0.8 else build.rng.choice(build.keys)
    asked = f'insert "{key}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    held = apply_text(session, asked).result["prefix_len"]
    return Question(f"gen-insert-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree) + f"\n\nWhat does insert(\"{key}\") return?",
                    (str(held),), str(held),
                    f"insert returns how many leading tokens the tree already held: \"{key[:held]}\". "
                    f"The caller frees its own {held} slot(s) for them; the tree keeps its copy.",
                    scenario=build.script_with_question(asked), tree_text=tree_text(tree) if build.shows_tree else "",
                    **build.tags(seed, "insert", 3))


def gen_evict(build: ScenarioBuilder, seed: int) -> Question:
    for attempt in range(50):
        build.restart()
        build.inserts()
        if build.difficulty != "easy":
            build.lines.append(f'match "{build.rng.choice(build.keys)}"')   # touches one path
        if attempt < 49:     # the last try has no locks, so some leaf can go
            build.some_locks()
        session = run_scenario(build.text)
        tree = session.cache.snapshot()
        count = build.rng.randint(1, 3)
        leaf, _ = first_evicted_leaf(session, count)
        if leaf is not None:
            break
    assert leaf is not None   # the last attempt locks nothing, so some leaf goes
    show_time = build.difficulty == "easy"
    shown = build.shows_tree or show_time
    return Question(f"gen-evict-{build.difficulty}-{seed}", "node",
                    build.setup_prompt(tree, show_time=show_time)
                    + f"\n\nevict({count}) is called. Which leaf is removed first?"
                    + (NAME_A_NODE if shown else NAME_BY_KEY),
                    (str(leaf),), _node_answer(tree, leaf),
                    "Only leaves are candidates, oldest last access first; a leaf with a reference "
                    "count above 0 is skipped.",
                    scenario=build.script_with_question(f"evict {count}"), nodes=node_choices(tree),
                    tree_text=tree_text(tree, show_time=show_time), **build.tags(seed, "evict", 4))


def gen_lock(build: ScenarioBuilder, seed: int) -> Question:
    build.inserts()
    build.some_locks()
    key = build.prefix_of_a_key()
    asked = f'lock "{key}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    before = session.cache.evictable_size()
    delta = apply_text(session, asked).result["delta"]
    after = session.cache.evictable_size()
    return Question(f"gen-lock-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree) + f"\n\nevictable_size() is {before} now. "
                    f"What is it after lock \"{key}\" (match_prefix, then inc_ref_counter on the node it returns)?",
                    (str(after),), str(after),
                    f"Locking walks from the matched node up to the root; each node whose count goes from "
                    f"0 to 1 stops being evictable (delta {delta}).",
                    scenario=build.script_with_question(asked), tree_text=tree_text(tree),
                    **build.tags(seed, "lock", 5))


def gen_buggy(build: ScenarioBuilder, seed: int) -> Question:
    # the #7 shape: X+Y, then X+Y+Z, then ask for X+Z (Z must follow Y's node, not X)
    x, y, z = build.word(2, 3), build.word(2, 3), build.word(2, 3)
    while y[0] == z[0]:
        z = build.word(2, 3)
    build.lines = [f'insert "{x + y}"', f'insert "{x + y + z}"']
    if build.difficulty != "easy":
        # an unrelated request: it must not start like x, or it would split x's edge first
        other = build.word(2, 4)
        while other[0] == x[0]:
            other = build.word(2, 4)
        build.lines.insert(1, f'insert "{other}"')
    build.lines.append("matcher buggy")
    query = x + z[:build.rng.randint(1, len(z))]
    asked = f'match "{query}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    result = apply_text(session, asked).result
    gap = result["disagreement"]
    extra = (f" The fixed matcher would return {gap['fixed']}; slots {gap['wrong_slots']} belong to "
             "another context." if gap else " Here both matchers agree.")
    return Question(f"gen-buggy-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree) + f"\n\nWith the pre-#7 matcher, how many tokens does "
                    f"match_prefix(\"{query}\") report as a hit?",
                    (str(result["matched"]),), str(result["matched"]),
                    "Before #7 a match that forked inside an edge kept walking into the child, so the "
                    "rest of the query could 'hit' tokens cached after a different prefix." + extra,
                    scenario=build.script_with_question(asked), tree_text=tree_text(tree),
                    **build.tags(seed, "buggy", 8))


def gen_policy(build: ScenarioBuilder, seed: int) -> Question:
    policy = "weight" if build.difficulty == "hard" else "lpm"
    count = 3 if build.difficulty == "easy" else 4
    for _attempt in range(50):
        build.restart()
        build.inserts()
        session = run_scenario(build.text)
        tree = session.cache.snapshot()
        waiting: list[tuple] = []   # (key, tokens matched, id of last_node), in arrival order
        for _ in range(count):
            key = build.related_key()
            while key in [w[0] for w in waiting]:
                key = build.related_key()
            result = apply_text(session, f'match "{key}"').result
            waiting.append((key, result["matched"], result["last_node"]))
        # the policy needs live nodes, as the scheduler holds them; a later match that splits an
        # edge keeps the lower half's id, so every recorded last_node is still in the tree
        live = {node.id: node for node in _walk(session.cache.root_node)}
        # a tie between sibling subtrees that both hold requests is settled by the order the
        # children happen to be stored in, which the learner cannot see: draw again
        if policy != "weight" or not _weight_tie(session.cache.root_node, [live[w[2]] for w in waiting]):
            break
    queue = [SimpleNamespace(rid=index, prefix_len=matched, last_node=live[last])
             for index, (_, matched, last) in enumerate(waiting)]
    order = order_queue(policy, queue, session.cache, random.Random(0))
    letters = "".join("abcdefgh"[r.rid] for r in order)
    items = tuple(f'"{key}" ({matched} cached)' if build.difficulty == "easy" else f'"{key}"'
                  for key, matched, _ in waiting)
    rule = ("most cached tokens first" if policy == "lpm" else
            "group by the node each match ended at, then depth first, heaviest subtree first, "
            "a node's own requests after those below it")
    # the queue here is in arrival order; in a running scheduler it is the previous round's
    # order, which the release kept (it sorted the waiting list in place)
    tie = ("Requests with as many cached tokens keep the order they wait in (a stable sort), here "
           "arrival order."
           if policy == "lpm" else
           "Requests whose matches end on the same node keep the order they wait in, here arrival "
           "order; a node weighs 1, plus 1 per request whose match ended on it, plus its children's "
           "weights.")
    return Question(f"gen-policy-{build.difficulty}-{seed}", "order",
                    build.setup_prompt(tree, show_tree=True) + f"\n\nThese requests wait, in arrival order (a first). "
                    f"In which order does the {policy} policy offer them a place? {tie}{FIXED_MATCHER}",
                    (letters,), " ".join(letters),
                    f"{policy}: {rule}.",
                    scenario=build.script_with_question("\n".join(f'match "{k}"' for k, _, _ in waiting)),
                    choices=items, tree_text=tree_text(tree), **build.tags(seed, "policy", 7))


def _weight_tie(root, last_nodes: list) -> bool:
    """Whether two children of one node, both with waiting requests below, weigh the same.

    A node weighs 1, plus 1 per request whose match ended on it, plus its children's weights
    (the release's rule); ``requests`` counts the requests in a subtree."""
    weight: dict[object, int] = {}     # a node -> its weight
    requests: dict[object, int] = {}
    for node in reversed(list(_walk(root))):      # children before their parents
        own = sum(1 for n in last_nodes if n is node)
        weight[node] = 1 + own + sum(weight[c] for c in node.children.values())
        requests[node] = own + sum(requests[c] for c in node.children.values())
    for node in _walk(root):
        busy = [weight[c] for c in node.children.values() if requests[c]]
        if len(busy) != len(set(busy)):
            return True
    return False


def _walk(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


def _node_answer(tree, node_id: int) -> str:
    """A node as the feedback shows it: its number, its edge and its whole key."""
    return f"#{node_id} \"{edge_text(tree.nodes[node_id].key)}\" (whole key \"{whole_key(tree, node_id)}\")"


def _release_differs(result: dict) -> str:
    gap = result.get("disagreement")
    if not gap:
        return ""
    return (f" The release as shipped, before #7, would have reported {gap['buggy']} tokens here, "
            f"some of them from another context.")


def _tokens(n: int) -> str:
    return f"{n} token" if n == 1 else f"{n} tokens"


GENERATORS = {"structure": gen_structure, "match": gen_match, "split": gen_split, "insert": gen_insert,
              "evict": gen_evict, "lock": gen_lock, "buggy": gen_buggy, "policy": gen_policy}
LESSON_TOPICS = {1: ("structure",), 2: ("match", "split"), 3: ("insert",), 4: ("evict",), 5: ("lock",),
                 6: ("insert", "lock"), 7: ("policy",), 8: ("buggy",), 9: ("insert", "match")}

# namespaces and KV events (lesson 13), routing across workers (lesson 14): generate_routing.py
from .generate_routing import GENERATORS_ROUTING, LESSON_TOPICS_ROUTING  # noqa: E402

GENERATORS.update(GENERATORS_ROUTING)
LESSON_TOPICS.update(LESSON_TOPICS_ROUTING)

# lesson 9's scheduler changes (#418, #2442), answered by the simulation: generate_history.py
from .generate_history import GENERATORS_HISTORY, LESSON_TOPICS_HISTORY  # noqa: E402

GENERATORS.update(GENERATORS_HISTORY)
LESSON_TOPICS.update(LESSON_TOPICS_HISTORY)

# an engine's own topics come from its wing's quiz module, named by its registry line
# (EngineSpec.quiz): today's cache (lessons 10-12), the host tier (lessons 15-17)
for _name in engine_names():
    _part = engine_spec(_name).part("quiz")
    if _part is not None:
        GENERATORS.update(_part.GENERATORS)
        LESSON_TOPICS.update(_part.LESSON_TOPICS)


def generate_question(seed: int, difficulty: str = "medium", topic: str | None = None,
                      lesson: int | None = None) -> Question:
    """One question, fully determined by its arguments."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}: use easy, medium or hard")
    if topic is not None:
        topics: tuple[str, ...] = (topic,)
    else:   # no lesson, or one without topics of its own: every generator
        topics = LESSON_TOPICS.get(lesson, tuple(GENERATORS)) if lesson is not None else tuple(GENERATORS)
    rng = random.Random(f"radixviz:{seed}:{difficulty}:{lesson}:{topic}")
    chosen = rng.choice(sorted(topics))
    return GENERATORS[chosen](ScenarioBuilder(rng, difficulty), seed)
