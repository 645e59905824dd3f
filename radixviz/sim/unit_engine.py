"""An engine keyed by block units (block_units.py), counted in tokens, on the same KV pool.

The engine itself is unchanged: its keys are units instead of tokens, and its values hold
one *handle* per unit where they held one slot per token. This wrapper keeps, for each
handle, the unit's real slots in the pool, so everything the scheduler loop sees is as on
the token path: a match returns the prefix's slots, an insert takes the sequence's slots and
frees the duplicates, an eviction frees the evicted tokens' slots, and the sizes (evictable,
a lock's change) are tokens. The engine counts its sizes by the length of its values, so
those counts are units here; the wrapper keeps the token counts beside them, changing them
where the engine changes its own (tests/test_block_units.py holds both paths pass for pass).

Only an engine whose counts are the length of its values and whose insert frees nothing
itself can be wrapped (its loop hooks say ``block_units``): the first release's cache.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from radixviz.cache.contract import CacheNode, FreedSlots, Matched, TracedCache
from radixviz.cache.facade import CacheEngine, Engine, Inserted
from radixviz.cache.invariants import InvariantError, check_lock_flows, check_pool
from radixviz.cache.keys import get_child_key

from .block_units import BlockPrompt, units_tokens

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from radixviz.cache.snapshot import MatchPreview


HANDLE_CHUNK = 4096


def node_tokens(node: Any) -> int:
    return units_tokens(node.key)


class UnitEngine(Engine[TracedCache, CacheNode]):
    """``engine`` keyed by block units; the verbs take BlockPrompts and count tokens."""

    def __init__(self, engine: CacheEngine) -> None:
        # wraps a live engine: its cache, pool and settings, no cache of its own
        self.inner = engine
        self.spec, self.pool, self.settings = engine.spec, engine.pool, engine.settings
        self.cache = engine.cache
        # handle -> the unit's slots in the pool, as numpy (the pool's counts are numpy on the
        # CPU): joining a prefix's units or an evicted leaf's costs less than torch's calls
        self.slots: dict[int, np.ndarray] = {}
        self._next_handle = 0
        self._handles = torch.empty(0, dtype=torch.int64)   # the next handles, made a chunk at a time
        self._evictable = 0                        # tokens, as the engine's is units
        self._empty = torch.empty(0, dtype=torch.int64, device=self.pool.device)
        self._on_cpu = self.pool.device.type == "cpu"

    def make_cache(self) -> TracedCache:
        return self.inner.cache

    @staticmethod
    def units(key: Sequence) -> tuple:
        if not isinstance(key, BlockPrompt):
            raise TypeError(f"an engine keyed by block units takes BlockPrompts, not {type(key).__name__}")
        return key.units

    # ------------------------------------------------------------ the verbs, in tokens

    def match_key(self, key: Sequence, extra_key: str | None) -> Matched:
        handles, node = self.inner.match_key(self.units(key), extra_key)
        return Matched(self._slots_of(handles), node)

    def lock(self, node: Any) -> int:
        delta = -self._path_tokens(node, 0)
        self.inner.lock(node)
        self._evictable += delta
        return delta

    def unlock(self, node: Any) -> int:
        delta = self._path_tokens(node, 1)
        self.inner.unlock(node)
        self._evictable += delta
        return delta

    def insert_key(self, key: Sequence, slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        """The engine's insert of the key's units, each new unit a handle whose slots this
        table keeps; returns the tokens the tree already held (their slots: the caller's)."""
        units = self.units(key)
        first = self._next_handle
        held = self.inner.insert_key(units, self._take_handles(len(units)), priority, extra_key)
        held_tokens = units_tokens(units[:held])
        if held < len(units):
            # a copy: the caller may hand a view of a request's row, which the next request overwrites
            kept = slots[held_tokens:].cpu().numpy().copy()
            table, at = self.slots, 0
            for handle, unit in enumerate(units[held:], first + held):
                end = at + (unit[1] if unit.__class__ is tuple else 1)
                table[handle] = kept[at:end]
                at = end
            if at != kept.shape[0]:
                raise ValueError(f"{kept.shape[0]} slots for new units of {at} tokens")
            self._evictable += at
        return held_tokens

    def insert(self, key: Sequence, slots: torch.Tensor, priority: int | None = None,
               freed: Callable[[str, torch.Tensor], None] | None = None,
               extra_key: str | None = None) -> Inserted:
        """As the facade's insert: the tree keeps the slots of the units it did not hold and
        the duplicates go back to the pool (a unit key has no partial page)."""
        if extra_key is not None:
            self.need("namespaces")
        held = self.insert_key(key, slots, priority)
        duplicates, kept = slots[:held], slots[held:]
        if held:
            self.pool.free(duplicates, distinct=True)   # a request's row names each slot once
            if freed is not None:
                freed("duplicates", duplicates)
        return Inserted(held, kept, duplicates, self._empty)

    def evict_backbone(self, num_tokens: int, release: Callable[[torch.Tensor], int]) -> None:
        """The engine's eviction, each leaf's handles turned into its slots for ``release``."""
        table = self.slots

        def released(handles: torch.Tensor) -> int:
            slots = self._tensor(np.concatenate([table.pop(handle) for handle in handles.tolist()]))
            count = release(slots)
            self._evictable -= slots.shape[0]
            return count
        self.inner.evict_backbone(num_tokens, released)

    def evict(self, num_tokens: int, freed: FreedSlots | None = None, component: str | None = None) -> int:
        """Evict leaves until ``num_tokens`` tokens are gone; their slots go back to the pool
        in one call when the eviction ends (an unlocked leaf's slots are the tree's alone)."""
        if component is not None and component != self.memory[0].name:
            return super().evict(num_tokens, freed, component)
        table, parts = self.slots, []

        def release(handles: torch.Tensor) -> int:
            count = 0
            for handle in handles.tolist():
                part = table.pop(handle)
                parts.append(part)
                count += part.shape[0]
            return count
        self.inner.evict_backbone(num_tokens, release)
        if not parts:
            return 0
        slots = self._tensor(np.concatenate(parts))
        total = self.pool.free(slots, distinct=True)   # each leaf's slots are its own
        if total != slots.shape[0]:
            raise InvariantError(f"an evicted leaf's slots were held by a request: {slots.shape[0]} "
                                 f"evicted, {total} freed")
        self._evictable -= total
        if freed is not None:
            freed(slots)
        return total

    def evictable_size(self) -> int:
        return self._evictable

    def total_size(self) -> int:
        return sum(node_tokens(node) for node in self._nodes())

    def whole_pages(self, length: int) -> int:
        return length

    def reset(self, pool: Any = None) -> None:
        self.inner.reset(pool)
        self.pool = self.inner.pool
        self._on_cpu = self.pool.device.type == "cpu"
        self.slots.clear()
        self._evictable = 0

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        raise TypeError("a preview shows tokens: run without block units")

    def wrap_key_match(self, wrapper: Callable[[Callable[..., int]], Callable[..., int]]) -> None:
        del wrapper     # unit keys are short: nothing worth remembering

    # ------------------------------------------------------------------ helpers

    def _take_handles(self, count: int) -> torch.Tensor:
        """The next ``count`` handles, a slice of a chunk made ahead (one arange per chunk)."""
        if self._handles.shape[0] < count:
            first = self._next_handle
            self._handles = torch.arange(first, first + max(count, HANDLE_CHUNK), dtype=torch.int64,
                                         device=self.pool.device)
        taken, self._handles = self._handles[:count], self._handles[count:]
        self._next_handle += count
        return taken

    def _slots_of(self, handles: torch.Tensor) -> torch.Tensor:
        table = self.slots
        count = handles.shape[0]
        if count == 0:
            return self._empty
        if count == 1:
            return self._tensor(table[int(handles[0])])
        return self._tensor(np.concatenate([table[h] for h in handles.tolist()]))

    def _tensor(self, slots: np.ndarray) -> torch.Tensor:
        """Slots kept as numpy, as a tensor on the pool's device (on the CPU, the same memory)."""
        tensor = torch.from_numpy(slots)
        return tensor if self._on_cpu else tensor.to(self.pool.device)

    def _path_tokens(self, node: Any, ref: int) -> int:
        """Tokens on the path from ``node`` up whose count is ``ref``: what a lock (ref 0)
        takes from, or an unlock (ref 1) gives back to, the evictable size."""
        root, tokens = self.cache.root_node, 0
        while node is not root:
            if node.ref_counter == ref:
                tokens += node_tokens(node)
            node = node.parent
        return tokens

    def _nodes(self):
        root: Any = self.cache.root_node
        stack = list(root.children.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        """The tree in units (links, child keys, locks, one handle per unit, the engine's own
        evictable count) and in tokens (each handle's slots, the evictable tokens, the pool)."""
        cache, owner, handles = self.cache, {}, set()
        evictable_units = evictable_tokens = 0
        for node in self._nodes():
            if node.parent.children.get(get_child_key(node.key)) is not node:
                raise InvariantError(f"node #{node.id}: not filed under its first unit by its parent")
            if node.value.shape[0] != len(node.key) or node.ref_counter < 0:
                raise InvariantError(f"node #{node.id}: {len(node.key)} units, {node.value.shape[0]} "
                                     f"handles, reference count {node.ref_counter}")
            tokens = 0
            for handle in node.value.tolist():
                if handle in handles or handle not in self.slots:
                    raise InvariantError(f"node #{node.id}: handle {handle} is shared or has no slots")
                handles.add(handle)
                for slot in self.slots[handle].tolist():
                    owner[slot] = node
                tokens += self.slots[handle].shape[0]
            if tokens != node_tokens(node):
                raise InvariantError(f"node #{node.id}: {node_tokens(node)} tokens but {tokens} slots")
            if node.ref_counter == 0:
                evictable_units += len(node.key)
                evictable_tokens += tokens
        if len(handles) != len(self.slots):
            raise InvariantError(f"{len(self.slots) - len(handles)} handles kept for no node")
        check_lock_flows(cache.root_node, lambda n: n.ref_counter)
        if (evictable_units, evictable_tokens) != (cache.evictable_size(), self._evictable):
            raise InvariantError(f"evictable: the engine counts {cache.evictable_size()} units and this "
                                 f"{self._evictable} tokens; unlocked nodes hold {evictable_units} and "
                                 f"{evictable_tokens}")
        check_pool(self.pool, owner, held)
