"""A Mooncake trace keyed by its blocks gives what token by token gives (issue 56, item 3).

Each seeded trace runs twice through the same loop, once keyed by tokens and once by block
units, and every pass must agree: who was admitted, running and finished, the hit, computed
and evicted tokens, the pool's use and the evictable size, then each request's hit and
output. The traces are made to hit what could part the two: part-filled last blocks shared
at several lengths and as full blocks, blocks repeated in a prompt, blocks whose tokens lie
below the vocabulary, and a model that emits exactly the token a longer prompt holds next.
"""
import json
import random

import pytest

from radixviz.cli import main
from radixviz.sim.block_units import BlockPrompt
from radixviz.sim.model_api import VOCAB_SIZE
from radixviz.sim.runner import replay
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.traces import open_trace

BLOCK = 100     # blocks 0 and 1 lie below the vocabulary, block 2 half, the rest above


def lines(n: int, seed: int, outputs: tuple = (1, 1)):
    """Prompts that take a prefix of one of a few documents, ending at lengths that recur, so a
    block is met part-filled at several lengths and whole."""
    rng = random.Random(seed)
    documents = [[rng.choice((0, 1, 2, 3, 5, 8, 13)) for _ in range(2)] + [20 * d + i for i in range(6)]
                 for d in range(4)]
    documents.append([7, 7, 2, 7])       # a block repeated in one prompt
    for _ in range(n):
        ids = rng.choice(documents)[:rng.randint(1, 6)]
        part = rng.choice((BLOCK, BLOCK, 1, 37, 50, 56, BLOCK - 1))
        length = (len(ids) - 1) * BLOCK + part
        yield {"timestamp": 0, "input_length": length, "output_length": rng.randint(*outputs), "hash_ids": ids}


def write(tmp_path, rows) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


class NextToken:
    """A model whose next token is the one after the last (below the vocabulary), which is what
    a longer prompt holds next in blocks 0 to 2: its outputs meet other prompts' tokens."""

    def extend(self, tokens, prefix_slots, new_slots):
        return (tokens[-1] + 1) % VOCAB_SIZE

    def decode(self, tokens, slots, new_slot):
        return (tokens[-1] + 1) % VOCAB_SIZE


def passes(path: str, units: bool, pool: int, policy: str, model=None, **options):
    """Every pass's record, each request's hit and its output, keyed by units or tokens (the
    invariants checked every few passes: a check reads the whole pool)."""
    check_every = 7 if pool < 5_000 else 60
    trace = open_trace(path, "mooncake", block_size=BLOCK)
    feed = trace.arrivals(trace.block_units()) if units else trace.arrivals()
    sched = Scheduler(pool, policy, seed=1, record=False, context_len=pool, block_units=units, **options)
    if model is not None:
        sched.model = model
    admit, hits = sched.admit, []

    def watched(ordered, last=()):
        admitted, decisions = admit(ordered, last)
        hits.extend((r.rid, r.prefix_len) for r in admitted)
        return admitted, decisions
    sched.admit = watched
    specs, records = [spec for _, spec in feed], []
    while specs or not sched.done:
        sched.submit(specs[:2])     # two arrive before each pass: queues, batches and hits
        del specs[:2]
        if (record := sched.step()) is None:
            continue
        records.append((record.kind, record.admitted, record.running, record.finished, record.waiting,
                        record.hit_tokens, record.computed_tokens, record.evicted_tokens,
                        record.pool_used, record.evictable, tuple(e.kind for e in record.events)))
        if len(records) % check_every == 0:
            sched.check_invariants()
    sched.check_invariants()
    return records, hits, sched.outputs, sched.block_units


CASES = [  # pool, policy, max_running, outputs, alloc_evict
    (12_000, "fcfs", 1, (1, 1), "need"),           # unbounded: nothing is evicted
    (40_000, "lpm", None, (1, 6), "need"),
    (1_500, "fcfs", 1, (1, 1), "need"),            # bounded: evictions every few requests
    (1_500, "fcfs", 1, (1, 1), "shortfall"),
    (1_200, "lpm", None, (1, 9), "need"),          # outputs enter the tree; decode retracts
    (1_200, "weight", 4, (2, 5), "shortfall"),
    (900, "random", 3, (1, 4), "need"),
]


