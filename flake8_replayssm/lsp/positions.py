"""Places in a text as LSP positions, and the edits that turn one text into another.

The linter's spans count lines from 1 and columns in characters; LSP counts
both from 0 and columns in the code units the client and server agreed on
(UTF-16 unless the client offers another).  Lines end at ``\\n`` (a ``\\r``
before it stays part of the line), as :class:`flake8_replayssm.fix.edits.LineIndex`
counts them.
"""

from __future__ import annotations

import bisect
import re
from difflib import SequenceMatcher
from typing import Iterator

from lsprotocol import types
from pygls.workspace import PositionCodec

from ..model import Span

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


class TextPositions:
    """Offsets and (line, character) pairs of one text <-> LSP positions."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text, self.codec = text, codec
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def position(self, line: int, character: int) -> types.Position:
        """0-based ``line`` and a column in characters, clamped into the text."""
        if line < 0:
            return types.Position(0, 0)
        if line >= len(self.lines):
            line, character = len(self.lines) - 1, len(self.lines[-1])
        text = self.lines[line]
        character = max(0, min(character, len(text)))
        return types.Position(line, self.codec.client_num_units(text[:character]))

    def at(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return self.position(line, offset - self.starts[line])

    def span(self, span: Span) -> types.Range:
        return types.Range(self.position(span.line - 1, span.col),
                           self.position(span.end_line - 1, span.end_col))

    def offsets(self, start: int, end: int) -> types.Range:
        return types.Range(self.at(start), self.at(end))


def changes(old: str, new: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, replacement)`` on ``old``, in order, that make ``new``.

    Lines are matched first (a fix touches few lines of a file), then each
    changed run of lines is narrowed to the characters that differ (a word
    inserted at both ends of a line is two insertions, not a new line), so an
    editor keeps its cursor and marks on everything else.
    """
    a, b = _LINES.findall(old), _LINES.findall(new)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            yield from _narrowed(old, starts[i1], starts[i2], "".join(b[j1:j2]))


#: unchanged characters shorter than this between two changes are replaced with them
_MIN_KEPT = 4


def _narrowed(text: str, start: int, end: int, new: str) -> Iterator[tuple[int, int, str]]:
    old = text[start:end]
    if not old or not new or len(old) + len(new) > 20_000:
        prefix = len(_common_prefix(old, new))
        suffix = len(_common_prefix(old[prefix:][::-1], new[prefix:][::-1]))
        yield start + prefix, end - suffix, new[prefix:len(new) - suffix]
        return
    group: list[int] | None = None  # [i1, i2, j1, j2] of the changes being joined
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            if group is not None and i2 - i1 >= _MIN_KEPT:
                yield start + group[0], start + group[1], new[group[2]:group[3]]
                group = None
            continue
        if group is None:
            group = [i1, i2, j1, j2]
        else:
            group[1], group[3] = i2, j2
    if group is not None:
        yield start + group[0], start + group[1], new[group[2]:group[3]]


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def text_edits(old: str, new: str, codec: PositionCodec) -> list[types.TextEdit]:
    """The LSP edits that turn the editor's ``old`` into ``new``."""
    where = TextPositions(old, codec)
    return [types.TextEdit(where.offsets(start, end), replacement)
            for start, end, replacement in changes(old, new)]
