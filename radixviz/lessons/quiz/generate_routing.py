"""Quiz questions on namespaces, KV events (lesson 13) and routing (lesson 14), each answered
by running the 2026 engine or radixviz's router code.

Same contract as generate.py: a question is a pure function of its seed and difficulty.
"""
from __future__ import annotations

from .builder import ScenarioBuilder
from .questions import Question
from radixviz.sim.routers import LAUNCHED_DEFAULTS as LAUNCHED, LIBRARY_DEFAULTS as LIBRARY

from ..route_checks import placements
from ..scenario import apply_text, run_scenario

_SPACES = {"easy": ("a",), "medium": ("a", "b"), "hard": ("a", "b")}
_WORKERS = {"easy": 2, "medium": 2, "hard": 3}


def _space_words(ns: object) -> str:
    return "" if ns is None else f" ns {ns}"


def gen_namespaces(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    spaces = (None,) + _SPACES[build.difficulty]
    lines = ["engine 2026"]
    for _ in range(rng.randint(2, 4)):
        key = build.related_key()
        build.keys.append(key)
        lines.append(f'insert "{key}"{_space_words(rng.choice(spaces))}')
    asked_key = build.related_key()
    asked_ns = rng.choice(spaces)
    build.lines = lines
    asked = f'match "{asked_key}"{_space_words(asked_ns)}'
    session = run_scenario(build.text)
    matched = apply_text(session, asked).result["matched"]
    where = "outside any namespace" if asked_ns is None else f"in namespace {asked_ns}"
    return Question(f"gen-namespaces-{build.difficulty}-{seed}", "number",
                    "Scenario:\n\n    " + "\n    ".join(lines) + f"\n\nHow many tokens does {asked} return?",
                    (str(matched),), str(matched),
                    f"Only the keys inserted {where} can match: a child is filed under "
                    f"(namespace, first token), so the walk never enters another namespace's "
                    f"nodes. Among those keys the longest shared prefix is {matched} token(s).",
                    scenario=build.script_with_question(asked), **build.tags(seed, "namespaces", 13))


def gen_kv_events(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    page = rng.choice((1, 2) if build.difficulty == "easy" else (2, 3))
    lines = ["engine 2026", f"page-size {page}", "events on"]
    for _ in range(rng.randint(1, 3)):
        key = build.related_key()
        build.keys.append(key)
        lines.append(f'insert "{key}"')
    build.lines = lines
    key = build.related_key()
    asked = f'insert "{key}"'
    session = run_scenario(build.text)
    record = apply_text(session, asked)
    stored = sum(1 for e in record.kv_events if e.kind == "stored")
    whole = len(key) - len(key) % page
    return Question(f"gen-kv-events-{build.difficulty}-{seed}", "number",
                    "Scenario:\n\n    " + "\n    ".join(lines)
                    + f"\n\nHow many \"stored\" KV events does {asked} send?",
                    (str(stored),), str(stored),
                    f"One event a page the tree did not hold: the key has {whole // page} whole "
                    f"page(s) of {page}, the tree already held {record.result['prefix_len'] // page} "
                    f"of them, so {stored}. A partial last page is never stored, and a split "
                    f"sends nothing.",
                    scenario=build.script_with_question(asked), **build.tags(seed, "kv-events", 13))


def gen_routing(build: ScenarioBuilder, seed: int) -> Question:
    rng = build.rng
    workers = _WORKERS[build.difficulty]
    router = rng.choice(("cache-aware", "cache-aware", "round-robin"))
    tenants = rng.sample(("cats:", "dogs:", "eels:", "owls:", "bats:"), workers + 1)
    keys = [rng.choice(tenants) + build.word(2, 4) for _ in range(rng.randint(3, 5))]
    chosen = placements(router, workers, keys)
    arrivals = "\n".join(f"    {i + 1}. {key}" for i, key in enumerate(keys))
    choices = tuple(f"worker {w}" for w in range(workers))
    return Question(f"gen-routing-{build.difficulty}-{seed}", "choice",
                    f"{workers} workers behind a {router} router (SGLang's thresholds as it launches "
                    f"the router: more than {_pct(LAUNCHED.cache_threshold)} of the prompt, imbalance beyond "
                    f"{LAUNCHED.balance_abs_threshold} requests and {LAUNCHED.balance_rel_threshold}x; the "
                    f"library's own defaults would be {_pct(LIBRARY.cache_threshold)}, "
                    f"{LIBRARY.balance_abs_threshold} and {LIBRARY.balance_rel_threshold}x). Requests arrive "
                    f"in this order; none finishes meanwhile:\n\n{arrivals}\n\nWhere does request "
                    f"{len(keys)} go?",
                    (str(chosen[-1]),), choices[chosen[-1]],
                    f"The router places them {' '.join(map(str, chosen))}. " + _routing_why(router),
                    choices=choices, scenario=_placed_script(keys, chosen),
                    **build.tags(seed, "routing", 14))


def _placed_script(keys: list, chosen: list) -> str:
    """What "show me" replays: each worker as a namespace, each request where it went."""
    lines = ["engine 2026", "# each worker is a namespace; each request as the router placed it"]
    lines += [f'insert "{key}" ns w{worker}' for key, worker in zip(keys, chosen)]
    return "\n".join(lines) + "\n"


def _routing_why(router: str) -> str:
    if router == "round-robin":
        return "Round-robin takes turns and looks at nothing else."
    return ("Cache-aware: a request goes to the worker it sent the longest matching prompt to, "
            f"when that match is more than {_pct(LAUNCHED.cache_threshold)} of the request's characters; "
            "otherwise to the worker with the fewest requests (the lowest number on a tie).")


def _pct(fraction: float) -> str:
    return f"{fraction:.0%}"


GENERATORS_ROUTING = {"namespaces": gen_namespaces, "kv-events": gen_kv_events, "routing": gen_routing}
LESSON_TOPICS_ROUTING = {13: ("namespaces", "kv-events"), 14: ("routing",)}
