"""Words that look like an engine's option but are not one, and the option they look like.

A command copied from a rendered page, a chat message or a hostile pull request can hold
``--use‐replayssm`` (a Unicode hyphen), ``--use-replаyssm`` (a Cyrillic a) or an invisible
character; the engine's parser sees another word and exits with "unrecognized arguments".
A near-miss spelling of a ReplaySSM option (``--use-replaysm``) fails the same way.  Both
are RSM106 with the option meant; the characters are data (``data/lookalikes.toml``).
"""

from __future__ import annotations

import difflib
import unicodedata
from functools import lru_cache
from typing import Iterable, Mapping

from .data_files import read_data
from .model import Finding, Setting

#: how far a near-miss may be from the option it stands for (difflib's ratio)
_NEAR = 0.9


@lru_cache(maxsize=1)
def _table() -> dict[int, str | None]:
    raw = read_data("data/lookalikes.toml")
    table: dict[int, str | None] = {ord(ch): None for ch in raw["invisible"]}
    table.update((ord(ch), plain) for ch, plain in raw["look_like"].items())
    return table


def plain(text: str) -> str:
    """``text`` as the ASCII it looks like: invisible characters dropped, look-alikes replaced,
    compatibility forms (fullwidth letters) folded."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_table())


def meant(word: str, options: Iterable[str], near: Iterable[str]) -> tuple[str, str] | None:
    """(the option ``word`` looks like, why) when ``word`` is not one of ``options`` but looks
    like one, or is a near-miss of one of ``near`` (the ReplaySSM options); None otherwise."""
    known = set(options)
    if word in known:
        return None
    if not word.isascii():
        folded = plain(word)
        if folded.startswith("-") and not folded.startswith("--") and "-" + folded in known:
            folded = "-" + folded  # typography made `--` one dash (`—use-replayssm`)
        if folded in known:
            odd = next(ch for ch in word if not ch.isascii())
            name = unicodedata.name(odd, f"U+{ord(odd):04X}")
            return folded, f"it holds {name} (U+{ord(odd):04X}), which only looks like part of {folded}"
        word = folded
    close = difflib.get_close_matches(word, list(near), n=1, cutoff=_NEAR)
    if close and close[0] != word:
        return close[0], f"did you mean {close[0]}?"
    return None


def has_lookalikes(text: str) -> bool:
    """Whether ``text`` holds a character that :func:`plain` changes (cheap for ASCII text)."""
    return not text.isascii() and plain(text) != text


def unexpected_keywords(keywords: Mapping[str, Setting], fields: Iterable[str], near: Iterable[str],
                        call: str) -> list[Finding]:
    """RSM106 for each keyword that is no field of ``call`` but looks like one, or is a near-miss
    of one of ``near``: Python raises ``TypeError: ... got an unexpected keyword argument``."""
    known, near = set(fields), tuple(near)
    out = []
    for name, setting in keywords.items():
        found = meant(name, known, near) if name not in known else None
        if found is not None:
            field, why = found
            out.append(Finding(setting.span, "RSM106", (
                f"{call} got an unexpected keyword argument {name!r} (TypeError): {why}; fix: write {field}=")))
    return out
