"""``radixviz export``: diagrams of the final state, one step or every step, in every format."""
import shutil
from pathlib import Path

import pytest

from radixviz.cli import main

GOLDEN = Path(__file__).parent / "golden"
CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'
HAS_DOT = shutil.which("dot") is not None
MAGIC = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF"}


def export(capsys, *argv):
    with pytest.raises(SystemExit) as info:
        main(["export", "--device", "cpu", *argv])
    out, err = capsys.readouterr()
    return info.value.code, out, err


class TestFinalState:
    @pytest.mark.parametrize("buggy", [False, True], ids=["fixed", "buggy"])
    def test_dot_equals_the_golden_file(self, capsys, tmp_path, buggy):
        target = tmp_path / "chapter.dot"
        code, out, err = export(capsys, "-e", CHAPTER, "-o", str(target), *(["--buggy"] if buggy else []))
        assert (code, out, err) == (0, f"wrote {target}\n", "")
        golden = GOLDEN / f"chapter-{'buggy' if buggy else 'fixed'}.dot"
        assert target.read_text(encoding="utf-8") == golden.read_text(encoding="utf-8")

    @pytest.mark.skipif(not HAS_DOT, reason="Graphviz dot not installed")
    @pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
    def test_every_format_by_extension(self, capsys, tmp_path, fmt):
        target = tmp_path / f"chapter.{fmt}"
        code, _, _ = export(capsys, "-e", CHAPTER, "--buggy", "-o", str(target))
        assert code == 0 and target.read_bytes().startswith(MAGIC[fmt])
        if fmt == "svg":
            svg = target.read_text(encoding="utf-8")
            assert "✗ &#39;world&#39;" in svg or "✗ 'world'" in svg

    def test_max_edge_controls_elision(self, capsys, tmp_path):
        key = "x" * 30 + "END"
        export(capsys, "-e", f"insert {key}", "-o", str(tmp_path / "short.dot"))
        export(capsys, "-e", f"insert {key}", "--max-edge", "40", "-o", str(tmp_path / "long.dot"))
        assert f"'{key}'" not in (tmp_path / "short.dot").read_text(encoding="utf-8")
        assert f"'{key}'" in (tmp_path / "long.dot").read_text(encoding="utf-8")

    def test_script_file(self, capsys, tmp_path):
        script = tmp_path / "ops.rv"
        script.write_text("insert abc\ninsert abd\n", encoding="utf-8")
        code, _, _ = export(capsys, str(script), "-o", str(tmp_path / "t.dot"))
        assert code == 0 and "'ab'" in (tmp_path / "t.dot").read_text(encoding="utf-8")


class TestSteps:
    def test_one_step_is_drawn_with_its_marks_and_title(self, capsys, tmp_path):
        target = tmp_path / "split.dot"
        # step 19 as `run --steps` and the app's status line number it
        code, _, _ = export(capsys, "-e", CHAPTER, "--step", "19", "-o", str(target))
        text = target.read_text(encoding="utf-8")
        assert code == 0
        assert "step 19: split after 6 tokens: 'Hello_' above 'L.A.!'" in text.replace('\\"', '"')
        assert "▶✂ 'Hello_'" in text and "\"✂ 'L.A.!'" in text

    def test_one_current_node_per_step(self, capsys, tmp_path):
        for step in range(1, 22):
            target = tmp_path / f"s{step}.dot"
            export(capsys, "-e", CHAPTER, "--step", str(step), "-o", str(target))
            nodes = [line for line in target.read_text(encoding="utf-8").splitlines()
                     if line.startswith("  n") and "->" not in line]
            assert sum("▶" in line for line in nodes) <= 1, step

    def test_step_before_the_split_has_no_split(self, capsys, tmp_path):
        target = tmp_path / "before.dot"
        export(capsys, "-e", CHAPTER, "--step", "18", "-o", str(target))
        assert "'Hello_L.A.!'" in target.read_text(encoding="utf-8")

    def test_all_steps_one_numbered_file_each(self, capsys, tmp_path):
        folder = tmp_path / "frames"
        code, out, _ = export(capsys, "-e", CHAPTER, "--all-steps", str(folder), "--format", "dot")
        names = sorted(p.name for p in folder.iterdir())
        assert code == 0 and out == f"wrote 21 diagrams to {folder}\n"
        assert names == [f"step-{i:04d}.dot" for i in range(1, 22)]
        assert "step 1: ▶ insert" in (folder / "step-0001.dot").read_text(encoding="utf-8").replace('\\"', '"')

    @pytest.mark.skipif(not HAS_DOT, reason="Graphviz dot not installed")
    def test_all_steps_as_svg_by_default(self, capsys, tmp_path):
        folder = tmp_path / "svg"
        code, _, _ = export(capsys, "-e", "insert ab; match a", "--all-steps", str(folder))
        files = sorted(folder.iterdir())
        assert code == 0 and files and all(p.suffix == ".svg" for p in files)


class TestBadInput:
    @pytest.mark.parametrize("argv,message", [
        (["-e", "insert ab"], "radixviz: export needs -o FILE or --all-steps DIR\n"),
        (["-e", "insert ab", "-o", "x.jpg"],
         "radixviz: cannot tell the format of x.jpg: use .dot, .svg, .png or .pdf (a diagram), .html (a page "
         "stepping through every step) or .gif (animated)\n"),
        (["-e", "insert ab", "--step", "99", "-o", "x.dot"],
         "radixviz: --step 99: this run has 6 steps, numbered 1 to 6\n"),
        (["-e", "insert ab; match", "-o", "x.dot"],
         "<-e>:1:12: missing argument: match needs a key, e.g. match \"Hello\"\n"),
    ])
    def test_one_line_exit_2(self, capsys, tmp_path, monkeypatch, argv, message):
        monkeypatch.chdir(tmp_path)
        code, _, err = export(capsys, *argv)
        assert (code, err) == (2, message)
        assert not list(tmp_path.iterdir())

    def test_without_graphviz_dot_works_and_svg_says_how_to_install(self, capsys, tmp_path, monkeypatch):
        monkeypatch.setenv("PATH", "")   # the graphviz package finds no dot: ExecutableNotFound
        code, _, _ = export(capsys, "-e", CHAPTER, "-o", str(tmp_path / "ok.dot"))
        assert code == 0
        code, _, err = export(capsys, "-e", CHAPTER, "-o", str(tmp_path / "no.svg"))
        assert code == 2 and err.count("\n") == 1 and "apt-get install graphviz" in err
        assert not (tmp_path / "no.svg").exists()

    def test_refused_first_operation_draws_the_empty_tree(self, capsys, tmp_path):
        target = tmp_path / "empty.dot"
        code, _, err = export(capsys, "-e", "unlock a", "-o", str(target))
        assert code == 2 and err == "<-e>:1:1: no lock on 'a' to release (locks held: none)\n"
        assert 'label="root\\n0 tokens"' in target.read_text(encoding="utf-8")

    def test_refused_operation_still_draws_the_state_reached(self, capsys, tmp_path):
        target = tmp_path / "partial.dot"
        code, _, err = export(capsys, "-e", "insert abc; unlock abc", "-o", str(target))
        assert code == 2 and err == "<-e>:1:13: no lock on 'abc' to release (locks held: none)\n"
        assert "'abc'" in target.read_text(encoding="utf-8")
