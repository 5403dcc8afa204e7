"""Find vLLM launches in Python source, on Python's own syntax tree (:mod:`ast`).

Two kinds of launch live in Python files:

- engine constructors: ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)``
  under any import alias or module attribute (``vllm.LLM``), with the model
  positional or as ``model=``, keywords from ``**cfg`` when ``cfg`` is a dict
  literal or ``dict(...)`` of the same scope or module; Ray Serve LLM configs
  (``LLMConfig(model_loading_config=..., engine_kwargs=...)`` and dict literals);
- command lines: argv lists and command strings handed to ``subprocess``,
  ``os.system``, ``shlex.split``, ``asyncio.create_subprocess_*``, including
  f-strings whose literal parts carry the flags, with ``env=`` dicts and
  ``os.environ[...] = ...`` assignments.

Nothing else is a launch: vLLM's own ``cache_config.use_replayssm = True``,
dataclass fields and help texts are never reported.

Why :mod:`ast` and not libcst here: finding launches needs positions and values,
not layout.  ``ast.parse`` is a C parser that gives every node its position (the
screen in :mod:`python_screen` has already paid for it), while libcst's parse and
position pass cost about 40 times as much on a launch file (README, "Speed").
libcst is what :mod:`flake8_replayssm.fix` edits Python with, where keeping
comments and layout matters.  Columns here are characters (ast counts UTF-8
bytes), and the characters of string literals are placed by reading the literal
tokens back from the source, as libcst would have kept them.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

from .. import engines
from ..frameworks import RAY_SERVE_LLM
from ..model import UNKNOWN, UNKNOWN_PART, Command, Launch, Setting, Span, Word
from ..recognise import launch_from_command
from ..unchecked import not_followed

SUBPROCESS_FUNCS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
ASYNC_EXEC = "create_subprocess_exec"
ASYNC_SHELL = "create_subprocess_shell"
_PLACEHOLDER = "RSMHOLE"
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "zsh", "dash"})
#: more `if`s than this under one launch: its values are unknown (2**5 readings)
_MAX_COMBINATIONS = 32
#: a command string or argv list past this is not followed (`a2 = a1 + a1` doubling)
_MAX_TEXT = 65_536
_MAX_WORDS = 4_096

_Path = tuple[tuple[int, int], ...]
#: the name of a value written where the linter cannot see it (not a Python identifier)
_UNSEEN = "<unseen>"


@dataclass
class _Text:
    """A string built from Python literals, each character tied to its source position."""

    text: str = ""
    positions: list[tuple[int, int]] = field(default_factory=list)

    def add(self, chunk: str, line: int, col: int, exact: bool) -> None:
        """Append ``chunk``, written from (line, col): character by character when ``exact``,
        else every character on that one place.  Linear in the chunk's length (a 2 MB string
        is read in one pass, not one string copy per character)."""
        self.text += chunk
        if not exact:
            self.positions.extend([(line, col)] * len(chunk))
            return
        for row, piece in enumerate(chunk.split("\n")):
            start = col if row == 0 else 0
            # the piece's characters, then the newline ending it (placed after the piece)
            self.positions.extend((line + row, start + k) for k in range(len(piece) + 1))
        del self.positions[len(self.text):]

    def span(self, start: int, end: int) -> Span:
        if not self.positions:
            return Span(1, 0, 1, 0)
        start = min(max(start, 0), len(self.positions) - 1)
        last = min(max(end - 1, start), len(self.positions) - 1)
        (line, col), (eline, ecol) = self.positions[start], self.positions[last]
        return Span(line, col, eline, ecol + 1)


def _words(text: _Text) -> list[Word]:
    """Split like ``shlex.split`` (no shell), keeping each word's span."""
    words: list[Word] = []
    s = text.text
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        out: list[str] = []
        while i < n and not s[i].isspace():
            ch = s[i]
            if ch in "'\"":
                close = s.find(ch, i + 1)
                if close < 0:
                    close = n
                out.append(s[i + 1:close])
                i = close + 1
            elif ch == "\\" and i + 1 < n:
                out.append(s[i + 1])
                i += 2
            else:
                out.append(ch)
                i += 1
        words.append(_word("".join(out), text.span(start, i)))
    return words


def _word(text: str, span: Span) -> Word:
    if _PLACEHOLDER in text:
        if re.fullmatch(rf"{_PLACEHOLDER}\d+", text):
            return Word(None, span, splat=False)
        return Word(re.sub(rf"{_PLACEHOLDER}\d+", UNKNOWN_PART, text), span)
    return Word(text, span)


# ---------------------------------------------------------------------------
# the source: character columns, and string literal tokens read back
# ---------------------------------------------------------------------------

class _Source:
    """The text ast read: spans in characters, and the raw source of nodes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.bom = text.startswith("\ufeff")
        self._cols: dict[int, list[int] | None] = {}

    def col(self, line: int, byte_col: int) -> int:
        """ast's UTF-8 byte column on ``line`` as a character column."""
        table = self._cols.get(line, False)
        if table is False:
            raw = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            if self.bom and line == 1:
                raw = raw[1:]
            table = None
            if not raw.isascii():
                table = []
                for index, ch in enumerate(raw):
                    table.extend([index] * len(ch.encode("utf-8", "surrogatepass")))
                table.append(len(raw))
            self._cols[line] = table
        shift = 1 if self.bom and line == 1 else 0
        if table is None:
            return byte_col + shift
        return (table[byte_col] if byte_col < len(table) else table[-1] + byte_col - len(table) + 1) + shift

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        return Span(line, self.col(line, getattr(node, "col_offset", 0)),
                    end, self.col(end, getattr(node, "end_col_offset", None) or 0))

    def offset(self, line: int, col: int) -> int:
        """Character offset in the text of (1-based line, character column)."""
        return sum(len(x) + 1 for x in self.lines[:line - 1]) + col

    def segment(self, node: ast.AST) -> str:
        span = self.span(node)
        return self.text[self.offset(span.line, span.col):self.offset(span.end_line, span.end_col)]


_PREFIX = re.compile(r"[rRbBuUfF]{0,2}(?='|\")")


@dataclass
class _Literal:
    """One string literal token of the source: where its body starts, its prefix and quote."""

    line: int
    col: int  # of the body's first character
    prefix: str
    quote: str
    body: str  # as written, between the quotes


def _literals(source: _Source, node: ast.AST) -> list[_Literal] | None:
    """The string literal tokens a Constant or JoinedStr is written with (implicit
    concatenation gives several), read back from the source; None if they cannot be."""
    span = source.span(node)
    text = source.text
    pos = source.offset(span.line, span.col)
    end = source.offset(span.end_line, span.end_col)
    line, col = span.line, span.col
    out: list[_Literal] = []
    while pos < end:
        ch = text[pos]
        if ch in " \t\f":
            pos, col = pos + 1, col + 1
            continue
        if ch == "\n" or ch == "\r" and text[pos + 1:pos + 2] != "\n":
            pos, line, col = pos + 1, line + 1, 0
            continue
        if ch == "\r":
            pos, col = pos + 1, col + 1
            continue
        if ch == "\\" and text[pos + 1:pos + 2] in ("\n", "\r"):
            pos += 3 if text[pos + 1:pos + 3] == "\r\n" else 2
            line, col = line + 1, 0
            continue
        if ch == "#":
            newline = text.find("\n", pos, end)
            if newline < 0:
                return None
            col += newline - pos
            pos = newline
            continue
        if ch in "()":
            pos, col = pos + 1, col + 1
            continue
        m = _PREFIX.match(text, pos)
        if m is None:
            return None
        prefix = m.group(0)
        start = m.end()
        quote = text[start:start + 3] if text[start:start + 3] in ('"""', "'''") else text[start]
        body_start = start + len(quote)
        i = body_start
        while i < end:
            if text[i] == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                break
            i += 1
        if i >= end:
            return None
        body = text[body_start:i]
        body_col = col + len(prefix) + len(quote)
        out.append(_Literal(line, body_col, prefix, quote, body))
        newlines = body.count("\n")
        if newlines:
            line, col = line + newlines, len(body) - body.rfind("\n") - 1 + len(quote)
        else:
            col = body_col + len(body) + len(quote)
        pos = i + len(quote)
    return out


