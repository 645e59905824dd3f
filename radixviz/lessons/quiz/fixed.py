"""The chapter's self-test questions and exercises, asked about concrete scenarios.

Each question stores its answer AND says how to compute it from the engine (``compute``):
a test holds the two together, so a change in the engine or a typo here is caught.
``compute`` is handed the operation the question asks about rather than restating it, so
the question and its check cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Callable

from radixviz.script import PoolSnapshot
from radixviz.sim.policies import get_policy

from .questions import FIXED_MATCHER, NAME_A_NODE, Question, slots_key
from ..scenario import apply_text, edge_text, indent, node_choices, run_scenario, tree_text

if TYPE_CHECKING:
    from ...cache.trace import Event
    from ...script.session import Session


@dataclass(frozen=True)
class Fixed:
    id: str
    lesson: int
    source: str                   # which self-test question or exercise it comes from
    kind: str
    prompt: str
    setup: str                    # operations run before the question
    asked: str                    # the operation the question is about ("" for none)
    accepted: tuple               # stored answers, canonical
    answer_text: str
    explanation: str
    compute: Callable             # (session after setup, asked) -> canonical answer, from the engine
    choices: tuple = ()
    difficulty: str = "medium"

    def question(self) -> Question:
        session = run_scenario(self.setup) if self.setup else None
        tree = session.cache.snapshot() if session else None
        shows_tree = self.kind == "node" or "{tree}" in self.prompt
        prompt = self.prompt.replace("{tree}", indent(tree_text(tree)) if tree else "")
        prompt = prompt.replace("{script}", indent(self.setup))
        if self.kind == "node":
            prompt += "\n" + NAME_A_NODE
        if self.asked.startswith(("match", "lock")) and self.lesson != 8:
            prompt += FIXED_MATCHER
        scenario = (self.setup + (f"\n# the question:\n{self.asked}" if self.asked else "")).lstrip("\n") + "\n"
        return Question(self.id, self.kind, prompt, self.accepted, self.answer_text, self.explanation,
                        scenario=scenario, choices=self.choices,
                        nodes=node_choices(tree) if self.kind == "node" and tree else (),
                        tree_text=tree_text(tree) if shows_tree and tree else "", lesson=self.lesson,
                        difficulty=self.difficulty, topic=self.source)


def _result(*path: str):
    """The answer is a field of the asked operation's result (a list of slots is canonicalised)."""
    def compute(s: Session, asked: str):
        value = apply_text(s, asked).result
        for name in path:
            value = value[name]
        return slots_key(value) if isinstance(value, list) else str(value)
    return compute


def _new_frames(s: Session, asked: str) -> list:
    before = len(s.frames)
    apply_text(s, asked)
    return s.frames[before:]


def _node_roles(s: Session, asked: str) -> str:
    """Which choice describes a node, read off the tree after ``insert Hello; insert Help``."""
    tree = s.cache.snapshot()
    leaf = next(n for n in tree.root.walk() if n.key and not n.children and n.key[0] == "l" and len(n.key) > 1)
    pool = PoolSnapshot(s.pool.refcounts(), tree)
    stretch = 1 < len(leaf.key) < len("Hello")
    slots_are_pool_slots = all(pool.owners[slot] == leaf.id for slot in leaf.value)
    return "1" if stretch and slots_are_pool_slots else ("0" if len(leaf.key) == 1 else "2")


def _nodes_after(s: Session, asked: str) -> str:
    apply_text(s, asked)
    return str(len(s.cache.snapshot().nodes) - 1)


def _evictable_after(s: Session, asked: str) -> str:
    apply_text(s, asked)
    return str(s.cache.evictable_size())


def _upper_after_match(s: Session, asked: str) -> str:
    split = next(f for f in _new_frames(s, asked) if f.kind == "split")
    return edge_text(split.tree.nodes[split.nodes[0]].key)


def _first_victim(s: Session, asked: str) -> str:
    return str(next(f.data["leaf"] for f in _new_frames(s, asked) if f.kind == "delete"))


def _evict_step_order(s: Session, asked: str) -> str:
    kinds = [f.kind for f in _new_frames(s, asked)]
    shown = ["pop", "push_parent", "heap", "free", "skip"]   # the frame kind of each EVICT_STEPS item
    first = {k: kinds.index(k) for k in shown}
    return "".join("abcde"[shown.index(k)] for k in sorted(shown, key=first.__getitem__))


def _call_order(s: Session, asked: str) -> str:
    calls: list = []
    s.cache.observer = _chain(s.cache.observer,
                              lambda e: calls.append(e.op) if not calls or calls[-1] != e.op else None)
    s.run(asked)
    shown = ["insert", "dec_ref_counter", "match_prefix", "inc_ref_counter"]
    return "".join("abcd"[shown.index(c)] for c in calls)


