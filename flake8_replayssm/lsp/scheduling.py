"""When a document is linted: at once after a quiet spell, then once per burst of changes.

A debounce with a leading edge: the first change after ``delay`` seconds of
quiet is linted at once (an isolated edit is not made to wait), changes that
follow within ``delay`` of each other are linted once, ``delay`` after the last
of them.  At most one lint per document runs at a time, and at most one waits
behind it; the waiting one reads the document when it starts, so it always
lints the newest text (older versions are never linted just to be thrown away).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Awaitable, Callable

logger = logging.getLogger(__name__)


@dataclass
class _State:
    timer: asyncio.TimerHandle | None = None
    #: a change came in while the window was open: lint when it closes
    dirty: bool = False
    running: asyncio.Task[None] | None = None
    waiting: bool = False
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class Debouncer:
    """Calls ``run(key)`` for the keys that are touched, as the module docstring says."""

    def __init__(self, run: Callable[[str], Awaitable[None]], delay: Callable[[], float]) -> None:
        self.run, self.delay = run, delay
        self.states: dict[str, _State] = {}

    def touch(self, key: str, *, now: bool = False) -> None:
        """``key`` changed; ``now`` skips the wait (a document opened, settings changed)."""
        state = self.states.setdefault(key, _State())
        loop = asyncio.get_running_loop()
        if state.timer is None or now:
            if state.timer is not None:
                state.timer.cancel()
            state.dirty = False
            self._start(key, state)
        else:
            state.timer.cancel()
            state.dirty = True
        state.timer = loop.call_later(self.delay(), self._window_closed, key)

    def forget(self, key: str) -> None:
        """The document is gone: no more lints of it (a running one finishes unseen)."""
        state = self.states.pop(key, None)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        for task in state.tasks:
            task.cancel()

    def _window_closed(self, key: str) -> None:
        state = self.states.get(key)
        if state is None:
            return
        state.timer = None
        if state.dirty:
            state.dirty = False
            self._start(key, state)

    def _start(self, key: str, state: _State) -> None:
        if state.waiting:  # the one already waiting will read the newest text
            return
        task = asyncio.ensure_future(self._after_running(key, state))
        state.tasks.add(task)
        task.add_done_callback(state.tasks.discard)

    async def _after_running(self, key: str, state: _State) -> None:
        if state.running is not None and not state.running.done():
            state.waiting = True
            try:
                await asyncio.wait([state.running])
            finally:
                state.waiting = False
        state.running = asyncio.current_task()  # type: ignore[assignment]
        try:
            await self.run(key)
        except asyncio.CancelledError:
            raise
        except Exception:  # run() reports its own failures; this is the last line of defence
            logger.exception("linting %s failed", key)
