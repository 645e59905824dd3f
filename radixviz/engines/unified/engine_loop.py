"""What the scheduler loop (sim.py) and a why-miss replay (sim_why_miss.py) ask of the unified
engine beyond the facade's verbs: each component's verdict on a match's walk, the node an
insert ended on, the tree's slots for a key, a lock's Mamba slot given back before its
holder donates a state. ``Engine`` (engine.py) takes these as its own.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import torch

from .cache_verdicts import Step, Verdict, judge, reach
from .node import ComponentType, UnifiedTreeNode

if TYPE_CHECKING:
    from .cache import UnifiedRadixCache
    from .cache_params import MatchResult

SWA, MAMBA = ComponentType.SWA, ComponentType.MAMBA


class Held(NamedTuple):
    """One lock the facade keeps for its holder: the receipt, and the holder's Mamba slot."""
    receipt: object
    mamba_slot: torch.Tensor | None


class InsertedAs(NamedTuple):
    """How the last insert was handed to the cache (a script's result reports it)."""
    prev_prefix_len: int
    swa_evicted: int
    mamba_slot: int | None
    mamba_exist: bool
    node: int | None              # the node the insert ended on


class LoopVerbs:
    """The unified engine's verbs for the scheduler loop (a part of ``Engine``)."""

    cache: UnifiedRadixCache
    held: dict[int, list[Held]]
    last_insert: InsertedAs | None

    def walk_verdicts(self, result: MatchResult) -> list[Verdict]:
        """Each component's verdict on every node the match that gave ``result`` walked (the
        live path from the root to where the walk stopped)."""
        if result.stop is None:
            return []
        path, node, root = [], self.cache.tree_core.node_by_id(result.stop.node), self.cache.root_node
        while node is not root:
            path.append(node)
            node = node.parent
        swa, mamba = self.cache.swa_enabled, self.cache.mamba_enabled
        steps = [Step(n.id, len(n.key), n.component_data[SWA].value is not None if swa else None,
                      n.component_data[MAMBA].value is not None if mamba else None) for n in reversed(path)]
        return judge(steps, self.cache.sliding_window_size)

    reach = staticmethod(reach)

    def inserted_node(self) -> UnifiedTreeNode:
        """The node the last insert ended on."""
        assert self.last_insert is not None and self.last_insert.node is not None
        return self.cache.tree_core.node_by_id(self.last_insert.node)

    def path_slots(self, key: Sequence[int]) -> torch.Tensor:
        """The tree's Full slots for ``key``, which the tree holds whole (read, nothing moves)."""
        node, at, chunks = self.cache.root_node, 0, []
        key = tuple(key)
        while at < len(key):
            node = node.children[self.cache.child_key(key, at)]
            chunks.append(node.full_value())
            at += len(node.key)
        return torch.cat(chunks)[:len(key)] if chunks else self.cache.root_node.full_value()

    def tracked_state_end(self, base: int, end: int, branch: int | None = None) -> int:
        """Where a request that computed tokens ``base`` to ``end`` keeps its last Mamba state
        (v0.5.23's prefill): at the match's branching point ``branch`` when it lies past
        ``base`` on the chunk grid, else at the last checkpoint step from ``base``."""
        cache = self.cache
        grid, chunk = cache.mamba_checkpoint_grid or 1, cache.mamba_cache_chunk_size or 1
        if branch is not None and base < branch < end and (branch - base) % chunk == 0:
            return branch
        return base + (end - base) // grid * grid

    def give_back_state(self, node: UnifiedTreeNode) -> None:
        """The Mamba slot of the newest lock at ``node`` goes back to the pool (its holder is
        done with its copy); the lock stays."""
        taken = self.held.get(node.id)
        if taken and taken[-1].mamba_slot is not None:
            self.cache.mamba_pool.free(taken[-1].mamba_slot)  # type: ignore[union-attr]
            taken[-1] = taken[-1]._replace(mamba_slot=None)
