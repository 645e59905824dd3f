"""Pick a node of the tree shown to see its details and lock, unlock or evict it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from radixviz.script import key_text, node_namespace, slot_ranges

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any
    from radixviz.cache import NodeSnapshot
    from radixviz.script.frames import Frame


def _edge(node: NodeSnapshot) -> str:
    return key_text(node.key, limit=28)


class NodePicker(ModalScreen[tuple | None]):
    """Dismisses with (``lock``|``unlock``|``evict``, node id), or None."""

    BINDINGS = [
        Binding("l", "act('lock')", "Lock"),
        Binding("u", "act('unlock')", "Unlock"),
        Binding("x", "act('evict')", "Evict"),
        Binding("escape,q", "close", "Close"),
    ]

    def __init__(self, frame: Frame, locks: Mapping[Any, Any]):
        super().__init__()
        self.frame, self.locks = frame, locks
        # every node except the root, in the tree's depth-first order
        self.nodes = [n for n in frame.tree.root.walk() if n.key]

    def compose(self) -> ComposeResult:
        tree = self.frame.tree
        # edges are the learner's keys: plain text, never markup
        options = [Option(Text(f"{'  ' * (len(tree.path_to(n.id)) - 2)}{_edge(n)}  ref {n.ref}"), id=str(n.id))
                   for n in self.nodes]
        with Vertical(id="node-box"):
            yield Static("Nodes (↑/↓ pick · l lock · u unlock · x evict · esc close)", classes="hint")
            if options:
                yield OptionList(*options, id="node-list")
            else:
                yield Static("The tree has no nodes yet: insert something first.")
            yield Static("", id="node-details")

    def on_mount(self) -> None:
        if self.nodes:
            self.query_one(OptionList).highlighted = 0
            self._details(self.nodes[0])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._details(self.nodes[event.option_index])

    def _selected(self):
        if not self.nodes:
            return None
        index = self.query_one(OptionList).highlighted
        return self.nodes[index] if index is not None else None

    def _details(self, node: NodeSnapshot) -> None:
        tree = self.frame.tree
        full = tuple(t for nid in tree.path_to(node.id) for t in tree.nodes[nid].key)
        ns = node_namespace(tree, node)
        locked = len(self.locks.get((full, ns), ()))
        text = Text()
        text.append(f"node #{node.id}  edge {key_text(node.key, limit=40)}\n", style="bold")
        text.append(f"full key {key_text(full, limit=40)}" + ("" if ns is None else f"  namespace {ns}") + "\n")
        text.append(f"slots {slot_ranges(node.value)}  ref {node.ref}  last access t={node.last_access}"
                    f"  {'leaf' if not node.children else f'{len(node.children)} child(ren)'}\n")
        text.append("l locks the full key (match + inc_ref_counter); u releases a lock made on it"
                    f"{' (one held)' if locked else ''}; x runs evict {len(node.key)}: eviction "
                    "always takes the least recently used unlocked leaves, not a chosen node.",
                    style="dim")
        self.query_one("#node-details", Static).update(text)

    def action_act(self, name: str) -> None:
        node = self._selected()
        if node is not None:
            self.dismiss((name, node.id))

    def action_close(self) -> None:
        self.dismiss(None)
