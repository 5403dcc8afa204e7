"""Release numbers, as every engine's release tables and every pin spell them.

vLLM (``0.33.0``, ``v0.33``) and SGLang (``0.5.23``, ``0.5.15.post1``) number their
releases alike; comparing, normalising and reading a table of releases that
``extends`` an earlier one is the same for every engine, so it lives here once.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_VERSION = re.compile(r"^[vV]?\d+(\.\d+){0,2}([.+-]?[0-9A-Za-z.+-]*)?$")


def version_key(version: str) -> tuple[int, ...]:
    """``"0.33.0"`` -> ``(0, 33, 0)``: release numbers compared as numbers, not text."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def is_version(text: str) -> bool:
    return bool(_VERSION.match(text.strip()))


def normalize_version(version: str) -> str:
    """``v0.33.0`` and ``0.33`` both mean ``0.33.0``; local tags are dropped."""
    text = version.strip().lstrip("vV").split("+")[0]
    parts = text.split(".")
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts[:3])


def in_range(version: str, since: str | None, until: str | None) -> bool:
    """Whether ``version`` is within ``since``..``until`` (both inclusive; None: unbounded)."""
    key = version_key(version)
    return (since is None or version_key(since) <= key) and (until is None or key <= version_key(until))


def resolve_extends(raw: Mapping[str, dict[str, Any]], what: str = "releases") -> dict[str, dict[str, Any]]:
    """Release tables with their ``extends = "X"`` filled in from release X (recursively).

    A release table says only what changed since the release it extends, so a new release
    that changes one fact is a one-line table.
    """
    resolved: dict[str, dict[str, Any]] = {}

    def get(version: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
        if version in resolved:
            return resolved[version]
        if version in seen:
            raise ValueError(f"{what}: cycle in extends at {version}")
        table = dict(raw[version])
        parent = table.pop("extends", None)
        merged = dict(get(parent, seen + (version,))) if parent else {}
        merged.update(table)
        resolved[version] = merged
        return merged

    for version in raw:
        get(version)
    return resolved
