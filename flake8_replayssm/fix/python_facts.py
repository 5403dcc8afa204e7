"""Where things are written in a Python text, for keyword and list-item edits (libcst).

The frontends read launches with ``ast``; an edit needs more than they keep: where each
argument of a call starts and ends, which strings are items of a list literal, which dict
literal only one call splats (``**cfg``), where a new ``import os`` line can go.
:func:`python_facts` gathers all of it in one libcst pass over the text.

This module imports libcst when it is imported: the planner imports it only when a Python
text is fixed, so linting never pays for libcst.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .edits import LineIndex

#: a position as a key: (line, col, end_line, end_col), as :func:`.edits.span_key` makes it
PosKey = tuple[int, int, int, int]
#: methods whose call on a name changes the dict it names in place
_MUTATING = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"})


@dataclass
class PyFacts:
    """Layout facts of one Python text (offsets are character offsets into it)."""

    #: span key -> SimpleString element of a list/tuple
    elements: set[PosKey] = field(default_factory=set)
    #: (start, end) character ranges of string-literal bodies
    string_bodies: list[tuple[int, int]] = field(default_factory=list)
    #: calls whose first argument is a list/tuple literal: (element keys, arg ranges, env node info)
    argv_calls: list[dict[str, Any]] = field(default_factory=list)
    #: engine calls by func span key: arg ranges and keyword names
    calls_by_func: dict[PosKey, dict[str, Any]] = field(default_factory=dict)
    #: every call by its (start, end) offsets: the same facts, with its ``env=`` (``env_dict``, ``has_env``)
    calls_by_range: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    #: statements (start offset of the line, indentation, simple) containing a call func
    statements: list[tuple[int, int, str, bool]] = field(default_factory=list)
    imports_os: bool = False
    #: where a new top-level ``import os`` line goes (None: nowhere sensible)
    import_at: int | None = None
    #: key span key -> entry of a dict literal or ``dict(...)``: start, end, container, form, quote
    dict_entries: dict[PosKey, dict[str, Any]] = field(default_factory=dict)
    #: id of a dict literal / ``dict(...)`` call -> the one name it is assigned to
    containers: dict[int, str] = field(default_factory=dict)
    #: ids of dict literals / ``dict(...)`` calls written as a call's argument (only that call has them)
    inline: set[int] = field(default_factory=set)
    #: name -> how often it is assigned / splatted (``**name``); names changed in place
    assigns: collections.Counter[str] = field(default_factory=collections.Counter)
    splats: collections.Counter[str] = field(default_factory=collections.Counter)
    mutated: set[str] = field(default_factory=set)


#: the largest Python text whose keyword launches the fixer edits: libcst's parse and position
#: metadata cost about a second per 1,000 lines, so a module of megabytes would keep ``fix``
#: busy for minutes (README, "Threat model")
FIX_MAX_CHARS = 200_000


def too_large_to_fix(text: str) -> str:
    """Why the keyword launches of Python ``text`` are not fixed ("" when they can be)."""
    if len(text) <= FIX_MAX_CHARS:
        return ""
    return (f"the Python text is too large for the fixer ({len(text):,} characters; the bound is "
            f"{FIX_MAX_CHARS:,}): fix its keyword launches by hand, or split the module")


def python_facts(text: str, index: LineIndex) -> PyFacts | None:
    """The layout facts of ``text``, or None when libcst must not or cannot parse it."""
    from ..guard import check_python
    from ..unchecked import NotChecked

    if too_large_to_fix(text):
        return None
    try:
        check_python(text)  # libcst must never see what would crash it or take minutes
        module = cst.parse_module(text)
    except (NotChecked, Exception):
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    facts = PyFacts()
    wrapper.visit(_Visitor(facts, pos, text, index))
    facts.import_at = import_position(module, pos, index)
    return facts


def _is_dict_call(node: Any) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict"


class _Visitor(cst.CSTVisitor):
    """Fills a :class:`PyFacts` in one walk of the module."""

    def __init__(self, facts: PyFacts, pos: Any, text: str, index: LineIndex) -> None:
        super().__init__()
        self.facts, self.pos, self.text, self.index = facts, pos, text, index

    def _key(self, node: Any) -> PosKey:
        r = self.pos[node]
        return (r.start.line, r.start.column, r.end.line, r.end.column)

    def _offsets(self, node: Any) -> tuple[int, int]:
        r = self.pos[node]
        return self.index.offset(r.start.line, r.start.column), self.index.offset(r.end.line, r.end.column)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if isinstance(alias.name, cst.Name) and alias.name.value == "os" and alias.asname is None:
                self.facts.imports_os = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        start, end = self._offsets(node)
        lead = len(node.prefix) + len(node.quote)
        self.facts.string_bodies.append((start + lead, end - len(node.quote)))

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        start, end = self._offsets(node)
        self.facts.string_bodies.append((start + len(node.start), end - len(node.end)))

    def _sequence(self, node: cst.List | cst.Tuple) -> None:
        for element in node.elements:
            if isinstance(element, cst.Element) and isinstance(element.value, cst.SimpleString):
                self.facts.elements.add(self._key(element.value))

    visit_List = _sequence  # type: ignore[assignment]
    visit_Tuple = _sequence  # type: ignore[assignment]

    def visit_Dict(self, node: cst.Dict) -> None:
        for element in node.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                start, _ = self._offsets(element.key)
                _, end = self._offsets(element.value)
                self.facts.dict_entries[self._key(element.key)] = {
                    "start": start, "end": end, "container": id(node), "form": "dict",
                    "quote": element.key.quote if len(element.key.quote) == 1 else '"'}
            elif isinstance(element, cst.StarredDictElement) and isinstance(element.value, cst.Name):
                self.facts.splats[element.value.value] += 1

    def _target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.facts.assigns[target.value] += 1
            if value is not None and (isinstance(value, cst.Dict) or _is_dict_call(value)):
                self.facts.containers[id(value)] = target.value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value, None)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.facts.mutated.add(target.value.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value if len(node.targets) == 1 else None
        for target in node.targets:
            self._target(target.target, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, None)
        if isinstance(node.target, cst.Name):
            self.facts.mutated.add(node.target.value)

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name):
            self.facts.mutated.add(node.target.value.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value in _MUTATING:
            self.facts.mutated.add(node.value.value)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        start, end = self._offsets(node)
        line_start = self.index.line_start(start)
        indent = self.text[line_start:start]
        self.facts.statements.append((start, end, indent, indent.strip() == "" and len(node.body) == 1))

    def visit_Call(self, node: cst.Call) -> None:
        args = []
        for arg in node.args:
            a_start, _ = self._offsets(arg.keyword) if arg.keyword is not None else self._offsets(arg.value)
            if arg.star:
                a_start -= len(arg.star)
            _, v_end = self._offsets(arg.value)
            args.append({"start": a_start, "end": v_end,
                         "keyword": arg.keyword.value if arg.keyword is not None else None,
                         "node": arg.value})
        for arg in node.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                self.facts.splats[arg.value.value] += 1
            if isinstance(arg.value, cst.Dict) or _is_dict_call(arg.value):
                self.facts.inline.add(id(arg.value))  # engine_kwargs=dict(...), **{...}
        if _is_dict_call(node):
            self._dict_call(node)
        start, end = self._offsets(node)
        info: dict[str, Any] = {"args": args, "start": start, "end": end, "open": self._offsets(node.func)[1]}
        self.facts.calls_by_func[self._key(node.func)] = info
        self.facts.calls_by_range[(start, end)] = info
        env = next((a for a in args if a["keyword"] == "env"), None)
        if env is not None and isinstance(env["node"], cst.Dict):
            d_start, d_end = self._offsets(env["node"])
            info["env_dict"] = (d_start, d_end, len(env["node"].elements))
        info["has_env"] = env is not None
        if node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple)) and node.args[0].keyword is None:
            self._argv_call(node, info)

    def _dict_call(self, node: cst.Call) -> None:
        """``dict(name=value, ...)``: its keywords are entries like a dict literal's."""
        quote = next((a.value.quote for a in node.args if isinstance(a.value, cst.SimpleString)
                      and len(a.value.quote) == 1), '"')
        for arg in node.args:
            if arg.keyword is not None and not arg.star:
                start, _ = self._offsets(arg.keyword)
                _, end = self._offsets(arg.value)
                self.facts.dict_entries[self._key(arg.keyword)] = {
                    "start": start, "end": end, "container": id(node), "form": "kwarg", "quote": quote}

    def _argv_call(self, node: cst.Call, info: dict[str, Any]) -> None:
        """A call whose first argument is an argv list literal (``subprocess.run([...], env=...)``)."""
        first = node.args[0].value
        assert isinstance(first, (cst.List, cst.Tuple))
        info["elements"] = {self._key(e.value) for e in first.elements if isinstance(e, cst.Element)}
        self.facts.argv_calls.append(info)


def import_position(module: Any, pos: Any, index: LineIndex) -> int | None:
    """The start of the line after the module's leading docstring and imports, or of its first
    statement (after a shebang and header comments); None for an empty module."""
    after = None
    for i, stmt in enumerate(module.body):
        simple = isinstance(stmt, cst.SimpleStatementLine)
        imports = simple and all(isinstance(part, (cst.Import, cst.ImportFrom)) for part in stmt.body)
        docstring = simple and i == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        if not (imports or docstring):
            break
        after = stmt
    if after is not None:
        end = pos[after].end
        offset = index.offset(end.line, end.column)
        line = index.line_of(offset)
        if offset == index.starts[line]:
            return offset
        return index.starts[line + 1] if line + 1 < len(index.starts) else len(index.text)
    if not module.body:
        return None
    first = pos[module.body[0]].start
    return index.offset(first.line, 0)
