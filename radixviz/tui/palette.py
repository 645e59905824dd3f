"""The command palette (ctrl+p): every binding of the screen in front, by its description."""
from __future__ import annotations

from functools import partial

from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit, Hits, Provider


def _screen_actions(screen) -> list[tuple[str, str, str]]:
    """(title, action, key) for each distinct action the screen binds, in binding order."""
    seen, out = set(), []
    for binding in getattr(screen, "BINDINGS", ()):
        key, action, description = binding.key, binding.action, binding.description
        if action in seen or not description:
            continue
        seen.add(action)
        out.append((binding.tooltip or description, action, key.split(",")[0]))
    return out


_KEY_NAMES = {"right_square_bracket": "]", "left_square_bracket": "[", "question_mark": "?",
              "colon": ":", "plus": "+", "minus": "-", "equals_sign": "=", "space": "space",
              "right": "→", "left": "←", "escape": "esc", "pageup": "pgup", "pagedown": "pgdn"}


def key_label(keys: str) -> str:
    """A binding's keys ("right,space,n") as a learner types them ("→ space n")."""
    return " ".join(_KEY_NAMES.get(k, k) for k in keys.split(","))


class ScreenActions(Provider):
    """Offers the actions of the active screen."""

    def _actions(self):
        screen = self.screen
        for title, action, key in _screen_actions(screen):
            yield title, partial(screen.run_action, action), f"key: {key_label(key)}"

    async def discover(self) -> Hits:
        for title, callback, help_text in self._actions():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._actions():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class SafeCommandPalette(CommandPalette):
    """Textual's palette, minus a crash: page keys before the list has been laid out
    (Textual 8 indexes an empty line map and raises KeyError)."""

    def _action_command_list(self, action: str) -> None:
        if action.startswith("page"):
            commands = self.query_one(CommandList)
            laid_out = getattr(commands, "_index_to_line", {})
            if not (self._list_visible and (commands.highlighted or 0) in laid_out):
                return
        super()._action_command_list(action)
