"""Lesson files a teacher writes: parsed into blocks, and every mistake reported as FILE:LINE."""
import subprocess
import sys
import textwrap

import pytest

from radixviz.lessons import LessonError, Narrative, Operations, Predict, check_lesson, load_lessons

GOOD = textwrap.dedent('''\
    ---
    id: mine
    number: 42
    title: My lesson
    ---
    Some words.

    ```radixviz
    insert "abcd"
    ```

    ```predict
    question: How many tokens of "abxy" hit?
    choices: 0 | 2 | 4
    answer: 2
    check: matched
    ```

    ```radixviz
    match "abxy"
    ```
    ''')


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_one(tmp_path, name, text):
    write(tmp_path, name, text)
    return load_lessons([tmp_path], include_shipped=False)


class TestParsing:
    def test_blocks_in_file_order_with_lines(self, tmp_path):
        text = GOOD.replace('```radixviz\nmatch', '```radixviz\ninsert "abcd"\nmatch')
        (lesson,) = load_one(tmp_path, "x.md", text)
        assert (lesson.id, lesson.number, lesson.title) == ("mine", 42, "My lesson")
        kinds = [type(b) for b in lesson.blocks]
        assert kinds == [Narrative, Operations, Predict, Operations]
        predict, ops = lesson.blocks[2], lesson.blocks[3]
        assert predict.line == 12 and predict.choices == ("0", "2", "4") and predict.answer == "2"
        assert ops.line == 20 and [o.line for o in ops.ops] == [20, 21]
        assert predict.accepts("b") and predict.accepts("2") and not predict.accepts("4")

    def test_a_reply_that_is_a_choice_is_read_as_that_choice_not_its_number(self):
        predict = Predict("How many nodes?", ("2", "3", "4"), "3", line=1)
        assert predict.accepts("3") and predict.accepts("b")
        assert not predict.accepts("2")     # the first choice, not "choice number 2"
        assert Predict("Which?", ("x", "y"), "y", line=1).accepts("2")

    def test_heading_and_file_name_instead_of_front_matter(self, tmp_path):
        (lesson,) = load_one(tmp_path, "07-my-topic.md", "# A title\n\n```radixviz\ninsert ab\n```\n")
        assert (lesson.id, lesson.number, lesson.title) == ("my-topic", 7, "A title")

    def test_other_code_fences_stay_in_the_narrative(self, tmp_path):
        text = GOOD.replace("Some words.", "Some words.\n\n```text\nnot an op\n```")
        (lesson,) = load_one(tmp_path, "x.md", text)
        assert "not an op" in lesson.blocks[0].text


class TestAppOnlyPassages:
    """``<!-- app -->…<!-- /app -->`` marks words only the app can act on ("Press v now")."""

    def test_the_app_shows_them_and_every_other_reader_leaves_them_out(self, tmp_path):
        text = GOOD.replace("Some words.", "They hold numbers. <!-- app -->Press `v` now.<!-- /app --> "
                            "A model replays them.\n\n<!-- app -->\nPress `C` too.\n<!-- /app -->\n\nEnd.")
        (lesson,) = load_one(tmp_path, "x.md", text)
        narrative = lesson.blocks[0]
        assert narrative.text.endswith("They hold numbers. A model replays them.\n\nEnd.")
        assert narrative.in_app.endswith("They hold numbers. Press `v` now. A model replays them."
                                         "\n\nPress `C` too.\n\nEnd.")

    def test_lesson_8_says_press_v_only_in_the_app(self):
        import io

        from radixviz.commands.export_pages import lesson_notes
        from radixviz.lessons.lesson.reader import read_plain
        from radixviz.script import Session
        lesson = next(l for l in load_lessons() if l.number == 8)
        assert any("Press `v` now" in b.in_app for b in lesson.blocks if isinstance(b, Narrative))
        out = io.StringIO()
        read_plain(lesson, io.StringIO("a\n" * 8), out, save=False)
        assert "Press `v`" not in out.getvalue() and "radixviz verify-kv" in out.getvalue()
        notes, _ = lesson_notes(lesson, Session(device="cpu"))
        assert not any("Press `v`" in note.text for note in notes.values())

    def test_an_unpaired_marker_is_a_problem_at_its_line(self, tmp_path):
        write(tmp_path, "x.md", GOOD.replace("Some words.", "Some words.\n\n<!-- app -->Press v."))
        with pytest.raises(LessonError, match="unpaired <!-- app --> marker"):
            load_lessons([tmp_path], include_shipped=False)


