"""The variables of one shell process as the walk goes: a stack of frames.

A branch, a loop body, a subshell, a function body or a command's prefix assignments push
a frame; when they end, their frames are folded back (:meth:`Scope.merge`) so that a
variable is known after them only if every path agrees, or is the set of the values the
branches gave it.  Also held here, because they live as long as the process: the functions
defined so far, the arguments of the call being read, ``set -a``, and whether anything
unseen (``source``, ``eval`` of an unknown string) may have set any variable.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...model import Command
from .choices import choice
from .located import Located
from .values import Field, Var, same


def merged_export(values: Iterable[Var | None]) -> bool | None:
    seen = {v.exported if v is not None else False for v in values}
    return seen.pop() if len(seen) == 1 else None


class Scope:
    """The variables of one shell process: a stack of frames, as the walk goes."""

    def __init__(self, base: dict[str, Var], open_ended: bool) -> None:
        self.frames: list[tuple[str, dict[str, Var]]] = [("base", base), ("top", {})]
        self.sticky: dict[str, Var] = {}   # what function bodies assign
        self.functions: dict[str, dict[str, Var]] = {}   # name -> the globals its body sets
        #: name -> (the walk of the text that holds it, its body, the commands read at its definition)
        self.bodies: dict[str, tuple[Any, Any, list[Command]]] = {}
        #: the arguments of the function call being read ($1, "$@"); empty: the script's own
        self.args: list[list[Field]] = []
        self.gen = 1
        self.barrier = 0
        self.allexport = False
        self.open_ended = open_ended
        self.env_names = {k for k, v in base.items() if v.env}
        #: the branch being read ended with `exit` / `return`: nothing after it runs
        self.exited = False
        #: `alias NAME=TEXT` so far: a command named NAME runs TEXT with its own words after it
        self.aliases: dict[str, Located] = {}

    def next_gen(self) -> int:
        self.gen += 1
        return self.gen

    def lookup(self, name: str) -> Var | None:
        func = -1
        for k in range(len(self.frames) - 1, -1, -1):
            if self.frames[k][0] == "func":
                func = k
                break
        found, where = None, -1
        for k in range(len(self.frames) - 1, -1, -1):
            v = self.frames[k][1].get(name)
            if v is not None:
                found, where = v, k
                break
        if found is not None and found.gen < self.barrier and found.kind != "unknown":
            found = found.with_(kind="unknown", value=None)
        sticky = self.sticky.get(name)
        if sticky is not None and found is not None and (func < 0 or where < func) \
                and not same(found, sticky):
            found = found.with_(kind="unknown", value=None,
                                exported=merged_export((found, sticky)))
        return found

    def set(self, name: str, var: Var) -> None:
        var.gen = self.next_gen()
        self.frames[-1][1][name] = var

    def export_of(self, before: Var | None) -> bool | None:
        """Whether a variable is exported after an assignment that does not say (``X=1``)."""
        if self.allexport:
            return True
        if before is None:
            return False
        return True if before.env else before.exported

    def set_unknown(self, name: str, loc: tuple[int, int], *, local: bool = False) -> None:
        """``name`` was given a value this reading cannot see (``read``, ``(( N++ ))``)."""
        before = self.lookup(name)
        self.set(name, Var("unknown", None, loc, exported=self.export_of(before),
                           env=bool(before and before.env), local=local))

    def set_scalar(self, name: str, value: Located, loc: tuple[int, int]) -> None:
        """``name`` was given the known ``value`` written at ``loc``."""
        before = self.lookup(name)
        self.set(name, Var("scalar", value, loc, exported=self.export_of(before),
                           env=bool(before and before.env)))

    def in_function(self) -> bool:
        return any(kind == "func" for kind, _ in self.frames)

    def push(self, kind: str) -> None:
        self.frames.append((kind, {}))

    def pop(self) -> dict[str, Var]:
        return self.frames.pop()[1]

    def merge(self, branches: list[dict[str, Var]], exhaustive: bool, choices: bool = True) -> None:
        """Fold branch frames (just popped) into the current frame; a variable the branches set
        differently is the set of their values (``choices``; not for loops, which repeat)."""
        names: dict[str, None] = {}
        for frame in branches:
            names.update(dict.fromkeys(frame))
        for name in names:
            before = self.lookup(name)
            values = [frame.get(name) or before for frame in branches]
            if not exhaustive:
                values.append(before)
            last = next((frame[name] for frame in reversed(branches) if name in frame), None)
            assert last is not None
            alternatives = None
            if all(v is not None for v in values) and all(same(values[0], v) for v in values):
                result = last.with_(exported=merged_export(values))
            elif choices and (alternatives := choice(values)) is not None:
                result = last.with_(kind="choice", value=alternatives.value, exported=merged_export(values))
            else:
                result = last.with_(kind="unknown", value=None, exported=merged_export(values))
            result.local = any(v is not None and v.local for v in values)
            result.env = any(v is not None and v.env for v in values)
            self.set(name, result)

    def end_function(self, name: str, frame: dict[str, Var]) -> None:
        """A function body was read: its globals may be set whenever it is called."""
        body = {k: v for k, v in frame.items() if not v.local}
        if name:
            self.functions[name] = body
        for var_name, v in body.items():
            old = self.sticky.get(var_name)
            self.sticky[var_name] = v if old is None or same(old, v) else v.with_(kind="unknown", value=None)
        self.merge([body], exhaustive=False)

    def visible(self) -> dict[str, Var]:
        names: dict[str, None] = {}
        for _, frame in self.frames:
            names.update(dict.fromkeys(frame))
        out = {}
        for name in names:
            v = self.lookup(name)
            if v is not None:
                out[name] = v
        return out

    def mark_barrier(self) -> None:
        self.barrier = self.next_gen()
        self.open_ended = True
