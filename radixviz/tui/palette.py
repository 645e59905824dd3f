"""The command palette (ctrl+p): Textual's system commands plus every key of the screen in
front, offered through the app's ``get_system_commands`` hook."""
from __future__ import annotations

from typing import TYPE_CHECKING

from functools import partial
from collections.abc import Iterator

from textual.actions import parse
from textual.app import SystemCommand

if TYPE_CHECKING:
    from typing import Any
    from textual.screen import Screen

_KEY_NAMES = {"right_square_bracket": "]", "left_square_bracket": "[", "question_mark": "?",
              "colon": ":", "plus": "+", "minus": "-", "equals_sign": "=", "space": "space",
              "right": "→", "left": "←", "escape": "esc", "pageup": "pgup", "pagedown": "pgdn"}


def key_label(keys: str) -> str:
    """A binding's keys ("right,space,n") as a learner types them ("→ space n")."""
    return " ".join(_KEY_NAMES.get(k, k) for k in keys.split(","))


def screen_commands(screen: Screen[Any]) -> Iterator[SystemCommand]:
    """One command per distinct described binding of ``screen``, in binding order, titled by
    its long description; actions the screen disables right now (``check_action``) are left out."""
    seen = set()
    for binding in getattr(screen, "BINDINGS", ()):
        if binding.action in seen or not binding.description:
            continue
        seen.add(binding.action)
        _, name, parameters = parse(binding.action)
        if not screen.check_action(name, parameters):
            continue
        yield SystemCommand(binding.tooltip or binding.description,
                            f"key: {key_label(binding.key)}",
                            partial(screen.run_action, binding.action))
