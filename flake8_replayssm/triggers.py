"""The cheap screen before any parse: can a text hold anything the linter reports?

A file without one of these tokens is never decoded or parsed (README, "Speed"): the
tokens are what every reported launch must contain, a ReplaySSM option or one of the
options the other codes are about.  Plain substring tests, grouped under a common
anchor, are much faster than a regular expression over every file of a large tree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator, TypeVar

#: a text must contain one of these to hold anything we report (plain substring
#: tests: much faster than a regular expression over every file of a large tree)
TRIGGER_NEEDLES = ("replayssm", "REPLAYSSM", "mamba-block-size", "mamba_block_size", "mamba-cache-mode",
                   "mamba_cache_mode", "--config", "api_server", "disable-prefix-caching",
                   "disable_prefix_caching",
                   # a misspelt ReplaySSM option is a launch the engine rejects (lookalikes.py)
                   "use-replay", "use_replay", "linear-replay", "linear_replay")


@lru_cache(maxsize=1)
def python_launchers() -> tuple[str, ...]:
    """Text without which a Python file holds no launch: a string that can be part of an engine's
    command line (``"vllm"``, ``vllm serve``, ``sglang.launch_server``), wherever it is handed,
    or an engine's keyword-launch call (``LLM(``, ``EngineArgs``, ``Engine(``...)."""
    from . import engines

    return engines.call_words() + engines.launch_strings()


#: substrings that several needles share: a needle holding one is grouped under it
_SHARED = ("replay", "REPLAY")


def _by_anchor(needles: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The needles grouped under a shared substring or their first five characters: a file is
    searched once for ``replay`` rather than five times for ``replayssm``, ``use-replay``,
    ``linear_replay``... (most files have none of the anchors, and each search reads the
    whole file)."""
    groups: dict[str, list[str]] = {}
    for needle in needles:
        anchor = next((shared for shared in _SHARED if shared in needle), needle[:5])
        groups.setdefault(anchor, []).append(needle)
    return tuple((group[0], ()) if len(group) == 1 else (anchor, tuple(group)) for anchor, group in groups.items())


_TEXT_ANCHORS = _by_anchor(TRIGGER_NEEDLES)
#: a needle written with an invisible character between each of its letters is twice as long
_LONGEST_NEEDLE = max(map(len, TRIGGER_NEEDLES))
_BYTE_ANCHORS = tuple((anchor.encode(), tuple(n.encode() for n in rest)) for anchor, rest in _TEXT_ANCHORS)


def contains_trigger(data: bytes, kind: str | None = None) -> bool:
    """Whether the raw bytes hold a trigger token (the screen before any decoding); text that is
    not ASCII is screened as the ASCII it looks like (``--use‐replayssm`` with a Unicode hyphen).
    A Python file (``kind``) needs a launcher word too (:func:`has_trigger`): asked first, it
    spares most Python files with non-ASCII comments the look-alike scan."""
    if any(anchor in data and (not rest or any(n in data for n in rest)) for anchor, rest in _BYTE_ANCHORS):
        return True
    if data.isascii() or not any(_looks_like_trigger(stretch.decode("utf-8", "replace"))
                                 for stretch in _around_non_ascii(data, _LONGEST_NEEDLE * 2 * 4)):
        return False
    return kind != "python" or any(word.encode() in data for word in python_launchers())


def has_trigger(text: str, kind: str | None = None) -> bool:
    """Whether ``text`` can hold anything we report (cheap; decides whether to parse)."""
    if not any(anchor in text and (not rest or any(n in text for n in rest)) for anchor, rest in _TEXT_ANCHORS) \
            and not (not text.isascii()
                     and any(map(_looks_like_trigger, _around_non_ascii(text, _LONGEST_NEEDLE * 2)))):
        return False
    return kind != "python" or any(needle in text for needle in python_launchers())


#: the block size of the search for non-ASCII characters (``isascii`` of a block runs at memory
#: speed; a regular expression over the whole text is ten times slower)
_BLOCK = 2048
_Text = TypeVar("_Text", str, bytes)


def _around_non_ascii(text: _Text, margin: int) -> Iterator[_Text]:
    """The stretches of ``text`` around its blocks that are not ASCII, ``margin`` either side
    (stretches that touch joined). A word that holds a look-alike character lies inside one, and
    a source file's few typographic dashes or names cost a few small stretches, not a scan of
    the whole file (in bytes, a stretch may cut a character at its ends: outside any such word)."""
    start = end = -1
    for at in range(0, len(text), _BLOCK):
        if text[at:at + _BLOCK].isascii():
            continue
        low, high = max(at - margin, 0), at + _BLOCK + margin
        if start >= 0 and low > end:
            yield text[start:end]
            start = -1
        if start < 0:
            start = low
        end = high
    if start >= 0:
        yield text[start:end]


def _looks_like_trigger(text: str) -> bool:
    """A trigger token written with look-alike or invisible characters (lookalikes.py): such an
    option is one the engine rejects, which the linter must see to report."""
    from .lookalikes import folded_surroundings

    return any(anchor in folded and (not rest or any(n in folded for n in rest))
               for folded in folded_surroundings(text, _LONGEST_NEEDLE * 2)
               for anchor, rest in _TEXT_ANCHORS)
