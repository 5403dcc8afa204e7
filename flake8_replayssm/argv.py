"""What every engine's command line shares, before any engine gives the words a meaning.

Each engine reads its own options (``engines/<name>/argv.py``), but some things are the
same whatever starts: how documentation writes a value the reader fills in, which words
make argparse exit before anything starts (``--help``), and where a ``--config FILE``
puts its options (vLLM's and SGLang's parsers both read the file first).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from .model import Word

#: words a switch may be given by mistake (``--use-replayssm true``): argparse rejects them
BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})

#: how documentation writes a value the reader fills in: ``<model>``, ``{model}``, ``{{ .Values.model }}``
#: (a Helm/Go template), ``[MODEL]`` is not one (argv may hold JSON lists); ``...`` / ``…`` stand for
#: elided arguments
_PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>]*>|\{\{.*\}\}|\{[A-Za-z_][\w.\-/ ]*\}|.*__RSMTPL_+.*")
_ELLIPSES = frozenset({"...", "…", "[...]", "[…]"})


def placeholder(text: str | None) -> str | None:
    """``"value"`` when ``text`` is a placeholder for a value, ``"arguments"`` for an ellipsis
    standing for more arguments, else None (DESIGN.md: placeholders are unknown values,
    never literal words, redirections or positionals)."""
    if not text:
        return None
    if text in _ELLIPSES:
        return "arguments"
    return "value" if _PLACEHOLDER.fullmatch(text) else None


def is_number(text: str) -> bool:
    """Whether argparse reads ``text`` as a (negative) number rather than an option."""
    try:
        float(text)
    except ValueError:
        return False
    return True


#: words after which argparse exits before an engine validates anything: ``-h``/``--help`` print the
#: help (``--help=KEYWORD`` searches it), ``--version`` prints the version on the top-level ``vllm``
#: parser and is an unrecognized argument (exit 2) anywhere else
_HELP_WORDS = frozenset({"-h", "--help", "--version"})


def exits_before_launch(args: Sequence[Word]) -> bool:
    """Whether ``args`` ask for help or the version: such a command starts no engine."""
    for word in args:
        text = word.text
        if text == "--":
            return False
        if text is not None and (text in _HELP_WORDS or text.startswith("--help=")):
            return True
    return False


def splice_config_files(args: Sequence[Word], ignored: Callable[[Word], None],
                        words_of: Callable[[Word, Word], list[Word] | None]) -> tuple[list[Word], bool]:
    """``args`` with the words of each ``--config FILE`` put first, as vLLM's and SGLang's
    parsers both read the file before the command line, and whether a file was not read.

    ``--config=FILE`` is dropped (both ignore it; ``ignored`` reports it); ``words_of(flag,
    path)`` reads one file, None when it cannot be read (the launch then has unseen options).
    """
    out: list[Word] = []
    inserted: list[Word] = []
    unread = False
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text or ""
        if text.startswith("--config="):
            ignored(word)
            i += 1
        elif text == "--config" and i + 1 < len(args):
            words = words_of(word, args[i + 1])
            if words is None:
                unread = True
            else:
                inserted.extend(words)
            i += 2
        else:
            out.append(word)
            i += 1
    return inserted + out, unread
