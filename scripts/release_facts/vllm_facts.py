"""The ReplaySSM facts of one vLLM wheel, read statically (where: README "Adding a release").

Generated facts (the names are those ``tables.py`` writes):

- ``long_options``: every long option the linter judges abbreviations against — the
  fields of ``EngineArgs``/``AsyncEngineArgs`` and of the frontend's ``*FrontendArgs``
  dataclasses (vLLM makes ``--field-name`` of each), and the literal ``add_argument``
  names of the serve parser's files and of ``ABBREVIATION_PARSERS``.
- ``flags_without_value``: the serve parser's options that take no value (bool fields:
  ``BooleanOptionalAction``; ``store_true`` literals), as field names.
- ``supported.<platform>`` / ``cache_mode_all_classes``: the registry's architectures
  whose class carries ``SupportsReplaySSM`` / ``SupportsMambaPrefixCaching``.
- ``kimi``: the architecture names the ReplaySSM validator routes to RecoverSSM.
- ``cache_mode_choices``, ``cache_mode_deprecated``, ``disable_aliases``,
  ``backends``, ``backend_default``, ``buffer_default``, ``runner``, ``v1_spec_methods``.

Rules: every ``raise`` of the ReplaySSM validators (``validate_mamba_*`` in
``vllm/config/vllm.py``) and every refusal anywhere whose message names ReplaySSM or
RecoverSSM, the Model Runner V2 fallbacks (``unsupported.append(...)``), and the
prefix-caching default.
"""

from __future__ import annotations

import ast
import re

from . import astutil, classes
from .facts import Facts
from .tree import Loc, Tree

ARG_UTILS = "vllm/engine/arg_utils.py"
VALIDATOR = "vllm/config/vllm.py"
REGISTRY = "vllm/model_executor/models/registry.py"
CACHE = "vllm/config/cache.py"
MAMBA = "vllm/config/mamba.py"
ARGPARSE_UTILS = "vllm/utils/argparse_utils.py"

#: Parsers besides `vllm serve`'s whose literal options the committed abbreviation list
#: holds (options.toml [abbreviations]): the `vllm` top level (--version) and the bench
#: parsers that embed engine options.  Kept as they were to reproduce the committed list;
#: see the README's "Adding a release" for why this set is a decision, not a fact.
ABBREVIATION_PARSERS = (
    "vllm/entrypoints/cli/main.py",
    "vllm/benchmarks/serve.py",
    "vllm/benchmarks/sweep/serve.py",
    "vllm/benchmarks/forward/main.py",
)

_VALUELESS_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version",
                      "BooleanOptionalAction", "EnableDisableAction"}
_BOOL_ANNOTATIONS = {"bool", "bool | None", "Optional[bool]", "None | bool"}
_NAMES_REPLAYSSM = re.compile(r"replayssm|recoverssm", re.IGNORECASE)
#: a refusal outside the validators is listed when it names a command-line option too
#: (``--use-replayssm requires tensor-parallel heads ...``), not a kernel's internal check
_NAMES_OPTION = re.compile(r"--[a-z]")


def extract(tree: Tree) -> Facts:
    facts = Facts("vllm", tree.release("vllm"))
    _options(tree, facts)
    _architectures(tree, facts)
    _cache_mode(tree, facts)
    _backends(tree, facts)
    _runner(tree, facts)
    _rules(tree, facts)
    return facts


# --- options ------------------------------------------------------------------------

def _frontend_file(tree: Tree) -> str | None:
    """The file that defines ``make_arg_parser`` (moved between releases)."""
    for path in tree.files("vllm/entrypoints/"):
        if path.endswith("cli_args.py") and astutil.find_function(tree.parse(path), "make_arg_parser"):
            return path
    return None


def _fields(tree: Tree, path: str, accept) -> list[tuple[str, str, Loc]]:
    """(name, annotation, loc) of the annotated fields of the classes ``accept`` names."""
    out = []
    module = tree.parse(path)
    for node in (module.body if module is not None else []):
        if isinstance(node, ast.ClassDef) and accept(node.name):
            for field in astutil.class_fields(node):
                if not field.target.id.startswith("_"):  # type: ignore[union-attr]
                    out.append((field.target.id, ast.unparse(field.annotation),  # type: ignore[union-attr]
                                Loc(path, field.lineno)))
    return out


def _literal_options(tree: Tree, path: str) -> list[tuple[str, bool, Loc]]:
    """(``--name``, takes no value, loc) of every ``add_argument`` with literal names."""
    out = []
    module = tree.parse(path)
    for node in ast.walk(module) if module is not None else []:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            action = next((k.value for k in node.keywords if k.arg == "action"), None)
            action_name = None
            if isinstance(action, ast.Constant):
                action_name = action.value
            elif isinstance(action, (ast.Name, ast.Attribute)):
                action_name = action.id if isinstance(action, ast.Name) else action.attr
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"):
                    out.append((arg.value, action_name in _VALUELESS_ACTIONS, Loc(path, node.lineno)))
    return out


