"""The unified tree's own kinds of step, and the tracer that carries them.

The shared kinds (``radixviz/cache/trace.py``) cover walking, comparing, splitting, creating,
freeing, deleting and locking; a unified tree also asks each component's validator, evicts
one component while the node stays, cascades an eviction to the lower components, restores
a tombstone and copies a Mamba state. The shared kinds are open (an
Event's ``kind`` is any str: trace.py), so these pass through the same Event.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from ...cache.trace import Tracer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class UnifiedKind(str, enum.Enum):
    VALIDATE = "validate"      # each component's validator judged a node the walk reached
    WALK = "walk"              # the walk passed a node's Full KV (returned only if a node at or below is accepted)
    TOMBSTONE = "tombstone"    # one component's data left a node; the node stays
    CASCADE = "cascade"        # an eviction took a lower component's data on the same node with it
    RECOVER = "recover"        # an insert gave an SWA tombstone inside the window its data back
    STATE = "state"            # a component's data was attached to a node (SWA slots, a Mamba state)
    COPY = "copy"              # a match copied a Mamba state into the request's own slot
    WINDOW = "window"          # an SWA lock stamped the boundary of the window it holds
    BRANCH = "branch"          # where the request should keep a state or window for next time


class WingTracer(Tracer):
    """A Tracer whose steps may be the unified tree's own kinds as well as the shared ones."""

    __slots__ = ()

    def emit(self, step: str, kind: str, nodes: Sequence[Any] = (), **data: Any) -> None:
        self.emit_from(self.source, step, kind, nodes, data)


class WingBranch:
    """A module's view of the WingTracer: its steps carry that module as their source."""

    __slots__ = ("root", "source")

    def __init__(self, root: WingTracer, source: str) -> None:
        self.root, self.source = root, source

    @property
    def active(self) -> bool:
        return self.root.active

    def emit(self, step: str, kind: str, nodes: Sequence[Any] = (), **data: Any) -> None:
        self.root.emit_from(self.source, step, kind, nodes, data)
