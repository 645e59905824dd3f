"""The first release's scheduler loop, driving our radix cache on a real KV pool.

Python API (no UI: a screen steps it and draws what it returns)::

    from radixviz.sim import Scheduler, make_workload
    sched = Scheduler(pool_size=2048, policy="lpm", seed=0)      # or model=TinyModel(pool)
    sched.submit(make_workload("few-shot", 40, seed=0))
    while (record := sched.step()) is not None:                  # one forward pass each
        record.kind, record.queue_order, record.decisions        # why each was (not) admitted
        record.admitted, record.running, record.finished, record.events
        record.tree, record.refcounts                            # TreeSnapshot, pool counts
        record.waiting_view, record.running_view                 # RequestView per request
    result = sched.result()                                      # SimResult: stats + events

``sched.engine`` (the cache behind radixviz.cache's facade; ``sched.cache`` is the engine's own
object), ``sched.pool``, ``sched.waiting``, ``sched.running`` are live; check them with
``sched.check_invariants()`` between steps.
``record=False`` skips the snapshots (fast runs). ``run()`` steps to the end.

Each ``step()`` is one pass of the release's main loop: match every waiting request, order
them by the policy, admit what fits and prefill it; when nothing can be admitted, decode
the running batch, ten passes in a row before looking at the queue again. A finished
request inserts input + output minus the newest token, whose KV is not computed yet (the
#4 fix of 2024-01-15; the release passed the whole sequence, see ``insert="release"``),
frees the slots the tree already held and unlocks its path.

Three switches, off by default, bring in later SGLang (and one rule it never had):
``delay_shared_prefix`` (#2442's in-batch reordering), ``cache_unfinished`` (#418's insert
after prefill) and ``hold_back_shared_prefix``. ``scheduler="v0.5.23"`` orders, caps the
match and admits as SGLang v0.5.23 does instead (schedule_v0523.py: fcfs by default, lpm
and hrrn falling back past 128 waiting, hrrn and shortest-prefill-first, each match at most
the prompt's length minus one, or its ``logprob_start_len``).

tests/test_sim_reference.py runs an independent loop in the release's shape beside this
one and checks every pass (with #2442 and #418 written in their commits' shape too).
What we changed on purpose (docs/simulation-api.md):

- out of memory: where the release called exit(), a prefill gives requests back to the
  queue and a decode retracts requests, each reported as an event;
- a request that could never fit (pool or context) is refused at submit, where the
  release truncated its prompt or output budget;
- a request finishes at its ``max_new_tokens`` only (no end-of-sequence token);
- ``max_running`` caps the request rows if given; by default the table is the release's
  (pool / context_len x 256 rows), which no workload here runs out of.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import random

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import default_engine, engine_spec, open_engine
from radixviz.cache.options import EngineSettings

from .admission import admit
from .block_units import BlockPrompt
from .defaults import CONTEXT_LEN
from .engines import loop_hooks
from .fake_model import FakeSampler
from .policies import IN_BATCH_POLICIES, IN_BATCH_THRESHOLD, get_policy
from . import schedule_v0523
from .records import BatchRecord, SimEvent, SimResult, SimStats, view
from .request import Request, RequestSpec
from .rows import RequestRows, release_row_count
from . import steps
from .edge_memo import EdgeMemo
from .unit_engine import UnitEngine

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from .model_api import TokenModel


# how much a failed allocation evicts: the whole need, or need minus free (steps.alloc_slots)
ALLOC_EVICT = ("need", "shortfall")


class Scheduler:
    def __init__(self, pool_size: int = 4096, policy: str | None = None, *, seed: int = 0,
                 model: TokenModel | None = None, pool: TokenToKVPool | None = None,
                 context_len: int = CONTEXT_LEN,
                 max_running: int | None = None, decode_steps: int = 10,
                 delay_shared_prefix: bool = False, delay_threshold: int = IN_BATCH_THRESHOLD,
                 hold_back_shared_prefix: bool = False, cache_unfinished: bool = False,
                 record: bool = True, device: str = "cpu", cache_factory=None, insert: str = "fixed",
                 engine: str | None = None, engine_options: dict | None = None,
                 remember_edges: bool = True, alloc_evict: str | None = None,
                 scheduler: str = schedule_v0523.RELEASE_LOOP, logprob_start_len: int | None = None,
                 block_units: bool | None = False):
        """``engine`` names the cache (radixviz.cache.engines; None: the registry's default, the
        first release's) and ``engine_options`` its
        options (``{"page_size": 16}``); ``cache_factory(pool)``, when given, opens it instead.
        ``insert="release"`` finishes requests with the release's insert line (#4): the
        key is all of input + output, the value one slot shorter (the cache runs with
        ``strict=False`` to accept it). ``remember_edges=False``: no EdgeMemo (edge_memo.py),
        every edge compared afresh -- the same passes, slower (tests hold the two alike).
        ``alloc_evict``: how much a failed allocation evicts, ``need`` or ``shortfall``
        (need minus free); None: the engine's SGLang's (``LoopHooks.alloc_evict``).
        ``block_units``: key the engine by runs of tokens (sim/block_units.py: prompts given as
        BlockPrompts, a Mooncake trace's blocks), the same passes as token by token, faster:
        True asks for it (ValueError where this loop cannot: with ``record``, ``insert="release"``,
        v0.5.23's loop, or an engine whose hooks do not allow it), None takes it where the loop can, False
        (the default) keys by tokens; ``self.block_units`` says which.

        Later SGLang, each off by default (docs/simulation-api.md):
        ``delay_shared_prefix``: #2442's in-batch rule under lpm and weight (threshold
        ``delay_threshold``); ``cache_unfinished``: #418's insert of each prompt when its
        prefill ends; ``hold_back_shared_prefix``: a stricter rule SGLang never had, which
        refuses a request that shares ``delay_threshold`` new tokens with a running or
        admitted one.

        ``scheduler="v0.5.23"``: SGLang v0.5.23's ordering, match cap and admission stop
        (schedule_v0523.py); ``policy`` then defaults to fcfs (else lpm, the release's).
        ``logprob_start_len``: every request asks for input logprobs from that token (a
        request's own ``RequestSpec.logprob_start_len`` wins)."""
        if insert not in ("fixed", "release"):
            raise ValueError(f"insert must be fixed or release, not {insert!r}")
        if scheduler not in schedule_v0523.SCHEDULERS:
            raise ValueError(f"scheduler must be one of {', '.join(schedule_v0523.SCHEDULERS)}, not {scheduler!r}")
        if logprob_start_len is not None and (isinstance(logprob_start_len, bool) or not isinstance(
                logprob_start_len, int) or logprob_start_len < 0):
            raise ValueError(f"logprob_start_len must be 0 or more, not {logprob_start_len!r}")
        today = scheduler == schedule_v0523.TODAYS_LOOP
        policy = policy or (schedule_v0523.DEFAULT_POLICY if today else "lpm")
        self.insert = insert
        self.policy = policy
        self.scheduler = scheduler
        self.logprob_start_len = logprob_start_len
        self.round_policy = policy    # the policy the last round ran (v0.5.23's falls back past 128)
        # the most of a request's prompt its match may take (None: all of it, the release's)
        self.prefix_limit: Callable[[Request], int] | None = None
        if today:
            self.order, self.ratio = schedule_v0523.order_for(policy, self), schedule_v0523.POLICIES_0523[policy]
            self.prefix_limit = schedule_v0523.max_prefix_len
        else:
            self.order, self.ratio = get_policy(policy)
        for name, value in (("context_len", context_len), ("max_running", max_running),
                            ("decode_steps", decode_steps), ("delay_threshold", delay_threshold)):
            if name == "max_running" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self.pool = pool if pool is not None else TokenToKVPool(pool_size, device=device)
        # cache_factory(pool) -> the engine for the same loop (engines/v2026/sim.py)
        self._cache_factory = cache_factory
        # the engine's settings object, run whole (the scheduler form makes one), or its options
        self._engine_name = engine or default_engine()
        self._engine_options: EngineSettings | dict = (
            engine_options if isinstance(engine_options, EngineSettings) else dict(engine_options or {}))
        self.engine = self.make_engine()
        # the engine's pool is the loop's: an engine may put its own allocator behind the pool's
        # calls (the unified tree: SGLang's), and the facade's pool is then that object
        self.pool = self.engine.pool
        # what the loop does differently for this engine (sim/engines/): a priority at
        # insert, the host tier's copies checked every round
        self.hooks = loop_hooks(engine_spec(self.engine.name), self)
        self.record = record
        self.block_units = self._units_refusal(block_units) == ""
        if self.block_units:
            self.engine = UnitEngine(self.engine)
        # the loop matches the same prompts round after round: remember whole-edge answers
        # (None where the engine has no edge comparison to wrap; unit keys are short)
        self.edge_memo: EdgeMemo | None = None
        if remember_edges and not self.block_units:
            self.engine.wrap_key_match(self._remembering)
        self.priority_at_insert = self.hooks.priority_at_insert
        if alloc_evict not in (None, *ALLOC_EVICT):
            raise ValueError(f"alloc_evict must be {' or '.join(ALLOC_EVICT)}, not {alloc_evict!r}")
        self.alloc_evict = alloc_evict or self.hooks.alloc_evict
        # the release's request table; a smaller max_running is our option, not the release's
        rows = release_row_count(self.pool.size, context_len) if max_running is None else max_running
        self.req_pool = RequestRows(rows, context_len, device=self.pool.device)
        self.model = model if model is not None else FakeSampler(seed)
        self.context_len = context_len
        # the release's two batch limits: one prefill takes at most max(context length, a
        # sixth of the pool) new tokens; no new batch while more than half the pool's
        # count of requests run
        self.max_prefill_tokens = max(context_len, self.pool.size // 6)
        self.max_running_gate = self.pool.size // 2
        self.decode_steps = decode_steps
        # #2442 applies to lpm and weight only, as in SGLang: under fcfs and random it is a no-op
        # (v0.5.23's order applies the rule itself, always)
        self.in_batch_threshold = (delay_threshold if delay_shared_prefix and policy in IN_BATCH_POLICIES
                                   and not today else None)
        self.hold_back_threshold = delay_threshold if hold_back_shared_prefix else None
        self.cache_unfinished = cache_unfinished
        self.rng = random.Random(seed)
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.stats = SimStats()
        self.events: list[SimEvent] = []
        self.records: list[BatchRecord] = []
        self.outputs: dict = {}
        self.settings = {"policy": policy, "pool_size": self.pool.size, "seed": seed,
                         "context_len": context_len, "max_running": rows,
                         "row_limit": "release" if max_running is None else "option",
                         "decode_steps": decode_steps, "delay_shared_prefix": delay_shared_prefix,
                         "hold_back_shared_prefix": hold_back_shared_prefix,
                         "cache_unfinished": cache_unfinished,
                         "estimation_ratio": self.ratio, "model": type(self.model).__name__,
                         "insert": insert, "engine": self.engine.name, "alloc_evict": self.alloc_evict,
                         "priorities": "at insert" if self.priority_at_insert else "ignored"}
        # what the run used, as --json and the app's status line report it
        self.settings.update(scheduler_loop=scheduler, logprob_start_len=logprob_start_len,
                             **self.engine.reported_settings())
        self._next_rid = 0
        self._decodes_left = 0
        self._pass = 0            # index of the next record
        self._pass_events: list[SimEvent] = []
        self._evicted = 0
        self._last_attempt: tuple | None = None   # a prefill round that admitted nobody, shown with the decode

    def _units_refusal(self, asked: bool | None) -> str:
        """Why this loop does not key by block units ("" when it does), ValueError if asked."""
        why = ("" if asked is not False else "not asked") or (
            "the run keeps records (the views show tokens)" if self.record else
            "the release's insert (#4) is one slot short of a token" if self.insert != "fixed" else
            "v0.5.23's loop matches a prompt one token short, inside its last block"
            if self.prefix_limit is not None else
            f"engine {self.engine.name} counts or frees by more than its values' length"
            if not self.hooks.block_units else "")
        if why and asked:
            raise ValueError(f"block_units: {why}")
        return why

    def _remembering(self, key_match):
        """The engine's comparison, remembered by this loop's own EdgeMemo (which the loop
        tells the prompts to watch and forget); called only by an engine that has one."""
        self.edge_memo = EdgeMemo(key_match)
        return self.edge_memo.compare

    def make_engine(self):
        """The prefix cache this scheduler drives (radixviz.cache's facade), built once in
        ``__init__`` after the pool. Override (or pass ``cache_factory``) to drive another."""
        if self._cache_factory is not None:
            return self._cache_factory(self.pool)
        options = self._engine_options
        release = {"strict": False} if self.insert == "release" else {}   # the release's short value (#4)
        if isinstance(options, EngineSettings):
            if options.pool_size != self.pool.size or release:
                options = options.replace(pool_size=self.pool.size, **release)
            return engine_spec(self._engine_name).open(self.pool, options)
        return open_engine(self._engine_name, self.pool, **options, **release)

    @property
    def cache(self):
        """The engine's own live cache object (its tree: ``cache.root_node``)."""
        return self.engine.cache

    def check_invariants(self) -> None:
        """Raise InvariantError if the tree, the pool or the running requests' slots disagree."""
        self.engine.check_invariants(held=self.held_slots())

    # ------------------------------------------------------------------ public

    def submit(self, specs) -> list[Request]:
        """Queue RequestSpecs (or one); refuse at once any that could never fit."""
        if isinstance(specs, RequestSpec):
            specs = [specs]
        queued = []
        for spec in specs:
            req = Request(self._next_rid, self._prompt(spec.input_ids), spec.max_new_tokens, spec.follow_ups,
                          spec.then, priority=spec.priority, arrival_work=self.stats.prefill_computed,
                          logprob_start_len=spec.logprob_start_len if spec.logprob_start_len >= 0
                          or self.logprob_start_len is None else self.logprob_start_len)
            self._next_rid += 1
            self.stats.requests += 1
            reason = self._never_fits(req)
            if reason:
                self.stats.refused += 1
                self._event("refused", req.rid, reason)
                if spec.then is not None:  # the rest of its session still arrives
                    queued.extend(self.submit(spec.then))
            else:
                self.waiting.append(req)
                queued.append(req)
        return queued

    def _prompt(self, ids):
        """A prompt as the loop keeps it: a BlockPrompt when keyed by block units, else a tuple."""
        if isinstance(ids, BlockPrompt) and self.block_units:
            return ids
        if self.block_units:
            raise ValueError("a loop keyed by block units takes BlockPrompts (a Mooncake trace's), "
                             f"not {type(ids).__name__}")
        return tuple(ids)

    @property
    def done(self) -> bool:
        return not self.waiting and not self.running

    def step(self) -> BatchRecord | None:
        """Run one forward pass and return its record; None once everything is done."""
        self.hooks.start_round()
        if self._decodes_left == 0:
            record = steps.prefill_pass(self)
            if record is not None:
                return record
            if not self.running:
                if self.waiting:  # cannot happen by the arithmetic; never loop forever
                    for req in self.waiting:
                        self.stats.refused += 1
                        self._event("stuck", req.rid, "nothing running and it still does not fit")
                    self.waiting.clear()
                    return self._finish_pass("prefill", (), (), (), (), 0, 0)
                return None
            self._decodes_left = self.decode_steps
        self._decodes_left -= 1
        record = steps.decode_pass(self)
        if not self.running:
            self._decodes_left = 0
        return record

    def run(self, max_passes: int | None = None) -> SimResult:
        """Step until done (or ``max_passes``) and return the result."""
        while max_passes is None or self._pass < max_passes:
            if self.step() is None:
                break
        return self.result()

    def result(self) -> SimResult:
        self.hooks.finish(self.stats)
        events = list(self.events)
        if self.insert == "release":
            events.append(self._drift_event())
        return SimResult(dict(self.settings), self.stats, events, list(self.records),
                         dict(self.outputs))

    def _drift_event(self) -> SimEvent:
        """An event comparing the evictable counter with the tokens of unreferenced nodes:
        under the release's insert (#4) they part ways."""
        truth, stack = 0, list(self.cache.root_node.children.values())
        while stack:
            node = stack.pop()
            truth += len(node.key) if node.ref_counter == 0 else 0
            stack.extend(node.children.values())
        counter = self.engine.evictable_size()
        return SimEvent(self._pass, "drift", -1, f"evictable_size() says {counter} but unreferenced "
                                                 f"nodes hold {truth} tokens: off by {counter - truth:+d}")

    def held_slots(self) -> list:
        """Per running request, the slots it holds a pool reference on (for check_invariants)."""
        return [r.kv_row[:r.kv_len] for r in self.running]

    # ------------------------------------------------------------- shared by passes

    def admit(self, ordered: list[Request], last: Sequence[Request] = ()):
        free_rows = self.req_pool.available_size()  # only a max_running option runs out
        delay = steps.make_hold_back(self) if self.hold_back_threshold is not None else None
        return admit(ordered, self.engine, self.pool, self.running, self.ratio,
                     free_rows=free_rows, max_prefill_tokens=self.max_prefill_tokens, delay=delay,
                     explain=self.record, sorted_last=last, stop_at_misfit=self.scheduler == schedule_v0523.TODAYS_LOOP,
                     **self.hooks.admission())

    def alloc_rows(self, n: int) -> list | None:
        """``n`` request rows; re-points running requests' row views if the table grew."""
        rows = self.req_pool.alloc(n)
        if self.req_pool.take_grown():
            for req in self.running:
                req.kv_row = self.req_pool.req_to_token[req.req_pool_idx]
        return rows

    def _never_fits(self, req: Request) -> str:
        total = len(req.input_ids) + req.max_new_tokens
        if not req.input_ids or req.max_new_tokens <= 0:
            return "needs at least one prompt token and one new token"
        if total >= self.pool.size:
            return f"needs {total} slots but the pool has {self.pool.size}: it could never run"
        if total > self.context_len:
            return f"needs {total} tokens of context, more than {self.context_len}"
        return ""

    def _event(self, kind: str, rid: int, message: str) -> None:
        event = SimEvent(self._pass, kind, rid, message)
        self.events.append(event)
        self._pass_events.append(event)

    def _finish_pass(self, kind: str, queue_order: tuple, decisions: tuple, admitted, finished,
                     hit_tokens: int, computed: int, host_hit_tokens: int = 0) -> BatchRecord:
        used = self.pool.used_size()
        self.stats.peak_pool_used = max(self.stats.peak_pool_used, used)
        self.stats.evicted_tokens += self._evicted
        record = BatchRecord(
            self._pass, kind, queue_order, tuple(decisions), tuple(admitted),
            tuple(r.rid for r in self.running), tuple(finished), len(self.waiting),
            hit_tokens, computed, self._evicted, used, self.engine.evictable_size(),
            tuple(self._pass_events),
            self.engine.snapshot() if self.record else None,
            self.pool.refcounts() if self.record else None,
            tuple(map(view, self.waiting)) if self.record else (),
            tuple(map(view, self.running)) if self.record else (), host_hit_tokens)
        if self.record:
            self.records.append(record)
        self._pass += 1
        self._pass_events = []
        self._evicted = 0
        return record
