"""Generated questions: a random scenario on a real Session, the engine computes the answer.

``generate_question(seed, difficulty, topic=None, lesson=None)`` is a pure function of its
arguments: the same seed gives the same scenario, prompt and answer on every machine.
"""
from __future__ import annotations

import random

from .questions import Question, slots_key
from .scenario import apply_text, edge_text, first_evicted_leaf, node_choices, run_scenario, tree_text

DIFFICULTIES = ("easy", "medium", "hard")
_LEVEL = {  # alphabet, (inserts lo, hi), (key length lo, hi), locks
    "easy": ("abc", (2, 3), (2, 5), 0),
    "medium": ("abcd", (3, 5), (3, 7), 1),
    "hard": ("abcde", (4, 7), (3, 9), 2),
}


class _Build:
    """A scenario being written: operation lines plus the keys inserted so far."""

    def __init__(self, rng: random.Random, difficulty: str):
        self.rng, self.difficulty = rng, difficulty
        self.alphabet, self.n_inserts, self.length, self.max_locks = _LEVEL[difficulty]
        self.lines: list[str] = []
        self.keys: list[str] = []

    def word(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choice(self.alphabet) for _ in range(self.rng.randint(lo, hi)))

    def related_key(self) -> str:
        """A new key that often shares a prefix with an inserted one (so edges fork)."""
        lo, hi = self.length
        if self.keys and self.rng.random() < 0.75:
            base = self.rng.choice(self.keys)
            cut = self.rng.randint(1, len(base))
            return base[:cut] + self.word(1, max(1, hi - cut))
        return self.word(lo, hi)

    def inserts(self) -> None:
        for _ in range(self.rng.randint(*self.n_inserts)):
            key = self.related_key()
            self.keys.append(key)
            self.lines.append(f'insert "{key}"')

    def some_locks(self) -> None:
        for _ in range(self.rng.randint(0, self.max_locks)):
            self.lines.append(f'lock "{self.rng.choice(self.keys)}"')

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _scenario(build: _Build, asked: str) -> str:
    return build.text + f"\n# the question:\n{asked}\n"


def _shows_tree(difficulty: str) -> bool:
    return difficulty != "hard"


def _common(build, seed, topic, lesson, **kw):
    return dict(difficulty=build.difficulty, seed=seed, topic=topic, lesson=lesson, **kw)


def gen_structure(build: _Build, seed: int) -> Question:
    build.inserts()
    session = run_scenario(build.text)
    count = len(session.cache.snapshot().nodes) - 1
    tokens = sum(len(k) for k in build.keys)
    trie = len({key[:end] for key in build.keys for end in range(1, len(key) + 1)})
    return Question(f"gen-structure-{build.difficulty}-{seed}", "number",
                    f"Starting from an empty cache:\n\n{_indent(build.text)}\n\n"
                    "How many nodes does the tree have now, not counting the root?",
                    (str(count),), str(count),
                    f"Each edge holds a whole stretch of tokens, so {tokens} inserted tokens "
                    f"need only {count} nodes; a trie with one token per node would need {trie}.",
                    scenario=build.text + "\n", tree_text=tree_text(session.cache.snapshot()),
                    **_common(build, seed, "structure", 1))


def gen_match(build: _Build, seed: int) -> Question:
    build.inserts()
    if build.difficulty == "hard":
        build.some_locks()
    query = build.related_key()
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    result = apply_text(session, f'match "{query}"').result
    asked = f'match "{query}"'
    if build.difficulty == "medium":
        return Question(f"gen-match-slots-{seed}", "slots",
                        _setup_prompt(build, tree) + f"\n\nWhich slots does match_prefix(\"{query}\") return?",
                        (slots_key(result["slots"]),), " ".join(map(str, result["slots"])) or "none",
                        f"It hits {result['matched']} tokens ({result['matched_text']!r}): the slots of the "
                        "edges it walks, cut where the query stops.",
                        scenario=_scenario(build, asked), tree_text=tree_text(tree),
                        **_common(build, seed, "match", 2))
    accepted = {str(result["matched"])}
    return Question(f"gen-match-{build.difficulty}-{seed}", "number",
                    _setup_prompt(build, tree) + f"\n\nHow many tokens does match_prefix(\"{query}\") return?",
                    tuple(sorted(accepted)), f"{result['matched']} ({result['matched_text'] or 'nothing'!r})",
                    "The walk follows the child whose edge starts with the next token and stops at the "
                    "first token that differs (or when the query ends).",
                    scenario=_scenario(build, asked), tree_text=tree_text(tree) if _shows_tree(build.difficulty) else "",
                    **_common(build, seed, "match", 2))


