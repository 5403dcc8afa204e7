"""Which release of an engine a launch meets: the candidates, in the order they count.

Order (DESIGN.md): explicit option > a version pinned next to the launch (the
engine's image tag in the same stage, service or container) > the project's pins
(requirements files, pyproject dependencies, lock files) > the installed
distribution (metadata only; the engine is never imported) > the newest release
the tool knows.  The order and the reading of pins and metadata are the same for
every engine; each engine's ``target`` module maps a version to one of its release
tables (``engines/<name>/target.py``).
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .files import MAX_SOURCE_BYTES, read_bounded
from .unchecked import NotChecked
from .versions import normalize_version, version_key

#: a package and its version specifiers (PEP 440) in a requirements line or a dependency string
_PIN = r"""(?ix)
    (?:^|[\s"'\[,]){package}\s*(?:\[[^\]]*\])?\s*
    (?P<spec>(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*
             (?:\s*,\s*(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*)*)"""
_CLAUSE = re.compile(r"(===|==|~=|!=|<=|>=|<|>)\s*v?([0-9][0-9a-z.*+!]*)", re.I)
_LOCK_BLOCK = r'(?m)^name\s*=\s*"{package}"\s*\nversion\s*=\s*"([^"]+)"'
PIN_FILES = ("requirements.txt", "requirements.in", "requirements-serve.txt", "constraints.txt",
             "pyproject.toml", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")


def _allows(op: str, wanted: str, version: tuple[int, ...]) -> bool:
    """Whether one PEP 440 clause admits ``version`` (a release's key)."""
    if wanted.endswith(".*"):
        prefix = version_key(wanted[:-2])
        inside = version[:len(prefix)] == prefix
        return inside if op in ("==", "===") else not inside if op == "!=" else False
    key = version_key(normalize_version(wanted))
    if op == "~=":  # compatible release: >= X.Y.Z and the same X.Y (or X for ~=X.Y)
        depth = max(1, len(wanted.split(".")) - 1)
        return version >= key and version[:depth] == key[:depth]
    return {"==": version == key, "===": version == key, "!=": version != key, "<": version < key,
            "<=": version <= key, ">": version > key, ">=": version >= key}[op]


def pinned_version(spec: str, known: Iterable[str]) -> tuple[str, str] | None:
    """(version, how) for a specifier: an exact pin is that version (known or not); a range is
    the newest of the ``known`` releases it admits (``vllm>=0.28,<0.30`` -> 0.29.0); None when
    it admits none of them."""
    clauses = _CLAUSE.findall(spec)
    if len(clauses) == 1 and clauses[0][0] in ("==", "===") and "*" not in clauses[0][1]:
        return normalize_version(clauses[0][1]), "pinned"
    admitted = [v for v in known if all(_allows(op, want, version_key(v)) for op, want in clauses)]
    if not admitted:
        return None
    return max(admitted, key=version_key), "the newest release it admits"


@lru_cache(maxsize=64)
def project_pin(root: Path | None, package: str, known: tuple[str, ...]) -> tuple[str, str] | None:
    """(version, reason) of the project's ``package`` requirement, if its files agree on one.

    ``package`` is an engine's distribution (``vllm``); ``known`` its releases this tool
    knows.  An exact pin (``vllm==0.28.0``, ``vllm[audio]==0.28.0``, a lock file's block) is
    that version; a range (``vllm>=0.28,<0.29``) the newest known release it admits.
    """
    if root is None:
        return None
    pin = re.compile(_PIN.replace("{package}", re.escape(package)))
    lock_block = re.compile(_LOCK_BLOCK.replace("{package}", re.escape(package)))
    found: dict[str, str] = {}
    for name in PIN_FILES:
        path = root / name
        try:  # regular files only, bounded: a FIFO or /dev/zero named like a pin file is skipped
            text = read_bounded(str(path), MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except NotChecked:
            continue
        for match in pin.finditer(text):
            spec = re.sub(r"\s+", "", match.group("spec"))
            pinned = pinned_version(spec, known)
            if pinned is not None:
                version, how = pinned
                found.setdefault(version, f"{package}{spec} pinned in {name}" if how == "pinned"
                                 else f"{package}{spec} in {name} ({how})")
        for match in lock_block.finditer(text):
            version = normalize_version(match.group(1))
            found.setdefault(version, f"{package}=={version} pinned in {name}")
    if len(found) != 1:
        return None
    version, reason = next(iter(found.items()))
    return version, reason


@lru_cache(maxsize=8)
def installed_version(package: str) -> str | None:
    """The version of the ``package`` distribution on ``sys.path`` (its metadata, never the code)."""
    return _installed(package)


def _installed(package: str) -> str | None:
    """A look at the folders' names first: importing :mod:`importlib.metadata` costs a short
    run more than the rest of its set-up, and most linting machines have no vLLM (or SGLang)."""
    if not _metadata_on_path(package):
        return None
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _metadata_on_path(package: str) -> bool:
    """Whether a folder of ``sys.path`` may hold ``package``'s metadata (``vllm-*.dist-info``,
    ``vllm.egg-info``, ``vllm.egg-link``, any case): False only when none can."""
    prefixes = (f"{package}-", f"{package}.")
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            if os.path.isfile(folder):
                return True  # a zip on sys.path: let importlib.metadata look inside
            continue
        for name in names:
            lower = name.lower()
            if lower.startswith(prefixes) and lower.endswith((".dist-info", ".egg-info", ".egg-link")):
                return True
    return False


def candidates(hint: str | None, package: str, known: tuple[str, ...],
               root: Path | None) -> list[tuple[str, str]]:
    """(version, reason) of every source that names the release, strongest first, after the
    explicit option: the image tag next to the launch (``hint``), the project's pin, the
    installed distribution."""
    found = []
    if hint:
        found.append((hint, f"image tag v{hint} next to the launch"))
    pin = project_pin(root, package, known)
    if pin:
        found.append(pin)
    installed = installed_version(package)
    if installed:
        found.append((installed, f"installed {package} {installed}"))
    return found
