"""The KV events log: every page the cache reported stored or removed, up to the step shown.

Opened from the stepper with ``k``. It lists the events of the frames up to the current one,
grouped by operation, so stepping back shows fewer: what a router listening to this worker
would have heard by then.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from radixviz.script.kv_text import event_line

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.script.frames import Frame, OpRecord
    from radixviz.tui.stepper_model import StepperModel

OFF = ("KV events are off on this cache. Type  events on  (the 2026 engine) to start an empty "
       "cache that hashes its pages and reports every page it stores and removes, or start "
       "with  radixviz sandbox --events.")
NONE_YET = "No KV events up to this step: insert something, then step through it."


def events_log(frames: Sequence[Frame], upto: int, records: Sequence[OpRecord]) -> Text | Group:
    """The log's text: the events of ``frames[:upto + 1]``, under the operation of each."""
    lines: list = []
    last_op = None
    for frame in frames[:upto + 1]:
        if frame.kind != "kv_event":
            continue
        if frame.op_index != last_op:
            last_op = frame.op_index
            op = records[frame.op_index].op if frame.op_index < len(records) else None
            lines.append(Text(f"{frame.op_index + 1}  {op.text if op else ''}", style="bold"))
        lines.append(Text(f"   ⇢ {event_line(frame.data['event'])}   (step {frame.number})",
                          no_wrap=True, overflow="ellipsis"))
    if not lines:
        return Text(NONE_YET, style="dim")
    stored = sum(1 for f in frames[:upto + 1] if f.kind == "kv_event" and f.data["event"].kind == "stored")
    removed = sum(1 for f in frames[:upto + 1] if f.kind == "kv_event" and f.data["event"].kind == "removed")
    lines.append(Text(f"{stored} stored, {removed} removed so far", style="dim"))
    return Group(*lines)


class KVEventsScreen(ModalScreen[None]):
    """A scrolling log of the session's KV events up to the step shown; any close key ends it."""

    BINDINGS = [Binding("escape,q,k", "dismiss", "Close")]
    DEFAULT_CSS = """
    KVEventsScreen { align: center middle; }
    #kv-box { width: 90%; height: 80%; border: round $accent; padding: 0 1; background: $surface; }
    """

    def __init__(self, model: StepperModel):
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        model = self.model
        tree = model.frame.tree if model.frame is not None else model.session.live_frame().tree
        if not tree.settings.get("kv_events"):
            body: RenderableType = Text(OFF)
        else:
            body = events_log(model.frames, model.position, model.session.records)
        with VerticalScroll(id="kv-box") as box:
            box.border_title = "KV events (k or esc closes)"
            yield Static(body, id="kv-log")
