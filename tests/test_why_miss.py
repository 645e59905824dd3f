"""``radixviz why-miss``: each of the five causes, built and named, and the command's forms."""
import json
from pathlib import Path

import pytest

from radixviz.sim.why_miss import explain

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SYSTEM = tuple(range(100, 130))   # 30 shared tokens


class TestEachCause:
    def test_the_first_differing_token(self):
        result = explain(SYSTEM + (1, 2, 3), SYSTEM + (9, 2, 3))
        assert result.kinds() == ["differ"] and result.common == 30 and result.reused == 30
        assert "token 30" in result.causes[0].message

    def test_the_last_token_rule(self):
        result = explain(SYSTEM, SYSTEM)
        assert result.kinds() == ["last_token"] and result.reused == 29

    def test_the_page_floor(self):
        result = explain(SYSTEM + (1,), SYSTEM + (2,), page_size=8)
        assert result.kinds() == ["differ", "page_floor"]
        assert result.reused == 24 and result.causes[1].tokens_lost == 6
        assert result.page_floors[1] == 30 and result.page_floors[16] == 16

    def test_a_different_namespace(self):
        result = explain(SYSTEM + (1,), SYSTEM + (1, 2), namespace_a="lora-a", namespace_b="lora-b")
        assert result.kinds() == ["namespace"] and result.reused == 0
        same = explain(SYSTEM + (1,), SYSTEM + (1, 2), namespace_a="lora-a", namespace_b="lora-a")
        assert same.kinds() == [] and same.reused == 31

    def test_an_eviction_between_them_names_the_request_and_the_policy(self):
        filler = [(tuple(range(1000 + 40 * i, 1040 + 40 * i)), None) for i in range(2)]
        result = explain(SYSTEM + (1,), SYSTEM + (2,), between=filler, pool_size=80, eviction="lru")
        assert "eviction" in result.kinds() and result.reused < 30
        cause = result.causes[result.kinds().index("eviction")]
        assert cause.tokens_lost == 30 - result.reused and "lru" in cause.message
        assert "request 2 of the 2" in cause.message   # the first still fitted beside A
        roomy = explain(SYSTEM + (1,), SYSTEM + (2,), between=filler)
        assert "eviction" not in roomy.kinds() and roomy.reused == 30


class TestCommand:
    def test_text_prompts_draw_the_screen(self, cli):
        code, out, _ = cli("why-miss", "You are kind. Q: one", "You are kind. Q: two", "--page-size", "4")
        assert code == 0 and "B reuses 16 of its 20 tokens" in out and "page floor" in out

    def test_the_causes_speak_of_characters_and_of_no_namespace(self, cli):
        """A text prompt's tokens are its characters, and a prompt sent without a namespace
        is said to be so (not "in None")."""
        code, out, _ = cli("why-miss", "Hello world, how are you", "Hello world, who are you",
                           "--namespace-a", "x", "--json")
        messages = " ".join(c["message"] for c in json.loads(out)["causes"])
        assert code == 0 and "extra_key 'x' for A, none for B" in messages and "None" not in messages
        code, out, _ = cli("why-miss", "Hello world, how are you", "Hello world, who are you", "--json")
        assert "A has 104 ('h'), B has 119 ('w')" in json.loads(out)["causes"][0]["message"]

    def test_the_last_token_rule_says_nothing_of_the_cache_an_eviction_took(self, cli):
        code, out, _ = cli("why-miss", "You are kind. Q: one", "You are kind.", "--between",
                           "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "--pool-size", "48", "--json")
        causes = {c["kind"]: c["message"] for c in json.loads(out)["causes"]}
        assert code == 0 and set(causes) == {"last_token", "eviction"}
        assert "all in the cache" not in causes["last_token"]
        assert causes["last_token"].startswith("B's 13 tokens are all in A")

    def test_json_and_svg(self, cli, tmp_path):
        code, out, _ = cli("why-miss", "[1,2,3,4]", "[1,2,3,4]", "--json")
        doc = json.loads(out)
        assert code == 0 and doc["reused"] == 3 and doc["causes"][0]["kind"] == "last_token"
        svg = tmp_path / "why.svg"
        code, out, _ = cli("why-miss", "[1,2,3,4]", "[1,2,3,5]", "-o", str(svg))
        assert code == 0 and svg.read_text().lstrip().startswith("<svg")

    def test_two_requests_of_a_trace_with_the_ones_between(self, cli):
        code, out, _ = cli("why-miss", "1", "3", "--trace", str(EXAMPLES / "trace.jsonl"), "--json")
        doc = json.loads(out)
        assert code == 0 and doc["settings"]["between"] == 1 and doc["common_prefix"] > 50

    def test_two_requests_of_a_mooncake_trace_share_their_system_blocks(self, cli):
        code, out, _ = cli("why-miss", "1", "3", "--trace", str(EXAMPLES / "mooncake.jsonl"),
                           "--block-size", "16", "--json")
        doc = json.loads(out)   # requests 1 and 3 open with the same two system blocks
        assert code == 0 and doc["common_prefix"] == 32 and doc["causes"][0]["kind"] == "differ"

    @pytest.mark.parametrize("argv, message", [
        (["a", "b", "--trace", "examples/trace.jsonl"], "request numbers"),
        (["3", "1", "--trace", "examples/trace.jsonl"], "A must come before B"),
        (["0", "2", "--trace", "examples/trace.jsonl"], "requests are numbered from 1: 0 is none of them"),
        (["a", "b", "--eviction-policy", "oldest"], "unknown eviction policy"),
        (["[1,2]", "[1,3]", "--between", "[5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]", "--pool-size", "16"],
         "does not fit")])
    def test_bad_input_is_one_line_and_exit_2(self, cli, argv, message):
        code, _out, err = cli("why-miss", *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