class TestBadFiles:
    @pytest.mark.parametrize("change, line, words", [
        (lambda t: t.replace('match "abxy"', 'mtch "abxy"'), 20, "unknown operation 'mtch'"),
        (lambda t: t.rstrip().removesuffix("```"), 19, "unclosed ```radixviz block"),
        (lambda t: t.replace("title: My lesson\n", ""), 1, "missing title"),
        (lambda t: t.replace("```radixviz", "```radixvis"), 8, "unknown block 'radixvis'"),
        (lambda t: t.replace("answer: 2", "answer: 3"), 12, "not one of the choices"),
        (lambda t: t.replace("question: How", "quetsion: How"), 13, "bad predict line"),
        (lambda t: t.replace("number: 42", "number: x"), 3, "bad number"),
        (lambda t: t.replace("---\nSome", "Some"), 5, "a line --- to end the front matter"),
        (lambda t: t.split("---\nSome")[0], 1, "unclosed front matter"),
    ])
    def test_reported_at_its_line(self, tmp_path, change, line, words):
        path = write(tmp_path, "bad.md", change(GOOD))
        with pytest.raises(LessonError) as err:
            load_lessons([tmp_path], include_shipped=False)
        assert err.value.file == str(path) and err.value.line == line
        assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value)

    def test_duplicate_id(self, tmp_path):
        write(tmp_path, "a.md", GOOD)
        write(tmp_path, "b.md", GOOD.replace("number: 42", "number: 43"))
        problems = []
        lessons = load_lessons([tmp_path], problems=problems, include_shipped=False)
        assert [l.path.name for l in lessons] == ["a.md"]
        assert [(p.file.endswith("b.md"), p.line) for p in problems] == [(True, 2)]
        assert "duplicate lesson id 'mine'" in problems[0].message

    def test_id_clashing_with_a_shipped_lesson(self, tmp_path):
        write(tmp_path, "a.md", GOOD.replace("id: mine", "id: eviction"))
        with pytest.raises(LessonError, match="duplicate lesson id 'eviction'"):
            load_lessons([tmp_path])

    def test_wrong_prediction_and_refused_operation_found_by_check(self, tmp_path):
        text = GOOD.replace('match "abxy"', 'match "abxy"\nunlock "zz"')
        (lesson,) = load_one(tmp_path, "x.md", text.replace("answer: 2", "answer: 4"))
        problems = [str(p) for p in check_lesson(lesson)]
        assert problems[0].endswith("x.md:12: predicted answer '4' but the engine gives '2' for matched")
        assert "x.md:21: operation refused: no lock on 'zz'" in problems[1]


CHALLENGE = textwrap.dedent('''\
    ---
    id: mine
    number: 3
    title: One hit
    par: 2
    ---
    Make a match hit.

    ```goal
    match.matched == 2
    ```

    ```solution
    insert "ab"
    match "ab"
    ```

    You matched {match.matched} tokens.
    ''')


class TestMarkdownBlocks:
    """Blocks are what a Markdown viewer draws as fenced blocks (markdown-it reads the file)."""

    def test_a_fence_in_a_list_item_is_a_block(self, tmp_path):
        text = GOOD.replace("Some words.", "Steps:\n\n1. First this:\n\n   ```radixviz\n   insert \"xy\"\n   ```\n")
        (lesson,) = load_one(tmp_path, "x.md", text)
        ops = [b for b in lesson.blocks if isinstance(b, Operations)]
        assert [o.text for o in ops][:2] == ['insert "xy"', 'insert "abcd"'] and ops[0].ops[0].line == 11

    def test_a_fence_indented_four_spaces_is_code_in_the_narrative(self, tmp_path):
        text = GOOD.replace("Some words.", "Some words, and an example:\n\n    ```radixviz\n    evict 99\n    ```")
        (lesson,) = load_one(tmp_path, "x.md", text)
        assert "evict 99" in lesson.blocks[0].text
        assert not any(op.name == "evict" for b in lesson.blocks if isinstance(b, Operations) for op in b.ops)

    def test_a_longer_fence_holds_a_shorter_one(self, tmp_path):
        text = GOOD.replace("Some words.", "Some words.\n\n````markdown\n```radixviz\nevict 99\n```\n````")
        (lesson,) = load_one(tmp_path, "x.md", text)
        assert "evict 99" in lesson.blocks[0].text

    def test_an_unclosed_block_of_another_language_is_named(self, tmp_path):
        write(tmp_path, "x.md", GOOD.replace("Some words.", "Some words.\n\n~~~~python\nx = 1"))
        with pytest.raises(LessonError) as err:
            load_lessons([tmp_path], include_shipped=False)
        assert err.value.line == 8 and "unclosed ~~~~python block: add a line ~~~~ to end it" in str(err.value)

    def test_a_challenge_with_its_debrief(self, tmp_path):
        (challenge,) = load_challenges_in(tmp_path, CHALLENGE)
        assert (challenge.id, challenge.par, challenge.statement) == ("mine", 2, "Make a match hit.")
        assert challenge.solution == 'insert "ab"\nmatch "ab"' and challenge.debrief.startswith("You matched")

    @pytest.mark.parametrize("change, line, words", [
        (lambda t: t.replace("par: 2\n", "par: 2\npar: 3\n"), 6, "par given twice in the front matter"),
        (lambda t: t.replace("par: 2\n", "parr: 2\n"), 5, "(or a line --- to end the front matter)"),
        (lambda t: t.replace("{match.matched}", "{match.mached}"), 18, "debrief: "),
        (lambda t: t.replace("```goal", "```goal\nmatch.matched == 2\n```\n\n```goal"), 1,
         "exactly one ```goal block"),
        (lambda t: t.replace("---\nMake", "Make"), 6, "expected id:, number:, title:, level:, par: or allow:"),
    ])
    def test_challenge_mistakes_at_their_line(self, tmp_path, change, line, words):
        with pytest.raises(LessonError) as err:
            load_challenges_in(tmp_path, change(CHALLENGE))
        assert err.value.line == line and words in err.value.message, str(err.value)