def _fstring_pieces(body: str) -> list[tuple[str, int, int]] | None:
    """An f-string body as ``(kind, start, end)`` pieces: "text" or "field" (a ``{...}``)."""
    pieces: list[tuple[str, int, int]] = []
    i, n, text_start = 0, len(body), 0
    while i < n:
        ch = body[i]
        if ch in "{}" and body[i + 1:i + 2] == ch:
            i += 2
            continue
        if ch == "}":
            return None
        if ch != "{":
            i += 1
            continue
        if i > text_start:
            pieces.append(("text", text_start, i))
        depth, j, quote = 0, i, ""
        while j < n:
            c = body[j]
            if quote:
                if c == "\\":
                    j += 2
                    continue
                if body.startswith(quote, j):
                    j += len(quote)
                    quote = ""
                    continue
            elif c in "'\"":
                quote = body[j:j + 3] if body[j:j + 3] in ('"""', "'''") else c
                j += len(quote)
                continue
            elif c in "{[(":
                depth += 1
            elif c in "}])":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:
            return None
        pieces.append(("field", i, j + 1))
        i = text_start = j + 1
    if text_start < n:
        pieces.append(("text", text_start, n))
    return pieces


def _advance(line: int, col: int, chunk: str) -> tuple[int, int]:
    newlines = chunk.count("\n")
    if newlines:
        return line + newlines, len(chunk) - chunk.rfind("\n") - 1
    return line, col + len(chunk)


# ---------------------------------------------------------------------------
# one pass over the tree: imports, assignments, environment writes, calls
# ---------------------------------------------------------------------------

@dataclass
class _Assignment:
    """One ``name = value``: where it is (its ``if`` branches, outermost first, as (id of the
    If, 0 for its body or 1 for its else); None inside a loop or a ``try``, where it may
    run any number of times) and its place in source order."""

    value: ast.expr
    path: _Path | None
    line: int


class _Scope:
    """Assignments of one function body (or the module): name -> values assigned, in order."""

    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.assigned: dict[str, list[_Assignment]] = {}

    def lookup(self, name: str) -> tuple[list[_Assignment], _Scope] | None:
        """The assignments of ``name`` in the nearest scope that assigns it."""
        scope: _Scope | None = self
        while scope is not None:
            values = scope.assigned.get(name)
            if values is not None:
                return values, scope
            scope = scope.parent
        return None


#: the name ``os.environ`` changes are recorded under (never a Python variable's name)
_ENVIRON = "os.environ"
#: methods that change a list or dict in place
_MUTATING_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
                               "update", "setdefault", "popitem"})
#: how many positional arguments the changes read one by one take (others are unknown changes)
_ARITIES = {"pop": (0, 1, 2), "setdefault": (1, 2), "insert": (2,), "append": (1,), "extend": (1,)}
#: calls that load variables into the environment from a file the linter does not read
_DOTENV_LOADERS = frozenset({"load_dotenv", "dotenv_values"})


@dataclass
class _Mutation:
    """One in-place change of a variable's value: ``d["k"] = v``, ``del d[k]``, ``cfg.update(...)``,
    ``cmd += [...]``, ``cmd[4:4] = [...]``, ``os.environ["X"] = v``, ``monkeypatch.setenv(...)``.

    ``op`` is what it does ("set", "del", "setdefault", "update", "extend", "append", "insert",
    "pop", "clear", or "unknown": a write whose value is not seen), ``args`` its operands
    (for "set" / "del" the subscript or key and the value; None where not written).  Where it is
    (``scope``, ``path``: None in a loop or a ``try``) and ``order`` say whether it runs before a
    launch that reads the variable."""

    op: str
    args: tuple[Any, ...]
    node: ast.AST
    scope: _Scope
    path: _Path | None
    order: int


