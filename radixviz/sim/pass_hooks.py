"""Work to do after every scheduler pass of the runs started inside a ``with after_each_pass``.

``simulate`` has a route per engine and mode, each calling ``runner.replay``; a caller that
wants to see every pass (``simulate --publish``: the pass's KV events on the wire) wraps the
command once instead of threading a callback through every route. ``replay`` asks
``hooks_for(sched)`` once per run.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from collections.abc import Callable, Iterator

# factories: scheduler -> callback(finished, total), called after each of its passes
_FACTORIES: ContextVar[tuple[Callable[[Any], Callable[[int, int], None]], ...]] = ContextVar(
    "pass_hook_factories", default=())


@contextmanager
def after_each_pass(factory: Callable[[Any], Callable[[int, int], None]]) -> Iterator[None]:
    token = _FACTORIES.set(_FACTORIES.get() + (factory,))
    try:
        yield
    finally:
        _FACTORIES.reset(token)


def with_hooks(sched: Any, progress: Callable[[int, int], None] | None) -> Callable[[int, int], None] | None:
    """``progress`` followed by the hooks of the runs now wrapped (``progress`` alone when none)."""
    hooks = [factory(sched) for factory in _FACTORIES.get()]
    if not hooks:
        return progress
    callbacks = ([progress] if progress is not None else []) + hooks

    def after_pass(finished: int, total: int) -> None:
        for callback in callbacks:
            callback(finished, total)
    return after_pass
