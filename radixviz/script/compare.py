"""The same operations run twice, once per matcher, step by step side by side (#7).

No UI: ``run --compare``, ``export --compare`` and the app's compare view read this.
"""
from __future__ import annotations

from dataclasses import dataclass

from .parser import ScriptError
from .session import Session

# what a node id or a lock's node says depends on how many splits came before: not a
# difference in what the operation did
_IDS = ("last_node", "node", "disagreement")


@dataclass
class SideBySide:
    ops: list
    fixed: Session
    buggy: Session
    diverged: int | None = None        # index of the first operation whose outcome differs
    error: ScriptError | None = None   # the operation refused (by either side) that stopped both

    @property
    def count(self) -> int:
        return min(len(self.fixed.records), len(self.buggy.records))

    def differs(self, index: int) -> bool:
        """Whether operation ``index`` returned something else, or left another tree."""
        a, b = self.fixed.records[index], self.buggy.records[index]
        if _outcome(a.result) != _outcome(b.result):
            return True
        return _shape(self.fixed.frames[a.last_frame].tree) != _shape(self.buggy.frames[b.last_frame].tree)


def compare_ops(ops, pool_size: int, device="auto") -> SideBySide:
    """Apply ``ops`` to a session starting with the fixed matcher and one starting with the
    buggy one; stop both at the first operation either refuses. A ``matcher`` line in the
    ops switches its session where it stands, as in a plain run."""
    side = SideBySide(list(ops), Session(pool_size, buggy=False, device=device),
                      Session(pool_size, buggy=True, device=device))
    for index, op in enumerate(side.ops):
        try:
            side.fixed.precheck(op)
            side.buggy.precheck(op)
        except ScriptError as exc:
            side.error = exc
            break
        side.fixed.apply(op)
        side.buggy.apply(op)
        if side.diverged is None and side.differs(index):
            side.diverged = index
    return side


def _outcome(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in _IDS}


def _shape(tree) -> tuple:
    """The tree without ids or access times: edges, slots and reference counts."""
    def walk(node):
        return (node.key, tuple(node.value), node.ref, tuple(walk(c) for c in node.children))
    return walk(tree.root)
