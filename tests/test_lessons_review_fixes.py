"""The review's items on lessons 13, 15 and 17 (issue 55), each held to the engine or to the
order in which a lesson teaches: a prediction may only need a rule the lesson stated before it."""
from __future__ import annotations

import pytest

from radixviz.lessons import Narrative, Predict, load_lessons
from radixviz.script import Session, parse_script

LESSONS = {lesson.number: lesson for lesson in load_lessons()}


def folded(text: str) -> str:
    return " ".join(text.split())


def prose_before(number: int, question_start: str) -> str:
    """The lesson's narrative text before the prediction whose question starts so."""
    seen = []
    for block in LESSONS[number].blocks:
        if isinstance(block, Predict) and folded(block.question).startswith(question_start):
            return folded(" ".join(seen))
        if isinstance(block, Narrative):
            seen.append(block.text)
    raise AssertionError(f"lesson {number} has no prediction {question_start!r}")


def explanation(number: int, question_start: str) -> str:
    return next(folded(b.explain) for b in LESSONS[number].blocks
                if isinstance(b, Predict) and folded(b.question).startswith(question_start))


@pytest.mark.parametrize("number, question, rule", [
    (13, "reset sends how many events?", 'a third kind of event, **"cleared"**'),
    (17, "How many tokens does load_back report as loaded?",
     "`load_back` collects the host slots of the stretch it will copy first, and uses that list to the end"),
    (17, "How many of the ten device slots it hands out hold keys and values",
     "the host pool hands out free slots in the order they were freed"),
])
def test_a_prediction_needs_only_rules_taught_before_it(number, question, rule):
    assert rule in prose_before(number, question)


def test_a_page_is_reported_removed_when_it_leaves_the_tree_not_when_its_slots_are_freed():
    # the host tier's evict frees every device slot and keeps every node: no "removed" event
    session = Session(device="cpu")
    session.run('engine hicache\nhost-size 160\nevents on\ninsert "Hello_world"\ninsert "Hello_there"')
    (evict,) = parse_script("evict 100")
    record = session.apply(evict)
    assert record.result["evicted"] > 0
    assert not [e for e in record.kv_events if e.kind == "removed"]
    text = folded(LESSONS[13].path.read_text(encoding="utf-8"))
    assert "each page that leaves it (\"removed\")" in text and "each page it frees" not in text
    assert "A page is reported removed when it leaves the tree" in explanation(15, "evict 100 drops")


def test_the_constructors_cleared_event_is_not_said_to_be_lost():
    said = explanation(13, "reset sends how many events?")
    assert "never hears" not in said and "replay socket" in said


def test_a_whole_prompt_of_ten_tokens_is_not_said_to_load_ten_back():
    text = folded(LESSONS[17].path.read_text(encoding="utf-8"))
    assert 'A request for "greetings!" now arrives: a host hit of ten tokens' not in text
    assert "a request matches at most its length minus one token" in text


@pytest.mark.parametrize("number, fact", [
    (13, "its cache salt, then its own `extra_key` if it gave one, then the LoRA adapter's id"),
    (13, "joined end to end with no separator"),
    (14, "0 for every replica started with plain `--dp-size`"),
    (14, "`prefix_hash` (#15935, 2025-12-27)"),
    (15, "in gigabytes with `--hicache-size`"),
    (15, "#28614 (opened 2026-06-18, merged) lifted that rule"),
    (15, "in the order of the cache's eviction policy"),
    (17, "the second is a wrong rule that the default `write_through` reaches too"),
    (17, "a device-to-host write in flight under `write_through` is guarded by the node's lock instead"),
])
def test_the_reviews_smaller_items_and_gaps_are_taught(number, fact):
    # each with its source in docs/history-sources.md ("Issue 55")
    assert fact in folded(LESSONS[number].path.read_text(encoding="utf-8"))
