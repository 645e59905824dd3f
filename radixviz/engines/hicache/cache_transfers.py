"""The hierarchical cache's transfers: writes to the host, acknowledgements, both evictions
and loads back to the device (the second half of SGLang's ``hiradix_cache.py``).

``HiRadixCache`` (cache.py) builds on ``HostTransfers`` and holds the tree; one class in
two files only to keep each readable: the methods are SGLang's, in its order and with its
names (``write_backup``, ``_inc_hit_count``, ``writing_check``, ``loading_check``, ``evict``,
``_evict_backuped``, ``_evict_regular``, ``evict_host``, ``load_back``, ``init_load_back``,
``ready_to_load_host_cache``). Their steps are reported through ``self.transfer_tracer``,
this module's branch of the cache's tracer, so the code pane shows these lines.

Where radixviz differs from SGLang it says so on the spot: ``sync`` waits for every copy
before acknowledging, ``load_back`` protects the host copy it loads while it makes room,
a write-back that finds no host room leaves its node on the device (SGLang asserts), and
``init_load_back`` refuses a node that a host eviction deleted since it was matched.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import torch

from radixviz.cache.snapshot import invalidate
from radixviz.cache.trace import EventKind as K
from radixviz.engines.v2026.cache import RadixCache
from .cache_head_bugs import HeadBugStop

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from radixviz.cache.pool import TokenToKVPool
    from radixviz.cache.trace import TracerBranch
    from .cache_controller import HiCacheController
    from .cache_host_pool import TokenToKVPoolHost
    from .cache_leaves import LeafSet, Moved
    from .node import TreeNode


class HostTransfers(RadixCache):
    """Moving KV between the tiers: the second half of HiRadixCache (cache.py), which
    builds on this class and sets up the tree, the pools and the controller it uses.

    Its methods and HiRadixCache's take the hierarchical TreeNode (node.py) where today's
    cache takes today's: the tree holds no other kind (``_new_node`` makes them all), which
    mypy cannot see, so each such override says ``ignore[override]``."""

    # set by HiRadixCache.__init__ (cache.py); declared here so that these methods see them
    root_node: TreeNode
    kv_cache: TokenToKVPool
    token_to_kv_pool_host: TokenToKVPoolHost
    cache_controller: HiCacheController
    ongoing_write_through: dict[int, TreeNode]
    ongoing_load_back: dict[int, TreeNode]
    loading_nodes: dict[int, list[TreeNode]]
    write_through_threshold: int
    load_back_threshold: int
    # SGLang's plain set, heaped afresh by ``evict``: every reader of the 2026 engine's
    # heap (its ``evict``, its ``set_eviction_policy``) is overridden in HiRadixCache
    evictable_leaves: LeafSet  # type: ignore[assignment]
    evictable_host_leaves: LeafSet
    moved: Moved
    head_bugs: tuple[str, ...]
    head_bug_reports: list[str]
    transfer_tracer: TracerBranch

    if TYPE_CHECKING:   # HiRadixCache's own (cache.py)
        @property
        def write_policy(self) -> str: ...

        def _update_host_leaf_status(self, node: TreeNode) -> None: ...

    # ----------------------------------------------------------- copies to the host

    def write_backup(self, node: TreeNode, write_back: bool = False) -> int:
        tr = self.transfer_tracer
        host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)  # step: write.alloc
        if host_indices is None:
            if tr.active: tr.emit("write.alloc", K.WRITE, (node,), tokens=len(node.value), host_free=self.token_to_kv_pool_host.available_size(), issued=False)
            self.evict_host(len(node.value))  # step: write.evict_host
            host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)  # step: write.retry
        if host_indices is not None:
            node.host_value = host_indices  # step: write.issue
            invalidate(node)
            self.ongoing_write_through[node.id] = node
            self.moved.written += len(host_indices)
            if tr.active: tr.emit("write.issue", K.WRITE, (node,), slots=tuple(node.value.tolist()), host_slots=tuple(host_indices.tolist()), issued=True, write_back=write_back, policy=self.write_policy, hit_count=node.hit_count, threshold=self.write_through_threshold)
            if not write_back:
                # no need to lock nodes if write back
                self.inc_lock_ref(node)
        else:
            if tr.active: tr.emit("write.no_room", K.RESULT, (node,), written=0, tokens=len(node.value))
            return 0  # step: write.no_room

        return len(host_indices)

    def _inc_hit_count(self, node: TreeNode, chunked: bool = False) -> None:  # type: ignore[override]
        # skip the hit count update for chunked requests
        if self.cache_controller.write_policy == "write_back" or chunked:
            return
        node.hit_count += 1  # step: insert.hit
        invalidate(node)
        if self.transfer_tracer.active: self.transfer_tracer.emit("insert.hit", K.HIT, (node,), old=node.hit_count - 1, new=node.hit_count, threshold=self.write_through_threshold, backuped=node.backuped)

        if not node.backuped:
            if node.hit_count >= self.write_through_threshold:
                # write to host if the node is not backuped
                self.write_backup(node)

    def writing_check(self, write_back: bool = False) -> None:
        tr = self.transfer_tracer
        if write_back:
            # blocking till all write back complete
            while len(self.ongoing_write_through) > 0:
                for ack in self.cache_controller.ack_write_queue:
                    ack.finish_event.synchronize()
                    if ack.finish is not None: ack.finish()
                    for ack_id in ack.node_ids:
                        backuped_node = self.ongoing_write_through.pop(ack_id)  # step: ack.write_back
                        invalidate(backuped_node)
                        if tr.active: tr.emit("ack.write_back", K.ACK, (backuped_node,), transfer="write", host_slots=tuple(backuped_node.host_value.tolist()), unlocked=False)
                self.cache_controller.ack_write_queue.clear()
                assert len(self.ongoing_write_through) == 0
            return

        if len(self.ongoing_write_through) == 0:
            return

        finish_count = 0
        for ack in self.cache_controller.ack_write_queue:
            if not ack.finish_event.query():
                break
            finish_count += 1
        # (one process: SGLang's all-reduce of finish_count across tensor-parallel ranks is moot)
        while finish_count > 0:
            ack = self.cache_controller.ack_write_queue.pop(0)
            ack.finish_event.synchronize()
            if ack.finish is not None: ack.finish()
            for ack_id in ack.node_ids:
                backuped_node = self.ongoing_write_through.pop(ack_id)  # step: ack.write
                invalidate(backuped_node)
                if tr.active: tr.emit("ack.write", K.ACK, (backuped_node,), transfer="write", host_slots=tuple(backuped_node.host_value.tolist()), unlocked=True)
                self.dec_lock_ref(backuped_node)
            finish_count -= 1

    def loading_check(self) -> None:
        tr = self.transfer_tracer
        finish_count = 0
        for ack in self.cache_controller.ack_load_queue:
            if not ack.finish_event.query():
                # the KV cache loading is still ongoing
                break
            finish_count += 1
            for ack_id in ack.node_ids:
                end_node = self.ongoing_load_back.pop(ack_id)  # step: ack.load
                for loaded in self.loading_nodes.pop(ack_id, ()):
                    invalidate(loaded)
                if tr.active: tr.emit("ack.load", K.ACK, (end_node,), transfer="load", slots=tuple(end_node.value.tolist()), unlocked=True)
                self.dec_lock_ref(end_node)

        # ACK until all events are processed
        del self.cache_controller.ack_load_queue[:finish_count]

    def check_hicache_events(self) -> None:
        """Acknowledge the copies that have finished (SGLang's scheduler, every round)."""
        self.writing_check()
        self.loading_check()

    def sync(self) -> int:
        """Wait for every copy in flight, then acknowledge them all; return how many nodes
        were acknowledged. radixviz's ``sync``: SGLang only acknowledges the copies that
        happen to be done when it checks, which on a GPU depends on timing."""
        tr = self.transfer_tracer
        outer = tr.op
        tr.op = outer or "sync"
        in_flight = len(self.ongoing_write_through) + len(self.ongoing_load_back)
        self.cache_controller.wait_all()  # step: sync.wait
        if tr.active: tr.emit("sync.wait", K.VISIT, (), writes=len(self.ongoing_write_through), loads=len(self.ongoing_load_back))
        self.check_hicache_events()
        if tr.active: tr.emit("sync.result", K.RESULT, (), acknowledged=in_flight)
        tr.op = outer
        return in_flight  # step: sync.result

    def in_flight(self) -> int:
        """Copies issued and not yet acknowledged (writes and loads, counted by node)."""
        return len(self.ongoing_write_through) + len(self.ongoing_load_back)

    # ------------------------------------------------------------------ eviction

    def evict(self, num_tokens: int, evict_callback: Callable[[torch.Tensor], object] | None = None) -> int:
        """Free at least ``num_tokens`` device tokens: a backed-up leaf loses its device slots
        and stays on the host; any other leaf is deleted, or under write_back written to the
        host first. The controller frees the slots; ``evict_callback(slots)``, when given, is
        told of each stretch freed. Returns the device tokens evicted (or being written back)."""
        tr = self.transfer_tracer
        outer = tr.op
        tr.op = outer or "evict"
        eviction_heap = [(self.eviction_strategy(node), node.id, node) for node in self.evictable_leaves]
        heapq.heapify(eviction_heap)  # step: evict.heap
        if tr.active: self._emit_heap("evict.heap", eviction_heap, num_tokens, writing=len(self.ongoing_write_through))

        num_evicted = 0
        write_back_nodes = []
        while num_evicted < num_tokens and len(eviction_heap):  # step: evict.result
            _priority, _, x = heapq.heappop(eviction_heap)  # step: evict.pop
            if tr.active: tr.emit("evict.pop", K.POP, (x,), key=_priority, policy=self.eviction_policy, is_root=x is self.root_node, backuped=x.backuped)

            if x.lock_ref > 0:
                if tr.active: tr.emit("evict.skip", K.SKIP, (x,), ref=x.lock_ref, writing=x.id in self.ongoing_write_through)
                continue  # step: evict.skip

            if not x.backuped:
                if self.cache_controller.write_policy == "write_back":
                    # write to host if the node is not backuped
                    written = self.write_backup(x, write_back=True)  # step: evict.write_back
                    num_evicted += written
                    if written:  # radixviz: SGLang appends it anyway and asserts below
                        write_back_nodes.append(x)
                else:
                    num_evicted += self._evict_regular(x, evict_callback)  # step: evict.regular
            else:
                num_evicted += self._evict_backuped(x, evict_callback)  # step: evict.backuped

            for child in x.parent.children.values():
                if child in write_back_nodes:
                    continue
                if not child.evicted:
                    break
            else:
                # all children are evicted or no children
                new_priority = self.eviction_strategy(x.parent)
                heapq.heappush(eviction_heap, (new_priority, x.parent.id, x.parent))  # step: evict.push_parent
                if tr.active: tr.emit("evict.push_parent", K.PUSH_PARENT, (x.parent,), key=new_priority)

        if self.cache_controller.write_policy == "write_back":
            self.writing_check(write_back=True)  # step: evict.wait_writes
            for node in write_back_nodes:
                assert node.backuped
                self._evict_backuped(node, evict_callback)

        if tr.active: tr.emit("evict.result", K.RESULT, (), evicted=num_evicted, target=num_tokens)
        tr.op = outer
        return num_evicted

    def _evict_backuped(self, node: TreeNode, evict_callback: Callable[[torch.Tensor], object] | None = None) -> int:
        # GPU -> CPU demotion: the node stays, reachable through its host copy (no "removed"
        # event: a router may still send the prefix here, to be loaded back)
        tr = self.transfer_tracer
        slots = node.value
        if node.evicted and self.head_bugs:
            # popped a second time (a head bug put it in the heap twice): SGLang's
            # ``evict_device(None)`` raises here
            why = (f"evict: node #{node.id} came off the heap twice and has no device slots "
                   f"left to free; SGLang's evict_device(None) (hiradix_cache.py:945) stops the scheduler here")
            self.head_bug_reports.append(why)
            if tr.active: tr.emit("evict.assert", K.RESULT, (node,), report=why)
            raise HeadBugStop(why)  # step: evict.assert
        num_evicted = self.cache_controller.evict_device(node.value)  # step: evict.demote
        assert num_evicted > 0
        self.evictable_size_ -= num_evicted
        node.value = None  # type: ignore[assignment]  # evicted: the copy is on the host only
        invalidate(node)
        self.moved.demoted += num_evicted
        if evict_callback is not None: evict_callback(slots)
        if tr.active: tr.emit("evict.demote", K.DEMOTE, (node,), slots=tuple(slots.tolist()), freed=num_evicted, host_slots=tuple(node.host_value.tolist()), old=self.evictable_size_ + num_evicted, new=self.evictable_size_)
        self._update_leaf_status(node)
        self._update_host_leaf_status(node)
        # update leaf status for the parent because the node is evicted
        self._update_leaf_status(node.parent)
        return num_evicted

    def _evict_regular(self, node: TreeNode, evict_callback: Callable[[torch.Tensor], object] | None = None) -> int:
        # evict a node not initiated write to host: its KV is gone from both tiers
        tr = self.transfer_tracer
        self._record_remove_event(node)  # step: kv.removed
        self.cache_controller.mem_pool_device_allocator.free(node.value)  # step: evict.free
        num_evicted = len(node.value)
        self.moved.dropped += num_evicted
        if evict_callback is not None: evict_callback(node.value)
        if tr.active: tr.emit("evict.free", K.FREE, (node,), slots=tuple(node.value.tolist()), freed=num_evicted, why="no host copy")
        self._delete_leaf(node)
        return num_evicted

    def _delete_leaf(self, node: TreeNode) -> None:  # type: ignore[override]
        tr = self.transfer_tracer
        key = self.get_child_key_fn(node.key, extra_key=node.extra_key)
        v = node.parent.children.pop(key, None)  # step: evict.delete
        assert v is node, f"parent does not have child key, {key}"
        invalidate(node.parent)
        if tr.active: tr.emit("evict.delete", K.DELETE, (node.parent,), leaf=node.id, key=node.key)
        self.evictable_size_ -= len(node.key)
        self.evictable_leaves.remove(node, gone=True)
        self._update_leaf_status(node.parent)

    def evict_host(self, num_tokens: int) -> int:
        """Free at least ``num_tokens`` host tokens by deleting host-only leaves nobody
        protects, smallest policy key first; return the host tokens freed."""
        tr = self.transfer_tracer
        outer = tr.op
        tr.op = outer or "evict_host"
        eviction_heap = [(self.eviction_strategy(node), node.id, node) for node in self.evictable_host_leaves]
        heapq.heapify(eviction_heap)  # step: evict_host.heap
        if tr.active: self._emit_heap("evict_host.heap", eviction_heap, num_tokens)

        num_evicted = 0
        while num_evicted < num_tokens and len(eviction_heap):
            _priority, _, x = heapq.heappop(eviction_heap)  # step: evict_host.pop
            if tr.active: tr.emit("evict_host.pop", K.POP, (x,), key=_priority, policy=self.eviction_policy, is_root=x is self.root_node, tier="host")
            if x is self.root_node:
                break
            # only evict the host value of evicted nodes
            if not x.evicted:
                continue
            # node is protected from eviction as it has ongoing prefetch or backup
            if x.host_ref_counter > 0:
                if tr.active: tr.emit("evict_host.skip", K.SKIP, (x,), ref=x.host_ref_counter, tier="host")
                continue  # step: evict_host.skip

            # the KV is gone from both tiers now: a "removed" event for the router
            self._record_remove_event(x)  # step: kv.removed
            host_slots = x.host_value
            num_evicted += self.cache_controller.evict_host(x.host_value)  # step: evict_host.free
            self.moved.host_evicted += len(host_slots)
            if tr.active: tr.emit("evict_host.free", K.HOST_FREE, (x,), host_slots=tuple(host_slots.tolist()), freed=len(host_slots))

            key = self.get_child_key_fn(x.key, extra_key=x.extra_key)
            v = x.parent.children.pop(key, None)  # step: evict_host.delete
            if v is not x and self.head_bugs:
                self._report_lost_child(x, v, key)  # step: evict_host.assert
            assert v is x, f"parent does not have child key, {key}"
            invalidate(x.parent)
            if tr.active: tr.emit("evict_host.delete", K.DELETE, (x.parent,), leaf=x.id, key=x.key, tier="host")
            self.evictable_host_leaves.remove(x, gone=True)
            self._update_host_leaf_status(x.parent)

            if len(x.parent.children) == 0 and x.parent.evicted:
                new_priority = self.eviction_strategy(x.parent)
                heapq.heappush(eviction_heap, (new_priority, x.parent.id, x.parent))  # step: evict_host.push_parent
                if tr.active: tr.emit("evict_host.push_parent", K.PUSH_PARENT, (x.parent,), key=new_priority)
        if tr.active: tr.emit("evict_host.result", K.RESULT, (), evicted=num_evicted, target=num_tokens, tier="host")
        tr.op = outer
        return num_evicted  # step: evict_host.result

    # ---------------------------------------------------------- copies to the device

    def load_back(self, node: TreeNode, mem_quota: int | None = None) -> torch.Tensor | None:
        """Bring the host-only stretch ending at ``node`` back to the device: its new device
        slots, or None (shorter than the threshold, over ``mem_quota``, or no room even after
        evicting). The stretch stays locked until the load is acknowledged."""
        tr = self.transfer_tracer
        last_hit_node = node
        nodes_to_load: list[TreeNode] = []
        while node.evicted:
            assert node.backuped, "No backup available on evicted nodes, should not happen"
            nodes_to_load.insert(0, node)  # step: load.collect
            if tr.active: tr.emit("load.collect", K.HOST_HIT, (node,), host_slots=tuple(node.host_value.tolist()))
            node = node.parent
        ancester_node = node

        # protect the ancestor nodes from eviction
        delta = self.inc_lock_ref(ancester_node)  # step: load.protect

        # load it all or not at all
        host_indices = torch.cat([n.host_value for n in nodes_to_load])
        if len(host_indices) < self.load_back_threshold or (
            len(host_indices) > mem_quota + delta if mem_quota is not None else False
        ):
            # skip loading back if the total size is too small or exceeding the memory quota
            if tr.active: tr.emit("load.skip", K.RESULT, (last_hit_node,), tokens=len(host_indices), threshold=self.load_back_threshold, loaded=0)
            self.dec_lock_ref(ancester_node)
            return None  # step: load.skip

        device_indices = self.cache_controller.load(host_indices=host_indices, node_id=last_hit_node.id)  # step: load.alloc
        if device_indices is None:
            if tr.active: tr.emit("load.alloc", K.LOAD, (last_hit_node,), tokens=len(host_indices), free=self.kv_cache.available_size(), issued=False)
            # radixviz: the room-making eviction may write back (write_back) and so evict
            # host leaves; SGLang leaves the copy being loaded open to that
            protect = "load_back_unprotected" not in self.head_bugs  # off: 9fbe6800a's line
            if protect:
                last_hit_node.protect_host()
                invalidate(last_hit_node)
            self.evict(len(host_indices))  # step: load.evict
            if protect:
                last_hit_node.release_host()
                invalidate(last_hit_node)
            device_indices = self.cache_controller.load(host_indices=host_indices, node_id=last_hit_node.id)  # step: load.retry
        self.dec_lock_ref(ancester_node)
        if device_indices is None:
            # no sufficient GPU memory to load back KV caches
            if tr.active: tr.emit("load.no_room", K.RESULT, (last_hit_node,), tokens=len(host_indices), loaded=0)
            return None  # step: load.no_room

        self.ongoing_load_back[last_hit_node.id] = last_hit_node  # step: load.issue
        self.loading_nodes[last_hit_node.id] = nodes_to_load
        self.moved.loaded += len(device_indices)
        offset = 0
        for node in nodes_to_load:
            node.value = device_indices[offset: offset + len(node.host_value)].clone()  # step: load.assign
            offset += len(node.host_value)
            invalidate(node)
            if tr.active: tr.emit("load.assign", K.LOAD, (node,), slots=tuple(node.value.tolist()), host_slots=tuple(node.host_value.tolist()), issued=True, tokens=len(host_indices), threshold=self.load_back_threshold)
        self.evictable_size_ += len(device_indices)  # step: load.evictable
        if tr.active: tr.emit("load.evictable", K.EVICTABLE, (last_hit_node,), old=self.evictable_size_ - len(device_indices), new=self.evictable_size_, why="loaded")
        self.inc_lock_ref(last_hit_node)
        if tr.active: tr.emit("load.result", K.RESULT, (last_hit_node,), loaded=len(device_indices), slots=tuple(device_indices.tolist()))
        return device_indices  # step: load.result

    def init_load_back(self, last_host_node: TreeNode, mem_quota: int | None = None):
        """``(device slots loaded, node)``: loads the host-only stretch ending at
        ``last_host_node`` if it can; otherwise nothing and the deepest node on the device."""
        tr = self.transfer_tracer
        outer = tr.op
        tr.op = outer or "load_back"
        last_node = last_host_node
        if not self._in_tree(last_node) and "load_back_unprotected" not in self.head_bugs:
            # radixviz: a host eviction deleted it after the match (SGLang takes it on trust)
            while not self._in_tree(last_node) or last_node.evicted:
                last_node = last_node.parent
            tr.op = outer
            return self._empty, last_node
        if last_node.evicted:
            loading_values = self.load_back(last_node, mem_quota)
            if loading_values is not None:
                tr.op = outer
                return loading_values, last_node
            while last_node.evicted:
                last_node = last_node.parent
        tr.op = outer
        return self._empty, last_node

    def _report_lost_child(self, x: TreeNode, v: TreeNode | None, key: Hashable) -> None:
        """A head bug deleted ``x`` already: SGLang's ``assert v == x`` (9fbe6800a :994)
        stops the scheduler here. radixviz puts back what the pop took from the wrong place,
        drops ``x`` from the candidates (or every later host eviction would free its slots
        once more) and stops the operation (cache_head_bugs.py)."""
        if v is not None:
            x.parent.children[key] = v
        self.evictable_host_leaves.remove(x, gone=True)
        why = (f"evict_host: node #{x.id} was already deleted (its parent no longer holds it); "
               f"its host slots {x.host_value.tolist()} were just freed again. SGLang's "
               f"assert at hiradix_cache.py:994 stops the scheduler here")
        self.head_bug_reports.append(why)   # before the step, so its picture carries it
        if self.transfer_tracer.active: self.transfer_tracer.emit("evict_host.assert", K.RESULT, (x,), host_slots=tuple(x.host_value.tolist()), report=why, tier="host")
        raise HeadBugStop(why)

    def _deepest_device_node(self, node: TreeNode):
        """``node`` or its nearest ancestor that is in the tree with a device copy."""
        while node is not self.root_node and (not self._in_tree(node) or node.evicted):
            node = node.parent
        return node

    def _in_tree(self, node: TreeNode) -> bool:
        """Whether ``node`` is still reachable from the root (a deleted node keeps its parent
        link, but its parent no longer holds it)."""
        while node is not self.root_node:
            parent = node.parent
            if parent is None or parent.children.get(self.get_child_key_fn(node.key, extra_key=node.extra_key)) is not node:
                return False
            node = parent
        return True

    def ready_to_load_host_cache(self) -> int:
        """Start the copies of every load queued; return the tokens copied (SGLang: just
        before the batch that needs them runs)."""
        tokens = self.cache_controller.start_loading()  # step: load.copy
        if tokens and self.transfer_tracer.active: self.transfer_tracer.emit("load.copy", K.LOAD, (), tokens=tokens, issued=True, started=True)
        return tokens

    def _emit_heap(self, step: str, heap: list, num_tokens: int,  # type: ignore[override]
                   writing: int = 0) -> None:
        """The candidates in pop order with the policy's key of each: the heap SGLang builds
        (either tier's; today's cache has one tier, and its ``evict`` is replaced here)."""
        ranked = sorted(heap)
        self.transfer_tracer.emit(step, K.HEAP, tuple(n for _, _, n in ranked), policy=self.eviction_policy,
                                  target=num_tokens, keys=tuple((n.id, k) for k, _, n in ranked),
                                  tier="host" if step.startswith("evict_host") else "device", writing=writing)

