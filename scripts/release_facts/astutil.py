"""Reading facts out of an engine's source with ``ast``: literals, messages, conditions.

Everything here is static: a value is read when it is written literally (a list of
strings, a ``frozenset({...})``, an f-string message); anything else is reported as
source text for a person to read, never guessed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from .tree import Loc


def link(module: ast.AST | None) -> ast.AST | None:
    """Give every node of ``module`` its parent (once), for ``conditions`` and ``qualified_name``."""
    if module is not None and not getattr(module, "_rsm_linked", False):
        for node in ast.walk(module):
            for child in ast.iter_child_nodes(node):
                child._rsm_parent = node  # type: ignore[attr-defined]
        module._rsm_linked = True  # type: ignore[attr-defined]
    return module


def parent(node: ast.AST) -> ast.AST | None:
    return getattr(node, "_rsm_parent", None)


def ancestors(node: ast.AST) -> Iterator[ast.AST]:
    up = parent(node)
    while up is not None:
        yield up
        up = parent(up)


def qualified_name(node: ast.AST) -> str:
    """``Class.method`` (or ``function``) of the code ``node`` sits in; ``<module>`` at top level."""
    names = [a.name for a in ancestors(node)
             if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return ".".join(reversed(names)) or "<module>"


def branch_tests(node: ast.AST) -> list[tuple[ast.expr, bool]]:
    """The ``if`` tests on the path from the enclosing function (or module) to ``node``,
    outermost first, each with True when ``node`` is in its body, False in its ``else``."""
    out: list[tuple[ast.expr, bool]] = []
    child = node
    for up in ancestors(node):
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            break
        if isinstance(up, ast.If):
            if child in up.body:
                out.append((up.test, True))
            elif child in up.orelse:
                out.append((up.test, False))
        child = up
    return list(reversed(out))


def conditions(node: ast.AST) -> list[str]:
    """The path's tests as source text: a node in an ``else`` (or ``elif``) branch carries
    the negated test of the branch it skipped, so two raises with the same message under
    different branches differ here."""
    return [ast.unparse(test) if taken else f"not ({ast.unparse(test)})"
            for test, taken in branch_tests(node)]


def strings(node: ast.AST | None) -> list[str] | None:
    """The strings of a literal list, tuple, set or ``frozenset(...)``/``set(...)`` of them, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("frozenset", "set", "tuple", "list") and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for element in node.elts:
            if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
                return None
            out.append(element.value)
        return out
    return None


def message(expr: ast.AST | None, scope: ast.AST | None = None) -> str:
    """A message as the user reads it: literal parts verbatim, computed parts as ``{source}``.

    A name bound to a string in the same function (``msg = f"..."; raise ValueError(msg)``)
    is followed once.
    """
    if expr is None:
        return ""
    if isinstance(expr, ast.Call) and expr.args:
        return message(expr.args[0], scope)
    if isinstance(expr, ast.Constant):
        return str(expr.value)
    if isinstance(expr, ast.JoinedStr):
        parts = []
        for value in expr.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                conversion = "" if value.conversion == -1 else "!" + chr(value.conversion)
                spec = "" if value.format_spec is None else ":" + message(value.format_spec)
                parts.append("{" + ast.unparse(value.value) + conversion + spec + "}")
        return "".join(parts)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return message(expr.left, scope) + message(expr.right, scope)
    if isinstance(expr, ast.Name) and scope is not None:
        bound = _bound_string(expr, scope)
        if bound is not None:
            return message(bound)
    return "{" + ast.unparse(expr) + "}"


def _bound_string(name: ast.Name, scope: ast.AST) -> ast.AST | None:
    found = None
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and node.lineno < name.lineno and any(
                isinstance(t, ast.Name) and t.id == name.id for t in node.targets):
            if isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                if found is None or node.lineno > found.lineno:
                    found = node
    return None if found is None else found.value


