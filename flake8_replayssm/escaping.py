"""Everything the tool writes that it did not write itself goes through here.

The linter runs in CI on pull requests from strangers: a file name, a word quoted
from a file, a settings value or an error text that names one of them is chosen by
whoever opened the pull request.  None of it may forge a line of output, a finding,
a terminal escape sequence or a GitHub workflow command.  Every writer (the text,
JSON, SARIF and GitHub formats, ``fix`` and its diff, the notes on stderr, the
language server's log, the flake8 plugin's messages) uses one of these functions:

- :func:`shown`: the display form, one line with no control character in it: ``\\n``,
  ``\\r``, ``\\t``, ``\\xNN`` for other C0/C1 controls and for bytes of a file name or a
  file that are not UTF-8, ``\\uNNNN`` for bidi controls and line separators; and the
  ``##[`` that GitHub's runner reads as a legacy command anywhere in a line is shown
  as ``##\\x5b``.
- :func:`line`: :func:`shown` for a line whose start is user-controlled (a path): a
  ``:`` that would start it (after blanks) is shown as ``\\x3a``, so no such line is a
  ``::command::`` (the runner trims leading blanks before it looks).
- :func:`github_data` / :func:`github_property`: a workflow command's message (the
  display form, ``%`` as ``%25``) and property values (GitHub's %-encoding: ``%25``,
  ``%0D``, ``%0A``, ``%3A``, ``%2C``, then the display form).
- :func:`json_dumps`: JSON (and SARIF) that any parser accepts: strings are exact,
  except that bytes that are not UTF-8 (kept as lone surrogates or private-use
  characters while linting) are written in the escaped form ``\\xNN``; a ``##[`` is
  written ``##\\u005b`` (the same string once parsed).
- :func:`diff_path`: a path in a ``---``/``+++`` header, quoted the way git quotes
  it (``"a/x\\ny"``, understood by ``git apply`` and GNU patch), so a file name cannot
  forge a header.
- :func:`markdown_code` / :func:`markdown_fence`: text from files in a Markdown comment (the
  ``upgrade`` report for a pull request): inline, an HTML ``<code>`` element whose every ASCII
  punctuation character is a numeric entity (no emphasis, link, table cell, HTML tag, math or
  ``@mention`` can come of it: GitHub links no mention inside ``code``); a block, a fence longer
  than any run of backticks in it, each line in the display form.
- :class:`EscapingFormatter`: log records of the language server, one line each.

Backslashes are not doubled: a file literally named ``a\\nb`` and one with a newline
look alike in the display form (as in ``ls -b``'s output without ``-b``'s quoting);
JSON, SARIF and diffs keep them apart.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

#: C0 and C1 controls (ESC starts terminal sequences, CR rewrites a line), DEL, bidi
#: embeddings/overrides/isolates and marks (Trojan Source), line/paragraph separators,
#: lone surrogates (bytes of a file name that are not UTF-8), the private-use characters
#: that stand for undecodable bytes in a linted text, and the runner's legacy ``##[``
_SPECIAL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                      "\ud800-\udfff\uf780-\uf7ff]|##\\[")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: the private-use block files.decode keeps undecodable bytes in (U+F780-U+F7FF)
_PUA_BASE = 0xF700


def _one(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "##[":
        return "##\\x5b"
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's surrogateescape of the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    if 0xF780 <= code <= 0xF7FF:  # files.decode's stand-in for the byte code - 0xF700
        return f"\\x{code - _PUA_BASE:02x}"
    return f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` as one line that carries no control character, for text output and stderr."""
    return _SPECIAL.sub(_one, text)


def line(text: str) -> str:
    """:func:`shown`, for a line that starts with something the user chose (a path)."""
    out = shown(text)
    blanks = len(out) - len(out.lstrip())
    if out[blanks:blanks + 1] == ":":
        out = out[:blanks] + "\\x3a" + out[blanks + 1:]
    return out


