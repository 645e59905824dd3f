"""An engine publishes its KV events on real sockets; the watcher's tree equals the engine's
own tree (read from its nodes) after every operation."""
from __future__ import annotations

import pytest

from radixviz.script import Session, parse_script
from radixviz.wire.from_engine import engine_blocks, wire_event

from wire_helpers import close, joined, receive, tree_json

PAGE_SCRIPT = ("insert abcdefgh; insert abcdxyzw; match abcdxy; insert abcdefghijkl; evict 4; "
               "insert qrstuvwx; lock abcdxyzw; evict 100; unlock abcdxyzw; evict 8; insert abcd; reset; "
               "insert mnopqrst")
NAMESPACE_SCRIPT = ("insert abcdefgh ns a; insert abcdefgh ns b; insert abcdwxyz ns a; insert abcdefgh; "
                    "evict 4; insert abcdefgh ns b; evict 100; insert ijklmnop ns b")
HOST_SCRIPT = ("insert abcdefgh; insert abcdxyzw; sync; evict 8; match abcdefgh; load-back abcdefgh; "
               "insert 12345678; evict 12; evict-host 8; insert abcdefgh; sync; evict 100; evict-host 100; "
               "insert zzzzzzzz")
CASES = {
    "page 1": (dict(engine="2026", page_size=1), PAGE_SCRIPT),
    "page 2": (dict(engine="2026", page_size=2), PAGE_SCRIPT),
    "page 4": (dict(engine="2026", page_size=4), PAGE_SCRIPT),
    "namespaces, page 2": (dict(engine="2026", page_size=2), NAMESPACE_SCRIPT),
    "host tier": (dict(engine="hicache", page_size=1), HOST_SCRIPT),
}


@pytest.mark.parametrize("case", CASES)
def test_the_watched_tree_equals_the_engines_after_every_operation(case):
    options, script = CASES[case]
    session = Session(pool_size=24, device="cpu", kv_events=True, **options)
    pub, watcher = joined()
    captured = []   # the watcher's tree the moment each batch was applied
    watcher.core.listeners.append(lambda item: captured.append(tree_json(watcher, item.rank)))
    try:
        published = 0
        for op in parse_script(script, "<test>"):
            record = session.apply(op)
            if not record.kv_events:
                continue
            pub.publish([wire_event(e) for e in record.kv_events])
            published += 1
            receive(pub, watcher, 1)
            assert captured[-1] == engine_blocks(session.cache.root_node), f"after {op.text!r}"
        assert published >= 6
        assert watcher.core.problems.as_dict() == dict.fromkeys(watcher.core.problems.as_dict(), 0)
    finally:
        close(pub, watcher)


def test_the_namespaces_hold_copies():
    # SGLang's page hash leaves the namespace out: one prompt in two namespaces is one block
    # held twice, and evicting one copy leaves the other
    session = Session(pool_size=24, device="cpu", engine="2026", page_size=2, kv_events=True)
    for op in parse_script("insert abcd ns a; insert abcd ns b", "<test>"):
        session.apply(op)
    assert [b["copies"] for b in engine_blocks(session.cache.root_node)] == [2, 2]
