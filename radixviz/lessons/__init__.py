"""Lessons, quizzes, challenges and progress: the content layer (no UI imports, no torch
at import). One subpackage each: ``lesson/``, ``quiz/``, ``challenges/``, ``progress/``; what
several of them use sits here: ``grading`` (the one grader of predictions and questions),
``scenario`` (operations on a real session, the tree as text) and ``markdown_file`` (lesson
and challenge files read with markdown-it). Inside the package, imports go down this list:
progress, the shared modules, lesson, then quiz and challenges (siblings).

Lessons (``radixviz.lessons`` re-exports these from ``lesson/``)
    ``load_lessons(extra_dirs=(), problems=None) -> list[Lesson]`` reads the shipped lessons
    (the top-level ``lessons/`` folder; ``radixviz/lessons_data/`` inside a wheel) and any
    folders a teacher adds, ordered by number. ``Lesson(id, number, title, path, blocks,
    shipped)``; ``lesson.operations`` is every Op in order, ``lesson.script`` the op text.
    ``blocks`` is a tuple of, in file order:

    - ``Narrative(text, line)``: Markdown to show.
    - ``Operations(text, line, ops)``: a fenced ```radixviz block; ``ops`` are
      ``radixviz.script.Op`` parsed with the file's own line numbers. All blocks of a
      lesson play in ONE continuing ``Session`` (a ``reset`` op starts afresh).
    - ``Predict(question, choices, answer, line, check, explain)``: a pause before the
      next Operations block; ``predict.accepts(reply)`` grades a reply (the answer text,
      or a choice's number or letter). Show ``answer``/``explain`` after the next block runs.

    A bad file raises ``LessonError`` (``.file``, ``.line``, ``.message``; str is
    ``FILE:LINE: message``), or is collected into ``problems`` when a list is passed.
    ``check_lesson(lesson) -> list[LessonError]`` runs every operation on a real Session
    and compares each predict's ``check`` with what the engine computed.

Quizzes
    ``radixviz.lessons.quiz.make_quiz(seed, difficulty, lesson=None, count=6, selftest=False)``
    -> ``Quiz(questions, ...)``; ``quiz.answer(i, reply) -> Feedback(correct, answer,
    explanation, understood)``. A ``Question`` has ``kind`` (choice, number, node, order,
    slots, text), ``prompt``, ``choices``, ``nodes``, ``hint()``, ``grade(reply)``,
    ``example_reply()`` and ``scenario``: operation text that replays the question in the
    stepper (the part after ``# the question:`` is the asked operation).
    ``radixviz.lessons.quiz.generate.generate_question(seed, difficulty, topic, lesson)`` makes one.

Progress
    ``radixviz.lessons.progress.Progress.load()`` (``.lessons``, ``.scores``, ``.warning``
    when a damaged file was set aside), ``mark_lesson_completed(lesson)`` for a player
    that reaches a lesson's end. ``$RADIXVIZ_DATA_DIR`` overrides the data folder.

Challenges
    ``radixviz.lessons.challenges.challenge.load_challenges(extra_dirs=())``, ``attempt(challenge,
    script) -> Verdict``; goal conditions in ``radixviz.lessons.challenges.goals``.
"""
from .lesson.checker import check_lesson
from .lesson.loader import find_lesson, lesson_files, load_lessons, shipped_lessons_dir
from .lesson.model import Lesson, LessonError, Narrative, Operations, Predict
from .lesson.parse import parse_lesson, read_lesson_text

__all__ = ["Lesson", "LessonError", "Narrative", "Operations", "Predict", "load_lessons",
           "find_lesson", "lesson_files", "shipped_lessons_dir", "parse_lesson", "read_lesson_text",
           "check_lesson"]

