"""The engine: SGLang's first radix cache, its KV pools, tracing and invariants.

Imports torch only: no UI library is loaded from here.
"""
from .invariants import InvariantError, check_invariants
from .evict_policy import POLICY_NAMES, POLICY_SUMMARY, eviction_key
from .keys import as_key, match, match_stops_here
from .modern_invariants import check_modern_invariants
from .modern_node import ModernTreeNode
from .modern_radix_cache import ModernRadixCache
from .node import TreeNode
from .pool import PoolError, ReqToTokenPool, TokenToKVPool, resolve_device
from .preview import MatchPreview, MatcherDisagreement, compare_matchers, preview_match
from .radix_cache import RadixCache
from .snapshot import NodeSnapshot, TreeSnapshot
from .text import escape_token, key_text, slot_ranges, slot_runs, token_text, tokens_text
from .trace import Event, EventKind, Tracer

__all__ = [
    "ModernRadixCache", "ModernTreeNode", "POLICY_NAMES", "POLICY_SUMMARY", "eviction_key",
    "check_modern_invariants",
    "RadixCache", "TreeNode", "TokenToKVPool", "ReqToTokenPool", "PoolError", "resolve_device",
    "Event", "EventKind", "Tracer", "NodeSnapshot", "TreeSnapshot", "check_invariants", "InvariantError",
    "MatchPreview", "MatcherDisagreement", "preview_match", "compare_matchers",
    "as_key", "match", "match_stops_here",
    "escape_token", "key_text", "slot_ranges", "slot_runs", "token_text", "tokens_text",
]
