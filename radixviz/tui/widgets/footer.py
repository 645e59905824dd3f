"""A footer that fits more keys on a narrow terminal and never shows half a key.

Below ``COMPACT_BELOW`` columns it drops the padding around each key (Textual's compact
footer). The keys are listed in the order of the screen's bindings, so the ones that must
stay visible at 80 columns (step, operation, help, home, quit) come first; the lesser ones
that no longer fit are hidden whole instead of being cut by the palette key ("s▏^p").
"""
from __future__ import annotations

from textual.widgets import Footer


class FittingFooter(Footer):
    # the compact footer gives the palette key a right margin, and the last column then
    # showed a letter of the keys scrolled under it ("^p paletter")
    DEFAULT_CSS = """
    FittingFooter.-compact FooterKey.-command-palette { margin-right: 0; padding-right: 1; }
    """
    COMPACT_BELOW = 100

    def on_resize(self) -> None:
        self.compact = self.app.size.width < self.COMPACT_BELOW
        self.call_after_refresh(self.recompose)   # keys hidden at a smaller size come back

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._hide_cut_keys)

    def _hide_cut_keys(self) -> None:
        keys = list(self.query("FooterKey"))
        palette = [key for key in keys if key.has_class("-command-palette")]
        edge = palette[0].region.x if palette else self.region.right
        for key in keys:
            if not key.has_class("-command-palette") and key.display and key.region.right > edge:
                key.display = False
