"""Edits of a Python launch's keyword arguments, where they are written.

A keyword launch (``LLM(model=..., use_replayssm=True)``) may write a keyword in the call,
in a dict literal or ``dict(...)`` given as an argument (``engine_kwargs=dict(...)``), or
in a same-module dict the call splats (``**cfg``).  :meth:`KeywordEdits.kw_target` finds
where (from :mod:`.python_facts`), and only where the edit cannot reach another call: a
dict that is shared, reassigned or changed elsewhere is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..model import Launch, Setting
from .deletions import Deletions
from .edits import span_key
from .expect import PY_STRING


@dataclass(frozen=True)
class KwTarget:
    """A keyword's text range and how a new keyword is written next to it."""

    start: int
    end: int
    #: "kwarg" (``name=value`` in a call, ``dict(...)`` included) or "dict" (``"name": value``)
    form: str
    quote: str

    def item(self, name: str, value: Any) -> str:
        """``name`` with ``value`` written as a neighbour of this keyword."""
        text = f"{self.quote}{value}{self.quote}" if isinstance(value, str) else repr(value)
        return f"{self.quote}{name}{self.quote}: {text}" if self.form == "dict" else f"{name}={text}"


class KeywordEdits(Deletions):
    """Inserting, deleting, renaming and changing the keyword arguments of launch calls."""

    def call_info(self, launch: Launch) -> dict[str, Any] | None:
        """The launch call's arguments (:class:`.python_facts.PyFacts` ``calls_by_func``)."""
        if self.py is None:
            return None
        return self.py.calls_by_func.get(span_key(launch.anchor))

    def written_keywords(self, launch: Launch) -> set[str | None]:
        """The keywords written in the launch call itself (None for a positional argument)."""
        call = self.call_info(launch)
        return {a["keyword"] for a in call["args"]} if call is not None else set()

    def direct(self, setting: Setting | None) -> bool:
        """A keyword written in the call itself (not from a ``**dict``)."""
        return setting is not None and setting.spelling.endswith("=") and setting.value_span is not None

    def kw_target(self, setting: Setting | None) -> KwTarget | None:
        """Where a keyword is written: in the call (``x=...``), in a dict literal / ``dict(...)``
        written as the call's argument (``engine_kwargs=dict(...)``), or as an entry of a
        same-module dict that only this call splats (``**cfg``)."""
        if setting is None or setting.value_span is None:
            return None
        if self.direct(setting):
            start, end = self.kwarg_range(setting)
            return KwTarget(start, end, "kwarg", '"')
        if self.py is None:
            return None
        info = self.py.dict_entries.get(span_key(setting.span))
        if info is None:
            return None
        name = self.py.containers.get(info["container"])
        if name is None and info["container"] in self.py.inline:
            return KwTarget(info["start"], info["end"], info["form"], info["quote"])  # written in the call
        if name is None or self.py.assigns[name] != 1 or self.py.splats[name] != 1 \
                or name in self.py.mutated:
            return None  # the dict is shared, reassigned or changed elsewhere: leave it
        return KwTarget(info["start"], info["end"], info["form"], info["quote"])

    def kwarg_range(self, setting: Setting) -> tuple[int, int]:
        assert setting.value_span is not None
        return self.offsets(setting.span)[0], self.offsets(setting.value_span)[1]

    def insert_args_after(self, arg_start: int, arg_end: int, items: Sequence[str], code: str) -> None:
        """Insert ``items`` (``name=value`` texts) after the argument at [arg_start, arg_end)."""
        text = self.text
        line_start = self.index.line_start(arg_start)
        indent = text[line_start:arg_start]
        comma = re.match(r"[ \t]*,", text[arg_end:])
        own_line = indent.strip() == "" and self.index.line_of(arg_start) > 0
        if own_line:
            line_end = self.index.line_end(arg_end)
            after_comma = arg_end + comma.end() if comma else arg_end
            tail = text[after_comma:line_end]
            if tail.strip() == "" or tail.lstrip().startswith("#"):
                nl = self.newline
                if comma:
                    self.add(line_end, line_end, "".join(f"{nl}{indent}{item}," for item in items), code)
                else:
                    body = f",{nl}".join(f"{indent}{item}" for item in items)
                    if line_end == arg_end:
                        self.add(arg_end, arg_end, f",{nl}{body}", code)
                    else:
                        self.add(arg_end, arg_end, ",", code)
                        self.add(line_end, line_end, f"{nl}{body}", code)
                return
        self.add(arg_end, arg_end, "".join(f", {item}" for item in items), code)

    def insert_keywords_after(self, at: KwTarget, items: Sequence[tuple[str, Any]], code: str) -> None:
        """Keywords ``(name, value)`` after the keyword at ``at``, written like it."""
        self.insert_args_after(at.start, at.end, [at.item(name, value) for name, value in items], code)

    def delete_arg(self, arg_start: int, arg_end: int, code: str) -> None:
        """Delete the argument at [arg_start, arg_end) with its comma (see :mod:`.deletions`)."""
        self.deletions.append((arg_start, arg_end, True, code))

    def delete_keyword(self, at: KwTarget, code: str) -> None:
        self.delete_arg(at.start, at.end, code)

    def rename_keyword(self, setting: Setting, name: str, code: str) -> bool:
        """A keyword written in the call gets the name ``name`` (its value stays)."""
        if not self.direct(setting):
            return False
        start, _ = self.offsets(setting.span)
        old = setting.spelling.rstrip("=")
        if not self.text.startswith(old, start):  # the keyword's name must start its span
            return False
        self.add(start, start + len(old), name, code)
        return True

    def replace_kwarg_value(self, setting: Setting, new: str, code: str) -> bool:
        """A keyword's string value becomes ``new`` (same quotes), where the keyword is written."""
        if self.kw_target(setting) is None:
            return False
        assert setting.value_span is not None
        start, end = self.offsets(setting.value_span)
        m = PY_STRING.match(self.text[start:end])
        if m is None or len(m["quote"]) != 1:
            return False
        self.add(start, end, f"{m['prefix']}{m['quote']}{new}{m['quote']}", code)
        return True

    def replace_kwarg_literal(self, setting: Setting, literal: str, code: str) -> bool:
        """A keyword's ``True``/``False`` value, where the keyword is written (call or dict entry)."""
        if self.kw_target(setting) is None or setting.value_span is None:
            return False
        start, end = self.offsets(setting.value_span)
        if self.text[start:end] not in ("True", "False"):
            return False
        self.add(start, end, literal, code)
        return True
