"""Text from files and from the learner is shown as written: never read as Rich/Textual
markup (a ``[/]`` in a title, a key or a path used to crash the app), and never allowed to
drive the terminal (escape sequences in a lesson are stripped from what is printed)."""
import textwrap

import pytest

from radixviz.tui.app import RadixvizApp
from tui_helpers import screen_rows, stepper, wait_until

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"
LESSON = textwrap.dedent('''\
    ---
    id: brackets
    number: 42
    title: Why [/] matters ESC
    ---
    Words ESCthat [bold] stay words.

    ```radixviz
    insert "abcd"
    ```

    ```predict
    question: How many tokens of "abxy" hit? ESC
    choices: 0 | 2 | 4
    answer: 2
    check: matched
    ```

    ```radixviz
    match "abxy"
    ```
    ''').replace("ESC", ESCAPES)
CHALLENGE = textwrap.dedent('''\
    ---
    id: brackets-challenge
    number: 42
    title: C [/] [bold
    level: easy
    par: 1
    allow: insert
    ---
    Insert anything.

    ```goal
    nodes >= 1
    ```

    ```solution
    insert "ab"
    ```
    ''')


def folder(tmp_path, name: str, text: str):
    path = tmp_path / "mine"
    path.mkdir(exist_ok=True)
    (path / name).write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cli(cli):
    """``radixviz ARGV`` in a fresh Python, on an empty standard input unless given one."""
    return lambda *argv, stdin="": cli.process(*argv, stdin=stdin)


class TestPrintedLessons:
    def test_check_list_and_read_print_no_escape_sequence(self, cli, tmp_path):
        mine = folder(tmp_path, "42-brackets.md", LESSON)
        checked = cli("lessons", "--check", str(mine))
        listed = cli("lessons", "--lessons", str(mine))
        read = cli("lessons", "--lessons", str(mine), "--read", "42", stdin="2\n")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert listed.returncode == 0 and "42. Why [/] matters" in listed.stdout
        assert read.returncode == 0 and "Why [/] matters" in read.stdout and "[bold] stay words" in read.stdout
        for done in (checked, listed, read):
            assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout


class TestTheAppShowsBracketsAsText:
    async def test_a_lesson_title_with_brackets_on_the_home_screen(self, tmp_path):
        mine = folder(tmp_path, "42-brackets.md", LESSON)
        app = RadixvizApp("home", device="cpu", preload_engine=False, lesson_dirs=[str(mine)])
        async with app.run_test(size=(100, 60)) as pilot:
            await wait_until(pilot, lambda: any("Why [/] matters" in row for row in screen_rows(app)))
            assert not any("\x1b" in row for row in screen_rows(app))

    async def test_a_challenge_title_with_brackets_in_the_list(self, tmp_path):
        mine = folder(tmp_path, "42-brackets.md", CHALLENGE)
        app = RadixvizApp("home", device="cpu", preload_engine=False, lesson_dirs=[str(mine)])
        async with app.run_test(size=(120, 50)) as pilot:
            await pilot.press("c")
            await pilot.press("end")   # the teacher's challenge comes after the shipped ones
            await wait_until(pilot, lambda: any("C [/] [bold" in row for row in screen_rows(app)))

    async def test_keys_and_errors_with_brackets_in_the_stepper(self, tmp_path):
        async with stepper(tmp_path, 'insert "[/]x"\n') as (app, pilot):
            await pilot.press("colon")
            await pilot.press(*"frob[/]")
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("unknown operation 'frob[/]'" in row for row in screen_rows(app)))
            await pilot.press("escape", "end", "s")      # the node picker lists the key as written
            await wait_until(pilot, lambda: any("[/]x" in row and "ref" in row for row in screen_rows(app)))
