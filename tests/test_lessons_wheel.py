"""The lessons ship inside the wheel and load from an installed copy, not from the checkout."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from radixviz.lessons import load_lessons

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("setuptools")
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "lessons", src / "lessons")
    shutil.copytree(ROOT / "radixviz", src / "radixviz", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "-w", str(work / "out"), "--no-deps",
                    "--no-build-isolation", "-q"], check=True, capture_output=True, timeout=300)
    (built,) = (work / "out").glob("radixviz-*.whl")
    return built


def test_wheel_holds_every_lesson(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p.name for p in (ROOT / "lessons").glob("*.md"))
    assert len(shipped) >= 15   # fourteen lessons and the format guide
    assert {f"radixviz/lessons_data/{name}" for name in shipped} <= names
    challenges = sorted(p.name for p in (ROOT / "lessons" / "challenges").glob("*.md"))
    assert len(challenges) >= 11
    assert {f"radixviz/lessons_data/challenges/{name}" for name in challenges} <= names


def test_wheel_holds_every_data_file_of_the_package(wheel):
    """Templates, style sheets, the progress schema, py.typed: each file the code reads
    besides its modules is listed in pyproject's package-data."""
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "radixviz").rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and not {"__pycache__", "lessons_data"} & set(p.parts)}
    assert "radixviz/py.typed" in data and "radixviz/render/templates/step_page.html" in data
    assert data <= names, f"not in the wheel: {sorted(data - names)}"


def test_installed_wheel_loads_its_own_lessons(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel), "-q"],
                   check=True, capture_output=True, timeout=300)
    probe = ("import radixviz.lessons as L; d = L.shipped_lessons_dir(); "
             "print(d); print(len(L.load_lessons()))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(target)},
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert Path(out[0]) == target / "radixviz" / "lessons_data"
    assert out[1] == str(len(load_lessons()))   # the wheel ships every lesson of the source tree
