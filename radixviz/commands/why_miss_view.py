"""The one screen of ``radixviz why-miss``: both prompts where they part, then each cause."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

CONTEXT = 12   # tokens shown on each side of where the prompts part


def _token(t, text: bool) -> str:
    if text and isinstance(t, int) and 32 <= t < 127:
        return chr(t)
    return f"⟨{t}⟩" if text else f"{t} "


def token_words(token) -> str:
    """A token of a text prompt (a UTF-8 byte) as a person reads it: 'w', a space, ⟨195⟩."""
    if token == 32:
        return "a space"
    return repr(chr(token)) if isinstance(token, int) and 32 < token < 127 else f"⟨{token}⟩"


def _row(tokens, start: int, common: int, reused: int, page: int, text: bool) -> Text:
    """Tokens from ``start``: reused green, shared but recomputed yellow, the rest red for
    the first differing token, plain after; a ``|`` at each page boundary."""
    out = Text("…" if start else "")
    for i in range(start, min(len(tokens), common + CONTEXT)):
        if page > 1 and i and i % page == 0:
            out.append("|", style="dim")
        style = "green" if i < reused else "yellow" if i < common else "bold red" if i == common else ""
        out.append(_token(tokens[i], text), style=style)
    if len(tokens) > common + CONTEXT:
        out.append("…")
    return out


def draw(result, text: bool = True, svg: str | None = None) -> None:
    console = Console(record=svg is not None)
    page = result.settings["page_size"]
    start = max(0, result.common - CONTEXT)
    console.print(f"B reuses {result.reused} of its {len(result.b)} tokens; A and B share the first "
                  f"{result.common}", highlight=False)
    console.print(Text("A  ") + _row(result.a, start, result.common, result.reused, page, text))
    console.print(Text("B  ") + _row(result.b, start, result.common, result.reused, page, text))
    console.print(Text.assemble(("reused", "green"), "  ", ("shared but computed again", "yellow"), "  ",
                                ("first different token", "bold red"),
                                f"  | a page of {page}" if page > 1 else ""))
    if result.causes:
        table = Table(show_header=True)
        table.add_column("cause", no_wrap=True)
        table.add_column("tokens", justify="right")
        table.add_column("why")
        for cause in result.causes:
            table.add_row(cause.kind.replace("_", " "), f"{cause.tokens_lost:,}", cause.message)
        console.print(table)
    else:
        console.print("no miss: B reuses everything it shares with A but its last token's page")
    floors = ", ".join(f"page {p}: {n}" for p, n in result.page_floors.items())
    console.print(f"tokens B would reuse at each page size (no eviction): {floors}", highlight=False)
    if svg is not None:
        console.save_svg(svg, title="radixviz why-miss")
        console.print(f"saved {svg}", highlight=False)
