"""A request as the scheduler sees it, and the plain spec a workload hands over."""
from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from .block_units import BlockPrompt


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What a workload asks for: a prompt, an output budget and, for chats, later turns.

    ``follow_ups`` are ``(user_tokens, max_new_tokens)`` pairs: when this request finishes,
    the next turn arrives with the whole history (prompt + answer) plus the user's new text.
    ``then`` is a RequestSpec queued exactly as given when this one finishes (the next
    request of a traced session, whose prompt the trace already spells out).
    ``priority`` is the request's priority as SGLang's API takes it (higher is kept
    longer): today's cache stores it on the nodes the finished sequence passes (the max
    along the path) and its ``priority`` eviction policy evicts low values first. The
    first release's cache has no such field and ignores it. A chat's later turns keep it.
    ``logprob_start_len`` (>= 0) asks for the prompt's logprobs from that token on, as
    SGLang's API does: the v0.5.23 scheduler then matches at most that many tokens (-1: no
    input logprobs asked; a chat's later turns keep it).
    """
    input_ids: tuple | BlockPrompt
    max_new_tokens: int
    follow_ups: tuple = ()
    then: RequestSpec | None = None
    priority: int = 0
    logprob_start_len: int = -1


@dataclass(slots=True, eq=False)
class Request:
    """One request moving through waiting -> running -> finished (or back to waiting).

    ``prefix_indices``/``last_node`` are what the latest match found; ``extend_input_len``
    is how many prompt tokens still have to be computed.
    """
    rid: int
    input_ids: tuple | BlockPrompt     # a BlockPrompt when the loop is keyed by block units
    max_new_tokens: int
    follow_ups: tuple = ()
    then: RequestSpec | None = None
    output_ids: list = field(default_factory=list)
    prefix_indices: object = None      # int64 tensor of the tree's slots that hit
    last_node: object = None           # the TreeNode the match ended on
    prefix_len: int = 0                # len(prefix_indices), kept as an int: len() of a tensor is slow
    extend_input_len: int = 0
    req_pool_idx: int = -1             # row in the ReqToTokenPool while running
    kv_row: Any = None                 # that row of req_to_token (a view), while running
    times_retracted: int = 0
    priority: int = 0
    # the prompt cut to the engine's whole pages, made once: the same tuple every round, so
    # the simulation's memo of edge comparisons (edge_memo.py) recognises it
    match_key: tuple | BlockPrompt | None = None
    # a host-tier engine's match: prompt tokens past the device prefix found on the host
    # only, and the deepest matched node with a host copy; host_loaded: what admission loaded
    host_hit_length: int = 0
    last_host_node: object = None
    host_loaded: int = 0
    logprob_start_len: int = -1        # RequestSpec's: the v0.5.23 match stops there
    arrival_work: int = 0              # prefill tokens the loop had computed when it was queued (hrrn)

    @property
    def finished(self) -> bool:
        return len(self.output_ids) >= self.max_new_tokens

    @property
    def kv_len(self) -> int:
        """Tokens whose KV sits in the pool: the newest output has not been fed back yet."""
        return len(self.input_ids) + max(len(self.output_ids) - 1, 0)

    def remaining_new_tokens(self) -> int:
        return self.max_new_tokens - len(self.output_ids)

    def __repr__(self) -> str:
        return (f"Request(#{self.rid} in={len(self.input_ids)} out={len(self.output_ids)}/"
                f"{self.max_new_tokens} prefix={self.prefix_len})")
