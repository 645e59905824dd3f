"""What the scheduler screen says about one batch, as Rich Text lines.

Every verdict has a symbol as well as a colour so the lists read in monochrome.
No Textual and no torch here: the pool is any object with ``size``, ``refcounts`` and
``state(slot)`` (a ``PoolSnapshot``).
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from radixviz.cache.engines import engine_spec
from radixviz.sim.engines import hooks_class

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ..sim.admission import Decision
    from ..sim.records import BatchRecord

_WRAPPER = Console(width=10_000, color_system=None)  # only wraps Text, never prints
MAX_ROWS = 300   # a queue of thousands is summarised after this many rows

# Decision.reason -> (symbol, short word, style)
VERDICTS = {
    "fits": ("✓", "admitted", "bold green"),
    "does not fit": ("✗", "no room", "red"),
    "does not fit once its prefix is locked": ("↶", "no room once locked", "yellow"),
    "prefill token cap reached": ("≥", "prefill cap", "yellow"),
}
HELD_BACK = ("⏸", "held back", "cyan")   # the hold-back option (stricter than SGLang ever was)
SORTED_LAST = ", sorted last (#2442)"
NOT_REACHED = ("·", "not reached: no free request row", "dim")

# SimEvent.kind -> (symbol, style)
EVENTS = {
    "retracted": ("↩", "bold yellow"),
    "prefill-deferred": ("↩", "yellow"),
    "refused": ("⊘", "bold red"),
    "stuck": ("⊘", "bold red"),
    "follow-up": ("↪", "cyan"),
}
ADMITTED, DECODING, FINISHED = ("+", "bold green"), ("▸", ""), ("✔", "dim")

POOL_KINDS = (  # (state, symbol, style, words), in bar order
    ("tree", "■", "green", "tree"),
    ("shared", "2", "bold magenta", "shared"),
    ("request", "□", "yellow", "request"),
    ("free", "·", "dim", "free"),
)


def _line() -> Text:
    return Text(no_wrap=True, overflow="ellipsis")


def _verdict(decision: Decision):
    if decision.reason.startswith("held back"):
        symbol, word, style = HELD_BACK
    else:
        symbol, word, style = VERDICTS.get(decision.reason, ("✗", decision.reason, "red"))
    if getattr(decision, "sorted_last", False):
        word += SORTED_LAST
    return symbol, word, style


def queue_lines(record: BatchRecord, width: int = 80) -> tuple[str, list[Text]]:
    """(pane title, lines): the queue in the order the policy offered places, with the
    admission rule's numbers for each request it looked at."""
    if not record.queue_order:
        title = "waiting queue"
        lines = [Text("No admission round in this pass: the running batch decodes.", style="dim")]
        if not record.waiting_view:
            return title, lines + [Text("The queue is empty.", style="dim")]
        head = _line()
        head.append(f"  {'req':>5} {'hit':>5} {'prompt':>6}", style="bold")
        lines.append(head)
        for v in record.waiting_view[:MAX_ROWS]:
            line = _line()
            line.append(f"  {'#' + str(v.rid):>5} {v.prefix_len:>5} {v.input_len:>6}")
            lines.append(line)
        return title, lines + _more(len(record.waiting_view))
    title = "queue in policy order" if record.admitted else "queue: nobody fits, decode instead"
    decided = {d.rid: d for d in record.decisions}
    head = _line()
    head.append(f"  {'req':>5} {'hit':>5} {'need':>5} {'room':>7} {'Δlock':>5}", style="bold")
    lines = [head]
    for rid, prefix in record.queue_order[:MAX_ROWS]:
        d = decided.get(rid)
        line = _line()
        if d is None:
            symbol, word, style = NOT_REACHED
            line.append(f"{symbol} {'#' + str(rid):>5} {prefix:>5}", style=style)
            _word(line, word, width, "dim")
        else:
            symbol, word, style = _verdict(d)
            line.append(f"{symbol} {'#' + str(rid):>5} ", style=style)
            line.append(f"{d.prefix_len:>5} {d.need:>5} {d.available:>7g} {d.lock_delta:>5}")
            _word(line, word, width, style)
        lines.append(line)
    lines += _more(len(record.queue_order))
    lines.append(Text("need = new prompt + max new + batch so far; admitted while "
                      "need < room + Δlock", style="dim"))
    lines.append(verdict_legend())
    return title, lines


def _word(line: Text, word: str, width: int, style: str) -> None:
    """The verdict in words where the pane has room (the symbol and legend always say it)."""
    if line.cell_len + 2 + len(word) <= width:
        line.append(f"  {word}", style=style)


def verdict_legend() -> Text:
    legend = Text()
    for symbol, word, style in (*VERDICTS.values(), HELD_BACK, ("·", "not reached", "dim")):
        legend.append(f"{symbol} {word}  ", style=style)
    legend.rstrip()
    return legend


def _more(count: int) -> list[Text]:
    if count <= MAX_ROWS:
        return []
    return [Text(f"… {count - MAX_ROWS} more", style="italic dim")]


