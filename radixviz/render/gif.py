"""Frames for slides and handouts: an animated GIF, or a PDF with one step a page.

Graphviz draws each frame as PNG (captioned with the step's number and what it did); Pillow
lays the frames on canvases of one size, so the picture does not jump between steps.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import io
import textwrap

from radixviz.script import explain

from .slides import DARK_BACKGROUND, DARK_TEXT, LIGHT_BACKGROUND, frame_dot, render_many, step_caption

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ..script.frames import Frame

GIF_DPI, PDF_DPI = 72, 110


def _pngs(frames: Sequence[Frame], total: int, theme: str, dpi: int, max_edge: int) -> list:
    """Each frame as PNG bytes, captioned (compressed: a long run fits in memory)."""
    dots = [_with_dpi(frame_dot(f, theme, title=step_caption(f, total), max_edge=max_edge), dpi)
            for f in frames]
    return render_many(dots, "png")


def _with_dpi(dot_text: str, dpi: int) -> str:
    head, rest = dot_text.split("\n", 1)
    return f'{head}\n  graph [dpi="{dpi}", pad="0.2"];\n{rest}'


def _background(theme: str):
    from PIL import ImageColor   # Pillow: only for a GIF or PDF export, not at start-up
    return ImageColor.getrgb(DARK_BACKGROUND if theme == "dark" else LIGHT_BACKGROUND)


def _canvases(pngs: list, theme: str, extra_height: int = 0):
    """Each picture centred at the top of a canvas as large as the largest, one at a time
    (opening a PNG reads only its header, so the size is known before any is decoded)."""
    from PIL import Image   # Pillow: only for a GIF or PDF export, not at start-up
    sizes = [Image.open(io.BytesIO(data)).size for data in pngs]
    width = max(w for w, _ in sizes)
    height = max(h for _, h in sizes) + extra_height
    for data, (w, _) in zip(pngs, sizes):
        canvas = Image.new("RGB", (width, height), _background(theme))
        canvas.paste(Image.open(io.BytesIO(data)).convert("RGB"), ((width - w) // 2, 0))
        yield canvas


def _paletted(image):
    from PIL import Image   # Pillow: only for a GIF or PDF export, not at start-up
    # a palette per frame: a mark's colour may first appear many frames in
    return image.quantize(colors=128, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)


def write_gif(frames: Sequence[Frame], total: int, *, theme: str = "light", fps: float = 2.0,
              max_edge: int = 24) -> bytes:
    """An animated GIF, one frame per given frame, looping; returns its bytes."""
    paletted = [_paletted(canvas) for canvas in _canvases(_pngs(frames, total, theme, GIF_DPI, max_edge), theme)]
    buffer = io.BytesIO()
    paletted[0].save(buffer, "GIF", save_all=True, append_images=paletted[1:],
                     duration=round(1000 / fps), loop=0, disposal=1, optimize=False)
    return buffer.getvalue()


def write_pdf(frames: Sequence[Frame], total: int, *, theme: str = "light", title: str = "",
              max_edge: int = 24) -> bytes:
    """A PDF handout: one frame a page, with the step's explanation under the tree."""
    from PIL import Image, ImageDraw, ImageFont   # Pillow: only for a GIF or PDF export, not at start-up
    pngs = _pngs(frames, total, theme, PDF_DPI, max_edge)
    font_size = max(12, PDF_DPI // 6)
    font = ImageFont.load_default(size=font_size)
    tree_height = max(Image.open(io.BytesIO(data)).height for data in pngs)
    width = max(Image.open(io.BytesIO(data)).width for data in pngs)
    columns = max(40, width // max(1, int(font.getlength("m"))))
    notes = [textwrap.wrap(explain(f), columns) for f in frames]
    line_height = int(font_size * 1.4)
    ink = DARK_TEXT if theme == "dark" else "#1f2328"
    pages = []
    for page, lines in zip(_canvases(pngs, theme, extra_height=line_height * (max(map(len, notes)) + 2)), notes):
        draw = ImageDraw.Draw(page)
        y = tree_height + line_height // 2
        for line in lines:
            draw.text((line_height, y), line, font=font, fill=ink)
            y += line_height
        if title:
            draw.text((line_height, page.height - line_height), title, font=font, fill="#8c959f")
        pages.append(_paletted(page))
    buffer = io.BytesIO()
    pages[0].save(buffer, "PDF", save_all=True, append_images=pages[1:], resolution=PDF_DPI,
                  title=title or "radixviz")
    return buffer.getvalue()
