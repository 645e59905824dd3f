"""The engine badge every view starts its status with: which matcher, or which engine."""
from __future__ import annotations

from radixviz.cache.engines import engine_spec


def engine_badge(tree) -> tuple[str, str]:
    """``(text, tone)`` for the tree's engine: the 2024 engine names its matcher (#7), tone
    ``buggy`` or ``fixed``; an engine without the switch its settings (``2026 · page 4 ·
    lru``), tone ``engine``."""
    spec = engine_spec(tree.engine)
    if spec.matcher_switch:
        return ("matcher BUGGY", "buggy") if tree.buggy_match else ("matcher fixed", "fixed")
    if tree.settings.get("head_bugs"):
        # the host tier's 9fbe6800a bugs are on: red, and "hicache BUGS" stays when a narrow
        # line shrinks the badge to its first part (the step counter must fit at 80 columns)
        return spec.badge(tree.settings).replace(" · BUGS ", " BUGS · ", 1), "buggy"
    return spec.badge(tree.settings), "engine"
