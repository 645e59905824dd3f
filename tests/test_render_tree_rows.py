"""The tree view builds its rows lazily (render/tree_rows.py) yet draws exactly what the eager
walk drew (tests/oracles/eager_tree.py): the same lines, styles included, the same line for
every node, whichever row is asked for first, on random sessions of both engines and with
folding tight enough to fold wide levels and deep ones."""
from __future__ import annotations

import random

import pytest

from oracles.eager_tree import EagerTreeView
from radixviz.render.tree import TreeView
from radixviz.script import ScriptError, Session, parse_script


def random_session(seed: int, engine: str) -> Session:
    rng = random.Random(seed)
    session = Session(pool_size=96, device="cpu")
    if engine == "2026":
        session.apply(parse_script("engine 2026")[0])
    for _ in range(70):
        word = "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 9)))
        line = rng.choice([f"insert {word}", f"insert {word}", f"match {word}", f"lock {word}",
                           f"unlock {word}", f"evict {rng.randint(0, 9)}",
                           *(["matcher buggy", "matcher fixed"] if engine == "2024" else [])])
        try:
            session.apply(parse_script(line)[0])
        except ScriptError:
            pass   # refused: nothing changed
    return session


def drawn(lines) -> list:
    return [(line.plain, [(s.start, s.end, str(s.style)) for s in line.spans], line.style) for line in lines]


FOLDING = [dict(), dict(max_depth=2, max_children=2), dict(max_depth=1, max_children=3),
           dict(max_depth=3, max_children=1)]


@pytest.mark.parametrize("engine", ["2024", "2026"])
@pytest.mark.parametrize("seed", [1, 2])
def test_every_frame_draws_what_the_eager_walk_drew(engine, seed):
    session = random_session(seed, engine)
    rng = random.Random(seed)
    for frame in session.frames[::3]:
        for folding in FOLDING:
            eager = EagerTreeView(frame.tree, frame.marks, legend=True, **folding)
            lazy = TreeView(frame.tree, frame.marks, legend=True, **folding)
            expected = eager.lines()
            # rows asked for out of order first, as a scrolled view asks for them
            rows = lazy.rows
            assert len(rows) == len(expected)
            for index in rng.sample(range(len(expected)), min(5, len(expected))):
                assert drawn([rows[index]]) == drawn([expected[index]])
            assert drawn(lazy.lines()) == drawn(expected)
            for node_id in frame.tree.nodes:
                assert lazy.line_of(node_id) == eager.line_of(node_id), (node_id, folding)


def test_a_long_chain_and_a_wide_level_are_counted_without_building_their_rows():
    session = Session(pool_size=4096, device="cpu")
    for i in reversed(range(300)):   # longest first: each shorter one splits the top edge, a chain in linear time
        session.apply(parse_script(f"insert tokens {' '.join(str(t) for t in range(i + 1))}")[0])
    for i in range(40):
        session.apply(parse_script(f"insert tokens {1000 + i} 1")[0])
    frame = session.frames[-1]
    view = TreeView(frame.tree, frame.marks, legend=True)
    eager = EagerTreeView(frame.tree, frame.marks, legend=True)
    assert len(view.rows) == len(eager.lines())
    assert drawn([view.rows[len(view.rows) - 1]]) == drawn([eager.lines()[-1]])
    assert len(view.rows._built) < 30   # one batch of rows built, not the whole tree
