"""What SGLang's 9fbe6800a write_back bugs did, in lines under the host pool's grid.

With a head bug on (engines/hicache/cache_head_bugs.py) a node can leave the tree while the cache
still holds it, host slots can be freed twice, and SGLang's file can reach an ``assert``
that would stop its scheduler. The snapshot carries all three; these lines name them, so a
pool picture says whose slots the ``?``, ``!`` and ``×`` cells are.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from radixviz.cache.text import slot_ranges, tokens_text

if TYPE_CHECKING:
    from .snapshot import HiTreeSnapshot

BROKEN = "bold red"


def damage_lines(tree: HiTreeSnapshot) -> list[Text]:
    """Lines on the head bugs' damage ([] when none is on, or nothing is broken)."""
    if not getattr(tree, "head_bugs", ()):
        return []
    lines = []
    for _, key, device, host in tree.unreachable:
        where = []
        if device:
            where.append(f"device slots {slot_ranges(device)}")
        if host:
            where.append(f"host slots {slot_ranges(host)}")
        # named by its tokens, as the tree names nodes (its number is nowhere on screen)
        name = tokens_text(key[:24]) + ("…" if len(key) > 24 else "")
        lines.append(Text(f"✗ {name!r} is out of the tree, nobody can reach it; it still holds "
                          f"{' and '.join(where) or 'nothing'}", style=BROKEN))
    if tree.host_accounting:
        lines.append(Text(f"✗ {tree.host_accounting}", style=BROKEN))
    for report in tree.reports[-2:]:
        lines.append(Text(f"✗ {report}", style=BROKEN))
    return lines
