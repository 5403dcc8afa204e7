"""Which model classes a registry names, per platform, and which interfaces they carry.

vLLM's registry (``model_executor/models/registry.py``) maps an architecture to
``(module, class)``.  The class is found the way Python would: defined in the module,
or imported into it — and a package's ``__init__`` may import a different class per
platform (``vllm/models/kimi_k3/__init__.py``: ``if current_platform.is_rocm(): from
.amd... import``).  Such ``if`` chains are evaluated for each platform; a test this
module cannot evaluate makes the class unknown for that platform (reported, never
guessed).  A class supports an interface when it, or a base class it can be traced to,
lists the interface among its bases or sets the interface's flag (``supports_x = True``).
"""

from __future__ import annotations

import ast

from . import astutil
from .tree import Loc, Tree

PLATFORMS = ("cuda", "rocm", "xpu")

#: what a platform test answers on each platform (``current_platform.is_rocm()``...)
_PLATFORM_CALLS = {
    "is_cuda": {"cuda"}, "is_cuda_alike": {"cuda", "rocm"}, "is_rocm": {"rocm"},
    "is_xpu": {"xpu"}, "is_tpu": {"tpu"}, "is_cpu": {"cpu"}, "is_unspecified": set(),
}


class Unknown(Exception):
    """A platform test the reader cannot evaluate."""


def platform_test(test: ast.expr, platform: str) -> bool:
    """Evaluate an ``if`` test of an import block on ``platform``; Unknown if it is not one."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return not platform_test(test.operand, platform)
    if isinstance(test, ast.BoolOp):
        values = [platform_test(v, platform) for v in test.values]
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in _PLATFORM_CALLS:
        return platform in _PLATFORM_CALLS[test.func.attr]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) \
            and isinstance(test.left, ast.Attribute) and test.left.attr == "device_type" \
            and isinstance(test.comparators[0], ast.Constant):
        equal = test.comparators[0].value == platform
        return equal if isinstance(test.ops[0], ast.Eq) else not equal
    raise Unknown(ast.unparse(test))


class ClassIndex:
    """Class lookup across a wheel, following imports, per platform."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._seen: dict[tuple[str, str, str, str], bool] = {}

    def find(self, path: str, name: str, platform: str, depth: int = 0) -> tuple[str, ast.ClassDef] | None:
        """The file and definition of class ``name`` as module ``path`` binds it on ``platform``."""
        module = self.tree.parse(path)
        if module is None or depth > 8:
            return None
        cls = astutil.find_class(module, name)
        if cls is not None:
            return path, cls
        for node, original, tests in astutil.imported_from(module, name):
            if not all(platform_test(test, platform) == taken for test, taken in tests):
                continue
            target = astutil.file_of(astutil.module_path(path, node), self.tree.exists)
            if target is not None:
                return self.find(target, original, platform, depth + 1)
        return None

    def has_interface(self, path: str, cls: ast.ClassDef, interface: str, flag: str, platform: str,
                      depth: int = 0) -> bool:
        """Whether ``cls`` (or a base traced through the wheel) is ``interface`` or sets ``flag = True``."""
        key = (path, cls.name, interface, platform)
        if key not in self._seen:
            self._seen[key] = self._has_interface(path, cls, interface, flag, platform, depth)
        return self._seen[key]

    def _has_interface(self, path: str, cls: ast.ClassDef, interface: str, flag: str, platform: str,
                       depth: int) -> bool:
        for node in cls.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == flag for t in targets) \
                        and isinstance(node.value, ast.Constant) and node.value.value is True:
                    return True
        if depth > 8:
            return False
        for base in cls.bases:
            base_name = base.id if isinstance(base, ast.Name) else \
                base.attr if isinstance(base, ast.Attribute) else None
            if base_name is None:
                continue
            if base_name == interface:
                return True
            found = self.find(path, base_name, platform)
            if found is not None and self.has_interface(found[0], found[1], interface, flag, platform, depth + 1):
                return True
        return False


def registry_entries(tree: Tree, path: str) -> dict[str, tuple[str, str, Loc]]:
    """Every ``"Arch": ("module", "Class")`` of the registry's dict literals, with its line."""
    module = tree.parse(path)
    out: dict[str, tuple[str, str, Loc]] = {}
    for node in (module.body if module is not None else []):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                pair = astutil.strings(value)
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and pair and len(pair) == 2:
                    out[key.value] = (pair[0], pair[1], Loc(path, key.lineno))
    return out


def supporting(tree: Tree, registry: dict[str, tuple[str, str, Loc]], module_file, interface: str, flag: str,
               ) -> tuple[dict[str, list[str]], dict[str, str], list[str]]:
    """Per platform, the registered architectures whose class supports ``interface``.

    Returns (platform -> sorted architectures, architecture -> "registry line -> class
    line", notes on classes that could not be traced).  ``module_file`` maps the
    registry's module name to a file of the wheel.
    """
    index = ClassIndex(tree)
    per_platform: dict[str, list[str]] = {p: [] for p in PLATFORMS}
    items: dict[str, str] = {}
    notes: list[str] = []
    for arch, (module_name, class_name, loc) in sorted(registry.items()):
        path = module_file(module_name)
        if path is None:
            notes.append(f"{arch}: module {module_name} is not in the wheel")
            continue
        unknown: list[str] = []
        for platform in PLATFORMS:
            try:
                found = index.find(path, class_name, platform)
            except Unknown as exc:
                unknown.append(platform)
                test = str(exc)
                continue
            if found is not None and index.has_interface(found[0], found[1], interface, flag, platform):
                per_platform[platform].append(arch)
                items.setdefault(arch, f"{loc} -> {found[0]}:{found[1].lineno}")
        if unknown:
            notes.append(f"{arch}: cannot tell which class {path} binds on {', '.join(unknown)} (if {test})")
    return per_platform, items, notes
