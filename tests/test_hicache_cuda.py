"""The host tier on a GPU: a pinned host pool, copies on side streams, events acknowledged.

Skipped without CUDA (the machine that runs the suite usually has none); run it where torch
sees a GPU: ``pytest tests/test_hicache_cuda.py``.
"""
from __future__ import annotations

import pytest
import torch

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import open_engine

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def gpu_engine(write_policy="write_through", size=64):
    pool = TokenToKVPool(size, device="cuda")
    return open_engine("hicache", pool, write_policy=write_policy)


def fill(pool, slots):
    """Random K and V in ``slots`` of every layer; returns copies to compare with later."""
    saved = []
    for layer in range(pool.layer_num):
        for buffer in (pool.k_buffer, pool.v_buffer):
            buffer[layer][slots] = torch.randn(len(slots), pool.head_num, pool.head_dim, device="cuda")
            saved.append(buffer[layer][slots].clone())
    return saved


def test_the_host_pool_is_pinned_and_copies_run_on_side_streams():
    e = gpu_engine()
    assert e.host_pool.pin_memory and e.host_pool.k_buffer[0].is_pinned()
    controller = e.cache.cache_controller
    assert controller.is_cuda and controller.write_stream != torch.cuda.current_stream()


@pytest.mark.parametrize("write_policy", ["write_through", "write_back"])
def test_kv_round_trip_through_pinned_host_memory(write_policy):
    e = gpu_engine(write_policy)
    slots = e.pool.alloc(16)
    saved = fill(e.pool, slots)
    e.insert("a" * 16, slots)
    e.sync()                                      # waits for the write's event, then acknowledges
    assert e.evict(16) == 16
    reused = e.pool.alloc(16)                     # the freed slots now hold other KV
    fill(e.pool, reused)
    node = e.match_tiers("a" * 16).last_host_node
    loaded, _ = e.load_back(node)
    e.start_loads()
    torch.cuda.synchronize()
    got = [buffer[layer][loaded.cuda()] for layer in range(e.pool.layer_num)
           for buffer in (e.pool.k_buffer, e.pool.v_buffer)]
    assert all(torch.equal(a, b) for a, b in zip(got, saved))
    e.sync()
    e.check_invariants(held=[reused])


def test_a_check_acknowledges_only_finished_copies_and_sync_all():
    e = gpu_engine()
    slots = e.pool.alloc(32)
    fill(e.pool, slots)
    e.insert("b" * 32, slots)
    assert e.in_flight() == 1
    e.cache.cache_controller.ack_write_queue[0].finish_event.synchronize()
    e.check_events()
    assert e.in_flight() == 0