def _options(tree: Tree, facts: Facts) -> None:
    frontend = _frontend_file(tree)
    fields = _fields(tree, ARG_UTILS, lambda n: n in ("EngineArgs", "AsyncEngineArgs"))
    serve_files = [ARG_UTILS]
    if frontend is not None:
        fields += _fields(tree, frontend, lambda n: n.endswith("FrontendArgs"))
        serve_files.append(frontend)
    else:
        facts.notes.append("no make_arg_parser under vllm/entrypoints: frontend options not read")
    long_items: dict[str, str] = {}
    valueless: dict[str, str] = {}
    for name, annotation, loc in fields:
        option = "--" + name.replace("_", "-")
        long_items.setdefault(option, str(loc))
        if annotation in _BOOL_ANNOTATIONS:
            valueless.setdefault(name, str(loc))
    for path in serve_files:
        for option, no_value, loc in _literal_options(tree, path):
            long_items.setdefault(option, str(loc))
            if no_value:
                valueless.setdefault(option[2:].replace("-", "_"), str(loc))
    for path in ABBREVIATION_PARSERS:
        for option, _no_value, loc in _literal_options(tree, path):
            long_items.setdefault(option, str(loc))
    facts.add("long_options", sorted(long_items), f"{ARG_UTILS}, {frontend}", long_items)
    facts.add("flags_without_value", sorted(valueless), f"{ARG_UTILS}, {frontend}", valueless)


# --- architectures ------------------------------------------------------------------

def _module_file(tree: Tree):
    def find(module_name: str) -> str | None:
        dotted = module_name if module_name.startswith("vllm.") else f"vllm.model_executor.models.{module_name}"
        return astutil.file_of(dotted, tree.exists)
    return find


def _architectures(tree: Tree, facts: Facts) -> None:
    registry = classes.registry_entries(tree, REGISTRY)
    per_platform, items, notes = classes.supporting(
        tree, registry, _module_file(tree), "SupportsReplaySSM", "supports_replayssm")
    facts.notes.extend(notes)
    for platform in classes.PLATFORMS:
        arch_items = {a: items[a] for a in per_platform[platform]}
        facts.add(f"supported.{platform}", per_platform[platform], REGISTRY, arch_items)
    all_platforms, all_items, notes = classes.supporting(
        tree, registry, _module_file(tree), "SupportsMambaPrefixCaching", "supports_mamba_prefix_caching")
    facts.notes.extend(n for n in notes if n not in facts.notes)
    facts.add("mamba_prefix_caching_classes", all_platforms["cuda"], REGISTRY,
              {a: all_items[a] for a in all_platforms["cuda"]})
    validator = astutil.find_function(tree.parse(VALIDATOR), "validate_mamba_cached_kernel")
    kimi: dict[str, str] = {}
    for node in ast.walk(validator) if validator is not None else []:
        names = astutil.strings(node) if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Call)) else None
        if names and all(n.endswith(("ForCausalLM", "ForConditionalGeneration")) for n in names):
            for name in names:
                kimi.setdefault(name, str(Loc(VALIDATOR, node.lineno)))
    at = Loc(VALIDATOR, validator.lineno) if validator is not None else VALIDATOR
    facts.add("kimi", sorted(kimi), at, kimi)


# --- cache mode, backends -----------------------------------------------------------

def _cache_mode(tree: Tree, facts: Facts) -> None:
    alias = astutil.assigned(tree.parse(CACHE), "MambaCacheMode")
    choices: list[str] = []
    if alias is not None and isinstance(alias.value, ast.Subscript):
        choices = astutil.strings(alias.value.slice) or []
    facts.add("cache_mode_choices", choices, Loc(CACHE, alias.lineno) if alias else CACHE)
    prefix = facts.facts["mamba_prefix_caching_classes"]
    facts.add("cache_mode_all_classes", prefix.value if "all" in choices else [], prefix.at,
              prefix.items if "all" in choices else {})
    module = tree.parse(ARG_UTILS)
    passed = [node for node in ast.walk(module) if isinstance(node, ast.Call)
              and ast.unparse(node.func).endswith("CacheConfig")
              and any(k.arg == "mamba_cache_mode" for k in node.keywords)] if module is not None else []
    where = next((loc for option, _v, loc in _literal_options(tree, ARG_UTILS) if option == "--mamba-cache-mode"),
                 ARG_UTILS)
    facts.add("cache_mode_deprecated", not passed, Loc(ARG_UTILS, passed[0].lineno) if passed else where)
    helper = astutil.find_class(tree.parse(ARGPARSE_UTILS), "EnableDisableAction")
    facts.add("disable_aliases", helper is not None,
              Loc(ARGPARSE_UTILS, helper.lineno) if helper is not None else ARGPARSE_UTILS)


