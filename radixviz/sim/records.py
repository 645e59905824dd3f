"""What a simulation reports: events, one record per forward pass, and totals.

Everything here is plain immutable data (tuples, ints, snapshots), safe to keep and show
later; ``to_dict`` gives the JSON form.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import asdict, dataclass, field

if TYPE_CHECKING:
    from .request import Request


@dataclass(frozen=True, slots=True)
class SimEvent:
    """Something a learner should notice: ``kind`` is one of refused, retracted,
    follow-up, prefill-deferred, stuck. (Finished requests are in BatchRecord.finished,
    held-back ones in the admission decisions.)"""
    batch: int
    kind: str
    rid: int
    message: str


@dataclass(frozen=True, slots=True)
class RequestView:
    """A request as it stood after a pass (for drawing the queue and the running batch)."""
    rid: int
    input_len: int
    output_len: int
    max_new: int
    prefix_len: int          # what its latest match hit
    times_retracted: int


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """One forward pass: a prefill of newly admitted requests or one decode step.

    ``queue_order`` lists (rid, prefix_len) in the order the policy offered places (prefill
    rounds only); ``decisions`` the admission rule's verdict for each; ``running`` the
    requests in flight after the pass. ``tree``, ``refcounts`` and the two request views
    (``waiting_view`` in queue order, ``running_view``) are empty when the simulation was
    run with ``record=False``.
    """
    index: int
    kind: str                   # "prefill" or "decode"
    queue_order: tuple
    decisions: tuple            # admission.Decision
    admitted: tuple             # rids
    running: tuple              # rids after this pass
    finished: tuple             # rids that finished in this pass
    waiting: int                # requests still waiting after this pass
    hit_tokens: int             # prefix tokens reused by this prefill
    computed_tokens: int        # tokens whose KV this pass computed
    evicted_tokens: int
    pool_used: int
    evictable: int
    events: tuple               # SimEvent
    tree: object = None         # TreeSnapshot
    refcounts: tuple | None = None
    waiting_view: tuple = ()    # RequestView, in queue order
    running_view: tuple = ()    # RequestView
    host_hit_tokens: int = 0    # of hit_tokens, those loaded back from the host (engine hicache)

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "index", "kind", "admitted", "running", "finished", "waiting", "hit_tokens",
            "computed_tokens", "evicted_tokens", "pool_used", "evictable")}
        out["queue_order"] = [list(x) for x in self.queue_order]
        for name in ("decisions", "events", "waiting_view", "running_view"):
            out[name] = [asdict(item) for item in getattr(self, name)]
        return out


def view(req: Request) -> RequestView:
    return RequestView(req.rid, len(req.input_ids), len(req.output_ids), req.max_new_tokens,
                       req.prefix_len, req.times_retracted)


@dataclass(slots=True)
class SimStats:
    """Running totals; ``hit_rate`` is reused prefix tokens over all prompt tokens prefilled."""
    requests: int = 0
    finished: int = 0
    refused: int = 0
    retracted: int = 0
    delayed: int = 0          # requests #2442's rule sorted last, counted once per round
    held_back: int = 0        # requests the hold-back rule refused, once per round
    fallback_rounds: int = 0  # v0.5.23's scheduler: rounds lpm or hrrn ran as fcfs (128+ waiting)
    prefill_batches: int = 0
    decode_steps: int = 0
    hit_tokens: int = 0
    prefill_computed: int = 0
    decode_computed: int = 0
    evicted_tokens: int = 0
    peak_pool_used: int = 0
    # a host-tier engine (hicache): prompt tokens loaded back from the host at admission (part
    # of hit_tokens), and the engine's transfers over the run (tokens copied or dropped)
    host_hit_tokens: int = 0
    host_tier: dict = field(default_factory=dict)
    # priority -> [finished requests, their prompt tokens, of those taken from the cache]
    by_priority: dict = field(default_factory=dict)
    # an engine's own totals, by the words its report shows them with (its loop hooks'
    # ``finish`` writes them; sim/engines/): empty for an engine that keeps none
    engine_totals: dict = field(default_factory=dict)

    def note_finished(self, req: Request) -> None:
        """Count a finished request's prompt and the hit of the prefill that ran it."""
        counts = self.by_priority.setdefault(req.priority, [0, 0, 0])
        counts[0] += 1
        counts[1] += len(req.input_ids)
        counts[2] += req.prefix_len

    @property
    def device_hit_tokens(self) -> int:
        """Hit tokens that were already on the device when the request was admitted."""
        return self.hit_tokens - self.host_hit_tokens

    def priority_hit_rate(self, priority: int) -> float:
        """Hit rate of the finished requests of one priority (their last admission)."""
        _, prompt, hit = self.by_priority.get(priority, (0, 0, 0))
        return hit / prompt if prompt else 0.0

    @property
    def batches(self) -> int:
        return self.prefill_batches + self.decode_steps

    @property
    def hit_rate(self) -> float:
        total = self.hit_tokens + self.prefill_computed
        return self.hit_tokens / total if total else 0.0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["by_priority"] = {str(p): {"finished": n, "prompt_tokens": prompt, "hit_tokens": hit,
                                       "hit_rate": round(self.priority_hit_rate(p), 6)}
                              for p, (n, prompt, hit) in sorted(self.by_priority.items())}
        out["batches"] = self.batches
        out["hit_rate"] = round(self.hit_rate, 6)
        out["tokens_reused"] = self.hit_tokens
        out["tokens_computed"] = self.prefill_computed + self.decode_computed
        if self.host_tier:
            out["device_hit_tokens"] = self.device_hit_tokens
        else:
            del out["host_tier"], out["host_hit_tokens"]
        if not self.engine_totals:
            del out["engine_totals"]
        return out


@dataclass(slots=True)
class SimResult:
    """A finished run: its settings, totals, every event, and (when recorded) every pass."""
    settings: dict
    stats: SimStats
    events: list = field(default_factory=list)
    records: list = field(default_factory=list)
    outputs: dict = field(default_factory=dict)   # rid -> generated token ids
    # what runner.replay adds (drive.py): the optimum beside the hit rate, latency
    traffic: dict = field(default_factory=dict)

    def to_dict(self, with_records: bool = False) -> dict:
        out = {"settings": dict(self.settings), "stats": self.stats.to_dict(),
               "events": [asdict(e) for e in self.events], **self.traffic}
        if with_records:
            out["records"] = [r.to_dict() for r in self.records]
        return out
