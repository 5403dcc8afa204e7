"""PyYAML node helpers that the YAML readers and the engines share.

Frontends read YAML as nodes (with line and column marks) and engines recognise their
own ``--config`` files from the same nodes; Go/Helm template actions are masked the
same way wherever YAML is parsed (:mod:`flake8_replayssm.yaml_templates`), so a position
never moves.
"""

from __future__ import annotations

from typing import Any


def loader() -> Any:
    """PyYAML's C loader when it is built, else the pure-Python one (the same nodes)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: YAML nodes from the root to the deepest value that any reader of ours follows
MAX_DEPTH = 100


def node_depth(root: Any) -> tuple[int, int]:
    """(depth, 1-based line) of the deepest node of a PyYAML node graph (aliases counted once)."""
    best, best_line = 0, 1
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if depth > best:
            best, best_line = depth, node.start_mark.line + 1
        value = node.value
        if isinstance(value, list):
            for item in value:
                if isinstance(item, tuple):
                    stack.extend((part, depth + 1) for part in item)
                else:
                    stack.append((item, depth + 1))
    return best, best_line


def too_deep(root: Any) -> str | None:
    """Why a composed node graph is nested too deeply to read safely, or None."""
    depth, line = node_depth(root)
    if depth <= MAX_DEPTH:
        return None
    return f"nested too deeply to read safely ({depth} levels at line {line}; the limit is {MAX_DEPTH})"


def is_map(node: Any) -> bool:
    return getattr(node, "id", None) == "mapping"


def is_seq(node: Any) -> bool:
    return getattr(node, "id", None) == "sequence"


def is_scalar(node: Any) -> bool:
    return getattr(node, "id", None) == "scalar"
