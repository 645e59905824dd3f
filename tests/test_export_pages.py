"""``radixviz export -o x.html|x.gif|x.pdf --all-steps`` and ``radixviz lesson N --export``:
what a teacher gets in the file, read back as a person (or Pillow) would."""
import html
import io
import re
import shutil
import textwrap

import pytest


pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")

CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'


def step_count(cli, *flags):
    """How many micro-steps the chapter's example has, as ``run --steps`` counts them."""
    _code, out, _ = cli("run", "--device", "cpu", "--json", "--steps", "-e", CHAPTER, *flags)
    import json
    return sum(len(op["steps"]) for op in json.loads(out)["ops"])


class TestHtmlPage:
    def test_one_section_per_step_numbered_from_one(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        code, out, err = cli("export", "--device", "cpu", "-e", CHAPTER, "--buggy", "-o", str(target))
        total = step_count(cli, "--buggy")
        assert (code, err) == (0, "") and out == f"wrote {target} ({total} steps)\n"
        page = target.read_text(encoding="utf-8")
        numbers = [int(n) for n in re.findall(r'<section class="step" id="s(\d+)"', page)]
        assert numbers == list(range(1, total + 1))
        assert page.count("<svg") == total

    def test_self_contained_no_url_to_fetch(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target))
        page = target.read_text(encoding="utf-8")
        assert not re.search(r'<(script|link|img)[^>]+(src|href)=', page)
        assert "<style>" in page and "<script>" in page

    def test_the_buggy_match_is_marked_and_explained(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        cli("export", "--device", "cpu", "-e", CHAPTER, "--buggy", "-o", str(target))
        page = target.read_text(encoding="utf-8")
        assert "✗ &#x27;world&#x27;" in page or "✗ &#39;world&#39;" in page    # the SVG node
        assert "this buggy walk returns 11" in page
        assert "matcher BUGGY" in page
        assert 'class="hi"' in page                                             # the engine line

    def test_a_script_is_named_not_located_and_its_code_reads_as_in_the_app(self, cli, tmp_path):
        """A teacher shares the page: it names the script, never the folders it sits in, and
        shows the engine's code without the lines that only report steps to the viewer (the
        app's code pane hides them too)."""
        script = tmp_path / "home" / "teacher" / "chapter.rvz"
        script.parent.mkdir(parents=True)
        script.write_text(CHAPTER.replace("; ", "\n") + "\n", encoding="utf-8")
        target = tmp_path / "steps.html"
        code, _, err = cli("export", "--device", "cpu", str(script), "-o", str(target))
        page = target.read_text(encoding="utf-8")
        assert (code, err) == (0, "")
        assert "<title>radixviz · chapter.rvz</title>" in page and "teacher" not in page
        assert "tr.emit" not in page and "tr.active" not in page
        assert 'class="hi"' in page   # the line that did the step is still shown

    def test_dark_theme_recolours_the_diagram(self, cli, tmp_path):
        light, dark = tmp_path / "light.html", tmp_path / "dark.html"
        cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(light))
        cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(dark), "--theme", "dark")
        assert 'class="theme-dark"' in dark.read_text(encoding="utf-8")
        assert 'fill="#0d1117"' in dark.read_text(encoding="utf-8")
        assert 'fill="#0d1117"' not in light.read_text(encoding="utf-8")

    def test_bad_options_are_one_line_and_write_nothing(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        code, _, err = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target), "--fps", "3")
        assert code == 2 and len(err.strip().splitlines()) == 1 and not target.exists()
        code, _, err = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target), "--theme", "pink")
        assert code == 2 and not target.exists()

    def test_a_refused_operation_still_writes_what_ran_and_exits_2(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        code, _out, err = cli("export", "--device", "cpu", "-e", "insert abc; unlock abc",
                              "-o", str(target))
        assert code == 2 and "no lock" in err and target.exists()


class TestGif:
    def test_one_frame_per_step(self, cli, tmp_path):
        from PIL import Image
        target = tmp_path / "steps.gif"
        code, _, _ = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target), "--fps", "4")
        assert code == 0
        with Image.open(target) as gif:
            assert gif.n_frames == step_count(cli)
            assert gif.info["duration"] == 250 and gif.info["loop"] == 0

    def test_per_op_one_frame_per_operation(self, cli, tmp_path):
        from PIL import Image
        target = tmp_path / "ops.gif"
        code, out, _ = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target), "--per-op")
        assert code == 0 and "(3 operations)" in out
        with Image.open(target) as gif:
            assert gif.n_frames == 3 and gif.info["duration"] == 1000

    def test_frames_keep_the_marks_colours(self, cli, tmp_path):
        from PIL import Image
        target = tmp_path / "steps.gif"
        cli("export", "--device", "cpu", "-e", CHAPTER, "--buggy", "-o", str(target))
        with Image.open(target) as gif:
            gif.seek(gif.n_frames - 1)
            colours = {rgb for _, rgb in gif.convert("RGB").getcolors(1 << 20)}
        # the wrongly matched node's red border (#d1242f) is on the last frame
        assert any(r > 180 and g < 80 and b < 80 for r, g, b in colours)


