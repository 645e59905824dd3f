"""Quiz questions on SGLang's 9fbe6800a host-leaf bug (lesson 17), answered by the engine.

Random small host pools and random keys: a parent demoted in the same eviction as its
child, sometimes an older host-only node beside them, then a host eviction of a random
size. With ``hicache-fixes off`` the engine follows SGLang's lines, so the answer (how many
host slots no node the root reaches still holds) is whatever those lines do.
"""
from __future__ import annotations

from radixviz.cache import tokens_text

from radixviz.lessons.quiz.builder import ScenarioBuilder
from radixviz.lessons.quiz.questions import Question
from radixviz.lessons.scenario import apply_text, run_scenario

from .ops_pool import host_size, host_state

_PARENT = {"easy": (3, 3), "medium": (2, 5), "hard": (2, 6)}


def gen_host_leaf(build: ScenarioBuilder, seed: int) -> Question:
    """A parent and its child demoted together under write_back; evict-host k leaves how
    many host slots held by a node nobody can reach?"""
    rng = build.rng
    parent = build.word(*_PARENT[build.difficulty])
    child = build.word(2, 4)
    host = rng.randint(129, 160)   # a small host pool: just above the 128-slot device
    build.lines = ["engine hicache", f"host-size {host}", "write-policy write_back", "hicache-fixes off"]
    if build.difficulty != "easy" and rng.random() < 0.6:
        # an older host-only node: host eviction takes it first, so k decides what else goes
        other = build.word(2, 5)
        while other[0] == parent[0]:
            other = build.word(2, 5)
        build.lines += [f'insert "{other}"', f"evict {len(other)}"]
    build.lines += [f'insert "{parent}"', f"evict {len(parent)}",
                    f'insert "{parent + child}"', f"evict {len(parent) + len(child)}"]
    asked = f"evict-host {rng.randint(1, len(parent) + 3)}"
    session = run_scenario(build.text)
    record = apply_text(session, asked)
    frame = session.live_frame()
    stray = sum(1 for slot in range(host_size(frame.pool)) if host_state(frame.pool, slot) == "stray")
    deleted = [tokens_text(f.data["key"]) for f in session.frames.kept(record.frame_range) if f.kind == "delete"]
    gone = ", ".join(repr(d) for d in deleted) or "nothing"
    twice = len(set(session.engine.host_pool.double_freed))
    if stray:
        why = (f"it deleted {gone}. Deleting {parent!r} took its child {child!r} out of the tree, "
               f"and the child still holds its {len(child)} host slot(s)")
    elif twice:
        why = (f"it deleted {gone}. Deleting {parent!r} took {child!r} out of the tree; asked for "
               f"more, it went on to that lost child, freed its slots, and then freed {parent!r}'s "
               f"{twice} slot(s) a second time, where SGLang's assert stops. Nothing out of the tree "
               f"holds a slot any more, but the pool's accounting is broken")
    elif parent in deleted and child in deleted:
        why = (f"it deleted {gone}. Deleting {parent!r} took {child!r} out of the tree, but the "
               f"lost child was still a candidate, and the eviction, asked for more, freed its "
               f"slots too: nothing out of the tree holds a slot")
    else:
        why = f"it deleted {gone}, and {parent!r} was not among them, so its child stays in the tree"
    return Question(f"gen-host-leaf-{build.difficulty}-{seed}", "number",
                    "Scenario (SGLang's 9fbe6800a lines, hicache-fixes off):\n\n    "
                    + "\n    ".join(build.lines)
                    + f"\n\n{asked}: how many host slots are then held by a node the root cannot reach?",
                    (str(stray),), str(stray),
                    f"The last evict demoted {parent!r} while its child's write was still pending, so "
                    f"the old rule (is the child evicted?) filed {parent!r} as a host leaf. Host "
                    f"eviction goes least recently used first: {why}.",
                    scenario=build.script_with_question(asked), **build.tags(seed, "host-leaf", 17))


GENERATORS_HEAD_BUGS = {"host-leaf": gen_host_leaf}
LESSON_TOPICS_HEAD_BUGS = {17: ("host-leaf",)}
