"""``--check``: play a lesson on a real Session and hold each prediction to the engine."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial, singledispatch
from typing import TYPE_CHECKING, Any

from radixviz.cache.engines import engine_names, engine_spec
from radixviz.script.parser import ScriptError

from .block_checks import NAMES as BLOCK_CHECKS, block_value, is_block_check
from .model import Lesson, LessonError, Operations, Predict
from ..scenario import edge_text

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ...cache.snapshot import TreeSnapshot
    from ...script.frames import OpRecord, PoolSnapshot
    from ...script.session import Session


def _tree_count(session: Session, name: str) -> object:
    frame = session.live_frame()
    return tree_counts(frame.tree, frame.pool)[name]


# what each name a lesson's `check` may predict reads from a Session
STATE_CHECKS: dict[str, Callable[[Any], object]] = {
    "evictable_size": lambda s: s.engine.evictable_size(),
    "total_size": lambda s: s.engine.total_size(),
    "free_slots": lambda s: s.pool.available_size(),
    "nodes": lambda s: len(s.engine.snapshot().nodes) - 1,   # the root is not counted
    # tokens on locked nodes, where the engine counts them apart (0 elsewhere)
    "protected_size": lambda s: s.engine.protected_size(),
    # what the tree's type holds (tree_counts): its namespaces, its host tier; with SGLang's
    # 9fbe6800a write_back bugs (hicache-fixes off), host-eviction candidates and host slots in
    # use that no node the root reaches holds (0 where the cache has no host tier)
    **{name: partial(_tree_count, name=name)
       for name in ("namespaces", "host_used", "in_flight", "host_only_nodes", "double_freed",
                    "host_leaves", "stray_host_slots")},
}


@singledispatch
def tree_counts(tree: TreeSnapshot, pool: PoolSnapshot | None = None) -> dict:
    """The counts a lesson may predict that depend on the tree's type (and the step's
    ``pool``): the subtrees of different namespaces under the root (1 where keys carry none)
    and the host tier's host slots in use, copies not yet acknowledged, host-only nodes,
    host-eviction candidates and stray host slots (0 without a host tier)."""
    return {"namespaces": 1, "host_used": 0, "in_flight": 0, "host_only_nodes": 0, "double_freed": 0,
            "host_leaves": 0, "stray_host_slots": 0}


def _register_tree_counts() -> None:
    """The counts of the trees an engine's wing knows (its ``checks`` module, named by its
    registry line, registers them here): imported when a lesson is first checked, its session
    (and torch) already loaded; every engine's, since a lesson may switch engines."""
    for name in engine_names():
        engine_spec(name).part("checks")


def check_lesson(lesson: Lesson, device: str = "cpu") -> list[LessonError]:
    """Every problem in ``lesson``: refused operations, broken invariants, wrong predictions."""
    # the engine and its session load torch: only once a lesson is checked
    from radixviz.cache.invariants import InvariantError
    from radixviz.script.session import Session

    _register_tree_counts()
    session = Session(device=device)
    problems: list[LessonError] = []
    pending: list[Predict] = []
    name = str(lesson.path)
    for block in lesson.blocks:
        if isinstance(block, Predict):
            pending.append(block)
            continue
        if not isinstance(block, Operations):
            continue
        records, stop = [], False
        for op in block.ops:
            try:
                records.append(session.apply(op))
                if not session.knowingly_broken:   # a #4 section breaks them on purpose
                    session.check_invariants()  # the 2024 or the 2026 engine's checks
            except ScriptError as exc:
                problems.append(LessonError(name, exc.line, f"operation refused: {exc.message}"))
                stop = True        # later operations depend on this one's state
                break
            except InvariantError as exc:
                problems.append(LessonError(name, op.line, f"invariant broken after {op.text!r}: {exc}"))
                stop = True
                break
        if records:
            problems.extend(p for p in (_check_predict(pr, records, session, name) for pr in pending) if p)
        if stop:
            return sorted(problems, key=lambda p: p.line)
        pending = []
    return problems


def engine_value(check: str, record: OpRecord, session: Session, records: Sequence[OpRecord] = ()):
    """What the engine says for a predict's ``check`` (KeyError when the name is unknown);
    ``records``: the whole block's, for the checks in block_checks.py."""
    if is_block_check(check):
        return block_value(check, records or [record], session)
    if check in STATE_CHECKS:
        return STATE_CHECKS[check](session)
    if check == "evicted_leaves":     # edge text of each leaf the first operation deleted, in order
        frames = session.frames[record.first_frame:record.last_frame + 1]
        return [edge_text(f.data["key"]) for f in frames if f.kind == "delete"]
    if check == "demoted_leaves":     # nodes that lost their device copy, host copy kept, in order
        frames = session.frames[record.first_frame:record.last_frame + 1]
        return [edge_text(f.tree.nodes[f.nodes[0]].key) for f in frames if f.kind == "demote"]
    value = record.result
    for part in check.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(check)
        value = value[part]
    return value


def engine_disagrees(predict: Predict, records: Sequence[OpRecord], session: Session) -> str | None:
    """What the engine gives for ``predict.check`` after the block whose ``records`` just
    ran, as text, when it is not the lesson's answer; None when it agrees, or when there is
    no check to make."""
    if predict.check is None or not records:
        return None
    try:
        value = _as_text(engine_value(predict.check, records[0], session, records))
    except KeyError:
        return None      # --check reports an unknown check; the app has nothing to compare
    return None if predict.grade(value).correct else value


def _check_predict(predict: Predict, records: Sequence[OpRecord], session: Session, name: str) -> LessonError | None:
    if predict.check is None:
        return None
    record = records[0]
    try:
        value = engine_value(predict.check, record, session, records)
    except KeyError:
        known = sorted(set(record.result) | set(STATE_CHECKS) | {"evicted_leaves", "demoted_leaves"}
                       | set(BLOCK_CHECKS))
        return LessonError(name, predict.line, f"unknown check {predict.check!r} "
                           f"(here: {', '.join(known)})")
    # the engine's value, read by the same grader as a learner's reply, must be the answer
    if not predict.grade(_as_text(value)).correct:
        return LessonError(name, predict.line, f"predicted answer {predict.answer!r} but the engine "
                           f"gives {_as_text(value)!r} for {predict.check}")
    return None


def _as_text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value) or "none"
    return str(value)