@dataclass(frozen=True)
class Rule:
    """One refusal in the engine's source: a ``raise`` or an ``assert`` with its message.

    ``conditions`` are the ``if`` tests that lead to it (an assert's own test is its
    last condition, negated: the assert fires when it is false).
    """

    kind: str
    function: str
    conditions: tuple[str, ...]
    message: str
    loc: Loc

    def as_json(self) -> dict:
        return {"kind": self.kind, "function": self.function, "conditions": list(self.conditions),
                "message": self.message, "at": str(self.loc)}

    @classmethod
    def from_json(cls, raw: dict) -> "Rule":
        path, _, line = raw["at"].rpartition(":")
        return cls(raw["kind"], raw["function"], tuple(raw["conditions"]), raw["message"],
                   Loc(path, int(line)))


def refusals(module: ast.Module, path: str) -> Iterator[Rule]:
    """Every ``raise X(...)`` and ``assert test, msg`` of a module, with message and conditions."""
    link(module)
    for node in ast.walk(module):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc
            name = exc.func if isinstance(exc, ast.Call) else exc
            kind = "raise " + ast.unparse(name)
            scope = _function_of(node)
            yield Rule(kind, qualified_name(node), tuple(conditions(node)), message(exc, scope),
                       Loc(path, node.lineno))
        elif isinstance(node, ast.Assert):
            scope = _function_of(node)
            when = conditions(node) + [f"not ({ast.unparse(node.test)})"]
            yield Rule("assert", qualified_name(node), tuple(when), message(node.msg, scope),
                       Loc(path, node.lineno))


def _function_of(node: ast.AST) -> ast.AST | None:
    for up in ancestors(node):
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return up
    return None


def find_class(module: ast.Module | None, name: str) -> ast.ClassDef | None:
    if module is None:
        return None
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def find_function(module: ast.AST | None, name: str) -> ast.FunctionDef | None:
    if module is None:
        return None
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node  # type: ignore[return-value]
    return None


def assigned(module: ast.Module | None, name: str) -> ast.Assign | ast.AnnAssign | None:
    """The module-level assignment of ``name`` (the last one), if any."""
    found = None
    for node in (module.body if module is not None else []):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            found = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            found = node
    return found


def class_fields(cls: ast.ClassDef) -> Iterator[ast.AnnAssign]:
    """The annotated class attributes (dataclass fields), ``ClassVar`` left out."""
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if "ClassVar" not in ast.unparse(node.annotation):
                yield node


def imported_from(module: ast.Module, name: str) -> list[tuple[ast.ImportFrom, str, tuple]]:
    """Every module-level ``from X import name`` (with ``as``), also inside ``if``/``try``
    blocks: the import, the original name and the ``if`` tests around it (``(test, taken)``
    pairs, outermost first).  Imports inside functions bind no module-level name."""
    index = getattr(module, "_rsm_imports", None)
    if index is None:
        index = {}
        pending: list[tuple[ast.stmt, tuple]] = [(node, ()) for node in module.body]
        while pending:
            node, tests = pending.pop(0)
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    index.setdefault(alias.asname or alias.name, []).append((node, alias.name, tests))
            elif isinstance(node, ast.If):
                pending.extend((n, tests + ((node.test, True),)) for n in node.body)
                pending.extend((n, tests + ((node.test, False),)) for n in node.orelse)
            elif isinstance(node, ast.Try):
                for block in [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]:
                    pending.extend((n, tests) for n in block)
        module._rsm_imports = index  # type: ignore[attr-defined]
    return index.get(name, [])


def module_path(current: str, node: ast.ImportFrom) -> str:
    """The dotted module an import names, resolved against the importing file's path."""
    if not node.level:
        return node.module or ""
    package = current.rsplit("/", 1)[0].split("/")
    if current.endswith("/__init__.py"):
        package = current[: -len("/__init__.py")].split("/")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def file_of(dotted: str, exists) -> str | None:
    """The file of a dotted module inside the wheel (``a/b.py`` or ``a/b/__init__.py``)."""
    base = dotted.replace(".", "/")
    for candidate in (base + ".py", base + "/__init__.py"):
        if exists(candidate):
            return candidate
    return None
