"""The README and the documentation site (mkdocs.yml, docs/): the site builds strict, every
page is in its nav, the README's generated lists are what the files make, its counts cannot
go stale, its links lead somewhere, and the tree holds no large files."""
from __future__ import annotations

import importlib.util
import html
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def docs_site():
    """scripts/docs_site.py, the maker of the generated parts (MkDocs runs it as a hook)."""
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "scripts" / "docs_site.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_pages() -> list[str]:
    """Every page mkdocs.yml's nav names, as paths under docs/."""
    yaml = pytest.importorskip("yaml")
    found: list[str] = []

    def walk(entry) -> None:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, list):
            for item in entry:
                walk(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)
    walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    return found


def doc_pages() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def outside_generated(text: str) -> str:
    return docs_site().PART.sub("", text)


class TestTheReadme:
    def test_is_read_in_three_minutes(self):
        assert len(README.read_text(encoding="utf-8").splitlines()) <= 200

    def test_generated_parts_are_what_the_files_make(self):
        """A lesson, challenge, engine or command added: `python scripts/docs_site.py --write`."""
        site = docs_site()
        text = README.read_text(encoding="utf-8")
        assert site.part_names(text) == ["engines", "left-out", "lessons", "challenges"]
        assert site.fill(text, README) == text, "README.md is out of date: python scripts/docs_site.py --write"

    def test_lists_every_lesson_challenge_and_engine(self):
        from radixviz.cache.engines import engine_names
        from radixviz.lessons import load_lessons
        from radixviz.lessons.challenges.challenge import load_challenges
        text = README.read_text(encoding="utf-8")
        assert f"{len(load_lessons())} lessons ship" in text
        assert f"{len(load_challenges())} challenges ship" in text
        assert f"{len(engine_names())} engines" in text
        for lesson in load_lessons():
            assert f"- **{lesson.number}** {lesson.title}" in text
        for name in engine_names():
            assert f"| [`{name}`](docs/engines/{name}.md) |" in text

    def test_counts_come_only_from_the_generated_parts(self):
        """"Sixteen lessons" went stale once: a count of lessons, challenges, engines or commands
        is written only by a generated part, in the README and on every page (the history of
        past findings, which quotes old text, aside)."""
        numbers = r"\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[a-z]+teen|twenty"
        pages = [README, *(page for page in DOCS.rglob("*.md") if page.name != "history-sources.md")]
        stale = {str(page.relative_to(ROOT)): found for page in pages
                 if (found := re.findall(rf"\b(?:{numbers})\s+(?:lessons|challenges|engines|commands)\b",
                                         outside_generated(page.read_text(encoding="utf-8")), re.I))}
        assert stale == {}

    def test_has_no_timings_and_no_commit_hashes(self):
        text = outside_generated(README.read_text(encoding="utf-8"))
        assert re.findall(r"\b\d[\d.,–-]*\s?(?:ms|s|min|minutes|seconds)\b", text) == []
        hashes = [word for word in re.findall(r"\b[0-9a-f]{7,40}\b", text)
                  if re.search(r"\d", word) and re.search(r"[a-f]", word)]
        assert hashes == []

    def test_links_lead_to_files_that_exist(self):
        text = README.read_text(encoding="utf-8")
        links = [link for link in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", link)]
        assert links
        missing = [link for link in links if not (ROOT / link.split("#")[0]).exists()]
        assert missing == []

    def test_keeps_the_two_set_up_commands(self):
        """CI (.ci/run) runs the README's test command: the two must stay the same."""
        text = README.read_text(encoding="utf-8")
        assert "```\nbash scripts/start.sh\n```" in text and "```\nbash scripts/test.sh\n```" in text
        assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("bash scripts/test.sh")


class TestTheSite:
    def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page(self):
        """A new docs/*.md page goes into mkdocs.yml's nav (the strict build refuses it too)."""
        nav, pages = nav_pages(), doc_pages()
        assert sorted(set(pages) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
        assert sorted(set(nav) - set(pages)) == [], "nav entries with no page in docs/"
        assert len(nav) == len(set(nav)), "a page named twice in the nav"

    def test_every_engine_has_its_page(self):
        from radixviz.cache.engines import engine_names
        missing = [name for name in engine_names() if not (DOCS / "engines" / f"{name}.md").exists()]
        assert missing == [], "write docs/engines/NAME.md for each engine (SGLang version, what is left out)"

    def test_every_command_has_its_section(self):
        commands = docs_site()._command_help()
        text = (DOCS / "commands.md").read_text(encoding="utf-8")
        missing = [name for name in commands if f"## radixviz {name}\n" not in text]
        assert missing == [], "give each command a '## radixviz NAME' section in docs/commands.md"

    def test_every_command_line_shown_parses(self, capsys):
        """Each `radixviz ...` line of a code block in the README or a page (placeholders such
        as `[--seed S]`, `A|B` or `...` aside) is accepted by the real parser."""
        from radixviz.cli import build_parser
        parser, shown, refused = build_parser(), 0, []
        for page in [README, *sorted(DOCS.rglob("*.md"))]:
            text = page.read_text(encoding="utf-8")
            for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
                for line in block.replace("\\\n", " ").splitlines():
                    line = line.strip().removeprefix("$ ")
                    if not line.startswith("radixviz ") or re.search(r"[\[|<…]|\.\.\.", line):
                        continue
                    shown += 1
                    try:
                        parser.parse_args(shlex.split(line, comments=True)[1:])
                    except SystemExit as exc:
                        if exc.code:
                            refused.append(f"{page.relative_to(ROOT)}: {line}: {capsys.readouterr().err.strip()}")
        assert shown > 50 and refused == []

    def test_the_operation_language_examples_run(self, cli, tmp_path):
        """Each script the operation language's page shows runs whole, with no refusal."""
        text = (DOCS / "operation-language.md").read_text(encoding="utf-8")
        scripts = re.findall(r"^```\n(.*?)^```", text, re.S | re.M)
        assert len(scripts) >= 2
        for n, script in enumerate(scripts):
            (tmp_path / f"{n}.rv").write_text(script, encoding="utf-8")
            code, _, err = cli("run", tmp_path / f"{n}.rv")
            assert code == 0, err

    def test_github_markdown_reads_the_same_on_the_site(self):
        """A line led by a PR number stays text; a list nested by 3 spaces stays nested; a list
        right under text is a list."""
        made = docs_site().as_python_markdown(
            "#40313, opened\n1. **Sources**\n   - #7369 e273aa6dc\n   more\n2. next\n\ntext\n- a list\n"
            "in 2024\n12. is text\n```\n#1 code\n```")
        assert made == ("\\#40313, opened\n\n1. **Sources**\n    - \\#7369 e273aa6dc\n   more\n\n2. next\n\ntext\n\n"
                        "- a list\nin 2024\n12. is text\n```\n#1 code\n```")

    def test_every_generated_part_is_known(self):
        site = docs_site()
        for page in [README, *DOCS.rglob("*.md")]:
            for name in site.part_names(page.read_text(encoding="utf-8")):
                assert name in site.PARTS, f"{page}: {name}"

    @pytest.mark.slow   # a second Python, MkDocs and the theme: 2-5 s
    def test_builds_strict(self, tmp_path):
        """mkdocs build --strict: a broken link or anchor, or a page left out of the nav, fails."""
        pytest.importorskip("mkdocs")
        pytest.importorskip("material")
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                              cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-4000:]
        assert "WARNING" not in done.stderr
        home = (tmp_path / "index.html").read_text(encoding="utf-8")
        from radixviz.lessons import load_lessons
        # the README's list, made afresh (the theme may or may not escape an apostrophe)
        assert load_lessons()[-1].title in html.unescape(home)
        assert (tmp_path / "assets" / "stepper.svg").exists()


def test_every_path_a_page_names_exists():
    """A file of this repository named in the README or a page (`radixviz/cache/trace.py`,
    `cache/text.py`, `tests/test_x.py::test_y`, `bench/core.py`) is there: a move (the engines'
    wings) must take the pages along. The history of past findings quotes old paths: aside."""
    package = ROOT / "radixviz"
    roots = {p.name for p in ROOT.iterdir() if p.is_dir()} | {p.name for p in package.iterdir() if p.is_dir()}
    missing, checked = [], 0
    for page in [README, *DOCS.rglob("*.md")]:
        if page.name == "history-sources.md":
            continue
        for named in re.findall(r"`([\w.-]+/[\w./-]*)(?:[:`])", page.read_text(encoding="utf-8")):
            path = named.rstrip("/")
            if path.split("/")[0] not in roots or not re.search(r"\.\w+$|/$", named):
                continue
            checked += 1
            if not ((ROOT / path).exists() or (package / path).exists()):
                missing.append(f"{page.relative_to(ROOT)}: {named}")
    assert checked > 30 and missing == []


def test_a_new_engine_and_its_lessons_appear_with_no_edit(tmp_path, monkeypatch):
    """The next engine (a toy here) and a lesson that runs on it: the README's table and lists
    and the engine's page pick them up from the registry and the lesson files."""
    import toy_engine

    from radixviz.cache.engines import register, unregister
    from radixviz.lessons import load_lessons
    (tmp_path / "42-toy.md").write_text("# A toy lesson\n\nA trie.\n\n```radixviz\nengine toy\ninsert ab\n```\n",
                                        encoding="utf-8")
    site = docs_site()
    monkeypatch.setattr(site, "_lessons", lambda: load_lessons([tmp_path]))
    register(toy_engine.SPEC)
    try:
        table = site.engines_part(None, README)
        lessons = site.lessons_part(None, README)
        its_own = site.lessons_part("toy", DOCS / "engines" / "toy.md")
    finally:
        unregister("toy")
    assert f"| `toy` | {toy_engine.SPEC.title} | " in table and "| 42 |" in table
    assert "- **42** A toy lesson *(toy)*" in lessons
    assert its_own.startswith("1 lesson runs on it") and "- **42** A toy lesson" in its_own


def test_no_large_file_is_tracked():
    """Wheels, dumps and recordings stay out of the tree: over 1 MB only under assets/ or examples/."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    large = [name for name in listed.decode().split("\0")
             if name and not name.startswith(("assets/", "examples/"))
             and (ROOT / name).is_file() and (ROOT / name).stat().st_size > 1_000_000]
    assert large == []


def test_no_tracked_file_is_one_the_tree_ignores():
    """A test run's or a tool's leftovers (coverage data, caches, wheels) are ignored, so one
    that is tracked was committed by mistake: ``.coverage`` rode in with a test commit once."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard", "-z"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    assert [name for name in listed.decode().split("\0") if name] == []
