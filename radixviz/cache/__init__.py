"""The engines and what they share: keys, text, snapshots, tracing, the KV pool, the registry.

Shared parts sit here (``keys``, ``text``, ``snapshot``, ``trace``, ``pool``, ``values``,
``evict_policy``, ``invariants``, ``checks``, ``hashes``, ``kv_events``); each engine is a
wing, ``radixviz/engines/NAME/`` (``v2024``: the first release's cache; ``v2026``: today's;
``hicache``: today's with a host tier; docs/architecture.md); ``engines`` (the registry) names
them all and ``facade`` gives every caller the same verbs. Imports no UI library; the table
below is the package's public face, the one shared place besides the registry that names a
wing's modules.

Names load on first use, so a text helper, a policy name or the list of engines never loads
torch: only an engine, a snapshot of one, or the pool does.
"""
import importlib

_HOMES = {
    # the engines, from their wings (the public contract: docs/architecture.md)
    "RadixCache": ("radixviz.engines.v2024.cache", "RadixCache"),
    "TreeNode": ("radixviz.engines.v2024.node", "TreeNode"),
    "check_invariants": ("radixviz.engines.v2024.invariants", "check_invariants"),
    "MatcherDisagreement": ("radixviz.engines.v2024.preview", "MatcherDisagreement"),
    "compare_matchers": ("radixviz.engines.v2024.preview", "compare_matchers"),
    "preview_match": ("radixviz.engines.v2024.preview", "preview_match"),
    "ModernRadixCache": ("radixviz.engines.v2026.cache", "RadixCache"),
    "ModernTreeNode": ("radixviz.engines.v2026.node", "TreeNode"),
    "check_modern_invariants": ("radixviz.engines.v2026.invariants", "check_modern_invariants"),
    "HiRadixCache": ("radixviz.engines.hicache.cache", "HiRadixCache"),
    "check_hicache_invariants": ("radixviz.engines.hicache.invariants", "check_hicache_invariants"),
    # the registry and the facade
    "EngineSpec": ("engines", "EngineSpec"), "engine_names": ("engines", "engine_names"),
    "engine_spec": ("engines", "engine_spec"), "open_engine": ("engines", "open_engine"),
    "register_engine": ("engines", "register"), "Engine": ("facade", "Engine"),
    "Inserted": ("facade", "Inserted"),
    # shared parts
    "InvariantError": ("invariants", "InvariantError"),
    "POLICY_NAMES": ("evict_policy", "POLICY_NAMES"), "POLICY_SUMMARY": ("evict_policy", "POLICY_SUMMARY"),
    "eviction_key": ("evict_policy", "eviction_key"),
    "as_key": ("keys", "as_key"), "get_child_key": ("keys", "get_child_key"), "match": ("keys", "match"),
    "match_stops_here": ("keys", "match_stops_here"),
    "PoolError": ("pool", "PoolError"), "ReqToTokenPool": ("pool", "ReqToTokenPool"),
    "TokenToKVPool": ("pool", "TokenToKVPool"), "resolve_device": ("pool", "resolve_device"),
    "MatchPreview": ("snapshot", "MatchPreview"), "NodeSnapshot": ("snapshot", "NodeSnapshot"),
    "TreeSnapshot": ("snapshot", "TreeSnapshot"),
    "escape_token": ("text", "escape_token"), "key_text": ("text", "key_text"),
    "slot_ranges": ("text", "slot_ranges"), "slot_runs": ("text", "slot_runs"),
    "token_text": ("text", "token_text"), "tokens_text": ("text", "tokens_text"),
    "Event": ("trace", "Event"), "EventKind": ("trace", "EventKind"), "Tracer": ("trace", "Tracer"),
    # page hashes and KV events (2026)
    "get_hash_str": ("hashes", "get_hash_str"), "hash_str_to_int64": ("hashes", "hash_str_to_int64"),
    "compute_node_hash_values": ("hashes", "compute_node_hash_values"),
    "BlockStored": ("kv_events", "BlockStored"), "BlockRemoved": ("kv_events", "BlockRemoved"),
    "AllBlocksCleared": ("kv_events", "AllBlocksCleared"),
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'radixviz.cache' has no attribute {name!r}")
    module, attribute = _HOMES[name]
    # an engine's names live in its wing (radixviz.engines.NAME), the shared parts beside this file
    value = getattr(importlib.import_module(module if module.startswith("radixviz.") else f".{module}", __name__),
                    attribute)
    globals()[name] = value
    return value
