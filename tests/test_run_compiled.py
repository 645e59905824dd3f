"""An install with only compiled ``.pyc`` files: tracing works, views name the step instead.

The package is copied, compiled in place (``compileall -b``), and every ``.py`` removed; the
commands then run from that copy in a fresh interpreter, as a person would run them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "radixviz"
SCRIPT = "insert Hello_L.A.!; insert Hello_L.A.!world; match Hello_world; lock Hello_; evict 3"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compiled")
    shutil.copytree(PACKAGE, root / "radixviz", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-b", "-q", str(root / "radixviz")], check=True)
    for source in (root / "radixviz").rglob("*.py"):
        source.unlink()
    return root


def run_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="160")
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_copy_really_has_no_sources(compiled):
    assert not list((compiled / "radixviz").rglob("*.py"))
    done = run_in(compiled, "-c", "import radixviz.engines.v2024.cache as m; print(m.__file__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(compiled / "radixviz" / "engines" / "v2024" / "cache.pyc")


def test_run_steps_names_each_step(compiled):
    done = run_in(compiled, "-m", "radixviz", "run", "--steps", "--width", "160", "-e", SCRIPT)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Traceback" not in done.stderr
    assert "radixviz.engines.v2024.cache [match.compare]: step match.compare" in out
    assert "radixviz.engines.v2024.cache [split]: step split" in out
    assert "radixviz.engines.v2024.cache [evict.pop]: step evict.pop" in out
    assert "radixviz.script.session [alloc]: step alloc" in out
    assert "split after 6 tokens: 'Hello_' above 'L.A.!'" in out   # the narration is unchanged
    assert "match_prefix returns 6 token(s)" in out


def test_run_json_steps_have_no_line_but_a_step(compiled):
    done = run_in(compiled, "-m", "radixviz", "run", "--json", "--steps", "-e", SCRIPT)
    assert done.returncode == 0, done.stderr
    steps = [s for op in json.loads(done.stdout)["ops"] for s in op["steps"]]
    split = next(s for s in steps if s["kind"] == "split")
    assert (split["label"], split["file"], split["line"], split["source"]) == \
        ("split", "radixviz.engines.v2024.cache", None, "step split")


def test_code_pane_shows_the_step_name(compiled):
    done = run_in(compiled, "-c", (
        "from rich.console import Console\n"
        "from radixviz.tui.widgets.code_pane import code_view\n"
        "Console(width=100).print(code_view('radixviz.engines.v2024.cache', 'match.compare', 20))\n"))
    assert done.returncode == 0, done.stderr
    assert "step match.compare" in done.stdout and "no source file" in done.stdout
