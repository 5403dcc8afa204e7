"""The ReplaySSM facts of one SGLang wheel, read statically.

Generated facts:

- ``long_options`` / ``valueless``: the options of ``ServerArgs.add_cli_args`` — its
  literal ``add_argument`` calls, and (0.5.20+) the fields ``add_cli_args_from_dataclass``
  turns into options: every ``A[T, ...]`` field of ServerArgs' namespace classes
  (``--field-name``, or ``Arg(cli_name=...)``, plus ``Arg(aliases=...)``; none with
  ``Arg(no_cli=True)``).  An option takes no value when SGLang makes it ``store_true``
  (a ``bool`` field) or its action takes no argument (``nargs=0``).  argparse's own
  ``--help`` is counted, as the parser has it.  What this cannot see: options added by
  code that computes their names; the committed union is compared to catch that.
- ``nargs`` / ``list_types``: the options that take other than one word (``nargs="+"``,
  ``"*"``, ``"?"``, N: written, an action's ``action_kwargs``, or a ``List[X]`` field, which
  ``add_cli_args_from_dataclass`` makes ``"+"``) and, for those, ``int``/``float`` words.
- ``radix_archs``: ``_MAMBA_RADIX_CACHE_ARCHS``, the architectures the radix-cache
  resolution also admits by name (``model_arch == "GraniteMoeHybridForCausalLM"``:
  ``radix_by_layer_types``), and the registered ``LinearAttnModelSpec`` architectures with
  ``uses_mamba_radix_cache``; ``extra_buffer_archs``: ``_MAMBA_EXTRA_BUFFER_ARCHS`` and
  the specs with ``support_mamba_cache_extra_buffer``.
- ``linear_attn_backends``: ``LINEAR_ATTN_KERNEL_BACKEND_CHOICES``.

Rules: every ``raise``/``assert`` of SGLang's argument code (``srt/server_args.py``,
``srt/arg_groups/``) and memory pools whose message or condition names ReplaySSM,
``no_buffer``/``extra_buffer`` or Mamba state.
"""

from __future__ import annotations

import ast
import re

from . import astutil
from .facts import Facts
from .tree import Loc, Tree

SERVER_ARGS = "sglang/srt/server_args.py"
_VALUELESS_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version",
                      "BooleanOptionalAction"}
_RULE_TEXT = re.compile(r"replayssm|no_buffer|extra_buffer|mamba state", re.IGNORECASE)
_NAMES_OPTION = re.compile(r"--[a-z]")
_RULE_FILES = ("sglang/srt/server_args.py", "sglang/srt/arg_groups/", "sglang/srt/mem_cache/")


def extract(tree: Tree) -> Facts:
    facts = Facts("sglang", tree.release("sglang"))
    _options(tree, facts)
    _architectures(tree, facts)
    _rules(tree, facts)
    return facts


# --- options ------------------------------------------------------------------------

class _Actions:
    """Whether an argparse action class takes no argument, read from its ``__init__``."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.files = [p for p in tree.files("sglang/srt/") if "arg" in p.rsplit("/", 1)[-1]]

    def valueless(self, name: str) -> bool:
        if name in _VALUELESS_ACTIONS:
            return True
        for path in self.files:
            cls = astutil.find_class(self.tree.parse(path), name)
            if cls is None:
                continue
            init = astutil.find_function(cls, "__init__")
            if init is None:
                return any(self.valueless(b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", ""))
                           for b in cls.bases)
            args = init.args
            defaults = dict(zip([a.arg for a in args.args][len(args.args) - len(args.defaults):], args.defaults))
            defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
            nargs = defaults.get("nargs")
            return isinstance(nargs, ast.Constant) and nargs.value == 0
        return False


def _action_name(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _negated(names: list[str], action: str | None) -> list[str]:
    """argparse's BooleanOptionalAction also registers ``--no-NAME`` for each ``--NAME``."""
    return ["--no-" + n[2:] for n in names if n.startswith("--")] if action == "BooleanOptionalAction" else []


