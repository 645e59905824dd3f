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


def _causes(console: Console, result) -> None:
    if not result.causes:
        console.print("no miss: B reuses everything it shares with A")
        return
    table = Table(show_header=True)
    table.add_column("cause", no_wrap=True)
    table.add_column("tokens", justify="right")
    table.add_column("why")
    for cause in result.causes:
        table.add_row(cause.kind.replace("_", " "), f"{cause.tokens_lost:,}", cause.message)
    console.print(table)


def _parting(console: Console, parting: dict) -> None:
    where = f" in {parting['message']}" if parting.get("message") else ""
    console.print(Text.assemble(f"they part at token {parting['token']}{where}: …", parting["before"][-30:]))
    console.print(Text.assemble("  A: ", (parting["a_after"], "yellow")))
    console.print(Text.assemble("  B: ", (parting["b_after"], "yellow")))
    if parting.get("reason"):
        console.print(f"likely: {parting['reason']}", highlight=False)


def draw(result, text: bool = True, svg: str | None = None) -> None:
    console = Console(record=svg is not None)
    if result.settings.get("recording"):
        _draw_recorded(console, result)
    else:
        page = result.settings["page_size"]
        start = max(0, result.common - CONTEXT)
        loaded = f" ({result.loaded_back} loaded back from the host)" if result.loaded_back else ""
        console.print(f"B reuses {result.reused} of its {len(result.b)} tokens{loaded}; A and B share the "
                      f"first {result.common}", highlight=False)
        console.print(Text("A  ") + _row(result.a, start, result.common, result.reused, page, text))
        console.print(Text("B  ") + _row(result.b, start, result.common, result.reused, page, text))
        console.print(Text.assemble(("reused", "green"), "  ", ("shared but computed again", "yellow"), "  ",
                                    ("first different token", "bold red"),
                                    f"  | a page of {page}" if page > 1 else ""))
        if result.parting:
            _parting(console, result.parting)
        _causes(console, result)
        floors = ", ".join(f"page {p}: {n}" for p, n in result.page_floors.items())
        console.print(f"tokens B would reuse at each page size (no eviction): {floors}", highlight=False)
    if result.not_checked:   # a hybrid model's causes, unless its layout was given
        console.print(f"not checked: {result.not_checked}", style="dim", highlight=False)
    if svg is not None:
        console.save_svg(svg, title="radixviz why-miss")
        console.print(f"saved {svg}", highlight=False)


def _draw_recorded(console: Console, result) -> None:
    s = result.settings
    when = f"after batch {s['at_seq']}" if s["at_seq"] is not None else "at the recording's end"
    console.print(f"on the recorded server ({when}), B reuses {result.reused} of its {len(result.b)} tokens "
                  f"(rank {s['rank']}, {s['namespace'] or 'no namespace'}, pages of {s['page_size']})",
                  highlight=False)
    table = Table(show_header=True, title="B's leading tokens the server held")
    for name in ("rank", "medium", "namespace", "tokens"):
        table.add_column(name, justify="right" if name == "tokens" else "left")
    for held in s["held"]:
        table.add_row(str(held["rank"]), held["medium"] or "none", held["namespace"] or "none",
                      f"{held['pages'] * s['page_size']:,}")
    console.print(table)
    _causes(console, result)
