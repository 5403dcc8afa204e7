"""Fixes in the Python fences of a Markdown document.

Shell, YAML and Dockerfile fences are planned on the document itself (their words
carry document positions).  A Python fence needs libcst's view of the block, so
its launches are planned as Python on the block's source
(:func:`flake8_replayssm.frontends.markdown.python_blocks_of_markdown`: an indented
fence keeps its indentation under an ``if True:`` line), and the edits are moved
back onto the document line by line.  A block given dedented has its indentation
added back after every new line an edit inserts.  An edit touching a line the
block does not hold as written is dropped with the rest of that block's edits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ..model import Finding, Span
from .edits import Edit, LineIndex


def python_block_of(blocks: Sequence[tuple[int, str]], line: int) -> tuple[int, str] | None:
    """The Python block ``(first line, source)`` that holds document line ``line``."""
    for first, source in blocks:
        if first <= line < first + source.count("\n") + 1:
            return first, source
    return None


def _shift(span: Span, lines: int) -> Span:
    if span.source is not None or span.cell is not None:
        return span
    return replace(span, line=span.line - lines, end_line=span.end_line - lines)


def into_block(verdict: Any, findings: Sequence[Finding], first: int) -> tuple[Any, list[Finding]]:
    """A verdict and its findings with spans counted in the block (line 1 = ``first``)."""
    from ..lint import move_launch

    lines = first - 1
    launch = move_launch(verdict.launch, lambda s: _shift(s, lines))
    moved = [replace(f, span=_shift(f.span, lines)) for f in findings]
    return replace(verdict, launch=launch, findings=tuple(moved)), moved


def onto_document(edits: Sequence[Edit], source: str, first: int, text: str) -> list[Edit] | None:
    """Edits on a block's source as edits on the document (None: one cannot be placed)."""
    block, doc = LineIndex(source), LineIndex(text)
    block_lines, doc_lines = source.split("\n"), text.split("\n")
    out = []
    for edit in edits:
        placed = []
        indent = ""
        for offset in (edit.start, edit.end):
            row = block.line_of(offset)
            line = first - 1 + row
            if line >= len(doc_lines) or not doc_lines[line].endswith(block_lines[row]):
                return None
            lead = len(doc_lines[line]) - len(block_lines[row])
            indent = doc_lines[line][:lead]
            placed.append(doc.starts[line] + lead + offset - block.starts[row])
        replacement = edit.replacement.replace("\n", "\n" + indent) if indent.strip() == "" and indent else \
            edit.replacement
        out.append(Edit(placed[0], placed[1], replacement, edit.code))
    return out
