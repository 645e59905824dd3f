"""The operation language and sessions that run it with every micro-step recorded."""
from .frames import Frame, Marks, OpRecord, PoolSnapshot
from .narrate import describe, explain, key_text, slot_ranges
from .parser import KEY_OPS, OP_NAMES, Op, ScriptError, load_script, parse_script
from .session import DEFAULT_POOL_SIZE, Session

__all__ = ["Frame", "Marks", "OpRecord", "PoolSnapshot", "describe", "explain", "key_text",
           "slot_ranges", "KEY_OPS", "OP_NAMES", "Op", "ScriptError", "load_script", "parse_script",
           "DEFAULT_POOL_SIZE", "Session"]
