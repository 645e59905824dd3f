"""A lesson may predict what one declared component holds (``protected.swa``, ``tombstones.swa``,
``holders.mamba``, ``used.mamba``): read from the contract's ``held``, ``parts`` and pool
pictures, so any engine that declares its memory gets them; one that does not declare the
component is told the check is unknown."""
import textwrap

from radixviz.lessons import check_lesson, load_lessons

LESSON = textwrap.dedent('''\
    # Components

    ```radixviz
    {setup}
    ```

    ```predict
    question: How many?
    answer: {answer}
    check: {check}
    explain: Because.
    ```

    ```radixviz
    {ops}
    ```
''')


def _problems(tmp_path, setup: str, ops: str, check: str, answer: str) -> list[str]:
    (tmp_path / "50-components.md").write_text(LESSON.format(setup=setup, ops=ops, check=check, answer=answer),
                                               encoding="utf-8")
    (lesson,) = load_lessons([tmp_path], include_shipped=False)
    return [p.message for p in check_lesson(lesson)]


SWA = "engine unified\nwindow 4\ncomponents full,swa"
MAMBA = "engine unified\ncomponents full,mamba\nmamba-chunk 4"


def test_a_tombstone_and_a_window_lock_are_counted(tmp_path):
    assert _problems(tmp_path, SWA + '\ninsert "Once_upon_a_time"', "evict 4 swa", "tombstones.swa", "1") == []
    locked = SWA + '\ninsert "Once_upon_a_time"'
    assert _problems(tmp_path, locked, 'lock "Once_upon_a_time"', "protected.swa", "4") == []
    assert _problems(tmp_path, locked, 'lock "Once_upon_a_time"', "protected.full", "16") == []


def test_states_in_the_tree_and_in_the_pool(tmp_path):
    setup = MAMBA + '\ninsert "abcdefgh"'
    assert _problems(tmp_path, setup, 'insert "abcdxyzw"', "holders.mamba", "2") == []
    # a request holding its match keeps its own copy of the state: one slot more in use
    assert _problems(tmp_path, setup, 'lock "abcdefgh"', "used.mamba", "2") == []


def test_a_component_the_engine_does_not_declare_is_an_unknown_check(tmp_path):
    (problem,) = _problems(tmp_path, "engine 2026", 'insert "abc"', "tombstones.swa", "0")
    assert problem.startswith("unknown check 'tombstones.swa'") and "tombstones.COMPONENT" in problem
