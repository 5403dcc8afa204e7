"""``# noqa`` comments for the files flake8 never sees (shell, YAML, Dockerfile, ...).

Same syntax and meaning as flake8 (``flake8.defaults.NOQA_INLINE_REGEX``): a
bare ``# noqa`` silences every finding on its line, ``# noqa: RSM001,RSM008``
only those codes (a code prefix such as ``RSM0`` also matches, as in flake8),
case-insensitively.  A finding is silenced by a comment on its reported line.
"""

from __future__ import annotations

import re
from typing import Sequence

NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9]+(?:[,\s]+[A-Z][0-9]+)*|[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether line ``line`` (1-based) of ``lines`` carries a noqa that covers ``code``."""
    if not 1 <= line <= len(lines):
        return False
    text = lines[line - 1]
    if "noqa" not in text.lower():
        return False
    for match in NOQA.finditer(text):
        codes = match.group("codes")
        if not codes:
            return True
        if any(code.upper().startswith(c.upper()) for c in _CODE.findall(codes)):
            return True
    return False
