"""Quizzes: ``make_quiz(seed, difficulty, lesson=None, count=6)`` deals a ``Quiz`` of
questions (``questions``), some fixed (``fixed``), most generated on a fresh scenario for
each seed (``generate`` and its per-engine topics, ``builder``).
"""
from .questions import Feedback, Question
from .quiz import Quiz, make_quiz

__all__ = ["Feedback", "Question", "Quiz", "make_quiz"]