class _Lists:
    """What the options that take several words collect: {option: nargs}, {option: word type}."""

    def __init__(self) -> None:
        self.nargs: dict[str, object] = {}
        self.types: dict[str, str] = {}
        self.at: dict[str, str] = {}

    def add(self, names: list[str], nargs: ast.AST | None, word_type: str | None, loc: Loc) -> None:
        value = nargs.value if isinstance(nargs, ast.Constant) else None
        if value in (None, 0, 1) or isinstance(value, bool):
            return
        for option in names:
            self.nargs.setdefault(option, value)
            self.at.setdefault(option, str(loc))
            if word_type in ("int", "float"):
                self.types.setdefault(option, word_type)


def _unwrap_optional(node: ast.AST) -> ast.AST:
    """``Optional[X]``, ``Union[X, None]``, ``X | None`` -> ``X`` (arg_utils._unwrap_optional)."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Optional", "typing.Optional"):
        return node.slice
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Union", "typing.Union") \
            and isinstance(node.slice, ast.Tuple):
        rest = [e for e in node.slice.elts if ast.unparse(e) != "None"]
        return rest[0] if len(rest) == 1 else node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        rest = [e for e in (node.left, node.right) if ast.unparse(e) != "None"]
        return rest[0] if len(rest) == 1 else node
    return node


def _list_element(node: ast.AST) -> str | None:
    """``List[int]`` / ``list[float]`` -> ``"int"`` / ``"float"`` / another name; None: not a list."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("List", "list", "typing.List"):
        return ast.unparse(node.slice)
    return None


def _literal_options(tree: Tree, actions: _Actions, out: dict, valueless: dict, lists: _Lists) -> None:
    module = tree.parse(SERVER_ARGS)
    for node in ast.walk(module) if module is not None else []:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        nargs = keywords.get("nargs")
        action = _action_name(keywords.get("action"))
        no_value = (isinstance(nargs, ast.Constant) and nargs.value == 0) if nargs is not None \
            else action is not None and actions.valueless(action)
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                 and a.value.startswith("--")]
        for option in names + _negated(names, action):
            out.setdefault(option, str(Loc(SERVER_ARGS, node.lineno)))
            if no_value:
                valueless.setdefault(option, str(Loc(SERVER_ARGS, node.lineno)))
        lists.add(names, nargs, _action_name(keywords.get("type")), Loc(SERVER_ARGS, node.lineno))


def _namespace_classes(tree: Tree) -> list[tuple[str, ast.ClassDef]]:
    """ServerArgs and the namespace classes its fields are collected from, with their bases."""
    module = tree.parse(SERVER_ARGS)
    found: list[tuple[str, ast.ClassDef]] = []
    own = astutil.find_class(module, "ServerArgs")
    if own is not None:
        found.append((SERVER_ARGS, own))
    listed = astutil.assigned(module, "_INPUT_NAMESPACES")
    for name in ([e.id for e in listed.value.elts if isinstance(e, ast.Name)]  # type: ignore[union-attr]
                 if listed is not None and isinstance(listed.value, (ast.List, ast.Tuple)) else []):
        found.extend(_class_with_bases(tree, SERVER_ARGS, name))
    return found


def _class_with_bases(tree: Tree, path: str, name: str, depth: int = 0) -> list[tuple[str, ast.ClassDef]]:
    module = tree.parse(path)
    if module is None or depth > 6:
        return []
    cls = astutil.find_class(module, name)
    if cls is None:
        for node, original, _tests in astutil.imported_from(module, name):
            target = astutil.file_of(astutil.module_path(path, node), tree.exists)
            if target is not None:
                return _class_with_bases(tree, target, original, depth + 1)
        return []
    out = [(path, cls)]
    for base in cls.bases:
        if isinstance(base, ast.Name):
            out.extend(_class_with_bases(tree, path, base.id, depth + 1))
    return out


