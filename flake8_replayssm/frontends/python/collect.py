"""One pass over a Python file's tree: what it imports, assigns, changes in place and calls.

Everything later steps ask of the file as written, independent of any one reading of a
launch, is gathered here in source order: the import aliases (:class:`Imports`), the
assignments of each function body and of the module (:class:`Scope`), in-place changes
of variables and of ``os.environ`` with where they run (:class:`Mutation`: their ``if``
branches, or None in a loop or a ``try``), and the calls and Ray Serve config dicts that
may be launches.  Which of those count for a given launch is decided later
(:mod:`.scopes`); what a call launches, later still (:mod:`.launch_calls`).

Which imported names are engine classes, and which modules are engines' own, is the engine
registry's knowledge: the caller passes those questions in (:class:`EngineRegistry`), so this
module asks no engine itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from .places import CALL, RETURN, STORE, Place, place_of

#: the ``if`` branches a statement is in, outermost first: (id of the If, 0 for its body or 1
#: for its else)
BranchPath = tuple[tuple[int, int], ...]
#: the name ``os.environ`` changes are recorded under (never a Python variable's name)
ENVIRON = "os.environ"
#: methods that change a list or dict in place
_MUTATING_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
                               "update", "setdefault", "popitem"})
#: how many positional arguments the changes read one by one take (others are unknown changes)
_ARITIES = {"pop": (0, 1, 2), "setdefault": (1, 2), "insert": (2,), "append": (1,), "extend": (1,)}
#: calls that load variables into the environment from a file the linter does not read
_DOTENV_LOADERS = frozenset({"load_dotenv", "dotenv_values"})
#: the modules whose functions can run a command (``subprocess.run``, ``os.system``, ``shlex.split``)
PROCESS_MODULES = ("subprocess", "os", "shlex", "asyncio")


class EngineRegistry(NamedTuple):
    """What the engine registry says about imported names (:mod:`flake8_replayssm.engines`)."""

    #: ``engine:Class`` for a keyword-launch class ``NAME`` imported from ``MODULE``, or None
    keyword_class: Callable[[str, str], str | None]
    #: the engines' programs, which are also their Python packages (``vllm``, ``sglang``)
    programs: Callable[[], frozenset[str]]
    #: whether a string constant can be part of an engine's command line (``"vllm"``, ``"... serve"``)
    launch_word: Callable[[str], bool]


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a name or attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def literal_str(node: ast.AST | None) -> str | None:
    """The value of a string constant, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword ``name`` of ``call``."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


@dataclass
class Assignment:
    """One ``name = value``: where it is (its ``if`` branches; None inside a loop or a ``try``,
    where it may run any number of times) and its place in source order."""

    value: ast.expr
    path: BranchPath | None
    line: int


class Scope:
    """Assignments of one function body (or the module): name -> values assigned, in order.
    ``name`` is the function's (empty for the module)."""

    def __init__(self, parent: Scope | None, name: str = "") -> None:
        self.parent = parent
        self.name = name
        self.assigned: dict[str, list[Assignment]] = {}

    def lookup(self, name: str) -> tuple[list[Assignment], Scope] | None:
        """The assignments of ``name`` in the nearest scope that assigns it."""
        scope: Scope | None = self
        while scope is not None:
            values = scope.assigned.get(name)
            if values is not None:
                return values, scope
            scope = scope.parent
        return None


@dataclass
class Mutation:
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
    scope: Scope
    path: BranchPath | None
    order: int


@dataclass
class Site:
    """A value that may be a command, where the file hands it on, returns or stores it: a string
    naming an entry point (or a list or text built from one) at its :class:`Place`, or a
    variable (``value`` an expression that names one) handed to a call, returned or stored.
    ``order`` is its place in source order (the call's for a call's argument)."""

    place: Place
    scope: Scope
    path: BranchPath
    order: int