def running_lines(record: BatchRecord, width: int = 80) -> tuple[str, list[Text]]:
    """(pane title, lines): the batch after this pass, then who left it and why."""
    admitted = set(record.admitted)
    title = f"running batch: {len(record.running)}"
    if record.kind == "prefill" and admitted:
        title += f", {len(admitted)} admitted"
    lines = []
    if record.running_view:
        head = _line()
        head.append(f"  {'req':>5} {'prompt':>6} {'hit':>5} {'out':>7}", style="bold")
        lines.append(head)
    for v in record.running_view[:MAX_ROWS]:
        symbol, style = ADMITTED if v.rid in admitted else DECODING
        line = _line()
        line.append(f"{symbol} {'#' + str(v.rid):>5} ", style=style)
        line.append(f"{v.input_len:>6} {v.prefix_len:>5} {f'{v.output_len}/{v.max_new}':>7}")
        if v.rid in admitted:
            _word(line, "admitted", width, style)
        lines.append(line)
    lines += _more(len(record.running_view))
    if not record.running_view:
        lines.append(Text("Nothing is running.", style="dim"))
    for rid in record.finished:
        lines.append(Text(f"{FINISHED[0]} #{rid} finished: its tokens go into the tree",
                          style=FINISHED[1]))
    for event in record.events:
        symbol, style = EVENTS.get(event.kind, ("!", "bold"))
        line = Text()   # wraps: these messages say why, they must be read whole
        line.append(f"{symbol} #{event.rid} {event.kind}: ", style=style)
        line.append(event.message)
        lines.append(line)
    lines.append(batch_legend())
    return title, lines


def batch_legend() -> Text:
    legend = Text()
    marks = ((ADMITTED, "admitted"), (DECODING, "decoding"), (FINISHED, "finished"),
             (EVENTS["retracted"], "retracted"), (EVENTS["refused"], "refused"),
             (EVENTS["follow-up"], "next turn"))
    for (symbol, style), word in marks:
        legend.append(f"{symbol} {word}  ", style=style or "dim")
    legend.rstrip()
    return legend


def pool_lines(pool, evictable: int, width: int, height: int = 4) -> list[Text]:
    """A map of the pool squeezed into what ``height`` lines leave after the counts, each
    cell showing the state most of its slots are in, then the counts."""
    width = max(8, width)
    states = [pool.state(slot) for slot in range(pool.size)]
    counts = Counter(states)
    entries = [Text(f"{symbol} {words} {counts[state]}", style=style)
               for state, symbol, style, words in POOL_KINDS]
    entries.append(Text(f"evictable {evictable}", style="bold"))
    legend = pack(entries, width)
    rows = max(1, height - len(legend))
    cells = min(pool.size, width * rows)
    style_of = {state: (symbol, style) for state, symbol, style, _ in POOL_KINDS}
    out, line = [], _line()
    for cell in range(cells):
        lo, hi = cell * pool.size // cells, (cell + 1) * pool.size // cells
        state = Counter(states[lo:hi]).most_common(1)[0][0]
        symbol, style = style_of[state]
        line.append(symbol, style=style)
        if (cell + 1) % width == 0:
            out.append(line)
            line = _line()
    if line:
        out.append(line)
    return out + legend


def pack(entries: Sequence[Text], width: int) -> list[Text]:
    """Entries side by side, a new line where the next one would not fit (never inside one)."""
    lines = [_line()]
    for entry in entries:
        if lines[-1] and lines[-1].cell_len + 2 + entry.cell_len > width:
            lines.append(_line())
        if lines[-1]:
            lines[-1].append("  ")
        lines[-1].append_text(entry)
    return lines


def wrap(lines: Sequence[Text], width: int) -> list[Text]:
    """Wrap the lines meant to be read whole (those not marked no_wrap) to ``width``."""
    out = []
    for line in lines:
        if line.no_wrap or line.cell_len <= width:
            out.append(line)
        else:
            out.extend(line.wrap(_WRAPPER, max(8, width)))
    return out


def status_text(timeline) -> Text:
    """The header line: where we are first (it matters most at 80 columns), then the settings."""
    s, record = timeline.settings, timeline.record
    text = Text(no_wrap=True, overflow="ellipsis")
    if record is None:
        text.append(" no batches ran", style="bold")
    else:
        text.append(f" batch {timeline.index + 1}/{len(timeline)} {record.kind}", style="bold")
        if record.kind == "prefill":
            text.append(f" +{len(record.admitted)}")
        if record.finished:
            text.append(f", {len(record.finished)} done")
    text.append(f"  │ {timeline.workload} · {s['policy']} · seed {s['seed']} · "
                f"{s.get('requests', '?')} req · {s['pool_size']} slots")
    spec = engine_spec(s["engine"])
    if not hooks_class(spec).loop_own_cache:   # another engine's cache in the 2024 loop: name it and its settings
        text.append(f" · {', '.join((f'{spec.name} cache', *spec.words(s)))}")
    return text


def summary_text(totals) -> Text:
    """The running totals up to this batch."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" hit {totals.hit_rate:.1%}", style="bold")
    host = totals.host_hit_tokens
    text.append(f" · reused {totals.hit_tokens:,}" + (f" ({host:,} from host)" if host else "") + " · computed "
                f"{totals.prefill_computed + totals.decode_computed:,} · evicted "
                f"{totals.evicted_tokens:,} · ")
    # the running pane's marks: finished, retracted, refused
    text.append(f"{FINISHED[0]}{totals.finished} {EVENTS['retracted'][0]}{totals.retracted} "
                f"{EVENTS['refused'][0]}{totals.refused}")
    return text
