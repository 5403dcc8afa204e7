"""Which vLLM release a verdict is for, and why.

Order (DESIGN.md): explicit option > a version pinned next to the launch (the
``vllm/vllm-openai:vX.Y.Z`` image of the same stage, service or container) >
the project's pins (requirements files, pyproject dependencies, lock files) >
the installed ``vllm`` distribution (metadata only; vLLM is never imported) >
the newest release this tool knows.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .config import ConfigError, LintConfig
from .files import MAX_SOURCE_BYTES, read_bounded
from .knowledge import Knowledge, Release, is_version, normalize_version, version_key
from .unchecked import NotChecked

#: a package and its version specifiers (PEP 440) in a requirements line or a dependency string
_PIN = r"""(?ix)
    (?:^|[\s"'\[,]){package}\s*(?:\[[^\]]*\])?\s*
    (?P<spec>(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*
             (?:\s*,\s*(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*)*)"""
_CLAUSE = re.compile(r"(===|==|~=|!=|<=|>=|<|>)\s*v?([0-9][0-9a-z.*+!]*)", re.I)
_LOCK_BLOCK = r'(?m)^name\s*=\s*"{package}"\s*\nversion\s*=\s*"([^"]+)"'
PIN_FILES = ("requirements.txt", "requirements.in", "requirements-serve.txt", "constraints.txt",
             "pyproject.toml", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")


@dataclass(frozen=True)
class Target:
    """The release a launch is judged for.

    ``release`` is None when the launch targets a vLLM release older than the
    first with ReplaySSM (``version`` says which): the flags do not exist there,
    so the launch is judged for that alone (RSM104), never by another release.
    """

    release: Release | None
    reason: str
    version: str = ""

    @property
    def name(self) -> str:
        return self.release.version if self.release is not None else self.version


def closest_release(version: str, know: Knowledge) -> tuple[Release | None, str]:
    """The known release that judges ``version``: itself, or the newest one before it.

    None with an empty note for a release older than every known one (it has no
    ReplaySSM); None with a note for text that is not a version.
    """
    if not is_version(version):
        return None, f"{version!r} is not a vLLM version (expected e.g. 0.33.0)"
    wanted = normalize_version(version)
    exact = know.releases.get(wanted)
    if exact is not None:
        return exact, ""
    key = version_key(wanted)
    older = [r for r in know.releases.values() if r.key <= key]
    if not older:
        return None, ""
    best = max(older, key=lambda r: r.key)
    return best, f"vLLM {wanted} is not in the release table; judged by {best.version}"


def _target(version: str, reason: str, know: Knowledge) -> Target | None:
    release, note = closest_release(version, know)
    if release is None:
        return Target(None, reason, normalize_version(version)) if not note else None
    return Target(release, reason + (f"; {note}" if note else ""), release.version)


def explicit_release(config: LintConfig, know: Knowledge) -> Target | None:
    if not config.vllm_version:
        return None
    target = _target(config.vllm_version, config.vllm_version_source, know)
    if target is None:
        raise ConfigError(closest_release(config.vllm_version, know)[1])
    return target


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
def project_pin(root: Path | None, package: str = "vllm",
                known: tuple[str, ...] | None = None) -> tuple[str, str] | None:
    """(version, reason) of the project's ``package`` requirement, if its files agree on one.

    ``package`` is ``vllm`` or ``sglang``; ``known`` its releases this tool knows (vLLM's by
    default).  An exact pin (``vllm==0.28.0``, ``vllm[audio]==0.28.0``, a lock file's block) is
    that version; a range (``vllm>=0.28,<0.29``) the newest known release it admits.
    """
    if root is None:
        return None
    if known is None:
        from .knowledge import knowledge

        known = tuple(knowledge().releases)
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


@lru_cache(maxsize=1)
def installed_vllm() -> str | None:
    """The version of the ``vllm`` distribution on ``sys.path`` (its metadata, never the code)."""
    return _installed("vllm")


@lru_cache(maxsize=4)
def installed_version(package: str) -> str | None:
    """The same for another engine's distribution (``sglang``)."""
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


def resolve_target(config: LintConfig, hint: str | None, know: Knowledge) -> Target:
    """The release for one launch (``hint`` is its image tag's release, if any)."""
    explicit = explicit_release(config, know)
    if explicit is not None:
        return explicit
    candidates = []
    if hint:
        candidates.append((hint, f"image tag v{hint} next to the launch"))
    pin = project_pin(config.project_root)
    if pin:
        candidates.append(pin)
    installed = installed_vllm()
    if installed:
        candidates.append((installed, f"installed vllm {installed}"))
    for version, reason in candidates:
        target = _target(version, reason, know)
        if target is not None:
            return target
    newest = know.newest
    return Target(newest, f"newest release known ({newest.version})", newest.version)
