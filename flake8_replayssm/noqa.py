"""Suppressions: ``# noqa`` as flake8 has it, and directives for launches written over several lines.

Every file kind with ``#`` comments (shell, Python, YAML, Dockerfile, Makefile, the
fences of Markdown, notebook cells and their ``!`` lines) takes the same forms:

- ``# noqa`` / ``# noqa: RSM008,RSM002`` on a line of the launch -- the reported
  line, as in flake8, or any other line of a command continued over several lines
  (a code prefix such as ``RSM0`` matches, case-insensitively, as in flake8);
- ``# replayssm-lint: disable=RSM008`` (or a bare ``disable``) on its own line
  right above the launch, in the comment lines that lead to it -- shellcheck's
  ``# shellcheck disable=`` for the next command;
- ``# replayssm-lint: disable-file=RSM008`` (or a bare ``disable-file``) on its own
  line anywhere: the whole file (a notebook: that cell), as flake8's
  ``# flake8: noqa``.
"""

from __future__ import annotations

import re
from typing import Sequence

NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9]+(?:[,\s]+[A-Z][0-9]+)*|[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
DIRECTIVE = re.compile(r"^\s*#\s*replayssm-lint:\s*(?P<what>disable-file|disable)\b"
                       r"(?:\s*=\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
#: a launch spread over more lines than this is not "one command" for line-range suppressions
MAX_COMMAND_LINES = 60


def _covers(codes: str | None, code: str) -> bool:
    return not codes or any(code.upper().startswith(c.upper()) for c in _CODE.findall(codes))


def suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether line ``line`` (1-based) of ``lines`` carries a noqa that covers ``code``."""
    if not 1 <= line <= len(lines):
        return False
    text = lines[line - 1]
    if "noqa" not in text.lower():
        return False
    return any(_covers(match.group("codes"), code) for match in NOQA.finditer(text))


class Suppressions:
    """The suppressions of one text (a file, or a notebook cell)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.file_codes: list[str | None] = []
        for text in lines:
            match = DIRECTIVE.match(text)
            if match and match.group("what").lower() == "disable-file":
                self.file_codes.append(match.group("codes"))

    def _directive_above(self, first: int, code: str) -> bool:
        """``# replayssm-lint: disable=...`` in the comment lines right above line ``first``."""
        k = first - 1
        while k >= 1 and self.lines[k - 1].lstrip().startswith("#"):
            match = DIRECTIVE.match(self.lines[k - 1])
            if match and match.group("what").lower() == "disable" and _covers(match.group("codes"), code):
                return True
            k -= 1
        return False

    def covers(self, code: str, line: int, first: int | None = None, last: int | None = None) -> bool:
        """Whether a finding of ``code`` reported at ``line``, of a launch written on lines
        ``first``..``last`` (default: that line alone), is suppressed."""
        if any(_covers(codes, code) for codes in self.file_codes):
            return True
        first = min(first or line, line)
        last = max(last or line, line)
        if last - first > MAX_COMMAND_LINES:
            first = last = line
        if any(suppressed(self.lines, k, code) for k in range(first, last + 1)):
            return True
        return self._directive_above(first, code)
