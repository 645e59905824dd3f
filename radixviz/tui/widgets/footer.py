"""A footer that fits more keys on a narrow terminal and never shows half a key.

Below ``COMPACT_BELOW`` columns it drops the padding around each key (Textual's compact
footer). The keys are listed in the order of the screen's bindings, so the ones that must
stay visible at 80 columns (step, operation, help, home, quit) come first; the lesser ones
that no longer fit are left out whole instead of being cut by the palette key ("s▏^p").
Which keys fit is worked out while composing, from the widths the footer's CSS gives each
key, so leaving them out costs no second layout and repaint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.reactive import Reactive
from textual.widgets import Footer

if TYPE_CHECKING:
    from typing import Any
    from textual.screen import Screen


class FittingFooter(Footer):
    # the compact footer gives the palette key a right margin, and the last column then
    # showed a letter of the keys scrolled under it ("^p paletter")
    DEFAULT_CSS = """
    FittingFooter.-compact FooterKey.-command-palette { margin-right: 0; padding-right: 1; }
    """
    COMPACT_BELOW = 100
    _composed_for: tuple | None = None

    def compose(self):
        self._composed_for = self._shown_bindings() if self._bindings_ready else None
        compact = self.app.size.width < self.COMPACT_BELOW
        self.set_reactive(Footer.compact, compact)
        self.set_class(compact, "-compact")
        keys = list(super().compose())
        palette = [key for key in keys if key.has_class("-command-palette")]
        for key in keys:
            if key not in palette:   # Footer binds the others' compact to its own, not this one
                prepare_compact(key, compact)
        # the palette key also has its left bar and a right padding
        room = self.app.size.width - sum(key_width(key, compact) + 2 for key in palette)
        for key in keys:
            if key in palette:
                continue
            room -= key_width(key, compact) + (1 if compact else 0)   # compact: a margin
            if room < 0:
                break
            yield key
        yield from palette

    def bindings_changed(self, screen: Screen[Any]) -> None:
        # a focus change republishes the bindings even when the keys shown stay the same
        # (an Input's own bindings are hidden): composing twenty keys again for nothing cost
        # a lesson about 50 ms each time its prediction took or gave back the focus
        if self._composed_for is not None and screen is self.screen \
                and self._shown_bindings() == self._composed_for:
            return
        super().bindings_changed(screen)

    def _shown_bindings(self) -> tuple:
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple((key, binding.action, binding.description, enabled, tooltip)
                     for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
                     if binding.show or key == palette)

    def on_resize(self) -> None:
        self.call_after_refresh(self.recompose)   # another width: other keys fit


def prepare_compact(key, compact: bool) -> None:
    """Give a key the compact value and class that the footer's binding (``data_bind``) would
    give it at mount, before it is mounted. Otherwise the key's own default (compact) toggles
    its ``-compact`` class on at mount and the binding toggles it off again, and each toggle
    restyles the key at once: two stylesheet passes for each of twenty keys every time the
    footer is composed (a tenth of a sandbox's start-up, 6% of the CPU of the 500 tests a
    change to the 2024 engine's _split_node picks, profiled). With both set already, neither
    toggle changes anything. The palette key is not bound (Textual's Footer keeps it compact)."""
    reactive = getattr(type(key), "compact", None)
    if isinstance(reactive, Reactive):   # a key (a group's label has no compact of its own)
        key.set_reactive(reactive, compact)
        key.set_class(compact, "-compact", update=False)


def key_width(key, compact: bool) -> int:
    """Cells a key takes: its key and description, plus the padding Footer's CSS gives them
    (normal: " k desc ", compact: "k desc"). ``key`` is one of the widgets ``Footer.compose``
    yields (Textual's ``FooterKey``, which it keeps private: read through its public
    ``key_display`` and ``description`` only)."""
    text = cell_len(key.key_display) + cell_len(key.description)
    return text + (1 if compact else 3) if key.description else cell_len(key.key_display) + 2