def github_data(text: str) -> str:
    """A workflow command's message: the display form, with ``%`` as the runner's ``%25``."""
    return shown(text).replace("%", "%25")


def github_property(text: str) -> str:
    """A workflow command's property value (``file=``): the runner decodes ``%25``, ``%0D``,
    ``%0A``, ``%3A`` and ``%2C`` after it has split the command, so a newline or a comma in a
    file name names that file; what is left is shown as in text output."""
    encoded = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return shown(encoded.replace(":", "%3A").replace(",", "%2C"))


# ---------------------------------------------------------------------------
# JSON and SARIF
# ---------------------------------------------------------------------------

_NOT_UNICODE = re.compile("[\ud800-\udfff\uf780-\uf7ff]")


def _unicode(value: Any) -> Any:
    """``value`` with every string valid Unicode (undecodable bytes in the escaped form)."""
    if isinstance(value, str):
        return _NOT_UNICODE.sub(_one, value) if _NOT_UNICODE.search(value) else value
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_unicode(v) for v in value]
    return value


def json_dumps(value: Any) -> str:
    """``value`` as indented ASCII JSON that every parser reads, and GitHub's runner ignores."""
    # ``##[`` can only be string content here (JSON punctuation never follows ``##``), and
    # ``\\u005b`` is the same ``[`` to a parser
    return json.dumps(_unicode(value), indent=2).replace("##[", "##\\u005b") + "\n"


def uri_path(path: str) -> str:
    """``path`` percent-encoded byte for byte (a name that is not UTF-8 keeps its bytes)."""
    from urllib.parse import quote

    return quote(os.fsencode(path))


# ---------------------------------------------------------------------------
# Diffs
# ---------------------------------------------------------------------------

_C_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
              0x22: '\\"', 0x5C: "\\\\"}


def diff_path(path: str) -> str:
    """``path`` for a ``---``/``+++`` line, quoted as git quotes it when it must be.

    git (``core.quotePath``) writes a name with a control character, a ``"``, a
    backslash or a byte above 0x7F in double quotes with C escapes (octal for the
    rest), and ``git apply`` and GNU patch read it back; plain names stay plain.
    """
    raw = os.fsencode(path)
    if all(0x20 <= b < 0x7F and b not in (0x22, 0x5C) for b in raw):
        return path
    return '"' + "".join(_C_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in raw) + '"'


# ---------------------------------------------------------------------------
# Markdown (a pull-request comment)
# ---------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"[!-/:-@\[-`{-~]")  # every ASCII punctuation character


def markdown_code(text: str) -> str:
    """``text`` as inline code in Markdown that nothing in it can break out of: the display form
    (one line), every ASCII punctuation character as a numeric entity (``|`` cannot split a
    table cell, ``<`` open a tag, ``*`` or ``[`` format, ``$`` start math), inside ``<code>``
    (GitHub makes no ``@mention``, link or emoji inside it)."""
    return "<code>" + _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", shown(text)) + "</code>"


def markdown_fence(text: str, info: str = "") -> str:
    """``text`` as a fenced code block: each line in the display form, the fence longer than any
    run of backticks in it (so no line closes it early)."""
    lines = [shown(part) for part in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    longest = max((len(run) for run in re.findall(r"`+", "\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + info, *lines, fence]) + "\n"


# ---------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------

class EscapingFormatter(logging.Formatter):
    """A log record as lines that cannot forge another record: the message in the display
    form, and a traceback's lines each shown and indented under it."""

    def format(self, record: logging.LogRecord) -> str:
        head = shown(f"{record.levelname}:{record.name}:{record.getMessage()}")
        details = self.formatException(record.exc_info) if record.exc_info else ""
        if record.stack_info:
            details += "\n" + self.formatStack(record.stack_info)
        lines = [f"    | {shown(part)}" for part in details.splitlines() if part.strip()]
        return "\n".join([head, *lines])
