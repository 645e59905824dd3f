"""Quiz questions on the host tier (lessons 15-16), each answered by running the hicache engine.

Same contract as lessons/quiz/generate.py (EngineSpec.quiz): a question is a pure function of
its seed and difficulty, and the engine, run on the scenario, computes the answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD, WRITE_POLICY_NAMES, WRITE_POLICY_SUMMARY

from radixviz.lessons.quiz.builder import ScenarioBuilder
from radixviz.lessons.quiz.questions import Question
from radixviz.lessons.scenario import apply_text, run_scenario

if TYPE_CHECKING:
    from collections.abc import Sequence

_LENGTH = {"easy": (10, 14), "medium": (6, 14), "hard": (4, 12)}


def _words(build: ScenarioBuilder, count: int) -> list:
    """``count`` keys of the difficulty's length, the later ones often sharing a prefix."""
    lo, hi = _LENGTH[build.difficulty]
    words = [build.word(lo, hi)]
    while len(words) < count:
        base = build.rng.choice(words)
        cut = build.rng.randint(1, len(base) - 1) if build.rng.random() < 0.6 else 0
        words.append(base[:cut] + build.word(max(2, lo - cut), max(3, hi - cut)))
    return words


def _scenario_text(lines: Sequence[str]) -> str:
    return "Scenario:\n\n    " + "\n    ".join(lines)


def gen_host_hit(build: ScenarioBuilder, seed: int) -> Question:
    """Some nodes lose their device copy; how much of a key is found on the host only?"""
    words = _words(build, build.rng.randint(2, 3))
    evict = build.rng.randint(3, sum(map(len, words)))
    asked_key = build.rng.choice(words)
    build.lines = ["engine hicache", *(f'insert "{w}"' for w in words), f"evict {evict}"]
    asked = f'match "{asked_key}"'
    session = run_scenario(build.text)
    result = apply_text(session, asked).result
    host, device = result["host_hit_length"], result["matched"]
    return Question(f"gen-host-hit-{build.difficulty}-{seed}", "number",
                    _scenario_text(build.lines) + f"\n\n(write_through, auto-sync on.) {asked}: how many "
                    f"of its tokens are found on the host only (the host hit length)?",
                    (str(host),), str(host),
                    f"Every inserted node was written to the host, so eviction only dropped device "
                    f"copies, least recently used first. The match finds {device} token(s) still on "
                    f"the device and, after them, {host} on the host only.",
                    scenario=build.script_with_question(asked), **build.tags(seed, "host-hit", 15))


def gen_load_back(build: ScenarioBuilder, seed: int) -> Question:
    """A key matched on the host: how many tokens does load-back bring back?"""
    word = build.word(10, 16)
    cut = build.rng.randint(6, len(word))
    build.lines = ["engine hicache", f'insert "{word}"', f"evict {len(word)}"]
    asked = f'load-back "{word[:cut]}"'
    session = run_scenario(build.text)
    loaded = apply_text(session, asked).result["loaded"]
    why = (f"the host-only stretch is {cut} token(s), at least the threshold of {LOAD_BACK_THRESHOLD}: "
           f"all of it is loaded" if loaded else
           f"the host-only stretch is {cut} token(s), below the threshold of {LOAD_BACK_THRESHOLD}: "
           f"recomputing is cheaper, nothing is loaded")
    return Question(f"gen-load-back-{build.difficulty}-{seed}", "number",
                    _scenario_text(build.lines) + f"\n\n{asked}: how many tokens come back to the device?",
                    (str(loaded),), str(loaded),
                    f"The match stops after {cut} token(s) (splitting the node there if it must); "
                    f"{why}.", scenario=build.script_with_question(asked), **build.tags(seed, "load-back", 15))


def gen_write_policy(build: ScenarioBuilder, seed: int) -> Question:
    """Inserts under a write policy: how many host slots are in use afterwards?"""
    policy = build.rng.choice(WRITE_POLICY_NAMES)
    words = _words(build, build.rng.randint(2, 3))
    inserts = [build.rng.choice(words) for _ in range(build.rng.randint(1, 3))]
    build.lines = ["engine hicache", f"write-policy {policy}", *(f'insert "{w}"' for w in words + inserts)]
    session = run_scenario(build.text)
    used = session.engine.host_pool.used_size()
    return Question(f"gen-write-policy-{build.difficulty}-{seed}", "number",
                    _scenario_text(build.lines) + "\n\nHow many host slots are in use now?",
                    (str(used),), str(used),
                    f"{policy}: {WRITE_POLICY_SUMMARY[policy]}. Count, node by node, the hits the "
                    f"inserts gave it (a split node keeps its count).",
                    scenario=build.text + "\n", **build.tags(seed, "write-policy", 16))


def gen_in_flight(build: ScenarioBuilder, seed: int) -> Question:
    """With auto-sync off, an eviction arrives while writes may still be in flight."""
    words = _words(build, 2)
    sync_at = build.rng.choice((None, 1, 2))     # no sync, after the first insert, after both
    build.lines = ["engine hicache", "auto-sync off"]
    for i, word in enumerate(words, start=1):
        build.lines.append(f'insert "{word}"')
        if sync_at == i:
            build.lines.append("sync")
    asked = f"evict {len(words[0]) + len(words[1])}"
    session = run_scenario(build.text)
    evicted = apply_text(session, asked).result["evicted"]
    where = {None: "No sync ran: both writes are still in flight, and every node they lock stays.",
             1: "The sync after the first insert acknowledged its write only; the second write "
                "still locks its node and the path above it.",
             2: "The sync acknowledged both writes: every node can lose its device copy (its "
                "host copy stays)."}[sync_at]
    return Question(f"gen-in-flight-{build.difficulty}-{seed}", "number",
                    _scenario_text(build.lines) + f"\n\n{asked} frees how many device tokens?",
                    (str(evicted),), str(evicted),
                    "With auto-sync off a write stays in flight, its node and the path above it "
                    f"locked, until a sync acknowledges it. {where}",
                    scenario=build.script_with_question(asked), **build.tags(seed, "in-flight", 16))


GENERATORS = {"host-hit": gen_host_hit, "load-back": gen_load_back,
              "write-policy": gen_write_policy, "in-flight": gen_in_flight}
LESSON_TOPICS: dict[int, tuple[str, ...]] = {15: ("host-hit", "load-back"), 16: ("write-policy", "in-flight")}

# lesson 17: SGLang's 9fbe6800a write_back bugs (quiz_head_bugs.py)
from .quiz_head_bugs import GENERATORS_HEAD_BUGS, LESSON_TOPICS_HEAD_BUGS  # noqa: E402

GENERATORS.update(GENERATORS_HEAD_BUGS)
LESSON_TOPICS.update(LESSON_TOPICS_HEAD_BUGS)