def gen_split(build: _Build, seed: int) -> Question:
    for attempt in range(50):
        build.lines, build.keys = [], []
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
        before = session.cache.snapshot()
        frames = len(session.frames)
        apply_text(session, f'match "{query}"')
        split = next((f for f in session.frames[frames:] if f.kind == "split"), None)
        if split is not None:
            break
    upper_id, lower_id = split.nodes
    upper = split.tree.nodes[upper_id]
    cut_node = before.nodes[lower_id]       # the node that was cut keeps its id as the lower half
    asked = f'match "{query}"'
    explanation = (f"The match stops inside edge \"{edge_text(cut_node.key)}\" after "
                   f"{_tokens(len(upper.key))}: a new node #{upper_id} takes \"{edge_text(upper.key)}\" and the old node "
                   "keeps the rest as its child.")
    if build.difficulty == "easy":
        return Question(f"gen-split-easy-{seed}", "node",
                        _setup_prompt(build, before) + f"\n\nmatch_prefix(\"{query}\") splits one edge. Which node is cut?",
                        (str(lower_id),), f"#{lower_id} \"{edge_text(cut_node.key)}\"", explanation,
                        scenario=_scenario(build, asked), nodes=node_choices(before), tree_text=tree_text(before),
                        **_common(build, seed, "split", 2))
    return Question(f"gen-split-{build.difficulty}-{seed}", "text",
                    _setup_prompt(build, before) + f"\n\nmatch_prefix(\"{query}\") splits an edge. "
                    "Which tokens does the new upper node hold? (the tokens, or how many)",
                    (edge_text(upper.key), str(len(upper.key))), f"\"{edge_text(upper.key)}\" ({_tokens(len(upper.key))})",
                    explanation, scenario=_scenario(build, asked), tree_text=tree_text(before),
                    **_common(build, seed, "split", 2))


def gen_insert(build: _Build, seed: int) -> Question:
    build.inserts()
    key = build.related_key() if build.rng.random() < 0.8 else build.rng.choice(build.keys)
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    result = apply_text(session, f'insert "{key}"').result
    held = result["prefix_len"]
    return Question(f"gen-insert-{build.difficulty}-{seed}", "number",
                    _setup_prompt(build, tree) + f"\n\nWhat does insert(\"{key}\") return?",
                    (str(held),), str(held),
                    f"insert returns how many leading tokens the tree already held: \"{key[:held]}\". "
                    f"The caller frees its own {held} slot(s) for them; the tree keeps its copy.",
                    scenario=_scenario(build, f'insert "{key}"'),
                    tree_text=tree_text(tree) if _shows_tree(build.difficulty) else "",
                    **_common(build, seed, "insert", 3))


def gen_evict(build: _Build, seed: int) -> Question:
    for attempt in range(50):
        build.lines, build.keys = [], []
        build.inserts()
        if build.difficulty != "easy":
            build.lines.append(f'match "{build.rng.choice(build.keys)}"')   # touches one path
        if attempt < 49:     # the last try has no locks, so some leaf can go
            build.some_locks()
        session = run_scenario(build.text)
        tree = session.cache.snapshot()
        count = build.rng.randint(1, 3)
        leaf, record = first_evicted_leaf(session, count)
        if leaf is not None:
            break
    asked = f"evict {count}"
    victim = tree.nodes[leaf]
    return Question(f"gen-evict-{build.difficulty}-{seed}", "node",
                    _setup_prompt(build, tree, show_time=build.difficulty == "easy")
                    + f"\n\nevict({count}) is called. Which leaf is removed first?",
                    (str(leaf),), f"#{leaf} \"{edge_text(victim.key)}\"",
                    "Only leaves are candidates, oldest last access first; a leaf with a reference "
                    "count above 0 is skipped.",
                    scenario=_scenario(build, asked), nodes=node_choices(tree), tree_text=tree_text(tree, show_time=build.difficulty == "easy"),
                    **_common(build, seed, "evict", 4))


def gen_lock(build: _Build, seed: int) -> Question:
    build.inserts()
    build.some_locks()
    key = build.rng.choice(build.keys)
    key = key[:build.rng.randint(1, len(key))]
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    before = session.cache.evictable_size()
    record = apply_text(session, f'lock "{key}"')
    after = session.cache.evictable_size()
    return Question(f"gen-lock-{build.difficulty}-{seed}", "number",
                    _setup_prompt(build, tree) + f"\n\nevictable_size() is {before} now. "
                    f"What is it after lock \"{key}\" (match_prefix, then inc_ref_counter on the node it returns)?",
                    (str(after),), str(after),
                    f"Locking walks from the matched node up to the root; each node whose count goes from "
                    f"0 to 1 stops being evictable (delta {record.result['delta']}).",
                    scenario=_scenario(build, f'lock "{key}"'), tree_text=tree_text(tree),
                    **_common(build, seed, "lock", 5))


