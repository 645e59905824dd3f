"""``recent_property``: ``functools.cached_property`` that keeps its value only on the last
few instances that computed it.

A session keeps a snapshot for every step, and views derive indexes from the one they show
(node id -> node, slot -> owner). Cached on every snapshot a person stepped through, those
indexes grew with the tree times the steps (a 5,000-node tree: about 1 MB a step); kept on
the last ``KEEP`` only, they cost a few recent steps, and an older step's are built again
when someone steps back to it. Reading a kept value is a plain attribute read.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

KEEP = 32   # instances per property: a view reads a step and its neighbours


class recent_property:  # noqa: N801 - a decorator, named like the one it stands in for
    def __init__(self, func: Callable) -> None:
        self.func = func
        self.__doc__ = func.__doc__
        self.name = func.__name__
        self._holders: OrderedDict = OrderedDict()   # id -> instance: keeps the id from reuse
        self._lock = threading.Lock()                # sessions load in worker threads

    def __set_name__(self, owner: type | None, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type | None = None):
        if instance is None:
            return self
        # only reached when the instance holds no value (the value is found in its __dict__)
        value = self.func(instance)
        instance.__dict__[self.name] = value
        with self._lock:
            self._holders[id(instance)] = instance
            self._holders.move_to_end(id(instance))
            while len(self._holders) > KEEP:
                _, oldest = self._holders.popitem(last=False)
                oldest.__dict__.pop(self.name, None)
        return value
