"""The engine badge every view starts its status with: which matcher, or which engine."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .views import badge, load_views

if TYPE_CHECKING:
    from ..cache.snapshot import TreeSnapshot


def engine_badge(tree: TreeSnapshot) -> tuple[str, str]:
    """``(text, tone)`` for the tree's engine, as its snapshot's type says it (render/views/):
    the 2024 engine names its matcher (#7), tone ``buggy`` or ``fixed``; another engine its
    settings (``2026 · page 4 · lru``), tone ``engine``."""
    load_views(tree)
    return badge(tree)
