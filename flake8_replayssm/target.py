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
from typing import Sequence

from .files import MAX_SOURCE_BYTES, read_bounded
from .release_sets import CLAUSE, admits_all, exact_pin, how_admitted, releases_of
from .unchecked import NotChecked
from .versions import normalize_version, version_key

#: a package and its version specifiers (PEP 440) in a requirements line or a dependency string
_PIN = r"""(?ix)
    (?:^|[\s"'\[,]){package}\s*(?:\[[^\]]*\])?\s*
    (?P<spec>(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*
             (?:\s*,\s*(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*)*)"""
_LOCK_BLOCK = r'(?m)^name\s*=\s*"{package}"\s*\nversion\s*=\s*"([^"]+)"'
PIN_FILES = ("requirements.txt", "requirements.in", "requirements-serve.txt", "constraints.txt",
             "pyproject.toml", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")


@lru_cache(maxsize=64)
def project_pin(root: Path | None, package: str, known: tuple[str, ...]) -> tuple[tuple[str, ...], str] | None:
    """(versions, reason) the project's ``package`` requirements admit together, if any.

    ``package`` is an engine's distribution (``vllm``); ``known`` its releases this tool
    knows, oldest first.  Every requirement found must hold, as pip resolves them: an exact
    pin (``vllm==0.28.0``, ``vllm[audio]==0.28.0``, a lock file's block) admits that version,
    a range (``vllm>=0.28,<0.30``) the known releases inside it; files that contradict each
    other pin nothing.
    """
    if root is None:
        return None
    pin = re.compile(_PIN.replace("{package}", re.escape(package)))
    lock_block = re.compile(_LOCK_BLOCK.replace("{package}", re.escape(package)))
    found: list[tuple[list[tuple[str, str]], str]] = []  # (clauses, where they were written)
    for name in PIN_FILES:
        path = root / name
        try:  # regular files only, bounded: a FIFO or /dev/zero named like a pin file is skipped
            text = read_bounded(str(path), MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except NotChecked:
            continue
        for match in pin.finditer(text):
            spec = re.sub(r"\s+", "", match.group("spec"))
            clauses = CLAUSE.findall(spec)
            found.append((clauses, f"{package}{spec} {'pinned ' if exact_pin(clauses) else ''}in {name}"))
        for match in lock_block.finditer(text):
            version = normalize_version(match.group(1))
            found.append(([("==", version)], f"{package}=={version} pinned in {name}"))
    if not found:
        return None
    exact = {pinned for clauses, _ in found if (pinned := exact_pin(clauses)) is not None}
    pool = exact if exact else known  # an exact pin of a release this tool does not know counts too
    versions = tuple(sorted((v for v in pool if all(admits_all(c, v) for c, _ in found)), key=version_key))
    if not versions:
        return None
    wheres = " and ".join(dict.fromkeys(where for _, where in found))
    if exact:
        return versions, wheres
    return versions, f"{wheres} (every known release {'it admits' if len(found) == 1 else 'they admit'})"


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


def candidates(hint: str | None, package: str, known: tuple[str, ...], root: Path | None, *,
               in_file: Sequence[tuple[str, str]] = (), ranges: str = "all") -> list[tuple[tuple[str, ...], str]]:
    """(versions, reason) of every source that names the release(s), strongest first, after the
    explicit option: the image tag next to the launch (``hint``: a version, ``latest``, or
    ``all`` for a tag the file leaves to a build argument), an install command in the same
    file (``in_file``: (spec, where) pairs, :mod:`.install_pins`), the project's pins, the
    installed distribution.  ``known`` is oldest first; with ``ranges = "newest"`` a range is
    only the newest release it admits."""
    found: list[tuple[tuple[str, ...], str]] = []
    if hint:
        versions = releases_of(hint, known)
        if hint == "all":
            reason = "an image tag next to the launch that the file leaves to a build argument or variable " \
                     "(every known release)"
        else:
            how = how_admitted(hint)
            reason = f"image tag {hint if how else 'v' + hint} next to the launch" + (f" ({how})" if how else "")
        found.append((versions, reason))
    if in_file:
        versions = tuple(sorted({v for spec, _ in in_file for v in releases_of(spec, known)}, key=version_key))
        wheres = " and ".join(where for _, where in in_file)
        how = "; ".join(dict.fromkeys(h for spec, _ in in_file if (h := how_admitted(spec))))
        found.append((versions, wheres + (f" ({how})" if how else "")))
    pin = project_pin(root, package, known)
    if pin:
        found.append(pin)
    installed = installed_version(package)
    if installed:
        found.append(((normalize_version(installed),), f"installed {package} {installed}"))
    out = [(versions, reason) for versions, reason in found if versions]
    if ranges == "newest":
        out = [(versions[-1:], reason + ("; the newest of them" if len(versions) > 1 else ""))
               for versions, reason in out]
    return out
