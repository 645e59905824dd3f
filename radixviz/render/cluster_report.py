"""What ``radixviz simulate --workers`` prints: each router's hit rate, work and balance, the
workers' shares, and charts of hit rate and balance. Every number also comes out of ``--json``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from radixviz.sim.cluster import ClusterResult

BAR = 40
REASONS = ("cache", "low-match", "imbalanced")


def title(header: dict) -> str:
    return (f"{header['workload']}: {header['requests']} requests, {header['workers']} workers × "
            f"{header['pool_size']:,} slots, {header['rate']} arriving per pass, seed {header['seed']}; "
            f"engine {header['engine']}, page {header['page_size']}, policy {header['policy']}")


NOTE = ("each worker: the first release's loop on its own pool and cache, inserting each prompt "
        "after prefill (#418); balance = busiest worker ÷ mean (1.00 is even)")


def warm_line(warm: dict) -> str:
    """``warm start from a.rvkv: worker 0 holds 1,024 tokens (12 prompts), worker 1 …``"""
    held = ", ".join(f"worker {w['worker']} holds {w['held_tokens']:,} tokens ({w['prompts']} prompts"
                     + (f", {w['too_long']} too long for its pool" if w["too_long"] else "") + ")"
                     for w in warm["workers"])
    return f"warm start from {', '.join(warm['files'])}: {held}; every router starts from it"


def shares(result: ClusterResult, what: str, fmt) -> str:
    """``64/60/70/62``: one value per worker."""
    return "/".join(fmt(w[what]) for w in result.per_worker())


def print_cluster(header: dict, results: dict) -> None:
    console = Console(highlight=False)
    console.print(title(header))
    console.print(NOTE, style="dim")
    if "warm_start" in header:
        console.print(warm_line(header["warm_start"]))
    if len(results) == 1:
        print_workers(console, *next(iter(results.items())))
        return
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), caption_justify="left",
                  caption="tokens: computed (prefill + decode); bal, bal tok: busiest worker ÷ mean, "
                          "by requests and by tokens computed; passes: until the last request "
                          "finished; why: routed for cache / low match / imbalance")
    for column in ("router", "hit", "tokens", "passes", "bal", "bal tok", "why"):
        table.add_column(column, justify="left" if column == "router" else "right", no_wrap=True)
    for name, r in results.items():
        reasons = r.reasons()
        why = "/".join(str(reasons.get(k, 0)) for k in REASONS) if name.startswith("cache-aware") else "—"
        table.add_row(name, f"{r.hit_rate:.1%}", f"{r.tokens_computed:,}", f"{r.passes:,}",
                      f"{r.balance('requests'):.2f}", f"{r.balance('tokens_computed'):.2f}", why)
    console.print(table)
    workers = Table(box=box.SIMPLE_HEAD, padding=(0, 1), title="requests · hit rate, per worker")
    workers.add_column("router", no_wrap=True)
    for i in range(header["workers"]):
        workers.add_column(f"w{i}", justify="right", no_wrap=True)
    for name, r in results.items():
        workers.add_row(name, *(f"{w['requests']}·{w['hit_rate']:.0%}" for w in r.per_worker()))
    console.print(workers)
    width = max(len(n) for n in results)
    console.print("cache hit rate (higher is better)")
    for name, r in results.items():
        console.print(f"  {name:>{width}} {bar(r.hit_rate, 1.0, 'green')} {r.hit_rate:6.1%}")
    top = max(max(r.balance('requests') for r in results.values()), 2.0)
    console.print(f"balance: busiest worker's requests ÷ mean (1.00 even, {header['workers']}: one took all)")
    for name, r in results.items():
        value = r.balance("requests")
        console.print(f"  {name:>{width}} {bar(value - 1.0, top - 1.0, 'yellow')} {value:6.2f}")


def print_workers(console: Console, name: str, result: ClusterResult) -> None:
    """One router's run: a row per worker and the totals."""
    table = Table(title=f"router {name}", box=box.SIMPLE_HEAD, padding=(0, 1), caption_justify="left",
                  caption="prompt: prompt tokens routed there; computed: tokens computed (prefill + "
                          "decode); peak: most requests in flight at once; evicted: tokens evicted")
    for column in ("worker", "requests", "prompt", "hit rate", "computed", "peak", "evicted"):
        table.add_column(column, justify="right", no_wrap=True)
    for w in result.per_worker():
        table.add_row(str(w['worker']), f"{w['requests']:,}", f"{w['prompt_tokens']:,}",
                      f"{w['hit_rate']:.1%}", f"{w['tokens_computed']:,}", f"{w['peak_in_flight']:,}",
                      f"{w['evicted_tokens']:,}")
    table.add_row("all", f"{len(result.routes):,}", f"{sum(r.length for r in result.routes):,}",
                  f"{result.hit_rate:.1%}", f"{result.tokens_computed:,}", "", "", style="bold")
    console.print(table)
    console.print(f"{result.passes:,} passes; balance {result.balance('requests'):.2f} by requests, "
                  f"{result.balance('tokens_computed'):.2f} by work")
    reasons = result.reasons()
    console.print("routed because: " + ", ".join(f"{k} {v}" for k, v in reasons.items()))


def bar(value: float, top: float, colour: str) -> str:
    filled = 0 if top <= 0 else max(0, min(BAR, round(value / top * BAR)))
    return f"[{colour}]{'█' * filled}[/{colour}]{'·' * (BAR - filled)}"
