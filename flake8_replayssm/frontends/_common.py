"""Helpers the non-shell frontends share (Dockerfile, YAML, notebooks, Markdown).

A character-level map from a derived text (a joined Dockerfile instruction, a
decoded JSON string, a YAML scalar's value) back to the file, turned into the
``place`` function the shell frontend wants; a POSIX-like word splitter and a
JSON string array reader that keep, for every character, where it came from;
``sh -c`` detection; and the ``vllm/vllm-openai`` image test.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import posixpath
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

from .. import engines
from ..model import UNKNOWN_PART, Command, Span, Word

#: programs that run a script given with ``-c``
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "busybox"})


def is_vllm_image(image: str | None) -> bool:
    """A serving engine's image (its tag names the engine's release; its role is the engine's)."""
    text = (image or "").strip().lower()
    return bool(text) and engines.image_role(text) is not None


def image_for_command(image: str) -> str:
    """The image string to hand over in ``Command.image`` for an engine's image: the engine
    decides what its tag means (:meth:`~flake8_replayssm.engines.base.Engine.command_image`)."""
    cleaned = clean_image(image)
    return engines.command_image(image.strip().lower(), cleaned) or cleaned


def clean_image(image: str) -> str:
    """An image reference with unresolved ``$VAR`` parts and a digest after a tag dropped (a tag
    that is unresolved as a whole is kept as an unknown part: the engine reads it as any release)."""
    image = image.strip()
    last = image.rsplit("/", 1)[-1]
    if "@" in image and ":" in last.split("@", 1)[0]:
        image = image.split("@", 1)[0]  # repo:tag@sha256:... -> repo:tag
    if "$" not in image:
        return image
    name, sep, tag = image.rpartition(":")
    if sep and "/" not in tag and "$" in tag and "$" not in name:
        return f"{name}:{UNKNOWN_PART}"  # a tag the file leaves unknown: it may be any release
    return re.sub(r"[:@]?\$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-+?=][^}]*)?\}?", "", image)


