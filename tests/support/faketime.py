"""Time for a TraceStore that moves only when a test moves it: waits take no real time and no test races a clock."""

from __future__ import annotations

import asyncio
import heapq
import itertools


class FakeTime:
    """A clock and a sleep to give ``TraceStore(clock=..., sleep=...)``.

    Args:
        autojump: A sleep moves the clock on by its length at once (for a test with nothing else
            going on, a timeout); else sleepers wake only as :meth:`advance` passes their time.
    """

    def __init__(self, *, autojump: bool = False) -> None:
        """Start at 0."""
        self.now = 0.0
        self.autojump = autojump
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def clock(self) -> float:
        """The time."""
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Sleep on this clock."""
        if self.autojump:
            self.now += max(0.0, seconds)
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), next(self._order), future))
        await future

    async def settle(self) -> None:
        """Let every task that can run, run (until each waits on this clock or an event)."""
        for _ in range(20):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        """Move the clock on, waking each sleeper at its time, in order."""
        target = self.now + seconds
        await self.settle()
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, deadline)
            if not future.done():
                future.set_result(None)
            await self.settle()
        self.now = target
        await self.settle()
