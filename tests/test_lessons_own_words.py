"""Lessons and quiz texts are written in our own words: no long run of words from the chapter."""
import ast
import re
from pathlib import Path

import pytest

from radixviz.lessons import load_lessons

ROOT = Path(__file__).resolve().parents[1]
# CI clones the repo beside a copy of shared/, as the working checkout is
CHAPTER = next((p for p in (ROOT.parent / "shared/seed/000_c243e8a04acddeb8.txt",
                            Path("/work/shared/seed/000_c243e8a04acddeb8.txt")) if p.exists()),
               ROOT.parent / "shared/seed/000_c243e8a04acddeb8.txt")
RUN = 8   # words in a row that would count as copying


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_#]+", text.lower())


def _runs(text: str) -> set:
    words = _words(text)
    return {" ".join(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


@pytest.mark.skipif(not CHAPTER.exists(), reason="the source chapter is not on this machine")
def test_no_long_runs_copied_from_the_chapter():
    import radixviz.lessons.quiz.fixed as fixed
    chapter = _runs(CHAPTER.read_text(encoding="utf-8"))
    texts = {str(l.path): l.path.read_text(encoding="utf-8") for l in load_lessons()}
    texts["fixed.py"] = Path(fixed.__file__).read_text(encoding="utf-8")
    # the step narration, the README and the documentation site teach too
    texts["narrate.py"] = (ROOT / "radixviz/script/narrate.py").read_text(encoding="utf-8")
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        texts[str(page.relative_to(ROOT))] = page.read_text(encoding="utf-8")
    copied = {name: sorted(_runs(text) & chapter) for name, text in texts.items()}
    assert {k: v for k, v in copied.items() if v} == {}


# SGLang v0.5.23's unified tree, as its wheel unpacks beside the checkout (never committed)
WHEEL = ROOT.parent / "ref/sglang-0.5.23/sglang/srt/mem_cache"
UNIFIED_SOURCES = ("unified_cache/components/README.md", "unified_cache/components/base.py",
                   "unified_cache/components/swa.py", "unified_cache/components/mamba.py",
                   "unified_radix_cache.py")


@pytest.mark.skipif(not WHEEL.exists(), reason="SGLang v0.5.23's wheel is not unpacked on this machine")
def test_the_unified_lessons_copy_no_run_of_sglangs_own_words():
    import radixviz.engines.unified.quiz as quiz
    sglang = set().union(*(_runs((WHEEL / name).read_text(encoding="utf-8")) for name in UNIFIED_SOURCES))
    texts = {str(l.path): l.path.read_text(encoding="utf-8") for l in load_lessons() if l.number in (9, 18, 19)}
    # the quiz's words are its strings (its code shares Python's boilerplate with any file)
    tree = ast.parse(Path(quiz.__file__).read_text(encoding="utf-8"))
    texts["quiz.py"] = "\n".join(node.value for node in ast.walk(tree)
                                  if isinstance(node, ast.Constant) and isinstance(node.value, str))
    texts["challenge"] = (ROOT / "lessons/challenges/19-in-the-tree-out-of-reach.md").read_text(encoding="utf-8")
    copied = {name: sorted(_runs(text) & sglang) for name, text in texts.items()}
    assert {k: v for k, v in copied.items() if v} == {}
