"""Words that look like an engine's option but are not one, and the option they look like.

A command copied from a rendered page, a chat message or a hostile pull request can hold
``--use‐replayssm`` (a Unicode hyphen), ``--use-replаyssm`` (a Cyrillic a) or an invisible
character; the engine's parser sees another word and exits with "unrecognized arguments".
A near-miss spelling of a ReplaySSM option (``--use-replaysm``) fails the same way.  Both
are RSM106 with the option meant; the characters are data (``data/lookalikes.toml``).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache
from typing import Iterable, Iterator, Mapping

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


#: characters NFKC folds into ASCII letters, digits or punctuation that matter here: fullwidth
#: forms, ligatures, letter-like symbols, super- and subscripts, enclosed and mathematical letters
_COMPATIBILITY_RANGES = "\uff01-\uff5e\ufb00-\ufb06\u2100-\u214f\u2070-\u209f\u2460-\u24ff" \
    "\U0001d400-\U0001d7ff\U0001f100-\U0001f1ff"


@lru_cache(maxsize=1)
def _suspect() -> re.Pattern[str]:
    """One character that may make a word look like another: an invisible one, a look-alike of
    the data table, or a compatibility form."""
    listed = "".join(re.escape(chr(code)) for code in _table())
    return re.compile(f"[{listed}{_COMPATIBILITY_RANGES}]+")


def folded_surroundings(text: str, margin: int) -> Iterator[str]:
    """Each stretch of ``text`` around characters that may make a word look like another
    (``margin`` characters either side, stretches that touch joined), as the ASCII it looks
    like. A word of ``margin`` characters or fewer that holds a look-alike is inside one of
    them; only these are folded, so a large file of CJK comments or typographic dashes costs
    one regular-expression scan, not a Unicode normalisation of the whole text."""
    start = end = -1
    for run in _suspect().finditer(text):
        if run.start() - margin > end >= 0:  # apart from the stretch so far: fold that one
            yield from _folded(text[start:end])
            start = -1
        if start < 0:
            start = max(run.start() - margin, 0)
        end = run.end() + margin
    if start >= 0:
        yield from _folded(text[start:end])


def _folded(stretch: str) -> Iterator[str]:
    folded = plain(stretch)
    if folded != stretch:
        yield folded


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