def _dataclass_options(tree: Tree, actions: _Actions, out: dict, valueless: dict, lists: _Lists) -> None:
    for path, cls in _namespace_classes(tree):
        for field in astutil.class_fields(cls):
            annotation = field.annotation
            if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("A", "Annotated")
                    and isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) >= 2):
                continue
            kind, *meta = annotation.slice.elts
            arg = next((m for m in meta if isinstance(m, ast.Call) and ast.unparse(m.func) == "Arg"), None)
            if arg is None and not any(isinstance(m, ast.Constant) and isinstance(m.value, str) for m in meta):
                continue
            keywords = {k.arg: k.value for k in arg.keywords if k.arg} if arg is not None else {}
            no_cli = keywords.get("no_cli")
            if isinstance(no_cli, ast.Constant) and no_cli.value is True:
                continue
            cli_name = keywords.get("cli_name")
            name = cli_name.value if isinstance(cli_name, ast.Constant) else \
                "--" + field.target.id.replace("_", "-")  # type: ignore[union-attr]
            names = [name] + (astutil.strings(keywords.get("aliases")) or [])
            action = _action_name(keywords.get("action"))
            names += _negated(names, action)
            type_text = ast.unparse(kind).replace(" ", "")
            no_value = actions.valueless(action) if action is not None else \
                type_text in ("bool", "Optional[bool]", "bool|None", "None|bool")
            for option in names:
                out.setdefault(option, str(Loc(path, field.lineno)))
                if no_value:
                    valueless.setdefault(option, str(Loc(path, field.lineno)))
            _field_list(names, kind, keywords, lists, Loc(path, field.lineno))


def _field_list(names: list[str], kind: ast.AST, keywords: dict[str, ast.AST], lists: _Lists, loc: Loc) -> None:
    """nargs the way ``add_cli_args_from_dataclass`` derives it: an action's ``action_kwargs``;
    a ``List[X]`` field without ``type_parser``: ``Arg(nargs=...)`` or ``"+"``; else ``Arg(nargs)``."""
    if "action" in keywords:
        extra = keywords.get("action_kwargs")
        if isinstance(extra, ast.Dict):
            found = {k.value: v for k, v in zip(extra.keys, extra.values) if isinstance(k, ast.Constant)}
            lists.add(names, found.get("nargs"), _action_name(found.get("type")), loc)
        return
    element = _list_element(_unwrap_optional(kind))
    if element is not None and "type_parser" not in keywords:
        lists.add(names, keywords.get("nargs", ast.Constant("+")), element, loc)
    elif element is None and not ast.unparse(_unwrap_optional(kind)).startswith("Literal"):
        lists.add(names, keywords.get("nargs"), None, loc)


def _options(tree: Tree, facts: Facts) -> None:
    actions = _Actions(tree)
    options: dict[str, str] = {}
    valueless: dict[str, str] = {}
    lists = _Lists()
    _dataclass_options(tree, actions, options, valueless, lists)
    _literal_options(tree, actions, options, valueless, lists)
    options.setdefault("--help", "argparse (add_help)")
    valueless.setdefault("--help", "argparse (add_help)")
    facts.add("long_options", sorted(options), SERVER_ARGS, options)
    facts.add("valueless", sorted(valueless), SERVER_ARGS, valueless)
    facts.add("nargs", dict(sorted(lists.nargs.items())), SERVER_ARGS, lists.at)
    facts.add("list_types", dict(sorted(lists.types.items())), SERVER_ARGS)


# --- architecture sets --------------------------------------------------------------

def _constant(tree: Tree, name: str) -> tuple[list[str], Loc | None]:
    """A module-level literal list/set of strings named ``name`` anywhere under sglang/srt."""
    for path in tree.files("sglang/srt/"):
        if f"{name} =" not in tree.text(path):
            continue
        node = astutil.assigned(tree.parse(path), name)
        if node is not None:
            values = astutil.strings(node.value)
            if values is not None:
                return values, Loc(path, node.lineno)
    return [], None