@pytest.mark.parametrize("pool, policy, running, outputs, evict", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_blocks_and_tokens_give_the_same_passes(tmp_path, seed, pool, policy, running, outputs, evict):
    path = write(tmp_path, lines(120, seed, outputs))
    options = {"max_running": running, "alloc_evict": evict}
    tokens = passes(path, False, pool, policy, **options)
    blocks = passes(path, True, pool, policy, **options)
    assert blocks[3] and not tokens[3]
    assert blocks[1] == tokens[1]       # each request's hit, in admission order
    assert blocks[0] == tokens[0]
    assert blocks[2] == tokens[2]
    assert sum(hit for _, hit in tokens[1]) > 0
    assert (pool > 10_000) == (sum(record[7] for record in tokens[0]) == 0)   # unbounded: no eviction


@pytest.mark.parametrize("pool", [40_000, 1_300])
def test_outputs_that_meet_prompt_tokens_are_compared_as_tokens(tmp_path, pool):
    path = write(tmp_path, lines(150, 5, (2, 6)))
    tokens = passes(path, False, pool, "lpm", model=NextToken())
    blocks = passes(path, True, pool, "lpm", model=NextToken())
    assert (blocks[0], blocks[1], blocks[2]) == (tokens[0], tokens[1], tokens[2])


def test_a_prompt_reads_as_its_tokens(tmp_path):
    path = write(tmp_path, lines(40, 2, (1, 3)))
    trace = open_trace(path, "mooncake", block_size=BLOCK)
    units = trace.block_units()
    for (_, spec), (_, blocked) in zip(trace.arrivals(), trace.arrivals(units)):
        plain, prompt = spec.input_ids, blocked.input_ids
        assert isinstance(prompt, BlockPrompt) and len(prompt.units) <= len(plain)
        assert tuple(prompt) == plain and prompt == plain and len(prompt) == len(plain)
        assert prompt[-1] == plain[-1] and prompt[len(plain) // 2] == plain[len(plain) // 2]
        assert tuple(prompt + (3, 4)) == plain + (3, 4) and prompt[:len(plain)] is prompt
        assert prompt[1:5] == plain[1:5]


def test_the_command_keys_by_blocks_unless_told_and_gives_the_same_report(tmp_path, capsys):
    path = write(tmp_path, lines(80, 3, (1, 4)))

    def run(*flags):
        with pytest.raises(SystemExit) as info:
            main(["simulate", "--trace", path, "--block-size", str(BLOCK), "--pool-size", "1500",
                  "--no-optimum", "--json", *flags])
        out = capsys.readouterr().out
        assert info.value.code == 0, out
        return json.loads(out)
    default, tokens = run(), run("--no-block-units")
    assert default["settings"]["trace"]["keyed_by"] == "blocks"
    assert tokens["settings"]["trace"]["keyed_by"] == "tokens"
    assert default["stats"] == tokens["stats"] and default["stats"]["hit_tokens"] > 0


@pytest.mark.parametrize("flags, said", [(("--engine", "2026"), "engine 2026 cannot be keyed by blocks"),
                                          (("--scheduler", "v0.5.23"), "one token short"),
                                          (("--insert", "release"), "one slot short")])
def test_the_command_refuses_blocks_it_cannot_key_by_in_one_line(tmp_path, cli, flags, said):
    path = write(tmp_path, lines(5, 0))
    code, out, err = cli("simulate", "--trace", path, "--block-size", str(BLOCK), "--block-units", *flags)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and said in err


def test_asking_for_blocks_where_the_loop_cannot_is_a_clear_error(tmp_path):
    path = write(tmp_path, lines(5, 0))
    trace = open_trace(path, "mooncake", block_size=BLOCK)
    with pytest.raises(ValueError, match="records"):
        replay(trace, "fcfs", 2000, record=True, block_units=True)
    with pytest.raises(ValueError, match="engine 2026"):
        replay(trace, "fcfs", 2000, engine="2026", block_units=True)
    with pytest.raises(ValueError, match="v0.5.23"):
        replay(trace, "fcfs", 2000, scheduler="v0.5.23", block_units=True)
    for where in ({"engine": "2026"}, {"scheduler": "v0.5.23"}):   # unasked: token by token
        assert replay(trace, "fcfs", 2000, **where).settings["trace"]["keyed_by"] == "tokens"
