"""What the shell frontend knows about a value: one expanded word (:class:`Field`) and one
variable at one point of the script (:class:`Var`), with the bounds on their size.

The variables the caller hands in (a Dockerfile's ``ENV``, a compose ``environment``) are
made :class:`Var` objects here too, so that every reader of a value sees one shape.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...model import UNKNOWN_PART, Span, Word
from .located import Located

#: a shell variable's name (not a positional or special parameter)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: a variable whose value grows past this (`A="$A $A"` doubling) is unknown from then on
MAX_VALUE_CHARS = 65_536
MAX_VALUE_ITEMS = 4_096


class Field:
    """One word of an expansion: text (None: unknown), splat, and its file range.

    ``partial`` is the text with UNKNOWN_PART for unknown parts; ``shadow`` the
    text with shell expansions nothing assigns for them (to read it as shell again)."""

    __slots__ = ("l", "splat", "loc", "partial", "shadow", "label")

    def __init__(self, value: Located | None, splat: bool, loc: tuple[int, int] | None,
                 partial: str | None = None, shadow: Located | None = None, label: str | None = None) -> None:
        self.l, self.splat, self.loc, self.partial = value, splat, loc, partial
        self.shadow = shadow if shadow is not None else value
        self.label = label  # the word as written, for an unknown one

    @property
    def text(self) -> str | None:
        return self.l.text if self.l is not None else None


class Var:
    """What the shell knows about one variable at one point of the script."""

    __slots__ = ("kind", "value", "loc", "exported", "env", "local", "gen", "span")

    def __init__(self, kind: str, value: Any = None, loc: tuple[int, int] | None = None,
                 exported: bool | None = False, env: bool = False, local: bool = False,
                 gen: int = 0, span: Span | None = None) -> None:
        self.kind = kind        # "scalar" | "partial" | "array" | "unknown" | "unset" | "choice"
        # Located for scalars (with holes when partial), list[Field] for arrays, list[Var] (one
        # per branch that set it differently: `if`/`else`, `case`) for a choice
        self.value = value
        self.loc = loc          # file range of the value (for env words); None: the command
        self.exported = exported  # True / False / None (maybe)
        self.env = env          # handed in by the caller (always part of the environment)
        self.local = local
        self.gen = gen
        self.span = span        # where a caller-supplied value is written (another file)

    def with_(self, **changes: Any) -> Var:
        v = Var(self.kind, self.value, self.loc, self.exported, self.env, self.local, self.gen,
                self.span)
        for key, value in changes.items():
            setattr(v, key, value)
        return v


def same(a: Var | None, b: Var | None) -> bool:
    """Whether two readings of a variable are known to have the same value."""
    if a is None or b is None or a.kind != b.kind:
        return False
    if a.kind == "scalar":
        return bool(a.value.text == b.value.text)
    if a.kind == "array":
        ta = [(f.text, f.splat) for f in a.value]
        tb = [(f.text, f.splat) for f in b.value]
        return ta == tb and all(t is not None for t, _ in ta)
    if a.kind == "choice":
        return len(a.value) == len(b.value) and all(same(x, y) for x, y in zip(a.value, b.value))
    return a.kind == "unset"


def too_large(kind: str, value: Any) -> bool:
    if kind in ("scalar", "partial"):
        return len(value.text) > MAX_VALUE_CHARS
    if kind == "array":
        return len(value) > MAX_VALUE_ITEMS or sum(len(f.text or "") for f in value) > MAX_VALUE_CHARS
    if kind == "choice":
        return any(too_large(v.kind, v.value) for v in value)
    return False


def caller_value(value: Any) -> tuple[str | None, Span | None]:
    """The text of a value the caller handed in (None: unknown) and where it is written."""
    if isinstance(value, Word):
        text = value.text
        return (None if text is None or UNKNOWN_PART in text else text), value.span
    if isinstance(value, str):
        return (None if UNKNOWN_PART in value else value), None
    return None, None


def caller_vars(variables: Mapping[str, Any] | None) -> dict[str, Var]:
    """The caller's variables: set in the environment (exported), value known or not."""
    base: dict[str, Var] = {}
    for name, value in (variables or {}).items():
        if not isinstance(name, str):
            continue
        text, span = caller_value(value)
        if text is None:
            base[name] = Var("unknown", None, None, exported=True, env=True, span=span)
        else:
            # no place in this text: placed wherever it is expanded (file_start -1)
            base[name] = Var("scalar", Located.unplaced(text), None, exported=True, env=True, span=span)
    return base
