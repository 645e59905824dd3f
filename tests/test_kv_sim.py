"""The scheduler with the tiny model producing tokens: reuse checked on generated text."""
import pytest

from radixviz.cache import TokenToKVPool
from radixviz.sim.request import RequestSpec
from radixviz.sim.runner import MODELS, simulate
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.tiny_model import TinyModel, token_ids
from radixviz.sim.workloads import make_workload


def greedy(ids, steps, seed=0):
    """The tokens a from-scratch run generates: no cache, no pool reuse."""
    model = TinyModel(TokenToKVPool(1, device="cpu"), seed=seed)
    ids, out = list(ids), []
    for _ in range(steps):
        out.append(int(model.from_scratch(ids).logits.argmax()))
        ids.append(out[-1])
    return tuple(out)


def test_tiny_is_a_simulation_model():
    assert "tiny" in MODELS
    model = MODELS["tiny"](TokenToKVPool(8, device="cpu"), 3)
    assert isinstance(model, TinyModel) and model.seed == 3


@pytest.mark.parametrize("workload, requests, pool_size", [
    ("shared-prompt", 3, 700),   # a small pool: later requests hit, and some K/V are evicted
    ("few-shot", 5, 1024),       # several prompts sharing different example sets
])
def test_generated_text_equals_generation_without_a_cache(workload, requests, pool_size):
    result = simulate(workload, requests=requests, pool_size=pool_size, model="tiny", seed=0)
    assert result.stats.hit_tokens > 0 and result.stats.finished == requests
    for rid, spec in enumerate(make_workload(workload, requests, 0)):
        out = result.outputs[rid]
        assert out == greedy(spec.input_ids, len(out)), f"request {rid}"


def chapter_outputs(buggy):
    pool = TokenToKVPool(256, device="cpu")
    sched = Scheduler(256, "fcfs", model=TinyModel(pool), pool=pool, record=False)
    sched.cache.buggy_match = buggy
    for text, steps in (("Hello_L.A.!", 1), ("Hello_L.A.!world", 1), ("Hello_world", 4)):
        sched.submit(RequestSpec(tuple(token_ids(text)), steps))
        sched.run()
    return sched.outputs[2]


def test_the_pre_7_matcher_makes_the_scheduler_generate_other_text():
    expected = greedy(token_ids("Hello_world"), 4)
    assert chapter_outputs(buggy=False) == expected
    assert chapter_outputs(buggy=True) != expected


def test_simulate_command_runs_the_tiny_model(capsys):
    import json

    from radixviz.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--model", "tiny", "--requests", "3", "--pool-size", "700", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert exc.value.code == 0
    assert doc["settings"]["model"] == "tiny" and doc["stats"]["finished"] == 3
