"""Lessons 15-16 (the host tier): what their prose says about the simulation is what it
gives. Each ``radixviz simulate`` line they print is run here with --json, and every
percentage the text quotes for it is recomputed (predictions are held to the engine by
``radixviz lessons --check``, in test_lessons_shipped.py)."""
import json
import re
import shlex

import pytest

from radixviz.cli import main
from radixviz.lessons import load_lessons

LESSONS = {l.number: l for l in load_lessons()}


def text(number: int) -> str:
    return " ".join(LESSONS[number].path.read_text(encoding="utf-8").split())


def commands(number: int) -> list[str]:
    source = LESSONS[number].path.read_text(encoding="utf-8")
    return re.findall(r"^\s+radixviz (simulate [^\n]+)$", source, re.MULTILINE)


def run(command: str, capsys) -> dict:
    """The command's --json results: host size (None: the GPU-only baseline) -> hit rate in %."""
    with pytest.raises(SystemExit) as done:
        main(shlex.split(command) + ["--json"])
    assert done.value.code in (0, None)
    doc = json.loads(capsys.readouterr().out)
    return {r["host_size"]: round(r["hit_rate"] * 100, 1) for r in doc["results"]}


def with_policy(command: str, policy: str) -> str:
    return re.sub(r"--write-policy \S+", f"--write-policy {policy}", command)


def test_lesson_15_quotes_its_sweep(capsys):
    (sweep,) = commands(15)
    rates = run(sweep, capsys)
    prose = text(15)
    assert f"reuses {rates[None]} % of the prompt tokens" in prose
    assert f"1025 slots the hit rate is {rates[1025]} %" in prose
    assert f"with 4096 slots {rates[4096]} %" in prose
    assert rates[None] < rates[1025] < rates[2048] < rates[4096]
    assert "This is the release's loop, which inserts a request once" in prose
    today = run(sweep + " --cache-unfinished", capsys)
    assert (f"with `--cache-unfinished` the GPU-only cache reaches {today[None]} %, and the host pools "
            f"{today[1025]} % (1025 slots) and {today[4096]} % (4096)") in prose
    assert today[None] > rates[None] and today[1025] - today[None] < rates[1025] - rates[None]


def test_lesson_16_quotes_each_write_policy(capsys):
    mix, chats = commands(16)
    prose = text(16)
    selective, through = run(mix, capsys)[1025], run(with_policy(mix, "write_through"), capsys)[1025]
    assert f"The selective policy reuses {selective} % of the prompt tokens, `write_through` {through} %" in prose
    assert selective > through
    chat = {p: run(with_policy(chats, p), capsys)[1025]
            for p in ("write_through_selective", "write_through", "write_back")}
    assert (f"{chat['write_through_selective']} %, against {chat['write_through']} % for `write_through` "
            f"(lesson 15) and {chat['write_back']} % for `write_back`") in prose
    assert "Start with the release's loop, which inserts a request once" in prose


def test_lesson_16_quotes_todays_loop_too(capsys):
    """The same two commands with --cache-unfinished (the prefill-end insert): the figures the
    lesson gives for today's loop."""
    mix, chats = (c + " --cache-unfinished" for c in commands(16))
    prose = text(16)
    assert "Add `--cache-unfinished` to both commands" in prose
    chat = {p: run(with_policy(chats, p), capsys)[1025]
            for p in ("write_through_selective", "write_through", "write_back")}
    assert (f"on the chats it reuses {chat['write_through_selective']} % against {chat['write_through']} % "
            f"for `write_through` and {chat['write_back']} % for `write_back`") in prose
    one_off = {p: run(with_policy(mix, p), capsys)[1025]
               for p in ("write_through_selective", "write_through", "write_back")}
    assert (f"its lead shrinks to {one_off['write_through_selective']} % against "
            f"{one_off['write_through']} % ({one_off['write_back']} % for `write_back`)") in prose
    def written(command: str) -> int:
        with pytest.raises(SystemExit):
            main(shlex.split(command) + ["--json"])
        doc = json.loads(capsys.readouterr().out)
        return next(r for r in doc["results"] if r["host_size"] == 1025)["host_tier"]["written"]
    release_mix = commands(16)[0]
    counts = (written(release_mix), written(mix), written(with_policy(mix, "write_through")))
    assert ("on the mix the selective policy writes {:,} in the release's loop and {:,} in today's, "
            "where `write_through` writes {:,}").format(*counts) in prose
    assert counts[0] * 10 < counts[1] < counts[2]
    # the prefill-end insert is what makes selective copy: it closes most of the chats' gap
    assert chat["write_through"] - chat["write_through_selective"] < 5


def test_the_hicache_page_gives_both_loops_write_policy_figures(capsys):
    from pathlib import Path
    page = Path(__file__).resolve().parents[1] / "docs" / "engines" / "hicache.md"
    readme = " ".join(page.read_text(encoding="utf-8").split())
    base = "simulate --engine hicache --requests 128 --pool-size 512 --host-size 1025"
    figures = {}
    for workload in ("multi-turn", "priority-mix"):
        for loop in ("", " --cache-unfinished"):
            for policy in ("write_through_selective", "write_through", "write_back"):
                command = f"{base} --workload {workload} --write-policy {policy}{loop}"
                figures[workload, loop, policy] = run(command, capsys)[1025]
    assert (f"on chats it lands far below ({figures['multi-turn', '', 'write_through_selective']} % at 1,025; "
            f"`write_back` {figures['multi-turn', '', 'write_back']} %)") in readme
    today = [figures[w, " --cache-unfinished", p] for w in ("multi-turn", "priority-mix")
             for p in ("write_through_selective", "write_through", "write_back")]
    assert ("slots multi-turn gives {} % selective, {} % `write_through`, {} % `write_back`, and "
            "priority-mix {} %, {} % and {} %").format(*today) in readme
