"""What the linter could not check: reported as RSM900, never skipped in silence.

Two ways in, both turned into RSM900 findings by
:func:`flake8_replayssm.lint.lint_text` (or by the file reader, for files it
could not read at all):

- :class:`NotChecked` is raised when a whole text cannot be checked: it does not
  parse (with the parser's line), it is nested too deeply for the parsers to
  survive, it is too large, not a regular file, unreadable.
- :func:`not_followed` is called by a frontend that stops following *part* of a
  text (a bound was hit: nesting, an expansion that grows too large, a step
  budget).  The launch is judged with that part unknown, and the finding says
  which part was left out and why.

:func:`note` records a say-why line for ``--verbose`` that is not a finding
(a ``--config`` file outside the project, which is judged as unknown).
Outside :func:`recording` both calls do nothing, so a frontend can call them
unconditionally.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass, field
from typing import Iterator

from .model import Finding, Span

CODE = "RSM900"


class NotChecked(Exception):
    """A text (or file) that could not be checked at all; ``reason`` says why.

    ``kind`` is ``"syntax"`` (the text does not parse), ``"bound"`` (a limit that
    keeps the linter alive was hit) or ``"file"`` (the file could not be read).
    """

    def __init__(self, reason: str, line: int = 1, col: int = 0, *, kind: str = "bound", path: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.line = max(line, 1)
        self.col = max(col, 0)
        self.kind = kind
        #: the lines a problem in part of a text covers (first, last)
        self.lines = (self.line, self.line)

    def finding(self, path: str = "", cell: int | None = None) -> Finding:
        span = Span(self.line, self.col, self.line, self.col, cell=cell)
        return Finding(span, CODE, f"{self.reason}: the launches in this file were not checked", path or self.path)


@dataclass
class Record:
    """What one lint of one text could not follow, and the notes for ``--verbose``."""

    skipped: list[tuple[Span, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def findings(self) -> list[Finding]:
        seen: set[tuple[Span, str]] = set()
        out = []
        for span, reason in self.skipped:
            if (span, reason) in seen:
                continue
            seen.add((span, reason))
            out.append(Finding(span, CODE, f"{reason}: this part was not followed, and launches "
                                           "that depend on it were judged with it unknown"))
        return out


_CURRENT: contextvars.ContextVar[Record | None] = contextvars.ContextVar("replayssm_unchecked", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Record]:
    """Collect :func:`not_followed` and :func:`note` calls made while linting one text."""
    record = Record()
    token = _CURRENT.set(record)
    try:
        yield record
    finally:
        _CURRENT.reset(token)


def not_followed(span: Span, reason: str) -> None:
    """Part of the text at ``span`` was not followed because of ``reason``.

    For frontends: call it where a bound stops the reading (``"shell nested deeper
    than 60 levels"``, ``"variable expansion larger than 1 MB"``) and go on with
    that part unknown.  Each (span, reason) pair becomes one RSM900 finding.
    """
    record = _CURRENT.get()
    if record is not None:
        record.skipped.append((span, reason))


def frontend_failed(span: Span, frontend: str, exc: BaseException) -> None:
    """A frontend gave up on part of a text because of an error of ours, or because the part
    was too large or deep to read (``MemoryError``, ``RecursionError``): RSM900 there, so it
    reads as "not checked", never as "clean" (the run goes on with the other parts)."""
    if isinstance(exc, MemoryError):
        not_followed(span, f"the linter's {frontend} frontend ran out of memory reading it")
    elif isinstance(exc, RecursionError):
        not_followed(span, f"nested too deeply for the linter's {frontend} frontend")
    else:
        not_followed(span, f"an error of the linter's {frontend} frontend ({type(exc).__name__})")


def note(text: str) -> None:
    """A line for ``--verbose``: something read differently than written, and why."""
    record = _CURRENT.get()
    if record is not None and text not in record.notes:
        record.notes.append(text)


def without_line(reason: str) -> str:
    """A parser's reason without its line number, which counts from a snippet's start (the
    finding's own line is the file's)."""
    return re.sub(r"\(line \d+: ", "(", reason)
