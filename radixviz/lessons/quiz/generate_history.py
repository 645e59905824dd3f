"""Quiz questions on lesson 9's two scheduler changes, each answered by the simulation:

- ``cache-unfinished`` (#418): request A is still decoding when B arrives; how much of B's
  prompt comes from the cache, in the release's loop or with the prompt inserted when A's
  prefill ends? The scheduler loop itself (``radixviz.sim.scheduler``) runs the two requests.
- ``delay-2442`` (#2442): a waiting queue under lpm with the in-batch rule; which request is
  offered a place last? The simulation's own policy code (``radixviz.sim.policies``) orders it.

Same contract as generate.py: a question is a pure function of its seed and difficulty.
"""
from __future__ import annotations

from types import SimpleNamespace

from radixviz.lessons.lesson.block_checks import offered_order
from radixviz.sim.policies import IN_BATCH_THRESHOLD, in_batch_deprioritized
from radixviz.sim.request import RequestSpec

from .builder import ScenarioBuilder
from .questions import Question
from ..scenario import apply_text, run_scenario

_SYSTEM = ("You_are_a_careful_and_friendly_helper:", "Answer_in_one_short_line_please_now:",
           "Summarize_the_report_below_in_detail:")
_DECODE = 20          # A's output: long enough to be running still when B is admitted


def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def b_hit(first: str, second: str, cache_unfinished: bool) -> int:
    """Run the release's loop on A, then B one pass later: the tokens B took from the cache."""
    from radixviz.sim.scheduler import Scheduler   # torch: only when a question is made

    sched = Scheduler(256, "lpm", cache_unfinished=cache_unfinished, record=False)
    sched.submit(RequestSpec(tuple(first), _DECODE))
    sched.step()                                    # A's prefill
    sched.submit(RequestSpec(tuple(second), 4))
    sched.run()
    return sched.stats.hit_tokens                   # A hit nothing: all of it is B's


def gen_cache_unfinished(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    system = rng.choice(_SYSTEM)
    first = system + build.word(3, 6)
    while True:      # B must end on a token of its own (a match never takes a prompt's last token)
        second = (system[:rng.randint(4, len(system))] if rng.random() < 0.3 else system) + build.word(3, 6)
        if _shared(first, second) < len(second) - 1:
            break
    with_418 = rng.random() < 0.5
    hit = b_hit(first, second, with_418)
    loop = ("with #418 (the prompt is inserted when its prefill ends)" if with_418
            else "in the first release's loop (a sequence is inserted only when it finishes)")
    shared = _shared(first, second)
    why = (f"#418 inserted A's prompt as soon as its prefill ran, so B finds the {shared} token(s) "
           f"it shares with it, although A is still decoding" if with_418 else
           f"A is still decoding ({_DECODE} tokens to write) when B is admitted, and nothing of it "
           f"is in the tree until it finishes: B computes its whole prompt, sharing {shared} "
           f"token(s) with A or not")
    lines = [f'# request A: "{first}", its prefill has run, it is decoding']
    if with_418:
        lines.append(f'insert "{first}"')
    asked = f'match "{second}"'
    build.lines = lines
    return Question(f"gen-cache-unfinished-{build.difficulty}-{seed}", "number",
                    f"The scheduler runs {loop}. Request A (\"{first}\", {_DECODE} tokens to "
                    f"generate) is admitted and its prefill runs. One pass later request B "
                    f"(\"{second}\") arrives. How many of B's prompt tokens come from the cache "
                    f"when B is admitted?",
                    (str(hit),), str(hit), f"{why}: {hit}.",
                    scenario=build.script_with_question(asked), **build.tags(seed, "cache-unfinished", 9))


def gen_delay_2442(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    for _ in range(40):     # until the rule changes who goes last (lpm alone would say R4 often)
        system = rng.choice(_SYSTEM)
        cached = system[:rng.choice((0, 8, len(system)))]
        keys: list = []
        while len(keys) < 4:
            key = (system + build.word(2, 5) if rng.random() < 0.6
                   else build.word(4, 8) + system[:rng.randint(0, 10)])
            if key not in keys and key != cached:
                keys.append(key)
        build.lines = [f'insert "{cached}"'] if cached else []
        session = run_scenario(build.text)
        records = [apply_text(session, f'match "{key}"') for key in keys]
        order = offered_order("lpm-2442", records, session)
        plain = offered_order("lpm", records, session)
        if order[-1] != plain[-1]:
            break
    labels = [f"R{i + 1}" for i in range(len(keys))]
    last = keys.index(order[-1])
    hits = [r.result["matched"] for r in records]
    waiting = [SimpleNamespace(rid=i, input_ids=tuple(key), prefix_len=hit)
               for i, (key, hit) in enumerate(zip(keys, hits))]
    moved = [labels[r.rid] for r in in_batch_deprioritized(waiting)]
    queue = "\n".join(f"    {labels[i]}. {key}" for i, key in enumerate(keys))
    held = f"the cache holds \"{cached}\"" if cached else "the cache is empty"
    why = (f"Cache hits: {', '.join(f'{labels[i]} {hits[i]}' for i in range(len(keys)))}. #2442 "
           f"looks only at requests that hit {IN_BATCH_THRESHOLD} tokens or fewer, and sorts to the "
           f"back each one that shares {IN_BATCH_THRESHOLD} or more tokens with one of them earlier in "
           f"the queue: {', '.join(moved) if moved else 'none here'}. lpm orders the others by hit, "
           f"longest first (plain lpm would offer {labels[keys.index(plain[-1])]} last).")
    build.lines += [f'match "{key}"' for key in keys]
    return Question(f"gen-delay-2442-{build.difficulty}-{seed}", "choice",
                    f"Under lpm with #2442's rule (--delay-shared-prefix), {held}. Four requests "
                    f"wait, in this order:\n\n{queue}\n\nWhich one is offered a place last?",
                    (str(last),), labels[last], why, choices=tuple(labels),
                    scenario=build.text + "\n", **build.tags(seed, "delay-2442", 9))


GENERATORS_HISTORY = {"cache-unfinished": gen_cache_unfinished, "delay-2442": gen_delay_2442}
LESSON_TOPICS_HISTORY = {9: ("cache-unfinished", "delay-2442")}