def _specs(tree: Tree) -> list[tuple[list[str], bool, bool, Loc]]:
    """Registered ``LinearAttnModelSpec``: (architectures, uses radix cache, extra_buffer, loc)."""
    defaults = {"uses_mamba_radix_cache": True, "support_mamba_cache_extra_buffer": False}
    specs = []
    for path in tree.files("sglang/"):
        text = tree.text(path)
        if "LinearAttnModelSpec" not in text:
            continue
        module = tree.parse(path)
        cls = astutil.find_class(module, "LinearAttnModelSpec")
        for field in astutil.class_fields(cls) if cls is not None else []:
            if field.target.id in defaults and isinstance(field.value, ast.Constant):  # type: ignore[union-attr]
                defaults[field.target.id] = field.value.value  # type: ignore[union-attr]
        for node in ast.walk(module) if module is not None else []:
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("LinearAttnModelSpec"):
                specs.append((node, Loc(path, node.lineno)))
    out = []
    for node, loc in specs:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        archs = astutil.strings(keywords.get("arch_names")) or []

        def flag(name: str) -> bool:
            value = keywords.get(name)
            return value.value if isinstance(value, ast.Constant) else bool(defaults[name])
        if archs:
            out.append((archs, flag("uses_mamba_radix_cache"), flag("support_mamba_cache_extra_buffer"), loc))
    return out


def _architectures(tree: Tree, facts: Facts) -> None:
    radix, radix_loc = _constant(tree, "_MAMBA_RADIX_CACHE_ARCHS")
    extra, extra_loc = _constant(tree, "_MAMBA_EXTRA_BUFFER_ARCHS")
    radix_items = {a: str(radix_loc) for a in radix}
    extra_items = {a: str(extra_loc) for a in extra}
    by_layers: dict[str, str] = {}
    module = tree.parse(radix_loc.path) if radix_loc else None
    resolution = astutil.find_function(module, "_mamba_radix_cache_resolution")
    for node in ast.walk(resolution) if resolution is not None else []:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
                and ast.unparse(node.left) == "model_arch" and isinstance(node.comparators[0], ast.Constant):
            by_layers.setdefault(node.comparators[0].value, str(Loc(radix_loc.path, node.lineno)))  # type: ignore
    order = sorted(radix) + [a for a in by_layers if a not in radix]
    radix_items.update({a: loc for a, loc in by_layers.items() if a not in radix_items})
    extra_order = sorted(extra)
    for archs, uses_radix, extra_buffer, loc in _specs(tree):
        for arch in archs:
            if uses_radix and arch not in radix_items:
                order.append(arch)
                radix_items[arch] = str(loc)
            if extra_buffer and arch not in extra_items:
                extra_order.append(arch)
                extra_items[arch] = str(loc)
    facts.add("radix_archs", order, radix_loc or "sglang/srt", radix_items)
    facts.add("extra_buffer_archs", extra_order, extra_loc or "sglang/srt", extra_items)
    at = Loc(radix_loc.path, resolution.lineno) if radix_loc and resolution else "sglang/srt"
    facts.add("radix_by_layer_types", list(by_layers), at, by_layers)
    backends, loc = _constant(tree, "LINEAR_ATTN_KERNEL_BACKEND_CHOICES")
    facts.add("linear_attn_backends", backends, loc or "sglang/srt")


# --- rules --------------------------------------------------------------------------

def _rules(tree: Tree, facts: Facts) -> None:
    handler = None
    for path in tree.files("sglang/srt/"):
        if not path.startswith(_RULE_FILES):
            continue
        text = tree.text(path)
        if not _RULE_TEXT.search(text):
            continue
        module = tree.parse(path)
        if module is None:
            continue
        for rule in astutil.refusals(module, path):
            if not _RULE_TEXT.search(rule.message + " ".join(rule.conditions)):
                continue
            # the memory pools' own invariants are not launch checks unless they name an option
            if path.startswith("sglang/srt/mem_cache/") and not _NAMES_OPTION.search(rule.message):
                continue
            facts.rules.append(rule)
        for name in ("handle_linear_attn_backend", "_handle_linear_attn_backend"):
            found = astutil.find_function(module, name)
            if found is not None and "enable_linear_replayssm" in ast.unparse(found):
                handler = f"{path}:{found.lineno}-{found.end_lineno} ({name})"
    if handler:
        facts.add("validator_source", handler, handler.split(" ")[0])
