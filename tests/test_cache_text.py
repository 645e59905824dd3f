"""The one formatter for keys, edges and slot ranges (cache/text.py), as the views print it."""
from __future__ import annotations

from rich.cells import cell_len

from radixviz.cache import key_text, slot_ranges, tokens_text
from radixviz.lessons.scenario import edge_text as lesson_edge
from radixviz.render.marks import compact_ranges, edge_text
from radixviz.script import key_text as script_key_text
from radixviz.script import slot_ranges as script_slot_ranges


class TestKeys:
    def test_plain_text_is_what_a_learner_types(self):
        assert tokens_text(("a", 12, "b")) == "a⟨12⟩b" == lesson_edge(("a", 12, "b"))
        assert tokens_text(tuple("a\nb")) == "a\nb"

    def test_quoted_and_escaped(self):
        assert key_text(tuple("a\nb\\")) == "'a\\nb\\\\'"
        assert key_text(tuple("Hello_")) == "'Hello_'" == edge_text(tuple("Hello_"))

    def test_a_long_key_keeps_whole_tokens_at_both_ends(self):
        ids = tuple(range(10, 40))
        text = key_text(ids)                       # the limit counts tokens: 16 ahead, 5 behind
        assert text == "'" + tokens_text(ids[:16]) + "…" + tokens_text(ids[-5:]) + "'"
        assert script_key_text is key_text

    def test_in_cells_a_label_fits_its_column(self):
        key = tuple("L" * 40 + "tail")
        assert edge_text(key, 24) == "'LLLLLLLLLLLLLL…LLLtail'"
        ids = tuple(range(1000, 1030))
        label = edge_text(ids, 24)
        assert cell_len(label) <= 24 and label.startswith("'⟨1000⟩") and label.endswith("⟨1029⟩'")
        assert edge_text(tuple("abcdefghij"), 7) == "'abcdefghij'"   # too narrow to cut well


class TestSlots:
    def test_ranges_in_sentences(self):
        assert slot_ranges([0, 1, 2, 3, 7, 9, 10]) == "0–3, 7, 9–10"
        assert slot_ranges([]) == "none"
        assert script_slot_ranges is slot_ranges

    def test_ranges_in_labels(self):
        assert compact_ranges([0, 1, 2, 3, 7, 9, 10]) == "0–3,7,9–10"
        assert compact_ranges([]) == "-"
        assert compact_ranges([0, 2, 4, 6, 8]) == "0,2,4,…+2"
