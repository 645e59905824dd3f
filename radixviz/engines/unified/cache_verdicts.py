"""Each component's verdict on every node of a match's walk, read off the nodes without
changing them: the rules of the validators (cache_swa.py ``_SWAValidator``, cache_mamba.py's
``DataValidator``), as a list a view, a preview and the simulation's per-component hit rate
read. SGLang's match keeps only the deepest node all accept; this keeps why each other one
was refused, and how far each component alone would let a match go.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

NO_WINDOW = "a tombstone: its sliding-window KV is gone"
NO_STATE = "no Mamba state was kept at its end"


class Step(NamedTuple):
    """One node of a walk, as the rules see it (None: the tree has no such component)."""
    node: int
    tokens: int            # tokens the walk took from this node's edge
    swa: bool | None       # it holds SWA KV
    state: bool | None     # it holds a Mamba state at the end of what the walk took


class Verdict(NamedTuple):
    node: int
    end: int                              # tokens from the root to where the walk left the node
    refused: tuple[tuple[str, str], ...]  # (component, why) of each component that refused it


def judge(steps: Iterable[Step], window: int | None) -> list[Verdict]:
    """Every step's verdict, from the root down."""
    out, end, run = [], 0, float("inf")
    for step in steps:
        end += step.tokens
        refused = []
        if step.swa is not None:
            if not step.swa:
                run = 0
                refused.append(("swa", NO_WINDOW))
            else:
                run += step.tokens
                if window is None or run < window:
                    refused.append(("swa", f"only {run:g} of the {window} window tokens since the last tombstone"))
        if step.state is not None and not step.state:
            refused.append(("mamba", NO_STATE))
        out.append(Verdict(step.node, end, tuple(refused)))
    return out


def reach(verdicts: list[Verdict], component: str | None = None) -> int:
    """How many tokens a match reaches where ``component`` alone judges (None: all of them;
    ``"full"``: the whole walk, as the Full KV alone would)."""
    best = 0
    for verdict in verdicts:
        if component == "full" or not any(c == component or component is None for c, _ in verdict.refused):
            best = verdict.end
    return best
