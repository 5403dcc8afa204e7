"""Value sets: a variable an ``if``/``else`` or a ``case`` sets differently is the finite set of
its values (DESIGN.md), and a command that uses such variables is read once per combination.

:func:`choice` builds the set; :class:`Combinations` is the state of reading one written
command (or assignment) once per combination: which value each choice has in the reading
now, and which choices the first reading met.  Bounded: a set of more than
:data:`MAX_CHOICES` values, or more than :data:`MAX_COMBINATIONS` readings, is unknown.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

from .values import Var, same

#: more values than this in one choice, or more combinations than this in one command: unknown
MAX_CHOICES = 8
MAX_COMBINATIONS = 16


def choice(values: list[Var | None]) -> Var | None:
    """One variable set differently by the branches of an ``if``/``case``: its finite set of
    values (DESIGN.md), or None when the set is not small and readable."""
    alternatives: list[Var] = []
    for v in values:
        options = v.value if v is not None and v.kind == "choice" else [
            v if v is not None else Var("unknown")]  # not set in this file: the caller's value
        for option in options:
            if option.kind not in ("scalar", "partial", "array", "unset", "unknown"):
                return None
            if not any(same(option, seen) or option.kind == seen.kind == "unknown" for seen in alternatives):
                alternatives.append(option)
                if len(alternatives) > MAX_CHOICES:  # each value is compared with at most this many
                    return None
    if all(a.kind == "unknown" for a in alternatives):
        return None
    return Var("choice", alternatives)


class Combinations:
    """Reading one written command once per combination of the choice variables it uses."""

    def __init__(self) -> None:
        self.pins: dict[int, int] = {}     # choice (id of its value list) -> alternative read now
        self.seen: dict[int, int] = {}     # choices met while reading, with their sizes
        self.unknown = False               # too many combinations: every choice is unknown

    def resolve(self, var: Var | None) -> Var | None:
        """A choice variable as the combination being read has it (its first value while the
        command is first read, to learn which choices it uses)."""
        if var is None or var.kind != "choice":
            return var
        if self.unknown:
            return var.with_(kind="unknown", value=None)
        key = id(var.value)
        index = self.pins.get(key)
        if index is None:
            self.seen.setdefault(key, len(var.value))
            index = 0
        option = var.value[index]
        return var.with_(kind=option.kind, value=option.value, loc=option.loc or var.loc)

    def each(self, read: Callable[[], Any]) -> list[Any]:
        """``read()`` once per combination of the choice variables it uses (one result when it
        uses none); with too many combinations, once with every choice unknown."""
        outer_seen, outer_pins, outer_unknown = self.seen, self.pins, self.unknown
        self.seen = {}
        try:
            first = read()
            new = {key: size for key, size in self.seen.items() if key not in outer_pins}
            if not new:
                return [first]
            keys, sizes = list(new), list(new.values())
            total = 1
            for size in sizes:
                total *= size
            if total > MAX_COMBINATIONS:
                self.unknown = True
                return [read()]
            results = [first]
            for combo in itertools.islice(itertools.product(*map(range, sizes)), 1, None):
                self.pins = {**outer_pins, **dict(zip(keys, combo))}
                results.append(read())
            return results
        finally:
            self.seen, self.pins, self.unknown = outer_seen, outer_pins, outer_unknown
