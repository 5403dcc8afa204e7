"""What a Python expression evaluates to statically: constants, names, dicts, lists.

A keyword launch reads values (``use_replayssm=True``, ``model=MODEL``,
``**cfg``), and so do the command readers of :mod:`.command_text` (an argv element
``str(PORT)``, an f-string field).  :class:`Values` follows names to what they hold in
the reading under way (:mod:`.scopes`), dicts and ``dict(...)`` calls (and vLLM/Ray
``...Config(...)`` objects) to their entries after in-place changes (``d[k] = v``,
``update``, ``pop``...), takes ``os.environ.get("X", default)``'s default when the file
does not write ``X``, and converts ``str()``/``int()``/``float()`` of known values.
Anything dynamic is ``UNKNOWN``; a dict with entries it cannot name is open-ended.
"""

from __future__ import annotations

import ast
from typing import Any

from ...model import UNKNOWN
from .collect import Collector, Mutation, Scope, dotted, literal_str
from .readings import Reading
from .scopes import Bindings

#: the name of a value written where the linter cannot see it (not a Python identifier)
UNSEEN = "<unseen>"

#: a dict's entries, key -> (key node, value), and whether it may hold more than those
Entries = tuple[dict[str, tuple[ast.AST, ast.expr]], bool]

_CONVERSIONS = {"str": str, "int": int, "float": float}


class Values:
    """Static values of expressions, in the reading under way."""

    def __init__(self, facts: Collector, bindings: Bindings, reading: Reading) -> None:
        self.facts = facts
        self.imports = facts.imports
        self.bindings = bindings
        self.reading = reading

    def value(self, node: ast.expr, scope: Scope) -> Any:
        """A Python value for a literal expression; UNKNOWN for anything dynamic."""
        target = self.bindings.resolve(node, scope)
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
        if isinstance(node, ast.Call) and dotted(node.func) in _CONVERSIONS \
                and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            inner = self.value(node.args[0], scope)  # str(PORT), int(os.environ.get("TP", "2"))
            if isinstance(inner, (str, int, float)) and not isinstance(inner, bool):
                try:
                    return _CONVERSIONS[dotted(node.func) or ""](inner)
                except ValueError:
                    return UNKNOWN
        return UNKNOWN

    def environment_default(self, node: ast.expr) -> ast.expr | None:
        """The default of ``os.environ.get("X", default)`` / ``os.getenv("X", default)``.

        As with a shell ``${X:-default}``, the default is the script's own choice,
        taken when the file does not set the variable itself.
        """
        if not isinstance(node, ast.Call) or len(node.args) != 2 or node.keywords:
            return None
        name = dotted(node.func) or ""
        head, _, rest = name.partition(".")
        module = self.imports.module_aliases.get(head)
        is_get = (module == "os" and rest in ("environ.get", "getenv")) or \
            self.imports.func_names.get(name) == "os.getenv"
        key = literal_str(node.args[0])
        if not is_get or key is None or self.facts.writes_environment(key):
            return None
        return node.args[1]

    def is_config_class(self, func: ast.expr) -> bool:
        """``KVTransferConfig``, ``SpeculativeConfig``, ``ModelLoadingConfig``...: a config object
        whose keywords are the fields of the JSON/dict value vLLM (or Ray) takes in its place."""
        name = func.id if isinstance(func, ast.Name) else (func.attr if isinstance(func, ast.Attribute) else "")
        if not name.endswith("Config") or name == "LLMConfig":
            return False
        origin = self.imports.imported.get(name) if isinstance(func, ast.Name) else dotted(func)
        return bool(origin) and origin.split(".")[0] in ("vllm", "ray")  # type: ignore[union-attr]

    # dicts ----------------------------------------------------------------
    def dict_entries(self, node: ast.expr, scope: Scope) -> Entries | None:
        """key -> (key node, value) of a dict literal or ``dict(...)`` call, and open-endedness.

        Remembered per node within a reading: ``d2 = {**d1, **d1}`` repeated would otherwise
        cost time exponential in the number of lines."""
        memo = self.reading.memo
        key = (id(node), id(scope))
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
        memo[key] = None  # a dict that splats itself is not one we can read
        found = self._dict_entries(node, scope)
        memo[key] = found
        return found

    def _dict_entries(self, node: ast.expr, scope: Scope) -> Entries | None:
        if isinstance(node, ast.Name):  # the value it was given, changed in place since
            bound = self.bindings.binding(node, scope)
            if bound is None:
                return None
            with self.reading.at(bound[0].line):
                base = self.dict_entries(bound[0].value, scope)
            if bound is None or base is None:
                return None
            return self.changed_dict(base, self.bindings.changes(node.id, scope, bound[1], bound[0].line), scope)
        target = self.bindings.resolve(node, scope)
        if isinstance(target, ast.Dict):
            entries: dict[str, tuple[ast.AST, ast.expr]] = {}
            open_ended = False
            for key_node, value in zip(target.keys, target.values):
                if key_node is None:  # {**other}
                    inner = self.dict_entries(value, scope)
                    if inner is None:
                        open_ended = open_ended or not self.imports.is_environ(value)
                    else:
                        entries.update(inner[0])
                        open_ended = open_ended or inner[1]
                    continue
                key = literal_str(key_node)
                if key is None:
                    open_ended = True
                else:
                    entries[key] = (key_node, value)
            return entries, open_ended
        if isinstance(target, ast.Call) and (dotted(target.func) == "dict" or self.is_config_class(target.func)):
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

    def changed_dict(self, base: Entries, changes: list[tuple[Mutation, bool]], scope: Scope) -> Entries:
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
                    entries[key] = (key_node, value if known else unseen_value(change))
            elif op == "clear" and known:
                entries, open_ended = {}, False
            elif op in ("set", "setdefault", "del", "pop") and args and literal_str(args[0]) is not None:
                key = literal_str(args[0]) or ""
                value = args[1] if len(args) > 1 else None
                if not known or op == "set" and value is None:
                    entries[key] = (args[0], unseen_value(change))
                elif op == "set" or op == "setdefault" and key not in entries:
                    entries[key] = (args[0], value if value is not None else unseen_value(change))
                elif op in ("del", "pop"):
                    entries.pop(key, None)
            else:
                open_ended = True
        return entries, open_ended

    def update_entries(self, args: tuple[Any, ...], scope: Scope) -> Entries | None:
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


def unseen_value(change: Mutation) -> ast.expr:
    """An expression standing for a value the linter cannot see, placed at ``change``."""
    return ast.copy_location(ast.Name(id=UNSEEN, ctx=ast.Load()), change.node)