class _Collector(ast.NodeVisitor):
    """One pass: imports, assignments per scope, os.environ writes, candidate calls.

    Source order is the order of the visit (``order``): where a use sits among the
    assignments of its name."""

    def __init__(self) -> None:
        self.order = 0
        #: the order of each call and dict literal recorded
        self.orders: dict[int, int] = {}
        self.engine_names: dict[str, str] = {}  # local name -> engine class
        self.module_aliases: dict[str, str] = {}  # local name -> module
        self.func_names: dict[str, str] = {}  # local name -> "subprocess.run" etc.
        self.imported: dict[str, str] = {}  # local name -> module it is imported from
        self.module_scope = _Scope(None)
        self.scope = self.module_scope
        self.branches: list[tuple[int, int]] = []
        self.loop_depth = 0
        #: every call, with its scope and the `if` branches it is in
        self.calls: list[tuple[ast.Call, _Scope, _Path]] = []
        #: in-place changes per variable (``os.environ`` under _ENVIRON), in source order
        self.mutations: dict[str, list[_Mutation]] = {}
        #: False while reading a function that holds no launch: only its changes are recorded
        self.collect_calls = True
        #: Ray Serve LLM configs written as dict literals (``{"engine_kwargs": {...}, ...}``)
        self.ray_dicts: list[tuple[ast.Dict, _Scope, _Path]] = []

    def _next(self) -> int:
        self.order += 1
        return self.order

    @property
    def path(self) -> _Path | None:
        return None if self.loop_depth else tuple(self.branches)

    def changes_only(self, node: ast.AST) -> None:
        """Visit a function that holds no launch: its changes of module variables and of the
        environment still count for the launches elsewhere."""
        self.collect_calls = False
        self.visit(node)
        self.collect_calls = True

    def mutate(self, name: str, op: str, node: ast.AST, *args: Any) -> None:
        self.mutations.setdefault(name, []).append(
            _Mutation(op, args, node, self.scope, self.path, self._next()))

    def changed_name(self, node: ast.AST) -> str | None:
        """The variable a subscript or method call changes: a plain name, or os.environ."""
        if isinstance(node, ast.Name):
            return node.id
        return _ENVIRON if _is_environ(node, self) else None

    # imports ------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.module_aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module
        if module is None or node.level:
            return
        for alias in node.names:
            name = alias.name
            if name == "*":
                continue
            local = alias.asname or name
            self.imported[local] = f"{module}.{name}"
            engine_class = engines.keyword_class(module, name)
            if engine_class is not None:
                self.engine_names[local] = engine_class
            elif module in ("subprocess", "os", "shlex", "asyncio"):
                self.func_names[local] = f"{module}.{name}"
            elif module in engines.programs() and name in ("engine", "entrypoints"):
                self.module_aliases[local] = f"{module}.{name}"  # `from vllm import engine`

    # scopes and branches --------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:  # run where the function is defined, before its body
            self.visit(decorator)
        self.scope = _Scope(self.scope)
        for field_name in ("args", "body", "returns"):
            value = getattr(node, field_name, None)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(child)
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _loop(self, node: ast.AST) -> None:
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_For = visit_AsyncFor = visit_While = visit_Try = _loop  # type: ignore[assignment]
    visit_TryStar = _loop

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        for branch, body in ((0, node.body), (1, node.orelse)):
            self.branches.append((id(node), branch))
            for stmt in body:
                self.visit(stmt)
            self.branches.pop()

    # assignments ----------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.scope.assigned.setdefault(target.id, []).append(
                    _Assignment(node.value, self.path, self._next()))
            else:
                self.subscript_stores(target, node, node.value)
        self.generic_visit(node)

    def subscript_stores(self, target: ast.expr, node: ast.AST, value: ast.expr | None) -> None:
        """``d[k] = v`` (``v`` None when unpacked from a tuple or computed: unknown)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.subscript_stores(element.value if isinstance(element, ast.Starred) else element, node, None)
        elif isinstance(target, ast.Subscript):
            name = self.changed_name(target.value)
            if name is not None:
                self.mutate(name, "set", node, target.slice, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and node.value is not None:
            self.scope.assigned.setdefault(node.target.id, []).append(
                _Assignment(node.value, self.path, self._next()))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        name = self.changed_name(node.target)
        if name is not None:
            op = {ast.Add: "extend", ast.BitOr: "update"}.get(type(node.op), "unknown")
            self.mutate(name, op, node, *((node.value, []) if op == "update" else (node.value,)))
        else:
            self.subscript_stores(node.target, node, None)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                name = self.changed_name(target.value)
                if name is not None:
                    self.mutate(name, "del", node, target.slice)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        if self.collect_calls and any(_literal_str(key) == "engine_kwargs" for key in node.keys if key is not None):
            self.orders[id(node)] = self._next()
            self.ray_dicts.append((node, self.scope, tuple(self.branches)))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.method_change(node)
        self.environment_change(node)
        if self.collect_calls:
            self.orders[id(node)] = self._next()
            self.calls.append((node, self.scope, tuple(self.branches)))
        self.generic_visit(node)

    def method_change(self, node: ast.Call) -> None:
        """``cmd.extend(x)``, ``cfg.update(...)``, ``d.pop(k)``, ``os.environ.setdefault(k, v)``..."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _MUTATING_METHODS:
            return
        name = self.changed_name(func.value)
        if name is None:
            return
        args = node.args
        if any(isinstance(a, ast.Starred) for a in args):
            self.mutate(name, "unknown", node, None)
        elif func.attr == "update":
            self.mutate(name, "update", node, args[0] if args else None, node.keywords)
        elif func.attr in _ARITIES and len(args) in _ARITIES[func.attr] and not node.keywords:
            self.mutate(name, func.attr, node, *args)
        else:
            self.mutate(name, "unknown" if func.attr != "clear" else "clear", node, None)

    def environment_change(self, node: ast.Call) -> None:
        """Writes of the environment that are not ``os.environ[...]``: ``os.putenv``,
        ``monkeypatch.setenv``, ``mock.patch.dict(os.environ, {...})``, ``load_dotenv()``.
        Their values are not known where the launch runs (a test fixture, a context manager,
        a file the linter does not read)."""
        func = node.func
        dotted = _dotted(func) or ""
        head, _, rest = dotted.partition(".")
        last = dotted.rpartition(".")[2] or (func.attr if isinstance(func, ast.Attribute) else "")
        module = self.module_aliases.get(head)
        if (module == "os" and rest in ("putenv", "unsetenv")) \
                or self.func_names.get(dotted) in ("os.putenv", "os.unsetenv") \
                or isinstance(func, ast.Attribute) and func.attr in ("setenv", "delenv"):
            self.mutate(_ENVIRON, "unknown", node, node.args[0] if node.args else None)
        elif last in _DOTENV_LOADERS:
            self.mutate(_ENVIRON, "unknown", node, None)
        elif isinstance(func, ast.Attribute) and func.attr == "dict" \
                and (_dotted(func.value) or "").rpartition(".")[2] == "patch" and node.args \
                and (_is_environ(node.args[0], self) or _literal_str(node.args[0]) == "os.environ"):
            self.patched_environment(node)

    def patched_environment(self, node: ast.Call) -> None:
        """``patch.dict(os.environ, {...}, clear=..., **values)``: each key it names is unknown
        at the launch (patched for a block or a test); any key it cannot name, all of them."""
        values = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "values"), None)
        keys: list[ast.expr | None] = [k.value if k.arg is None else ast.Constant(k.arg)
                                       for k in node.keywords if k.arg not in ("values", "clear")]
        if any(k.arg == "clear" for k in node.keywords) or len(node.args) > 2:
            keys.append(None)
        if isinstance(values, ast.Dict):
            keys += values.keys
        elif values is not None:
            keys.append(None)
        for key in keys:
            self.mutate(_ENVIRON, "unknown", node, key if _literal_str(key) is not None else None)


