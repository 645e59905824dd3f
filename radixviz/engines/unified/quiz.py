"""Quiz questions on SGLang v0.5.23's unified tree (lessons 18-19), each answered by running the
unified engine on its scenario.

Same contract as lessons/quiz/generate.py, which reads GENERATORS and LESSON_TOPICS here
(EngineSpec.quiz): a question is a pure function of its seed and difficulty; the engine, run on
the scenario, computes the answer, and "show me" replays the same scenario to it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.lessons.quiz.builder import ScenarioBuilder
from radixviz.lessons.quiz.questions import Question
from radixviz.lessons.scenario import apply_text, run_scenario, tree_text

if TYPE_CHECKING:
    from radixviz.cache.snapshot import TreeSnapshot

# the sliding window, and the Mamba state spacing, at each level: small, so that a key of a
# dozen tokens already crosses several windows or grid points
_WINDOW = {"easy": (2, 3), "medium": (3, 4), "hard": (3, 5)}
_SPACING = {"easy": (2, 3), "medium": (2, 4), "hard": (3, 5)}
_NO_BRANCH = "none"


def _swa_lines(window: int) -> list[str]:
    return ["engine unified", f"window {window}", "components full,swa"]


def _mamba_lines(spacing: int) -> list[str]:
    return ["engine unified", "components full,mamba", f"mamba-chunk {spacing}"]


def _shared_key(build: ScenarioBuilder, base: str, lo: int, hi: int) -> str:
    """A key that shares a prefix of ``base`` (at least one token) and then goes its own way."""
    cut = build.rng.randint(1, len(base) - 1)
    tail = build.word(lo, hi)
    while tail[0] == base[cut]:     # part ways right at the cut, so the shared part is exact
        tail = build.word(lo, hi)
    return base[:cut] + tail


def _protected(tree: TreeSnapshot, name: str) -> int:
    """The protected size of component ``name`` as the tree declares it."""
    (held,) = [h for h in tree.held if h.component.name == name]
    return held.protected


def gen_swa_reuse(build: ScenarioBuilder, seed: int) -> Question:
    """After some sliding-window KV was evicted, how much of a key can a match reuse?"""
    rng = build.rng
    window = rng.randint(*_WINDOW[build.difficulty])
    first = build.word(3 * window, 4 * window)
    build.lines = [*_swa_lines(window), f'insert "{first}"']
    keys = [first]
    if build.difficulty != "easy":
        keys.append(_shared_key(build, first, window, 2 * window))
        build.lines.append(f'insert "{keys[-1]}"')
    build.lines.append(f"evict {rng.randint(1, 2 * window)} swa")
    base = rng.choice(keys)
    query = rng.choice((base, base[:rng.randint(window, len(base))], _shared_key(build, base, 1, window)))
    asked = f'match "{query}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    reused = apply_text(session, asked).result["matched"]
    return Question(f"gen-swa-reuse-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree, parts=True)
                    + f"\n\nThe window is {window} tokens. How many tokens does "
                    f"{asked} reuse?", (str(reused),), str(reused),
                    f"A match may end on a node only when the nodes walked since the last "
                    f"sliding-window tombstone hold at least a window ({window} tokens) of sliding-window "
                    f"KV; full KV alone is not enough. The evict made tombstones of the least recently used "
                    f"nodes with children (a leaf goes whole), each giving up its whole part. Here the "
                    f"deepest node that every component accepts ends after {reused} token(s).",
                    scenario=build.script_with_question(asked),
                    tree_text=tree_text(tree, parts=True) if build.shows_tree else "",
                    **build.tags(seed, "swa-reuse", 18))


def gen_swa_lock(build: ScenarioBuilder, seed: int) -> Question:
    """A lock holds one window of sliding-window KV: how many such tokens does it protect?"""
    rng = build.rng
    window = rng.randint(*_WINDOW[build.difficulty])
    first = build.word(2 * window, 4 * window)
    build.lines = [*_swa_lines(window), f'insert "{first}"']
    if build.difficulty != "easy":
        build.lines.append(f'insert "{_shared_key(build, first, window, 2 * window)}"')
    key = first if build.difficulty == "easy" else first[:rng.randint(window, len(first))]
    asked = f'lock "{key}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    apply_text(session, asked)
    protected = _protected(session.cache.snapshot(), "swa")
    return Question(f"gen-swa-lock-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree, parts=True)
                    + f"\n\nThe window is {window} tokens. {asked} matches the key and "
                    f"locks the node it ends on. How many tokens of sliding-window KV does the tree then "
                    f"protect?", (str(protected),), str(protected),
                    f"The full-KV lock protects every node up to the root; the sliding-window lock walks up "
                    f"from the node only until the edges it counted cover a window ({window} tokens), whole "
                    f"nodes at a time, and stops. An insert cuts a new leaf longer than a window so its last "
                    f"part is one window, which keeps such a lock small. Here the nodes it took hold "
                    f"{protected} token(s).",
                    scenario=build.script_with_question(asked),
                    tree_text=tree_text(tree, parts=True) if build.shows_tree else "",
                    **build.tags(seed, "swa-lock", 18))


def gen_mamba_reuse(build: ScenarioBuilder, seed: int) -> Question:
    """States sit only where requests ended (or were checkpointed): how much does a match reuse?"""
    rng = build.rng
    spacing = rng.randint(*_SPACING[build.difficulty])
    first = build.word(6, 10)
    build.lines = [*_mamba_lines(spacing), f'insert "{first}"']
    keys = [first]
    for _ in range({"easy": 1, "medium": 2, "hard": 3}[build.difficulty]):
        keys.append(_shared_key(build, rng.choice(keys), 2, 5))
        build.lines.append(f'insert "{keys[-1]}"')
    if build.difficulty != "easy" and rng.random() < 0.6:
        base = rng.choice(keys)      # a checkpoint: a request's prompt kept up to a point
        build.lines.append(f'insert "{base[:rng.randint(2, len(base) - 1)]}"')
    query = _shared_key(build, rng.choice(keys), 1, 3) if rng.random() < 0.8 else rng.choice(keys)
    asked = f'match "{query}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    reused = apply_text(session, asked).result["matched"]
    return Question(f"gen-mamba-reuse-{build.difficulty}-{seed}", "number",
                    build.setup_prompt(tree, parts=True)
                    + f"\n\nEach insert hands the tree a Mamba state for the end of its "
                    f"key. How many tokens does {asked} reuse?", (str(reused),), str(reused),
                    "A match may end only on a node that holds a state: the recurrent layers cannot start "
                    "anywhere else. A state belongs to the end of its node's edge, so a split leaves the "
                    f"upper part without one. The deepest node on the walk with a state ends after "
                    f"{reused} token(s).", scenario=build.script_with_question(asked),
                    tree_text=tree_text(tree, parts=True) if build.shows_tree else "",
                    **build.tags(seed, "mamba-reuse", 19))


def gen_mamba_branch(build: ScenarioBuilder, seed: int) -> Question:
    """Where is the branching point a match reports (the grid point a request should keep)?"""
    rng = build.rng
    spacing = rng.randint(*_SPACING[build.difficulty])
    first = build.word(2 * spacing, 5 * spacing)
    build.lines = [*_mamba_lines(spacing), f'insert "{first}"']
    if build.difficulty == "hard":
        build.lines.append(f'insert "{first[:rng.randint(1, len(first) - 1)]}"')
    query = _shared_key(build, first, 1, 3)
    asked = f'match "{query}"'
    session = run_scenario(build.text)
    tree = session.cache.snapshot()
    result = apply_text(session, asked).result
    branch = result.get("mamba_branch")     # None (or absent): no grid point past the reused prefix
    answer = _NO_BRANCH if branch is None else str(branch)
    return Question(f"gen-mamba-branch-{build.difficulty}-{seed}", "text",
                    build.setup_prompt(tree, parts=True)
                    + f"\n\nThe state spacing is {spacing}. Where is the branching "
                    f"point of {asked}? (a position, or {_NO_BRANCH})", (answer,), answer,
                    f"The branching point is the last multiple of {spacing} inside the full-KV hit "
                    f"({result['full_hit']} tokens here) that lies past what the match reuses "
                    f"({result['matched']}); with none past it, there is none. A request keeps its state "
                    f"there so that the next one can reuse up to it.",
                    scenario=build.script_with_question(asked),
                    tree_text=tree_text(tree, parts=True) if build.shows_tree else "",
                    **build.tags(seed, "mamba-branch", 19))


GENERATORS = {"swa-reuse": gen_swa_reuse, "swa-lock": gen_swa_lock,
              "mamba-reuse": gen_mamba_reuse, "mamba-branch": gen_mamba_branch}
LESSON_TOPICS: dict[int, tuple[str, ...]] = {18: ("swa-reuse", "swa-lock"), 19: ("mamba-reuse", "mamba-branch")}
