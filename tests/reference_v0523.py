"""A second loop for SGLang v0.5.23's scheduling rules, written from its files, not from radixviz.

It keeps the release's loop of reference_scheduler.py (forwards, finishing, the room estimate)
and puts v0.5.23's rules on top, each in the shape of the function that holds it:

- ``_compute_max_prefix_len`` (``managers/schedule_batch.py``): the match is cut at the
  input length minus one, or at ``logprob_start_len`` when the request asks for one;
- ``_determine_active_policy`` (``managers/schedule_policy.py``): lpm and hrrn become fcfs
  when more than ``WAITING_QUEUE_PREFIX_MATCH_MAX`` (128) requests wait;
- ``_compute_prefix_matches``: the in-batch scratch tree, thresholds 32 and 32;
- ``_sort_by_longest_prefix``, ``_sort_by_hrrn`` (``processed_tokens`` counted per prefill
  forward, ``arrival_processed_tokens`` taken when a request joins the queue),
  ``_sort_by_shortest_prefill`` and ``_dfs_weight_order`` (``mem_cache/base_prefix_cache.py``);
- the admission loop of ``_get_new_batch_prefill_raw`` (``managers/scheduler.py``): ``break``
  at the first request ``add_one_req`` does not take.

Request ids stand in for SGLang's string rids and queue-entry times (both break ties).
"""
from __future__ import annotations

import torch

from radixviz.cache import RadixCache

from reference_scheduler import ReferenceRouter, Req

WAITING_QUEUE_PREFIX_MATCH_MAX = 128
IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD = 32
IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD = 32
CACHE_AWARE = ("lpm", "weight", "hrrn", "shortest-prefill-first")


class ReferenceV0523(ReferenceRouter):
    def __init__(self, pool_size: int, policy: str, model, *, logprob_start_len: int = -1, **options):
        super().__init__(pool_size, "fcfs" if policy == "fcfs" else "lpm", model, **options)
        self.policy = policy
        self.logprob_start_len = logprob_start_len
        self.processed_tokens_counter = 0

    def add(self, input_ids, budget, later_turns=()) -> None:
        super().add(input_ids, budget, later_turns)
        req = self.queue[-1]
        req.arrival_processed_tokens = self.processed_tokens_counter
        req.logprob_start_len = self.logprob_start_len

    @staticmethod
    def _compute_max_prefix_len(req: Req) -> int:
        max_prefix_len = len(req.input_ids) - 1
        if req.logprob_start_len >= 0:
            max_prefix_len = min(max_prefix_len, req.logprob_start_len)
        return max(max_prefix_len, 0)

    def _determine_active_policy(self) -> str:
        if self.policy in ("lpm", "hrrn") and len(self.queue) > WAITING_QUEUE_PREFIX_MATCH_MAX:
            return "fcfs"
        return self.policy

    def new_fill_batch(self) -> list[Req]:
        if len(self.batch) > self.max_running:
            return []
        for req in self.queue:
            key = req.input_ids[:self._compute_max_prefix_len(req)]
            req.prefix_indices, req.last_node = self.tree.match_prefix(key)
            req.extend_input_len = len(req.input_ids) - len(req.prefix_indices)
        self.calc_priority()
        room = self.kv.available_size() + self.tree.evictable_size()
        if self.batch:
            room -= sum([(r.budget - len(r.output_ids)) * self.ratio for r in self.batch])
        chosen, promised, prompt_tokens = [], 0, 0
        for req in self.queue:
            need = req.extend_input_len + req.budget
            if not (need + promised < room and req.extend_input_len + prompt_tokens < self.max_prefill):
                break
            room += self.tree.inc_ref_counter(req.last_node)
            if not need + promised < room:
                room += self.tree.dec_ref_counter(req.last_node)
                break
            self.kv.add_refs(req.prefix_indices)
            chosen.append(req)
            promised += need
            prompt_tokens += req.extend_input_len
        self.queue = [r for r in self.queue if r not in chosen]
        return chosen

    def forward_fill(self, reqs: list[Req]) -> list[Req]:
        self.processed_tokens_counter += sum(r.extend_input_len for r in reqs)
        return super().forward_fill(reqs)

    # ------------------------------------------------------------ calc_priority

    def calc_priority(self) -> None:
        policy = self._determine_active_policy()
        if policy == "fcfs":
            return
        if policy == "random":
            self.shuffler.shuffle(self.queue)
            return
        temporary_deprioritized = self._compute_prefix_matches()
        if policy == "lpm":
            self.queue.sort(key=lambda r: -self.num_matched(r) if r.rid not in temporary_deprioritized
                            else float("inf"))
        elif policy == "hrrn":
            self.queue.sort(key=lambda r: self._hrrn_key(r, temporary_deprioritized))
        elif policy == "shortest-prefill-first":
            self.queue.sort(key=lambda r: (r.rid in temporary_deprioritized,
                                           max(1, len(r.input_ids) - self.num_matched(r)), r.rid))
        else:
            self.queue = self._dfs_weight_order()

    def num_matched(self, req: Req) -> int:
        return min(len(req.prefix_indices), self._compute_max_prefix_len(req))

    def _hrrn_key(self, req: Req, temporary_deprioritized: set):
        if req.rid in temporary_deprioritized:
            return (float("inf"), req.rid)
        uncached = max(0, len(req.input_ids) - self.num_matched(req))
        if uncached <= 0:
            return (-float("inf"), req.rid)
        waited_tokens = max(0, self.processed_tokens_counter - req.arrival_processed_tokens)
        return (-(waited_tokens / uncached), req.rid)

    def _compute_prefix_matches(self) -> set:
        temporary_deprioritized: set = set()
        waiting_queue_radix_tree = RadixCache(device="cpu")
        for r in self.queue:
            if len(r.prefix_indices) <= IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD:
                in_batch, _ = waiting_queue_radix_tree.match_prefix(r.input_ids)
                if len(in_batch) >= IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD:
                    temporary_deprioritized.add(r.rid)
                else:
                    waiting_queue_radix_tree.insert(r.input_ids, torch.tensor(r.input_ids))
        return temporary_deprioritized

    def _dfs_weight_order(self) -> list[Req]:
        last_node_to_indices: dict = {}
        for index, req in enumerate(self.queue):
            last_node_to_indices.setdefault(req.last_node, []).append(index)
        node_to_weight = {node: len(indices) for node, indices in last_node_to_indices.items()}

        def weigh(node) -> int:
            total = node_to_weight.get(node, 0)
            for child in node.children.values():
                total += weigh(child)
            node_to_weight[node] = total
            return total

        order: list[int] = []

        def visit(node) -> None:
            for child in sorted(node.children.values(), key=lambda c: -node_to_weight.get(c, 0)):
                visit(child)
            order.extend(last_node_to_indices.get(node, ()))

        weigh(self.tree.root_node)
        visit(self.tree.root_node)
        return [self.queue[i] for i in order]
