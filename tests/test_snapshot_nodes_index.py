"""A tree's node index (``TreeSnapshot.nodes``) is built from the tree indexed before it:
it must still be exactly the tree's own nodes, whatever order the steps are read in."""
from __future__ import annotations

import random

import pytest

from radixviz.cache import snapshot
from radixviz.script import Session, parse_script


def _walked(tree) -> dict:
    return {node.id: node for node in tree.root.walk()}


def _session(engine: str, seed: int) -> Session:
    rng = random.Random(seed)
    session = Session(pool_size=96, device="cpu", engine=engine)
    lines = []
    for _ in range(40):
        key = "".join(rng.choice("abc") for _ in range(rng.randint(1, 7)))
        kind = rng.choice(("insert", "insert", "match", "evict"))
        lines.append(f"evict {rng.randint(1, 9)}" if kind == "evict" else f'{kind} "{key}"')
    for op in parse_script("\n".join(lines)):
        try:
            session.apply(op)
        except Exception:   # a full pool refuses an insert: the frames before it still count
            pass
    return session


@pytest.mark.parametrize("engine", ["2024", "2026"])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_index_is_the_trees_own_nodes_in_any_reading_order(engine, seed):
    trees = [frame.tree for frame in _session(engine, seed).frames]
    assert len(trees) > 50
    order = list(range(len(trees))) + list(range(len(trees) - 1, -1, -3))
    order += random.Random(seed).sample(range(len(trees)), len(trees))
    for i in order:
        tree = trees[i]
        tree.__dict__.pop("nodes", None)   # built again, from whichever tree was indexed last
        assert tree.nodes == _walked(tree), (engine, seed, i)
        assert all(tree.nodes[k] is v for k, v in _walked(tree).items())


def test_a_step_that_shares_its_subtrees_is_indexed_from_the_one_before():
    trees = [frame.tree for frame in _session("2024", 3).frames]
    trees[0].nodes   # noqa: B018 - index it
    assert snapshot._LAST_INDEXED[0] is trees[0]
    trees[1].__dict__.pop("nodes", None)
    assert trees[1].nodes == _walked(trees[1])
    assert snapshot._LAST_INDEXED[0] is trees[1]
