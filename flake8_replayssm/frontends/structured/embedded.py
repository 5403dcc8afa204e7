"""Documents held in a string (a recipe's ``guide: |`` Markdown, a pod patch in an
annotation): found here, linted by the caller as their own kind and placed back.
"""

from __future__ import annotations

import re
from typing import Callable

from ...model import Span
from .._common import LineIndex
from .nodes import STR_TAG, Doc, documents, is_map, is_scalar, is_seq, items

#: whitespace at a line's start is ``[^\S\n]*``, never ``\s*``: that runs on over following
#: lines, from every line start, which made a string of many blank lines quadratic
_FENCE = re.compile(r"^[^\S\n]*(```|~~~)", re.M)
_MANIFEST_KEY = re.compile(r"^[^\S\n]*(?:-[^\S\n]*)?(?:command|args|containers)[^\S\n]*:", re.M)


def embedded_documents(text: str) -> list[tuple[str, str, Callable[[Span], Span]]]:
    """``(kind, text, place)`` of the Markdown and YAML documents written as string values,
    ``place`` moving a span of that text to where it is written in the file.  Only strings
    that mention vLLM count; the caller lints them as their own kind."""
    if "vllm" not in text.lower() and "replayssm" not in text.lower():
        return []
    parsed = documents(text)
    if parsed is None:
        return []
    text, docs = parsed
    doc = Doc(text, None)
    out: list[tuple[str, str, Callable[[Span], Span]]] = []
    stack = [d for d in docs if d is not None]
    seen: set[int] = set()  # aliases: each node once, however often it is referred to
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_map(node):
            stack.extend(value for _, _, value in items(node))
        elif is_seq(node):
            stack.extend(node.value)
        elif is_scalar(node) and node.tag == STR_TAG and "\n" in str(node.value):
            value = str(node.value)
            lowered = value.lower()
            if "vllm" not in lowered and "replayssm" not in lowered:
                continue
            kind = "markdown" if _FENCE.search(value) else (
                "yaml" if _MANIFEST_KEY.search(value) else None)
            chars = doc.chars(node) if kind else None
            if kind and chars is not None and len(chars) == len(value):
                out.append((kind, value, _inner_placer(value, chars, doc.lines)))
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
