"""Documents held in a string (a recipe's ``guide: |`` Markdown, a pod patch in an annotation, a
ConfigMap's ``model.yaml: |`` or ``serve.py: |``): found here, linted by the caller as their own
kind and placed back.

A string is a document when its key names a file of a kind the linter reads (``x.yaml``,
``x.json``, ``x.toml``, ``x.md``, ``x.py``), when it holds a Markdown fence, or when it is YAML
with structure of its own (a mapping whose values are mappings or lists: a shell script never
composes to one).  Only strings that mention an engine count.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ... import engines
from ...model import Span
from .._common import LineIndex
from .nodes import STR_TAG, Doc, is_map, is_scalar, is_seq, items

#: whitespace at a line's start is ``[^\S\n]*``, never ``\s*``: that runs on over following
#: lines, from every line start, which made a string of many blank lines quadratic
_FENCE = re.compile(r"^[^\S\n]*(```|~~~)", re.M)
#: a key that names a file, and the kind of that file
_FILE_KEY = re.compile(r"\.(ya?ml|json|toml|md|markdown|py)$", re.I)
_KIND_OF = {"yaml": "yaml", "yml": "yaml", "json": "json", "toml": "toml", "md": "markdown",
            "markdown": "markdown", "py": "python"}
_YAML_KEY_LINE = re.compile(r"^[^\S\n]*(?:-[^\S\n]+)?[\w.-]+[^\S\n]*:(?:\s|$)", re.M)


def _mentions_engine(text: str) -> bool:
    lowered = text.lower()
    return "replayssm" in lowered or any(name in lowered for name in engines.NAMES)


def document_kind(value: str, key: str = "") -> str | None:
    """The kind of document a string value is (``markdown``, ``yaml``, ``json``, ``toml``,
    ``python``), or None: a plain string (a command, a value)."""
    if "\n" not in value.strip():
        return None
    named = _FILE_KEY.search(key or "")
    if named is not None:
        return _KIND_OF[named.group(1).lower()]
    if _FENCE.search(value):
        return "markdown"
    if len(_YAML_KEY_LINE.findall(value)) < 2:
        return None
    try:
        import yaml

        root = yaml.compose(value, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return None
    if is_map(root) and any(is_map(v) or is_seq(v) for _, v in root.value):
        return "yaml"
    return None


def embedded_documents(docs: list[Any], doc: Doc) -> list[tuple[str, str, Callable[[Span], Span], str]]:
    """``(kind, text, place, name)`` of the documents written as string values of ``docs``, ``place``
    moving a span of that text to where it is written in the file; ``name`` is the file the key
    names (a ConfigMap's ``inference_config.yaml: |``), else ""."""
    out: list[tuple[str, str, Callable[[Span], Span], str]] = []
    stack: list[tuple[Any, str]] = [(d, "") for d in docs if d is not None]
    seen: set[int] = set()  # aliases: each node once, however often it is referred to
    while stack:
        node, key = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_map(node):
            stack.extend((value, name) for name, _, value in items(node))
        elif is_seq(node):
            stack.extend((item, key) for item in node.value)
        elif is_scalar(node) and node.tag == STR_TAG and "\n" in str(node.value):
            value = str(node.value)
            if not _mentions_engine(value):
                continue
            kind = document_kind(value, key)
            chars = doc.chars(node) if kind else None
            if kind and chars is not None and len(chars) == len(value):
                name = key if _FILE_KEY.search(key or "") else ""
                out.append((kind, value, _inner_placer(value, chars, doc.lines), name))
    return out


def _inner_placer(value: str, chars: list[int], lines: LineIndex) -> Callable[[Span], Span]:
    inner = LineIndex(value)

    def place(span: Span) -> Span:
        if span.source is not None:
            return span
        a = inner.index(span.line, span.col)
        b = inner.index(span.end_line, span.end_col)
        last = len(chars) - 1
        start = chars[min(max(a, 0), last)]
        end = chars[min(max(b - 1, a, 0), last)] + 1
        moved = lines.span(start, end)
        return Span(moved.line, moved.col, moved.end_line, moved.end_col, span.cell, span.source)

    return place
