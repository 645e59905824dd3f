"""What the other matcher would say about a match, as Rich Text (the stepper's narration
shows it under the step)."""
from __future__ import annotations

from rich.text import Text

from radixviz.script import key_text, slot_ranges

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
