"""Text edits on a file's text: offsets from spans, applying, checking.

An :class:`Edit` replaces ``text[start:end]`` with ``replacement`` (``start ==
end`` inserts).  All edits of one file are applied at once; overlapping edits
are rejected (:class:`OverlapError`), so two fixes can never garble each other.
Bytes outside the edited ranges are left exactly as they were (line endings,
encoding, trailing whitespace).
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..model import Span


@dataclass(frozen=True, order=True)
class Edit:
    start: int
    end: int
    replacement: str
    #: the code this edit fixes (for reports; not part of the ordering)
    code: str = ""


def span_key(span: Span) -> tuple[int, int, int, int]:
    """Where a span is, as a dict key (the same place in one text, whichever launch read it)."""
    return (span.line, span.col, span.end_line, span.end_col)


class OverlapError(ValueError):
    """Two edits touch the same characters."""


class LineIndex:
    """Offsets of a text from 1-based lines and 0-based character columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def offset(self, line: int, col: int) -> int:
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + col, len(self.text))

    def span(self, span: Span) -> tuple[int, int]:
        return self.offset(span.line, span.col), self.offset(span.end_line, span.end_col)

    def line_of(self, offset: int) -> int:
        """0-based index of the line holding ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line_start(self, offset: int) -> int:
        return self.starts[self.line_of(offset)]

    def line_end(self, offset: int) -> int:
        """Offset of the line terminator (``\\r\\n`` or ``\\n``) of ``offset``'s line, or the text end."""
        index = self.line_of(offset)
        if index + 1 < len(self.starts):
            end = self.starts[index + 1] - 1
            if end > 0 and self.text[end - 1] == "\r":
                end -= 1
            return end
        return len(self.text)


def newline_of(text: str) -> str:
    """The file's line ending (CRLF files stay CRLF)."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def check_overlaps(edits: Sequence[Edit]) -> list[Edit]:
    """The edits sorted; raises :class:`OverlapError` when two of them overlap."""
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end, e.replacement))
    for before, after in zip(ordered, ordered[1:]):
        if _collide(before, after):
            if after.start < before.end:
                raise OverlapError(f"edits overlap at offsets {before.start}-{before.end} and "
                                   f"{after.start}-{after.end}")
            raise OverlapError(f"two insertions at offset {before.start}")
    return ordered


def _collide(before: Edit, after: Edit) -> bool:
    """Whether two edits, ``before`` sorting first, touch the same characters."""
    return after.start < before.end or before.start == before.end == after.start == after.end


def without_collisions(edits: Iterable[Edit]) -> list[Edit]:
    """The edits in order, leaving out any that collides with one already taken (an edit equal
    to a taken one is kept: applying both is applying it once).

    Each edit is checked against its neighbours among the taken ones (bisect), not by applying
    all of them to the text again: that was quadratic in a file of many launches."""
    taken: list[Edit] = []
    keys: list[tuple[int, int, str]] = []
    out: list[Edit] = []
    for edit in edits:
        key = (edit.start, edit.end, edit.replacement)
        at = bisect.bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            out.append(edit)
            continue
        if (at and _collide(taken[at - 1], edit)) or (at < len(taken) and _collide(edit, taken[at])):
            continue
        keys.insert(at, key)
        taken.insert(at, edit)
        out.append(edit)
    return out


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with every edit applied (edits address the original text)."""
    ordered = check_overlaps(list(edits))
    out: list[str] = []
    pos = 0
    for edit in ordered:
        out.append(text[pos:edit.start])
        out.append(edit.replacement)
        pos = edit.end
    out.append(text[pos:])
    return "".join(out)


def parse_error(text: str, kind: str) -> str | None:
    """Why ``text`` of ``kind`` does not parse (None: it parses, or we cannot tell)."""
    try:
        if kind == "python":
            import ast

            import libcst

            from ..guard import check_python

            check_python(text)  # raises for what libcst must never see
            ast.parse(text.lstrip("\ufeff"))
            libcst.parse_module(text)
        elif kind == "yaml":
            from ..guard import check_yaml

            check_yaml(text)  # composed, never constructed: aliases are not expanded
        elif kind == "notebook":
            json.loads(text)
    except Exception as exc:  # any parser error means: do not write
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None
