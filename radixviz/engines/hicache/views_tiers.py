"""Where a node's KV lives, as every view of the host-tier engine says it.

A tag in brackets (words, so it reads in monochrome): ``[GPU]`` on the device only, ``[CPU]``
on the host only, ``[GPU+CPU]`` on both, ``[GPU→CPU]`` while a write to the host is in
flight and ``[CPU→GPU]`` while a load back is. Slots read ``slots 0–11 · host 20–31``, with
``—`` for a tier the node is not on.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from radixviz.render.marks import compact_ranges

if TYPE_CHECKING:
    from .snapshot import HiNodeSnapshot, HiTreeSnapshot
    from radixviz.cache import TreeSnapshot


# tier -> (tag, Rich style, Graphviz border colour, fill, legend words)
TIERS = {
    "device": ("GPU", "green", "#1a7f37", "white", "on the device (GPU) only"),
    "host": ("CPU", "blue", "#0550ae", "#eef4ff", "on the host (CPU) only"),
    "both": ("GPU+CPU", "cyan", "#0969da", "white", "on both tiers"),
    "write": ("GPU→CPU", "bold yellow", "#9a6700", "#fff8c5", "write to the host in flight"),
    "load": ("CPU→GPU", "bold yellow", "#9a6700", "#fff8c5", "load back in flight"),
}


def tier_of(node: HiNodeSnapshot) -> str:
    """``device``, ``host``, ``both``, or ``write``/``load`` while a copy is in flight."""
    return node.in_flight or node.tier


def tier_tag(node: HiNodeSnapshot) -> tuple[str, str]:
    """``("[GPU+CPU]", "cyan")``: the node's tag and its style."""
    tag, style, *_ = TIERS[tier_of(node)]
    return f"[{tag}]", style


def tier_slots(node: HiNodeSnapshot, sep: str = " · ") -> str:
    """``slots 0–11 · host 3–14``; ``—`` where the node has no copy."""
    device = "—" if node.evicted else compact_ranges(node.value)
    host = "—" if node.host_value is None else compact_ranges(node.host_value)
    return f"slots {device}{sep}host {host}"


def tier_legend(tree: TreeSnapshot) -> Text:
    """The tags the tree uses, with their words, in a fixed order."""
    used = {tier_of(n) for n in tree.root.walk() if n.key}
    line = Text(no_wrap=True, overflow="ellipsis")
    for name, (tag, style, _, _, words) in TIERS.items():
        if name in used:
            if line:
                line.append("  ")
            line.append(f"[{tag}] {words}", style=style)
    return line


def host_summary(tree: HiTreeSnapshot) -> str:
    """``host 24/65 · 1 writing``, for headers and captions."""
    parts = [f"host {tree.host_used}/{tree.host_size}"]
    if tree.writes_in_flight:
        parts.append(f"{tree.writes_in_flight} writing")
    if tree.loads_in_flight:
        parts.append(f"{tree.loads_in_flight} loading")
    return " · ".join(parts)