def _dotted(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _is_environ(node: ast.AST, collector: _Collector) -> bool:
    dotted = _dotted(node)
    if dotted is None:
        return False
    head, _, rest = dotted.partition(".")
    module = collector.module_aliases.get(head)
    return (module == "os" and rest == "environ") or collector.func_names.get(dotted) == "os.environ"


def _literal_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


# ---------------------------------------------------------------------------
# from the collected calls to launches
# ---------------------------------------------------------------------------

class _Builder:
    """Turns the collected calls into Launches."""

    def __init__(self, source: _Source, collector: _Collector, base_dir: str | None) -> None:
        # reading a launch once per combination of branches: the branch taken at each `if` /
        # `a if c else b` met (pins), those met without a pin (seen)
        self.pins: dict[int, int] = {}
        self.seen: dict[int, int] = {}
        self.choices_unknown = False
        self.groups = itertools.count(1)
        #: values worked out in this reading (forgotten when the pins change)
        self.memo: dict[tuple[Any, ...], Any] = {}
        #: parts not followed because a bound was hit: (span, why)
        self.skipped: list[tuple[Span, str]] = []
        self.source = source
        self.c = collector
        self.base_dir = base_dir
        self.order = 0  # where the launch being built is, in source order

    def span(self, node: ast.AST) -> Span:
        """Where ``node`` is; for a keyword (``use_replayssm=True``) where its name is."""
        span = self.source.span(node)
        if isinstance(node, ast.keyword) and node.arg is not None:
            return Span(span.line, span.col, span.line, span.col + len(node.arg))
        return span

    def code(self, node: ast.AST) -> str:
        """The source text of ``node`` (one line), for messages about what we cannot see."""
        raw = self.source.segment(node) if hasattr(node, "lineno") else ast.unparse(node)
        text = " ".join(raw.split())
        return text if len(text) <= 40 else text[:37] + "..."

    # values ---------------------------------------------------------------
    def resolve(self, node: ast.expr, scope: _Scope, depth: int = 0) -> ast.expr | None:
        """Follow a name to the expression assigned to it (None if not static), and ``a if c
        else b`` to the branch this reading takes."""
        while depth < 10:
            if isinstance(node, ast.IfExp):
                taken = self.branch(id(node))
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

    def assignment(self, name: ast.Name, scope: _Scope) -> ast.expr | None:
        """The value ``name`` is given where it is used, in this reading (see :meth:`binding`)."""
        found = self.binding(name, scope)
        return found[0].value if found is not None else None

    def binding(self, name: ast.Name, scope: _Scope) -> tuple[_Assignment, _Scope] | None:
        """The assignment ``name`` has where it is used, in this reading, and the scope it is
        in: the last assignment before the use on the ``if`` branches the reading takes (any
        point of an enclosing scope, whose code has run when a function is called); None when
        it is not one expression (assigned in a loop or a ``try``, or not at all)."""
        found = scope.lookup(name.id)
        if found is None:
            return None
        assignments, owner = found
        if owner is scope and self.order:
            assignments = [a for a in assignments if a.line < self.order]
        chosen = None
        for a in assignments:
            if a.path is None:
                return None
            on = self.on_path(a.path)
            if on is None:
                return None
            if on:
                chosen = a
        return (chosen, owner) if chosen is not None else None

    # in-place changes -----------------------------------------------------
    def changes(self, name: str, scope: _Scope, owner: _Scope, start: int) -> list[tuple[_Mutation, bool]]:
        """The in-place changes of ``name`` (given its value in ``owner`` at ``start``, in source
        order) that count for a launch in ``scope``, each with whether it is known to have run
        as written: straight-line changes before the launch, in order, on the branches this
        reading takes (in a loop: unknown); then the changes that may or may not have run (in
        another function, later in an enclosing scope), which are read like an ``if``: once
        run, once not (unknown past the bound on readings)."""
        before: list[tuple[_Mutation, bool]] = []
        elsewhere: list[tuple[_Mutation, bool]] = []
        for change in self.c.mutations.get(name, ()):
            when = self.when(change, name, scope, owner, start)
            if when == "before":
                on = self.on_path(change.path) if change.path is not None else None
                if on is not False:
                    before.append((change, on is True))
            elif when == "elsewhere":
                ran = self.branch(id(change))
                if ran != 1:
                    elsewhere.append((change, ran == 0))
        return before + elsewhere

    def when(self, change: _Mutation, name: str, scope: _Scope, owner: _Scope, start: int) -> str:
        """"before" the launch (in its scope, or in the enclosing scope that gave the value),
        "elsewhere" (may run before it, or not), or "never" (before the value was given, after
        a module-level launch, or another function's own variable of that name)."""
        if change.scope is scope:
            if self.order and change.order > self.order or owner is scope and change.order < start:
                return "never"
            return "before"
        if change.scope is owner:  # the module (or function) around the launch's function
            if change.order < start:
                return "never"
            return "before" if change.order < self.order else "elsewhere"
        if name in change.scope.assigned:
            return "never"
        if scope is self.c.module_scope and change.order > self.order:
            return "never"  # a function defined after a module-level launch runs after it
        return "elsewhere"

    def unseen_value(self, change: _Mutation) -> ast.expr:
        """An expression standing for a value the linter cannot see, placed at ``change``."""
        return ast.copy_location(ast.Name(id=_UNSEEN, ctx=ast.Load()), change.node)

    def changed_dict(self, base: tuple[dict[str, tuple[ast.AST, ast.expr]], bool],
                     changes: list[tuple[_Mutation, bool]], scope: _Scope
                     ) -> tuple[dict[str, tuple[ast.AST, ast.expr]], bool]:
        """A dict's entries after ``d[k] = v``, ``del d[k]``, ``d.pop(k)``, ``d.update(...)``,
        ``d.setdefault(k, v)``: a change that is not known to run makes what it touches
        unknown; one that cannot be read (a computed key, ``update(other)``) makes the dict
        open-ended."""
        entries, open_ended = dict(base[0]), base[1]
        for change, known in changes:
            op, args = change.op, change.args
            if op == "update":
                added = self.update_entries(args, scope)
                if added is None:
                    open_ended = True
                    continue
                open_ended = open_ended or added[1]
                for key, (key_node, value) in added[0].items():
                    entries[key] = (key_node, value if known else self.unseen_value(change))
            elif op == "clear" and known:
                entries, open_ended = {}, False
            elif op in ("set", "setdefault", "del", "pop") and args and _literal_str(args[0]) is not None:
                key = _literal_str(args[0]) or ""
                value = args[1] if len(args) > 1 else None
                if not known or op == "set" and value is None:
                    entries[key] = (args[0], self.unseen_value(change))
                elif op == "set" or op == "setdefault" and key not in entries:
                    entries[key] = (args[0], value if value is not None else self.unseen_value(change))
                elif op in ("del", "pop"):
                    entries.pop(key, None)
            else:
                open_ended = True
        return entries, open_ended

    def update_entries(self, args: tuple[Any, ...], scope: _Scope
                       ) -> tuple[dict[str, tuple[ast.AST, ast.expr]], bool] | None:
        """What ``d.update(mapping, **keywords)`` (or ``d |= mapping``) writes; None if unseen."""
        mapping, keywords = args[0], args[1] if len(args) > 1 else []
        entries: dict[str, tuple[ast.AST, ast.expr]] = {}
        open_ended = False
        for source in ([mapping] if mapping is not None else []) + [k.value for k in keywords if k.arg is None]:
            inner = self.dict_entries(source, scope)
            if inner is None:
                return None
            entries.update(inner[0])
            open_ended = open_ended or inner[1]
        for keyword in keywords:
            if keyword.arg is not None:
                entries[keyword.arg] = (keyword, keyword.value)
        return entries, open_ended

    def value(self, node: ast.expr, scope: _Scope) -> Any:
        """A Python value for a literal expression; UNKNOWN for anything dynamic."""
        target = self.resolve(node, scope)
        if target is None:
            return UNKNOWN
        node = target
        if isinstance(node, ast.Constant):
            return node.value if not isinstance(node.value, bytes) else UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)):
            return -node.operand.value
        if isinstance(node, ast.Attribute) and node.attr.isupper():
            return node.attr.lower()  # MambaBackendEnum.FLASHINFER
        if isinstance(node, (ast.List, ast.Tuple)):
            return [UNKNOWN if isinstance(e, ast.Starred) else self.value(e, scope) for e in node.elts]
        dict_entries = self.dict_entries(node, scope)
        if dict_entries is not None:
            entries, open_ended = dict_entries
            result: dict[str, Any] = {k: self.value(v, scope) for k, (_, v) in entries.items()}
            return UNKNOWN if open_ended else result
        default = self.environment_default(node)
        if default is not None:
            return self.value(default, scope)
        if isinstance(node, ast.Call) and _dotted(node.func) in ("str", "int", "float") \
                and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            inner = self.value(node.args[0], scope)  # str(PORT), int(os.environ.get("TP", "2"))
            if isinstance(inner, (str, int, float)) and not isinstance(inner, bool):
                try:
                    return {"str": str, "int": int, "float": float}[_dotted(node.func) or ""](inner)
                except ValueError:
                    return UNKNOWN
        return UNKNOWN

    def is_config_class(self, func: ast.expr) -> bool:
        """``KVTransferConfig``, ``SpeculativeConfig``, ``ModelLoadingConfig``...: a config object
        whose keywords are the fields of the JSON/dict value vLLM (or Ray) takes in its place."""
        name = func.id if isinstance(func, ast.Name) else (func.attr if isinstance(func, ast.Attribute) else "")
        if not name.endswith("Config") or name == "LLMConfig":
            return False
        origin = self.c.imported.get(name) if isinstance(func, ast.Name) else _dotted(func)
        return bool(origin) and origin.split(".")[0] in ("vllm", "ray")  # type: ignore[union-attr]

    def environment_default(self, node: ast.expr) -> ast.expr | None:
        """The default of ``os.environ.get("X", default)`` / ``os.getenv("X", default)``.

        As with a shell ``${X:-default}``, the default is the script's own choice,
        taken when the file does not set the variable itself.
        """
        if not isinstance(node, ast.Call) or len(node.args) != 2 or node.keywords:
            return None
        dotted = _dotted(node.func) or ""
        head, _, rest = dotted.partition(".")
        module = self.c.module_aliases.get(head)
        is_get = (module == "os" and rest in ("environ.get", "getenv")) or \
            self.c.func_names.get(dotted) == "os.getenv"
        key = _literal_str(node.args[0])
        if not is_get or key is None or self.environment_written(key):
            return None
        return node.args[1]

    def environment_written(self, key: str) -> bool:
        """Whether the file writes ``key`` (or variables it cannot name) into the environment."""
        for change in self.c.mutations.get(_ENVIRON, ()):
            if change.op == "update":
                mapping, keywords = change.args
                if not isinstance(mapping, (ast.Dict, type(None))) or any(k.arg in (None, key) for k in keywords) \
                        or mapping is not None and any(_literal_str(k) in (None, key) for k in mapping.keys):
                    return True
            elif not change.args or _literal_str(change.args[0]) in (None, key):
                return True
        return False

    def dict_entries(self, node: ast.expr, scope: _Scope
                     ) -> tuple[dict[str, tuple[ast.AST, ast.expr]], bool] | None:
        """key -> (key node, value) of a dict literal or ``dict(...)`` call, and open-endedness.

        Remembered per node within a reading: ``d2 = {**d1, **d1}`` repeated would otherwise
        cost time exponential in the number of lines."""
        key = (id(node), id(scope))
        if key in self.memo:
            return self.memo[key]  # type: ignore[no-any-return]
        self.memo[key] = None  # a dict that splats itself is not one we can read
        found = self._dict_entries(node, scope)
        self.memo[key] = found
        return found

    def _dict_entries(self, node: ast.expr, scope: _Scope
                      ) -> tuple[dict[str, tuple[ast.AST, ast.expr]], bool] | None:
        if isinstance(node, ast.Name):  # the value it was given, changed in place since
            bound = self.binding(node, scope)
            base = self.dict_entries(bound[0].value, scope) if bound is not None else None
            if bound is None or base is None:
                return None
            return self.changed_dict(base, self.changes(node.id, scope, bound[1], bound[0].line), scope)
        target = self.resolve(node, scope)
        if isinstance(target, ast.Dict):
            entries: dict[str, tuple[ast.AST, ast.expr]] = {}
            open_ended = False
            for key_node, value in zip(target.keys, target.values):
                if key_node is None:  # {**other}
                    inner = self.dict_entries(value, scope)
                    if inner is None:
                        open_ended = open_ended or not self.is_environ(value)
                    else:
                        entries.update(inner[0])
                        open_ended = open_ended or inner[1]
                    continue
                key = _literal_str(key_node)
                if key is None:
                    open_ended = True
                else:
                    entries[key] = (key_node, value)
            return entries, open_ended
        if isinstance(target, ast.Call) and (_dotted(target.func) == "dict" or self.is_config_class(target.func)):
            entries, open_ended = {}, bool(target.args)
            for keyword in target.keywords:
                if keyword.arg is not None:
                    entries[keyword.arg] = (keyword, keyword.value)
                    continue
                inner = self.dict_entries(keyword.value, scope)
                if inner is None:
                    open_ended = True
                else:
                    entries.update(inner[0])
                    open_ended = open_ended or inner[1]
            return entries, open_ended
        return None

    def is_environ(self, node: ast.expr) -> bool:
        return _is_environ(node, self.c)

    # strings -> text ------------------------------------------------------
    def text_of(self, node: ast.expr, scope: _Scope, holes: list[int]) -> _Text | None:
        """The characters of a (possibly concatenated, possibly f-) string, with positions
        (remembered per node within a reading; None past _MAX_TEXT characters)."""
        key = ("text", id(node), id(scope))
        if key in self.memo:
            return self.memo[key]  # type: ignore[no-any-return]
        self.memo[key] = None
        found = None
        too_long = self.written_too_long(node, scope)
        if not too_long:
            found = self._text_of(node, scope, holes)
            too_long = found is not None and len(found.text) > _MAX_TEXT
        if too_long:
            self.not_followed(node, f"a command string longer than {_MAX_TEXT} characters")
            found = None
        self.memo[key] = found
        return found

    def written_too_long(self, node: ast.expr, scope: _Scope) -> bool:
        """A string literal (or f-string) written longer than _MAX_TEXT characters: the bound
        is applied before its characters are placed, not after."""
        target = self.resolve(node, scope)
        if isinstance(target, ast.Constant):
            return isinstance(target.value, str) and len(target.value) > _MAX_TEXT
        if isinstance(target, ast.JoinedStr) and hasattr(target, "lineno"):
            span = self.source.span(target)
            return self.source.offset(span.end_line, span.end_col) - self.source.offset(span.line, span.col) > _MAX_TEXT
        return False

    def _text_of(self, node: ast.expr, scope: _Scope, holes: list[int]) -> _Text | None:
        if isinstance(node, ast.Name):  # the value it was given, then `+=` since
            bound = self.binding(node, scope)
            text = self.text_of(bound[0].value, scope, holes) if bound is not None else None
            if bound is None or text is None:
                return None
            return self.changed_text(text, self.changes(node.id, scope, bound[1], bound[0].line), scope, holes)
        target = self.resolve(node, scope)
        if target is None:
            return None
        if isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add):
            left = self.text_of(target.left, scope, holes)
            right = self.text_of(target.right, scope, holes)
            if left is None or right is None:
                return None
            return _Text(left.text + right.text, left.positions + right.positions)
        if isinstance(target, ast.Call) and len(target.args) == 1 and not target.keywords and (
                isinstance(target.func, ast.Attribute) and target.func.attr == "join"
                and _literal_str(target.func.value) == " " or self.process_name(target.func) == "shlex.join"):
            return self.joined_words(target.args[0], scope, holes)  # " ".join(argv), shlex.join(argv)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            return self.literal_text(target)
        if isinstance(target, ast.JoinedStr):
            return self.fstring_text(target, scope, holes)
        return None

    def changed_text(self, text: _Text, changes: list[tuple[_Mutation, bool]], scope: _Scope,
                     holes: list[int]) -> _Text:
        """A command string after ``cmd += " --flag"``; what a change adds that is not known
        (or not known to run) is an unseen part of the command."""
        for change, known in changes:
            added = self.text_of(change.args[0], scope, holes) if known and change.op == "extend" else None
            if added is None:
                span = self.span(change.node)
                holes.append(len(holes))
                added = _Text()
                added.add(f" {_PLACEHOLDER}{len(holes)}", span.line, span.col, exact=False)
            text = _Text(text.text + added.text, text.positions + added.positions)
        return text

    def literal_text(self, node: ast.Constant) -> _Text:
        """A string constant, each character where it is written (a character written with an
        escape, or in a literal that cannot be read back, stands on its literal)."""
        out = _Text()
        literals = _literals(self.source, node) if hasattr(node, "lineno") else None
        value = node.value
        if literals is None or any("f" in lit.prefix.lower() for lit in literals):
            span = self.span(node)
            out.add(value, span.line, span.col, exact=False)
            return out
        for lit in literals:
            try:
                part = ast.literal_eval(lit.prefix + lit.quote + lit.body + lit.quote)
            except (ValueError, SyntaxError):
                part = lit.body
            out.add(part, lit.line, lit.col, exact=part == lit.body)
        if out.text != value:  # not what Python read: place the whole value on the node
            out = _Text()
            span = self.span(node)
            out.add(value, span.line, span.col, exact=False)
        return out

    def fstring_text(self, node: ast.JoinedStr, scope: _Scope, holes: list[int]) -> _Text | None:
        """An f-string (or a concatenation with one): literal parts placed where they are
        written, a ``{field}`` is its value when it is a same-file constant, else a hole."""
        literals = _literals(self.source, node) if hasattr(node, "lineno") else None
        fields = iter([v for v in node.values if isinstance(v, ast.FormattedValue)])
        out = _Text()
        if literals is None:
            return None
        for lit in literals:
            if "f" not in lit.prefix.lower():
                try:
                    part = ast.literal_eval(lit.prefix + lit.quote + lit.body + lit.quote)
                except (ValueError, SyntaxError):
                    return None
                out.add(part, lit.line, lit.col, exact=part == lit.body)
                continue
            pieces = _fstring_pieces(lit.body)
            if pieces is None:
                return None
            for kind, start, end in pieces:
                line, col = _advance(lit.line, lit.col, lit.body[:start])
                raw = lit.body[start:end]
                if kind == "text":
                    try:
                        value = ast.literal_eval(lit.prefix.lower().replace("f", "") + '"""'
                                                 + raw.replace('"', '\\"') + '"""') if "\\" in raw else raw
                    except (ValueError, SyntaxError):
                        value = raw
                    value = value.replace("{{", "{").replace("}}", "}")
                    out.add(value, line, col, exact=value == raw)
                    continue
                piece = next(fields, None)
                if piece is None:
                    return None
                known = self.value(piece.value, scope) \
                    if piece.format_spec is None and piece.conversion == -1 else UNKNOWN
                if isinstance(known, str):  # f"{MODEL}" with MODEL a same-file constant
                    out.add(known, line, col, exact=False)
                    continue
                holes.append(len(holes))
                out.add(f"{_PLACEHOLDER}{len(holes)}", line, col, exact=False)
        return out

    def joined_words(self, node: ast.expr, scope: _Scope, holes: list[int]) -> _Text | None:
        """``" ".join(argv)`` as a command string; words keep their own positions."""
        words = self.sequence_words(node, scope, set())
        if not words or any(w.splat for w in words):
            return None
        out = _Text()
        for index, word in enumerate(words):
            if index:
                out.add(" ", word.span.line, word.span.col, exact=False)
            if word.text is None:
                holes.append(len(holes))
                out.add(f"{_PLACEHOLDER}{len(holes)}", word.span.line, word.span.col, exact=False)
            else:
                quoted = shlex.quote(word.text.replace(UNKNOWN_PART, _PLACEHOLDER))
                out.add(quoted, word.span.line, word.span.col, exact=False)
        return out

    # launches -------------------------------------------------------------
    def engine_class(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name):
            return self.c.engine_names.get(func.id)
        dotted = _dotted(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.c.module_aliases.get(head)
        if module is None:
            return None
        full = f"{module}.{rest}" if rest else module
        mod, _, cls = full.rpartition(".")
        return engines.keyword_class(mod, cls)

    def process_name(self, func: ast.expr) -> str | None:
        """``subprocess.run`` / ``os.system`` / ``shlex.split`` ... through aliases."""
        if isinstance(func, ast.Name):
            return self.c.func_names.get(func.id)
        dotted = _dotted(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.c.module_aliases.get(head)
        if module in ("subprocess", "os", "shlex", "asyncio") and rest and "." not in rest:
            return f"{module}.{rest}"
        return None

    def launches(self) -> Iterator[Launch]:
        consumed: set[int] = set()
        for node, scope, path in self.c.ray_dicts:
            self.order = self.c.orders[id(node)]
            yield from self.written(node, self.readings(path, lambda: self.ray_dict_launches(node, scope)))
        for call, scope, path in self.c.calls:
            if id(call) not in consumed:
                self.order = self.c.orders[id(call)]
                found = self.readings(path, lambda: list(self.call_launches(call, scope, consumed)))
                yield from self.written(call, found)

    def written(self, node: ast.AST, launches: list[Launch]) -> list[Launch]:
        """The launches of ``node``, which covers them: a ``# noqa`` on any line of the call applies."""
        for launch in launches:
            launch.written = self.source.span(node)
        return launches

    def readings(self, path: _Path, read: Callable[[], list[Launch]]) -> list[Launch]:
        """The launches of one call, read once per combination of the ``if`` branches and
        ``a if c else b`` its values come from (the branches the call itself is in are
        taken); launches at the same place of each reading form one group."""
        base = dict(path)
        self.pins, self.seen, self.choices_unknown, self.memo = dict(base), {}, False, {}
        first = read()
        new = [key for key in self.seen if key not in base]
        if not new:
            return first
        if 2 ** len(new) > _MAX_COMBINATIONS:
            self.pins, self.seen, self.choices_unknown, self.memo = dict(base), {}, True, {}
            return read()
        runs = [first]
        for combo in itertools.islice(itertools.product((0, 1), repeat=len(new)), 1, None):
            self.pins, self.memo = {**base, **dict(zip(new, combo))}, {}
            runs.append(read())
        group = next(self.groups)
        return [replace(launch, group=group * 1000 + k) for found in runs for k, launch in enumerate(found)]

    def not_followed(self, node: ast.AST, why: str) -> None:
        """A bound was hit: that part is judged unknown, and said so."""
        entry = (self.span(node), why)
        if entry not in self.skipped:
            self.skipped.append(entry)

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

    def on_path(self, path: _Path) -> bool | None:
        for key, taken in path:
            chosen = self.branch(key)
            if chosen is None:
                return None
            if chosen != taken:
                return False
        return True

    def ray_dict_launches(self, node: ast.Dict, scope: _Scope) -> list[Launch]:
        entries = self.dict_entries(node, scope)
        return [self.ray_launch(node, entries, scope, "Ray Serve LLM config")] if entries is not None else []

    def call_launches(self, call: ast.Call, scope: _Scope, consumed: set[int]) -> Iterator[Launch]:
        engine = self.engine_class(call.func)
        if engine is not None:
            launch = self.engine_launch(call, engine, scope)
            if launch is not None:  # `sgl.Engine(server_args=...)` is judged at the ServerArgs
                yield launch
            return
        if self.is_ray_llm_config(call):
            entries = self.dict_entries(ast.Call(func=ast.Name(id="dict", ctx=ast.Load()), args=[],
                                                 keywords=call.keywords), scope)
            if entries is not None:
                yield self.ray_launch(call.func, entries, scope, "LLMConfig(...)")
            return
        name = self.process_name(call.func)
        if name is None:
            return
        for command in self.commands_for(call, name, scope, consumed):
            launch = launch_from_command(command)
            if launch is not None:
                yield launch

    def environment(self, scope: _Scope) -> tuple[dict[str, Word], bool]:
        """The environment this file gives a launch in ``scope`` (its ``os.environ`` writes
        before the launch, see :meth:`changes`), and whether more may be set than it shows
        (``load_dotenv()``, ``os.environ.update(other)``).  A variable written where the launch
        may or may not see it (another function, a test's ``monkeypatch.setenv``, a
        ``patch.dict`` block) is there with an unknown value."""
        env: dict[str, Word] = {}
        open_ended = False
        for change, known in self.changes(_ENVIRON, scope, self.c.module_scope, 0):
            entries = self.changed_dict(({}, False), [(change, known)], change.scope) \
                if change.op not in ("clear", "unknown") else None
            if change.op == "clear" and known:
                env, open_ended = {}, False
            elif entries is None or entries[1]:  # unseen keys: every variable may be set
                key = _literal_str(change.args[0]) if change.args else None
                if key is not None:
                    env[key] = Word(None, self.span(change.node))
                else:
                    env = {k: Word(None, w.span) for k, w in env.items()}
                    open_ended = True
            elif change.op in ("del", "pop") and known:
                env.pop(_literal_str(change.args[0]) or "", None)
            else:
                for key, (_, value_node) in entries[0].items():
                    if change.op == "setdefault" and (key in env or open_ended):
                        if key not in env:  # the file read into the environment may set it
                            env[key] = Word(None, self.span(change.node))
                        continue
                    value = self.value(value_node, change.scope)
                    env[key] = Word(value if isinstance(value, str) else None, self.span(value_node))
        return env, open_ended

    def engine_launch(self, call: ast.Call, engine: str, scope: _Scope) -> Launch | None:
        keywords: dict[str, Setting] = {}
        model: Setting | None = None
        unseen: list[str] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                unseen.append("*" + self.code(arg.value))
            elif index == 0:
                model = Setting("model", self.value(arg, scope), self.span(arg), "", self.span(arg))
        for keyword in call.keywords:
            if keyword.arg is None:  # **cfg
                entries = self.dict_entries(keyword.value, scope)
                if entries is None:
                    unseen.append("**" + self.code(keyword.value))
                    continue
                items, more = entries
                if more:
                    unseen.append("**" + self.code(keyword.value))
                for key, (key_node, value_node) in items.items():
                    keywords[key] = Setting(key, self.value(value_node, scope), self.span(key_node),
                                            key, self.span(value_node))
            else:
                key = keyword.arg
                keywords[key] = Setting(key, self.value(keyword.value, scope), self.span(keyword),
                                        f"{key}=", self.span(keyword.value))
        env, env_open = self.environment_settings(scope)
        name, _, cls = engine.partition(":")
        return engines.get(name).launch_from_keywords(
            cls, label=f"{cls}(...)", anchor=self.span(call.func), model=model, keywords=keywords, unseen=unseen,
            env=env, env_open_ended=env_open, base_dir=self.base_dir)

    def is_ray_llm_config(self, call: ast.Call) -> bool:
        """``LLMConfig(...)`` of Ray Serve LLM, or ``dict(engine_kwargs=..., ...)``."""
        func = call.func
        if isinstance(func, ast.Name) and func.id == "dict":
            return any(k.arg == "engine_kwargs" for k in call.keywords)
        dotted = _dotted(func) or ""
        head, _, rest = dotted.partition(".")
        base = self.c.imported.get(head) or self.c.module_aliases.get(head) or head
        origin = f"{base}.{rest}" if rest else base
        return origin.startswith("ray.") and origin.endswith(".LLMConfig")

    def ray_launch(self, at: ast.AST, entries: tuple[dict[str, tuple[ast.AST, ast.expr]], bool],
                   scope: _Scope, label: str) -> Launch:
        """A Ray Serve LLM config: the model is ``model_loading_config.model_source`` (else its
        ``model_id``), the engine options are ``engine_kwargs`` (vLLM's EngineArgs fields)."""
        items, _ = entries
        model: Setting | None = None
        loading = items.get("model_loading_config")
        if loading is not None:
            source = self.dict_entries(loading[1], scope)
            if source is None:
                model = Setting("model", UNKNOWN, self.span(loading[1]), "", self.span(loading[1]))
            else:
                found = source[0].get("model_source") or source[0].get("model_id")
                if found is not None:
                    model = Setting("model", self.value(found[1], scope), self.span(found[1]), "",
                                    self.span(found[1]))
        keywords: dict[str, Setting] = {}
        unseen: list[str] = []
        engine_kwargs = items.get("engine_kwargs")
        if engine_kwargs is not None:
            inner = self.dict_entries(engine_kwargs[1], scope)
            if inner is None or inner[1]:
                unseen.append(f"engine_kwargs={self.code(engine_kwargs[1])}")
            for key, (key_node, value_node) in (inner[0] if inner is not None else {}).items():
                keywords[key] = Setting(key, self.value(value_node, scope), self.span(key_node), key,
                                        self.span(value_node))
        keywords.pop("model", None)  # Ray serves model_loading_config's model
        if model is None:
            model = Setting("model", UNKNOWN, self.span(at), "")
        env, env_open = self.environment_settings(scope)
        name, cls = RAY_SERVE_LLM
        return engines.get(name).launch_from_keywords(
            cls, label=label, anchor=self.span(at), model=model, keywords=keywords, unseen=unseen, env=env,
            env_open_ended=env_open, base_dir=self.base_dir)

    def environment_settings(self, scope: _Scope) -> tuple[dict[str, Setting], bool]:
        """:meth:`environment` as the settings of an in-process launch (``LLM(...)``)."""
        words, open_ended = self.environment(scope)
        return {k: Setting(k, w.text if w.text is not None else UNKNOWN, w.span, k, w.span)
                for k, w in words.items()}, open_ended

    def keyword(self, call: ast.Call, name: str) -> ast.expr | None:
        for keyword in call.keywords:
            if keyword.arg == name:
                return keyword.value
        return None

    def commands_for(self, call: ast.Call, name: str, scope: _Scope, consumed: set[int]) -> list[Command]:
        module, _, func = name.partition(".")
        if not call.args or isinstance(call.args[0], ast.Starred) and not (module == "asyncio"
                                                                           and func == ASYNC_EXEC):
            return []
        first = call.args[0]
        env, env_open = self.call_env(call, scope)
        if name == "os.system" or name == "os.popen" or func == ASYNC_SHELL:
            return self.shell_commands(first, scope, env, env_open)
        if name == "shlex.split":
            words = self.split_words(first, scope)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module == "asyncio" and func == ASYNC_EXEC:
            words = self.element_words([(a.value if isinstance(a, ast.Starred) else a, isinstance(a, ast.Starred))
                                        for a in call.args], scope, consumed)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module != "subprocess" or func not in SUBPROCESS_FUNCS:
            return []
        shell = self.keyword(call, "shell")
        if shell is not None and self.value(shell, scope) is True:
            return self.shell_commands(first, scope, env, env_open)
        words = self.sequence_words(first, scope, consumed)
        if not words:
            return []
        if len(words) >= 3 and words[0].text in _SHELLS and words[1].text == "-c" \
                and isinstance(first, (ast.List, ast.Tuple)) and len(first.elts) >= 3:
            script = self.text_of(first.elts[2], scope, [])
            if script is not None:
                return self.commands_from_text(script, env, env_open)
        return [Command(words, env, env_open, base_dir=self.base_dir)]

    def call_env(self, call: ast.Call, scope: _Scope) -> tuple[dict[str, Word], bool]:
        """``env=`` of a subprocess call, over the file's ``os.environ`` writes."""
        inherited, inherited_open = self.environment(scope)
        env_node = self.keyword(call, "env")
        if env_node is None:
            return inherited, inherited_open
        entries = self.dict_entries(env_node, scope)
        if entries is None:
            return ({}, True) if not self.is_environ(env_node) else (inherited, inherited_open)
        items, open_ended = entries
        env = {}
        if self._spreads_environ(env_node, scope):
            env, open_ended = dict(inherited), open_ended or inherited_open
        for key, (_, value_node) in items.items():
            value = self.value(value_node, scope)
            env[key] = Word(value if isinstance(value, str) else None, self.span(value_node))
        return env, open_ended

    def _spreads_environ(self, node: ast.expr, scope: _Scope) -> bool:
        target = self.resolve(node, scope)
        if isinstance(target, ast.Dict):
            return any(key is None and self.is_environ(value) for key, value in zip(target.keys, target.values))
        if isinstance(target, ast.Call):
            return any(k.arg is None and self.is_environ(k.value) for k in target.keywords)
        return False

    def split_words(self, node: ast.expr, scope: _Scope) -> list[Word]:
        text = self.text_of(node, scope, [])
        return _words(text) if text is not None else []

    def sequence_words(self, node: ast.expr, scope: _Scope, consumed: set[int]) -> list[Word]:
        """The words of an argv list (remembered per node within a reading; past _MAX_WORDS
        words the list is not followed)."""
        key = ("words", id(node), id(scope))
        if key in self.memo:
            return list(self.memo[key])  # type: ignore[arg-type]
        self.memo[key] = [Word(None, self.span(node), splat=True, label=self.code(node))]
        words = self._sequence_words(node, scope, consumed)
        if len(words) > _MAX_WORDS:
            self.not_followed(node, f"an argv list longer than {_MAX_WORDS} words")
            words = [Word(None, self.span(node), splat=True, label=self.code(node))]
        self.memo[key] = words
        return list(words)

    def _sequence_words(self, node: ast.expr, scope: _Scope, consumed: set[int]) -> list[Word]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.sequence_words(node.left, scope, consumed) + \
                self.sequence_words(node.right, scope, consumed)
        target = self.resolve(node, scope)
        if isinstance(node, ast.Name) and isinstance(target, (ast.List, ast.Tuple, ast.BinOp, ast.Call)):
            bound = self.binding(node, scope)  # the value it was given, changed in place since
            if bound is not None:
                words = self.sequence_words(bound[0].value, scope, consumed)
                changes = self.changes(node.id, scope, bound[1], bound[0].line)
                return self.changed_words(words, changes, scope, consumed)
        if isinstance(target, ast.Call):
            func = self.process_name(target.func)
            if func == "shlex.split" and target.args:
                consumed.add(id(target))
                return self.split_words(target.args[0], scope)
            if isinstance(target.func, ast.Attribute) and target.func.attr == "split" \
                    and not target.args and not target.keywords:
                return self.split_words(target.func.value, scope)
        if isinstance(target, ast.BinOp):
            return self.sequence_words(target, scope, consumed)
        if not isinstance(target, (ast.List, ast.Tuple)):
            return [Word(None, self.span(node), splat=True, label=self.code(node))]
        return self.element_words([(e.value if isinstance(e, ast.Starred) else e, isinstance(e, ast.Starred))
                                   for e in target.elts], scope, consumed)

    def changed_words(self, words: list[Word], changes: list[tuple[_Mutation, bool]], scope: _Scope,
                      consumed: set[int]) -> list[Word]:
        """An argv list after ``+=``, ``.append``, ``.extend``, ``.insert``, ``cmd[i:j] = ...``,
        ``del cmd[i]``, ``.pop()``.  A change not known to run, or not understood (an index
        into a list with unseen parts, ``.sort()``...), leaves extra arguments unseen: it is
        never dropped silently."""
        words = list(words)
        for change, known in changes:
            changed = self.changed_list(words, change, scope, consumed) if known else None
            if changed is None:
                words.append(Word(None, self.span(change.node), splat=True, label=self.code(change.node)))
            else:
                words = changed
        return words

    def changed_list(self, words: list[Word], change: _Mutation, scope: _Scope,
                     consumed: set[int]) -> list[Word] | None:
        """``words`` after one change known to run; None when it is not understood."""
        op, args = change.op, change.args
        if op == "extend":
            return words + self.sequence_words(args[0], scope, consumed)
        if op == "append" and len(args) == 1:
            return words + self.element_words([(args[0], False)], scope, consumed)
        if any(w.splat for w in words):
            return None  # positions in a list with unseen parts are not known
        out = list(words)
        try:
            if op == "insert" and len(args) == 2:
                out.insert(self.index(args[0], scope), self.element_words([(args[1], False)], scope, consumed)[0])
            elif op == "pop" and len(args) <= 1:
                out.pop(self.index(args[0], scope) if args else -1)
            elif op in ("set", "del") and isinstance(args[0], ast.Slice):
                part = slice(*(self.index(e, scope) if e is not None else None
                               for e in (args[0].lower, args[0].upper, args[0].step)))
                if op == "del":
                    del out[part]
                elif args[1] is None:
                    return None
                else:
                    out[part] = self.sequence_words(args[1], scope, consumed)
            elif op == "del":
                del out[self.index(args[0], scope)]
            elif op == "set" and args[1] is not None:
                out[self.index(args[0], scope)] = self.element_words([(args[1], False)], scope, consumed)[0]
            else:
                return None
        except (IndexError, ValueError, TypeError):
            return None
        return out

    def index(self, node: ast.expr, scope: _Scope) -> int:
        """A list index written as a literal (or a same-file constant); ValueError otherwise."""
        value = self.value(node, scope)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(self.code(node))
        return value

    def element_words(self, elements: list[tuple[ast.expr, bool]], scope: _Scope,
                      consumed: set[int]) -> list[Word]:
        words: list[Word] = []
        for value, starred in elements:
            if starred:
                words += self.sequence_words(value, scope, consumed)
                continue
            if _dotted(value) == "sys.executable":
                words.append(Word("python", self.span(value)))
                continue
            text = self.text_of(value, scope, [])
            if text is not None:
                words.append(_word(text.text, self.span(value)))
            else:  # a number, or a value such as os.environ.get("M", "default")
                literal = self.value(value, scope)
                known = isinstance(literal, (str, int, float)) and not isinstance(literal, bool)
                words.append(Word(str(literal) if known else None, self.span(value),
                                  label=None if known else self.code(value)))
        return words

    def shell_commands(self, node: ast.expr, scope: _Scope, env: dict[str, Word],
                       env_open: bool) -> list[Command]:
        text = self.text_of(node, scope, [])
        if text is None:
            return []
        return self.commands_from_text(text, env, env_open)

    def commands_from_text(self, text: _Text, env: dict[str, Word], env_open: bool) -> list[Command]:
        """A command string run by a shell: the shell frontend when available."""
        shell_text = text.text
        lines = shell_text.split("\n")
        offsets = [0]
        for line in lines[:-1]:
            offsets.append(offsets[-1] + len(line) + 1)

        def place(row: int, col: int, erow: int, ecol: int) -> Span:
            start = offsets[min(row, len(offsets) - 1)] + col
            end = offsets[min(erow, len(offsets) - 1)] + ecol
            return text.span(start, max(end, start + 1))

        try:
            from .shell import commands_in_shell
        except ImportError:  # pragma: no cover - the shell frontend is part of the package
            return [Command(_words(text), env, env_open, base_dir=self.base_dir)]
        commands = commands_in_shell(shell_text, place=place, base_dir=self.base_dir)
        out = []
        for command in commands:
            words = [_word(w.text, w.span) if w.text is not None else w for w in command.words]
            merged_env = dict(env)
            merged_env.update({k: (_word(w.text, w.span) if w.text is not None else w)
                               for k, w in command.env.items()})
            out.append(Command(words, merged_env, env_open or command.env_open_ended,
                               base_dir=self.base_dir))
        return out


def _statement_lines(stmt: ast.stmt) -> tuple[int, int]:
    """First and last line of a statement, its decorators included."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    return first, getattr(stmt, "end_lineno", None) or stmt.lineno


def _watched_names(tree: ast.Module) -> re.Pattern[str]:
    """The words a function must mention to change what a launch elsewhere reads: the
    environment's writers, or a name the module's own statements assign (functions'
    locals cannot reach a launch outside them)."""
    names = {"environ", "setenv", "delenv", "putenv", "unsetenv", *_DOTENV_LOADERS}
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.update(node.id for node in ast.walk(stmt)
                         if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")


def launches_in_python(text: str, *, base_dir: str | None = None, tree: ast.Module | None = None,
                       candidate_lines: frozenset[int] | None = None) -> list[Launch]:
    """Every vLLM launch in a Python source text (raises SyntaxError, as ``ast.parse`` does).

    ``tree`` is the text's :mod:`ast` tree when the caller has it (the screen or flake8
    parsed it already); ``candidate_lines`` (from the screen) are the lines of the calls
    that can be launches: functions and classes holding none of them are not read.
    """
    if tree is None:
        tree = ast.parse(text.lstrip("\ufeff"))
    source = _Source(text)
    collector = _Collector()
    watched: re.Pattern[str] | None = None
    for stmt in tree.body:
        if candidate_lines is not None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first, last = _statement_lines(stmt)
            if not any(first <= line <= last for line in candidate_lines):
                # no launch in it, but it may change the environment or a module variable
                watched = watched or _watched_names(tree)
                if watched.search("\n".join(source.lines[first - 1:last])):
                    collector.changes_only(stmt)
                continue
        collector.visit(stmt)
    builder = _Builder(source, collector, base_dir)
    launches = list(builder.launches())
    for span, why in builder.skipped:  # bounds hit: RSM900 says which part was not followed
        not_followed(span, why)
    return launches
