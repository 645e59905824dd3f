"""A random quiz scenario being written: operation lines, the keys inserted so far, and
the prompt that shows them.

generate.py draws every choice from the builder's ``rng``, so a question is a pure
function of its seed; keep the order of ``rng`` calls when changing anything here.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..scenario import indent, tree_text

if TYPE_CHECKING:
    from ...cache.snapshot import TreeSnapshot

DIFFICULTIES = ("easy", "medium", "hard")
_LEVEL = {  # alphabet, (inserts lo, hi), (key length lo, hi), locks
    "easy": ("abc", (2, 3), (2, 5), 0),
    "medium": ("abcd", (3, 5), (3, 7), 1),
    "hard": ("abcde", (4, 7), (3, 9), 2),
}


class ScenarioBuilder:
    def __init__(self, rng: random.Random, difficulty: str) -> None:
        self.rng, self.difficulty = rng, difficulty
        self.alphabet, self.n_inserts, self.length, self.max_locks = _LEVEL[difficulty]
        self.lines: list[str] = []
        self.keys: list[str] = []

    def restart(self) -> None:
        """Drop what was written, for a generator that retries until the shape it needs comes up."""
        self.lines, self.keys = [], []

    def word(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choice(self.alphabet) for _ in range(self.rng.randint(lo, hi)))

    def related_key(self) -> str:
        """A new key that often shares a prefix with an inserted one (so edges fork)."""
        lo, hi = self.length
        if self.keys and self.rng.random() < 0.75:
            base = self.rng.choice(self.keys)
            cut = self.rng.randint(1, len(base))
            return base[:cut] + self.word(1, max(1, hi - cut))
        return self.word(lo, hi)

    def inserts(self) -> None:
        for _ in range(self.rng.randint(*self.n_inserts)):
            key = self.related_key()
            self.keys.append(key)
            self.lines.append(f'insert "{key}"')

    def some_locks(self) -> None:
        for _ in range(self.rng.randint(0, self.max_locks)):
            self.lines.append(f'lock "{self.rng.choice(self.keys)}"')

    def prefix_of_a_key(self) -> str:
        """A non-empty prefix of one of the inserted keys: what a lock question locks."""
        key = self.rng.choice(self.keys)
        return key[:self.rng.randint(1, len(key))]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def shows_tree(self) -> bool:
        """Hard questions make the learner picture the tree from the operations alone."""
        return self.difficulty != "hard"

    def script_with_question(self, asked: str) -> str:
        """The script "show me" replays: the setup, then the operation asked about."""
        return self.text + f"\n# the question:\n{asked}\n"

    def setup_prompt(self, tree: TreeSnapshot, show_time: bool = False, show_tree: bool = False,
                     parts: bool = False) -> str:
        """The scenario, and (on easy and medium, or when asked) the tree it leaves; ``parts``:
        each further component's part of a node too (``tree_text``)."""
        text = f"Scenario:\n\n{indent(self.text)}"
        if self.shows_tree or show_time or show_tree:
            text += "\n\nThe tree now:\n\n" + indent(tree_text(tree, show_time=show_time, parts=parts))
        return text

    def tags(self, seed: int, topic: str, lesson: int) -> dict:
        """The Question fields every generated question fills the same way."""
        return dict(difficulty=self.difficulty, seed=seed, topic=topic, lesson=lesson)
