"""Where the characters of a Python file are: columns, string literal tokens, placed text.

:mod:`ast` counts columns in UTF-8 bytes and gives a string constant only its value;
a finding needs the character column of each word of a command line written in
Python.  This module owns that mapping: :class:`Source` turns ast positions into
character spans, :func:`string_literals` reads the literal tokens of a constant or an
f-string back from the source (prefix, quote and body as written, implicit
concatenation giving several), and :class:`PlacedText` is a string built from them
with every character tied to the place it was written, split into words (:class:`Word`)
by :func:`shlex_words`.  Parts whose value is not known are written into placed text
as ``PLACEHOLDER`` + a number and become unknown (parts of) words again in
:func:`unmasked_word`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ...model import UNKNOWN_PART, Span, Word

#: stands in placed text for a part whose value is unknown (an f-string field, an unseen `+=`)
PLACEHOLDER = "RSMHOLE"


@dataclass
class PlacedText:
    """A string built from Python literals, each character tied to its source position."""

    text: str = ""
    positions: list[tuple[int, int]] = field(default_factory=list)

    def add(self, chunk: str, line: int, col: int, exact: bool) -> None:
        """Append ``chunk``, written from (line, col): character by character when ``exact``,
        else every character on that one place.  Linear in the chunk's length (a 2 MB string
        is read in one pass, not one string copy per character)."""
        self.text += chunk
        if not exact:
            self.positions.extend([(line, col)] * len(chunk))
            return
        for row, piece in enumerate(chunk.split("\n")):
            start = col if row == 0 else 0
            # the piece's characters, then the newline ending it (placed after the piece)
            self.positions.extend((line + row, start + k) for k in range(len(piece) + 1))
        del self.positions[len(self.text):]

    def span(self, start: int, end: int) -> Span:
        if not self.positions:
            return Span(1, 0, 1, 0)
        start = min(max(start, 0), len(self.positions) - 1)
        last = min(max(end - 1, start), len(self.positions) - 1)
        (line, col), (eline, ecol) = self.positions[start], self.positions[last]
        return Span(line, col, eline, ecol + 1)


def shlex_words(text: PlacedText) -> list[Word]:
    """Split like ``shlex.split`` (no shell), keeping each word's span."""
    words: list[Word] = []
    s = text.text
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        out: list[str] = []
        while i < n and not s[i].isspace():
            ch = s[i]
            if ch in "'\"":
                close = s.find(ch, i + 1)
                if close < 0:
                    close = n
                out.append(s[i + 1:close])
                i = close + 1
            elif ch == "\\" and i + 1 < n:
                out.append(s[i + 1])
                i += 2
            else:
                out.append(ch)
                i += 1
        words.append(unmasked_word("".join(out), text.span(start, i)))
    return words


def unmasked_word(text: str, span: Span) -> Word:
    """The word ``text`` (placeholders in it are unknown parts; one alone, an unknown word)."""
    if PLACEHOLDER in text:
        if re.fullmatch(rf"{PLACEHOLDER}\d+", text):
            return Word(None, span, splat=False)
        return Word(re.sub(rf"{PLACEHOLDER}\d+", UNKNOWN_PART, text), span)
    return Word(text, span)


class Source:
    """The text ast read: spans in characters, and the raw source of nodes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.bom = text.startswith("\ufeff")
        self._cols: dict[int, list[int] | None] = {}
        #: the offset of each line's start (and past the last line), made when first asked
        self._starts: list[int] | None = None

    def col(self, line: int, byte_col: int) -> int:
        """ast's UTF-8 byte column on ``line`` as a character column."""
        table = self._cols.get(line, False)
        if table is False:
            raw = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            if self.bom and line == 1:
                raw = raw[1:]
            table = None
            if not raw.isascii():
                table = []
                for index, ch in enumerate(raw):
                    table.extend([index] * len(ch.encode("utf-8", "surrogatepass")))
                table.append(len(raw))
            self._cols[line] = table
        shift = 1 if self.bom and line == 1 else 0
        if table is None:
            return byte_col + shift
        return (table[byte_col] if byte_col < len(table) else table[-1] + byte_col - len(table) + 1) + shift

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        return Span(line, self.col(line, getattr(node, "col_offset", 0)),
                    end, self.col(end, getattr(node, "end_col_offset", None) or 0))

    def where(self, node: ast.AST) -> Span:
        """Where ``node`` is, as findings name it: for a keyword (``use_replayssm=True``) where
        its name is."""
        span = self.span(node)
        if isinstance(node, ast.keyword) and node.arg is not None:
            return Span(span.line, span.col, span.line, span.col + len(node.arg))
        return span

    def code(self, node: ast.AST) -> str:
        """The source text of ``node`` (one line), for messages about what we cannot see."""
        raw = self.segment(node) if hasattr(node, "lineno") else ast.unparse(node)
        text = " ".join(raw.split())
        return text if len(text) <= 40 else text[:37] + "..."

    def offset(self, line: int, col: int) -> int:
        """Character offset in the text of (1-based line, character column), from the offsets
        of the line starts, counted once (summing the lines above per call was quadratic in a
        file's length: every step of a command built step by step asks)."""
        if self._starts is None:
            self._starts = [0]
            for text in self.lines:
                self._starts.append(self._starts[-1] + len(text) + 1)
        above = line - 1 if line >= 1 else max(len(self.lines) + line - 1, 0)  # as lines[:line - 1]
        return self._starts[min(above, len(self.lines))] + col

    def segment(self, node: ast.AST) -> str:
        span = self.span(node)
        return self.text[self.offset(span.line, span.col):self.offset(span.end_line, span.end_col)]


