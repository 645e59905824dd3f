"""The facade's checks of the unified cache (engine.py ``check_invariants``): the tree's and
its pools' own (invariants.py, v0.5.23's ``sanity_check`` and more), then the counts the
facade adds: each Full slot referenced once by the node that owns it and once a holder
(``held``: the slots running requests read), nothing else; every SWA slot in use the peer of
a referenced Full slot; every Mamba slot in use the tree's or a lock's copy.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import torch

from ...cache.invariants import InvariantError
from .cache_counted import CountedSWAPages
from .invariants import check_unified_invariants
from .node import ComponentType

if TYPE_CHECKING:
    from ...cache.pool import TokenToKVPool
    from .cache import UnifiedRadixCache


class Checked(Protocol):
    """What these checks read of the facade (engine.py, which imports this module)."""
    cache: UnifiedRadixCache
    pool: TokenToKVPool   # the facade's: a KVPool (cache_facade_pool.py)
    held: dict

FULL, SWA, MAMBA = ComponentType.FULL, ComponentType.SWA, ComponentType.MAMBA


def check_facade_pools(engine: Checked, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
    """Raise InvariantError on the first slot whose count, pairing or owner is wrong."""
    cache = engine.cache
    check_unified_invariants(cache)
    owners: dict = {ct: Counter() for ct in cache.tree_components}
    stack = [cache.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        for ct in cache.tree_components:
            value = node.component_data[ct].value
            if value is not None:
                owners[ct].update(value.tolist())
    expected = Counter(owners[FULL])
    for slots in held:
        expected.update(slots.tolist() if isinstance(slots, torch.Tensor) else list(slots))
    refs = engine.pool.mem_state.tolist()
    wrong = [slot for slot, n in enumerate(refs) if n != expected.get(slot, 0)]
    if wrong:
        slot = wrong[0]
        raise InvariantError(f"Full slot {slot} has {refs[slot]} reference(s); the tree and the holders account "
                             f"for {expected.get(slot, 0)}")
    engine.pool.check_free_list()
    alloc = cache.token_to_kv_pool_allocator
    if isinstance(alloc, CountedSWAPages):
        mapping = alloc.full_to_swa_index_mapping
        paired = Counter(int(s) for s in mapping[mapping > 0].tolist())
        if paired != Counter({s: n for s, n in enumerate(alloc.swa_refs.tolist()) if n}):
            raise InvariantError("the SWA pool's counts differ from the Full slots paired with it")
        unpaired_peer = [s for s, n in enumerate(refs) if n == 0 and int(mapping[s]) > 0]
        free_full = set(alloc.full_attn_allocator.free_slots())
        if any(s in free_full for s in unpaired_peer):
            raise InvariantError(f"free Full slot {unpaired_peer[0]} still has an SWA peer")
    if cache.mamba_pool is not None:
        copies = [h.mamba_slot for locks in engine.held.values() for h in locks if h.mamba_slot is not None]
        used = Counter(owners[MAMBA]) + Counter(int(s) for s in copies)
        free = Counter(cache.mamba_pool.free_slots.tolist())
        every = range(1, cache.mamba_pool.size + 1)
        lost = [s for s in every if used[s] + free[s] != 1]
        if lost:
            raise InvariantError(f"Mamba slot {lost[0]} is accounted {used[lost[0]] + free[lost[0]]} times "
                                 "(free, the tree, the locks' copies)")
