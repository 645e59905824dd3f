"""The best hit rate any order could reach on a run's prompts (the SGLang paper's theorem).

Zheng et al. (NeurIPS 2024, §3) show that for a batch of requests, walking the radix tree
of their prompts depth first computes every distinct prefix exactly once, provided the
cache holds at least the longest request; nothing can do better, because every token of
that tree has to be computed at least once. So the optimum is::

    1 - (tokens of the prompts' radix tree) / (prompt tokens)

``PromptTree`` counts the tree's tokens as prompts arrive (one pass, memory: the tree's
distinct content, not the requests). With pages, only whole pages are shared: the tree is
built of pages and every prompt's partial last page is computed each time.

Two honest corrections sit beside the theorem's number, never replacing it:

- ``last_token_bound``: a prompt already cached whole still computes its last token (the
  scheduler needs its logits), so exact duplicates each cost one token more;
- decode's tokens are free: a finished request's answer is in the cache when the chat's
  next turn quotes it, so the tree counts only prompt tokens no earlier answer produced;
- ``condition``: whether the pool holds the longest request that ran. Requests bigger
  than the pool are refused before they run, so they are left out of the prompts counted,
  and the report says how many.
"""
from __future__ import annotations

from array import array


class PromptTree:
    """A radix tree of prompts that only counts: distinct tokens, prompts, requests.

    A node is ``[edge, children]``: ``edge`` the elements (token ids packed in an array, or
    pages of tokens as tuples), ``children`` keyed by the first element of each child's edge,
    None at a leaf.
    """

    def __init__(self, page_size: int = 1):
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.page_size = page_size
        self.root: list = [array("q") if page_size == 1 else (), {}]
        self.tree_tokens = 0       # whole pages held by the tree, in tokens
        self.tail_tokens = 0       # partial last pages: computed by every request
        self.prompt_tokens = 0
        self.requests = 0
        self.duplicates = 0        # requests whose whole-page key was already a prompt end
        self.longest = 0           # prompt + output of the longest request added
        self._ends: set = set()    # id of nodes where a prompt ends at a node's end
        self._tail = 0             # the partial page of the prompt being added
        self._grow = True          # False while adding decoded tokens: no prompt ends there
        # token ids packed 8 bytes each (a tuple of large ints costs about 36): a long trace's
        # tree is the one thing here that grows with it; anything else falls back to tuples
        self._packed = page_size == 1

    def add(self, tokens, output_len: int = 0) -> int:
        """Count one request's prompt; returns how many tokens the tree grew by."""
        n, page = len(tokens), self.page_size
        whole = n - n % page
        self._grow = True
        self.requests += 1
        self.prompt_tokens += n
        self.tail_tokens += n - whole
        self._tail = n - whole
        self.longest = max(self.longest, n + output_len)
        grown = self._insert(self._key(tokens, whole)) * page
        self.tree_tokens += grown
        return grown

    def add_decoded(self, tokens) -> None:
        """A finished request's sequence, whose answer decode computed: a later prompt that
        quotes it (a chat's next turn) finds those tokens already made, so they cost nothing."""
        page = self.page_size
        whole = len(tokens) - len(tokens) % page
        self._grow = False
        self._insert(self._key(tokens, whole))

    def _key(self, tokens, whole: int):
        page = self.page_size
        if page > 1:
            return tuple(tuple(tokens[i:i + page]) for i in range(0, whole, page))
        if self._packed:
            try:
                return array("q", tokens[:whole])
            except (TypeError, OverflowError):   # not all int64 token ids: tuples from now on
                self._unpack()
        return tuple(tokens[:whole])

    def _unpack(self) -> None:
        self._packed = False
        stack = [self.root]
        while stack:
            node = stack.pop()
            node[0] = tuple(node[0])
            stack.extend((node[1] or {}).values())

    def _insert(self, key) -> int:
        node, i = self.root, 0
        while i < len(key):
            children = node[1]
            child = children.get(key[i]) if children is not None else None
            if child is None:
                leaf = [key[i:], None]          # a leaf has no children dict (half the nodes)
                if children is None:
                    node[1] = children = {}
                children[key[i]] = leaf
                self._end(leaf, new=True)
                return len(key) - i
            edge = child[0]
            if key[i:i + len(edge)] == edge:     # the whole edge matches: compare in C
                node, i = child, i + len(edge)
                continue
            shared = _common(edge, key, i)
            # split the edge where the key leaves it: the upper part keeps the lower as a child
            lower = [edge[shared:], child[1]]
            if id(child) in self._ends:
                self._ends.discard(id(child))
                self._ends.add(id(lower))
            child[0], child[1] = edge[:shared], {edge[shared]: lower}
            i += shared
            node = child
            if i == len(key):            # the prompt ends inside the old edge
                self._end(child, new=True)
                return 0
        self._end(node, new=False)
        return 0

    def _end(self, node, new: bool) -> None:
        if not self._grow:
            return
        # a duplicate with a partial last page computes that page anyway: no extra token
        if not new and self._tail == 0 and id(node) in self._ends:
            self.duplicates += 1
        self._ends.add(id(node))

    def report(self, pool_size: int | None = None, refused: int = 0,
               hit_rate: float | None = None) -> dict:
        return optimum_report(self, pool_size, refused, hit_rate)


def _common(edge, key, start: int) -> int:
    """How many leading elements of ``edge`` equal ``key[start:]`` (fewer than len(edge))."""
    n = 0
    limit = min(len(edge), len(key) - start)
    while n < limit and edge[n] == key[start + n]:
        n += 1
    return n


def optimum_report(tree: PromptTree, pool_size: int | None, refused: int = 0,
                   hit_rate: float | None = None) -> dict:
    """The numbers a run reports beside its hit rate (JSON-ready); with ``hit_rate``, the
    run's share of the optimum too (None when the optimum is 0)."""
    total = tree.prompt_tokens
    computed = tree.tree_tokens + tree.tail_tokens
    optimal = 1 - computed / total if total else 0.0
    bound = 1 - min(total, computed + tree.duplicates) / total if total else 0.0
    holds = pool_size is None or tree.longest <= pool_size
    if not tree.requests:
        note = "no request ran: nothing to compare"
    elif holds:
        note = (f"the pool ({pool_size:,} slots) holds the longest request ({tree.longest:,} tokens): "
                "one request at a time in depth-first order reaches this" if pool_size is not None else "")
    else:
        note = (f"the pool ({pool_size:,} slots) is smaller than the longest request "
                f"({tree.longest:,} tokens): the theorem's condition fails, this is only an upper bound")
    if refused:
        note += f"; {refused:,} refused request(s) (never fit) are not counted"
    share = percent_of_optimal(hit_rate, optimal) if hit_rate is not None else None
    if share is not None and share > 1:
        note += ("; above 100 %: the run counts hits the theorem does not model (a retracted "
                 "request's second prefill, loads from a host tier)")
    return {"optimal_hit_rate": round(optimal, 6), "percent_of_optimal": None if share is None
            else round(share, 6), "last_token_bound": round(bound, 6),
            "tree_tokens": tree.tree_tokens + tree.tail_tokens, "prompt_tokens": total,
            "requests": tree.requests, "duplicate_prompts": tree.duplicates,
            "page_size": tree.page_size, "longest_request": tree.longest,
            "condition_holds": holds, "note": note}


def percent_of_optimal(hit_rate: float, optimal: float) -> float | None:
    """A policy's hit rate as a share of the optimum (None when the optimum is 0)."""
    return hit_rate / optimal if optimal > 0 else None