def load_challenges_in(folder, text):
    from radixviz.lessons.challenges.challenge import challenge_files, parse_challenge
    write(folder, "c.md", text)
    return [parse_challenge(p.read_text(encoding="utf-8"), p, shipped=False) for p in challenge_files(folder)]


@pytest.fixture
def cli(cli):
    """``radixviz ARGS`` in a fresh Python (the command as a person runs it)."""
    return cli.process


def test_check_command_exit_codes(cli, tmp_path):
    write(tmp_path, "ok.md", GOOD)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    write(bad_dir, "bad.md", GOOD.replace('match "abxy"', 'evict -3'))
    ok, bad, missing = cli("lessons", "--check", str(tmp_path)), cli("lessons", "--check", str(bad_dir)), \
        cli("lessons", "--check", str(tmp_path / "nope"))
    assert ok.returncode == 0 and "all pass" in ok.stderr
    assert bad.returncode == 1
    assert bad.stdout.strip() == f"{bad_dir / 'bad.md'}:20: negative eviction -3: evict takes a count >= 0 (column 7)"
    assert missing.returncode == 2 and "no such lesson folder" in missing.stderr and "Traceback" not in missing.stderr


def test_check_refuses_a_prediction_the_engine_does_not_hold(cli, tmp_path):
    write(tmp_path, "x.md", GOOD.replace("check: matched\n", ""))
    done = cli("lessons", "--check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.strip() == (f"{tmp_path / 'x.md'}:12: prediction without a check: add 'check: NAME' "
                                   "so the engine holds its answer to what it does (lessons/README.md "
                                   "lists the names)")


def test_read_says_where_the_engine_disagrees_with_the_lesson(cli, tmp_path):
    """``--read`` asks the engine the same question as ``--check`` and the app: under the
    verdict, a lesson whose answer is wrong says so (here a count of today's engine, which
    only a lesson that was checked first used to see)."""
    text = GOOD.replace('insert "abcd"', 'engine 2026\ninsert "abcd" ns a').replace(
        "choices: 0 | 2 | 4\nanswer: 2\ncheck: matched", "answer: 1\ncheck: namespaces").replace(
        'match "abxy"', 'insert "abxy" ns b')
    write(tmp_path, "x.md", text)
    done = cli("lessons", "--lessons", str(tmp_path), "--read", "42", stdin="1\n")
    assert done.returncode == 0, done.stderr
    assert "✓ you predicted it.\n  ⚠ The engine gives 2 here, not the lesson's answer 1: the lesson " \
           "file is wrong (radixviz lessons --check finds it)." in done.stdout
    write(tmp_path, "x.md", text.replace("answer: 1", "answer: 2"))
    done = cli("lessons", "--lessons", str(tmp_path), "--read", "42", stdin="2\n")
    assert "✓ you predicted it" in done.stdout and "⚠" not in done.stdout


def test_lessons_package_imports_no_ui_and_no_torch():
    probe = ("import sys, radixviz.lessons, radixviz.lessons.quiz, radixviz.lessons.progress, "
             "radixviz.lessons.lesson.checker, radixviz.lessons.lesson.reader; "
             "print(sorted(m for m in ('torch', 'textual', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_listing_with_a_broken_teacher_folder_names_the_check_for_that_folder(cli, tmp_path):
    write(tmp_path, "bad.md", GOOD.replace("```radixviz\nmatch", "```radixviz\nfrob 1\nmatch"))
    done = cli("lessons", "--lessons", str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "unknown operation 'frob'" in done.stderr
    assert done.stderr.rstrip().endswith(f"(every problem: radixviz lessons --check {tmp_path})")