class LineIndex:
    """Character offsets <-> (1-based line, 0-based column) for one text."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.length = len(text)

    def pos(self, index: int) -> tuple[int, int]:
        index = max(0, min(index, self.length))
        row = bisect.bisect_right(self.starts, index) - 1
        return row + 1, index - self.starts[row]

    def index(self, line: int, col: int) -> int:
        """Offset of (1-based line, column); clamped into the text."""
        row = max(0, min(line - 1, len(self.starts) - 1))
        return max(0, min(self.starts[row] + col, self.length))

    def span(self, start: int, end: int, cell: int | None = None) -> Span:
        if end < start:
            end = start
        l1, c1 = self.pos(start)
        l2, c2 = self.pos(end)
        return Span(l1, c1, l2, c2, cell=cell)


@dataclass
class Tok:
    """A word as a frontend reads it, with where each of its characters is in the file.

    ``chars[k]`` is the file offset of ``text[k]`` (``None`` when unknown);
    ``span`` covers the word as written (quotes included).
    """

    text: str | None
    span: Span
    chars: list[int] | None = None
    splat: bool = False
    #: how an unseen word is written (a template's ``{{ .Values.args }}``), for messages
    label: str | None = None

    def word(self) -> Word:
        return Word(self.text, self.span, self.splat, self.label)


def placer(sub_text: str, chars: Sequence[int] | None, lines: LineIndex, fallback: Span,
           cell: int | None = None) -> Callable[[int, int, int, int], Span]:
    """The ``place`` function for the shell frontend: positions in ``sub_text`` -> file spans.

    ``chars[k]`` is the file offset of ``sub_text[k]``.  Without a map every
    position is placed at ``fallback`` (the whole token), never on a wrong line.
    """
    starts = [0] + [m.end() for m in re.finditer("\n", sub_text)]
    n = len(sub_text)
    if chars is None or len(chars) != n or n == 0:
        def place_fallback(sr: int, sc: int, er: int, ec: int) -> Span:
            return fallback
        return place_fallback

    def offset(row: int, col: int) -> int:
        if row < 0:
            return 0
        if row >= len(starts):
            return n
        return max(0, min(starts[row] + col, n))

    def place(sr: int, sc: int, er: int, ec: int) -> Span:
        s = offset(sr, sc)
        e = offset(er, ec)
        fs = chars[s] if s < n else chars[n - 1] + 1
        fe = chars[e - 1] + 1 if e > 0 else chars[0]
        if fe < fs:
            fe = fs
        return lines.span(fs, fe, cell)

    return place


@contextlib.contextmanager
def relayed(change: Callable[[Span], Span]) -> Iterator[None]:
    """What a frontend could not follow in a snippet (RSM900, ``--verbose`` notes), moved by
    ``change`` to where the snippet is written in the file."""
    from ..unchecked import not_followed, note, recording

    with recording() as inner:
        yield
    for span, reason in inner.skipped:
        not_followed(change(span), reason)
    for text in inner.notes:
        note(text)


def split_words(s: str) -> list[tuple[str, list[int], int, int]]:
    """POSIX-like splitting without a shell (as compose does for a string ``command``).

    Returns ``(text, chars, raw_start, raw_end)`` per word: ``chars[k]`` is the
    index in ``s`` of ``text[k]``; ``raw_start:raw_end`` covers the word with
    its quotes.  Unterminated quotes run to the end; never raises.
    """
    words: list[tuple[str, list[int], int, int]] = []
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        start = i
        text: list[str] = []
        idx: list[int] = []
        while i < n and s[i] not in " \t\r\n":
            ch = s[i]
            if ch == "'":
                i += 1
                while i < n and s[i] != "'":
                    text.append(s[i])
                    idx.append(i)
                    i += 1
                i += 1
            elif ch == '"':
                i += 1
                while i < n and s[i] != '"':
                    if s[i] == "\\" and i + 1 < n and s[i + 1] in '"\\$`\n':
                        if s[i + 1] != "\n":
                            text.append(s[i + 1])
                            idx.append(i + 1)
                        i += 2
                        continue
                    text.append(s[i])
                    idx.append(i)
                    i += 1
                i += 1
            elif ch == "\\" and i + 1 < n:
                if s[i + 1] != "\n":
                    text.append(s[i + 1])
                    idx.append(i + 1)
                i += 2
            else:
                text.append(ch)
                idx.append(i)
                i += 1
        words.append(("".join(text), idx, start, min(i, n)))
    return words


_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_string_array(s: str) -> list[tuple[str, list[int], int, int]] | None:
    """The strings of a JSON array of strings with per-character positions, else None.

    Same shape as :func:`split_words`.  ``None`` when ``s`` is not a JSON array
    of strings (Docker then takes the instruction as shell form).
    """
    try:
        value = json.loads(s)
    except Exception:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    out: list[tuple[str, list[int], int, int]] = []
    i, n = 0, len(s)
    while i < n and len(out) < len(value):
        if s[i] != '"':
            i += 1
            continue
        start = i
        i += 1
        text: list[str] = []
        idx: list[int] = []
        while i < n and s[i] != '"':
            if s[i] == "\\" and i + 1 < n:
                esc = s[i + 1]
                if esc == "u" and i + 6 <= n:
                    try:
                        code = int(s[i + 2:i + 6], 16)
                    except ValueError:
                        code = 0xFFFD
                    width = 6
                    if 0xD800 <= code < 0xDC00 and s[i + 6:i + 8] == "\\u":
                        try:
                            low = int(s[i + 8:i + 12], 16)
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            width = 12
                        except ValueError:
                            pass
                    try:
                        text.append(chr(code))
                    except ValueError:
                        text.append("\ufffd")
                    idx.append(i + width - 1)  # an escaped character sits at its escape's end
                    i += width
                    continue
                text.append(_JSON_ESCAPES.get(esc, esc))
                idx.append(i + 1)
                i += 2
                continue
            text.append(s[i])
            idx.append(i)
            i += 1
        i += 1
        out.append(("".join(text), idx, start, min(i, n)))
    if [t for t, _, _, _ in out] != value:
        return None
    return out


def shell_script_index(toks: Sequence[Tok]) -> int | None:
    """Index of the script in ``sh -c SCRIPT`` / ``bash -lc SCRIPT`` argv, else None."""
    if not toks or toks[0].text is None:
        return None
    if posixpath.basename(toks[0].text) not in SHELLS:
        return None
    seen_c = False
    j = 1
    while j < len(toks):
        text = toks[j].text
        if text is None:
            return None
        if text in ("-o", "+o", "-O", "+O"):
            j += 2
            continue
        if text.startswith("--") and len(text) > 2:
            j += 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1 and text[1:].isalpha():
            if "c" in text[1:]:
                seen_c = True
            j += 1
            continue
        if text == "--" or text == "-":
            j += 1
            continue
        return j if seen_c else None
    return None


def merge_context(command: Command, *, env: dict[str, Word] | None = None,
                  env_open_ended: bool = False, image: str | None = None,
                  base_dir: str | None = None) -> Command:
    """A shell frontend command placed in its container/stage: outer env first."""
    merged = dict(env or {})
    for key, word in command.env.items():
        outer = merged.get(key)
        # a variable the caller handed in keeps the caller's span (the ENV / env: entry)
        if outer is None or outer.text != word.text:
            merged[key] = word
    return replace(command, env=merged, env_open_ended=command.env_open_ended or env_open_ended,
                   image=command.image or image, base_dir=command.base_dir or base_dir)


def shift_command(command: Command, line_offset: int, col_offset: Callable[[int], int] | None = None,
                  cell: int | None = None) -> Command:
    """``command`` found in a snippet, moved to where the snippet sits in a file."""
    def move(span: Span) -> Span:
        if span.source is not None:
            return span
        c1 = span.col + (col_offset(span.line) if col_offset else 0)
        c2 = span.end_col + (col_offset(span.end_line) if col_offset else 0)
        return Span(span.line + line_offset, c1, span.end_line + line_offset, c2,
                    cell if cell is not None else span.cell, span.source)

    return replace(command, words=[replace(w, span=move(w.span)) for w in command.words],
                   env={k: replace(v, span=move(v.span)) for k, v in command.env.items()})


# ---------------------------------------------------------------------------
# the Dockerfile frontend
# ---------------------------------------------------------------------------
