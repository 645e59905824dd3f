"""The teacher diagrams in assets/: present, and regenerable by the script next to them."""
import importlib.util
import shutil
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def load_make():
    spec = importlib.util.spec_from_file_location("assets_make", ASSETS / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestAssets:
    @pytest.mark.parametrize("name,words", [
        ("chapter-fixed.svg", ["splits", "returns 6 slots", "✂"]),
        ("chapter-buggy.svg", ["returns 11 slots", "✗", "world"]),
    ])
    def test_committed_svgs_show_each_matchers_outcome(self, name, words):
        svg = (ASSETS / name).read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml")
        for word in words:
            assert word in svg

    def test_captions_come_from_the_engine(self):
        make = load_make()
        fixed, buggy = make.chapter_frame(False)[0], make.chapter_frame(True)[0]
        assert make.caption(fixed, False).endswith("returns 6 slots")
        assert "returns 11 slots; the last 5 belong to" in make.caption(buggy, True)

    @pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")
    def test_script_regenerates_both(self, tmp_path):
        written = load_make().main(tmp_path)
        assert sorted(p.name for p in written) == ["chapter-buggy.svg", "chapter-fixed.svg"]
        assert all(p.read_bytes().startswith(b"<?xml") for p in written)
