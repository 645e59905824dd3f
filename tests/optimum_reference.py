"""The optimum's first PromptTree, a real radix tree (kept for tests: the counting tables
must give exactly its numbers)."""
from array import array


class RadixPromptTree:
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


def _common(edge, key, start: int) -> int:
    """How many leading elements of ``edge`` equal ``key[start:]`` (fewer than len(edge))."""
    n = 0
    limit = min(len(edge), len(key) - start)
    while n < limit and edge[n] == key[start + n]:
        n += 1
    return n
