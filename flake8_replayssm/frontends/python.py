"""Find vLLM launches in Python source with libcst.

Two kinds of launch live in Python files:

- engine constructors: ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)``
  under any import alias or module attribute (``vllm.LLM``), with the model
  positional or as ``model=``, keywords from ``**cfg`` when ``cfg`` is a dict
  literal or ``dict(...)`` assigned once in the same scope or module;
- command lines: argv lists and command strings handed to ``subprocess``,
  ``os.system``, ``shlex.split``, ``asyncio.create_subprocess_*``, including
  f-strings whose literal parts carry the flags, with ``env=`` dicts and
  ``os.environ[...] = ...`` assignments.

Nothing else is a launch: vLLM's own ``cache_config.use_replayssm = True``,
dataclass fields and help texts are never reported.  libcst is imported only
here, and only the caller decides (by a text pre-filter) whether to come here.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..argv import launch_from_command
from ..kwargs import launch_from_kwargs
from ..sglang.kwargs import CLASSES as SGLANG_CLASSES
from ..sglang.kwargs import launch_from_keywords as launch_from_sglang_keywords
from ..model import UNKNOWN, UNKNOWN_PART, Command, Launch, Setting, Span, Word

ENGINE_CLASSES = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs"})
SUBPROCESS_FUNCS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
ASYNC_EXEC = "create_subprocess_exec"
ASYNC_SHELL = "create_subprocess_shell"
_PLACEHOLDER = "RSMHOLE"
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "zsh", "dash"})
#: more `if`s than this under one launch: its values are unknown (2**5 readings)
_MAX_COMBINATIONS = 32


@dataclass
class _Text:
    """A string built from Python literals, each character tied to its source position."""

    text: str = ""
    positions: list[tuple[int, int]] = field(default_factory=list)

    def add(self, chunk: str, line: int, col: int, exact: bool) -> None:
        for ch in chunk:
            self.text += ch
            self.positions.append((line, col))
            if exact:
                if ch == "\n":
                    line, col = line + 1, 0
                else:
                    col += 1

    def span(self, start: int, end: int) -> Span:
        if not self.positions:
            return Span(1, 0, 1, 0)
        start = min(max(start, 0), len(self.positions) - 1)
        last = min(max(end - 1, start), len(self.positions) - 1)
        (line, col), (eline, ecol) = self.positions[start], self.positions[last]
        return Span(line, col, eline, ecol + 1)


def _string_parts(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(node, cst.ConcatenatedString):
        left = _string_parts(node.left)
        right = _string_parts(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        return [node]
    return None


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


@dataclass
class _Assignment:
    """One ``name = value``: where it is (its ``if`` branches, outermost first, as (id of the
    If, 0 for its body or 1 for its else); None inside a loop or a ``try``, where it may
    run any number of times) and its line."""

    value: cst.BaseExpression
    path: tuple[tuple[int, int], ...] | None
    line: int


class _Scope:
    """Assignments of one function body (or the module): name -> values assigned, in order."""

    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.assigned: dict[str, list[_Assignment]] = {}
        self.extended: dict[str, list[tuple[cst.BaseExpression | None, tuple[tuple[int, int], ...] | None]]] = {}

    def lookup(self, name: str) -> tuple[list[_Assignment], _Scope] | None:
        """The assignments of ``name`` in the nearest scope that assigns it."""
        scope: _Scope | None = self
        while scope is not None:
            values = scope.assigned.get(name)
            if values is not None:
                return values, scope
            scope = scope.parent
        return None


class _Collector(cst.CSTVisitor):
    """One pass: imports, assignments per scope, os.environ writes, candidate calls."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.engine_names: dict[str, str] = {}  # local name -> engine class
        self.module_aliases: dict[str, str] = {}  # local name -> module
        self.func_names: dict[str, str] = {}  # local name -> "subprocess.run" etc.
        self.module_scope = _Scope(None)
        self.scope = self.module_scope
        self.branches: list[tuple[int, int]] = []
        self.loop_depth = 0
        #: every call, with its scope and the `if` branches it is in
        self.calls: list[tuple[cst.Call, _Scope, tuple[tuple[int, int], ...]]] = []
        self.environ: list[tuple[int, str, cst.BaseExpression]] = []
        self.imported: dict[str, str] = {}  # local name -> module it is imported from
        #: Ray Serve LLM configs written as dict literals (``{"engine_kwargs": {...}, ...}``)
        self.ray_dicts: list[tuple[cst.Dict, _Scope, tuple[tuple[int, int], ...]]] = []

    # imports ------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if dotted is None:
                continue
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) \
                else dotted.split(".")[0]
            self.module_aliases[local] = dotted if alias.asname else dotted.split(".")[0]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None else None
        if module is None or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.imported[local] = f"{module}.{name}"
            if module.startswith("vllm") and name in ENGINE_CLASSES:
                self.engine_names[local] = name
            elif module.split(".")[0] == "sglang" and name in SGLANG_CLASSES:
                self.engine_names[local] = f"sglang.{name}"
            elif module in ("subprocess", "os", "shlex", "asyncio"):
                self.func_names[local] = f"{module}.{name}"
            elif module == "vllm" and name in ("engine", "entrypoints"):
                self.module_aliases[local] = f"vllm.{name}"

    # scopes -------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope = _Scope(self.scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    @property
    def path(self) -> tuple[tuple[int, int], ...] | None:
        return None if self.loop_depth else tuple(self.branches)

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self.loop_depth += 1

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self.loop_depth -= 1

    visit_For = visit_While = visit_Try = visit_TryStar = _enter_loop  # type: ignore[assignment]
    leave_For = leave_While = leave_Try = leave_TryStar = _leave_loop  # type: ignore[assignment]

    def visit_If_body(self, node: cst.If) -> None:
        self.branches.append((id(node), 0))

    def leave_If_body(self, node: cst.If) -> None:
        self.branches.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self.branches.append((id(node), 1))

    def leave_If_orelse(self, node: cst.If) -> None:
        self.branches.pop()

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    # assignments ----------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Name):
                self.scope.assigned.setdefault(t.value, []).append(
                    _Assignment(node.value, self.path, self._line(node)))
            elif isinstance(t, cst.Subscript) and _is_environ(t.value, self):
                key = _subscript_key(t)
                if key is not None:
                    line = self.get_metadata(PositionProvider, node).start.line
                    self.environ.append((line, key, node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self.scope.assigned.setdefault(node.target.value, []).append(
                _Assignment(node.value, self.path, self._line(node)))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign):
            self.scope.extended.setdefault(node.target.value, []).append((node.value, self.path))

    def visit_Dict(self, node: cst.Dict) -> None:
        if any(isinstance(e, cst.DictElement) and _literal_str(e.key) == "engine_kwargs" for e in node.elements):
            self.ray_dicts.append((node, self.scope, tuple(self.branches)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value in ("append", "extend"):
            arg = node.args[0].value if node.args else None
            wrapped = cst.List([cst.Element(arg)]) if func.attr.value == "append" and arg is not None else arg
            self.scope.extended.setdefault(func.value.value, []).append((wrapped, self.path))
        if isinstance(func, cst.Attribute) and func.attr.value in ("setdefault", "update") \
                and _is_environ(func.value, self) and node.args:
            line = self.get_metadata(PositionProvider, node).start.line
            if func.attr.value == "setdefault" and len(node.args) >= 2:
                key = _literal_str(node.args[0].value)
                if key is not None:
                    self.environ.append((line, key, node.args[1].value))
            elif func.attr.value == "update" and isinstance(node.args[0].value, cst.Dict):
                for element in node.args[0].value.elements:
                    if isinstance(element, cst.DictElement):
                        key = _literal_str(element.key)
                        if key is not None:
                            self.environ.append((line, key, element.value))
        self.calls.append((node, self.scope, tuple(self.branches)))


def _dotted(node: cst.BaseExpression | cst.CSTNode | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _is_environ(node: cst.BaseExpression, collector: _Collector) -> bool:
    dotted = _dotted(node)
    if dotted is None:
        return False
    head, _, rest = dotted.partition(".")
    module = collector.module_aliases.get(head)
    return (module == "os" and rest == "environ") or collector.func_names.get(dotted) == "os.environ"


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return _literal_str(node.slice[0].slice.value)


def _literal_str(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


class _Builder:
    """Turns the collected calls into Launches."""

    def __init__(self, wrapper: MetadataWrapper, collector: _Collector, base_dir: str | None) -> None:
        # reading a launch once per combination of branches: the branch taken at each `if` /
        # `a if c else b` met (pins), those met without a pin (seen)
        self.pins: dict[int, int] = {}
        self.seen: dict[int, int] = {}
        self.choices_unknown = False
        self.groups = itertools.count(1)
        self.module = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)
        self.c = collector
        self.base_dir = base_dir

    def span(self, node: cst.CSTNode) -> Span:
        pos = self.positions[node]
        return Span(pos.start.line, pos.start.column, pos.end.line, pos.end.column)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of ``node`` (one line), for messages about what we cannot see."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= 40 else text[:37] + "..."

    # values ---------------------------------------------------------------
    def resolve(self, node: cst.BaseExpression, scope: _Scope, depth: int = 0) -> cst.BaseExpression | None:
        """Follow a name to the expression assigned to it (None if not static), and ``a if c
        else b`` to the branch this reading takes."""
        while depth < 10:
            if isinstance(node, cst.IfExp):
                taken = self.branch(id(node))
                if taken is None:
                    return None
                node, depth = (node.body if taken == 0 else node.orelse), depth + 1
                continue
            if not isinstance(node, cst.Name):
                return node
            if node.value in ("True", "False", "None"):
                return node
            found = self.assignment(node, scope)
            if found is None:
                return None
            node, depth = found, depth + 1
        return None

    def assignment(self, name: cst.Name, scope: _Scope) -> cst.BaseExpression | None:
        """The value ``name`` has where it is used, in this reading: the last assignment before
        the use on the ``if`` branches the reading takes (any point of an enclosing scope,
        whose code has run when a function is called); None when it is not one expression
        (assigned in a loop or a ``try``, or not at all)."""
        found = scope.lookup(name.value)
        if found is None:
            return None
        assignments, owner = found
        if owner is scope and name in self.positions:
            use = self.positions[name].start.line
            assignments = [a for a in assignments if a.line < use] or assignments[:0]
        chosen = None
        for a in assignments:
            if a.path is None:
                return None
            on = self.on_path(a.path)
            if on is None:
                return None
            if on:
                chosen = a
        return chosen.value if chosen is not None else None

    def value(self, node: cst.BaseExpression, scope: _Scope) -> Any:
        """A Python value for a literal expression; UNKNOWN for anything dynamic."""
        target = self.resolve(node, scope)
        if target is None:
            return UNKNOWN
        node = target
        if isinstance(node, cst.Name):
            return {"True": True, "False": False, "None": None}.get(node.value, UNKNOWN)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return value if isinstance(value, str) else UNKNOWN
        if isinstance(node, (cst.Integer, cst.Float)):
            return ast.literal_eval(node.value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
                and isinstance(node.expression, (cst.Integer, cst.Float)):
            return -ast.literal_eval(node.expression.value)
        if isinstance(node, cst.Attribute) and node.attr.value.isupper():
            return node.attr.value.lower()  # MambaBackendEnum.FLASHINFER
        if isinstance(node, (cst.List, cst.Tuple)):
            return [UNKNOWN if isinstance(e, cst.StarredElement) else self.value(e.value, scope)
                    for e in node.elements]
        dict_entries = self.dict_entries(node, scope)
        if dict_entries is not None:
            entries, open_ended = dict_entries
            result: dict[str, Any] = {k: self.value(v, scope) for k, (_, v) in entries.items()}
            return UNKNOWN if open_ended else result
        default = self.environment_default(node)
        if default is not None:
            return self.value(default, scope)
        if isinstance(node, cst.Call) and _dotted(node.func) in ("str", "int", "float") \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            inner = self.value(node.args[0].value, scope)  # str(PORT), int(os.environ.get("TP", "2"))
            if isinstance(inner, (str, int, float)) and not isinstance(inner, bool):
                try:
                    return {"str": str, "int": int, "float": float}[_dotted(node.func) or ""](inner)
                except ValueError:
                    return UNKNOWN
        return UNKNOWN

    def is_config_class(self, func: cst.BaseExpression) -> bool:
        """``KVTransferConfig``, ``SpeculativeConfig``, ``ModelLoadingConfig``...: a config object
        whose keywords are the fields of the JSON/dict value vLLM (or Ray) takes in its place."""
        name = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else "")
        if not name.endswith("Config") or name == "LLMConfig":
            return False
        origin = self.c.imported.get(name) if isinstance(func, cst.Name) else _dotted(func)
        return bool(origin) and origin.split(".")[0] in ("vllm", "ray")

    def environment_default(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The default of ``os.environ.get("X", default)`` / ``os.getenv("X", default)``.

        As with a shell ``${X:-default}``, the default is the script's own choice,
        taken when the file does not set the variable itself.
        """
        if not isinstance(node, cst.Call) or len(node.args) != 2 or node.args[1].keyword is not None:
            return None
        dotted = _dotted(node.func) or ""
        head, _, rest = dotted.partition(".")
        module = self.c.module_aliases.get(head)
        is_get = (module == "os" and rest in ("environ.get", "getenv")) or \
            self.c.func_names.get(dotted) == "os.getenv"
        key = _literal_str(node.args[0].value)
        if not is_get or key is None or any(k == key for _, k, _ in self.c.environ):
            return None
        return node.args[1].value

    def dict_entries(self, node: cst.BaseExpression, scope: _Scope
                     ) -> tuple[dict[str, tuple[cst.CSTNode, cst.BaseExpression]], bool] | None:
        """key -> (key node, value) of a dict literal or ``dict(...)`` call, and open-endedness."""
        target = self.resolve(node, scope)
        if isinstance(target, cst.Dict):
            entries: dict[str, tuple[cst.CSTNode, cst.BaseExpression]] = {}
            open_ended = False
            for element in target.elements:
                if isinstance(element, cst.DictElement):
                    key = _literal_str(element.key)
                    if key is None:
                        open_ended = True
                    else:
                        entries[key] = (element.key, element.value)
                elif isinstance(element, cst.StarredDictElement):
                    inner = self.dict_entries(element.value, scope)
                    if inner is None:
                        open_ended = open_ended or not self.is_environ(element.value)
                    else:
                        entries.update(inner[0])
                        open_ended = open_ended or inner[1]
            return entries, open_ended
        if isinstance(target, cst.Call) and (_dotted(target.func) == "dict" or self.is_config_class(target.func)):
            entries, open_ended = {}, False
            for arg in target.args:
                if arg.keyword is not None:
                    entries[arg.keyword.value] = (arg.keyword, arg.value)
                elif arg.star == "**":
                    inner = self.dict_entries(arg.value, scope)
                    if inner is None:
                        open_ended = True
                    else:
                        entries.update(inner[0])
                        open_ended = open_ended or inner[1]
                else:
                    open_ended = True
            return entries, open_ended
        return None

    def is_environ(self, node: cst.BaseExpression) -> bool:
        return _is_environ(node, self.c)

    # strings -> text ------------------------------------------------------
    def text_of(self, node: cst.BaseExpression, scope: _Scope, holes: list[int]) -> _Text | None:
        """The characters of a (possibly concatenated, possibly f-) string, with positions."""
        target = self.resolve(node, scope)
        if target is None:
            return None
        if isinstance(target, cst.BinaryOperation) and isinstance(target.operator, cst.Add):
            left = self.text_of(target.left, scope, holes)
            right = self.text_of(target.right, scope, holes)
            if left is None or right is None:
                return None
            return _Text(left.text + right.text, left.positions + right.positions)
        if isinstance(target, cst.Call) and len(target.args) == 1 and (
                isinstance(target.func, cst.Attribute) and target.func.attr.value == "join"
                and _literal_str(target.func.value) == " " or self.process_name(target.func) == "shlex.join"):
            return self.joined_words(target.args[0].value, scope, holes)  # " ".join(argv), shlex.join(argv)
        parts = _string_parts(target)
        if parts is None:
            return None
        out = _Text()
        for part in parts:
            pos = self.positions[part].start
            if isinstance(part, cst.SimpleString):
                value = part.evaluated_value
                if not isinstance(value, str):
                    return None
                prefix = len(part.prefix) + len(part.quote)
                raw_body = part.value[prefix:len(part.value) - len(part.quote)]
                out.add(value, pos.line, pos.column + prefix, exact=raw_body == value)
            else:
                assert isinstance(part, cst.FormattedString)
                for piece in part.parts:
                    ppos = self.positions[piece].start
                    if isinstance(piece, cst.FormattedStringText):
                        try:
                            value = ast.literal_eval('"""' + piece.value.replace('"', '\\"') + '"""') \
                                if "\\" in piece.value else piece.value
                        except (ValueError, SyntaxError):
                            value = piece.value
                        value = value.replace("{{", "{").replace("}}", "}")
                        out.add(value, ppos.line, ppos.column, exact=value == piece.value)
                    else:
                        known = self.value(piece.expression, scope) \
                            if piece.format_spec is None and piece.conversion is None else UNKNOWN
                        if isinstance(known, str):  # f"{MODEL}" with MODEL a same-file constant
                            out.add(known, ppos.line, ppos.column, exact=False)
                            continue
                        holes.append(len(holes))
                        out.add(f"{_PLACEHOLDER}{len(holes)}", ppos.line, ppos.column, exact=False)
        return out

    def joined_words(self, node: cst.BaseExpression, scope: _Scope, holes: list[int]) -> _Text | None:
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
    def engine_class(self, func: cst.BaseExpression) -> str | None:
        if isinstance(func, cst.Name):
            return self.c.engine_names.get(func.value)
        dotted = _dotted(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        module = self.c.module_aliases.get(head)
        if module is None:
            return None
        full = f"{module}.{rest}" if rest else module
        mod, _, cls = full.rpartition(".")
        if cls in SGLANG_CLASSES and mod.split(".")[0] == "sglang":
            return f"sglang.{cls}"
        return cls if cls in ENGINE_CLASSES and mod.startswith("vllm") else None

    def process_name(self, func: cst.BaseExpression) -> str | None:
        """``subprocess.run`` / ``os.system`` / ``shlex.split`` ... through aliases."""
        if isinstance(func, cst.Name):
            return self.c.func_names.get(func.value)
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
            yield from self.readings(path, lambda: self.ray_dict_launches(node, scope))
        for call, scope, path in self.c.calls:
            if id(call) not in consumed:
                yield from self.readings(path, lambda: list(self.call_launches(call, scope, consumed)))

    def readings(self, path: tuple[tuple[int, int], ...], read: Callable[[], list[Launch]]) -> list[Launch]:
        """The launches of one call, read once per combination of the ``if`` branches and
        ``a if c else b`` its values come from (the branches the call itself is in are
        taken); launches at the same place of each reading form one group."""
        base = dict(path)
        self.pins, self.seen, self.choices_unknown = dict(base), {}, False
        first = read()
        new = [key for key in self.seen if key not in base]
        if not new:
            return first
        if 2 ** len(new) > _MAX_COMBINATIONS:
            self.pins, self.seen, self.choices_unknown = dict(base), {}, True
            return read()
        runs = [first]
        for combo in itertools.islice(itertools.product((0, 1), repeat=len(new)), 1, None):
            self.pins = {**base, **dict(zip(new, combo))}
            runs.append(read())
        group = next(self.groups)
        return [replace(launch, group=group * 1000 + k) for found in runs for k, launch in enumerate(found)]

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

    def on_path(self, path: tuple[tuple[int, int], ...]) -> bool | None:
        for key, taken in path:
            chosen = self.branch(key)
            if chosen is None:
                return None
            if chosen != taken:
                return False
        return True

    def ray_dict_launches(self, node: cst.Dict, scope: _Scope) -> list[Launch]:
        entries = self.dict_entries(node, scope)
        return [self.ray_launch(node, entries, scope, "Ray Serve LLM config")] if entries is not None else []

    def call_launches(self, call: cst.Call, scope: _Scope, consumed: set[int]) -> Iterator[Launch]:
        engine = self.engine_class(call.func)
        if engine is not None:
            launch = self.engine_launch(call, engine, scope)
            if launch is not None:  # `sgl.Engine(server_args=...)` is judged at the ServerArgs
                yield launch
            return
        if self.is_ray_llm_config(call):
            entries = self.dict_entries(cst.Call(cst.Name("dict"), call.args), scope)
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

    def environment(self, line: int) -> dict[str, Word]:
        """``os.environ`` writes made before ``line`` in this file."""
        env: dict[str, Word] = {}
        for at, key, value_node in self.c.environ:
            if at <= line:
                value = self.value(value_node, self.c.module_scope)
                env[key] = Word(value if isinstance(value, str) else None, self.span(value_node))
        return env

    def engine_launch(self, call: cst.Call, engine: str, scope: _Scope) -> Launch | None:
        keywords: dict[str, Setting] = {}
        model: Setting | None = None
        unseen: list[str] = []
        for index, arg in enumerate(call.args):
            if arg.star == "**":
                entries = self.dict_entries(arg.value, scope)
                if entries is None:
                    unseen.append("**" + self.code(arg.value))
                    continue
                items, more = entries
                if more:
                    unseen.append("**" + self.code(arg.value))
                for key, (key_node, value_node) in items.items():
                    keywords[key] = Setting(key, self.value(value_node, scope), self.span(key_node),
                                            key, self.span(value_node))
            elif arg.star == "*":
                unseen.append("*" + self.code(arg.value))
            elif arg.keyword is not None:
                key = arg.keyword.value
                keywords[key] = Setting(key, self.value(arg.value, scope), self.span(arg.keyword),
                                        f"{key}=", self.span(arg.value))
            elif index == 0:
                model = Setting("model", self.value(arg.value, scope), self.span(arg.value), "",
                                self.span(arg.value))
        line = self.positions[call].start.line
        env = {k: Setting(k, w.text if w.text is not None else UNKNOWN, w.span, k, w.span)
               for k, w in self.environment(line).items()}
        build = launch_from_sglang_keywords if engine.startswith("sglang.") else launch_from_kwargs
        return build(label=f"{engine.rpartition('.')[2]}(...)", anchor=self.span(call.func), model=model,
                     keywords=keywords, unseen=unseen, env=env, base_dir=self.base_dir)

    def is_ray_llm_config(self, call: cst.Call) -> bool:
        """``LLMConfig(...)`` of Ray Serve LLM, or ``dict(engine_kwargs=..., ...)``."""
        func = call.func
        if isinstance(func, cst.Name) and func.value == "dict":
            return any(a.keyword is not None and a.keyword.value == "engine_kwargs" for a in call.args)
        dotted = _dotted(func) or ""
        head, _, rest = dotted.partition(".")
        base = self.c.imported.get(head) or self.c.module_aliases.get(head) or head
        origin = f"{base}.{rest}" if rest else base
        return origin.startswith("ray.") and origin.endswith(".LLMConfig")

    def ray_launch(self, at: cst.CSTNode, entries: tuple[dict[str, tuple[cst.CSTNode, cst.BaseExpression]], bool],
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
        line = self.positions[at].start.line
        env = {k: Setting(k, w.text if w.text is not None else UNKNOWN, w.span, k, w.span)
               for k, w in self.environment(line).items()}
        return launch_from_kwargs(label=label, anchor=self.span(at), model=model, keywords=keywords,
                                  unseen=unseen, env=env, base_dir=self.base_dir)

    def keyword(self, call: cst.Call, name: str) -> cst.BaseExpression | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        return None

    def commands_for(self, call: cst.Call, name: str, scope: _Scope, consumed: set[int]) -> list[Command]:
        module, _, func = name.partition(".")
        if not call.args:
            return []
        first = call.args[0].value
        env, env_open = self.call_env(call, scope)
        if name == "os.system" or name == "os.popen" or func == ASYNC_SHELL:
            return self.shell_commands(first, scope, env, env_open)
        if name == "shlex.split":
            words = self.split_words(first, scope)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module == "asyncio" and func == ASYNC_EXEC:
            words = self.argv_words(call.args, scope, consumed, starred_ok=True)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module != "subprocess" or func not in SUBPROCESS_FUNCS:
            return []
        shell = self.keyword(call, "shell")
        if shell is not None and self.value(shell, scope) is True:
            return self.shell_commands(first, scope, env, env_open)
        words = self.argv_words([call.args[0]], scope, consumed)
        if not words:
            return []
        if len(words) >= 3 and words[0].text in _SHELLS and words[1].text == "-c":
            script = self.text_of(call.args[0].value.elements[2].value, scope, [])  # type: ignore[attr-defined]
            if script is not None:
                return self.commands_from_text(script, env, env_open)
        return [Command(words, env, env_open, base_dir=self.base_dir)]

    def call_env(self, call: cst.Call, scope: _Scope) -> tuple[dict[str, Word], bool]:
        """``env=`` of a subprocess call, over the file's ``os.environ`` writes."""
        line = self.positions[call].start.line
        inherited = self.environment(line)
        env_node = self.keyword(call, "env")
        if env_node is None:
            return inherited, False
        entries = self.dict_entries(env_node, scope)
        if entries is None:
            return ({}, True) if not self.is_environ(env_node) else (inherited, False)
        items, open_ended = entries
        env = dict(inherited) if self._spreads_environ(env_node, scope) else {}
        for key, (_, value_node) in items.items():
            value = self.value(value_node, scope)
            env[key] = Word(value if isinstance(value, str) else None, self.span(value_node))
        return env, open_ended

    def _spreads_environ(self, node: cst.BaseExpression, scope: _Scope) -> bool:
        target = self.resolve(node, scope)
        if isinstance(target, cst.Dict):
            return any(isinstance(e, cst.StarredDictElement) and self.is_environ(e.value)
                       for e in target.elements)
        if isinstance(target, cst.Call):
            return any(arg.star == "**" and self.is_environ(arg.value) for arg in target.args)
        return False

    def split_words(self, node: cst.BaseExpression, scope: _Scope) -> list[Word]:
        text = self.text_of(node, scope, [])
        return _words(text) if text is not None else []

    def argv_words(self, args: Sequence[cst.Arg], scope: _Scope, consumed: set[int],
                   starred_ok: bool = False) -> list[Word]:
        """Words of an argv given as a list (or as *args for create_subprocess_exec)."""
        if starred_ok:
            elements: list[tuple[cst.BaseExpression, bool]] = [(a.value, a.star == "*") for a in args
                                                               if a.keyword is None]
            return self.element_words(elements, scope, consumed)
        return self.sequence_words(args[0].value, scope, consumed)

    def sequence_words(self, node: cst.BaseExpression, scope: _Scope, consumed: set[int]) -> list[Word]:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            return self.sequence_words(node.left, scope, consumed) + \
                self.sequence_words(node.right, scope, consumed)
        name = node.value if isinstance(node, cst.Name) else None
        target = self.resolve(node, scope)
        if isinstance(target, cst.Call):
            func = self.process_name(target.func)
            if func == "shlex.split" and target.args:
                consumed.add(id(target))
                return self.split_words(target.args[0].value, scope)
            if isinstance(target.func, cst.Attribute) and target.func.attr.value == "split" \
                    and not target.args:
                return self.split_words(target.func.value, scope)
        if isinstance(target, cst.BinaryOperation):
            return self.sequence_words(target, scope, consumed)
        if not isinstance(target, (cst.List, cst.Tuple)):
            return [Word(None, self.span(node), splat=True, label=self.code(node))]
        words = self.element_words([(e.value, isinstance(e, cst.StarredElement)) for e in target.elements],
                                   scope, consumed)
        if name is not None:
            for value, _conditional in self._extensions(name, scope):
                if value is None:
                    words.append(Word(None, self.span(node), splat=True, label=f"what is added to {name}"))
                else:
                    words += self.sequence_words(value, scope, consumed)
        return words

    def _extensions(self, name: str, scope: _Scope) -> list[tuple[cst.BaseExpression | None, bool]]:
        """What ``+=`` / ``.append`` / ``.extend`` add to a list in this reading (None: in a loop,
        or under too many branches: unknown)."""
        found: _Scope | None = scope
        while found is not None and name not in found.assigned:
            found = found.parent
        if found is None:
            return []
        out = []
        for value, path in found.extended.get(name, []):
            on = self.on_path(path) if path is not None else None
            if on is None:
                out.append((None, True))
            elif on:
                out.append((value, False))
        return out

    def element_words(self, elements: list[tuple[cst.BaseExpression, bool]], scope: _Scope,
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
                words.append(Word(str(literal) if isinstance(literal, (str, int, float)) and
                                  not isinstance(literal, bool) else None, self.span(value)))
        return words

    def shell_commands(self, node: cst.BaseExpression, scope: _Scope, env: dict[str, Word],
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


def launches_in_python(text: str, *, base_dir: str | None = None) -> list[Launch]:
    """Every vLLM launch in a Python source text (raises libcst's ParserSyntaxError)."""
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector()
    wrapper.visit(collector)
    return list(_Builder(wrapper, collector, base_dir).launches())
