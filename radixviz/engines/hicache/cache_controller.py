"""Moving KV between the tiers: SGLang's ``HiCacheController`` (``managers/cache_controller.py``)
without its storage threads.

``write`` takes host slots for a device stretch and starts the copy at once; ``load`` takes
device slots for a host stretch and queues it, and ``start_loading`` copies everything
queued (SGLang starts loads just before the batch that needs them runs). Each copy ends in
an acknowledgement queue: ``ack_write_queue`` and ``ack_load_queue`` hold ``Ack``s, oldest
first, each with the event that tells when the copy is done and the node ids it serves. The
cache reads those queues when it checks (``writing_check``, ``loading_check``): the copy is
issued at one step and acknowledged at a later one.

On a CUDA pool the copies run on two side streams (one for writes, one for loads), ordered
after the work already queued on the current stream by a start event, and each ends with a
finish event, as SGLang's do; a write lands in pinned staging tensors and is filed into the
host buffers once its event has completed. On the CPU a copy is a plain tensor copy, done
before ``write``/``start_loading`` return, and its event reports done at once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

if TYPE_CHECKING:
    from radixviz.cache.pool import TokenToKVPool
    from .cache_host_pool import TokenToKVPoolHost


class DoneEvent:
    """The CPU's stand-in for a CUDA event: the copy it follows finished when it was made."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def record(self, stream: object = None) -> None:
        return None


class Ack(NamedTuple):
    """One issued copy: its events and the ids of the nodes it serves."""
    start_event: object
    finish_event: object
    node_ids: list
    finish: object = None       # CUDA writes: files the staged rows once the copy is done


class CacheOperation(NamedTuple):
    host_indices: torch.Tensor
    device_indices: torch.Tensor
    node_ids: list


def merge_ops(ops: list) -> CacheOperation:
    """Queued operations as one copy (SGLang merges every write or load queued together)."""
    if len(ops) == 1:
        return ops[0]
    return CacheOperation(torch.cat([op.host_indices for op in ops]),
                          torch.cat([op.device_indices for op in ops]),
                          [i for op in ops for i in op.node_ids])


class HiCacheController:
    def __init__(self, mem_pool_device: TokenToKVPool, mem_pool_host: TokenToKVPoolHost, page_size: int,
                 write_policy: str = "write_through") -> None:
        self.mem_pool_device_allocator = mem_pool_device  # radixviz's pool allocates and holds the KV
        self.mem_pool_device = mem_pool_device
        self.mem_pool_host = mem_pool_host
        self.page_size = page_size
        self.write_policy = write_policy
        self.is_cuda = mem_pool_device.device.type == "cuda"
        self.write_queue: list = []
        self.load_queue: list = []
        self.ack_write_queue: list = []
        self.ack_load_queue: list = []
        if self.is_cuda:
            self.write_stream = torch.cuda.Stream(device=mem_pool_device.device)
            self.load_stream = torch.cuda.Stream(device=mem_pool_device.device)

    def reset(self) -> None:
        self.write_queue.clear()
        self.load_queue.clear()
        self.ack_write_queue.clear()
        self.ack_load_queue.clear()

    def write(self, device_indices: torch.Tensor, node_id: int = -1) -> torch.Tensor | None:
        """Back up ``device_indices`` to newly taken host slots and start the copy; return the
        host slots, or None when the host pool has too few free."""
        host_indices = self.mem_pool_host.alloc(len(device_indices))
        if host_indices is None:
            return None
        self.write_queue.append(CacheOperation(host_indices, device_indices, [node_id]))
        self.start_writing()
        return host_indices

    def start_writing(self) -> None:
        if not self.write_queue:
            return
        op = merge_ops(self.write_queue)
        self.write_queue.clear()
        if not self.is_cuda:
            self.mem_pool_host.backup_from_device_all_layer(self.mem_pool_device, op.host_indices,
                                                            op.device_indices)
            self.ack_write_queue.append(Ack(DoneEvent(), DoneEvent(), op.node_ids))
            return
        start_event, finish_event = torch.cuda.Event(), torch.cuda.Event()
        start_event.record()
        with torch.cuda.stream(self.write_stream):
            start_event.wait(self.write_stream)
            device_indices = op.device_indices.to(self.mem_pool_device.device, non_blocking=True)
            staged = self.mem_pool_host.stage_from_device(self.mem_pool_device, device_indices)
            finish_event.record()
        host, indices = self.mem_pool_host, op.host_indices
        self.ack_write_queue.append(Ack(start_event, finish_event, op.node_ids,
                                        lambda: host.scatter_staged(staged, indices)))

    def load(self, host_indices: torch.Tensor, node_id: int = -1) -> torch.Tensor | None:
        """Take device slots for ``host_indices`` and queue the copy (``start_loading`` runs
        it); return the device slots, or None when the device pool has too few free."""
        device_indices = self.mem_pool_device_allocator.alloc(len(host_indices))
        if device_indices is None:
            return None
        self.load_queue.append(CacheOperation(host_indices, device_indices, [node_id]))
        return device_indices

    def start_loading(self) -> int:
        """Copy every queued load to the device; return how many tokens (0: none queued)."""
        if not self.load_queue:
            return 0
        op = merge_ops(self.load_queue)
        self.load_queue.clear()
        host, device = self.mem_pool_host, self.mem_pool_device
        if not self.is_cuda:
            for layer in range(host.layer_num):
                host.load_to_device_per_layer(device, op.host_indices, op.device_indices, layer)
            self.ack_load_queue.append(Ack(DoneEvent(), DoneEvent(), op.node_ids))
            return len(op.host_indices)
        start_event, finish_event = torch.cuda.Event(), torch.cuda.Event()
        start_event.record()
        with torch.cuda.stream(self.load_stream):
            start_event.wait(self.load_stream)
            for layer in range(host.layer_num):
                host.load_to_device_per_layer(device, op.host_indices, op.device_indices, layer)
            finish_event.record()
        # whoever reads the pool next (a forward pass) runs after the load
        torch.cuda.current_stream().wait_event(finish_event)
        self.ack_load_queue.append(Ack(start_event, finish_event, op.node_ids))
        return len(op.host_indices)

    def wait_all(self) -> None:
        """Block until every issued copy has finished (radixviz's ``sync`` then acknowledges
        them all, on a GPU as on the CPU)."""
        for ack in (*self.ack_write_queue, *self.ack_load_queue):
            ack.finish_event.synchronize()

    def evict_device(self, device_indices: torch.Tensor) -> int:
        """Give a node's device slots back (the tree's reference on each); return how many."""
        self.mem_pool_device_allocator.free(device_indices)
        return len(device_indices)

    def evict_host(self, host_indices: torch.Tensor) -> int:
        """Give a node's host slots back; return how many."""
        self.mem_pool_host.free(host_indices)
        return len(host_indices)