class Imports:
    """What the file's imports name: engine classes, modules and process functions by their
    local names (``import subprocess as sp``, ``from vllm import LLM as Engine``)."""

    def __init__(self, registry: EngineRegistry) -> None:
        self.registry = registry
        self.engine_names: dict[str, str] = {}  # local name -> engine class
        self.module_aliases: dict[str, str] = {}  # local name -> module
        self.func_names: dict[str, str] = {}  # local name -> "subprocess.run" etc.
        self.imported: dict[str, str] = {}  # local name -> module it is imported from

    def add_import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.module_aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]

    def add_import_from(self, node: ast.ImportFrom) -> None:
        module = node.module
        if module is None or node.level:
            return
        for alias in node.names:
            name = alias.name
            if name == "*":
                continue
            local = alias.asname or name
            self.imported[local] = f"{module}.{name}"
            engine_class = self.registry.keyword_class(module, name)
            if engine_class is not None:
                self.engine_names[local] = engine_class
            elif module in PROCESS_MODULES:
                self.func_names[local] = f"{module}.{name}"
            elif module in self.registry.programs() and name in ("engine", "entrypoints"):
                self.module_aliases[local] = f"{module}.{name}"  # `from vllm import engine`

    def process_name(self, func: ast.expr) -> str | None:
        """``subprocess.run`` / ``os.system`` / ``shlex.split`` ... through aliases."""
        if isinstance(func, ast.Name):
            return self.func_names.get(func.id)
        name = dotted(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        module = self.module_aliases.get(head)
        if module in PROCESS_MODULES and rest and "." not in rest:
            return f"{module}.{rest}"
        return None

    def is_environ(self, node: ast.AST) -> bool:
        """Whether ``node`` is ``os.environ`` (through aliases)."""
        name = dotted(node)
        if name is None:
            return False
        head, _, rest = name.partition(".")
        module = self.module_aliases.get(head)
        return (module == "os" and rest == "environ") or self.func_names.get(name) == "os.environ"


class Collector(ast.NodeVisitor):
    """One pass: imports, assignments per scope, os.environ writes, candidate calls.

    Source order is the order of the visit (``order``): where a use sits among the
    assignments of its name."""

    def __init__(self, imports: Imports) -> None:
        self.registry = imports.registry
        self.order = 0
        #: the order of each call and dict literal recorded
        self.orders: dict[int, int] = {}
        self.imports = imports
        self.module_scope = Scope(None)
        self.scope = self.module_scope
        self.branches: list[tuple[int, int]] = []
        self.loop_depth = 0
        #: every call, with its scope and the `if` branches it is in
        self.calls: list[tuple[ast.Call, Scope, BranchPath]] = []
        #: in-place changes per variable (``os.environ`` under ENVIRON), in source order
        self.mutations: dict[str, list[Mutation]] = {}
        #: False while reading a function that holds no launch: only its changes are recorded
        self.collect_calls = True
        #: Ray Serve LLM configs written as dict literals (``{"engine_kwargs": {...}, ...}``)
        self.ray_dicts: list[tuple[ast.Dict, Scope, BranchPath]] = []
        #: where a string naming an entry point is handed on, returned or stored (by value id)
        self.sites: dict[int, Site] = {}
        #: values returned or stored that may name a variable holding a command
        self.handed: list[Site] = []
        #: every scope read, the module's first
        self.scopes: list[Scope] = [self.module_scope]
        #: the nodes around the one being visited, outermost first (for :func:`place_of`)
        self.parents: list[ast.AST] = []

    def _next(self) -> int:
        self.order += 1
        return self.order

    def generic_visit(self, node: ast.AST) -> None:
        """Visit the children of ``node`` with ``node`` among their parents."""
        self.parents.append(node)
        try:
            super().generic_visit(node)
        finally:
            self.parents.pop()

    def visit_Constant(self, node: ast.Constant) -> None:
        """A string naming an entry point: where it is handed on, returned or stored, if anywhere."""
        if not self.collect_calls or not isinstance(node.value, str) or not self.registry.launch_word(node.value):
            return
        place = place_of(node, self.parents)
        if place is None or id(place.value) in self.sites:
            return
        holder = place.holder
        order = self.orders[id(holder)] if place.role == CALL and id(holder) in self.orders else self._next()
        self.sites[id(place.value)] = Site(place, self.scope, tuple(self.branches), order)

    def handed_on(self, value: ast.expr | None, role: str, holder: ast.AST) -> None:
        """A value returned or stored (an attribute, a subscript): a command when it names a
        variable holding one (decided once every assignment is known)."""
        if value is not None and self.collect_calls and _may_name(value):
            self.handed.append(Site(Place(value, role, holder), self.scope, tuple(self.branches), self._next()))

    def visit_Return(self, node: ast.Return) -> None:
        self.handed_on(node.value, RETURN, node)
        self.generic_visit(node)

    def visit_Yield(self, node: ast.Yield) -> None:
        self.handed_on(node.value, RETURN, node)
        self.generic_visit(node)

    @property
    def path(self) -> BranchPath | None:
        return None if self.loop_depth else tuple(self.branches)

    def changes_only(self, node: ast.AST) -> None:
        """Visit a function that holds no launch: its changes of module variables and of the
        environment still count for the launches elsewhere."""
        self.collect_calls = False
        self.visit(node)
        self.collect_calls = True

    def mutate(self, name: str, op: str, node: ast.AST, *args: Any) -> None:
        self.mutations.setdefault(name, []).append(
            Mutation(op, args, node, self.scope, self.path, self._next()))

    def changed_name(self, node: ast.AST) -> str | None:
        """The variable a subscript or method call changes: a plain name, or os.environ."""
        if isinstance(node, ast.Name):
            return node.id
        return ENVIRON if self.imports.is_environ(node) else None

    def writes_environment(self, key: str) -> bool:
        """Whether the file writes ``key`` (or variables it cannot name) into the environment."""
        for change in self.mutations.get(ENVIRON, ()):
            if change.op == "update":
                mapping, keywords = change.args
                if not isinstance(mapping, (ast.Dict, type(None))) or any(k.arg in (None, key) for k in keywords) \
                        or mapping is not None and any(literal_str(k) in (None, key) for k in mapping.keys):
                    return True
            elif not change.args or literal_str(change.args[0]) in (None, key):
                return True
        return False

    # imports ------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        self.imports.add_import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imports.add_import_from(node)

    # scopes and branches --------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:  # run where the function is defined, before its body
            self.visit(decorator)
        self.scope = Scope(self.scope, node.name)
        self.scopes.append(self.scope)
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

    visit_For = visit_AsyncFor = visit_While = _loop  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        """A ``try`` body runs as written, up to where it may raise (a launch after that point in
        it does not run either); its handlers, ``else`` and ``finally`` may or may not run, so what
        they assign is unknown after them, as in a loop."""
        for stmt in node.body:
            self.visit(stmt)
        self.loop_depth += 1
        for part in (node.handlers, node.orelse, node.finalbody):
            for child in part:
                self.visit(child)
        self.loop_depth -= 1

    visit_TryStar = visit_Try  # type: ignore[assignment]

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
                    Assignment(node.value, self.path, self._next()))
            else:
                self.subscript_stores(target, node, node.value)
                self.handed_on(node.value, STORE, node)
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
                Assignment(node.value, self.path, self._next()))
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
        if self.collect_calls and any(literal_str(key) == "engine_kwargs" for key in node.keys if key is not None):
            self.orders[id(node)] = self._next()
            self.ray_dicts.append((node, self.scope, tuple(self.branches)))
        for value in node.values:
            self.handed_on(value, STORE, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.method_change(node)
        self.environment_change(node)
        if self.collect_calls:
            self.orders[id(node)] = self._next()
            self.calls.append((node, self.scope, tuple(self.branches)))
        self.generic_visit(node)

    # in-place changes -------------------------------------------------------
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
        name = dotted(func) or ""
        head, _, rest = name.partition(".")
        last = name.rpartition(".")[2] or (func.attr if isinstance(func, ast.Attribute) else "")
        module = self.imports.module_aliases.get(head)
        if (module == "os" and rest in ("putenv", "unsetenv")) \
                or self.imports.func_names.get(name) in ("os.putenv", "os.unsetenv") \
                or isinstance(func, ast.Attribute) and func.attr in ("setenv", "delenv"):
            self.mutate(ENVIRON, "unknown", node, node.args[0] if node.args else None)
        elif last in _DOTENV_LOADERS:
            self.mutate(ENVIRON, "unknown", node, None)
        elif isinstance(func, ast.Attribute) and func.attr == "dict" \
                and (dotted(func.value) or "").rpartition(".")[2] == "patch" and node.args \
                and (self.imports.is_environ(node.args[0]) or literal_str(node.args[0]) == "os.environ"):
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
            self.mutate(ENVIRON, "unknown", node, key if literal_str(key) is not None else None)


def value_names(node: ast.AST) -> Iterator[str]:
    """The variables a value is built from, through the shapes commands are built with
    (``cmd``, ``*cmd``, ``base + [...]``, ``f"{cmd} ..."``, ``" ".join(cmd)``, ``[*cmd, "x"]``)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Starred, ast.FormattedValue)):
        yield from value_names(node.value)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        yield from value_names(node.left)
        yield from value_names(node.right)
    elif isinstance(node, (ast.List, ast.Tuple, ast.JoinedStr)):
        for element in node.elts if not isinstance(node, ast.JoinedStr) else node.values:
            yield from value_names(element)
    elif isinstance(node, ast.IfExp):
        yield from value_names(node.body)
        yield from value_names(node.orelse)
    elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) \
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in _BUILT_WITH:
        for arg in node.args:
            yield from value_names(arg)
        if isinstance(node.func, ast.Attribute):
            yield from value_names(node.func.value)


#: calls a command value is built with (``" ".join(cmd)``, ``shlex.split(cmd)``, ``str(cmd)``)
_BUILT_WITH = frozenset({"join", "split", "format", "str", "list", "tuple", "strip"})


def _may_name(node: ast.expr) -> bool:
    return next(value_names(node), None) is not None


def launch_names(facts: Collector) -> frozenset[str]:
    """The variables that hold a command: assigned a string naming an entry point (or a value
    built from one), and those built from such variables in turn (by name, in any scope)."""
    found: set[str] = set()
    for site in facts.sites.values():
        holder = site.place.holder
        if isinstance(holder, (ast.Assign, ast.AnnAssign, ast.AugAssign)):  # `cmd = [...]`, `cmd += [...]`
            target = holder.targets[0] if isinstance(holder, ast.Assign) else holder.target
            if isinstance(target, ast.Name):
                found.add(target.id)
    if not found:
        return frozenset()
    built: list[tuple[str, set[str]]] = [(name, set(value_names(a.value)))
                                         for scope in facts.scopes for name, assigned in scope.assigned.items()
                                         for a in assigned]
    grew = True
    while grew:
        grew = False
        for name, sources in built:
            if name not in found and sources & found:
                found.add(name)
                grew = True
    return frozenset(found)


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


def collect(tree: ast.Module, lines: Sequence[str], candidate_lines: frozenset[int] | None,
            registry: EngineRegistry) -> Collector:
    """The file's imports, assignments, changes and candidate calls.

    ``candidate_lines`` (from the screen) are the lines of the calls that can be launches:
    functions and classes holding none of them are read only for their changes, and only
    when they mention a name such a change could touch (``lines`` is the source's lines)."""
    collector = Collector(Imports(registry))
    watched: re.Pattern[str] | None = None
    for stmt in tree.body:
        if candidate_lines is not None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first, last = _statement_lines(stmt)
            if not any(first <= line <= last for line in candidate_lines):
                # no launch in it, but it may change the environment or a module variable
                watched = watched or _watched_names(tree)
                if watched.search("\n".join(lines[first - 1:last])):
                    collector.changes_only(stmt)
                continue
        collector.visit(stmt)
    return collector
