"""Literal shell text: what a run of characters means once its backslashes are removed, in
plain words, inside ``"..."``, in a here-document, or inside ``$'...'`` (ANSI-C escapes).

Kept apart from the word expander because both it and parameter expansion (the word of a
``${X:-word}``) read literal text the same way, and because each result stays located:
an escaped character is placed on its escape sequence.
"""

from __future__ import annotations

import re

from .located import EMPTY, Located
from .parsing import ParsedSource

#: the characters a backslash escapes, by quoting (``plain``: every character)
_ESCAPED = {"dq": '$`"\\\n', "heredoc": "$`\\\n"}
_ANSI_C_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                  "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_C_HEX = {"x": r"[0-9a-fA-F]{1,2}", "u": r"[0-9a-fA-F]{1,4}", "U": r"[0-9a-fA-F]{1,8}"}


def literal(source: ParsedSource, cs: int, ce: int, mode: str) -> Located:
    """Source text ``[cs, ce)`` after backslash removal (``plain``, ``dq`` or ``heredoc``)."""
    raw = source.text[cs:ce]
    src = source.src
    if "\\" not in raw:
        return src.slice(cs, ce)
    out = EMPTY
    keep = _ESCAPED.get(mode)
    pos = 0
    k = raw.find("\\")
    while k >= 0:
        if k + 1 >= len(raw):
            break
        nxt = raw[k + 1]
        if keep is not None and nxt not in keep:
            k = raw.find("\\", k + 2)
            continue
        out = out + src.slice(cs + pos, cs + k)
        if nxt == "\n":
            pos = k + 2
        else:
            pos = k + 1  # keep the escaped character
        k = raw.find("\\", k + 2)
    return out + src.slice(cs + pos, ce)


def ansi_c(source: ParsedSource, cs: int, ce: int) -> Located:
    """The value of ``$'...'`` written at ``[cs, ce)``."""
    body_s, body_e = cs + 2, max(cs + 2, ce - 1)
    raw = source.text[body_s:body_e]
    src = source.src
    if "\\" not in raw:
        return src.slice(body_s, body_e)
    out = EMPTY
    pos = 0
    k = raw.find("\\")
    while k >= 0 and k + 1 < len(raw):
        out = out + src.slice(body_s + pos, body_s + k)
        c = raw[k + 1]
        m = None
        if c in _ANSI_C_SIMPLE:
            rep, length = _ANSI_C_SIMPLE[c], 2
        elif c in "01234567":
            m = re.match(r"[0-7]{1,3}", raw[k + 1:])
            assert m is not None
            rep, length = chr(int(m.group(), 8) & 0xFF), 1 + len(m.group())
        elif c in "xuU":
            m = re.match(_ANSI_C_HEX[c], raw[k + 2:])
            if m:
                code = int(m.group(), 16)
                rep, length = (chr(code) if code < 0x110000 else "?"), 2 + len(m.group())
            else:
                rep, length = "\\" + c, 2
        elif c == "c" and k + 2 < len(raw):
            rep, length = chr(ord(raw[k + 2]) & 0x1F), 3
        else:
            rep, length = "\\" + c, 2
        loc = source.loc(body_s + k, body_s + k + length)
        out = out + Located.fallback(rep, loc[0], loc[1])
        pos = k + length
        k = raw.find("\\", pos)
    return out + src.slice(body_s + pos, body_e)
