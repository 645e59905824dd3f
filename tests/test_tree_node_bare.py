"""A node made with no arguments looks as SGLang's does (the checks of SGLang's own
``TestTreeNode`` in test/registered/unit/mem_cache/test_radix_cache_unit.py at 9fbe6800a:
ids from a class counter, no key, no value, nothing locked or hit, no host copy, no hashes)."""
import pytest
import torch

from radixviz.engines.hicache.node import TreeNode as HostNode
from radixviz.engines.v2026.node import TreeNode as DeviceNode


@pytest.fixture(autouse=True)
def counter_from_zero():
    saved = DeviceNode.counter
    DeviceNode.counter = 0
    yield
    DeviceNode.counter = saved


@pytest.mark.parametrize("cls", [DeviceNode, HostNode], ids=["2026", "hicache"])
def test_a_bare_node_has_nothing_set(cls):
    node = cls()
    assert node.id == 0 and not node.children and node.parent is None
    assert node.key is None and node.value is None and node.hash_value is None
    assert node.lock_ref == 0 and node.hit_count == 0


def test_a_bare_host_node_has_no_host_copy():
    node = HostNode()
    assert node.host_ref_counter == 0 and node.host_value is None


def test_an_explicit_id_still_advances_the_counter():
    assert HostNode(id=42).id == 42
    assert HostNode().id == 1 and DeviceNode().id == 2


def test_evicted_and_backuped_read_the_two_tiers():
    for device, host in ((False, False), (True, False), (True, True), (False, True)):
        node = HostNode()
        if device:
            node.value = torch.tensor([1, 2, 3])
        if host:
            node.host_value = torch.tensor([4, 5, 6])
        assert (node.evicted, node.backuped) == (not device, host)


def test_the_engines_root_still_has_an_empty_key():
    from radixviz.script import Session
    for engine in ("2026", "hicache"):
        session = Session(device="cpu", engine=engine)
        assert session.cache.root_node.key == ()
        session.run('insert "abc"\ninsert "abd"')
        assert all(child.key is not None for child in session.cache.root_node.children.values())
