"""The host tier's write policies: when a node's KV is copied from the device to the host.

SGLang's hierarchical cache (#2693, 2025-02-24 UTC) backs nodes up to host memory by one of
three policies (``--hicache-write-policy``, ``write_through`` by default at 9fbe6800a):

- ``write_through``: a node is written as soon as an insert counts its first hit, so in
  practice every node is backed up when it is created;
- ``write_through_selective``: only at its second hit (a prefix that came back once);
- ``write_back``: never while it is on the device; eviction writes it first and only then
  frees its device slots (hit counts are not kept at all under this policy).

A write locks the node (its device slots must stay while they are copied) until the copy is
acknowledged; a write-back needs no lock, because eviction waits for it there and then.
Light on purpose: the parser and the registry read these names without loading torch.
"""
from __future__ import annotations

WRITE_POLICY_NAMES = ("write_through", "write_through_selective", "write_back")

# hit count at which a node not yet backed up is written (SGLang's write_through_threshold)
WRITE_THROUGH_THRESHOLD = {"write_through": 1, "write_through_selective": 2, "write_back": 2}

# a host-only stretch shorter than this is recomputed rather than loaded back
LOAD_BACK_THRESHOLD = 10

WRITE_POLICY_SUMMARY = {
    "write_through": "back up every node at its first hit (when it is inserted)",
    "write_through_selective": "back up a node at its second hit only",
    "write_back": "back up a node only when it is evicted from the device",
}


def check_write_policy(policy: str) -> str:
    """``policy`` as the engine takes it (lower case); ValueError names the choices."""
    name = str(policy).lower().replace("-", "_")
    if name not in WRITE_POLICY_NAMES:
        raise ValueError(f"unknown write policy {policy!r}: choose one of {', '.join(WRITE_POLICY_NAMES)}")
    return name
