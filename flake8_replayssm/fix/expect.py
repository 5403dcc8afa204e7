"""What a span must still hold before it is edited: the word the launch was read with.

A launch's spans come from a frontend that may have seen the text through escapes,
continuations or odd positions; an edit made on a span that does not hold the word the
launch says is there would garble the file.  :func:`expect` records, per span, the
word a launch read there, and :func:`holds` says whether the raw text of a span is that
word as written (plain, quoted, or as a Python string literal).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Union

from .edits import span_key

if TYPE_CHECKING:
    from ..model import Launch

#: a Python string literal: its prefix, quotes and body
PY_STRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)\Z", re.DOTALL)
#: the interpreter that may start a launch (``python -m ENGINE...``)
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


@dataclass(frozen=True)
class Program:
    """The word that starts a launch: one word, the interpreter, or naming one of ``programs``."""

    programs: AbstractSet[str]


#: per span key, the word the span must hold (or the program word that starts a launch)
Expected = Union[str, Program]


def expect(expected: dict[tuple[int, int, int, int], Expected], launch: Launch,
           programs: AbstractSet[str]) -> None:
    """Add to ``expected`` the words a command-line launch was read with, by span (nothing for
    keyword launches, whose spans come from the Python tree itself); ``programs`` are the names
    of its engine's programs.  A span another launch of the text already expects a word at
    keeps that word rather than becoming a program word."""
    if launch.form == "kwargs":
        return
    for setting in list(launch.options.values()) + list(launch.env.values()):
        if setting.spelling and setting.span != setting.value_span:
            expected[span_key(setting.span)] = setting.spelling
        value = setting.value
        if setting.value_span is not None and setting.value_span != setting.span \
                and isinstance(value, (str, int)) and not isinstance(value, bool):
            expected[span_key(setting.value_span)] = str(value)
    if not launch.label.endswith(" entrypoint"):  # an image's arguments: the anchor is any word
        expected.setdefault(span_key(launch.anchor), Program(frozenset(programs)))


def holds(raw: str, expected: Expected) -> bool:
    """Whether ``raw`` (a span's text) is the expected word, as written."""
    text = raw
    m = PY_STRING.match(raw)
    if m is not None:
        text = m["body"]
    elif len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        text = raw[1:-1]
    if isinstance(expected, Program):
        name = text.rsplit("/", 1)[-1]
        return (_PYTHON.fullmatch(name) is not None or any(p in text for p in expected.programs)) \
            and not any(ch.isspace() for ch in text)
    return text == expected or text.startswith(expected + "=")
