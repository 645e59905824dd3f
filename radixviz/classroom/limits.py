"""What a served class lets one student, or one computer, take: the HTTP requests an address
may make (a token bucket: a burst, then a rate), the joins an address may make in a minute,
and the disk the class folder may fill (a budget for the class, and a
share of it for each student). The teacher sets them (``serve --requests-per-second``,
``--joins-per-minute``, ``--disk-mb``; ``--max-students`` is the roster's own cap) and sees the disk on their page.

Without them one client keeping no cookie joined 1,990 made-up students in a minute, and
2,000 students of 200 uploads of 100 kB each could put 40 GB on the teacher's disk.
"""
from __future__ import annotations

import ipaddress
import time
from collections import deque
from typing import TYPE_CHECKING

from radixviz.files import folder_bytes

if TYPE_CHECKING:
    from .students import Roster, Student

JOIN_WINDOW = 60.0          # seconds: the "minute" of --joins-per-minute
MAX_ADDRESSES = 10_000      # addresses remembered at once (their old joins are forgotten first)
USAGE_SECONDS = 30.0        # how old the other students' disk use may be when a total is checked


def address_key(address: str) -> str:
    """Whom a limit counts: an IPv4 address, or an IPv6 address's /64 (one device may have
    many addresses in its network, and pick a new one for each connection)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


REQUESTS_PER_SECOND = 20   # HTTP requests one address may make a second (serve --requests-per-second)
REQUEST_BURST = 30         # a burst of this many seconds' worth of requests: at the default
                            # 20 a second, 600, a room of 60 behind one address loading the page


class RequestRate:
    """A token bucket of HTTP requests per address (``address_key``): ``burst`` at once, then
    ``per_second``. Without it one client could keep the server answering as fast as it can
    send (every page and refusal costs the front a little), slowing every student's page."""

    def __init__(self, per_second: float, burst: float | None = None) -> None:
        self.per_second = per_second
        self.burst = burst if burst is not None else per_second * REQUEST_BURST
        self.buckets: dict[str, list[float]] = {}     # key -> [tokens, when last filled]

    def wait(self, address: str, now: float | None = None) -> float:
        """0 if ``address`` may make a request now (and count it), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        if len(self.buckets) > MAX_ADDRESSES:           # forget the full ones: they are as new
            self.buckets = {k: b for k, b in self.buckets.items()
                            if b[0] + (now - b[1]) * self.per_second < self.burst}
        bucket = self.buckets.setdefault(address_key(address), [self.burst, now])
        bucket[0] = min(self.burst, bucket[0] + (now - bucket[1]) * self.per_second)
        bucket[1] = now
        if bucket[0] < 1:
            return (1 - bucket[0]) / self.per_second
        bucket[0] -= 1
        return 0.0


class JoinLimiter:
    """At most ``per_minute`` joins from one address in any ``JOIN_WINDOW`` seconds."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.joins: dict[str, deque] = {}

    def wait(self, address: str, now: float | None = None) -> float:
        """0 if ``address`` may join now (and count it), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        if len(self.joins) > MAX_ADDRESSES:
            self.joins = {a: d for a, d in self.joins.items() if d and now - d[-1] < JOIN_WINDOW}
        times = self.joins.setdefault(address_key(address), deque())
        while times and now - times[0] >= JOIN_WINDOW:
            times.popleft()
        if len(times) >= self.per_minute:
            return JOIN_WINDOW - (now - times[0])
        times.append(now)
        return 0.0


class DiskBudget:
    """The class folder's budget, ``total`` bytes, and each student's share of it."""

    def __init__(self, roster: Roster, total: int, share: int) -> None:
        self.roster, self.total, self.share = roster, total, share
        self.used: dict[str, int] = {}
        self.at = 0.0

    def usage(self, fresh: str | None = None, everyone: bool = False) -> dict[str, int]:
        """Bytes each student's folder holds (``fresh``'s measured now, the others' at most
        ``USAGE_SECONDS`` old; ``everyone``: all measured now, for the teacher's page)."""
        now = time.monotonic()
        students = {s.id: s for s in self.roster.students()}
        stale = everyone or now - self.at > USAGE_SECONDS
        for sid, student in students.items():
            if stale or sid == fresh or sid not in self.used:
                self.used[sid] = folder_bytes(self.roster.home(student))
        self.used = {sid: n for sid, n in self.used.items() if sid in students}
        if stale:
            self.at = now
        return dict(self.used)

    def added(self, student: Student, count: int) -> None:
        """``count`` bytes were just written to ``student``'s folder."""
        self.used[student.id] = self.used.get(student.id, 0) + count

    def refusal(self, student: Student, adding: int) -> str | None:
        """Why ``adding`` bytes more for ``student`` would break the budget, or None."""
        used = self.usage(fresh=student.id)
        mine = used.get(student.id, 0)
        if mine + adding > self.share:
            return f"your folder is full ({mb(mine)} of your {mb(self.share)}): ask your teacher"
        if sum(used.values()) + adding > self.total:
            return f"the class's folder is full ({mb(self.total)}): ask your teacher"
        return None


def mb(count: int) -> str:
    return f"{count / 1e6:.1f} MB"
