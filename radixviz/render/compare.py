"""``radixviz run --compare``: the same operations in two columns, side by side.

The columns are the two matchers of the 2024 engine (#7) or, across time, the 2024 engine
and the 2026 engine. One table of what each operation returned in each column (the first
operation whose outcome differs is marked), then both final trees and pools next to each other.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from radixviz.script import slot_ranges

from .summary import op_result
from .tree import TreeView

if TYPE_CHECKING:
    from radixviz.script.session import Session
    from ..script.compare import SideBySide

FIXED, BUGGY = "fixed matcher (#7)", "buggy matcher (pre-#7)"
FIRST = "◀ first divergence"


# across time only what both engines report is compared; the rest is each engine's own
COMPARED = ("Compared: what each operation returned (tokens matched, slots, evictions) and the "
            "trees' edges, slots and locks (2024 ref, 2026 lock_ref). Times, hit counts and "
            "priorities are each engine's own: shown, not compared.")


SLOTS_COUNTED = ("The columns' pools number their slots differently (the unified engine's is SGLang's "
                 "allocator: slot 0 never, a freed slot to the back of the list): slots are compared by "
                 "count, not number.")


def divergence_line(side: SideBySide) -> Text:
    if side.diverged is None:
        return Text(f"Both {side.noun} give the same results and trees for every operation.")
    op = side.ops[side.diverged]
    return Text(f"They part ways at operation {side.diverged + 1}: {op.text}", style="bold")


def ops_table(side: SideBySide) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
    table.add_column("op", justify="right", no_wrap=True)
    table.add_column("operation", ratio=1)
    left, right = (FIXED, BUGGY) if not side.across_engines else side.titles()
    table.add_column(left, ratio=2)
    table.add_column(right, ratio=2)
    for index in range(side.count):
        fixed, buggy = side.left.records[index], side.right.records[index]
        differs = side.differs(index)
        note = f"  {FIRST}" if index == side.diverged else ("  ≠" if differs else "")
        table.add_row(str(index + 1), Text(side.ops[index].text), Text(op_result(fixed)),
                      Text(op_result(buggy) + note, style="bold red" if differs else ""))
    return table


def final_state(session: Session, title: str) -> Group:
    frame = session.frames[-1] if session.frames else session.live_frame()
    pool = frame.pool
    returned = [r.result["slots"] for r in session.records if r.op.name == "match"]
    lines: list[RenderableType] = [Text(title, style="bold"), TreeView(frame.tree, frame.marks)]
    if returned:
        lines.append(Text(f"last match returned slots {slot_ranges(returned[-1])} "
                          f"({len(returned[-1])} token(s))"))
    lines.append(Text(f"pool: {pool.used}/{pool.size} slots used, {pool.free} free"))
    return Group(*lines)


def compare_view(side: SideBySide) -> Group:
    """Everything ``run --compare`` prints, as one renderable."""
    states = Table.grid(expand=True, padding=(0, 2))
    states.add_column(ratio=1)
    states.add_column(ratio=1)
    titles = side.titles() if side.across_engines else (FIXED, BUGGY)
    states.add_row(*(final_state(s, t) for s, t in zip(side.sessions, titles)))
    head = [divergence_line(side)]
    if side.across_engines:
        head.append(Text(COMPARED if side.same_slots else f"{COMPARED} {SLOTS_COUNTED}", style="dim"))
    return Group(*head, Text(""), ops_table(side), Text(""), states)
