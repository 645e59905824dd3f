"""``radixviz run --json``: real output validated against the schema in docs/json-schema.md."""
import json
import re
from pathlib import Path

import pytest

from radixviz.cli import main

SCHEMA_DOC = Path(__file__).resolve().parents[1] / "docs" / "json-schema.md"
CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'


def schema() -> dict:
    """The JSON Schema block of docs/json-schema.md."""
    text = SCHEMA_DOC.read_text(encoding="utf-8")
    return json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))


def validate(value, rule, root, where="$") -> None:
    """A small JSON Schema checker (the keywords our schema uses); raises AssertionError."""
    if "$ref" in rule:
        name = rule["$ref"].removeprefix("#/$defs/")
        return validate(value, root["$defs"][name], root, where)
    if "oneOf" in rule:
        passing = 0
        for option in rule["oneOf"]:
            try:
                validate(value, option, root, where)
                passing += 1
            except AssertionError:
                pass
        assert passing == 1, f"{where}: {passing} of the oneOf options match {value!r}"
        return
    kinds = {"object": dict, "array": list, "string": str, "null": type(None), "boolean": bool}
    kind = rule.get("type")
    if kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: not an integer: {value!r}"
    elif kind is not None:
        assert isinstance(value, kinds[kind]), f"{where}: not {kind}: {value!r}"
    if "const" in rule:
        assert value == rule["const"], f"{where}: {value!r} != {rule['const']!r}"
    if "enum" in rule:
        assert value in rule["enum"], f"{where}: {value!r} not in {rule['enum']}"
    if "minimum" in rule:
        assert value >= rule["minimum"], f"{where}: {value} < {rule['minimum']}"
    if "maximum" in rule:
        assert value <= rule["maximum"], f"{where}: {value} > {rule['maximum']}"
    if isinstance(value, dict):
        assert len(value) >= rule.get("minProperties", 0), f"{where}: fewer than {rule['minProperties']} fields"
        assert len(value) <= rule.get("maxProperties", len(value)), f"{where}: more than {rule['maxProperties']} fields"
        for name in rule.get("required", ()):
            assert name in value, f"{where}: missing {name}"
        props = rule.get("properties", {})
        for name, item in value.items():
            if name in props:
                validate(item, props[name], root, f"{where}.{name}")
            else:
                assert rule.get("additionalProperties", True), f"{where}: unexpected field {name}"
    if isinstance(value, list) and "items" in rule:
        for i, item in enumerate(value):
            validate(item, rule["items"], root, f"{where}[{i}]")


def run_json(capsys, *argv):
    """(exit code, parsed stdout, stderr) of ``radixviz run --json ...``."""
    with pytest.raises(SystemExit) as info:
        main(["run", "--json", "--device", "cpu", *argv])
    out, err = capsys.readouterr()
    return info.value.code, (json.loads(out) if out.strip() else None), err


class TestSchema:
    def test_every_operation_kind_validates(self, capsys):
        script = (CHAPTER + "; lock Hello_; evict 3; unlock Hello_; matcher buggy; match Hello_world; "
                  "tokens 12 7 3; match tokens 12 7; reset; insert again")
        code, doc, err = run_json(capsys, "--steps", "-e", script)
        assert code == 0 and err == ""
        validate(doc, schema(), schema())
        assert [op["name"] for op in doc["ops"]] == [
            "insert", "insert", "match", "lock", "evict", "unlock", "matcher", "match", "insert", "match",
            "reset", "insert"]
        assert all(op["steps"] for op in doc["ops"])

    def test_the_validator_itself_rejects_a_wrong_document(self, capsys):
        _, doc, _ = run_json(capsys, "-e", CHAPTER)
        doc["ops"][2]["result"]["matched"] = "six"
        with pytest.raises(AssertionError):
            validate(doc, schema(), schema())


class TestChapterValues:
    def test_fixed_matcher_returns_six_tokens_and_splits(self, capsys):
        code, doc, _ = run_json(capsys, "-e", CHAPTER)
        assert code == 0
        insert2, match = doc["ops"][1], doc["ops"][2]
        assert insert2["result"]["prefix_len"] == 11
        assert match["args"] == ["Hello_world"]
        assert (match["result"]["matched"], match["result"]["matched_text"]) == (6, "Hello_")
        assert match["result"]["slots"] == [0, 1, 2, 3, 4, 5]
        assert match["result"]["disagreement"] == {"fixed": 6, "buggy": 11, "wrong_from": 6,
                                                   "wrong_slots": [22, 23, 24, 25, 26]}
        top = doc["tree"]["children"]
        assert [c["key"] for c in top] == ["Hello_"] and top[0]["children"][0]["key"] == "L.A.!"
        assert (doc["total_size"], doc["evictable_size"]) == (16, 16)
        assert doc["pool"] == {"size": 128, "free": 112, "used": 16}
        assert doc["error"] is None and doc["matcher"] == "fixed"

    def test_buggy_matcher_returns_eleven(self, capsys):
        _, doc, _ = run_json(capsys, "--buggy", "-e", CHAPTER)
        result = doc["ops"][2]["result"]
        assert (result["matched"], result["matched_text"]) == (11, "Hello_world")
        assert result["slots"][6:] == [22, 23, 24, 25, 26]
        assert doc["tree"]["children"][0]["key"] == "Hello_L.A.!"  # no split before #7

    def test_lock_evict_unlock_deltas_and_token_ids(self, capsys):
        _, doc, _ = run_json(capsys, "--pool-size", "16", "-e", "insert abc; insert abd; lock ab; evict 4; "
                                                              "unlock ab; tokens 12 7")
        lock, evict, unlock, _ids = (op["result"] for op in doc["ops"][2:])
        assert lock["delta"] == -2 and unlock["delta"] == 2
        assert evict == {"evicted": 2, "freed_slots": [2, 5]}  # c kept slot 2, d slot 5
        assert doc["ops"][5]["args"] == [[12, 7]]
        assert [c["key"] for c in doc["tree"]["children"]] == ["ab", [12, 7]]
        assert doc["pool"] == {"size": 16, "free": 12, "used": 4}

    def test_a_refused_operation_keeps_what_was_applied(self, capsys):
        code, doc, err = run_json(capsys, "-e", "insert abc; unlock abc; insert never")
        assert code == 2
        assert err == "<-e>:1:13: no lock on 'abc' to release (locks held: none)\n"
        assert [op["text"] for op in doc["ops"]] == ["insert abc"]
        assert doc["total_size"] == 3
        assert doc["error"]["text"] == err.strip() and (doc["error"]["line"], doc["error"]["col"]) == (1, 13)
        validate(doc, schema(), schema())