class TestPdf:
    def test_a_page_per_step(self, cli, tmp_path):
        target = tmp_path / "handout.pdf"
        code, _out, _ = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(target), "--all-steps")
        data = target.read_bytes()
        assert code == 0 and data.startswith(b"%PDF")
        pages = len(re.findall(rb"/Type\s*/Page\b", data))
        assert pages == step_count(cli)

    def test_all_steps_without_a_folder_needs_a_pdf(self, cli, tmp_path):
        code, _, err = cli("export", "--device", "cpu", "-e", CHAPTER, "-o", str(tmp_path / "x.svg"),
                           "--all-steps")
        assert code == 2 and "--all-steps needs a DIR" in err


class TestLessonExport:
    def test_prose_and_predictions_with_answers_behind_a_click(self, cli, tmp_path):
        target = tmp_path / "lesson.html"
        code, _out, err = cli("lesson", "2", "--device", "cpu", "--export", str(target))
        assert code == 0, err
        page = target.read_text(encoding="utf-8")
        assert "<title>Lesson 2: " in page
        assert 'How many tokens does match_prefix("abcd") return?' in html.unescape(page)
        # the answer sits inside a closed <details>: hidden until the reader clicks
        for details in re.findall(r"<details>(.*?)</details>", page, flags=re.S):
            assert details.startswith("<summary>Show the answer</summary>")
        assert "<details open" not in page
        assert "Answer: 4" in page

    def test_a_lessons_words_are_text_in_the_page_never_markup(self, cli, tmp_path):
        lessons = tmp_path / "lessons"
        lessons.mkdir()
        (lessons / "50-tags.md").write_text(textwrap.dedent("""\
            ---
            id: tags
            number: 50
            title: Tags <i>here</i>
            ---
            Words with <script>alert(1)</script> in them.

            ```predict
            question: Is <b>this</b> bold?
            choices: <u>yes</u> | no
            answer: no
            explain: <img src=x onerror=alert(2)>
            ```

            ```radixviz
            insert "<em>"
            ```
            """), encoding="utf-8")
        target = tmp_path / "tags.html"
        code, _, err = cli("lesson", "50", "--lessons", str(lessons), "--device", "cpu",
                           "--export", str(target))
        assert code == 0, err
        page = target.read_text(encoding="utf-8")
        for tag in ("<i>here", "<script>alert", "<b>this", "<u>yes", "<img src", "<em>"):
            assert tag not in page, tag
        shown = html.unescape(page)
        for words in ("Lesson 50: Tags <i>here</i>", "Is <b>this</b> bold?", "<u>yes</u>",
                      "<img src=x onerror=alert(2)>", "<script>alert(1)</script>"):
            assert words in shown, words

    def test_lesson_gif(self, cli, tmp_path):
        from PIL import Image
        target = tmp_path / "lesson.gif"
        code, out, _ = cli("lesson", "1", "--device", "cpu", "--export", str(target), "--per-op")
        assert code == 0
        with Image.open(io.BytesIO(target.read_bytes())) as gif:
            assert gif.n_frames == int(re.search(r"\((\d+) operations\)", out).group(1))

    def test_unknown_format(self, cli, tmp_path):
        code, _, err = cli("lesson", "1", "--export", str(tmp_path / "x.docx"))
        assert code == 2 and ".html, .gif or .pdf" in err


class TestLimits:
    def test_a_refused_first_operation_says_why(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        code, _, err = cli("export", "--device", "cpu", "-e", "unlock abc", "-o", str(target))
        assert code == 2 and "no lock on 'abc'" in err and not target.exists()

    def test_a_huge_pool_is_summed_up_not_drawn(self, cli, tmp_path):
        target = tmp_path / "steps.html"
        code, _, _ = cli("export", "--device", "cpu", "--pool-size", "100000", "-e", "insert abc",
                         "-o", str(target))
        page = target.read_text(encoding="utf-8")
        assert code == 0 and "3/100000 used" in page and '<pre class="pool">' not in page

    def test_too_many_frames_for_a_gif(self, cli, tmp_path):
        target = tmp_path / "long.gif"
        ops = "; ".join(f"insert k{i:04d}x" for i in range(120))
        code, _, err = cli("export", "--device", "cpu", "--pool-size", "1024", "-e", ops, "-o", str(target))
        assert code == 2 and "too many for a .gif (at most 1000)" in err and not target.exists()

    def test_per_op_brings_a_long_session_under_the_limit(self, cli, tmp_path, monkeypatch):
        # the limit lowered to 8 pictures: the same rule as at 1000, with 8 frames to draw, not 120
        from radixviz.commands import export_pages
        monkeypatch.setattr(export_pages, "MAX_PICTURES", 8)
        target = tmp_path / "long.gif"
        ops = "; ".join(f"insert k{i:04d}x" for i in range(8))
        code, _, err = cli("export", "--device", "cpu", "-e", ops, "-o", str(target))
        assert code == 2 and "too many for a .gif (at most 8)" in err and not target.exists()
        code, out, _ = cli("export", "--device", "cpu", "-e", ops, "-o", str(target), "--per-op")
        assert code == 0 and "(8 operations)" in out
        from PIL import Image
        with Image.open(target) as gif:
            assert gif.n_frames == 8
