"""Quote removal and field splitting: the parts of one shell word in, its fields out.

The word expander (:mod:`.words`) feeds a :class:`FieldCollector` with the word's parts in
order (literal text, quoted or not; known values to split on blanks; an array's elements;
unknown parts), and the collector decides where one field ends and the next begins, the
way bash does after expansion.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from .located import Located, hole, join
from .values import Field

_FIELD = re.compile(r"[^ \t\n]+")


class FieldParts:
    """One field being built: its parts (None: an unknown part) and what is known of it."""

    __slots__ = ("parts", "shadow", "unknown", "splat", "quoted", "elem", "adds")

    def __init__(self) -> None:
        self.parts: list[Located | None] = []   # None marks an unknown part
        self.shadow: list[Located] = []         # the same with holes for the unknown parts
        self.unknown = False
        self.splat = False
        self.quoted = False
        self.elem: Field | None = None
        self.adds = 0


class FieldCollector:
    """Collects the fields one shell word expands to (quote removal, field splitting)."""

    def __init__(self, nosplit: bool = False) -> None:
        self.nosplit = nosplit
        self.fields: list[FieldParts] = []
        self.cur: FieldParts | None = None
        self.broke = False
        self.where: Callable[[], tuple[int, int] | None] = lambda: None

    def _b(self) -> FieldParts:
        if self.cur is None:
            self.cur = FieldParts()
        return self.cur

    def _break(self) -> None:
        if self.cur is not None:
            self.fields.append(self.cur)
            self.cur = None
        self.broke = True

    def lit(self, value: Located, quoted: bool) -> None:
        b = self._b()
        if value.text:
            b.parts.append(value)
            b.shadow.append(value)
        b.quoted |= quoted
        b.adds += 1

    def mark_quoted(self) -> None:
        self._b().quoted = True

    def unknown(self, splat: bool, quoted: bool, loc: tuple[int, int] | None = None,
                shadow: Located | None = None) -> None:
        b = self._b()
        b.unknown = True
        b.parts.append(None)
        b.shadow.append(shadow if shadow is not None else hole(loc or self.where()))
        b.splat |= splat and not self.nosplit
        b.quoted |= quoted or not splat
        b.adds += 1

    def split(self, value: Located) -> None:
        """An unquoted known value: IFS splitting (default IFS)."""
        if self.nosplit:
            self.lit(value, False)
            return
        text = value.text
        pieces = [(m.start(), m.end()) for m in _FIELD.finditer(text)]
        if not pieces:
            if text:
                self._break()
            return
        if pieces[0][0] > 0:
            self._break()
        for k, (a, e) in enumerate(pieces):
            if k:
                self._break()
            b = self._b()
            piece = value.slice(a, e)
            b.parts.append(piece)
            b.shadow.append(piece)
            b.adds += 1
        if pieces[-1][1] < len(text):
            self._break()

    def elements(self, fields: Sequence[Field], quoted: bool) -> None:
        if self.nosplit:
            if any(f.l is None for f in fields):
                self.unknown(False, True, fields[0].loc)
            else:
                self.lit(join([f.l for f in fields if f.l is not None]), True)
            return
        if not fields and quoted and self.cur is not None and self.cur.adds == 0:
            self.cur.quoted = False  # "${EMPTY[@]}" is no word at all
        for k, f in enumerate(fields):
            if quoted:
                if k:
                    self._break()
                fresh = self.cur is None or (self.cur.adds == 0 and not self.cur.parts)
                b = self._b()
                if f.l is None:
                    b.unknown = True
                    b.parts.append(None)
                    b.shadow.append(f.shadow if f.shadow is not None else hole(f.loc))
                    b.splat |= f.splat
                else:
                    b.parts.append(f.l)
                    b.shadow.append(f.l)
                b.quoted = True
                b.adds += 1
                if fresh:
                    b.elem = f
            elif f.l is None:
                if k:
                    self._break()
                fresh = self.cur is None or (self.cur.adds == 0 and not self.cur.parts)
                self.unknown(True, False, f.loc)
                if fresh:
                    self._b().elem = f
            else:
                if k:
                    self._break()
                self.split(f.l)

    def finish(self) -> list[FieldParts]:
        if self.cur is not None:
            self.fields.append(self.cur)
            self.cur = None
        return [b for b in self.fields if b.quoted or b.unknown or any(p and p.text for p in b.parts)]
