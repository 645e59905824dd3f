"""Numbers that challenge debriefs, quiz explanations and the documentation pages state, recomputed from
the engine or the simulation (the lessons' prose: test_lessons_claims.py)."""
import re
from pathlib import Path

import pytest

from radixviz.lessons.quiz.generate import generate_question
from radixviz.lessons.challenges.challenge import attempt, load_challenges, parse_challenge
from radixviz.lessons.quiz.fixed import FIXED
from radixviz.lessons.lesson.model import LessonError
from radixviz.script import Session
from radixviz.sim.runner import simulate

CHALLENGES = {c.id: c for c in load_challenges()}
SIMULATOR_PAGE = Path(__file__).resolve().parents[1] / "docs" / "simulator.md"


def folded(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------ challenge debriefs

@pytest.mark.parametrize("challenge", list(CHALLENGES.values()), ids=lambda c: c.id)
def test_a_solved_debrief_has_every_placeholder_filled(challenge):
    verdict = attempt(challenge, challenge.solution)
    filled = verdict.debrief(challenge)
    assert "{" not in filled and "yet)" not in filled


def test_the_evict_short_debrief_says_what_the_learners_own_eviction_freed():
    # a locked leaf beside a free one: this eviction frees something and still falls short
    challenge = CHALLENGES["evict-short"]
    for script in (challenge.solution, 'insert "abcdef"\nlock "abcdef"\ninsert "xy"\nevict 5'):
        session = Session(device="cpu")
        evict = session.run(script)[-1]
        verdict = attempt(challenge, script)
        assert verdict.solved
        text = folded(verdict.debrief(challenge))
        freed, asked = len(evict.result["freed_slots"]), evict.op.count
        holds = session.cache.total_size()
        assert f"Your `evict {asked}` freed {freed} token(s), and the tree still holds {holds}." in text
    assert freed == 2 and "freed nothing" not in text


def test_the_locked_leaf_debrief_counts_what_stays_in_the_tree():
    challenge = CHALLENGES["locked-leaf"]
    session = Session(device="cpu")
    session.run(challenge.start)
    evict = session.run(challenge.solution)[-1]
    text = folded(attempt(challenge, challenge.solution).debrief(challenge))
    assert f"Your tree keeps {session.cache.total_size()} tokens, every one of them protected" in text
    assert session.cache.total_size() == 11 and session.cache.evictable_size() == 0
    first = next(f for f in session.frames[evict.first_frame:] if f.kind == "delete")
    assert "".join(first.data["key"]) == "L.A.!" and "freed its five tokens" in text
    assert len(evict.result["freed_slots"]) == 5


def test_a_debrief_naming_an_unknown_subject_is_refused(tmp_path):
    text = CHALLENGES["evict-short"].path.read_text(encoding="utf-8") + "\nIt freed {evict.gone}.\n"
    with pytest.raises(LessonError, match="debrief: unknown subject 'evict.gone'"):
        parse_challenge(text, tmp_path / "x.md")


# ------------------------------------------------------------------ quiz explanations

def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_every_page_question_states_the_keys_real_common_prefix(difficulty):
    for seed in range(300):
        q = generate_question(seed, difficulty, topic="pages")
        first, second = re.findall(r'insert "([^"]*)"', q.scenario)
        page = int(re.search(r"page-size (\d+)", q.scenario).group(1))
        shared = _shared(first, second)
        whole = min(shared, len(first) - len(first) % page, len(second) - len(second) % page)
        held = whole - whole % page
        stated = re.search(r"The keys share (\d+) token\(s\).*only the (\d+) page\(s\) that agree "
                           r"in every token count, so (\d+)\.", q.explanation)
        assert stated, q.explanation
        assert tuple(map(int, stated.groups())) == (shared, held // page, held), (seed, q.scenario)
        assert q.accepted == (str(held),)


def test_the_two_seeds_the_issue_named_now_state_the_true_prefix():
    easy = generate_question(0, "easy", lesson=10)
    assert "cbcbab" in easy.scenario and "The keys share 6 token(s)" in easy.explanation


def test_fixed_explanations_name_the_ratios_the_simulation_uses():
    from radixviz.sim.policies import POLICIES
    ratio = next(f for f in FIXED if f.id == "policy-ratio")
    assert (f"{POLICIES['fcfs'][1]} of each running request's remaining budget under fcfs and "
            f"{POLICIES['lpm'][1]} under every other policy, random included") in folded(ratio.explanation)
    assert POLICIES["random"][1] == POLICIES["lpm"][1]


# ------------------------------------------------------------------ the simulator's page

def test_the_simulator_page_few_shot_figures_are_measured():
    text = folded(SIMULATOR_PAGE.read_text(encoding="utf-8"))
    found = re.search(r"On few-shot with (\d+) requests and a (\d+)-slot pool, lpm hits ([\d.]+)–([\d.]+) % "
                      r"of prompt tokens against fcfs's ([\d.]+)–([\d.]+) % \(seeds 0–2\)", text)
    assert found
    requests, pool = int(found.group(1)), int(found.group(2))
    rates = {p: [simulate("few-shot", p, requests, pool, s).stats.hit_rate * 100 for s in range(3)]
             for p in ("lpm", "fcfs")}
    shown = [f"{min(rates['lpm']):.1f}", f"{max(rates['lpm']):.1f}",
             f"{min(rates['fcfs']):.1f}", f"{max(rates['fcfs']):.1f}"]
    assert list(found.groups()[2:]) == shown
