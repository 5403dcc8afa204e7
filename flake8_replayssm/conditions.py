"""A tiny, safe expression language for the ``when`` of a check in releases.toml.

vLLM's validators are ``if`` chains over a handful of derived values; writing
them as data keeps releases a data change.  Expressions use Python syntax but
only names, constants, tuples, ``+``, comparisons, ``in``, ``and``/``or``/``not``
are allowed; anything else is rejected when the data is loaded, so a typo in
the data fails the test suite instead of a user's lint run.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

_Eval = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Condition:
    """A compiled ``when``: call it with the facts; ``names`` are the facts it reads."""

    source: str
    names: frozenset[str]
    _evaluate: _Eval = field(repr=False, compare=False)

    def __call__(self, facts: Mapping[str, Any]) -> Any:
        return self._evaluate(facts)


_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def compile_condition(source: str) -> Condition:
    """Compile ``source`` into a function of a facts mapping."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"bad condition {source!r}: {exc.msg}") from None
    names = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return Condition(source, names, _compile(tree.body, source))


def _compile(node: ast.AST, source: str) -> _Eval:
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v, source) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda f: all(p(f) for p in parts)
        return lambda f: any(p(f) for p in parts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _compile(node.operand, source)
        return lambda f: not inner(f)
    if isinstance(node, ast.Compare):
        left = _compile(node.left, source)
        ops = [_COMPARE[type(op)] for op in node.ops]
        rights = [_compile(c, source) for c in node.comparators]

        def compare(f: Mapping[str, Any]) -> bool:
            value = left(f)
            for op, right in zip(ops, rights):
                other = right(f)
                if not op(value, other):
                    return False
                value = other
            return True

        return compare
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _compile(node.left, source), _compile(node.right, source)
        return lambda f: a(f) + b(f)
    if isinstance(node, ast.Name):
        name = node.id
        return lambda f: f[name]
    if isinstance(node, ast.Constant):
        value = node.value
        return lambda f: value
    if isinstance(node, ast.Tuple):
        items = [_compile(e, source) for e in node.elts]
        return lambda f: tuple(i(f) for i in items)
    raise ValueError(f"bad condition {source!r}: {ast.dump(node)} is not allowed")
