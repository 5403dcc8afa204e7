"""Located text: strings whose characters know where they are written in the file.

Every value the shell frontend hands over is placed on the characters it came from,
even after quotes were removed, a variable was substituted, a ``bash -c`` string was
read again or a Makefile variable was expanded into a recipe.  So the text of every
value is a :class:`Located`, and positions are turned into file spans only at the end,
through the caller's ``place`` (:class:`FileMap`).  A *hole* is the text that stands for
an unknown part when a string is read again as shell.
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Callable, Sequence

from ...model import Span

Placer = Callable[[int, int, int, int], Span]

#: the name of a variable that nothing assigns, standing for an unknown part of a text
UNKNOWN_MARK = "__rsm_unknown_"
HOLE = re.compile(r"\$\{" + UNKNOWN_MARK + r"\d+\}")


class Located:
    """A string plus, for each run of characters, where it is written in the file.

    ``segs`` covers ``text`` with ``(start, end, exact, file_start, file_end)``:
    an exact run maps character ``k`` to ``file_start + k - start``; a
    fallback run maps all its characters to the file range (an escape sequence,
    a substituted variable).  ``file_start == -1`` means "wherever the
    expansion that produced it is" (caller-supplied values).
    """

    __slots__ = ("text", "segs", "_starts")

    def __init__(self, text: str, segs: list[tuple[int, int, bool, int, int]]) -> None:
        self.text = text
        self.segs = segs
        self._starts: list[int] | None = None

    @staticmethod
    def exact(text: str, fs: int) -> Located:
        return Located(text, [(0, len(text), True, fs, fs + len(text))] if text else [])

    @staticmethod
    def fallback(text: str, fs: int, fe: int) -> Located:
        return Located(text, [(0, len(text), False, fs, fe)] if text else [])

    @staticmethod
    def unplaced(text: str) -> Located:
        """A value from outside this text (the caller's): placed wherever it is expanded."""
        return Located(text, [(0, len(text), False, -1, -1)]) if text else EMPTY

    def __add__(self, other: Located) -> Located:
        if not other.text:
            return self
        if not self.text:
            return other
        n = len(self.text)
        segs = list(self.segs)
        for k, (ts, te, ex, fs, fe) in enumerate(other.segs):
            if k == 0:
                lts, _, lex, lfs, lfe = segs[-1]
                if ex and lex and lfe == fs and lfs >= 0:
                    segs[-1] = (lts, te + n, True, lfs, fe)
                    continue
                if not ex and not lex and lfs == fs and lfe == fe:
                    segs[-1] = (lts, te + n, False, fs, fe)
                    continue
            segs.append((ts + n, te + n, ex, fs, fe))
        return Located(self.text + other.text, segs)

    def _index(self, i: int) -> int:
        if self._starts is None:
            self._starts = [s[0] for s in self.segs]
        return max(0, bisect.bisect_right(self._starts, i) - 1)

    def slice(self, i: int, j: int) -> Located:
        if i >= j or not self.segs:
            return EMPTY
        out = []
        for ts, te, ex, fs, fe in self.segs[self._index(i):]:
            if ts >= j:
                break
            a, b = max(ts, i), min(te, j)
            if a >= b:
                continue
            if ex:
                out.append((a - i, b - i, True, fs + a - ts, fs + b - ts))
            else:
                out.append((a - i, b - i, False, fs, fe))
        return Located(self.text[i:j], out)

    def locate(self, i: int, j: int) -> tuple[int, int] | None:
        """The file range of ``text[i:j]`` (None when nothing is known)."""
        if not self.segs:
            return None
        n = len(self.text)
        i = min(max(i, 0), n)
        j = min(max(j, i), n)
        if i >= n:
            end = self.segs[-1][4]
            return (end, end) if end >= 0 else None
        ts, _, ex, fs, _ = self.segs[self._index(i)]
        start = fs + (i - ts) if ex else fs
        if j <= i:
            return (start, start) if start >= 0 else None
        ts2, _, ex2, fs2, fe2 = self.segs[self._index(j - 1)]
        end = fs2 + (j - 1 - ts2) + 1 if ex2 else fe2
        if start < 0 or end < 0:
            return None
        return (start, max(start, end))

    def relocate(self, fs: int, fe: int) -> Located:
        if not any(s[3] < 0 for s in self.segs):
            return self
        return Located(self.text, [(a, b, False, fs, fe) if f < 0 else (a, b, ex, f, e)
                                   for a, b, ex, f, e in self.segs])

    def retext(self, text: str) -> Located:
        """These positions with the characters replaced by ``text`` (of the same length)."""
        return Located(text, list(self.segs))


EMPTY = Located("", [])


def join(parts: Sequence[Located], sep: str = " ") -> Located:
    out = EMPTY
    for k, part in enumerate(parts):
        if k:
            loc = out.locate(len(out.text), len(out.text)) or (-1, -1)
            out = out + Located.fallback(sep, loc[0], loc[1]) if sep else out
        out = out + part
    return out


_HOLES = itertools.count(1)


def hole(loc: tuple[int, int] | None) -> Located:
    """Text standing for an unknown part when a string is read again as shell:
    an expansion of a variable that nothing assigns."""
    fs, fe = loc if loc is not None else (-1, -1)
    return Located.fallback(f"${{{UNKNOWN_MARK}{next(_HOLES)}}}", fs, fe)


class FileMap:
    """File character offsets -> :class:`Span`, through the caller's ``place``."""

    def __init__(self, text: str, place: Placer | None) -> None:
        self.starts = [0]
        find = text.find
        k = find("\n")
        while k >= 0:
            self.starts.append(k + 1)
            k = find("\n", k + 1)
        self.place = place or _identity_place

    def point(self, off: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, off) - 1
        return row, off - self.starts[row]

    def span(self, fs: int, fe: int) -> Span:
        r0, c0 = self.point(fs)
        r1, c1 = self.point(max(fs, fe))
        return self.place(r0, c0, r1, c1)


def _identity_place(sr: int, sc: int, er: int, ec: int) -> Span:
    return Span(sr + 1, sc, er + 1, ec)
