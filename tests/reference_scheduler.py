"""A second, independent scheduler loop shaped like the first SGLang release's router.

It follows the release's ``model_rpc.py`` (``get_new_fill_batch``, the fill and decode
forwards, the finished-request handling) and ``scheduler.py`` (the four orderings), written
afresh: it shares no code with ``radixviz.sim`` except the token source (the seeded
``FakeSampler``, standing in for the model) and the workloads it replays. It drives the
same ``RadixCache``, ``TokenToKVPool`` and ``ReqToTokenPool`` the simulation drives.

Where the release called ``exit()`` (no KV slots left after evicting) this loop records
the pass and stops: the simulation must run out of memory on the same pass. Where the
release would truncate a prompt or an output budget at arrival, this loop counts it in
``truncated`` so a comparison can tell that the two loops no longer see the same traffic.
A finished request's key is cut to the length of its value (the #4 fix), as the
simulation does by default.

Passes are numbered like the simulation's records: one per forward, prefill or decode;
a round that admits nobody is not a pass.

Two later changes can be switched on, each written in the shape of the SGLang commit that
made it, on top of the release's loop:

- ``in_batch_threshold`` (#2442, 9208618b3e, 2024-12-11): ``calc_priority`` in
  ``schedule_policy.py`` builds ``temp_radix`` from the waiting queue while matching it,
  collects ``temporary_deprioritized``, gives those priority infinity under lpm and
  appends them after ``get_dfs_priority`` under the weight order;
- ``cache_filled`` (#418, 39191c8515, 2024-05-13): ``cache_filled_batch`` in
  ``model_rpc.py`` calls ``RadixCache.cache_req`` for every request still running after
  a prefill. #418 also dropped the pool reference a request took on its cached prefix at
  admission; with this switch on, this loop keeps #418's bookkeeping (the tree owns one
  reference, ``cache_req`` frees the request's duplicates) where the simulation keeps the
  release's: the same slots are free after every pass either way.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

import torch

from radixviz.cache import RadixCache, ReqToTokenPool, TokenToKVPool


class OutOfMemory(Exception):
    """Where the release printed 'out of memory' and exited."""


@dataclass(eq=False)
class Req:
    rid: int
    input_ids: tuple
    budget: int                      # max_new_tokens
    later_turns: tuple = ()
    output_ids: list = field(default_factory=list)
    prefix_indices: object = None
    last_node: object = None
    extend_input_len: int = 0
    row: int = -1

    def done(self) -> bool:
        return len(self.output_ids) >= self.budget


@dataclass
class Pass:
    kind: str
    admitted: tuple
    hit_tokens: int
    computed_tokens: int
    finished: tuple


# new-token estimation ratio per policy: fcfs reuses less, so it keeps more room back
RATIO = {"lpm": 0.4, "random": 0.4, "weight": 0.4, "fcfs": 0.5}


class ReferenceRouter:
    def __init__(self, pool_size: int, policy: str, model, *, seed: int = 0,
                 context_len: int = 1024, decode_loop: int = 10,
                 in_batch_threshold: int | None = None, cache_filled: bool = False):
        self.policy = policy
        self.model = model
        self.context_len = context_len
        self.decode_loop = decode_loop
        self.total_tokens = pool_size
        self.kv = TokenToKVPool(pool_size, device="cpu")
        # the release sized the request table from the pool and never checked it at admission
        self.rows = ReqToTokenPool(int(pool_size / context_len * 256), context_len, device="cpu")
        self.tree = RadixCache(device="cpu")
        self.max_running = pool_size // 2
        self.max_prefill = max(context_len, pool_size // 6)
        self.ratio = RATIO[policy]
        self.shuffler = random.Random(seed)
        self.queue: list[Req] = []
        self.batch: list[Req] = []
        self.passes: list[Pass] = []
        self.out_of_memory_at: int | None = None
        self.stuck = False
        self.truncated = 0
        self.next_rid = 0
        self.in_batch_threshold = in_batch_threshold
        self.cache_filled = cache_filled
        self.temporary_deprioritized: dict = {}

    # ------------------------------------------------------------ arrival

    def add(self, input_ids, budget, later_turns=()) -> None:
        input_ids = tuple(input_ids)
        cut = input_ids[:self.context_len - 1]
        allowed = min(budget, self.context_len - 1 - len(cut), self.total_tokens - 128 - len(cut))
        if cut != input_ids or allowed != budget:
            self.truncated += 1
        self.queue.append(Req(self.next_rid, cut, allowed, tuple(later_turns)))
        self.next_rid += 1

    # ------------------------------------------------------------ the loop

    def run(self, limit: int = 1_000_000) -> list[Pass]:
        try:
            while (self.queue or self.batch) and len(self.passes) < limit and not self.stuck:
                self.forward_step()
        except OutOfMemory:
            self.out_of_memory_at = len(self.passes)
        return self.passes

    def forward_step(self) -> None:
        fill = self.new_fill_batch()
        if fill:
            self.batch = self.batch + self.forward_fill(fill)
            return
        if not self.batch:
            self.stuck = bool(self.queue)   # the release would spin here for ever
            return
        for _ in range(self.decode_loop):
            self.forward_decode()
            if not self.batch:
                break

    def new_fill_batch(self) -> list[Req]:
        if len(self.batch) > self.max_running:
            return []
        self.temporary_deprioritized = {}
        if self.in_batch_threshold is not None and self.policy in ("lpm", "weight"):
            # #2442: a scratch tree of what this waiting queue itself will compute
            temp_radix = RadixCache(device="cpu")
        else:
            temp_radix = None
        for req in self.queue:
            req.prefix_indices, req.last_node = self.tree.match_prefix(req.input_ids)
            req.extend_input_len = len(req.input_ids) - len(req.prefix_indices)
            if temp_radix is not None and len(req.prefix_indices) <= self.in_batch_threshold:
                in_batch_matching_prefixes, _ = temp_radix.match_prefix(req.input_ids)
                if len(in_batch_matching_prefixes) >= self.in_batch_threshold:
                    self.temporary_deprioritized[req.rid] = req
                else:
                    temp_radix.insert(req.input_ids, torch.tensor(req.input_ids))
        self.queue = self.priority_order(self.queue)

        room = self.kv.available_size() + self.tree.evictable_size()
        if self.batch:
            room -= sum([(r.budget - len(r.output_ids)) * self.ratio for r in self.batch])
        chosen, promised, prompt_tokens = [], 0, 0
        for req in self.queue:
            if req.extend_input_len == 0 and req.budget > 0:
                # a whole prompt in the tree: its last token is recomputed to get logits
                req.extend_input_len = 1
                req.prefix_indices = req.prefix_indices[:-1]
            need = req.extend_input_len + req.budget
            if need + promised < room and req.extend_input_len + prompt_tokens < self.max_prefill:
                room += self.tree.inc_ref_counter(req.last_node)
                if need + promised < room:
                    if not self.cache_filled:   # #418 stopped taking this reference
                        self.kv.add_refs(req.prefix_indices)
                    chosen.append(req)
                    promised += need
                    prompt_tokens += req.extend_input_len
                else:
                    room += self.tree.dec_ref_counter(req.last_node)
        self.queue = [r for r in self.queue if r not in chosen]
        return chosen

    def priority_order(self, queue: list[Req]) -> list[Req]:
        if self.policy == "fcfs":
            return queue
        if self.policy == "lpm":
            def get_priority(r: Req):
                if r.rid in self.temporary_deprioritized:
                    return float("inf")
                return -len(r.prefix_indices)
            queue.sort(key=get_priority)
            return queue
        if self.policy == "random":
            self.shuffler.shuffle(queue)
            return queue
        return self.weight_order(queue)

    def weight_order(self, queue: list[Req]) -> list[Req]:
        ending_at = defaultdict(list)
        for req in queue:
            ending_at[req.last_node].append(req)
        for group in ending_at.values():
            group.sort(key=lambda r: -len(r.prefix_indices))
        weight = {}

        def weigh(node) -> int:
            weight[node] = 1 + len(ending_at[node]) + sum(weigh(c) for c in node.children.values())
            return weight[node]

        def visit(node, out) -> None:
            for child in sorted(node.children.values(), key=lambda c: -weight[c]):
                visit(child, out)
            for req in ending_at[node]:
                if req.rid in self.temporary_deprioritized:
                    continue
                out.append(req)

        weigh(self.tree.root_node)
        ordered: list[Req] = []
        visit(self.tree.root_node, ordered)
        ordered.extend(self.temporary_deprioritized.values())
        assert len(ordered) == len(queue)
        return ordered

    # ------------------------------------------------------------ forwards

    def take_slots(self, n: int):
        slots = self.kv.alloc(n)
        if slots is None:
            self.tree.evict(n, self.kv.free)
            slots = self.kv.alloc(n)
        if slots is None:
            raise OutOfMemory
        return slots

    def forward_fill(self, reqs: list[Req]) -> list[Req]:
        """Prefill ``reqs``; return those still generating."""
        rows = self.rows.alloc(len(reqs))
        new_slots = self.take_slots(sum(r.extend_input_len for r in reqs))
        start = 0
        for req, row in zip(reqs, rows):
            req.row = row
            n_prefix = len(req.prefix_indices)
            mine = new_slots[start:start + req.extend_input_len]
            start += req.extend_input_len
            self.rows.req_to_token[row, :n_prefix] = req.prefix_indices
            self.rows.req_to_token[row, n_prefix:len(req.input_ids)] = mine
            req.output_ids = [self.model.extend(req.input_ids, req.prefix_indices, mine)]
        hit = sum(len(r.prefix_indices) for r in reqs)
        running = self.record("prefill", reqs, reqs, hit, start)
        if self.cache_filled:
            self.cache_filled_batch(running)
        return running

    def cache_filled_batch(self, batch: list[Req]) -> None:
        """#418: after the fill forward, each request still running caches its prompt."""
        for req in batch:
            new_prefix_indices, new_last_node = self.cache_req(
                token_ids=tuple(req.input_ids + tuple(req.output_ids))[:-1],
                last_uncached_pos=len(req.prefix_indices),
                req_pool_idx=req.row,
                del_in_memory_pool=False,
                old_last_node=req.last_node,
            )
            req.prefix_indices, req.last_node = new_prefix_indices, new_last_node

    def cache_req(self, token_ids, last_uncached_pos, req_pool_idx, del_in_memory_pool=True,
                  old_last_node=None):
        """#418's RadixCache.cache_req: insert, free this request's duplicates, and either free
        its row (finished) or point the row at the tree's copy and move the lock."""
        indices = self.rows.req_to_token[req_pool_idx, :len(token_ids)]
        new_prefix_len = self.tree.insert(token_ids, indices.clone())
        # the tree takes one reference in the pool
        self.kv.free(indices[last_uncached_pos:new_prefix_len])
        if del_in_memory_pool:
            self.rows.free(req_pool_idx)
            return None
        cached_indices, new_last_node = self.tree.match_prefix(token_ids)
        assert len(cached_indices) == len(token_ids)
        self.rows.req_to_token[req_pool_idx, last_uncached_pos:len(cached_indices)] = \
            cached_indices[last_uncached_pos:]
        self.tree.dec_ref_counter(old_last_node)
        self.tree.inc_ref_counter(new_last_node)
        return cached_indices, new_last_node

    def forward_decode(self) -> None:
        slots = self.take_slots(len(self.batch))
        for req, slot in zip(self.batch, slots.tolist()):
            tokens = req.input_ids + tuple(req.output_ids)
            position = len(tokens) - 1
            self.rows.req_to_token[req.row, position] = slot
            cached = self.rows.req_to_token[req.row, :position]
            req.output_ids.append(self.model.decode(tokens, cached, slots.new_tensor(slot)))
        self.batch = self.record("decode", (), self.batch, 0, len(self.batch))

    def record(self, kind: str, admitted, forwarded, hit: int, computed: int) -> list[Req]:
        """Note the pass, retire the requests it finished; return the ones that go on."""
        finished = [r for r in forwarded if r.done()]
        self.passes.append(Pass(kind, tuple(r.rid for r in admitted), hit, computed,
                                tuple(r.rid for r in finished)))
        for req in finished:
            self.retire(req)
        return [r for r in forwarded if not r.done()]

    def retire(self, req: Req) -> None:
        """Give the finished sequence to the tree; free what it already held; unlock."""
        sequence = req.input_ids + tuple(req.output_ids)
        kept = len(sequence) - 1          # the newest token was never fed back: no KV
        if self.cache_filled:             # #418's handle_finished_requests
            self.cache_req(token_ids=sequence[:kept], last_uncached_pos=len(req.prefix_indices),
                           req_pool_idx=req.row)
            self.tree.dec_ref_counter(req.last_node)
        else:
            slots = self.rows.req_to_token[req.row, :kept].clone()
            # the release passed the whole sequence as the key, one token longer than its
            # value (the #4 bug); the simulation inserts key and value of equal length by default
            already = self.tree.insert(sequence[:kept], slots)
            self.kv.free(slots[:already])
            self.rows.free(req.row)
            self.tree.dec_ref_counter(req.last_node)
        if req.later_turns:
            (text, budget), rest = req.later_turns[0], req.later_turns[1:]
            self.add(sequence + tuple(text), budget, rest)