# ---------------------------------------------------------------------------
# string literal tokens read back from the source
# ---------------------------------------------------------------------------

_PREFIX = re.compile(r"[rRbBuUfF]{0,2}(?='|\")")


@dataclass
class Literal:
    """One string literal token of the source: where its body starts, its prefix and quote."""

    line: int
    col: int  # of the body's first character
    prefix: str
    quote: str
    body: str  # as written, between the quotes


def string_literals(source: Source, node: ast.AST) -> list[Literal] | None:
    """The string literal tokens a Constant or JoinedStr is written with (implicit
    concatenation gives several), read back from the source; None if they cannot be."""
    span = source.span(node)
    text = source.text
    pos = source.offset(span.line, span.col)
    end = source.offset(span.end_line, span.end_col)
    line, col = span.line, span.col
    out: list[Literal] = []
    while pos < end:
        ch = text[pos]
        if ch in " \t\f":
            pos, col = pos + 1, col + 1
            continue
        if ch == "\n" or ch == "\r" and text[pos + 1:pos + 2] != "\n":
            pos, line, col = pos + 1, line + 1, 0
            continue
        if ch == "\r":
            pos, col = pos + 1, col + 1
            continue
        if ch == "\\" and text[pos + 1:pos + 2] in ("\n", "\r"):
            pos += 3 if text[pos + 1:pos + 3] == "\r\n" else 2
            line, col = line + 1, 0
            continue
        if ch == "#":
            newline = text.find("\n", pos, end)
            if newline < 0:
                return None
            col += newline - pos
            pos = newline
            continue
        if ch in "()":
            pos, col = pos + 1, col + 1
            continue
        m = _PREFIX.match(text, pos)
        if m is None:
            return None
        prefix = m.group(0)
        start = m.end()
        quote = text[start:start + 3] if text[start:start + 3] in ('"""', "'''") else text[start]
        body_start = start + len(quote)
        i = body_start
        while i < end:
            if text[i] == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                break
            i += 1
        if i >= end:
            return None
        body = text[body_start:i]
        body_col = col + len(prefix) + len(quote)
        out.append(Literal(line, body_col, prefix, quote, body))
        newlines = body.count("\n")
        if newlines:
            line, col = line + newlines, len(body) - body.rfind("\n") - 1 + len(quote)
        else:
            col = body_col + len(body) + len(quote)
        pos = i + len(quote)
    return out


def fstring_pieces(body: str) -> list[tuple[str, int, int]] | None:
    """An f-string body as ``(kind, start, end)`` pieces: "text" or "field" (a ``{...}``)."""
    pieces: list[tuple[str, int, int]] = []
    i, n, text_start = 0, len(body), 0
    while i < n:
        ch = body[i]
        if ch in "{}" and body[i + 1:i + 2] == ch:
            i += 2
            continue
        if ch == "}":
            return None
        if ch != "{":
            i += 1
            continue
        if i > text_start:
            pieces.append(("text", text_start, i))
        depth, j, quote = 0, i, ""
        while j < n:
            c = body[j]
            if quote:
                if c == "\\":
                    j += 2
                    continue
                if body.startswith(quote, j):
                    j += len(quote)
                    quote = ""
                    continue
            elif c in "'\"":
                quote = body[j:j + 3] if body[j:j + 3] in ('"""', "'''") else c
                j += len(quote)
                continue
            elif c in "{[(":
                depth += 1
            elif c in "}])":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:
            return None
        pieces.append(("field", i, j + 1))
        i = text_start = j + 1
    if text_start < n:
        pieces.append(("text", text_start, n))
    return pieces


def advance(line: int, col: int, chunk: str) -> tuple[int, int]:
    """The (line, column) after ``chunk`` written from (line, col)."""
    newlines = chunk.count("\n")
    if newlines:
        return line + newlines, len(chunk) - chunk.rfind("\n") - 1
    return line, col + len(chunk)
