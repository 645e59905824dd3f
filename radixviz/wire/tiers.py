"""What a stream's fields mean to a reader: each medium as its tier, each namespace by name.

SGLang's ``StorageMedium`` (``disaggregation/kv_events.py`` in v0.5.23) names four tiers:
``GPU`` (L1, device memory), ``CPU_PINNED`` (L2, host memory), ``DISK`` (L3) and
``EXTERNAL`` (L4, a shared or remote pool). vLLM's offloading says ``CPU``. A stored block's
namespace is its adapter (``lora_name``, v0.5.23 and vLLM; ``lora_id`` at 9fbe6800a, always
None there) and its ``cache_salt`` (v0.5.23): v0.5.23 folds both into the hashes it sends, so
each namespace is a tree of its own (docs/wire.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .blocks import Block

TIERS = {"GPU": "device", "CPU_PINNED": "host", "CPU": "host", "DISK": "disk", "EXTERNAL": "external"}
TIER_ORDER = ("device", "host", "disk", "external")


def tier_name(medium: str | None) -> str:
    """``"host (CPU_PINNED)"``: the tier a medium is, and the name the stream gave it."""
    if medium is None:
        return "no medium"
    tier = TIERS.get(medium)
    return f"{tier} ({medium})" if tier else f"{medium} (a medium radixviz does not know)"


def tier_rank(medium: str | None) -> int:
    """Device first, then host, disk, external, then anything else."""
    tier = TIERS.get(medium or "")
    return TIER_ORDER.index(tier) if tier else len(TIER_ORDER)


def namespace_name(block: Block) -> str | None:
    """``"adapter math · salt s1"``, or None for a block in no namespace the stream names."""
    parts = []
    if block.lora_name is not None:
        parts.append(f"adapter {block.lora_name}")
    elif block.lora_id is not None:
        parts.append(f"lora {block.lora_id}")
    if block.cache_salt is not None:
        parts.append(f"salt {block.cache_salt}")
    return " · ".join(parts) or None
