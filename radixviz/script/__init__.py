"""The operation language and sessions that run it with every micro-step recorded.

Names load on first use: the parser needs no torch, so a script can be checked before the
engine (and torch) is imported.
"""
import importlib

_HOMES = {
    "Frame": "frames", "Marks": "frames", "OpRecord": "frames", "PoolSnapshot": "frames",
    "describe": "narrate", "explain": "narrate", "key_text": "narrate", "slot_ranges": "narrate",
    "node_namespace": "narrate",
    "KEY_OPS": "parser", "OP_NAMES": "parser", "Op": "parser", "ScriptError": "parser",
    "load_script": "parser", "parse_script": "parser",
    "op_source": "writer", "script_source": "writer",
    "SideBySide": "compare", "compare_ops": "compare", "compare_engines": "compare",
    "compare_sides": "compare", "SideConfig": "sides", "engine_sides": "sides",
    "DEFAULT_POOL_SIZE": "session", "Session": "session",
    "KVSession": "kv_session", "verify_ops": "kv_session",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'radixviz.script' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
