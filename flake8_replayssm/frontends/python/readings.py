"""Readings of a launch: one per combination of the branches its values come from.

A launch whose values depend on ``if`` statements or ``a if c else b`` can take a finite
set of values; it is judged for each (README, "a finite set of values ... is that set").
:class:`Reading` is the state every value lookup of one launch consults and shares: the
branch pinned at each ``if`` met so far, the values worked out under those pins (a memo
forgotten when they change), where the launch is in source order, and the parts not
followed because a bound was hit.  :meth:`Reading.each` re-reads a launch once per
combination, up to ``MAX_COMBINATIONS`` readings; past that, choices are unknown.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import replace
from typing import Any, Callable, Iterator

from ...model import Launch, Span
from .collect import BranchPath

#: more `if`s than this under one launch: its values are unknown (2**5 readings)
MAX_COMBINATIONS = 32


class Reading:
    """The branch choices, memo and source position of the reading under way."""

    def __init__(self) -> None:
        # the branch taken at each `if` / `a if c else b` met (pins), those met without a pin (seen)
        self.pins: dict[int, int] = {}
        self.seen: dict[int, int] = {}
        self.choices_unknown = False
        self.groups = itertools.count(1)
        #: values worked out in this reading (forgotten when the pins change)
        self.memo: dict[tuple[Any, ...], Any] = {}
        #: parts not followed because a bound was hit: (span, why)
        self.skipped: list[tuple[Span, str]] = []
        self.order = 0  # where the launch being built is, in source order

    def each(self, path: BranchPath, read: Callable[[], list[Launch]]) -> list[Launch]:
        """The launches of one call, read once per combination of the ``if`` branches and
        ``a if c else b`` its values come from (the branches the call itself is in are
        taken); launches at the same place of each reading form one group."""
        base = dict(path)
        self.pins, self.seen, self.choices_unknown, self.memo = dict(base), {}, False, {}
        first = read()
        new = [key for key in self.seen if key not in base]
        if not new:
            return first
        if 2 ** len(new) > MAX_COMBINATIONS:
            self.pins, self.seen, self.choices_unknown, self.memo = dict(base), {}, True, {}
            return read()
        runs = [first]
        for combo in itertools.islice(itertools.product((0, 1), repeat=len(new)), 1, None):
            self.pins, self.memo = {**base, **dict(zip(new, combo))}, {}
            runs.append(read())
        group = next(self.groups)
        return [replace(launch, group=group * 1000 + k) for found in runs for k, launch in enumerate(found)]

    @contextlib.contextmanager
    def at(self, order: int) -> Iterator[None]:
        """Read a variable's assigned value where the assignment is (``cmd = " ".join(cmd)``: the
        ``cmd`` on the right is the one assigned before), then go back to where the reading was."""
        saved, self.order = self.order, order
        try:
            yield
        finally:
            self.order = saved

    def branch(self, key: int) -> int | None:
        """Which branch of the ``if`` (or ``a if c else b``) ``key`` the reading takes;
        None when choices are unknown (too many combinations)."""
        chosen = self.pins.get(key)
        if chosen is not None:
            return chosen
        if self.choices_unknown:
            return None
        self.seen.setdefault(key, 2)
        return 0

    def on_path(self, path: BranchPath) -> bool | None:
        """Whether the reading takes every branch of ``path`` (None: not known)."""
        for key, taken in path:
            chosen = self.branch(key)
            if chosen is None:
                return None
            if chosen != taken:
                return False
        return True

    def not_followed(self, span: Span, why: str) -> None:
        """A bound was hit: that part is judged unknown, and said so."""
        entry = (span, why)
        if entry not in self.skipped:
            self.skipped.append(entry)