def gen_buggy(build: _Build, seed: int) -> Question:
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
    session = run_scenario("\n".join(build.lines))
    tree = session.cache.snapshot()
    result = apply_text(session, f'match "{query}"').result
    gap = result["disagreement"]
    extra = (f" The fixed matcher would return {gap['fixed']}; slots {gap['wrong_slots']} belong to "
             "another context." if gap else " Here both matchers agree.")
    return Question(f"gen-buggy-{build.difficulty}-{seed}", "number",
                    _setup_prompt(build, tree) + f"\n\nWith the pre-#7 matcher, how many tokens does "
                    f"match_prefix(\"{query}\") report as a hit?",
                    (str(result["matched"]),), str(result["matched"]),
                    "Before #7 a match that forked inside an edge kept walking into the child, so the "
                    "rest of the query could 'hit' tokens cached after a different prefix." + extra,
                    scenario=_scenario(build, f'match "{query}"'), tree_text=tree_text(tree),
                    **_common(build, seed, "buggy", 8))


def gen_policy(build: _Build, seed: int) -> Question:
    from types import SimpleNamespace

    from radixviz.sim.policies import order_queue

    policy = "weight" if build.difficulty == "hard" else "lpm"
    build.inserts()
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    count = 3 if build.difficulty == "easy" else 4
    waiting = []
    for _ in range(count):
        key = build.related_key()
        while key in [w for w, _ in waiting]:
            key = build.related_key()
        record = apply_text(session, f'match "{key}"')
        waiting.append((key, record.result["matched"]))
    nodes = {n.id: n for n in _live_nodes(session.cache.root_node)}
    queue = []
    for index, (key, matched) in enumerate(waiting):
        # the scheduler matches each request in turn; replaying the match gives its live last_node
        _, last = session.cache.match_prefix(key)
        queue.append(SimpleNamespace(rid=index, prefix_len=matched, last_node=nodes.get(last.id, last)))
    order = order_queue(policy, queue, session.cache, random.Random(0))
    letters = "".join("abcdefgh"[r.rid] for r in order)
    items = tuple(f'"{key}" ({matched} cached)' if build.difficulty == "easy" else f'"{key}"'
                  for key, matched in waiting)
    rule = ("most cached tokens first; ties keep arrival order" if policy == "lpm" else
            "group by the node each match ended at, then depth first, heaviest subtree first, "
            "a node's own requests after those below it")
    return Question(f"gen-policy-{build.difficulty}-{seed}", "order",
                    _setup_prompt(build, tree, show_tree=True) + f"\n\nThese requests wait, in arrival order (a first). "
                    f"In which order does the {policy} policy offer them a place?",
                    (letters,), " ".join(letters),
                    f"{policy}: {rule}.", scenario=build.text + "\n# the question:\n"
                    + "\n".join(f'match "{k}"' for k, _ in waiting) + "\n",
                    choices=items, tree_text=tree_text(tree), **_common(build, seed, "policy", 7))


def _live_nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


def _setup_prompt(build: _Build, tree, show_time: bool = False, show_tree: bool = False) -> str:
    text = f"Scenario:\n\n{_indent(build.text)}"
    if _shows_tree(build.difficulty) or show_time or show_tree:
        text += "\n\nThe tree now:\n\n" + _indent(tree_text(tree, show_time=show_time))
    return text


def _tokens(n: int) -> str:
    return f"{n} token" if n == 1 else f"{n} tokens"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


GENERATORS = {"structure": gen_structure, "match": gen_match, "split": gen_split, "insert": gen_insert,
              "evict": gen_evict, "lock": gen_lock, "buggy": gen_buggy, "policy": gen_policy}
LESSON_TOPICS = {1: ("structure",), 2: ("match", "split"), 3: ("insert",), 4: ("evict",), 5: ("lock",),
                 6: ("insert", "lock"), 7: ("policy",), 8: ("buggy",), 9: ("insert", "match")}


def generate_question(seed: int, difficulty: str = "medium", topic: str | None = None,
                      lesson: int | None = None) -> Question:
    """One question, fully determined by its arguments."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}: use easy, medium or hard")
    topics = LESSON_TOPICS.get(lesson, tuple(GENERATORS)) if topic is None else (topic,)
    rng = random.Random(f"radixviz:{seed}:{difficulty}:{lesson}:{topic}")
    chosen = rng.choice(sorted(topics))
    return GENERATORS[chosen](_Build(rng, difficulty), seed)