def _chain(first: Callable[[Event], object], second: Callable[[Event], object]):
    def both(event: Event) -> None:
        first(event)
        second(event)
    return both


def _ratio(policy: str):
    def compute(s: Session, asked: str):
        return str(["0.4", "0.5", "1.0"].index(str(get_policy(policy)[1])))
    return compute


EVICT_STEPS = ("pop the leaf used longest ago", "if its parent is now a leaf, push the parent",
               "gather every leaf into a heap ordered by last access", "free its slots and delete it",
               "pass over it when some request still references it")
CALL_SITES = ("insert(input + output) when the request finishes", "dec_ref_counter(last_node)",
              "match_prefix(prompt) while forming a batch", "inc_ref_counter(last_node) on admission")
# one request's life as operations: matched and locked on admission, inserted, unlocked
LIFECYCLE = 'lock "Hello_"\ninsert "Hello_world"\nunlock "Hello_"'
HELLO = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"'

FIXED = (
    Fixed("selftest-1-node", 1, "self-test 1", "choice",
          "After insert \"Hello\" and insert \"Help\", what does the node for \"lo\" hold?",
          'insert "Hello"\ninsert "Help"', "", ("1",),
          "b: the stretch of tokens on its edge, and those tokens' slots in the KV pool",
          "A node's key is the run of tokens on the edge from its parent; its value lists where "
          "each of those tokens' keys and values sit in the pool.", _node_roles,
          choices=("one token, and that token's logits",
                   "the stretch of tokens on its edge, and those tokens' slots in the KV pool",
                   "the whole sequence from the root, and a copy of its KV tensors")),
    Fixed("selftest-1-radix", 1, "self-test 1", "number",
          "An empty cache gets insert \"Hello_L.A.!\" (11 tokens). How many nodes are there now, "
          "not counting the root? (A trie with one token per node would need 11.)",
          "", 'insert "Hello_L.A.!"', ("1",), "1",
          "A radix tree puts a chain with no branches on one edge: one node for all 11 tokens.",
          _nodes_after, difficulty="easy"),
    Fixed("selftest-2-split", 2, "self-test 2", "text",
          "The tree holds one edge, \"Hello_L.A.!\". match_prefix(\"Hello_w\") stops inside it. "
          "Which tokens does the new node above the cut hold?",
          'insert "Hello_L.A.!"', 'match "Hello_w"', ("Hello_", "6"), "\"Hello_\" (6 tokens)",
          "The edge is cut where the query forks: a new node takes \"Hello_\", the old one keeps "
          "\"L.A.!\" below it, and the match returns the new node. (The release as shipped, before #7, "
          "cut an edge only where the query ran out; this query goes on past the fork.)", _upper_after_match),
    Fixed("selftest-2-insert", 2, "self-test 2", "number",
          "The tree holds one edge, \"Hello_L.A.!\". How many nodes (not counting the root) are "
          "there after insert \"Hello_world\"?",
          'insert "Hello_L.A.!"', 'insert "Hello_world"', ("3",), "3",
          "Insertion splits the same way (\"Hello_\" above \"L.A.!\"), then hangs a new edge "
          "\"world\" under the new node.", _nodes_after),
    Fixed("selftest-3-victim", 4, "self-test 3", "node",
          "{script}\n\nWhich leaf does evict(2) remove first?\n\n{tree}",
          'insert "abcd"\nlock "abcd"\ninsert "qrs"\ninsert "abxy"', "evict 2", ("2",),
          "#2 \"qrs\"",
          "\"cd\" was used longest ago but is locked (ref 1), so it is skipped; \"qrs\" is the "
          "next oldest leaf.", _first_victim),
    Fixed("selftest-3-evictable", 5, "self-test 3", "number",
          "After insert \"abcd\", insert \"abxy\" and lock \"abcd\", what is evictable_size()?",
          'insert "abcd"\ninsert "abxy"', 'lock "abcd"', ("2",), "2",
          "Locking raised \"ab\" and \"cd\" from 0 to 1 reference, so they left the evictable set; "
          "only \"xy\" (2 tokens) can go.",
          _evictable_after),
    Fixed("selftest-3-steps", 4, "self-test 3", "order",
          "{script}\n\nPut the steps of evict(12) in the order they first happen on this tree:\n\n{tree}",
          'insert "xyz"\nlock "xyz"\ninsert "abcd"\ninsert "abce"', "evict 12", ("caedb",),
          "c a e d b: heap, pop, skip if referenced, free and delete, push the parent",
          "The heap is built once; each pop either skips a referenced leaf or frees it, and a "
          "parent left without children joins the heap.", _evict_step_order, choices=EVICT_STEPS),
    Fixed("selftest-4-calls", 6, "self-test 4", "order",
          "Put the scheduler's four calls into the cache in the order one request makes them:",
          "", LIFECYCLE, ("cdab",),
          "c d a b: match_prefix, inc_ref_counter, insert, dec_ref_counter",
          "Match while forming the batch, lock on admission, insert (and free duplicates) when it "
          "finishes, then release the lock.", _call_order, choices=CALL_SITES),
    Fixed("policy-ratio", 7, "scheduling policy", "choice",
          "What new-token estimation ratio does the lpm policy use?", "", "", ("0",), "a: 0.4",
          "The release's scheduler reserves 0.5 of each running request's remaining budget under "
          "fcfs and 0.4 under every other policy, random included; its code gives no reason. "
          "#36 (2024-01-19) replaced both with one ratio that adapts to retractions.",
          _ratio("lpm"), choices=("0.4", "0.5", "1.0")),
    Fixed("exercise-1-whole", 3, "exercise 1", "number",
          "The tree holds \"abcd\". What does insert(\"abcd\") return?",
          'insert "abcd"', 'insert "abcd"', ("4",), "4",
          "Every edge matched and the key ended: the whole key was already there.",
          _result("prefix_len"), difficulty="easy"),
    Fixed("exercise-1-longer", 3, "exercise 1", "number",
          "The tree holds \"abcd\". What does insert(\"abcdef\") return?",
          'insert "abcd"', 'insert "abcdef"', ("4",), "4",
          "The edge matched in full and key went on: 4 plus what the recursion below returns (0, "
          "as it creates the new edge \"ef\").", _result("prefix_len")),
    Fixed("exercise-1-partial", 3, "exercise 1", "slots",
          "The tree holds \"abcd\" in slots 0-3. insert(\"abxy\") is given slots 4-7. Which of them "
          "does the caller free afterwards?",
          'insert "abcd"', 'insert "abxy"', ("4 5",), "4 5",
          "A partial hit: the edge is split after \"ab\" and insert returns 2, so the caller frees "
          "its first 2 slots; the tree keeps slots 0-1 for \"ab\".",
          _result("freed_duplicates")),
    Fixed("exercise-2-short", 4, "exercise 2", "number",
          "{script}\n\nBoth leaves are locked. How many tokens does evict(5) free?\n\n{tree}",
          'insert "abc"\ninsert "abd"\nlock "abc"\nlock "abd"', "evict 5", ("0",), "0",
          "Every leaf is referenced, so the heap empties before the target is reached. The first "
          "release's scheduler then tried to allocate again and, failing, stopped the process.",
          _result("evicted")),
    Fixed("exercise-3-running", 9, "exercise 3", "number",
          "Request A (\"Hello_world\") is still running, so nothing is in the tree yet. Request B "
          "(\"Hello_there\") is matched for the same batch. How many tokens of B hit?",
          "", 'match "Hello_there"', ("0",), "0",
          "The first release inserts only when a request finishes, so A's prefix is invisible "
          "to B until then. #418 (2024-05-13) inserts a prompt as soon as its prefill ends, so "
          "requests admitted in later rounds hit it; #2442 (2024-12-11, git show 9208618b3e) "
          "sorts to the back of the queue a waiting request whose own hit in the tree is 32 "
          "tokens or fewer and that shares 32 or more tokens with an earlier waiting one, so "
          "that when the batch fills it waits for a later round.",
          _result("matched")),
    Fixed("exercise-3-finished", 9, "exercise 3", "number",
          "Request A (\"Hello_world\") has finished and was inserted. How many tokens of "
          "\"Hello_there\" hit now?",
          'insert "Hello_world"', 'match "Hello_there"', ("6",), "6",
          "Once A is in the tree, B shares \"Hello_\" with it.", _result("matched")),
    Fixed("bug-7-count", 8, "the #7 bug", "number",
          "With the pre-#7 matcher, how many tokens does match_prefix(\"Hello_world\") report?\n\n{tree}",
          HELLO + "\nmatcher buggy", 'match "Hello_world"', ("11",), "11",
          "The buggy matcher forks inside \"Hello_L.A.!\" but keeps walking, and the rest "
          "\"world\" matches the child cached after \"Hello_L.A.!\".", _result("matched")),
    Fixed("bug-7-slots", 8, "the #7 bug", "slots",
          "Same tree, pre-#7 matcher: which of the returned slots belong to another context?\n\n{tree}",
          HELLO + "\nmatcher buggy", 'match "Hello_world"', ("22 23 24 25 26",), "22-26",
          "Slots 0-5 really are \"Hello_\"; 22-26 hold the KV of \"world\" computed after "
          "\"Hello_L.A.!\", not after \"Hello_\".",
          _result("disagreement", "wrong_slots")),
)


def fixed_questions(lesson: int | None = None) -> list[Question]:
    return [f.question() for f in FIXED if lesson is None or f.lesson == lesson]


def computed_answer(spec: Fixed) -> str:
    """What the engine says the answer is, on a fresh run of the setup."""
    return spec.compute(run_scenario(spec.setup), spec.asked)
