"""Which assignment and which in-place changes a launch sees, in the reading under way.

The collector (:mod:`.collect`) recorded every assignment and change with its scope,
its ``if`` branches and its place in source order; a launch reads a name where it runs.
:class:`Bindings` answers, for the reading under way (:mod:`.readings`): which one
expression a name holds there (the last assignment before the use on the branches taken,
any point of an enclosing scope; none in a loop or a ``try``), and which changes of it
count and whether each is known to have run (before the launch, in order; or
"elsewhere": another function, later in an enclosing scope, read like an ``if``).
"""

from __future__ import annotations

import ast

from .collect import Assignment, Collector, Mutation, Scope
from .readings import Reading


class Bindings:
    """Names to the expressions and changes they have at a launch, in one reading."""

    def __init__(self, facts: Collector, reading: Reading) -> None:
        self.facts = facts
        self.reading = reading

    def resolve(self, node: ast.expr, scope: Scope, depth: int = 0) -> ast.expr | None:
        """Follow a name to the expression assigned to it (None if not static), and ``a if c
        else b`` to the branch this reading takes."""
        while depth < 10:
            if isinstance(node, ast.IfExp):
                taken = self.reading.branch(id(node))
                if taken is None:
                    return None
                node, depth = (node.body if taken == 0 else node.orelse), depth + 1
                continue
            if not isinstance(node, ast.Name):
                return node
            found = self.assignment(node, scope)
            if found is None:
                return None
            node, depth = found, depth + 1
        return None

    def assignment(self, name: ast.Name, scope: Scope) -> ast.expr | None:
        """The value ``name`` is given where it is used, in this reading (see :meth:`binding`)."""
        found = self.binding(name, scope)
        return found[0].value if found is not None else None

    def binding(self, name: ast.Name, scope: Scope) -> tuple[Assignment, Scope] | None:
        """The assignment ``name`` has where it is used, in this reading, and the scope it is
        in: the last assignment before the use on the ``if`` branches the reading takes (any
        point of an enclosing scope, whose code has run when a function is called); None when
        it is not one expression (assigned in a loop or a ``try``'s handler, or not at all)."""
        found = scope.lookup(name.id)
        if found is None:
            return None
        assignments, owner = found
        order = self.reading.order
        if owner is scope and order:
            assignments = [a for a in assignments if a.line < order]
        chosen = None
        for a in assignments:
            if a.path is None:
                return None
            on = self.reading.on_path(a.path)
            if on is None:
                return None
            if on:
                chosen = a
        return (chosen, owner) if chosen is not None else None

    def changes(self, name: str, scope: Scope, owner: Scope, start: int) -> list[tuple[Mutation, bool]]:
        """The in-place changes of ``name`` (given its value in ``owner`` at ``start``, in source
        order) that count for a launch in ``scope``, each with whether it is known to have run
        as written: straight-line changes before the launch, in order, on the branches this
        reading takes (in a loop: unknown); then the changes that may or may not have run (in
        another function, later in an enclosing scope), which are read like an ``if``: once
        run, once not (unknown past the bound on readings)."""
        before: list[tuple[Mutation, bool]] = []
        elsewhere: list[tuple[Mutation, bool]] = []
        for change in self.facts.mutations.get(name, ()):
            when = self.when(change, name, scope, owner, start)
            if when == "before":
                on = self.reading.on_path(change.path) if change.path is not None else None
                if on is not False:
                    before.append((change, on is True))
            elif when == "elsewhere":
                ran = self.reading.branch(id(change))
                if ran != 1:
                    elsewhere.append((change, ran == 0))
        return before + elsewhere

    def when(self, change: Mutation, name: str, scope: Scope, owner: Scope, start: int) -> str:
        """"before" the launch (in its scope, or in the enclosing scope that gave the value),
        "elsewhere" (may run before it, or not), or "never" (before the value was given, after
        a module-level launch, or another function's own variable of that name)."""
        order = self.reading.order
        if change.scope is scope:
            if order and change.order > order or owner is scope and change.order < start:
                return "never"
            return "before"
        if change.scope is owner:  # the module (or function) around the launch's function
            if change.order < start:
                return "never"
            return "before" if change.order < order else "elsewhere"
        if name in change.scope.assigned:
            return "never"
        if scope is self.facts.module_scope and change.order > order:
            return "never"  # a function defined after a module-level launch runs after it
        return "elsewhere"
