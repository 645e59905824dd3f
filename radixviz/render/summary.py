"""One line per operation for ``radixviz run``: what it returned, in plain words."""
from __future__ import annotations

from radixviz.cache.engines import engine_spec, op_owners
from radixviz.script import key_text, slot_ranges


def op_summary(record) -> str:
    """``match 'Hello_world' → 6 tokens 'Hello_' (slots 0–5)`` and the like."""
    return f"{record.number:>3}  {record.op.text}  →  {op_result(record)}"


def op_result(record) -> str:
    """What the operation returned, without the operation: ``6 token(s) 'Hello_' (slots 0–5)``."""
    if "skipped" in record.result:   # a compare column the operation does not concern
        return f"skipped: {record.result['skipped']}"
    if record.op.name == "match":
        text = _match(record.result, record.op.key)
    else:
        text = _RESULTS.get(record.op.name, _engine_words(record.op.name))(record.result)
    first = record.result.get("acknowledged_first")
    return f"(synced {first} first) {text}" if first else text


def _engine_words(name: str):
    """An engine's own operation (``slide``): its script module's ``summary``, else "done"."""
    for owner in op_owners(name):
        words = getattr(engine_spec(owner).part("script"), "summary", None)
        if words is not None:
            return words
    return lambda r: "done"


def _insert(r) -> str:
    text = f"prefix_len {r['prefix_len']}; new slots {slot_ranges(r['new_slots'])}"
    if r["freed_duplicates"]:
        text += f"; duplicates freed {slot_ranges(r['freed_duplicates'])}"
    if r["evicted_first"]:
        text += f"; evicted {len(r['evicted_first'])} token(s) first"
    if r.get("freed_tail"):   # 2026: the partial last page is not cached
        text += f"; partial page freed {slot_ranges(r['freed_tail'])}"
    return text


def _match(r, key) -> str:
    # quoted from the key's tokens, not from matched_text: eliding that string could cut a ⟨id⟩ in two
    text = f"{r['matched']} token(s) {key_text(key[:r['matched']])} (slots {slot_ranges(r['slots'])})"
    if r.get("ns") is not None:
        text += f" in namespace {r['ns']}"
    diff = r.get("disagreement")
    if diff:
        wrong = slot_ranges(diff["wrong_slots"])
        if r["matched"] == diff["fixed"]:
            text += f"; the pre-#7 matcher would say {diff['buggy']}, wrongly adding slots {wrong}"
        else:
            text += f"; WRONG from token {diff['wrong_from']}: slots {wrong} belong to another context " \
                    f"(the fixed matcher says {diff['fixed']})"
    if r.get("host_hit_length"):
        text += f"; then {r['host_hit_length']} on the host only (node #{r['last_host_node']})"
    shifted = r.get("misaligned")
    if shifted:
        text += (f"; MISALIGNED: {shifted['slots']} slots for {shifted['tokens']} tokens, from token "
                 f"{shifted['from']} on each slot holds a later token's K/V (#4)")
    return text


def _lock(r) -> str:
    return f"matched {r['matched']}, evictable size {r['delta']:+d}"


_RESULTS = {
    "insert": _insert,
    "lock": _lock,
    "unlock": lambda r: f"evictable size {r['delta']:+d}",
    "evict": lambda r: (f"evicted {r['evicted']} token(s)" + (f" of {r['component']}" if "component" in r else "")
                        + f" (slots {slot_ranges(r['freed_slots'])})"),
    "matcher": lambda r: f"matcher is now {r['mode']}",
    "insert-slots": lambda r: ("inserts keep one slot fewer than their tokens (release, #4)"
                               if r["mode"] == "release" else "inserts keep one slot per token"),
    "reset": lambda r: "empty tree, every slot free",
    "engine": lambda r: f"an empty {r['engine']} cache",
    "page-size": lambda r: f"an empty cache with pages of {r['page_size']}",
    "eviction": lambda r: f"evicts by {r['eviction_policy']} from now on",
    "events": lambda r: f"an empty cache, KV events {r['kv_events']}",
    "sync": lambda r: f"acknowledged {r['acknowledged']} copy/copies in flight",
    "auto-sync": lambda r: ("copies are acknowledged before each operation" if r["auto_sync"] == "on"
                            else "copies stay in flight until sync"),
    "write-policy": lambda r: f"writes to the host by {r['write_policy']} from now on",
    "host-size": lambda r: f"an empty cache with a host pool of {r['host_size']}",
    "evict-host": lambda r: f"evicted {r['evicted']} host token(s)",
    "hicache-fixes": lambda r: (f"SGLang's 9fbe6800a bugs back: {', '.join(r['head_bugs'])}" if r["head_bugs"]
                                else "host-tier fixes on (radixviz's lines)"),
    "load-back": lambda r: (f"loaded {r['loaded']} token(s) {r['loaded_text']!r} back to slots "
                            f"{slot_ranges(r['slots'])}" if r["loaded"] else
                            f"nothing loaded ({r['host_hit_length']} token(s) on the host only)"),
}
