"""The shipped lessons: nine on the 2024 cache, the rest on today's (13-14 namespaces, events and
routing; 15-16 the host tier) load, in order, and every operation and prediction checks out."""
import pytest

from radixviz.lessons import Operations, Predict, check_lesson, load_lessons

LESSONS = load_lessons()


def test_lessons_numbered_in_order():
    numbers = [l.number for l in LESSONS]
    # 17: the host tier's 9fbe6800a bugs; 18-19: v0.5.23's unified tree; 20: why a request missed
    assert numbers == sorted(set(numbers)) and set(range(1, 21)) <= set(numbers)
    assert len({l.id for l in LESSONS}) == len(LESSONS)
    assert all(l.shipped and l.title for l in LESSONS)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.id)
def test_lesson_passes_check(lesson):
    assert check_lesson(lesson) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.id)
def test_lesson_pauses_for_a_checked_prediction(lesson):
    predicts = [b for b in lesson.blocks if isinstance(b, Predict)]
    assert predicts, "every lesson asks the learner to predict at least once"
    assert any(p.check for p in predicts), "at least one prediction is held to the engine"


def test_operation_line_numbers_point_into_the_file():
    for lesson in LESSONS:
        lines = lesson.path.read_text(encoding="utf-8").splitlines()
        for block in lesson.blocks:
            if isinstance(block, Operations):
                assert lines[block.line - 2].strip() == "```radixviz"
                for op in block.ops:
                    assert op.text in lines[op.line - 1], (lesson.path, op.line)


def test_bug_lesson_reproduces_wrong_slots_with_buggy_matcher():
    from radixviz.script import Session
    lesson = next(l for l in LESSONS if l.number == 8)
    session = Session(device="cpu")
    wrong = []
    for op in lesson.operations:
        record = session.apply(op)
        if op.name == "match" and session.cache.buggy_match:
            wrong.append(record.result["disagreement"]["wrong_slots"])
    assert wrong and all(w == [22, 23, 24, 25, 26] for w in wrong)


def test_lessons_cover_the_chapter_topics():
    text = {l.number: l.path.read_text(encoding="utf-8").lower() for l in LESSONS}
    for number, words in {1: ["radix", "trie", "slot"], 2: ["split", "last_node"],
                          3: ["return", "free"], 4: ["leaf", "heap", "skipped", "parent"],
                          5: ["evictable_size", "delta"], 6: ["match_prefix", "inc_ref_counter",
                          "dec_ref_counter", "sampled"], 7: ["lpm", "fcfs", "random", "weight", "0.4"],
                          8: ["#7", "matcher buggy"], 9: ["#2442", "#364", "page size", "lfu", "host memory"],
                          15: ["#2693", "evicted", "backed up", "load_back", "threshold"],
                          16: ["write_through_selective", "write_back", "auto-sync off", "sync"]}.items():
        for word in words:
            assert word in text[number], (number, word)