def _backends(tree: Tree, facts: Facts) -> None:
    enum = astutil.find_class(tree.parse(MAMBA), "MambaBackendEnum")
    members = {}
    for node in enum.body if enum is not None else []:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            members[node.value.value] = str(Loc(MAMBA, node.lineno))
    facts.add("backends", list(members), Loc(MAMBA, enum.lineno) if enum else MAMBA, members)
    for name, _annotation, loc in _fields(tree, ARG_UTILS, lambda n: n == "EngineArgs"):
        if name == "mamba_backend":
            field = _field_node(tree, loc)
            default = field.value if field is not None else None
            value = default.attr.lower() if isinstance(default, ast.Attribute) else \
                default.value if isinstance(default, ast.Constant) else None
            facts.add("backend_default", value, loc)
    for name, _annotation, loc in _fields(tree, CACHE, lambda n: n == "CacheConfig"):
        if name == "replayssm_buffer_len":
            field = _field_node(tree, loc)
            default = field.value if field is not None else None
            if isinstance(default, ast.Call):
                default = next((k.value for k in default.keywords if k.arg == "default"), None)
            facts.add("buffer_default", default.value if isinstance(default, ast.Constant) else None, loc)


def _field_node(tree: Tree, loc: Loc) -> ast.AnnAssign | None:
    for node in ast.walk(tree.parse(loc.path)):
        if isinstance(node, ast.AnnAssign) and node.lineno == loc.line:
            return node
    return None


# --- Model Runner V2 ----------------------------------------------------------------

def _runner(tree: Tree, facts: Facts) -> None:
    """``runner``: "v1" when the ReplaySSM validator never reads the runner, "v2" when it
    does and an unset VLLM_USE_V2_MODEL_RUNNER ends in ``return True`` (V2 by default)."""
    module = astutil.link(tree.parse(VALIDATOR))
    validator = astutil.find_function(module, "validate_mamba_cached_kernel")
    prop = astutil.find_function(module, "use_v2_model_runner")
    reads = validator is not None and "use_v2_model_runner" in ast.unparse(validator)
    last = prop.body[-1] if prop is not None and prop.body else None
    v2 = isinstance(last, ast.Return) and isinstance(last.value, ast.Constant) and last.value.value is True
    value = "v2" if reads and v2 else "v1" if not reads else "unknown"
    facts.add("runner", value, Loc(VALIDATOR, (last or prop or validator).lineno) if (prop or validator) else VALIDATOR)
    collector = astutil.find_function(module, "_get_v2_model_runner_unsupported_features")
    methods: dict[str, str] = {}
    for node in ast.walk(collector) if collector is not None else []:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
                and ast.unparse(node.left).endswith(".method"):
            for name in astutil.strings(node.comparators[0]) or []:
                methods.setdefault(name, str(Loc(VALIDATOR, node.lineno)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            facts.rules.append(astutil.Rule("v1 fallback", astutil.qualified_name(node),
                                            tuple(astutil.conditions(node)), astutil.message(node.args[0], collector),
                                            Loc(VALIDATOR, node.lineno)))
    if collector is not None:
        facts.add("v1_spec_methods", list(methods), Loc(VALIDATOR, collector.lineno), methods)


# --- rules --------------------------------------------------------------------------

def _rules(tree: Tree, facts: Facts) -> None:
    module = tree.parse(VALIDATOR)
    first = astutil.find_function(module, "validate_mamba_block_size")
    last = astutil.find_function(module, "validate_mamba_cached_kernel")
    if first is not None and last is not None:
        source = (f"{VALIDATOR}:{first.lineno}-{last.end_lineno} "
                  "(validate_mamba_block_size, validate_mamba_cached_kernel)")
        facts.add("validator_source", source, Loc(VALIDATOR, first.lineno))
    seen = set()
    for rule in astutil.refusals(module, VALIDATOR) if module is not None else []:
        if rule.function.split(".")[-1].startswith("validate_mamba") or _NAMES_REPLAYSSM.search(rule.message):
            facts.rules.append(rule)
            seen.add(rule.loc)
    for path in tree.files("vllm/"):
        if path == VALIDATOR or not _NAMES_REPLAYSSM.search(tree.text(path)):
            continue
        for rule in astutil.refusals(tree.parse(path), path) if tree.parse(path) is not None else []:
            if _NAMES_REPLAYSSM.search(rule.message) and _NAMES_OPTION.search(rule.message) \
                    and rule.loc not in seen:
                facts.rules.append(rule)
    module = astutil.link(tree.parse(ARG_UTILS))
    for node in ast.walk(module) if module is not None else []:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and "prefix_caching" in t.id
                                                and "default" in t.id for t in node.targets):
            facts.rules.append(astutil.Rule("default", astutil.qualified_name(node), tuple(astutil.conditions(node)),
                                            ast.unparse(node), Loc(ARG_UTILS, node.lineno)))
