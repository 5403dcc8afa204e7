"""A notebook's JSON, parsed once, and where each cell's ``source`` sits in its text.

Every reader of one notebook (the guard, the frontend's cells, the noqa comments of
each cell, the inventory) asks :func:`parsed` for the same text: it is parsed once,
not once per cell (a notebook of many cells was quadratic).

Findings in notebooks are counted in cells (cell index, line within the cell).
SARIF needs the line of the ``.ipynb`` file itself, so code-scanning annotations
land where that source line is written, and ``fix`` replaces one cell's
``source`` value without touching the rest of the file.  Both need the exact
character offsets of each cell's source, which :func:`locate_sources` finds with
the standard library's JSON scanner (no second parse of every value), once per text.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=4)
def parsed(text: str) -> tuple[Any, Exception | None]:
    """``(json.loads(text), None)``, or ``(None, the error)``; one parse per text however often
    it is asked for.  The value is shared: read it, never change it."""
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        return None, exc


_WS = re.compile(r"[ \t\n\r]*")


@dataclass
class Source:
    """Where one cell's ``source`` value is in the notebook's JSON text."""

    start: int
    end: int
    #: the list form: (start, end, value) of every item; None for the string form
    items: list[tuple[int, int, str]] | None
    value: str


class _NotJson(ValueError):
    pass


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


@lru_cache(maxsize=4)
def locate_sources(text: str) -> dict[int, Source] | None:
    """``cell index -> Source`` for every cell whose source is a string or a list of strings
    (found once per text; shared: read it, never change it)."""
    from json.decoder import scanstring

    decoder = json.JSONDecoder()
    try:
        i = _ws(text, 0)
        if text[i] != "{":
            return None
        cells: dict[int, Source] = {}
        i = _ws(text, i + 1)
        while text[i] != "}":
            if text[i] != '"':
                raise _NotJson(i)
            key, i = scanstring(text, i + 1)
            i = _ws(text, i)
            if text[i] != ":":
                raise _NotJson(i)
            i = _ws(text, i + 1)
            if key == "cells" and text[i] == "[":
                cells, i = _cells(text, i, decoder)
            else:
                _, i = decoder.raw_decode(text, i)
            i = _ws(text, i)
            if text[i] == ",":
                i = _ws(text, i + 1)
        return cells
    except (IndexError, ValueError):
        return None


def _cells(text: str, i: int, decoder: json.JSONDecoder) -> tuple[dict[int, Source], int]:
    from json.decoder import scanstring

    out: dict[int, Source] = {}
    i = _ws(text, i + 1)
    n = 0
    while text[i] != "]":
        if text[i] == "{":
            i = _ws(text, i + 1)
            while text[i] != "}":
                key, i = scanstring(text, i + 1)
                i = _ws(text, i)
                i = _ws(text, i + 1)  # the colon
                start = i
                if key == "source" and text[i] == '"':
                    value, i = scanstring(text, i + 1)
                    out[n] = Source(start, i, None, value)
                elif key == "source" and text[i] == "[":
                    items: list[tuple[int, int, str]] = []
                    j = _ws(text, i + 1)
                    ok = True
                    while text[j] != "]":
                        if text[j] != '"':
                            ok = False
                            _, j = decoder.raw_decode(text, j)
                        else:
                            value, end = scanstring(text, j + 1)
                            items.append((j, end, value))
                            j = end
                        j = _ws(text, j)
                        if text[j] == ",":
                            j = _ws(text, j + 1)
                    i = j + 1
                    if ok:
                        out[n] = Source(start, i, items, "".join(v for _, _, v in items))
                    else:
                        out.pop(n, None)
                else:
                    _, i = decoder.raw_decode(text, i)
                i = _ws(text, i)
                if text[i] == ",":
                    i = _ws(text, i + 1)
            i += 1
        else:
            _, i = decoder.raw_decode(text, i)
        n += 1
        i = _ws(text, i)
        if text[i] == ",":
            i = _ws(text, i + 1)
    return out, i + 1


def file_position(text: str, cell: int, line: int, col: int = 0) -> tuple[int, int] | None:
    """(1-based line, 0-based column) in the notebook's text of ``line``/``col`` of cell ``cell``.

    A cell whose source is a list of lines has one JSON string per line, and the
    column moves past the opening quote and any escapes before ``col``; a cell
    written as one string gives the line where that string starts.
    """
    source = (locate_sources(text) or {}).get(cell)
    if source is None:
        return None
    if source.items:
        if not 1 <= line <= len(source.items):
            return None
        start, _, value = source.items[line - 1]
        offset = start + len(json.dumps(value[:col], ensure_ascii=text.isascii())) - 1
    else:
        offset = source.start
    starts = _line_starts(text)
    row = bisect.bisect_right(starts, offset) - 1
    return row + 1, offset - starts[row]


@lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    """Offsets where the lines of ``text`` start (once per text: a position is then a bisect,
    not a count from the start of the file for every finding)."""
    return [0] + [m.end() for m in re.finditer("\n", text)]
