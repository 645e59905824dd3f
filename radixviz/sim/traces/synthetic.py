"""Seeded traces in the public formats, shaped like the published Mooncake trace: a few
long system prompts shared by most requests, and multi-turn sessions whose every turn
resends the history plus a new question. The shipped examples (examples/) and bench/'s
million-request trace come from here; nothing is downloaded.

    python -m radixviz.sim.traces.synthetic mooncake 200 --seed 0 --block-size 16 > examples/mooncake.jsonl
    python -m radixviz.sim.traces.synthetic openai 60 --seed 0 > examples/openai.jsonl
    python -m radixviz.sim.traces.synthetic radixviz 60 --seed 0 > examples/sessions.jsonl

Each generator is lazy with bounded state (``live`` sessions at a time), so a million
lines stream out in constant memory.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import argparse
import json
import random
import sys

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

WORDS = ("cache prefix token page tree node batch queue evict match split insert pool "
         "request answer question shared system prompt user turn model decode prefill").split()


def sessions(n: int, seed: int, live: int = 16, systems: int = 4, max_turns: int = 6):
    """``(time_ms, session, turn, system)`` for ``n`` requests: a session sends its next turn a
    few seconds after the previous one; a finished session is replaced by a new one."""
    rng = random.Random(seed)
    clock = 0.0
    active = [[rng.randrange(systems), 0, rng.randrange(1, max_turns + 1), s] for s in range(live)]
    next_id = live
    for _ in range(n):
        clock += rng.expovariate(1 / 40)   # 25 requests a second on average
        slot = rng.randrange(live)
        system, turn, turns, sid = active[slot]
        yield round(clock, 1), sid, turn, system
        if turn + 1 >= turns:
            active[slot] = [rng.randrange(systems), 0, rng.randrange(1, max_turns + 1), next_id]
            next_id += 1
        else:
            active[slot][1] = turn + 1


def mooncake(n: int, seed: int = 0, block_size: int = 512, system_blocks=(2, 6), turn_blocks=(1, 3)):
    """Mooncake-style lines: the system prompt's blocks (ids below 1,000), then each turn's."""
    rng = random.Random(seed + 1)
    systems = [list(range(s * 100, s * 100 + rng.randint(*system_blocks))) for s in range(4)]
    history: dict = {}
    fresh = 1_000
    for time, sid, _turn, system in sessions(n, seed):
        ids = history.pop(sid, None) or list(systems[system])
        new = rng.randint(*turn_blocks)
        ids = ids + list(range(fresh, fresh + new))
        fresh += new
        partial = rng.randrange(block_size)        # the last block is rarely full
        length = len(ids) * block_size - partial
        output = rng.randint(4, 48)
        yield {"timestamp": int(time), "input_length": length, "output_length": output, "hash_ids": ids}
        # the next turn: this prompt and its answer as whole blocks, a new id for the part-filled one
        history[sid] = ids[:-1] + [fresh]
        fresh += 1


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def openai(n: int, seed: int = 0):
    """OpenAI-style chat bodies with a timestamp in seconds."""
    rng = random.Random(seed + 2)
    systems = [f"You are assistant {s}. " + " ".join(_sentence(rng, 10) for _ in range(3)) for s in range(4)]
    history: dict = {}
    for time, sid, _turn, system in sessions(n, seed):
        messages = history.pop(sid, None) or [{"role": "system", "content": systems[system]}]
        messages = messages + [{"role": "user", "content": _sentence(rng, rng.randint(4, 12))}]
        yield {"messages": messages, "max_tokens": rng.randint(4, 32), "timestamp": round(time / 1000, 3)}
        history[sid] = messages + [{"role": "assistant", "content": _sentence(rng, rng.randint(4, 12))}]


def radixviz(n: int, seed: int = 0):
    """Our own format: each session's turns as separate lines (the trace chains them)."""
    rng = random.Random(seed + 3)
    systems = [f"System {s}: " + " ".join(_sentence(rng, 8) for _ in range(3)) for s in range(4)]
    history: dict = {}
    for time, sid, _turn, system in sessions(n, seed):
        text = history.pop(sid, systems[system]) + " Q: " + _sentence(rng, rng.randint(4, 10))
        yield {"prompt": text, "output_len": rng.randint(4, 24), "arrival": time, "session": sid}
        history[sid] = text + " A: " + _sentence(rng, rng.randint(4, 10))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write a seeded synthetic trace to stdout")
    parser.add_argument("format", choices=("mooncake", "openai", "radixviz"))
    parser.add_argument("requests", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block-size", type=int, default=512)
    args = parser.parse_args(argv)
    if args.format == "mooncake":
        lines = mooncake(args.requests, args.seed, args.block_size)
    else:
        lines = {"openai": openai, "radixviz": radixviz}[args.format](args.requests, args.seed)
    out = sys.stdout
    for obj in lines:
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
