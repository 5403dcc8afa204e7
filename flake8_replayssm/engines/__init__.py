"""The serving engines the linter judges, registered in one table.

Each engine is a package of one shape (:class:`.base.Engine`); the core finds them here by
name and asks them, never by importing an engine module itself.  A third engine is a new
package under ``engines/`` and one more name in :data:`NAMES` (README, "Adding an engine").

An engine's package is imported on first use, and its ``__init__`` is cheap: a tree
without SGLang launches never reads SGLang's tables.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from .base import Engine, ImageRole

if TYPE_CHECKING:
    from ..model import Launch, Word

#: every engine, in the order codes shared by several are documented and images are tried
NAMES = ("vllm", "sglang")


@lru_cache(maxsize=None)
def get(name: str) -> Engine:
    """The engine called ``name`` (``Launch.engine``, ``Finding.engine``)."""
    if name not in NAMES:
        raise KeyError(f"no engine {name!r} (known: {', '.join(NAMES)})")
    return Engine(f"{__name__}.{name}")


def all_engines() -> Iterator[Engine]:
    return (get(name) for name in NAMES)


def title(name: str) -> str:
    """How messages name the engine ``name`` (``vLLM``)."""
    return get(name).TITLE


@lru_cache(maxsize=None)
def for_program(basename: str) -> Engine | None:
    """The engine a program of this basename starts (``vllm`` -> vLLM)."""
    return next((e for e in all_engines() if basename in e.WORDS.programs), None)


def is_program(basename: str) -> bool:
    return for_program(basename) is not None


def image_role(image: str | None) -> ImageRole | None:
    """What an engine's image does with the words after it (None: no engine's image)."""
    if not image:
        return None
    return next((role for e in all_engines() if (role := e.image_role(image)) is not None), None)


def command_image(image: str, cleaned: str) -> str | None:
    """The reference a frontend hands over in ``Command.image`` for an engine's ``image``
    (``cleaned``: the same without unresolved parts); None when it is no engine's image."""
    role = image_role(image)
    return get(role.engine).command_image(cleaned) if role is not None else None


def unseen_program(word: Word, following: Word | None) -> Engine | None:
    """The engine whose program an unseen word (``"$VLLM" serve``) stands for, if one says so."""
    return next((e for e in all_engines() if e.unseen_program(word, following)), None)


def keyword_class(module: str, name: str) -> str | None:
    """``engine:Class`` for a keyword-launch class imported from ``module`` (None: not one);
    ``engine:Class:module.Name`` for another package's class that hands its keywords on to it
    (``vllm:EngineArgs:art.dev.EngineArgs``: the model is that package's business)."""
    for e in all_engines():
        if e.keyword_class(module, name):
            forwarded = name in e.WORDS.forwarded_classes.get(module, ())
            return f"{e.NAME}:{name}" + (f":{module}.{name}" if forwarded else "")
    return None


@lru_cache(maxsize=None)
def launch_variable(name: str) -> bool:
    """Whether an environment variable is one some engine reads (``VLLM_*``, ``SGLANG_*``)."""
    return any(name.startswith(prefix) for e in all_engines() for prefix in e.WORDS.env_prefixes)


def names_a_value(flag: str, value: str) -> bool:
    """Whether some engine's ``flag`` reads an ALL-CAPS ``value`` as a name for a value."""
    return any(e.names_a_value(flag, value) for e in all_engines())


@lru_cache(maxsize=1)
def launch_looking() -> re.Pattern[str]:
    """Some engine's entry point named in a line (a launch-looking line where no launch covers it)."""
    return re.compile("|".join(f"(?:{e.WORDS.launch_looking})" for e in all_engines()))


@lru_cache(maxsize=1)
def image_name() -> re.Pattern[str]:
    """Some engine's image named on a line (an image is context, never a command)."""
    return re.compile("|".join(f"(?:{e.WORDS.image_name})" for e in all_engines()))


@lru_cache(maxsize=1)
def launch_word() -> re.Pattern[str]:
    """A Python string that can be part of some engine's command line."""
    return re.compile("|".join(f"(?:{e.WORDS.launch_word})" for e in all_engines()))


@lru_cache(maxsize=1)
def programs() -> frozenset[str]:
    return frozenset().union(*(e.WORDS.programs for e in all_engines()))


@lru_cache(maxsize=1)
def launch_strings() -> tuple[str, ...]:
    return tuple(s for e in all_engines() for s in e.WORDS.launch_strings)


@lru_cache(maxsize=1)
def call_words() -> tuple[str, ...]:
    return tuple(s for e in all_engines() for s in e.WORDS.call_words)


@lru_cache(maxsize=1)
def keyword_classes() -> frozenset[str]:
    return frozenset().union(*(e.WORDS.keyword_classes for e in all_engines()))


@lru_cache(maxsize=1)
def python_names() -> frozenset[str]:
    return frozenset().union(*(e.WORDS.python_names for e in all_engines()))


def _by_config_evidence() -> list[Engine]:
    """Engines whose ``--config`` files are recognised by stronger evidence (keys only that
    engine has) first, then those recognised by a majority of their option names."""
    return sorted(all_engines(), key=lambda e: e.CONFIG_EVIDENCE)


def config_launch(text: str, base_dir: str | None) -> Launch | None:
    """``text`` judged as an engine's ``--config`` YAML on its own (None: no engine's)."""
    return next((launch for e in _by_config_evidence()
                 if (launch := e.config_launch(text, base_dir)) is not None), None)


def is_config_document(root: object) -> bool:
    """Whether a YAML document is an engine's ``--config`` file (options, no commands)."""
    return any(e.is_config_document(root) for e in all_engines())
