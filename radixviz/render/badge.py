"""The engine badge every view starts its status with: which matcher, or which engine."""
from __future__ import annotations

from .views import badge, load_views


def engine_badge(tree) -> tuple[str, str]:
    """``(text, tone)`` for the tree's engine, as its snapshot's type says it (render/views/):
    the 2024 engine names its matcher (#7), tone ``buggy`` or ``fixed``; another engine its
    settings (``2026 · page 4 · lru``), tone ``engine``."""
    load_views(tree)
    return badge(tree)
