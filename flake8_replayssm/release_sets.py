"""Sets of releases: what ``0.30.0,0.33.0``, ``>=0.30``, ``all`` and ``latest`` admit, and how
a finding names the releases it holds on.

A launch is meant to work on every release its target admits (DESIGN.md, "Target release"):
a range pin (``vllm>=0.28,<0.34``), an image tag from a build argument without a default, or
an explicit ``--vllm-version '>=0.30'`` is a promise about each of them.  This module reads
those forms, the same way for every engine (their release numbers are alike,
:mod:`.versions`), and writes the label a finding carries: ``0.30.0–0.32.0`` for a run of
consecutive known releases, ``0.30.0, 0.33.0`` otherwise.

A spec is one of:

- a version (``0.33.0``, ``v0.33``): that release, known or not (the engine judges an
  unknown one by the newest known release before it, as ever);
- a list of versions (``0.30.0,0.33.0``): each of them;
- PEP 440 clauses (``>=0.30``, ``>=0.28,<0.34``, ``~=0.30.0``, ``==0.31.*``): every known
  release all of them admit;
- ``all`` (or ``*``): every known release; ``latest`` (or ``newest``): the newest.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .versions import is_version, normalize_version, version_key

#: one PEP 440 clause: operator and version (a trailing ``.*`` for prefix matching)
CLAUSE = re.compile(r"(===|==|~=|!=|<=|>=|<|>)\s*v?([0-9][0-9a-z.*+!]*)", re.I)
_WHOLE_CLAUSE = re.compile(r"\s*(?:===|==|~=|!=|<=|>=|<|>)\s*v?[0-9][0-9a-z.*+!]*\s*\Z", re.I)
_WILDCARD = re.compile(r"v?\d+(?:\.\d+)*\.\*\Z", re.I)
ALL_WORDS = frozenset({"all", "*"})
LATEST_WORDS = frozenset({"latest", "newest"})
#: what a spec that is not one says it should look like (settings errors, option help)
EXAMPLES = "e.g. 0.33.0, 0.30.0,0.33.0, '>=0.30', all or latest"


def allows(op: str, wanted: str, version: tuple[int, ...]) -> bool:
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


def admits_all(clauses: Iterable[tuple[str, str]], version: str) -> bool:
    key = version_key(version)
    return all(allows(op, wanted, key) for op, wanted in clauses)


def exact_pin(clauses: Sequence[tuple[str, str]]) -> str | None:
    """The version one ``==X`` clause pins (known or not), else None."""
    if len(clauses) == 1 and clauses[0][0] in ("==", "===") and "*" not in clauses[0][1]:
        return normalize_version(clauses[0][1])
    return None


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def is_spec(text: str) -> bool:
    """Whether ``text`` is a release or a set of releases in one of the forms above."""
    return _parse(text) is not None


def is_set(text: str) -> bool:
    """Whether ``text`` names a set of releases rather than one release."""
    parsed = _parse(text)
    return parsed is not None and parsed[0] != "version"


def _parse(text: str) -> tuple[str, tuple[str, ...] | tuple[tuple[str, str], ...]] | None:
    """("version" | "list", versions), ("clauses", clauses), ("all", ()) or ("latest", ())."""
    if not isinstance(text, str):
        return None
    word = text.strip().lower()
    if word in ALL_WORDS:
        return "all", ()
    if word in LATEST_WORDS:
        return "latest", ()
    items = _items(text)
    if not items:
        return None
    if all(is_version(item) and "*" not in item for item in items):
        versions = tuple(normalize_version(item) for item in items)
        return ("version", versions) if len(items) == 1 else ("list", versions)
    clauses: list[tuple[str, str]] = []
    for item in items:
        if _WILDCARD.match(item):
            item = "==" + item
        if not _WHOLE_CLAUSE.match(item):
            return None
        op, wanted = CLAUSE.findall(item)[0]
        clauses.append((op, wanted))
    return "clauses", tuple(clauses)


def releases_of(text: str, known: Sequence[str]) -> tuple[str, ...]:
    """The versions a spec names, oldest first: ``known`` (every known release, oldest
    first) filtered by it, or the versions it lists (known or not).  Empty when the spec
    admits no known release, or is not a spec."""
    parsed = _parse(text)
    if parsed is None:
        return ()
    kind, body = parsed
    if kind in ("version", "list"):
        return tuple(sorted(set(body), key=version_key))  # type: ignore[arg-type]
    if kind == "all":
        return tuple(known)
    if kind == "latest":
        return (max(known, key=version_key),) if known else ()
    return tuple(v for v in known if admits_all(body, v))  # type: ignore[arg-type]


def label(versions: Sequence[str], known: Sequence[str]) -> str:
    """How a finding names the releases it holds on: ``0.30.0–0.32.0`` when they are consecutive
    known releases (``known`` oldest first: nothing between them is left out), else the list
    (``0.30.0, 0.33.0``)."""
    ordered = sorted(dict.fromkeys(versions), key=version_key)
    if len(ordered) >= 2:
        positions = [known.index(v) if v in known else -1 for v in ordered]
        if -1 not in positions and positions == list(range(positions[0], positions[0] + len(ordered))):
            return f"{ordered[0]}\u2013{ordered[-1]}"
    return ", ".join(ordered)


def how_admitted(text: str) -> str:
    """What the reason of a set says about how its releases were chosen."""
    parsed = _parse(text)
    if parsed is None or parsed[0] in ("version",):
        return ""
    return {"list": "each release listed", "all": "every known release", "latest": "the newest known release",
            "clauses": "every known release it admits"}[parsed[0]]


def newer_than_known(spec: str | None, known: Sequence[str], title: str) -> str:
    """The summary's note for the releases ``spec`` names that are newer than every release
    ``known`` (each is judged by the newest one's rules); "" when it names none."""
    if not spec or not known:
        return ""
    newest = max(known, key=version_key)
    newer = [v for v in releases_of(spec, known) if version_key(v) > version_key(newest)]
    if not newer:
        return ""
    one = len(newer) == 1
    return (f"note: {title} {', '.join(newer)} {'is' if one else 'are'} newer than the newest release "
            f"this linter knows ({newest}); {'its' if one else 'their'} launches were judged by {newest}'s rules")
