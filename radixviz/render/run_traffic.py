"""The scheduler screen's whole-run line: the policy's share of the best any order could do
(the paper's optimum, sim/optimum.py) and its time to first token (sim/latency.py).

Unlike the running totals beside it, these are for the whole run, whatever batch is shown:
the optimum is a property of all the prompts, and a percentile needs every request.
"""
from __future__ import annotations

from rich.text import Text


def run_traffic_text(policy: str, traffic: dict) -> Text:
    """``traffic`` is ``SimResult.traffic``; an empty one (nothing measured) says so."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" whole run, {policy}:", style="bold")
    optimum, latency = traffic.get("optimum"), traffic.get("latency")
    if not optimum and not latency:
        text.append(" no optimum or TTFT measured")
        return text
    if optimum:
        share = optimum.get("share_of_optimal")
        best = optimum["optimal_hit_rate"]
        if share is None:
            text.append(f" the best is {best:.1%}")
        else:
            text.append(f" {share:.1%}", style="bold")
            text.append(f" of the best {best:.1%}")
            if not optimum.get("condition_holds", True):
                text.append(" bound only")
    if latency:
        ttft, missed = latency["ttft_passes"], latency["missed"]
        text.append(" · TTFT p95 ")
        text.append(f"{ttft['p95']} passes", style="bold")
        # the missed requests' own p95 (the #31954 question) before the median: 80 columns
        # end about here
        if missed["requests"]:
            text.append(f" · {missed['requests']} missed, p95 {missed['p95_passes']}")
        text.append(f" · p50 {ttft['p50']}")
    return text
