"""The engine contract (radixviz/cache/contract.py, memory.py, facade.py; docs/architecture.md):
typed without ``Any``, every method of the facade annotated, and every registered engine's
declared memory the same in its facade, its snapshots and its nodes' parts."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import radixviz
from radixviz.cache import TokenToKVPool
from radixviz.cache.contract import NodePart
from radixviz.cache.engines import engine_names, open_engine
from radixviz.cache.facade import Engine
from radixviz.script import Session

CACHE = Path(radixviz.__file__).resolve().parent / "cache"
CONTRACT = ("contract.py", "memory.py", "facade.py")


@pytest.mark.parametrize("name", CONTRACT)
def test_the_contract_says_no_any(name):
    tree = ast.parse((CACHE / name).read_text(encoding="utf-8"))
    named = [node.lineno for node in ast.walk(tree)
             if (isinstance(node, ast.Name) and node.id == "Any")
             or (isinstance(node, ast.Attribute) and node.attr == "Any")
             or (isinstance(node, ast.alias) and node.name == "Any")]
    assert named == [], f"{name} names Any on lines {named}"


def test_every_method_of_the_facade_is_annotated():
    bare = []
    for name, method in inspect.getmembers(Engine, inspect.isfunction):
        signature = inspect.signature(method)
        missing = [p for p in signature.parameters.values() if p.name != "self" and p.annotation is inspect._empty]
        if missing or (signature.return_annotation is inspect._empty and name != "__init__"):
            bare.append(name)
    assert bare == []


@pytest.mark.parametrize("name", engine_names())
def test_an_engine_declares_its_memory_once(name):
    """The facade's ``memory``, the snapshot's ``components`` and ``held``, every node's
    ``parts``: the same components in the same order, the backbone first."""
    session = Session(16, device="cpu", engine=name)
    session.run('insert "abcd"; lock "ab"')
    engine, tree = session.engine, session.engine.snapshot()
    assert tree.components == engine.memory
    assert tuple(h.component for h in tree.held) == engine.memory
    for node in tree.root.walk():
        assert tuple(p.component for p in node.parts) == engine.memory
        assert all(isinstance(p, NodePart) for p in node.parts)
    # the backbone's part is the node's own slots and locks
    leaf = next(n for n in tree.root.walk() if n.key and not n.children)
    assert (leaf.parts[0].slots, leaf.parts[0].locks) == (leaf.value, leaf.ref)
    assert len(session.live_frame().pool.more) == sum(c.pooled for c in engine.memory[1:])


@pytest.mark.parametrize("name", engine_names())
def test_an_eviction_names_its_component(name):
    engine = open_engine(name, TokenToKVPool(8, device="cpu"))
    names = ", ".join(c.name for c in engine.memory)   # the unified engine's backbone is "full"
    with pytest.raises(ValueError, match=f"engine {name} keeps no 'mamba' memory: its components are {names}"):
        engine.evicted(1, "mamba")
    assert engine.evicted(1) == (engine.memory[0].name, 0)
