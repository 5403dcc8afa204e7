"""Fixes in Jupyter notebooks: the planner runs on each cell, the JSON is edited in place.

A notebook's findings carry ``cell`` and lines within that cell.  For every cell
with something to fix:

- launches of shell parts (``!vllm serve ...``, ``%%bash`` cells) are planned on
  the cell's source as shell text (an IPython ``!`` / ``x = !`` / ``%sx`` prefix
  counts as the start of a command, so ``VLLM_USE_V2_MODEL_RUNNER=0`` can go
  right after it);
- launches of Python code are planned on the cell's Python (IPython lines
  blanked, line numbers kept) and the edits moved back onto the cell's source;
  edits on a blanked line are dropped;
- the new source replaces only that cell's ``source`` value in the JSON text:
  a list of lines stays a list (lines that did not change keep their exact JSON
  text, new ones are encoded like the file: raw UTF-8 unless the file is all
  ASCII), a string stays a string.  The rest of the file is byte-identical; the
  result is checked by parsing it and comparing every other value.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import replace
from typing import Any

from ..config import LintConfig
from ..model import Finding, Span
from ..notebook_json import Source, locate_sources
from .edits import Edit, LineIndex, apply_edits, span_key, without_collisions

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


def render_source(text: str, source: Source, new: str) -> str:
    """The JSON text of ``source`` holding ``new``, written like the original."""
    ensure_ascii = text.isascii()
    if source.items is None or not source.items:
        return json.dumps(new, ensure_ascii=ensure_ascii)
    old = [v for _, _, v in source.items]
    raw = [text[s:e] for s, e, _ in source.items]
    new_items = _LINES.findall(new)
    if len(source.items) >= 2:
        sep = text[source.items[0][1]:source.items[1][0]]
    else:
        sep = "," + text[source.start + 1:source.items[0][0]]
    pieces: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new_items, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pieces += raw[i1:i2]
        else:
            pieces += [json.dumps(item, ensure_ascii=ensure_ascii) for item in new_items[j1:j2]]
    head = text[source.start:source.items[0][0]]
    tail = text[source.items[-1][1]:source.end]
    return head + sep.join(pieces) + tail


def _move_span(span: Span, cell: int) -> Span:
    if span.source is not None or span.cell is None:
        return span
    if span.cell == cell:
        return replace(span, cell=None)
    return replace(span, source=f"<notebook cell {span.cell}>")  # never matches this cell's text


def _in_cell_text(verdict: Any, cell: int) -> Any:
    from ..lint import move_launch

    launch = move_launch(verdict.launch, lambda s: _move_span(s, cell))
    findings = tuple(replace(f, span=_move_span(f.span, cell)) for f in verdict.findings)
    return replace(verdict, launch=launch, findings=findings)


def _python_of(source: str) -> str | None:
    """The Python the linter reads from a code cell holding ``source`` (IPython lines blanked)."""
    from ..frontends.notebook import python_cells_of_notebook

    cells = python_cells_of_notebook(json.dumps({"cells": [{"cell_type": "code", "source": source}]}))
    return cells[0][1] if cells else None


def _moved_edits(edits: list[Edit], py_text: str, source: str) -> list[Edit] | None:
    """Edits on a cell's blanked Python moved onto the cell's source (None: one touches a
    line the Python does not have as written)."""
    py_index, src_index = LineIndex(py_text), LineIndex(source)
    py_lines, src_lines = py_text.split("\n"), source.split("\n")
    out = []
    for edit in edits:
        moved = []
        for offset in (edit.start, edit.end):
            line = py_index.line_of(offset)
            if line >= len(src_lines) or py_lines[line] != src_lines[line]:
                return None
            moved.append(src_index.starts[line] + offset - py_index.starts[line])
        out.append(Edit(moved[0], moved[1], edit.replacement, edit.code))
    return out


def plan_notebook_edits(text: str, config: LintConfig, *, path: str | None = None,
                        unsafe: bool = False) -> list[Edit]:
    """Edits of the notebook's JSON text: one replacement of ``source`` per fixed cell."""
    from ..frontends.notebook import python_cells_of_notebook
    from ..lint import lint_text
    from .planner import Planner

    result = lint_text(text, "notebook", config, path=path)
    if result.error or not result.findings:
        return []
    sources = locate_sources(text)
    if not sources:
        return []
    reported = {(f.span, f.code) for f in result.findings}
    by_cell: dict[int, list[tuple[Any, list[Finding]]]] = {}
    for verdict in result.verdicts:
        cell = verdict.launch.anchor.cell
        findings = [f for f in verdict.findings if (f.span, f.code) in reported]
        if cell is None or not findings:
            continue
        by_cell.setdefault(cell, []).append((verdict, findings))
    python = dict(python_cells_of_notebook(text))
    edits: list[Edit] = []
    for cell, items in sorted(by_cell.items()):
        source = sources.get(cell)
        if source is None:
            continue
        src = source.value
        py_text = python.get(cell)
        shell = Planner(src, "shell", unsafe=unsafe, ipython=True)
        py = Planner(py_text, "python", unsafe=unsafe) if py_text is not None else None
        src_lines, py_lines = src.split("\n"), (py_text or "").split("\n")
        seen: set[tuple[int, int, int, int]] = set()
        for verdict, findings in items:
            def in_cell(v: Any, found: list[Finding], cell: int = cell) -> tuple[Any, list[Finding]]:
                return _in_cell_text(v, cell), [replace(f, span=_move_span(f.span, cell)) for f in found]

            anchor = _in_cell_text(verdict, cell).launch.anchor
            key = span_key(anchor)
            if key in seen and verdict.launch.form == "argv":
                continue
            seen.add(key)
            line = anchor.line - 1
            in_python = py is not None and 0 <= line < len(py_lines) and line < len(src_lines) \
                and py_lines[line] == src_lines[line] and py_lines[line].strip() != ""
            (py if in_python and py is not None else shell).plan_oldest_fixable(verdict, findings, in_cell)
        cell_edits = _accepted(src, shell.edits)
        if py is not None and py.edits:
            moved_py = _moved_edits(_accepted(py_text or "", py.edits), py_text or "", src)
            if moved_py is not None:
                cell_edits = _accepted(src, cell_edits + moved_py)
        if not cell_edits:
            continue
        new_src = apply_edits(src, cell_edits)
        if new_src == src:
            continue
        if py_text is not None:
            new_py = _python_of(new_src)
            try:
                ast.parse(new_py or "")
            except SyntaxError:
                continue
        codes = ",".join(sorted({e.code for e in cell_edits}))
        edits.append(Edit(source.start, source.end, render_source(text, source, new_src), codes))
    if not edits:
        return []
    return edits if _only_sources_changed(text, apply_edits(text, edits)) else []


def _accepted(text: str, edits: list[Edit]) -> list[Edit]:
    """The edits in order, leaving out any that collides with one already taken."""
    return without_collisions(edits)


def _only_sources_changed(before: str, after: str) -> bool:
    """The new JSON parses and differs from the old one only in cells' ``source``."""
    try:
        old, new = json.loads(before), json.loads(after)
    except ValueError:
        return False
    if not isinstance(old, dict) or not isinstance(new, dict) or old.keys() != new.keys():
        return False
    if any(old[k] != new[k] for k in old if k != "cells"):
        return False
    old_cells, new_cells = old.get("cells"), new.get("cells")
    if not isinstance(old_cells, list) or not isinstance(new_cells, list) or len(old_cells) != len(new_cells):
        return False
    for a, b in zip(old_cells, new_cells):
        if not isinstance(a, dict) or not isinstance(b, dict) or a.keys() != b.keys():
            return False
        if any(a[k] != b[k] for k in a if k != "source"):
            return False
    return True
