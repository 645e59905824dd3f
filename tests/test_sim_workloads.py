"""Named, seeded workloads: the same traffic every time, with the sharing their names promise."""
import pytest

from radixviz.cache import match
from radixviz.sim.workloads import WORKLOADS, make_workload, request_count


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_seeded_sized_and_in_vocabulary(name):
    specs = make_workload(name, 20, seed=4)
    assert specs == make_workload(name, 20, seed=4)
    assert specs != make_workload(name, 20, seed=5)
    assert request_count(specs) == 20
    for spec in specs:
        assert spec.max_new_tokens > 0
        assert all(isinstance(t, int) and 0 <= t < 256 for t in spec.input_ids)


def test_shared_prompt_shares_a_long_system_prompt():
    specs = make_workload("shared-prompt", 10)
    assert all(match(specs[0].input_ids, s.input_ids) >= 256 for s in specs[1:])


def test_few_shot_draws_from_a_few_example_sets():
    specs = make_workload("few-shot", 60)
    heads = {s.input_ids[:160] for s in specs}
    assert 2 <= len(heads) <= 6


def test_multi_turn_chats_come_back_with_later_turns():
    specs = make_workload("multi-turn", 10)
    assert [len(s.follow_ups) for s in specs] == [3, 3, 1]
    assert all(all(0 <= t < 256 for t in text) for s in specs for text, _ in s.follow_ups)


def test_tree_of_thought_shares_the_stem_and_branches_below_it():
    specs = make_workload("tree-of-thought", 30)
    assert all(s.input_ids[:128] == specs[0].input_ids[:128] for s in specs)
    assert len({s.input_ids[128:144] for s in specs}) <= 3   # three first thoughts


def test_no_sharing_prompts_share_almost_nothing():
    specs = make_workload("no-sharing", 20)
    assert max(match(a.input_ids, b.input_ids) for a in specs for b in specs if a is not b) < 4


def test_bad_name_or_size():
    with pytest.raises(ValueError, match="shared-prompt, few-shot"):
        make_workload("chat", 5)
    with pytest.raises(ValueError, match="positive integer"):
        make_workload("few-shot", 0)
