"""What the other matcher would say about a match, as Rich Text (the stepper's narration
shows it under the step)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from radixviz.script import key_text, slot_ranges

if TYPE_CHECKING:
    from ..script.frames import Frame

WRONG_STYLE = "bold red underline"


def disagreement_text(record, buggy_now: bool) -> Text | None:
    """For a match the two matchers answer differently: both counts, wrong tokens marked."""
    if record is None or record.op.name != "match":
        return None
    diff = record.result.get("disagreement")
    if not diff:
        return None
    key = record.op.key
    text = Text()
    if buggy_now:
        text.append(f"✗ The fixed matcher (#7) would return {diff['fixed']} token(s); "
                    f"this buggy walk returns {diff['buggy']}. ", style="bold")
    else:
        text.append(f"The buggy matcher (pre-#7) would return {diff['buggy']} token(s) here, "
                    f"not {diff['fixed']}. ", style="bold")
    text.append("Key: ")
    wrong_from, wrong_to = diff["wrong_from"], max(diff["fixed"], diff["buggy"])
    text.append(key_text(key[:wrong_from], limit=10**6)[1:-1], style="green")
    # brackets as well as colour, so the wrong tokens read in monochrome
    text.append("⟦" + key_text(key[wrong_from:wrong_to], limit=10**6)[1:-1] + "⟧", style=WRONG_STYLE)
    text.append(key_text(key[wrong_to:], limit=10**6)[1:-1])
    text.append(f"  ⟦…⟧ slots {slot_ranges(diff['wrong_slots'])} belong to another context.")
    return text


def misalignment_text(record, frame: Frame) -> Text | None:
    """For a match over nodes that hold fewer slots than tokens (``insert-slots release``,
    #4), on the step where the match returns: how many tokens matched against how many
    slots came back, and the first position whose slot belongs to another token."""
    if record is None or record.op.name != "match" or frame.kind != "result":
        return None
    shifted = record.result.get("misaligned")
    if not shifted:
        return None
    key, slots = record.op.key, record.result["slots"]
    tokens, count, wrong = shifted["tokens"], shifted["slots"], shifted["from"]
    text = Text()
    text.append(f"⚠ Misaligned (#4): the walk matched {tokens} tokens {key_text(key[:tokens])} "
                f"but only {count} slots came back. ", style="bold red")
    if wrong:
        text.append(f"Positions 0–{wrong - 1} {key_text(key[:wrong])} get their own K/V; ")
    if wrong < count:
        text.append("from position ")
        text.append(f"{wrong} {key_text(key[wrong:wrong + 1])}", style=WRONG_STYLE)
        text.append(f" on, every slot holds a later token's K/V (position {wrong} gets slot "
                    f"{slots[wrong]}): the slots are shifted by {tokens - count}")
    else:
        text.append(f"from position {wrong} on the tokens have no slot at all")
    text.append(f", and the last {tokens - count} token(s) get none. An insert kept one slot "
                "fewer than its tokens (insert-slots release).")
    return text
